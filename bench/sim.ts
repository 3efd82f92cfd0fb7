/**
 * Simulators against Python, with language and algorithm separated. For each Monte Carlo model,
 * at its post's trial count:
 *
 *   posts' Python    bench/python/seed_models.py: the post's naive per-call model
 *   same algorithm   bench/python/reins_algorithms.py: reins's algorithms in plain CPython
 *   NumPy            bench/python/reins_algorithms_numpy.py, when NumPy is installed (reported only)
 *   reins cold       the first call in a fresh Node process
 *   reins warm       a fresh Node process, timed after five untimed calls
 *
 * total = posts' Python ÷ reins warm = algorithm (posts' ÷ same algorithm) × language (same
 * algorithm ÷ reins warm). Every contender runs in its own process, one at a time (never two
 * timings overlapping), in an order that rotates each round; figures are medians over the rounds.
 * Start-up and import are excluded everywhere.
 *
 * Two checks keep a fast wrong answer from winning: the same-algorithm port run with reins's own
 * generator (mulberry32, seed 1, 5,000 trials) must reproduce reins's results to 1e-12, and at full
 * trial counts every estimate (reins, posts' Python, the ports) must agree with every other and
 * with the exact value within 4 standard errors. Then every exact computation, 200 calls in a
 * fresh process per round, the first call included: the bar is 10 ms for the worst call.
 *
 *   npm run bench:sim                 # 5 rounds
 *   npm run bench:sim -- 7            # 7 rounds
 *   npm run --silent bench:sim -- 5 --json   # the tables on stderr, one JSON object on stdout
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import * as sim from '../dist/sim/index.js';
import { median } from './stats.js';

const args = process.argv.slice(2);
const json = args.includes('--json');
const rounds = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 5);
if (!(rounds >= 1)) throw new Error(`rounds must be ≥ 1, got ${rounds}`);
const log = (line: string) => process.stderr.write(`${line}\n`);
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const scripts = {
  posts: here('./python/seed_models.py'),
  port: here('./python/reins_algorithms.py'),
  numpy: here('./python/reins_algorithms_numpy.py'),
  once: here('./sim-once.mjs'),
};

// How many standard errors two estimates may differ by (or an estimate and the exact value). At 4,
// a correct pair fails about once in 16,000 comparisons; a biased algorithm fails every run.
const TOLERANCE_SE = 4;
// The port, drawing reins's own stream, must match reins to rounding.
const PORT_TOLERANCE = 1e-12;
const PORT_TRIALS = 5_000;
const EXACT_CALLS = 200;
const EXACT_GOAL_MS = 10;
const WARM_CALLS = 5;
const Z95 = 1.959963984540054;

type Model = 'retry-inplace' | 'retry-restart' | 'cascade' | 'latency' | 'compaction' | 'timeout';
const models: [model: Model, source: string, trials: string][] = [
  ['retry-inplace', 'post-22', '200,000 runs'],
  ['retry-restart', 'post-22', '100,000 runs'],
  ['cascade', 'post-04', '200,000 × 2'],
  ['latency', 'post-10', '200,000 runs + steps'],
  ['compaction', 'post-11', '200,000 runs'],
  ['timeout', 'timeout post', '7 × 20,000 calls'],
];
const exactComputations: [key: string, label: string][] = [
  ['retry-inplace', 'retry in place (two moments)'],
  ['retry-restart', 'retry restart (Wald)'],
  ['retry-inplace-200', 'retry in place, 200 steps, cap 10'],
  ['cascade', 'cascade'],
  ['compaction', 'compaction'],
  ['timeout', 'timeout (curve + continuous optimum)'],
  ['latency', 'latency (closed-form step stats)'],
  ['quadratic', 'quadratic'],
  ['cache', 'cache'],
  ['digest-5000', 'digest (5,000 steps)'],
  ['axes', 'axes'],
  ['debug', 'debug'],
  ['amplification', 'amplification'],
  ['routing', 'routing'],
  ['loop-cost', 'loop-cost'],
];

const run = (command: string, argv: string[]): unknown =>
  JSON.parse(execFileSync(command, argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
const hasNumpy = (() => {
  try {
    execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// ---------------------------------------------------------------- what each contender computed

type Estimate = { value: number; ci95?: readonly [number, number] | undefined };
type Json = Record<string, unknown>;
const at = (value: unknown, ...path: (string | number)[]): unknown =>
  path.reduce<unknown>((node, key) => (node as Json | undefined)?.[key as string], value);
const num = (value: unknown, ...path: (string | number)[]): number => at(value, ...path) as number;
const interval = (value: unknown, ...path: (string | number)[]) =>
  at(value, ...path) as [number, number] | undefined;

/** The estimates in reins's result shape (reins and both ports print it), by quantity. */
function reinsEstimates(model: Model, value: unknown): Record<string, Estimate> {
  const flat = (key: string, ciKey: string) => ({ value: num(value, key), ci95: interval(value, ciKey) });
  switch (model) {
    case 'retry-inplace':
      return { meanCostUsd: flat('meanCostUsd', 'ci95'), gaveUpRate: flat('gaveUpRate', 'gaveUpRateCi95') };
    case 'retry-restart':
      return { meanCostUsd: flat('meanCostUsd', 'ci95') };
    case 'cascade':
      return {
        faultsPerRun: flat('faultsPerRun', 'faultsPerRunCi95'),
        contaminatedRate: flat('contaminatedRate', 'contaminatedRateCi95'),
        independentFaultsPerRun: flat('independentFaultsPerRun', 'independentFaultsPerRunCi95'),
      };
    case 'latency': {
      const out: Record<string, Estimate> = {};
      for (const part of ['step', 'run'])
        for (const stat of ['mean', 'p50', 'p95', 'p99'])
          out[`${part}.${stat}`] = {
            value: num(value, part, stat, 'value'),
            ci95: interval(value, part, stat, 'ci95'),
          };
      return out;
    }
    case 'compaction':
      return { survival: flat('survival', 'ci95') };
    case 'timeout': {
      const out: Record<string, Estimate> = {};
      for (const point of at(value, 'curve') as Json[])
        out[`cost@${point.timeoutSeconds}s`] = {
          value: point.monteCarloCostUsd as number,
          ci95: point.ci95 as [number, number],
        };
      return out;
    }
  }
}

