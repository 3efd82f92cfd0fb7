/**
 * Validation plus dispatch overhead per tool call, for a 10-field zod schema: reins' dispatcher
 * (size and key checks, schema validation, authorization, preconditions, autonomy and taint checks,
 * timeout, output serialization) against calling the function directly. Two cases:
 *
 *   clean    a trusted-output tool, nothing untrusted in the context
 *   tainted  untrusted content is in the context (`ledger.noteResult(true, [])`) and the tool's own
 *            output is untrusted: every call goes through the taint guard (provenance of all 10
 *            fields checked against the user's words, a `taint-check` event) and its result is
 *            delimited
 *   policy   tainted, and the recommended configuration: the tool has a policy (three arguments
 *            from the user, a readers check over every argument against 200 private tokens, two
 *            caps counted per call) and the call matches a planned entry
 *
 * Each call is planned (`dispatcher.plan`) and executed (`plan.execute(runtime)`) on a minimal
 * batch runtime: a deadline list and abort listeners, no timer (the batch runner arms one timer per
 * batch; that is not counted here). Imports the source, so no build is needed.
 *
 *   npm run bench:dispatch     (or: npx tsx bench/dispatch-overhead.ts [--calls 50000] [--rounds 5] [--json FILE])
 *   Each case (and the direct call) is timed in its own child process, cases interleaved across rounds.
 *   node bench/dispatch-icount.mjs [TREE ...]   instructions per call under valgrind (a noisy machine)
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { canonicalJson } from '../dist/controls/canonical-json.js';
import { TaintLedger } from '../dist/controls/taint-ledger.js';
import type { CallRuntime, PlanRequest } from '../dist/loop/call-plan.js';
import { type Dispatcher, liveDispatcher } from '../dist/loop/dispatch.js';
import { systemClock } from '../dist/time/clock.js';
import { approxTokenEstimator } from '../dist/tokens/token-estimator.js';
import { type AnyTool, defineTool } from '../dist/tools/define-tool.js';
import { benchMeta, median } from './stats.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) =>
  args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback;
const calls = flag('calls', 50_000);
const rounds = flag('rounds', 5);

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
const common = { effect: 'write', scopes: ['credits:write'], input, execute } as const;
const trustedTool = defineTool({
  ...common,
  name: 'issue_credit',
  description: 'Issue a store credit.',
  trustedOutput: true,
});
// Untrusted output, and (as a write) it needs trusted context: the taint guard checks every field.
// Nine of the ten fields are checked: `notify` is a boolean, which the guard never vouches for
// (its intent cannot be read from the user's words), so checking it would pause every call.
const untrustedTool = defineTool({
  ...common,
  name: 'issue_partner_credit',
  description: 'Issue a credit through a partner system.',
  sensitiveArguments: [
    'orderId',
    'customerId',
    'amountUsd',
    'currency',
    'reason',
    'priority',
    'tags',
    'requestedBy',
    'note',
  ],
});

/** The recommended configuration: a policy for the tool and a plan the call matches. */
const policyTaint = {
  policies: {
    issue_partner_credit: {
      arguments: { orderId: ['user' as const], customerId: ['user' as const], amountUsd: ['user' as const] },
      readers: { arguments: ['requestedBy'] },
      // Caps high enough never to bite over the whole benchmark, so every call is counted and runs.
      caps: {
        sum: { argument: 'amountUsd', max: 1e15 },
        perValue: { argument: 'customerId', maxCalls: 1e12 },
      },
    },
  },
  // Under a plan, a reader of private data must be fixed by the plan too (issue 15, second round).
  plan: [
    {
      tool: 'issue_partner_credit',
      arguments: { orderId: 'O-1001', requestedBy: 'ops@corp.example' },
      times: 1e12,
    },
  ],
};

function dispatcherFor(tool: AnyTool, withPolicy = false): Dispatcher {
  return liveDispatcher({
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
    taint: {
      enabled: true,
      onTaintedCall: 'ask',
      allowWhileTainted: [],
      policies: withPolicy ? policyTaint.policies : {},
      plan: withPolicy ? policyTaint.plan : undefined,
    },
    estimator: approxTokenEstimator,
  });
}

