/**
 * What the eval harness adds to the wall time of the trials it runs: 1,000 scripted trials (100
 * cases × 10 trials, each a 4-step run with a tool call per step and a 0-latency scripted model),
 * 4 in flight, run these ways:
 *
 *   bare        what a user would write without the harness: the same agent configurations (same
 *               seeds), `runAgent` in a pool of 4, the same predicate, no trace
 *   bare+trace  the same, each run writing its trace to an array that is dropped after the run
 *   bare+kept   the same, every run's trace kept to the end, as the harness keeps them (with the
 *               same kind of sink as the harness: one that only appends to an array)
 *   runEval     `runEval(suite, { trials: 10, concurrency: 4 })`: every trace kept, trajectories,
 *               failure classes, the report with its intervals
 *
 * The bar (≤ 5 %) is runEval against bare+kept: the same runs keeping the same traces, so what is
 * left is the harness's own work. What keeping traces costs is shown beside it. The bare pool builds
 * each run's options as runEval does (Object.assign onto a fresh object, then input and trace): a
 * spread made the options megamorphic (-15 % for runEval once it stopped), and a baseline left
 * with the slower construction would flatter the harness.
 *
 * Each contender runs in a child process of its own per round, rounds interleaved with the order
 * rotated. A child runs `--warmup` evals (15) so the JIT has settled, then times `--timed` evals
 * (15) and reports their medians: wall time, the process's CPU time (the collector's and the
 * compiler's threads too) and the main thread's CPU time (Linux). Each figure is the median over
 * rounds; a ratio is the median of the per-round ratios (the contenders of a round ran minutes
 * apart at most, under the same load), with a bootstrap 95 % interval over rounds. Imports dist/.
 *
 *   npm run bench:eval     (or: npx tsx bench/eval-harness.ts [--rounds 7] [--warmup 15] [--timed 15]
 *                           [--cases 100] [--trials 10] [--contenders bare,bare+kept,runEval,bare+trace]
 *                           [--json FILE])
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { EvalSuite } from '../dist/eval/index.js';
import { bootstrapInterval, runEval, trialSeed } from '../dist/eval/index.js';
import { runAgent, type TraceEvent } from '../dist/index.js';
import { scriptedModel, seededRandom } from '../dist/testing/index.js';
import { defineTool } from '../dist/tools/index.js';
import { benchMeta, mainThreadCpuMs, median, option } from './stats.js';

const rounds = Number(option('rounds') ?? 7);
const warmupEvals = Number(option('warmup') ?? 15);
const timedEvals = Number(option('timed') ?? 15);
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
      // A sink that only appends, as runEval's is: a MemoryTraceSink also answers nextSeq, which
      // sends every run through a look-up at its start that runEval's runs do not make.
      const events: TraceEvent[] = [];
      const sink = keepTrace ? { write: (event: TraceEvent) => void events.push(event) } : undefined;
      // Built as runEval builds a trial's options (Object.assign onto a fresh object, then the
      // input and the trace): a spread gives nearly every options object a hidden class of its own
      // on Node 20, which would slow this baseline and flatter the harness.
      const options = Object.assign({}, config) as Parameters<typeof runAgent>[0];
      options.input = next.input;
      if (sink) options.trace = sink;
      const result = await runAgent(options);
      // Kept to the end, as runEval keeps every trial's trace: the heap the collector walks is the same.
      if (sink && retain) kept.push(events);
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

/** What one child reports: the medians of its timed evals, and its first (cold) eval. */
interface ChildFigures {
  contender: string;
  wallMs: number;
  cpuMs: number;
  threadCpuMs: number | null;
  coldWallMs: number;
  passes: number;
}