/** The estimates in seed_models.py's shapes (tuples, as each post prints them). */
function postsEstimates(model: Model, value: unknown): Record<string, Estimate> {
  switch (model) {
    case 'retry-inplace':
      return { meanCostUsd: { value: num(value, 0) }, gaveUpRate: { value: num(value, 1) } };
    case 'retry-restart':
      return { meanCostUsd: { value: value as number } };
    case 'cascade':
      return {
        faultsPerRun: { value: num(value, 0) },
        contaminatedRate: { value: num(value, 1) },
        independentFaultsPerRun: { value: num(value, 2) },
      };
    case 'latency': {
      const out: Record<string, Estimate> = {};
      for (const part of ['step', 'run'])
        ['mean', 'p50', 'p95', 'p99'].forEach((stat, i) => {
          out[`${part}.${stat}`] = { value: num(value, part, i) };
        });
      return out;
    }
    case 'compaction':
      return { survival: { value: value as number } };
    case 'timeout': {
      const timeouts = sim.timeoutDefaults.timeouts;
      return Object.fromEntries(
        (value as number[]).map((cost, i) => [`cost@${timeouts[i]}s`, { value: cost }]),
      );
    }
  }
}

/** The exact values reins computes, where the model has them. */
function exactValues(model: Model): Record<string, number> {
  switch (model) {
    case 'retry-inplace': {
      const exact = sim.retryExact();
      return { meanCostUsd: exact.meanCostUsd, gaveUpRate: exact.gaveUpRate };
    }
    case 'retry-restart':
      return { meanCostUsd: sim.retryExact({ mode: 'restart' }).meanCostUsd };
    case 'cascade': {
      const exact = sim.cascadeExact();
      return {
        faultsPerRun: exact.faultsPerRun,
        contaminatedRate: exact.contaminatedRate,
        independentFaultsPerRun: exact.independentFaultsPerRun,
      };
    }
    case 'latency': {
      const exact = sim.latencyExact();
      return {
        'step.mean': exact.step.mean,
        'step.p50': exact.step.p50,
        'step.p95': exact.step.p95,
        'step.p99': exact.step.p99,
        ...(exact.runMean === undefined ? {} : { 'run.mean': exact.runMean }),
      };
    }
    case 'compaction':
      return { survival: sim.compactionExact().survival };
    case 'timeout':
      return Object.fromEntries(
        sim.timeoutExact().curve.map((point) => [`cost@${point.timeoutSeconds}s`, point.exactCostUsd]),
      );
  }
}

// ------------------------------------------------------------------------------ the port check