/** One batch's runtime, reduced to what a call registers: deadlines and abort callbacks. */
function minimalRuntime(): CallRuntime {
  const deadlines = new Set<() => void>();
  const listeners = new Set<() => void>();
  let controller: AbortController | undefined;
  return {
    get signal() {
      controller ??= new AbortController();
      return controller.signal;
    },
    aborted: false,
    deadline(_ms, onTimeout) {
      deadlines.add(onTimeout);
      return () => deadlines.delete(onTimeout);
    },
    onAbort(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    now: () => performance.now(),
  };
}

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
// The loop serializes each call's input once (repeat detection needs it) and shares it with dispatch.
const canonicalInput = canonicalJson(value);
const signal = new AbortController().signal;
const terminal = new Set<string>();
const emit = () => {};

const cleanLedger = new TaintLedger();
const taintedLedger = new TaintLedger();
// Every argument comes from the user's words, so the guard lets the call run (verdict `provenance`).
taintedLedger.noteTrustedText(
  'Please issue a USD 12.5 credit for order O-1001, customer C-77, reason: Late delivery; notify, priority 2, tags late and vip, requested by ops@corp.example.',
);
taintedLedger.noteResult(true, []);
// The policy case also holds private data (two hundred private tokens, as after reading a mailbox),
// so the readers check walks every argument looking for it.
const policyLedger = new TaintLedger();
policyLedger.noteTrustedText(
  'Please issue a USD 12.5 credit for order O-1001, customer C-77, reason: Late delivery; notify, priority 2, tags late and vip, requested by ops@corp.example.',
);
policyLedger.noteResult(true, []);
// Optional: bench/dispatch-icount.mjs runs this script against older trees, which lack it.
policyLedger.notePrivate?.(
  Array.from({ length: 200 }, (_, i) => `Invoice INV-${10_000 + i} for account ACCT${i}x`),
);

interface Case {
  name: string;
  dispatcher: Dispatcher;
  tool: string;
  taint: TaintLedger;
  untrusted: boolean;
}
const cases: Case[] = [
  {
    name: 'clean',
    dispatcher: dispatcherFor(trustedTool),
    tool: trustedTool.name,
    taint: cleanLedger,
    untrusted: false,
  },
  {
    name: 'tainted',
    dispatcher: dispatcherFor(untrustedTool),
    tool: untrustedTool.name,
    taint: taintedLedger,
    untrusted: true,
  },
  {
    name: 'policy',
    dispatcher: dispatcherFor(untrustedTool, true),
    tool: untrustedTool.name,
    taint: policyLedger,
    untrusted: true,
  },
];

async function direct(): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await execute(value);
  return performance.now() - started;
}

async function reins({ dispatcher, tool, taint, untrusted }: Case): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const request: PlanRequest = {
      call: { type: 'tool_use', id: `c${i}`, name: tool, input: value },
      canonicalInput,
      step: 1,
      verdict: undefined,
      taint,
      terminal,
      offered: undefined,
      signal,
    };
    const planned = dispatcher.plan(request, emit);
    const plan = planned instanceof Promise ? await planned : planned;
    if (plan.kind !== 'execute')
      throw new Error(
        `unexpected plan ${plan.kind} ${JSON.stringify((plan as { request?: unknown }).request)}`,
      );
    const settlement = await plan.execute(minimalRuntime());
    if (settlement.status !== 'ok') throw new Error(settlement.content);
    if (settlement.untrusted !== untrusted) throw new Error('unexpected trust on the result');
  }
  return performance.now() - started;
}

// `--only NAME` times one case once, printing nothing: for bench/dispatch-icount.mjs, which
// counts its instructions under valgrind.
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
if (only !== undefined) {
  const entry = cases.find((candidate) => candidate.name === only);
  if (!entry) throw new Error(`no case ${only}`);
  await reins(entry);
  process.exit(0);
}

// A child times one case (or the direct call): warm-up, then the median of 3 timed passes.
const childCase = args.includes('--child') ? args[args.indexOf('--child') + 1] : undefined;
if (childCase !== undefined) {
  const entry = cases.find((candidate) => candidate.name === childCase);
  if (childCase !== 'direct' && !entry) throw new Error(`no case ${childCase}`);
  const time = () => (entry ? reins(entry) : direct());
  await time();
  const passes: number[] = [];
  for (let i = 0; i < 3; i++) passes.push(((await time()) * 1_000) / calls);
  process.stdout.write(`${JSON.stringify({ case: childCase, usPerCall: median(passes) })}\n`);
  process.exit(0);
}

// The parent: one child process per (case, round), cases interleaved and rotated across rounds.
const names = ['direct', ...cases.map((entry) => entry.name)];
const samples = new Map<string, number[]>(names.map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length] as string);
  for (const name of order) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name, '--calls', String(calls)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const sample = JSON.parse(out.trim().split('\n').at(-1) as string) as { usPerCall: number };
    samples.get(name)?.push(sample.usPerCall);
    process.stderr.write(
      `  round ${round + 1}/${rounds}  ${name.padEnd(8)} ${sample.usPerCall.toFixed(2)} µs/call\n`,
    );
  }
}
const d = median(samples.get('direct') ?? []);
console.log(
  `\nTool dispatch overhead, 10-field schema (median of ${rounds} rounds, one child process per case and round, each the median of 3 passes × ${calls.toLocaleString('en-US')} calls)`,
);
console.log(`  direct call                       ${d.toFixed(2).padStart(8)} µs/call`);
const results: { case: string; usPerCall: number; overheadUs: number; min: number; max: number }[] = [];
for (const entry of cases) {
  const values = samples.get(entry.name) ?? [];
  const r = median(values);
  results.push({
    case: entry.name,
    usPerCall: r,
    overheadUs: r - d,
    min: Math.min(...values),
    max: Math.max(...values),
  });
  const label = `reins validate+dispatch, ${entry.name}`.padEnd(33);
  console.log(`  ${label} ${r.toFixed(2).padStart(8)} µs/call   ${(r / d).toFixed(1)}× direct`);
  console.log(
    `  ${'  overhead'.padEnd(33)} ${(r - d).toFixed(2).padStart(8)} µs/call   goal ≤ 20 µs: ${r - d <= 20 ? 'met' : 'NOT met'}`,
  );
}
const jsonFile = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
if (jsonFile)
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ meta: benchMeta({ rounds, calls }), directUs: d, cases: results }, null, 2)}\n`,
  );
