/**
 * The benchmarks' summary and `docs/benchmarks.md`, generated from `bench/results/*.json` (what
 * `npm run bench` wrote). Prints one table: each figure the issues set a bar for, the measured
 * value, the bar, met or not. The page is `bench/benchmarks.template.md` with every
 * `<!-- table:NAME -->` line replaced by a table built here from the results, so no figure in it is
 * copied by hand. A missing results file is reported as missing, never filled in.
 *
 *   npm run bench:report        (or: npx tsx bench/report.ts [--check])
 *   --check: exit non-zero if docs/benchmarks.md differs from what the results make (CI-friendly)
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const page = join(here, '..', 'docs', 'benchmarks.md');
const template = join(here, 'benchmarks.template.md');

// biome-ignore lint/suspicious/noExplicitAny: results files are JSON read back; each reader checks what it uses
type Json = any;
function load(name: string): Json | undefined {
  const file = join(here, 'results', `${name}.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}
const results = {
  loop: load('loop'),
  steps: load('steps'),
  dispatch: load('dispatch'),
  heap: load('heap'),
  sim: load('sim'),
  partialJson: load('partial-json'),
  resilience: load('resilience'),
  injection: load('injection'),
  context: load('context'),
  eval: load('eval'),
  otel: load('otel'),
  queue: load('queue'),
  queuePgboss: load('queue-pgboss'),
};

const fixed = (value: number | undefined, digits = 1) =>
  value === undefined || !Number.isFinite(value)
    ? '—'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const percent = (value: number | undefined) => (value === undefined ? '—' : `${(value * 100).toFixed(1)} %`);
const kib = (bytes: number | undefined) => (bytes === undefined ? '—' : `${fixed(bytes / 1024)} KiB`);
const ratio = (value: number | undefined, digits = 2) =>
  value === undefined ? '—' : `${fixed(value, digits)}×`;

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

// ------------------------------------------------------------------------------------- figures
const loopRow = (contender: string, steps: number) =>
  results.loop?.rows.find((row: Json) => row.contender === contender && row.steps === steps);
const stepsRow = (config: string, steps: number) =>
  results.steps?.rows.find((row: Json) => row.config === config && row.steps === steps);
const dispatchCase = (name: string) => results.dispatch?.cases.find((entry: Json) => entry.case === name);

interface Bar {
  figure: string;
  measured: number | undefined;
  shown: string;
  bar: string;
  met: boolean | undefined;
  source: string;
}
const bar = (
  figure: string,
  measured: number | undefined,
  shown: string,
  barText: string,
  test: (value: number) => boolean,
  source: string,
): Bar => ({
  figure,
  measured,
  shown,
  bar: barText,
  met: measured === undefined || !Number.isFinite(measured) ? undefined : test(measured),
  source,
});

function bars(): Bar[] {
  const loop50 = stepsRow('loop', 50);
  const noStore50k = stepsRow('no-store', 50_000);
  const noTrace50 = stepsRow('no-trace', 50);
  const noTrace50k = stepsRow('no-trace', 50_000);
  const noStore5k = stepsRow('no-store', 5_000);
  const kept50 = stepsRow('kept-trace', 50);
  const kept50k = stepsRow('kept-trace', 50_000);
  const memory5k = stepsRow('memory-checkpoint', 5_000);
  const sqlite50 = stepsRow('sqlite-checkpoint', 50);
  const sqlite5k = stepsRow('sqlite-checkpoint', 5_000);
  const tainted = dispatchCase('tainted');
  const exactWorst = results.sim
    ? Math.max(...results.sim.exact.computations.map((entry: Json) => entry.worstMs))
    : undefined;
  const peers = [10, 50, 200, 1_000].map((steps) => {
    const reins = loopRow('reins', steps)?.usPerStep;
    const fastest = Math.min(
      ...['vercel', 'openai'].map((name) => loopRow(name, steps)?.usPerStep ?? Number.POSITIVE_INFINITY),
    );
    return reins === undefined || !Number.isFinite(fastest) ? undefined : reins / fastest;
  });
  const worstPeerRatio = peers.every((value) => value !== undefined)
    ? Math.max(...(peers as number[]))
    : undefined;
  const string1m = results.partialJson?.compare.find(
    (entry: Json) =>
      entry.workload.startsWith('one 1 MB string') && entry.contender.startsWith('reins, push +'),
  );
  return [
    bar(
      'loop, every control + memory trace, 50 steps, alone in its process',
      loop50?.usPerStep,
      `${fixed(loop50?.usPerStep)} µs/step`,
      '≤ 25 µs/step',
      (v) => v <= 25,
      'steps',
    ),
    bar(
      'heap allocated per step, same run',
      loop50?.allocBytesPerStep,
      kib(loop50?.allocBytesPerStep),
      '≤ 15 KB (14.6 KiB)',
      (v) => v <= 15_000,
      'steps',
    ),
    bar(
      'per-step cost, 50,000 ÷ 50 steps, no store, memory trace (holds every event)',
      noStore50k && loop50 ? noStore50k.usPerStep / loop50.usPerStep : undefined,
      ratio(noStore50k && loop50 ? noStore50k.usPerStep / loop50.usPerStep : undefined),
      'flat (≤ 1.3×)',
      (v) => v <= 1.3,
      'steps',
    ),
    bar(
      "per-step cost, 50,000 ÷ 50 steps, memory trace, every run's trace kept (the short runs' events survive too)",
      kept50k && kept50 ? kept50k.usPerStep / kept50.usPerStep : undefined,
      ratio(kept50k && kept50 ? kept50k.usPerStep / kept50.usPerStep : undefined),
      'flat (≤ 1.3×)',
      (v) => v <= 1.3,
      'steps',
    ),
    bar(
      'per-step cost, 50,000 ÷ 50 steps, no store and no trace (the loop alone)',
      noTrace50k && noTrace50 ? noTrace50k.usPerStep / noTrace50.usPerStep : undefined,
      ratio(noTrace50k && noTrace50 ? noTrace50k.usPerStep / noTrace50.usPerStep : undefined),
      'flat (≤ 1.3×)',
      (v) => v <= 1.3,
      'steps',
    ),
    bar(
      'memory checkpoint store, 5,000 steps ÷ no store',
      memory5k && noStore5k ? memory5k.usPerStep / noStore5k.usPerStep : undefined,
      ratio(memory5k && noStore5k ? memory5k.usPerStep / noStore5k.usPerStep : undefined),
      '≤ 2×',
      (v) => v <= 2,
      'steps',
    ),
    bar(
      'SQLite (durable) checkpoint, worst of 50 / 5,000 steps',
      sqlite50 && sqlite5k ? Math.max(sqlite50.usPerStep, sqlite5k.usPerStep) / 1_000 : undefined,
      `${fixed(sqlite50 ? sqlite50.usPerStep / 1_000 : undefined, 2)} / ${fixed(sqlite5k ? sqlite5k.usPerStep / 1_000 : undefined, 2)} ms/step`,
      '≤ 0.5 ms/step',
      (v) => v <= 0.5,
      'steps',
    ),
    bar(
      'SQLite per-step cost, 5,000 ÷ 50 steps',
      sqlite50 && sqlite5k ? sqlite5k.usPerStep / sqlite50.usPerStep : undefined,
      ratio(sqlite50 && sqlite5k ? sqlite5k.usPerStep / sqlite50.usPerStep : undefined),
      'flat (≤ 1.3×)',
      (v) => v <= 1.3,
      'steps',
    ),
    bar(
      'dispatch overhead, tainted ledger, 10-field schema',
      tainted?.overheadUs,
      `${fixed(tainted?.overheadUs)} µs/call`,
      '≤ 20 µs/call',
      (v) => v <= 20,
      'dispatch',
    ),
    bar(
      '10,000-step run, JSONL trace: heap retained after GC',
      results.heap?.retainedBytes,
      results.heap ? `${fixed(results.heap.retainedBytes / 1_048_576)} MB` : '—',
      '≤ 10 MB',
      (v) => v <= 10 * 1_048_576,
      'heap',
    ),
    bar(
      'same run, trace bytes per step (compact encoding)',
      results.heap?.compact?.bytesPerStep,
      results.heap?.compact ? `${fixed(results.heap.compact.bytesPerStep / 1_000, 2)} KB/step` : '—',
      '≤ 1.5 KB/step',
      (v) => v <= 1_500,
      'heap',
    ),
    bar(
      'exact simulator computations, worst of 200 (first call included)',
      exactWorst,
      `${fixed(exactWorst, 2)} ms`,
      '≤ 10 ms',
      (v) => v <= 10,
      'sim',
    ),
    bar(
      'reins ÷ fastest peer per step, worst over 10 / 50 / 200 / 1,000 steps',
      worstPeerRatio,
      ratio(worstPeerRatio),
      '≤ 1× (no slower while doing more)',
      (v) => v <= 1,
      'loop',
    ),
    bar(
      'partial JSON: one 1 MB string, 16 B pushes, snapshot each, ÷ JSON.parse',
      string1m?.ratio,
      ratio(string1m?.ratio, 1),
      '≤ 10×',
      (v) => v <= 10,
      'partial-json',
    ),
    ...contextReportBars(),
    ...otelBars(),
    bar(
      'eval harness: runEval ÷ the same 1,000 trials keeping the same traces, 4 in flight',
      results.eval?.overheadVsKept,
      results.eval ? evalBarText(results.eval) : '—',
      '≤ 5 %',
      (v) => v <= 0.05,
      'eval',
    ),
    bar(
      'prompt injection: attack success, recommended configuration',
      results.injection?.guarded.attackSuccessRate,
      percent(results.injection?.guarded.attackSuccessRate),
      '0 %',
      (v) => v === 0,
      'injection',
    ),
  ];
}

/** reins/otel's overhead bars: CPU time, the figure a shared machine does not swamp (wall time is in the table). */
function otelBars(): Bar[] {
  const row = (contender: string) => results.otel?.rows.find((entry: Json) => entry.contender === contender);
  const noop = row('otel-noop');
  const sdk = row('otel-sdk');
  const batch = row('otel-sdk-batch');
  const overhead = (value: number | undefined) =>
    value === undefined ? '—' : `${value >= 0 ? '+' : ''}${fixed(value * 100)} % CPU`;
  // Where the results have the SDK floor, the SDK rows say how much of their overhead is reins/otel's own.
  const withOwn = (entry: Json) =>
    entry?.ownCpuOverhead === undefined
      ? overhead(entry?.cpuOverhead)
      : `${overhead(entry.cpuOverhead)} (SDK floor ${fixed(row(entry.floor)?.cpuOverhead * 100)} %, reins/otel's own ${signedPercent(entry.ownCpuOverhead)})`;
  return [
    bar(
      'reins/otel, no-op API, 50 steps: overhead',
      noop?.cpuOverhead,
      overhead(noop?.cpuOverhead),
      '≤ 5 %',
      (v) => v <= 0.05,
      'otel',
    ),
    bar(
      'reins/otel, SDK + in-memory exporter (simple processor), 50 steps: overhead',
      sdk?.cpuOverhead,
      withOwn(sdk),
      '≤ 15 %',
      (v) => v <= 0.15,
      'otel',
    ),
    bar(
      'same, batch processor: overhead',
      batch?.cpuOverhead,
      withOwn(batch),
      '≤ 15 %',
      (v) => v <= 0.15,
      'otel',
    ),
  ];
}