/** Largest relative difference over every number both results have at the same path. */
function largestDifference(a: unknown, b: unknown, path = ''): { relative: number; path: string } {
  if (typeof a === 'number' && typeof b === 'number') {
    const relative = a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    return { relative, path };
  }
  let worst = { relative: 0, path: '' };
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const key of Object.keys(a)) {
      if (!(key in b)) continue;
      const inner = largestDifference((a as Json)[key], (b as Json)[key], path ? `${path}.${key}` : key);
      if (inner.relative > worst.relative) worst = inner;
    }
  }
  return worst;
}

log(`port check: reins_algorithms.py with reins's generator, seed 1, ${PORT_TRIALS} trials, against reins`);
const portRun = run('python3', [
  scripts.port,
  '--rng',
  'mulberry32',
  '--seed',
  '1',
  '--trials',
  String(PORT_TRIALS),
]) as Record<Model, { value: unknown }>;
const portCheck = models.map(([model]) => {
  const reins = (
    run(process.execPath, [scripts.once, model, '--trials', String(PORT_TRIALS), '--seed', '1']) as Json
  ).value;
  const { relative, path } = largestDifference(reins, portRun[model].value);
  return { model, largestRelativeDifference: relative, at: path, agrees: relative <= PORT_TOLERANCE };
});

// ---------------------------------------------------------------------------------- the timings

type Contender = 'posts' | 'port' | 'numpy' | 'cold' | 'warm';
const contenders: Contender[] = ['posts', 'port', ...(hasNumpy ? (['numpy'] as const) : []), 'cold', 'warm'];

/** Medians over the rounds and the three ratios: total = algorithm × language. */
function timings(samplesMs: Record<Contender, number[]>) {
  const medianMs = Object.fromEntries(contenders.map((c) => [c, median(samplesMs[c])])) as Record<
    Contender,
    number
  >;
  return {
    samplesMs,
    medianMs,
    ratios: {
      total: medianMs.posts / medianMs.warm,
      algorithm: medianMs.posts / medianMs.port,
      language: medianMs.port / medianMs.warm,
      totalCold: medianMs.posts / medianMs.cold,
      ...(hasNumpy ? { numpyOverWarm: (medianMs.numpy as number) / medianMs.warm } : {}),
    },
  };
}

type Timing = { ms: number; cpuMs: number; value: unknown };
function timeOnce(contender: Contender, model: Model): Timing {
  if (contender === 'cold' || contender === 'warm') {
    return run(process.execPath, [
      scripts.once,
      model,
      ...(contender === 'warm' ? ['--warm', String(WARM_CALLS)] : []),
    ]) as Timing;
  }
  const out = run('python3', [scripts[contender], model]) as Record<
    string,
    { seconds: number; cpuSeconds: number; value: unknown }
  >;
  const result = out[model] as { seconds: number; cpuSeconds: number; value: unknown };
  return { ms: result.seconds * 1000, cpuMs: result.cpuSeconds * 1000, value: result.value };
}

const pythonVersion = execFileSync('python3', ['--version'], { encoding: 'utf8' }).trim();
const numpyVersion = hasNumpy
  ? execFileSync('python3', ['-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' }).trim()
  : undefined;
const loadBefore = loadavg();

