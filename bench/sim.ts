/**
 * Simulators against the posts' own Python models: each Monte Carlo model at its post's trial
 * count, reins cold (first call in a fresh Node process) and warm (median in one process), the
 * Python model (bench/python/seed_models.py, written from each post's description) timed inside
 * the interpreter. Then every exact computation: median and worst of repeated calls.
 *
 *   npm run bench:sim            # 3 rounds
 *   npm run bench:sim -- 5       # 5 rounds
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import * as sim from '../dist/sim/index.js';
import { median } from './stats.js';

const rounds = Number(process.argv[2] ?? 3);
const python = fileURLToPath(new URL('./python/seed_models.py', import.meta.url));
const once = fileURLToPath(new URL('./sim-once.mjs', import.meta.url));

const models: [name: string, post: string, trials: string, warm: () => unknown][] = [
  ['retry-inplace', 'post-22', '200,000 runs', () => sim.retryMonteCarlo({ mode: 'inplace' })],
  ['retry-restart', 'post-22', '100,000 runs', () => sim.retryMonteCarlo({ mode: 'restart' })],
  ['cascade', 'post-04', '200,000 × 2', () => sim.cascadeMonteCarlo()],
  ['latency', 'post-10', '200,000 runs + steps', () => sim.latencyMonteCarlo()],
  ['compaction', 'post-11', '200,000 runs', () => sim.compactionMonteCarlo()],
  ['timeout', 'timeout post', '7 × 20,000 calls', () => sim.timeoutMonteCarlo()],
];

const pythonVersion = execFileSync('python3', ['--version'], { encoding: 'utf8' }).trim();
console.log(`Monte Carlo models, ${rounds} rounds (median); ${pythonVersion}, Node ${process.version}\n`);
const table = new Table({
  head: ['model', 'source', 'trials', 'Python', 'reins cold', 'reins warm', 'Python ÷ cold', 'Python ÷ warm'],
  style: { head: [], border: [], compact: true },
});
for (const [name, post, trials, warm] of models) {
  const pythonMs: number[] = [];
  const coldMs: number[] = [];
  const warmMs: number[] = [];
  warm();
  for (let round = 0; round < rounds; round++) {
    const out = JSON.parse(execFileSync('python3', [python, name], { encoding: 'utf8' }));
    pythonMs.push(out[name].seconds * 1000);
    coldMs.push(JSON.parse(execFileSync(process.execPath, [once, name], { encoding: 'utf8' })).ms);
    const started = performance.now();
    warm();
    warmMs.push(performance.now() - started);
  }
  const [p, c, w] = [median(pythonMs), median(coldMs), median(warmMs)];
  table.push([
    name,
    post,
    trials,
    `${p.toFixed(0)} ms`,
    `${c.toFixed(1)} ms`,
    `${w.toFixed(1)} ms`,
    `${(p / c).toFixed(0)}×`,
    `${(p / w).toFixed(0)}×`,
  ]);
}
console.log(table.toString());

const exact: [string, () => unknown][] = [
  ['retry in place (DP)', () => sim.retryExact()],
  ['retry restart (Wald)', () => sim.retryExact({ mode: 'restart' })],
  ['retry in place, 200 steps, cap 10', () => sim.retryExact({ steps: 200, retryCap: 10 })],
  ['cascade', () => sim.cascadeExact()],
  ['compaction', () => sim.compactionExact()],
  ['timeout (curve + continuous optimum)', () => sim.timeoutExact()],
  ['latency (closed-form step stats)', () => sim.latencyExact()],
  ['quadratic', () => sim.quadraticCost()],
  ['cache', () => sim.cacheCost()],
  ['digest (5,000 steps)', () => sim.digestCost({ steps: 5000 })],
  ['axes', () => sim.costAxes()],
  ['debug', () => sim.reproductionTax()],
  ['amplification', () => sim.retryAmplification()],
  ['routing', () => sim.routingCost()],
  ['loop-cost', () => sim.loopCost()],
];
const exactTable = new Table({
  head: ['exact computation', 'median', 'worst of 200', 'goal'],
  style: { head: [], border: [], compact: true },
});
for (const [name, run] of exact) {
  const samples: number[] = [];
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  const worst = Math.max(...samples);
  exactTable.push([
    name,
    `${(median(samples) * 1000).toFixed(1)} µs`,
    `${worst.toFixed(2)} ms`,
    worst < 10 ? '< 10 ms ✓' : '✗ over 10 ms',
  ]);
}
console.log(`\n${exactTable.toString()}`);