const child = option('child');
if (child !== undefined) {
  const run = contenders[child];
  if (!run) throw new Error(`no contender ${child}`);
  let passes: number | undefined;
  let coldWallMs = 0;
  const wall: number[] = [];
  const cpu: number[] = [];
  const thread: number[] = [];
  for (let i = 0; i < warmupEvals + timedEvals; i++) {
    const threadStarted = mainThreadCpuMs();
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    const again = await run();
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpuStarted);
    const threadEnded = mainThreadCpuMs();
    if (passes === undefined) {
      passes = again;
      coldWallMs = wallMs;
    } else if (again !== passes)
      throw new Error(`${child}: ${passes} passes, then ${again}: not the same trials`);
    if (i < warmupEvals) continue;
    wall.push(wallMs);
    cpu.push((used.user + used.system) / 1_000);
    if (threadStarted !== undefined && threadEnded !== undefined) thread.push(threadEnded - threadStarted);
  }
  const figures: ChildFigures = {
    contender: child,
    wallMs: median(wall),
    cpuMs: median(cpu),
    threadCpuMs: thread.length > 0 ? median(thread) : null,
    coldWallMs,
    passes: passes ?? 0,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
}

const names = (option('contenders') ?? 'bare,bare+kept,runEval').split(',');
for (const name of names) if (!contenders[name]) throw new Error(`no contender ${name}`);
for (const needed of ['bare', 'bare+kept', 'runEval'])
  if (!names.includes(needed)) throw new Error(`--contenders must include ${needed}`);
const byRound: Record<string, ChildFigures[]> = Object.fromEntries(names.map((name) => [name, []]));
const benchStarted = performance.now();
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
        '--warmup',
        String(warmupEvals),
        '--timed',
        String(timedEvals),
      ],
      { encoding: 'utf8' },
    );
    const line = JSON.parse(out.trim().split('\n').pop() as string) as ChildFigures;
    byRound[name]?.push(line);
    process.stderr.write(
      `  round ${round + 1}/${rounds} ${name.padEnd(10)} wall ${line.wallMs.toFixed(1)} ms, cpu ${line.cpuMs.toFixed(1)} ms, main thread ${line.threadCpuMs?.toFixed(1) ?? '—'} ms (cold ${line.coldWallMs.toFixed(1)} ms)\n`,
    );
  }
}
const passesOf = (name: string) => byRound[name]?.[0]?.passes;
for (const name of names)
  if (passesOf(name) !== passesOf('runEval'))
    throw new Error(
      `the contenders disagree on the trials: ${name} ${passesOf(name)} passes, runEval ${passesOf('runEval')}`,
    );

type Measure = 'wallMs' | 'cpuMs' | 'threadCpuMs' | 'coldWallMs';
const series = (name: string, measure: Measure): number[] =>
  (byRound[name] ?? []).map((line) => line[measure]).filter((value): value is number => value !== null);