const results = models.map(([model, source, trials]) => {
  const perContender = () =>
    Object.fromEntries(contenders.map((contender) => [contender, [] as number[]])) as Record<
      Contender,
      number[]
    >;
  const samples = perContender();
  const cpuSamples = perContender();
  const values: Partial<Record<Contender, unknown>> = {};
  for (let round = 0; round < rounds; round++) {
    // Rotate who goes first, so a slow patch of the machine does not always land on the same one.
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length] as Contender);
    for (const contender of order) {
      const { ms, cpuMs, value } = timeOnce(contender, model);
      samples[contender].push(ms);
      cpuSamples[contender].push(cpuMs);
      values[contender] ??= value;
    }
    log(
      `${model} round ${round + 1}/${rounds}: ${contenders.map((c) => `${c} ${samples[c].at(-1)?.toFixed(1)}`).join(', ')} ms`,
    );
  }

  // Agreement: every pair of estimates, and each against the exact value, within TOLERANCE_SE
  // standard errors. The standard error is reins's (from its 95 % interval): all four estimate the
  // same quantity from the same number of independent trials, so they share it.
  const reins = reinsEstimates(model, values.warm);
  const estimates: Record<string, Record<string, number>> = {
    reins: Object.fromEntries(Object.entries(reins).map(([key, estimate]) => [key, estimate.value])),
    posts: Object.fromEntries(
      Object.entries(postsEstimates(model, values.posts)).map(([key, estimate]) => [key, estimate.value]),
    ),
    port: Object.fromEntries(
      Object.entries(reinsEstimates(model, values.port)).map(([key, estimate]) => [key, estimate.value]),
    ),
    ...(hasNumpy
      ? {
          numpy: Object.fromEntries(
            Object.entries(reinsEstimates(model, values.numpy)).map(([key, estimate]) => [
              key,
              estimate.value,
            ]),
          ),
        }
      : {}),
  };
  const exact = exactValues(model);
  const comparisons: { quantity: string; a: string; b: string; difference: number; z: number }[] = [];
  for (const [quantity, estimate] of Object.entries(reins)) {
    const ci = estimate.ci95 as [number, number];
    const standardError = (ci[1] - ci[0]) / (2 * Z95);
    const names = Object.keys(estimates);
    for (let i = 0; i < names.length; i++) {
      const a = names[i] as string;
      const valueA = estimates[a]?.[quantity] as number;
      for (const b of names.slice(i + 1)) {
        const difference = valueA - (estimates[b]?.[quantity] as number);
        comparisons.push({
          quantity,
          a,
          b,
          difference,
          z: Math.abs(difference) / (Math.SQRT2 * standardError),
        });
      }
      if (quantity in exact) {
        const difference = valueA - (exact[quantity] as number);
        comparisons.push({ quantity, a, b: 'exact', difference, z: Math.abs(difference) / standardError });
      }
    }
  }
  const worst = comparisons.reduce((a, b) => (b.z > a.z || Number.isNaN(b.z) ? b : a));
  const agrees = comparisons.every((c) => c.z <= TOLERANCE_SE);
  return {
    model,
    source,
    trials,
    wall: timings(samples),
    cpu: timings(cpuSamples),
    agreement: { agrees, toleranceSe: TOLERANCE_SE, worst, estimates, exact, comparisons },
  };
});

// --------------------------------------------------------------------- the exact computations

const exact = exactComputations.map(([key, label]) => {
  const perProcess: {
    firstMs: number;
    medianMs: number;
    worstMs: number;
    worstCallCpuMs: number;
    worstCpuMs: number;
  }[] = [];
  for (let round = 0; round < rounds; round++) {
    const { ms, cpuMs } = run(process.execPath, [
      scripts.once,
      '--exact',
      key,
      '--calls',
      String(EXACT_CALLS),
    ]) as { ms: number[]; cpuMs: number[] };
    perProcess.push({
      firstMs: ms[0] as number,
      medianMs: median(ms),
      worstMs: Math.max(...ms),
      worstCallCpuMs: cpuMs[ms.indexOf(Math.max(...ms))] as number,
      worstCpuMs: Math.max(...cpuMs),
    });
  }
  const worstProcess = perProcess.reduce((a, b) => (b.worstMs > a.worstMs ? b : a));
  const worstMs = worstProcess.worstMs;
  return {
    key,
    label,
    calls: EXACT_CALLS,
    medianMs: median(perProcess.map((p) => p.medianMs)),
    firstMs: median(perProcess.map((p) => p.firstMs)),
    worstMedianMs: median(perProcess.map((p) => p.worstMs)),
    worstMs,
    // CPU time (every thread) of the slowest call: when it is far below its elapsed time, the call
    // was waiting for a core, not working.
    worstCallCpuMs: worstProcess.worstCallCpuMs,
    worstCpuMs: Math.max(...perProcess.map((p) => p.worstCpuMs)),
    meetsGoal: worstMs <= EXACT_GOAL_MS,
    perProcess,
  };
});

const loadAfter = loadavg();
const ok = results.every((r) => r.agreement.agrees) && portCheck.every((p) => p.agrees);
if (!ok) process.exitCode = 1;

