import { expect, it } from 'vitest';
import { main } from './mcp-approval.js';

it('mcp-approval: the read runs, the destructive MCP call waits for a person, then runs once', async () => {
  const { first, result, remaining, model } = await main();
  expect(first.outcome).toMatchObject({
    kind: 'awaiting_approval',
    requests: [
      // The id came from MCP output, which is untrusted: the person is told so.
      { tool: 'delete_ticket', cause: 'tainted_context', input: { id: 'T-2' }, untrustedArguments: ['id'] },
    ],
  });
  expect(result.outcome).toEqual({ kind: 'answered', text: 'Deleted the duplicate T-2.' });
  expect(remaining).toEqual(['T-1']);
  model.assertDone();
});
