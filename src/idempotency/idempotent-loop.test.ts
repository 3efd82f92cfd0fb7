import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../loop/run-agent.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { memoryTraceSink } from '../trace/sink.js';
import { idempotencyKeyDescription, idempotent } from './idempotent.js';
import { MemoryIdempotencyStore } from './memory-store.js';

describe('an idempotent tool in the agent loop', () => {
  it('a model that re-sends a charge after an ambiguous failure is told it already happened; one effect', async () => {
    const charges: string[] = [];
    let first = true;
    const charge = defineTool({
      name: 'send_invoice',
      description: 'Email an invoice.',
      effect: 'write',
      trustedOutput: true,
      input: z.object({
        invoiceId: z.string(),
        idempotencyKey: z.string().describe(idempotencyKeyDescription),
      }),
      execute: async ({ invoiceId }) => {
        charges.push(invoiceId);
        if (first) {
          first = false;
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        }
        return { sent: invoiceId };
      },
    });
    const tool = idempotent(charge, {
      store: new MemoryIdempotencyStore(),
      key: { field: 'idempotencyKey' },
      reconcile: async () => ({ happened: charges.length > 0, result: { sent: 'inv-7' } }),
    });
    const call = { name: 'send_invoice', input: { invoiceId: 'inv-7', idempotencyKey: 'invoice-inv-7' } };
    const trace = memoryTraceSink();
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [call] }, { toolCalls: [call] }, { text: 'Sent once.' }]),
      input: 'Send invoice inv-7.',
      tools: [tool],
      trace,
    });
    expect(result.outcome.kind).toBe('answered');
    expect(charges).toEqual(['inv-7']);
    const results = trace.events.filter((event) => event.type === 'tool-result');
    expect(
      results.map((event) => (event.type === 'tool-result' ? JSON.parse(event.content) : null)),
    ).toMatchObject([
      { error: { code: 'outcome_uncertain', retry: 'yes' } },
      { deduplicated: true, result: { sent: 'inv-7' } },
    ]);
  });
});
