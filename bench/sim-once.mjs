// One measurement in a fresh process, for bench/sim.ts; prints one JSON line. Start-up and import
// are excluded, as the Python side excludes interpreter start-up.
//
//   node bench/sim-once.mjs <model> [--warm N] [--trials T --seed S]
//     One Monte Carlo model: N untimed calls first (0, "cold", by default), then one timed call.
//     Prints { ms, cpuMs, value }: the timed call's elapsed and CPU milliseconds (CPU of every
//     thread: V8's background compilers and GC helpers count), and its result.
//   node bench/sim-once.mjs --exact <name> [--calls N]
//     One exact computation called N times (200 by default), the first call included.
//     Prints { ms: [...], cpuMs: [...] }: every call's elapsed and CPU milliseconds, in order.
import * as sim from '../dist/sim/index.js';

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
    const startedCpu = process.cpuUsage();
    const started = performance.now();
    run();
    ms.push(performance.now() - started);
    const cpu = process.cpuUsage(startedCpu);
    cpuMs.push((cpu.user + cpu.system) / 1000);
  }
  console.log(JSON.stringify({ ms, cpuMs }));
} else {
  const run = monteCarlo[args[0]];
  if (!run) throw new Error(`no model ${args[0]}; one of ${Object.keys(monteCarlo).join(', ')}`);
  const options = {};
  if (args.includes('--trials')) options.trials = option('--trials');
  if (args.includes('--seed')) options.seed = option('--seed');
  for (let i = option('--warm', 0); i > 0; i--) run(options);
  const started = performance.now();
  const startedCpu = process.cpuUsage();
  const value = run(options);
  const ms = performance.now() - started;
  const cpu = process.cpuUsage(startedCpu);
  console.log(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, value }));
}
