import { describe, expect, it } from 'vitest';
import { billCrossPostWorkload, billRun } from './bill-run.js';

describe('billRun', () => {
  // The bill cross-post's printed table ("Multiplier 2"), through the real loop with the simulated cache.
  it.each([
    [10, '0.2730', '0.1788', '34.5'],
    [20, '0.7860', '0.5838', '25.7'],
    [40, '2.5320', '2.1138', '16.5'],
  ])('N=%i: naive $%s, cached $%s, savings %s %%', async (steps, naive, cached, savings) => {
    const append = await billRun({ workload: billCrossPostWorkload, policy: 'append-only', steps });
    const caching = await billRun({ workload: billCrossPostWorkload, policy: 'caching-only', steps });
    expect(append.costUsd.toFixed(4)).toBe(naive);
    expect(caching.costUsd.toFixed(4)).toBe(cached);
    expect((100 * (1 - caching.costUsd / append.costUsd)).toFixed(1)).toBe(savings);
    // Caching changes the price, never the tokens.
    expect(caching.billedTokens).toBe(append.billedTokens);
  });
});