const medianOf = (name: string, measure: Measure) => median(series(name, measure));
/** runEval over a baseline: the median of the per-round ratios less 1, with its bootstrap interval. */
function overhead(baseline: string, measure: Measure): { median: number; interval: [number, number] } | null {
  const ratios = series('runEval', measure).map(
    (value, round) => value / (series(baseline, measure)[round] as number),
  );
  if (ratios.length === 0 || ratios.some((ratio) => !Number.isFinite(ratio))) return null;
  // The library's own percentile bootstrap (reins/eval), seeded: the same rounds, the same interval.
  const interval = bootstrapInterval(ratios, {
    statistic: (sample) => median([...sample]),
    resamples: 10_000,
    random: seededRandom(1),
  });
  if (interval === null) return null;
  const [low, high] = interval;
  return { median: median(ratios) - 1, interval: [low - 1, high - 1] };
}
const vsKept = overhead('bare+kept', 'wallMs');
const vsBare = overhead('bare', 'wallMs');
const figures = {
  trials: caseCount * trials,
  concurrency,
  stepsPerTrial: steps,
  rounds,
  warmupEvals,
  timedEvals,
  /** Warm wall time, ms: the median over rounds of each child's median over its timed evals. */
  bareMs: medianOf('bare', 'wallMs'),
  runEvalMs: medianOf('runEval', 'wallMs'),
  bareWithKeptTracesMs: medianOf('bare+kept', 'wallMs'),
  ...(names.includes('bare+trace') ? { bareWithTraceMs: medianOf('bare+trace', 'wallMs') } : {}),
  /** What the harness adds over the same runs keeping the same traces to the end: the bar (≤ 5 %). */
  overheadVsKept: vsKept?.median,
  overheadVsKeptInterval: vsKept?.interval,
  /** What the harness and its traces add over runs that keep nothing. */
  overheadVsBare: vsBare?.median,
  overheadVsBareInterval: vsBare?.interval,
  /** The same by the process's CPU time, and by the main thread's (null where not measurable). */
  cpu: {
    bareMs: medianOf('bare', 'cpuMs'),
    runEvalMs: medianOf('runEval', 'cpuMs'),
    bareWithKeptTracesMs: medianOf('bare+kept', 'cpuMs'),
    overheadVsKept: overhead('bare+kept', 'cpuMs'),
  },
  mainThreadCpu: {
    bareMs: series('bare', 'threadCpuMs').length > 0 ? medianOf('bare', 'threadCpuMs') : null,
    runEvalMs: series('runEval', 'threadCpuMs').length > 0 ? medianOf('runEval', 'threadCpuMs') : null,
    bareWithKeptTracesMs:
      series('bare+kept', 'threadCpuMs').length > 0 ? medianOf('bare+kept', 'threadCpuMs') : null,
    overheadVsKept: overhead('bare+kept', 'threadCpuMs'),
  },
  /** Each child's first eval (cold: the JIT not yet warm), median over rounds. */
  coldMs: Object.fromEntries(names.map((name) => [name, medianOf(name, 'coldWallMs')])),
  /** Warm wall time per round, ms. */
  samples: Object.fromEntries(names.map((name) => [name, series(name, 'wallMs')])),
  passes: passesOf('runEval'),
  meta: benchMeta({ benchSeconds: Math.round((performance.now() - benchStarted) / 1_000) }),
};
const signed = (value: number | undefined) =>
  value === undefined ? '—' : `${value >= 0 ? '+' : '−'}${Math.abs(value * 100).toFixed(1)} %`;
const within = (interval: [number, number] | undefined) =>
  interval ? `95 % CI ${signed(interval[0])}…${signed(interval[1])}` : '';
console.log(
  `\nEval harness overhead: ${figures.trials.toLocaleString('en-US')} scripted trials, ${concurrency} in flight (${rounds} rounds, a child process per contender and round, ${warmupEvals} warm-up + median of ${timedEvals} timed evals each)`,
);
console.log(
  `  bare runAgent pool  ${figures.bareMs.toFixed(1)} ms wall, ${figures.cpu.bareMs.toFixed(1)} ms CPU`,
);
if (figures.bareWithTraceMs !== undefined)
  console.log(`  bare + memory trace ${figures.bareWithTraceMs.toFixed(1)} ms wall`);
console.log(
  `  bare + traces kept  ${figures.bareWithKeptTracesMs.toFixed(1)} ms wall, ${figures.cpu.bareWithKeptTracesMs.toFixed(1)} ms CPU`,
);
console.log(
  `  runEval             ${figures.runEvalMs.toFixed(1)} ms wall, ${figures.cpu.runEvalMs.toFixed(1)} ms CPU`,
);
console.log(
  `  runEval ÷ bare + traces kept: wall ${signed(vsKept?.median)} (${within(vsKept?.interval)}), CPU ${signed(figures.cpu.overheadVsKept?.median)} (${within(figures.cpu.overheadVsKept?.interval)}), main thread ${signed(figures.mainThreadCpu.overheadVsKept?.median)} (${within(figures.mainThreadCpu.overheadVsKept?.interval)})`,
);
console.log(`  runEval ÷ bare: wall ${signed(vsBare?.median)} (${within(vsBare?.interval)})`);
console.log(`  (${figures.meta.benchSeconds} s)`);
const out = option('json');
if (out) writeFileSync(out, `${JSON.stringify(figures, null, 2)}\n`);
