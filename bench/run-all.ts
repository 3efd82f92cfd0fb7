/**
 * `npm run bench`: every benchmark in turn, each writing its figures to `bench/results/NAME.json`,
 * then `bench/report.ts`, which prints one summary table and regenerates `docs/benchmarks.md` from
 * those files (no figure in that page is copied by hand). Benchmarks run one after another, never
 * two at once; each runs its contenders in child processes of its own.
 *
 *   npm run bench                          (everything: about 45 minutes on 2 cores)
 *   npm run bench -- --only loop,dispatch  (some; the others' last results stay and are reported)
 *   npm run bench:report                   (the summary and the page from the results on disk)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { option } from './stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const results = join(here, 'results');
const file = (name: string) => join(results, `${name}.json`);
const tsx = ['--import', 'tsx'];

/** Each benchmark: its command, and whether its JSON comes on stdout rather than into the file. */
const benches: { name: string; args: string[]; stdout?: boolean }[] = [
  { name: 'loop', args: [...tsx, 'bench/loop-overhead.ts', '--json', file('loop')] },
  { name: 'steps', args: [...tsx, 'bench/loop-steps.ts', '--json', file('steps')] },
  { name: 'dispatch', args: [...tsx, 'bench/dispatch-overhead.ts', '--json', file('dispatch')] },
  { name: 'heap', args: ['--expose-gc', ...tsx, 'bench/trace-heap.ts', '--json', file('heap')] },
  { name: 'sim', args: [...tsx, 'bench/sim.ts', '5', '--json'], stdout: true },
  { name: 'partial-json', args: [...tsx, 'bench/partial-json.ts', '--json', file('partial-json')] },
  { name: 'resilience', args: [...tsx, 'bench/resilience.ts', '--json', file('resilience')] },
  {
    name: 'transcript-index',
    args: [...tsx, 'bench/transcript-index.ts', '--json', file('transcript-index')],
  },
  { name: 'injection', args: ['dist/cli/reins.js', 'bench', 'injection', '--json'], stdout: true },
  { name: 'context', args: [...tsx, 'bench/context.ts', '--json', file('context')] },
  { name: 'eval', args: [...tsx, 'bench/eval-harness.ts', '--json', file('eval')] },
  { name: 'otel', args: [...tsx, 'bench/otel-overhead.ts', '--json', file('otel')] },
  { name: 'queue', args: [...tsx, 'bench/queue.ts', '--json', file('queue')] },
  {
    name: 'queue-pgboss',
    args: [...tsx, 'bench/queue.ts', '--engine', 'pgboss', '--json', file('queue-pgboss')],
  },
];

const only = option('only')?.split(',');
const unknown = only?.filter((name) => !benches.some((bench) => bench.name === name)) ?? [];
if (unknown.length > 0)
  throw new Error(`--only: no benchmark ${unknown.join(', ')} (${benches.map((b) => b.name).join(', ')})`);
mkdirSync(results, { recursive: true });
for (const bench of benches) {
  if (only && !only.includes(bench.name)) continue;
  process.stderr.write(`\n── ${bench.name}: node ${bench.args.join(' ')}\n`);
  const started = performance.now();
  const run = spawnSync(process.execPath, bench.args, {
    cwd: root,
    stdio: ['ignore', bench.stdout ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (run.status !== 0) throw new Error(`${bench.name} exited ${run.status}`);
  if (bench.stdout) {
    const text = run.stdout.trim();
    const json = JSON.parse(text.slice(text.indexOf('{')));
    writeFileSync(file(bench.name), `${JSON.stringify(json, null, 2)}\n`);
  }
  process.stderr.write(`── ${bench.name}: ${((performance.now() - started) / 1_000).toFixed(0)} s\n`);
}
const report = spawnSync(process.execPath, [...tsx, 'bench/report.ts'], { cwd: root, stdio: 'inherit' });
process.exit(report.status ?? 1);