function otelTable(): string {
  if (!results.otel) return '_No results: run `npm run bench -- --only otel`._';
  const floorRow = (name: string) => name === 'sdk-floor' || name === 'sdk-floor-batch';
  return table(
    [
      'contender',
      'wall µs/step',
      'CPU µs/step',
      'overhead, wall',
      'overhead, CPU',
      "reins/otel's own, CPU (over the SDK floor)",
      'wall min–max',
    ],
    results.otel.rows.map((row: Json) => {
      const walls = (row.samples ?? []).map((sample: Json) => sample.usPerStep);
      // A floor row's figures are shares of a reins step (what the SDK alone would add), not overheads.
      const share = (value: number) =>
        floorRow(row.contender) ? `${fixed(value * 100)} % of a step` : percent(value);
      return [
        row.label,
        fixed(row.usPerStep),
        fixed(row.cpuUsPerStep),
        row.contender === 'baseline' ? '' : share(row.wallOverhead),
        row.contender === 'baseline' ? '' : share(row.cpuOverhead),
        row.ownCpuOverhead === undefined
          ? ''
          : `${fixed(row.ownCpuUsPerStep)} µs/step (${signedPercent(row.ownCpuOverhead)})`,
        walls.length > 0 ? `${fixed(Math.min(...walls))}–${fixed(Math.max(...walls))}` : '—',
      ];
    }),
  );
}

