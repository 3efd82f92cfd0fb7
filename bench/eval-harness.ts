/**
 * What the eval harness adds to the wall time of the trials it runs: 1,000 scripted trials (100
 * cases × 10 trials, each a 4-step run with a tool call per step and a 0-latency scripted model),
 * 4 in flight, run two ways:
 *
 *   bare        what a user would write without the harness: the same agent configurations (same
 *               seeds), `runAgent` in a pool of 4, the same predicate, no trace
 *   bare+trace  the same, each run writing a memory trace that is dropped after the run
 *   bare+kept   the same, every run's trace kept to the end, as the harness keeps them
 *   runEval     `runEval(suite, { trials: 10, concurrency: 4 })`: every trace kept, trajectories,
 *               failure classes, the report with its intervals
 *
 * The bar (≤ 5 %) is runEval against bare+kept: the same runs keeping the same traces, so what is
 * left is the harness's own work. What keeping traces costs is shown beside it.
 *
 * Each contender runs in a child process of its own, rounds interleaved and rotated, median of
 * the rounds (each child: one warm-up eval, then the median of 3 timed ones). Imports dist/.
 *
 *   npm run bench:eval     (or: npx tsx bench/eval-harness.ts [--rounds 5] [--cases 100] [--trials 10] [--json FILE])
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { EvalSuite } from '../dist/eval/index.js';
import { runEval, trialSeed } from '../dist/eval/index.js';
import { memoryTraceSink, runAgent } from '../dist/index.js';
import { scriptedModel, seededRandom } from '../dist/testing/index.js';
import { defineTool } from '../dist/tools/index.js';
import { benchMeta, median, option } from './stats.js';

const rounds = Number(option('rounds') ?? 5);
const caseCount = Number(option('cases') ?? 100);
const trials = Number(option('trials') ?? 10);
const concurrency = 4;
const steps = 4;

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up a record.',
  effect: 'read',
  input: z.object({ id: z.string(), field: z.string() }),
  execute: ({ id, field }) => ({ id, field, value: `${field} of ${id}`, updatedAt: '2026-12-03T10:00:00Z' }),
});

function suite(): EvalSuite {
  return {
    name: 'harness-bench',
    cases: Array.from({ length: caseCount }, (_, index) => ({
      id: `case-${index}`,
      input: `Question ${index}: find the owner of record r-${index}.`,
      expect: ({ answer }: { answer: string | undefined }) => answer?.includes(`r-${index}`) === true,
    })),
    agent: ({ caseId, random }) => {
      const right = random() < 0.8;
      const id = caseId.slice(5);
      return {
        model: scriptedModel(
          [
            ...Array.from({ length: steps - 1 }, (_, step) => ({
              text: `Checking field ${step}.`,
              toolCalls: [{ name: 'lookup', input: { id: `r-${id}`, field: `f${step}` } }],
            })),
            { text: right ? `The owner of r-${id} is ann.` : 'The owner is unknown.' },
          ],
          { recordCalls: false },
        ),
        tools: [lookup],
        maxSteps: steps + 1,
      };
    },
  };
}

/** Traces a bare contender keeps to the end, as runEval keeps every trial's. */
const kept: unknown[] = [];

async function bare(keepTrace = false, retain = false): Promise<number> {
  kept.length = 0;
  const built = suite();
  const queue: {
    caseId: string;
    input: string;
    trial: number;
    expect: (typeof built.cases)[number]['expect'];
  }[] = [];
  for (let trial = 0; trial < trials; trial++)
    for (const kase of built.cases)
      queue.push({ caseId: kase.id, input: kase.input as string, trial, expect: kase.expect });
  let passes = 0;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const seed = trialSeed(1, next.caseId, next.trial);
      const config = await built.agent({
        caseId: next.caseId,
        trial: next.trial,
        seed,
        random: seededRandom(seed),
        world: undefined,
        case: built.cases[0] as (typeof built.cases)[number],
      });
      const sink = keepTrace ? memoryTraceSink() : undefined;
      const result = await runAgent(
        sink ? { ...config, input: next.input, trace: sink } : { ...config, input: next.input },
      );
      // Kept to the end, as runEval keeps every trial's trace: the heap the collector walks is the same.
      if (sink && retain) kept.push(sink.events);
      const text = result.outcome.kind === 'answered' ? result.outcome.text : undefined;
      const verdict = await next.expect({
        caseId: next.caseId,
        trial: next.trial,
        result,
        outcome: result.outcome,
        answer: text,
        trace: [],
        world: undefined,
      });
      if (verdict === true) passes++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return passes;
}

