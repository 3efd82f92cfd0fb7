// One Monte Carlo model, cold, in a fresh process: prints the milliseconds the call took (start-up
// and import excluded, as the Python side excludes interpreter start-up). Used by bench/sim.ts.
import * as sim from '../dist/sim/index.js';

const runs = {
  'retry-inplace': () => sim.retryMonteCarlo({ mode: 'inplace' }),
  'retry-restart': () => sim.retryMonteCarlo({ mode: 'restart' }),
  cascade: () => sim.cascadeMonteCarlo(),
  latency: () => sim.latencyMonteCarlo(),
  compaction: () => sim.compactionMonteCarlo(),
  timeout: () => sim.timeoutMonteCarlo(),
};
const name = process.argv[2];
const started = performance.now();
runs[name]();
console.log(JSON.stringify({ ms: performance.now() - started }));