/** The context benchmark's bars, judged here from its figures (not copied from its own verdicts). */
function contextReportBars(): Bar[] {
  const data = results.context;
  const runs: Json[] = data?.runs ?? [];
  const last = runs.length > 0 ? Math.max(...runs.map((row: Json) => row.steps)) : 2_000;
  const runAt = (policy: string) => runs.find((row: Json) => row.policy === policy && row.steps === last);
  const append = runAt('append-only');
  const retrieval = runAt('cache-policy+retrieval');
  const share = append && retrieval ? retrieval.billedTokens / append.billedTokens : undefined;
  const recallOf = (policy: string) => data?.details?.recall?.find((row: Json) => row.policy === policy);
  const pinned = recallOf('pinned+summarize');
  const overheadAt = (config: string) =>
    data?.overhead?.find((row: Json) => row.config === config && row.steps === 2_000)?.overheadUsPerStep;
  const worstOverhead = data?.overhead
    ? Math.max(
        ...data.overhead
          .filter(
            (row: Json) =>
              row.steps === 2_000 && row.overheadUsPerStep !== undefined && row.overheadUsPerStep !== null,
          )
          .map((row: Json) => row.overheadUsPerStep),
      )
    : undefined;
  return [
    bar(
      `context: retrieval's billed tokens ÷ append-only's, ${last.toLocaleString('en-US')} steps`,
      share,
      percent(share),
      '≤ 2 %',
      (v) => v <= 0.02,
      'context',
    ),
    bar(
      "context: retrieval's growth exponent (fit on ≥ 500 steps)",
      data?.growthExponent?.['cache-policy+retrieval'],
      fixed(data?.growthExponent?.['cache-policy+retrieval'], 2),
      '≤ 1.1',
      (v) => v <= 1.1,
      'context',
    ),
    bar(
      'context: pinned + summarize, pinned facts (constraints, dead ends) recalled',
      pinned ? Math.min(pinned.byKind.constraint, pinned.byKind.dead_end) : undefined,
      percent(pinned ? Math.min(pinned.byKind.constraint, pinned.byKind.dead_end) : undefined),
      '100 %',
      (v) => v === 1,
      'context',
    ),
    bar(
      'context: summarize (structured digest), planted dead ends recalled',
      recallOf('summarize')?.byKind.dead_end,
      percent(recallOf('summarize')?.byKind.dead_end),
      '≥ 95 %',
      (v) => v >= 0.95,
      'context',
    ),
    bar(
      'context: FIFO, planted dead ends recalled',
      recallOf('fifo')?.byKind.dead_end,
      percent(recallOf('fifo')?.byKind.dead_end),
      '< 50 %',
      (v) => v < 0.5,
      'context',
    ),
    ...queueBars(),
    bar(
      'context: policy overhead per step at 2,000 steps, worst policy',
      worstOverhead,
      `${fixed(worstOverhead)} µs/step (summarize ${fixed(overheadAt('summarize'))}, evict ${fixed(overheadAt('evict'))})`,
      '≤ 50 µs/step',
      (v) => v <= 50,
      'context',
    ),
  ];
}

