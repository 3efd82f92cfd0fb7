/**
 * A tickets service reached over MCP, offline: an MCP server on 127.0.0.1 (here made with
 * `serveMcpHttp`; any MCP server works the same way), its tools wrapped by `mcpTools` with the
 * effects we declare (its own annotations are not trusted), and one approval. The scripted model
 * lists tickets (a read: it runs), then deletes one (destructive: the run pauses, and since the id
 * came from MCP output, which is untrusted, the person is told the context is tainted); a person
 * approves, and the ticket is deleted once.
 *
 * Run it: npx tsx examples/mcp-approval.ts
 */
import { defineTool, resumeAgent, runAgent } from 'reins';
import { mcpTools, serveMcpHttp } from 'reins/mcp';
import { scriptedModel } from 'reins/testing';
import { z } from 'zod';

export async function main() {
  const tickets = new Map([
    ['T-1', 'Printer on fire'],
    ['T-2', 'Duplicate of T-1'],
  ]);
  const served = await serveMcpHttp(
    [
      defineTool({
        name: 'list_tickets',
        description: 'List open tickets.',
        input: z.object({}),
        effect: 'read',
        execute: () => [...tickets].map(([id, title]) => ({ id, title })),
      }),
      defineTool({
        name: 'delete_ticket',
        description: 'Delete a ticket by id.',
        input: z.object({ id: z.string() }),
        effect: 'destructive',
        execute: ({ id }) => (tickets.delete(id) ? `deleted ${id}` : `no ticket ${id}`),
      }),
    ],
    { name: 'tickets', version: '1.0.0' },
  );
  const server = await mcpTools(
    { url: served.url },
    { effect: 'read', tools: { delete_ticket: { effect: 'destructive' } }, maxResultTokens: 1_000 },
  );
  try {
    const model = scriptedModel([
      { toolCalls: [{ id: 'list', name: 'list_tickets', input: {} }] },
      {
        text: 'T-2 duplicates T-1.',
        toolCalls: [{ id: 'delete', name: 'delete_ticket', input: { id: 'T-2' } }],
      },
      { text: 'Deleted the duplicate T-2.' },
    ]);
    const options = { model, tools: server.tools };
    const first = await runAgent({ ...options, input: 'Clean up duplicate tickets.' });
    if (first.outcome.kind !== 'awaiting_approval')
      throw new Error(`expected a pause, got ${first.outcome.kind}`);
    const [pending] = first.outcome.requests;
    console.log(`asked: ${pending?.tool} ${JSON.stringify(pending?.input)} (${pending?.cause})`);
    const result = await resumeAgent(first.state, {
      ...options,
      approvals: pending
        ? [{ approvalId: pending.approvalId, decision: 'approve', by: 'ops@example.com' }]
        : [],
    });
    console.log(result.outcome);
    return { first, result, remaining: [...tickets.keys()], model };
  } finally {
    await server.close();
    await served.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
