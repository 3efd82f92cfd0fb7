// One measurement in a fresh process, for bench/sim.ts; prints one JSON line. Start-up and import
// are excluded, as the Python side excludes interpreter start-up.
//
//   node bench/sim-once.mjs <model> [--warm N] [--trials T --seed S]
//     One Monte Carlo model: N untimed calls first (0, "cold", by default), then one timed call.
//     Prints { ms, cpuMs, value }: the timed call's elapsed and CPU milliseconds, and its
//     result.
//   node bench/sim-once.mjs --exact <name> [--calls N]
//     One exact computation called N times (200 by default), the first call included.
//     Prints { ms: [...], cpuMs: [...] }: every call's elapsed and CPU milliseconds, in order.
import * as sim from '../dist/sim/index.js';

// CPU time of the process in ms, every thread (V8's background compilers and GC helpers count),
// as Python's time.process_time() counts it. Node 20 has no per-thread clock, and Linux's
// /proc/thread-self/schedstat only moves at scheduler ticks.
const cpuMsNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

const monteCarlo = {
  'retry-inplace': (options) => sim.retryMonteCarlo({ mode: 'inplace' }, options),
  'retry-restart': (options) => sim.retryMonteCarlo({ mode: 'restart' }, options),
  cascade: (options) => sim.cascadeMonteCarlo({}, options),
  latency: (options) => sim.latencyMonteCarlo({}, options),
  compaction: (options) => sim.compactionMonteCarlo({}, options),
  timeout: (options) => sim.timeoutMonteCarlo({}, options),
};

const exact = {
  'retry-inplace': () => sim.retryExact(),
  'retry-restart': () => sim.retryExact({ mode: 'restart' }),
  'retry-inplace-200': () => sim.retryExact({ steps: 200, retryCap: 10 }),
  cascade: () => sim.cascadeExact(),
  compaction: () => sim.compactionExact(),
  timeout: () => sim.timeoutExact(),
  latency: () => sim.latencyExact(),
  quadratic: () => sim.quadraticCost(),
  cache: () => sim.cacheCost(),
  'digest-5000': () => sim.digestCost({ steps: 5000 }),
  axes: () => sim.costAxes(),
  debug: () => sim.reproductionTax(),
  amplification: () => sim.retryAmplification(),
  routing: () => sim.routingCost(),
  'loop-cost': () => sim.loopCost(),
};

const args = process.argv.slice(2);
const option = (flag, fallback) => {
  const at = args.indexOf(flag);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};

if (args[0] === '--exact') {
  const run = exact[args[1]];
  if (!run) throw new Error(`no exact computation ${args[1]}; one of ${Object.keys(exact).join(', ')}`);
  const ms = [];
  const cpuMs = [];
  for (let i = option('--calls', 200); i > 0; i--) {
    const startedCpu = cpuMsNow();
    const started = performance.now();
    run();
    ms.push(performance.now() - started);
    cpuMs.push(cpuMsNow() - startedCpu);
  }
  console.log(JSON.stringify({ ms, cpuMs }));
} else {
  const run = monteCarlo[args[0]];
  if (!run) throw new Error(`no model ${args[0]}; one of ${Object.keys(monteCarlo).join(', ')}`);
  const options = {};
  if (args.includes('--trials')) options.trials = option('--trials');
  if (args.includes('--seed')) options.seed = option('--seed');
  for (let i = option('--warm', 0); i > 0; i--) run(options);
  const startedCpu = cpuMsNow();
  const started = performance.now();
  const value = run(options);
  const ms = performance.now() - started;
  const cpuMs = cpuMsNow() - startedCpu;
  console.log(JSON.stringify({ ms, cpuMs, value }));
}