const queueRow = (setup: string) => results.queue?.rows.find((row: Json) => row.setup === setup);

function queueBars(): Bar[] {
  const four = queueRow('4');
  const added = (setup: string) => queueRow(setup)?.addedP50Ms;
  // A lost or duplicated run in any setup fails both bars: a fast figure from broken runs is none.
  const clean = (results.queue?.rows ?? []).every((row: Json) => row.lost === 0 && row.duplicates === 0);
  return [
    bar(
      'queue: time added per run (p50) over the in-process run, 4 worker processes',
      four?.addedP50Ms,
      `${fixed(four?.addedP50Ms, 2)} ms (1 worker ${fixed(added('1'), 2)}, 8 workers ${fixed(added('8'), 2)})`,
      '≤ 5 ms (and 0 lost, 0 duplicated)',
      (v) => v <= 5 && clean,
      'queue',
    ),
    bar(
      'queue: 6-step runs per second, 4 worker processes',
      four?.throughputPerSecond,
      `${fixed(four?.throughputPerSecond)} runs/s`,
      '≥ 200 runs/s (and 0 lost, 0 duplicated)',
      (v) => v >= 200 && clean,
      'queue',
    ),
  ];
}

function queueTable(engine: 'bullmq' | 'pgboss' = 'bullmq'): string {
  const data = engine === 'pgboss' ? results.queuePgboss : results.queue;
  const store = engine === 'pgboss' ? 'PostgreSQL' : 'Redis';
  if (!data)
    return `_No results: run \`npm run bench -- --only ${engine === 'pgboss' ? 'queue-pgboss' : 'queue'}\`._`;
  return table(
    [
      'setup',
      'runs/s',
      'first event p50 / p99',
      'whole run p50 / p99',
      'added per run (p50)',
      `over ${store}-checkpointed in-process (p50)`,
      'lost',
      'duplicated',
    ],
    data.rows.map((row: Json) => [
      row.setup === 'in-process'
        ? 'in-process queue (1 process)'
        : row.setup === 'in-process-durable'
          ? `same, ${store} checkpoint every step`
          : `${row.setup} \`reins worker\` process${row.setup === '1' ? '' : 'es'}`,
      fixed(row.throughputPerSecond),
      `${fixed(row.firstEventP50Ms, 2)} / ${fixed(row.firstEventP99Ms, 2)} ms`,
      `${fixed(row.runP50Ms, 2)} / ${fixed(row.runP99Ms, 2)} ms`,
      row.setup === 'in-process' ? '—' : `${fixed(row.addedP50Ms, 2)} ms`,
      row.setup.startsWith('in-process') || row.addedOverDurableP50Ms === undefined
        ? '—'
        : `${fixed(row.addedOverDurableP50Ms, 2)} ms`,
      String(row.lost),
      String(row.duplicates),
    ]),
  );
}

// -------------------------------------------------------------------------------------- tables
function summaryTable(): string {
  return table(
    ['figure', 'measured', 'bar', 'met'],
    bars().map((entry) => [
      entry.figure,
      entry.shown,
      entry.bar,
      entry.met === undefined
        ? `no results (\`bench/results/${entry.source}.json\`)`
        : entry.met
          ? 'yes'
          : '**no**',
    ]),
  );
}

