import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ToolResultBlock } from '../model/content.js';
import { fakeClock } from '../testing/fake-clock.js';
import { type ScriptStep, scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { EvalSuite } from './eval-types.js';
import { runFaultMatrix } from './fault-matrix.js';
import { runEval } from './run-eval.js';

const getOrder = defineTool({
  name: 'get_order',
  description: 'Look up one order.',
  input: z.object({ orderId: z.string() }),
  effect: 'read',
  trustedOutput: true,
  execute: ({ orderId }) => ({ orderId, status: 'shipped' }),
});
const cancelOrder = defineTool({
  name: 'cancel_order',
  description: 'Cancel an order (this agent never needs it).',
  input: z.object({ orderId: z.string() }),
  effect: 'write',
  execute: () => ({ cancelled: true }),
});

/**
 * A model that retries a tool error once and otherwise believes what it reads: it answers with
 * the status when the result names one, and says it does not know when the result is garbled.
 */
const careful: ScriptStep = (request) => {
  const results = request.messages.flatMap((message) =>
    message.role === 'user'
      ? message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result')
      : [],
  );
  const last = results.at(-1);
  const lookUp = (id?: string) => ({
    text: 'Looking it up.',
    toolCalls: [{ name: 'get_order', input: { orderId: 'A-1' }, ...(id ? { id } : {}) }],
  });
  if (!last) return lookUp();
  if (last.content.includes('"status":"shipped"')) return { text: 'Order A-1 has shipped.' };
  if (last.isError && results.length < 3) return lookUp(`retry${results.length}`);
  return { text: 'I could not find out where A-1 is.' };
};

const suite: EvalSuite = {
  name: 'orders',
  cases: [
    { id: 'where', input: 'Where is A-1?', expect: ({ answer }) => answer?.includes('shipped') === true },
    { id: 'again', input: 'Has A-1 shipped?', expect: ({ answer }) => answer?.includes('shipped') === true },
  ],
  agent: () => ({
    model: scriptedModel(
      Array.from({ length: 6 }, () => careful),
      { name: 'careful' },
    ),
    tools: [getOrder, cancelOrder],
    prices: { '*': { inputUsdPerMillionTokens: 1_000, outputUsdPerMillionTokens: 4_000 } },
    maxSteps: 6,
    clock: fakeClock(),
  }),
};

const run = { trials: 4, k: 2, clock: fakeClock() };

describe('runFaultMatrix against runEval', () => {
  it('reports recovery per (tool, fault), the cost of recovering, and untested cells as untested', async () => {
    const seen: (string | undefined)[] = [];
    const matrix = await runFaultMatrix(suite, {
      faults: ['http_500', 'http_429', 'malformed_json', 'empty', 'schema_invalid'],
      run,
      onCell: (cell, done, total) =>
        seen.push(`${cell ? `${cell.tool}:${cell.fault}` : 'baseline'} ${done}/${total}`),
    });
    expect(matrix.firing).toEqual({ atCall: 1 });
    expect(matrix.baseline).toMatchObject({ trials: 8, passes: 8, passRate: 1 });
    expect(matrix.baseline.meanCostUsd).toBeGreaterThan(0);
    // Every tool the agent offers, every fault asked for, in order.
    expect(matrix.cells.map((cell) => `${cell.tool}:${cell.fault}`)).toEqual([
      'get_order:http_500',
      'get_order:http_429',
      'get_order:malformed_json',
      'get_order:empty',
      'get_order:schema_invalid',
      'cancel_order:http_500',
      'cancel_order:http_429',
      'cancel_order:malformed_json',
      'cancel_order:empty',
      'cancel_order:schema_invalid',
    ]);
    expect(seen[0]).toBe('baseline 1/11');
    expect(seen.at(-1)).toBe('cancel_order:schema_invalid 11/11');
    const cell = (tool: string, fault: string) =>
      matrix.cells.find((one) => one.tool === tool && one.fault === fault);

    // A retryable error: the careful model retries and recovers every time, at a higher bill.
    const http500 = cell('get_order', 'http_500');
    expect(http500).toMatchObject({ trials: 8, passes: 8, injected: 8, faultedTrials: 8, recoveryRate: 1 });
    expect(http500?.costMultiplier).toBeGreaterThan(1);
    // Every trial was faulted here, so the same-trials multiplier is the whole cell's.
    expect(http500?.baselinePassRateOnFaulted).toBe(1);
    expect(http500?.costMultiplier).toBeCloseTo(
      (http500?.meanCostUsd ?? 0) / matrix.baseline.meanCostUsd,
      12,
    );
    expect(http500?.recoveryCi95?.[0]).toBeGreaterThan(0.6);
    expect(http500?.recoveryCi95?.[1]).toBe(1);

    // A garbled body is believed, not retried: no recovery, and the failures are named.
    for (const fault of ['malformed_json', 'empty', 'schema_invalid']) {
      const broken = cell('get_order', fault);
      expect(broken, fault).toMatchObject({ passes: 0, injected: 8, recoveryRate: 0 });
      expect(broken?.failureClasses, fault).toEqual({ wrong_answer: 8 });
      expect(broken?.recoveryCi95?.[1], fault).toBeLessThan(0.4);
    }

    // The agent never calls cancel_order: its faults never fired, and nothing is claimed about recovery.
    for (const fault of ['http_500', 'http_429', 'malformed_json', 'empty', 'schema_invalid']) {
      const untested = cell('cancel_order', fault);
      expect(untested, fault).toMatchObject({
        passes: 8,
        injected: 0,
        faultedTrials: 0,
        recoveryRate: null,
        recoveryCi95: null,
        baselinePassRateOnFaulted: null,
        costMultiplier: null,
      });
    }
  });

  it('a rate that draws no hit is reported as untested, and the chosen tools alone are broken', async () => {
    const matrix = await runFaultMatrix(suite, { tools: ['get_order'], faults: ['http_500'], rate: 0, run });
    expect(matrix.firing).toEqual({ rate: 0 });
    expect(matrix.cells).toHaveLength(1);
    expect(matrix.cells[0]).toMatchObject({ passes: 8, injected: 0, recoveryRate: null });
  });

  it('a cell is the same run as runEval of the faulted suite: the baseline matches runEval exactly', async () => {
    const matrix = await runFaultMatrix(suite, { tools: [], run });
    const direct = await runEval(suite, run);
    expect(matrix.cells).toEqual([]);
    expect(matrix.baseline.passRate).toBe(direct.summary.passRate);
    expect(matrix.baseline.meanCostUsd).toBe(direct.summary.cost.mean);
  });

  it('refuses a fault it does not know', async () => {
    await expect(runFaultMatrix(suite, { faults: ['gremlins' as never], run })).rejects.toThrow(/gremlins/);
  });
});

describe('runFaultMatrix with the eval just run as its baseline', () => {
  it('reuses it instead of running the suite again, with the same figures; refuses one of another seed', async () => {
    let built = 0;
    const counted: EvalSuite = {
      ...suite,
      agent: (context) => {
        built++;
        return suite.agent(context);
      },
    };
    const options = { tools: ['get_order'], faults: ['http_500'] as const, run };
    const fresh = await runFaultMatrix(counted, { ...options, faults: [...options.faults] });
    const freshBuilds = built;
    const report = await runEval(counted, run);
    built = 0;
    const reused = await runFaultMatrix(counted, {
      ...options,
      faults: [...options.faults],
      baseline: report,
    });
    expect(built).toBe(freshBuilds - report.summary.trials);
    expect(reused.baseline).toEqual(fresh.baseline);
    expect(reused.cells).toEqual(fresh.cells);
    const other = await runEval(counted, { ...run, seed: 2 });
    await expect(
      runFaultMatrix(counted, { ...options, faults: [...options.faults], baseline: other }),
    ).rejects.toThrow('baseline');
  });
});
