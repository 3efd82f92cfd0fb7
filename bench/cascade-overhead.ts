/**
 * Cascade overhead per stage, beyond the model calls: `cascadeModel` over 0-latency tiers against
 * calling a tier directly. A stage is one tier's call plus the trigger's check of its answer.
 *
 *   keep        two tiers, `structuralTrigger()` keeps the cheap answer: one stage
 *   escalate    two tiers, a trigger that escalates every answer: two stages (both tiers called)
 *   breakers    as `escalate`, each tier behind a closed `CircuitBreaker`
 *
 * Per stage: (case − stages × direct) ÷ stages. Each case is timed in its own child process,
 * cases interleaved and rotated across rounds; a child reports the median of 3 passes.
 *
 *   npm run bench:routing    (or: npx tsx bench/cascade-overhead.ts [--calls 200000] [--rounds 5] [--json FILE])
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Model, ModelRequest, ModelResponse } from '../dist/model/model.js';
import { CircuitBreaker } from '../dist/resilience/circuit-breaker.js';
import { cascadeModel, type EscalationTrigger, structuralTrigger } from '../dist/routing/index.js';
import { benchMeta, median } from './stats.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) =>
  args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : fallback;
const calls = flag('calls', 200_000);
const rounds = flag('rounds', 5);

const request: ModelRequest = {
  system: 'You answer.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 2?' }] }],
  tools: [],
  toolChoice: 'auto',
};
/** A 0-latency tier: a fresh response per call, as an adapter returns. */
const tier = (name: string): Model => ({
  name,
  generate: async (): Promise<ModelResponse> => ({
    content: [{ type: 'text', text: '{"answer": "4", "confidence": 0.9}' }],
    stopReason: 'end_turn',
    usage: { inputTokens: 20, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0 },
    model: name,
  }),
});
const always: EscalationTrigger = {
  name: 'always',
  kinds: ['structural'],
  check: () => ({ kind: 'escalate', trigger: 'always', reason: 'benchmark' }),
};
const cases: Record<string, { stages: number; model: () => Model }> = {
  direct: { stages: 1, model: () => tier('cheap') },
  keep: {
    stages: 1,
    model: () => cascadeModel({ tiers: [tier('cheap'), tier('strong')], escalate: structuralTrigger() }),
  },
  escalate: {
    stages: 2,
    model: () => cascadeModel({ tiers: [tier('cheap'), tier('strong')], escalate: always }),
  },
  breakers: {
    stages: 2,
    model: () =>
      cascadeModel({
        tiers: [
          { model: tier('cheap'), breaker: new CircuitBreaker() },
          { model: tier('strong'), breaker: new CircuitBreaker() },
        ],
        escalate: always,
      }),
  },
};

async function time(model: Model): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) await model.generate(request);
  return performance.now() - started;
}

const childCase = args.includes('--child') ? args[args.indexOf('--child') + 1] : undefined;
if (childCase !== undefined) {
  const entry = cases[childCase];
  if (!entry) throw new Error(`no case ${childCase}`);
  const model = entry.model();
  await time(model);
  const passes: number[] = [];
  for (let i = 0; i < 3; i++) passes.push(((await time(model)) * 1_000) / calls);
  process.stdout.write(`${JSON.stringify({ case: childCase, usPerCall: median(passes) })}\n`);
  process.exit(0);
}

const names = Object.keys(cases);
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
      `  round ${round + 1}/${rounds}  ${name.padEnd(8)} ${sample.usPerCall.toFixed(3)} µs/call\n`,
    );
  }
}
const direct = median(samples.get('direct') ?? []);
console.log(
  `\nCascade overhead per stage (median of ${rounds} rounds, one child process per case and round, each the median of 3 passes × ${calls.toLocaleString('en-US')} calls)`,
);
console.log(`  direct tier call            ${direct.toFixed(3).padStart(8)} µs/call`);
const results: { case: string; usPerCall: number; stages: number; overheadUsPerStage: number }[] = [];
for (const name of names.filter((n) => n !== 'direct')) {
  const { stages } = cases[name] as { stages: number };
  const usPerCall = median(samples.get(name) ?? []);
  const overheadUsPerStage = (usPerCall - stages * direct) / stages;
  results.push({ case: name, usPerCall, stages, overheadUsPerStage });
  console.log(
    `  cascade, ${name.padEnd(18)} ${usPerCall.toFixed(3).padStart(8)} µs/call   ${stages} stage${stages > 1 ? 's' : ''}   overhead ${overheadUsPerStage.toFixed(3)} µs/stage   goal ≤ 5 µs: ${overheadUsPerStage <= 5 ? 'met' : 'NOT met'}`,
  );
}
const jsonFile = args.includes('--json') ? args[args.indexOf('--json') + 1] : undefined;
if (jsonFile)
  writeFileSync(
    jsonFile,
    `${JSON.stringify({ meta: benchMeta({ rounds, calls }), directUs: direct, cases: results }, null, 2)}\n`,
  );