async function harness(): Promise<number> {
  const report = await runEval(suite(), { trials, concurrency, seed: 1 });
  return report.trials.filter((trial) => trial.pass).length;
}

const contenders: Record<string, () => Promise<number>> = {
  bare: () => bare(),
  'bare+trace': () => bare(true),
  'bare+kept': () => bare(true, true),
  runEval: harness,
};

const child = option('child');
if (child !== undefined) {
  const run = contenders[child];
  if (!run) throw new Error(`no contender ${child}`);
  const passes = await run(); // warm-up
  const times: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const again = await run();
    times.push(performance.now() - started);
    const used = process.cpuUsage(cpuStarted);
    cpu.push((used.user + used.system) / 1_000);
    if (again !== passes) throw new Error(`${child}: ${again} passes, then ${passes}: not the same trials`);
  }
  process.stdout.write(
    `${JSON.stringify({ contender: child, ms: median(times), cpuMs: median(cpu), passes })}\n`,
  );
  process.exit(0);
}

const names = Object.keys(contenders);
const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
const passesOf: Record<string, number> = {};
for (let round = 0; round < rounds; round++) {
  const order = names.map((_, i) => names[(i + round) % names.length] as string);
  for (const name of order) {
    const out = execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        name,
        '--cases',
        String(caseCount),
        '--trials',
        String(trials),
      ],
      { encoding: 'utf8' },
    );
    const line = JSON.parse(out.trim().split('\n').pop() as string) as { ms: number; passes: number };
    samples[name]?.push(line.ms);
    passesOf[name] = line.passes;
    process.stderr.write(`  round ${round + 1}/${rounds} ${name}: ${line.ms.toFixed(1)} ms\n`);
  }
}
if (passesOf.bare !== passesOf.runEval)
  throw new Error(
    `the contenders disagree on the trials: bare ${passesOf.bare} passes, runEval ${passesOf.runEval}`,
  );
const bareMs = median(samples.bare as number[]);
const evalMs = median(samples.runEval as number[]);
const tracedMs = median(samples['bare+trace'] as number[]);
const keptMs = median(samples['bare+kept'] as number[]);
const figures = {
  trials: caseCount * trials,
  concurrency,
  stepsPerTrial: steps,
  rounds,
  bareMs,
  runEvalMs: evalMs,
  bareWithTraceMs: tracedMs,
  bareWithKeptTracesMs: keptMs,
  /** What the harness adds over the same runs keeping the same traces to the end: the bar (≤ 5 %). */
  overheadVsKept: evalMs / keptMs - 1,
  /** Over runs that write a trace and drop it. */
  overheadVsTraced: evalMs / tracedMs - 1,
  /** What the harness and its traces add over runs that keep nothing. */
  overheadVsBare: evalMs / bareMs - 1,
  samples,
  passes: passesOf.runEval,
  meta: benchMeta(),
};
console.log(
  `\nEval harness overhead: ${figures.trials.toLocaleString('en-US')} scripted trials, ${concurrency} in flight (median of ${rounds} rounds, a child process per contender and round)`,
);
console.log(`  bare runAgent pool  ${bareMs.toFixed(1)} ms`);
console.log(`  bare + memory trace ${tracedMs.toFixed(1)} ms   ${(tracedMs / bareMs).toFixed(3)}× bare`);
console.log(`  bare + traces kept  ${keptMs.toFixed(1)} ms   ${(keptMs / bareMs).toFixed(3)}× bare`);
console.log(
  `  runEval             ${evalMs.toFixed(1)} ms   ${(evalMs / keptMs).toFixed(3)}× bare + traces kept (+${(figures.overheadVsKept * 100).toFixed(1)} %), ${(evalMs / bareMs).toFixed(3)}× bare (+${(figures.overheadVsBare * 100).toFixed(1)} %)`,
);
const out = option('json');
if (out) writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