function loopTable(): string {
  if (!results.loop) return '_No results: run `npm run bench -- --only loop`._';
  const steps: number[] = [...new Set<number>(results.loop.rows.map((row: Json) => row.steps))].sort(
    (a, b) => a - b,
  );
  const contenders: string[] = [...new Set<string>(results.loop.rows.map((row: Json) => row.contender))];
  return table(
    ['contender', ...steps.map((n) => `${n.toLocaleString('en-US')} steps`), 'alloc/step at 50'],
    contenders.map((name) => {
      const label = results.loop.rows.find((row: Json) => row.contender === name)?.label ?? name;
      return [
        label,
        ...steps.map((n) => {
          const row = loopRow(name, n);
          return row ? `${fixed(row.usPerStep)} µs (${ratio(row.ratioToReins)})` : '—';
        }),
        kib(loopRow(name, 50)?.allocBytesPerStep),
      ];
    }),
  );
}

function stepsTable(): string {
  if (!results.steps) return '_No results: run `npm run bench -- --only steps`._';
  return table(
    ['configuration', 'steps', 'µs/step (median)', 'min – max', 'rounds × runs', '÷ no store', 'alloc/step'],
    results.steps.rows.map((row: Json) => [
      row.config,
      row.steps.toLocaleString('en-US'),
      fixed(row.usPerStep),
      `${fixed(row.min)} – ${fixed(row.max)}`,
      `${row.rounds} × ${row.runsPerRound}`,
      row.ratioToNoStore === undefined || row.ratioToNoStore === null ? '' : ratio(row.ratioToNoStore),
      row.allocBytesPerStep === undefined ? '' : kib(row.allocBytesPerStep),
    ]),
  );
}

function dispatchTable(): string {
  if (!results.dispatch) return '_No results: run `npm run bench -- --only dispatch`._';
  return table(
    ['case', 'µs/call', 'overhead over the direct call', 'min – max'],
    [
      ['direct call', fixed(results.dispatch.directUs, 2), '', ''],
      ...results.dispatch.cases.map((entry: Json) => [
        entry.case,
        fixed(entry.usPerCall, 2),
        `${fixed(entry.overheadUs, 2)} µs`,
        `${fixed(entry.min, 2)} – ${fixed(entry.max, 2)}`,
      ]),
    ],
  );
}

function heapTable(): string {
  const heap = results.heap;
  if (!heap) return '_No results: run `npm run bench -- --only heap`._';
  const rows = ['plain', 'compact'].flatMap((encoding) => {
    const entry = heap[encoding];
    return entry
      ? [
          [
            encoding,
            `${fixed(entry.bytes / 1_048_576)} MB`,
            `${fixed(entry.bytesPerStep / 1_000, 2)} KB`,
            ratio(entry.bytes / heap.transcriptBytes, 1),
          ],
        ]
      : [];
  });
  return [
    table(['trace encoding', 'file', 'per step', '÷ transcript JSON'], rows),
    '',
    table(
      ['steps', 'heap retained after GC', 'per step', 'transcript messages', 'wall'],
      [
        [
          heap.steps.toLocaleString('en-US'),
          `${fixed(heap.retainedBytes / 1_048_576)} MB`,
          `${fixed(heap.retainedBytes / heap.steps, 0)} B`,
          heap.messages.toLocaleString('en-US'),
          `${fixed(heap.elapsedMs / 1_000, 2)} s`,
        ],
      ],
    ),
  ].join('\n');
}

function simTable(): string {
  const sim = results.sim;
  if (!sim) return '_No results: run `npm run bench -- --only sim`._';
  const rows = sim.monteCarlo.map((entry: Json) => {
    const ms = entry.wall.medianMs;
    const ratios = entry.wall.ratios;
    return [
      entry.model,
      entry.trials.toLocaleString('en-US'),
      `${fixed(ms.posts)} ms`,
      `${fixed(ms.port)} ms`,
      `${fixed(ms.cold)} ms`,
      `${fixed(ms.warm)} ms`,
      ratio(ratios.total, 0),
      ratio(ratios.algorithm, 1),
      ratio(ratios.language, 0),
      entry.agreement.agrees ? `yes (worst ${fixed(entry.agreement.worst.z, 1)} SE)` : '**no**',
    ];
  });
  const exact = sim.exact.computations.map((entry: Json) => [
    entry.label,
    `${fixed(entry.firstMs, 2)} ms`,
    `${fixed(entry.medianMs * 1_000, 1)} µs`,
    `${fixed(entry.worstMs, 2)} ms`,
    `${fixed(entry.worstCallCpuMs, 2)} ms`,
  ]);
  return [
    table(
      [
        'model',
        'trials',
        "posts' Python",
        'same algorithm, Python',
        'reins cold',
        'reins warm',
        'total',
        'algorithm',
        'language',
        'estimates agree (≤ 4 SE)',
      ],
      rows,
    ),
    '',
    table(['exact computation', 'first call', 'median call', 'worst of 200', "worst call's CPU"], exact),
  ].join('\n');
}

