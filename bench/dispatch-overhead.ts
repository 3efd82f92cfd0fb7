/**
 * Validation plus dispatch overhead per tool call, for a 10-field zod schema: reins' dispatcher
 * (size and key checks, schema validation, authorization, preconditions, autonomy and taint checks,
 * timeout, output serialization) against calling the function directly.
 *
 *   npm run bench:dispatch     (or: npx tsx bench/dispatch-overhead.ts [--calls 50000] [--rounds 7])
 */
import { approxTokenEstimator, defineTool, liveDispatcher, systemClock, TaintLedger } from 'reins';
import { z } from 'zod';
import { median } from './stats.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) =>
  args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback;
const calls = flag('calls', 50_000);
const rounds = flag('rounds', 7);

const input = z.object({
  orderId: z.string().min(1),
  customerId: z.string().min(1),
  amountUsd: z.number().positive(),
  currency: z.enum(['USD', 'EUR', 'GBP']),
  reason: z.string().max(500),
  notify: z.boolean(),
  priority: z.number().int().min(1).max(5),
  tags: z.array(z.string()).max(10),
  requestedBy: z.string().email(),
  note: z.string().optional(),
});
type Input = z.infer<typeof input>;
const execute = async (value: Input) => ({ ok: true, orderId: value.orderId, amountUsd: value.amountUsd });
const tool = defineTool({
  name: 'issue_credit',
  description: 'Issue a store credit.',
  effect: 'write',
  trustedOutput: true,
  scopes: ['credits:write'],
  input,
  execute,
});
const dispatcher = liveDispatcher({
  tools: new Map([[tool.name, tool]]),
  actor: { id: 'agent-user', scopes: ['credits:write'] },
  authorize: ({ tool: t, actor }) =>
    t.scopes.every((scope) => actor?.scopes?.includes(scope))
      ? { allow: true }
      : { allow: false, reason: 'scope' },
  clock: systemClock,
  runId: 'bench',
  toolTimeoutMs: 30_000,
  maxResultTokens: 10_000,
  maxInputChars: 262_144,
  writesDisabled: false,
  taint: { enabled: true, onTaintedCall: 'ask', allowWhileTainted: [] },
  estimator: approxTokenEstimator,
});
const value: Input = {
  orderId: 'O-1001',
  customerId: 'C-77',
  amountUsd: 12.5,
  currency: 'USD',
  reason: 'Late delivery',
  notify: true,
  priority: 2,
  tags: ['late', 'vip'],
  requestedBy: 'ops@corp.example',
};
const signal = new AbortController().signal;
const taint = new TaintLedger();
const terminal = new Set<string>();
const emit = async () => {};

async function direct(): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await execute(value);
  return performance.now() - started;
}

async function reins(): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const call = { type: 'tool_use' as const, id: `c${i}`, name: 'issue_credit', input: value };
    const plan = await dispatcher.plan({ call, step: 1, verdict: undefined, taint, terminal, signal }, emit);
    if (plan.kind !== 'execute') throw new Error(`unexpected plan ${plan.kind}`);
    const settlement = await plan.execute(signal);
    if (settlement.status !== 'ok') throw new Error(settlement.content);
  }
  return performance.now() - started;
}

await direct();
await reins();
const directUs: number[] = [];
const reinsUs: number[] = [];
for (let round = 0; round < rounds; round++) {
  directUs.push(((await direct()) * 1_000) / calls);
  reinsUs.push(((await reins()) * 1_000) / calls);
}
const d = median(directUs);
const r = median(reinsUs);
console.log(
  `\nTool dispatch overhead, 10-field schema (median of ${rounds} rounds × ${calls.toLocaleString('en-US')} calls)`,
);
console.log(`  direct call              ${d.toFixed(2).padStart(8)} µs/call`);
console.log(`  reins validate+dispatch  ${r.toFixed(2).padStart(8)} µs/call   ${(r / d).toFixed(1)}× direct`);
console.log(
  `  overhead                 ${(r - d).toFixed(2).padStart(8)} µs/call   goal ≤ 20 µs: ${r - d <= 20 ? 'met' : 'NOT met'}`,
);