// The tables go to stdout, or to stderr under --json (stdout then carries only the JSON object).
const print = json ? log : (line: string) => console.log(line);
const ms = (x: number) => (x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);
const times = (x: number) => (x >= 10 ? `${x.toFixed(0)}×` : `${x.toFixed(1)}×`);
print(
  `Monte Carlo models, median of ${rounds} rounds, each contender in its own process, one at a time; ` +
    `${pythonVersion}${numpyVersion ? `, NumPy ${numpyVersion}` : ''}, Node ${process.version}; ` +
    `load average ${loadBefore[0]?.toFixed(1)} → ${loadAfter[0]?.toFixed(1)}`,
);
// Elapsed time first; then CPU time, which does not count the time a contender sat waiting for
// one of this machine's shared cores (and does count, for Node, the compiler and GC threads that
// run beside the main one).
for (const clock of ['wall', 'cpu'] as const) {
  print(clock === 'wall' ? '\nElapsed time' : '\nCPU time (process, all threads)');
  const table = new Table({
    head: [
      'model',
      'trials',
      "posts' Python",
      'same alg. Python',
      ...(hasNumpy ? ['same alg. NumPy'] : []),
      'reins cold',
      'reins warm',
      'total',
      'algorithm',
      'language',
      `agree (≤ ${TOLERANCE_SE} SE)`,
    ],
    style: { head: [], border: [], compact: true },
  });
  for (const r of results) {
    const { medianMs, ratios } = r[clock];
    table.push([
      r.model,
      r.trials,
      ms(medianMs.posts),
      ms(medianMs.port),
      ...(hasNumpy ? [ms(medianMs.numpy as number)] : []),
      ms(medianMs.cold),
      ms(medianMs.warm),
      times(ratios.total),
      times(ratios.algorithm),
      times(ratios.language),
      `${r.agreement.agrees ? '✓' : '✗'} worst ${r.agreement.worst.z.toFixed(1)} SE`,
    ]);
  }
  print(table.toString());
}
print(
  "total = posts' Python ÷ reins warm = algorithm (posts' Python ÷ same-algorithm Python) × language " +
    '(same-algorithm Python ÷ reins warm).',
);
for (const r of results.filter((result) => !result.agreement.agrees)) {
  for (const c of r.agreement.comparisons.filter((comparison) => !(comparison.z <= TOLERANCE_SE)))
    print(
      `  ✗ ${r.model} ${c.quantity}: ${c.a} − ${c.b} = ${c.difference.toPrecision(3)} (${c.z.toFixed(1)} SE)`,
    );
}
print(
  `\nPort check (reins_algorithms.py drawing reins's mulberry32 stream, seed 1, ${PORT_TRIALS} trials): ` +
    portCheck
      .map((p) => `${p.model} ${p.agrees ? '✓' : '✗'} ${p.largestRelativeDifference.toExponential(0)}`)
      .join(', '),
);

const exactTable = new Table({
  head: [
    'exact computation',
    'median call',
    'first call',
    `worst of ${EXACT_CALLS} (median)`,
    `worst of ${EXACT_CALLS} (max)`,
    'its CPU',
    'worst CPU (max)',
    'goal',
  ],
  style: { head: [], border: [], compact: true },
});
for (const e of exact) {
  exactTable.push([
    e.label,
    `${(e.medianMs * 1000).toFixed(1)} µs`,
    `${e.firstMs.toFixed(2)} ms`,
    `${e.worstMedianMs.toFixed(2)} ms`,
    `${e.worstMs.toFixed(2)} ms`,
    `${e.worstCallCpuMs.toFixed(2)} ms`,
    `${e.worstCpuMs.toFixed(2)} ms`,
    e.meetsGoal
      ? `≤ ${EXACT_GOAL_MS} ms ✓`
      : e.worstCallCpuMs <= EXACT_GOAL_MS
        ? `✗ over ${EXACT_GOAL_MS} ms elapsed (waiting for a core)`
        : `✗ over ${EXACT_GOAL_MS} ms`,
  ]);
}
print(
  `\nExact computations: ${EXACT_CALLS} calls in a fresh process, the first included, ${rounds} processes each ` +
    "(median and max over the processes; 'its CPU': the CPU time of the slowest call)",
);
print(exactTable.toString());

if (json) {
  console.log(
    JSON.stringify(
      {
        rounds,
        environment: {
          python: pythonVersion,
          numpy: numpyVersion ?? null,
          node: process.version,
          loadAverageBefore: loadBefore,
          loadAverageAfter: loadAfter,
        },
        warmCalls: WARM_CALLS,
        portCheck: { trials: PORT_TRIALS, seed: 1, tolerance: PORT_TOLERANCE, models: portCheck },
        monteCarlo: results,
        exact: { goalMs: EXACT_GOAL_MS, calls: EXACT_CALLS, processes: rounds, computations: exact },
        ok,
      },
      null,
      2,
    ),
  );
}