function partialJsonTable(): string {
  const data = results.partialJson;
  if (!data) return '_No results: run `npm run bench -- --only partial-json`._';
  const workloads: string[] = [...new Set<string>(data.compare.map((entry: Json) => entry.workload))];
  const contenders: string[] = [
    ...new Set<string>(
      data.compare.filter((e: Json) => e.contender !== 'JSON.parse').map((e: Json) => e.contender),
    ),
  ];
  const compare = table(
    ['parser', ...workloads],
    [
      [
        'JSON.parse of the final text (ms)',
        ...workloads.map((w) =>
          fixed(data.compare.find((e: Json) => e.workload === w && e.contender === 'JSON.parse')?.ms, 2),
        ),
      ],
      ...contenders.map((name) => [
        name,
        ...workloads.map((w) => {
          const entry = data.compare.find((e: Json) => e.workload === w && e.contender === name);
          if (!entry) return '—';
          const cut = entry.cutBytes ? ` (${Math.round(entry.cutBytes / 1024)} KB cut)` : '';
          return `${ratio(entry.ratio, 1)}${cut}`;
        }),
      ]),
    ],
  );
  const shapes: string[] = [...new Set<string>(data.linearity.map((entry: Json) => entry.shape))];
  const sizes: number[] = [...new Set<number>(data.linearity.map((entry: Json) => entry.bytes))].sort(
    (a, b) => a - b,
  );
  const label = (bytes: number) =>
    bytes >= 1 << 20 ? `${Math.round(bytes / (1 << 20))} M` : `${Math.round(bytes / 1024)} K`;
  const linearity = table(
    ['shape, ns/byte', ...sizes.map(label), 'largest ÷ smallest'],
    shapes.map((shape) => {
      const cells = data.linearity.filter((entry: Json) => entry.shape === shape);
      const first = cells[0]?.nsPerByte;
      const last = cells.at(-1)?.nsPerByte;
      return [
        shape,
        ...cells.map((entry: Json) => fixed(entry.nsPerByte)),
        ratio(first && last ? last / first : undefined),
      ];
    }),
  );
  return [compare, '', linearity].join('\n');
}

function resilienceTable(): string {
  const data = results.resilience;
  if (!data) return '_No results: run `npm run bench -- --only resilience`._';
  return table(
    ['figure', 'measured', 'goal'],
    [
      ['in-process budget decisions', `${fixed(data.budgetDecisionsPerSecond / 1e6)} M/s`, '≥ 5 M/s'],
      ['`retry()` overhead around a first-try success', `${fixed(data.retryOverheadUs, 3)} µs`, '≤ 2 µs'],
      ['…with a budget attached', `${fixed(data.retryWithBudgetOverheadUs, 3)} µs`, ''],
      ['cockatiel 3 `retry(handleAll, …)`, same call', `${fixed(data.cockatielOverheadUs, 3)} µs`, ''],
      [
        'Redis-shared budget, 12 processes',
        `${Math.round(data.redisDecisionsPerSecond).toLocaleString('en-US')} decisions/s, over-grant ${data.redisOverGrant}`,
        '≥ 20,000/s, 0 over-grant',
      ],
    ],
  );
}

function injectionTable(): string {
  const data = results.injection;
  if (!data) return '_No results: run `npm run bench -- --only injection`._';
  const setups: [string, string][] = [
    ['unguarded', 'unguarded'],
    ['provenance', 'provenance rule only, deny'],
    ['policiesOnly', 'policies only, deny'],
    ['planOnly', 'plan only, deny'],
    ['guarded', 'recommended (policies + plan), ask'],
    ['guardedDeny', 'recommended, deny'],
  ];
  return table(
    [
      'setup',
      'attack success',
      'utility (no-person tasks)',
      'all tasks without a person',
      'under attack',
      'attacked runs',
    ],
    setups.map(([key, label]) => {
      const entry = data[key];
      return [
        label,
        percent(entry?.attackSuccessRate),
        percent(entry?.utility),
        percent(entry?.utilityAllTasks),
        percent(entry?.utilityUnderAttack),
        entry?.runs?.toLocaleString?.('en-US') ?? '—',
      ];
    }),
  );
}

const signedPercent = (value: number | undefined) =>
  value === undefined || !Number.isFinite(value)
    ? '—'
    : `${value >= 0 ? '+' : '−'}${fixed(Math.abs(value) * 100)} %`;
const intervalText = (interval: [number, number] | undefined) =>
  interval ? `95 % CI ${signedPercent(interval[0])}…${signedPercent(interval[1])}` : undefined;

/** The eval bar's figure: warm wall time, with its interval and the CPU figures where the results have them. */
function evalBarText(data: Json): string {
  const within = intervalText(data.overheadVsKeptInterval);
  const cpu = data.cpu?.overheadVsKept?.median;
  const thread = data.mainThreadCpu?.overheadVsKept?.median;
  const beside = [
    within,
    cpu === undefined ? undefined : `CPU ${signedPercent(cpu)}`,
    thread === undefined ? undefined : `main thread ${signedPercent(thread)}`,
    `${signedPercent(data.overheadVsBare)} over runs that keep no trace`,
  ].filter((part) => part !== undefined);
  return `${signedPercent(data.overheadVsKept)} (${beside.join('; ')})`;
}

