/**
 * The job queue's cost (issue: agents behind a job queue): `reins bench queue --json` run in
 * rounds, each a fresh set of processes, the figures the medians over rounds. One round: 6-step
 * scripted runs (0-latency model) with a Redis checkpoint every step; per configuration (in-process
 * queue, then 1, 4 and 8 `reins worker` processes) an untimed warm-up of 400 runs per process, 400
 * runs enqueued at once for throughput, then 100 runs one at a time on idle workers for latency:
 * from just before `enqueue` to a follower of the run's events (subscribed beforehand) receiving
 * its first and its `run-end` event. The overhead is the queue's run p50 less the in-process one.
 * Needs Redis on loopback (REINS_REDIS_URL) and a built dist/.
 *
 *   npm run bench -- --only queue   (or: npx tsx bench/queue.ts [--rounds 5] [--json FILE])
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { benchMeta, median, option } from './stats.js';

// Five, as every other benchmark here: three let one slow round of a swinging machine move the median.
const rounds = Number(option('rounds') ?? 5);
// `--engine pgboss`: pg-boss on PostgreSQL (records, traces and checkpoints there) instead of BullMQ.
const engine = option('engine') ?? 'bullmq';
const bin = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url));
const redis = process.env['REINS_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

interface Figures {
  throughputPerSecond: number;
  firstEventMs: { p50: number; p99: number };
  runMs: { p50: number; p99: number };
  lost: number;
  duplicates: number;
}
interface Report {
  inProcess: Figures;
  /** The same in-process runs with Redis checkpoints (absent in reports from before it was measured). */
  inProcessDurable?: Figures;
  byWorkers: Record<string, Figures & { resumed: number }>;
}

const reports: Report[] = [];
for (let round = 0; round < rounds; round++) {
  const text = execFileSync(
    process.execPath,
    [bin, 'bench', 'queue', '--json', '--redis', redis, '--engine', engine],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const report = JSON.parse(text) as Report;
  reports.push(report);
  const four = report.byWorkers['4'];
  process.stderr.write(
    `  round ${round + 1}/${rounds}: in-process run p50 ${report.inProcess.runMs.p50} ms; 4 workers ${four?.throughputPerSecond} runs/s, run p50 ${four?.runMs.p50} ms\n`,
  );
}

const setups = ['in-process', 'in-process-durable', ...Object.keys(reports[0]?.byWorkers ?? {})];
const figuresOf = (report: Report, setup: string): Figures | undefined =>
  setup === 'in-process'
    ? report.inProcess
    : setup === 'in-process-durable'
      ? report.inProcessDurable
      : report.byWorkers[setup];
const inProcessSetup = (setup: string) => setup.startsWith('in-process');
const rows = setups.map((setup) => {
  const all = reports.map((report) => figuresOf(report, setup)).filter((f): f is Figures => f !== undefined);
  return {
    setup,
    throughputPerSecond: median(all.map((f) => f.throughputPerSecond)),
    firstEventP50Ms: median(all.map((f) => f.firstEventMs.p50)),
    firstEventP99Ms: median(all.map((f) => f.firstEventMs.p99)),
    runP50Ms: median(all.map((f) => f.runMs.p50)),
    runP99Ms: median(all.map((f) => f.runMs.p99)),
    addedP50Ms: median(
      reports.map(
        (report) => (figuresOf(report, setup)?.runMs.p50 ?? Number.NaN) - report.inProcess.runMs.p50,
      ),
    ),
    // Over the same in-process runs with Redis checkpoints: the queue's own cost.
    addedOverDurableP50Ms: median(
      reports.map(
        (report) =>
          (figuresOf(report, setup)?.runMs.p50 ?? Number.NaN) -
          (report.inProcessDurable?.runMs.p50 ?? Number.NaN),
      ),
    ),
    lost: all.reduce((sum, f) => sum + f.lost, 0),
    duplicates: all.reduce((sum, f) => sum + f.duplicates, 0),
  };
});

console.log(`\nQueue benchmark, median of ${rounds} rounds (${redis})`);
for (const row of rows)
  console.log(
    `  ${row.setup.padEnd(18)} ${row.throughputPerSecond.toFixed(1).padStart(8)} runs/s  first event p50 ${row.firstEventP50Ms.toFixed(2)} ms  run p50 ${row.runP50Ms.toFixed(2)} ms (p99 ${row.runP99Ms.toFixed(2)})  added p50 ${row.setup === 'in-process' ? '—' : `${row.addedP50Ms.toFixed(2)} ms`}  over durable ${inProcessSetup(row.setup) ? '—' : `${row.addedOverDurableP50Ms.toFixed(2)} ms`}  lost ${row.lost} dup ${row.duplicates}`,
  );

const json = option('json');
if (json)
  writeFileSync(
    json,
    `${JSON.stringify({ meta: benchMeta({ rounds, stepsPerRun: 6, warmupRunsPerProcess: 400 }), rows, rounds: reports }, null, 2)}\n`,
  );
