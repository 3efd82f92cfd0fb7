import { describe, expect, it } from 'vitest';
import { main } from './support-agent.js';

describe('examples run offline', () => {
  it('support-agent answers, with the cross-customer lookup denied', async () => {
    const { result, denials, model } = await main();
    expect(result.outcome.kind).toBe('answered');
    expect(denials).toHaveLength(1);
    expect(JSON.stringify(result.messages)).not.toContain('delivered');
    model.assertDone();
  });
});