function evalTable(): string {
  const data = results.eval;
  if (!data) return '_No results: run `npm run bench -- --only eval`._';
  const range = (name: string) =>
    data.samples[name]
      ? `${fixed(Math.min(...data.samples[name]))}–${fixed(Math.max(...data.samples[name]))}`
      : '—';
  const cpuOf = (field: string) => (data.cpu ? fixed(data.cpu[field]) : '—');
  const threadOf = (field: string) =>
    data.mainThreadCpu?.[field] === undefined || data.mainThreadCpu[field] === null
      ? '—'
      : fixed(data.mainThreadCpu[field]);
  const coldOf = (name: string) => (data.coldMs?.[name] === undefined ? '—' : fixed(data.coldMs[name]));
  const rows: string[][] = [
    [
      'bare `runAgent` pool',
      fixed(data.bareMs),
      range('bare'),
      cpuOf('bareMs'),
      threadOf('bareMs'),
      coldOf('bare'),
      '1.00×',
    ],
  ];
  if (data.bareWithTraceMs !== undefined && data.samples['bare+trace'])
    rows.push([
      'bare pool + memory trace per run, dropped after the run',
      fixed(data.bareWithTraceMs),
      range('bare+trace'),
      '—',
      '—',
      coldOf('bare+trace'),
      ratio(data.bareWithTraceMs / data.bareMs),
    ]);
  if (data.samples['bare+kept'])
    rows.push([
      'bare pool + every trace kept to the end',
      fixed(data.bareWithKeptTracesMs),
      range('bare+kept'),
      cpuOf('bareWithKeptTracesMs'),
      threadOf('bareWithKeptTracesMs'),
      coldOf('bare+kept'),
      ratio(data.bareWithKeptTracesMs / data.bareMs),
    ]);
  rows.push([
    '`runEval`',
    fixed(data.runEvalMs),
    range('runEval'),
    cpuOf('runEvalMs'),
    threadOf('runEvalMs'),
    coldOf('runEval'),
    ratio(data.runEvalMs / data.bareMs),
  ]);
  const method =
    data.timedEvals === undefined
      ? `Median of ${data.rounds} rounds (each child: one warm-up eval, then the median of 3).`
      : `${data.rounds} rounds; each child ${data.warmupEvals} warm-up evals, then the median of ${data.timedEvals} timed ones.`;
  const overheads =
    data.cpu === undefined
      ? ''
      : `\n\n\`runEval\` ÷ the pool keeping every trace (median of the per-round ratios, bootstrap 95 % interval over rounds): wall ${signedPercent(data.overheadVsKept)} (${intervalText(data.overheadVsKeptInterval) ?? '—'}), process CPU ${signedPercent(data.cpu.overheadVsKept?.median)} (${intervalText(data.cpu.overheadVsKept?.interval) ?? '—'}), main-thread CPU ${signedPercent(data.mainThreadCpu?.overheadVsKept?.median)} (${intervalText(data.mainThreadCpu?.overheadVsKept?.interval) ?? '—'}).`;
  return `${table(
    [
      'contender',
      `${data.trials.toLocaleString('en-US')} trials, ${data.timedEvals === undefined ? '' : 'warm '}wall (ms, median)`,
      'min–max over rounds',
      'process CPU (ms)',
      'main-thread CPU (ms)',
      'first eval, cold (ms)',
      '× bare',
    ],
    rows,
  )}\n\n${method}${overheads}`;
}

function contextTable(): string {
  const data = results.context;
  if (!data) return '_No results: run `npm run bench:context`._';
  const steps: number[] = [...new Set<number>(data.runs.map((row: Json) => row.steps))].sort((a, b) => a - b);
  const policies: string[] = [...new Set<string>(data.runs.map((row: Json) => row.policy))];
  const at = (policy: string, n: number) =>
    data.runs.find((row: Json) => row.policy === policy && row.steps === n);
  const bill = table(
    ['policy', ...steps.map((n) => `${n.toLocaleString('en-US')} steps`), 'exponent (≥ 500 steps)'],
    policies.map((policy) => [
      policy,
      ...steps.map((n) => {
        const row = at(policy, n);
        const base = at('append-only', n);
        return row
          ? `$${fixed(row.costUsd, row.costUsd >= 100 ? 0 : 2)} (${percent(base ? row.billedTokens / base.billedTokens : undefined)})`
          : '—';
      }),
      fixed(data.growthExponent[policy], 2),
    ]),
  );
  const recallRows: Json[] = [...(data.details?.recall ?? []), ...(data.details?.peers ?? [])];
  const recall = table(
    ['policy', 'recall', 'constraints', 'dead ends', 'ids', 'dead ends retried (of 6)'],
    recallRows.map((row: Json) => [
      row.policy,
      percent(row.recall),
      percent(row.byKind.constraint),
      percent(row.byKind.dead_end),
      percent(row.byKind.id),
      fixed(row.deadEndRetries, 1),
    ]),
  );
  const overheadSteps: number[] = [
    ...new Set<number>((data.overhead ?? []).map((row: Json) => row.steps)),
  ].sort((a, b) => a - b);
  const configs: string[] = [...new Set<string>((data.overhead ?? []).map((row: Json) => row.config))];
  const overhead = table(
    [
      'config',
      ...overheadSteps.map((n) => `${n.toLocaleString('en-US')} steps (µs/step)`),
      'policy overhead at 2,000',
    ],
    configs.map((config) => [
      config,
      ...overheadSteps.map((n) =>
        fixed(data.overhead.find((row: Json) => row.config === config && row.steps === n)?.usPerStep),
      ),
      (() => {
        const value = data.overhead.find(
          (row: Json) => row.config === config && row.steps === 2_000,
        )?.overheadUsPerStep;
        return value === undefined || value === null ? '' : `${fixed(value)} µs`;
      })(),
    ]),
  );
  const agreement = table(
    ['model', 'N', 'printed', 'computed'],
    [
      ...(data.details?.crossPost ?? []).map((row: Json) => [
        'bill cross-post through the loop',
        String(row.steps),
        row.printed,
        `naive $${fixed(row.naiveUsd, 4)}, cached $${fixed(row.cachedUsd, 4)}, ${percent(row.savings)}`,
      ]),
      ...(data.details?.agreements ?? []).map((row: Json) => [
        row.source,
        row.steps.toLocaleString('en-US'),
        row.printed,
        row.computed,
      ]),
    ],
  );
  return [
    "USD per run (billed tokens as a share of append-only's) by run length:",
    '',
    bill,
    '',
    'What compaction loses (means over seeds), reins policies then the peers:',
    '',
    recall,
    '',
    'Overhead per step, the loop with each policy and without:',
    '',
    overhead,
    '',
    "The seeds' arithmetic reproduced:",
    '',
    agreement,
    '',
    '![bill against run length](../bench/results/context.svg)',
  ].join('\n');
}

function metaTable(): string {
  const rows = Object.entries(results).map(([name, data]) => {
    const meta = data?.meta ?? data?.environment;
    return [
      name,
      data ? (meta?.commit ?? '—') : 'missing',
      meta?.measuredAt?.slice(0, 16).replace('T', ' ') ?? '—',
      meta?.node ?? '—',
      meta?.loadAverage
        ? meta.loadAverage.join(' / ')
        : meta?.loadAverageBefore
          ? String(meta.loadAverageBefore)
          : '—',
    ];
  });
  return table(['results file', 'commit', 'measured (UTC)', 'Node', 'load average (1 / 5 / 15 min)'], rows);
}

const tables: Record<string, () => string> = {
  summary: summaryTable,
  loop: loopTable,
  steps: stepsTable,
  dispatch: dispatchTable,
  heap: heapTable,
  sim: simTable,
  'partial-json': partialJsonTable,
  resilience: resilienceTable,
  injection: injectionTable,
  context: contextTable,
  eval: evalTable,
  otel: otelTable,
  queue: () => queueTable('bullmq'),
  'queue-pgboss': () => queueTable('pgboss'),
  meta: metaTable,
};

// ---------------------------------------------------------------------------------------- output
const generated = readFileSync(template, 'utf8').replace(
  /^<!-- table:([a-z-]+) -->$/gm,
  (_line, name: string) => {
    const make = tables[name];
    if (!make) throw new Error(`benchmarks.template.md names no known table: ${name}`);
    return make();
  },
);
const header =
  '<!-- Generated by `npm run bench:report` from bench/results/*.json and bench/benchmarks.template.md: edit those, not this page. -->\n\n';
const text = header + generated;

console.log('\nreins benchmarks: every figure with a bar (from bench/results/*.json)\n');
const summary = bars();
const width = Math.max(...summary.map((entry) => entry.figure.length));
for (const entry of summary)
  console.log(
    `  ${entry.figure.padEnd(width)}  ${entry.shown.padStart(22)}  ${entry.bar.padEnd(34)} ${entry.met === undefined ? 'no results' : entry.met ? 'met' : 'NOT met'}`,
  );

if (process.argv.includes('--check')) {
  const current = existsSync(page) ? readFileSync(page, 'utf8') : '';
  if (current !== text) {
    console.error('\ndocs/benchmarks.md is not what bench/results make: run npm run bench:report');
    process.exit(1);
  }
} else {
  writeFileSync(page, text);
  console.log(`\nwrote ${page}`);
}
