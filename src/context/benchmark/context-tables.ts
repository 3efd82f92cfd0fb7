import type { ContextBenchmarkFigures, RecallRow } from './context-benchmark.js';
import { needleParameters } from './needle-plan.js';

const usd = (value: number) => `$${value.toFixed(value >= 100 ? 2 : 4)}`;
const tokens = (value: number) => value.toLocaleString('en-US');
const percent = (value: number) => (Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '—');

/** A plain text table: the first column left-aligned, the rest right-aligned. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `  ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ')}`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The bill by run length: billed tokens, USD and the share of append-only's bill, per policy. */
export function billTable(figures: ContextBenchmarkFigures): string {
  const steps = [...new Set(figures.runs.map((row) => row.steps))].sort((a, b) => a - b);
  const policies = [...new Set(figures.runs.map((row) => row.policy))];
  const at = (policy: string, n: number) =>
    figures.runs.find((row) => row.policy === policy && row.steps === n);
  const rows = policies.map((policy) => [
    policy,
    ...steps.map((n) => {
      const row = at(policy, n);
      const base = at('append-only', n);
      if (!row) return '—';
      const share = base ? ` (${percent(row.costUsd / base.costUsd)})` : '';
      return `${usd(row.costUsd)}${share}`;
    }),
    Number.isFinite(figures.growthExponent[policy])
      ? (figures.growthExponent[policy] as number).toFixed(2)
      : '—',
  ]);
  const tokenRows = policies.map((policy) => [
    policy,
    ...steps.map((n) => {
      const row = at(policy, n);
      return row ? tokens(row.billedTokens) : '—';
    }),
    ...[''],
  ]);
  const last = steps[steps.length - 1] as number;
  const windows = policies.map((policy) => [
    policy,
    tokens(at(policy, steps[0] as number)?.lastPrefillTokens ?? 0),
    tokens(at(policy, last)?.lastPrefillTokens ?? 0),
  ]);
  return [
    'USD per run (share of append-only at the same length) and the growth exponent of billed tokens',
    textTable(['policy', ...steps.map((n) => `${tokens(n)} steps`), 'exponent'], rows),
    '',
    'Billed tokens per run (prefill + output; caching changes the price, not the count)',
    textTable(['policy', ...steps.map((n) => `${tokens(n)} steps`), ''], tokenRows),
    '',
    'Prefill of the last call (the window at the end)',
    textTable(['policy', `${tokens(steps[0] as number)} steps`, `${tokens(last)} steps`], windows),
  ].join('\n');
}

/** The bill cross-post's table through the loop, and the closed forms beside their printed figures. */
export function agreementTable(figures: ContextBenchmarkFigures): string {
  return [
    "The bill cross-post's model through the real loop and the simulated cache (SYS 4,000, OUT 300, RESULT 500)",
    textTable(
      ['N', 'naive', 'cached', 'savings', 'printed'],
      figures.crossPost.map((row) => [
        String(row.steps),
        usd(row.naiveUsd),
        usd(row.cachedUsd),
        percent(row.savings),
        row.printed,
      ]),
    ),
    '',
    "The seeds' closed forms beside their printed figures",
    textTable(
      ['model', 'N', 'printed', 'computed', 'agrees'],
      figures.agreements.map((row) => [
        row.source,
        tokens(row.steps),
        row.printed,
        row.computed,
        row.agrees ? 'yes' : 'NO',
      ]),
    ),
  ].join('\n');
}

/** Recall per policy (means over seeds), by kind of fact, and dead ends retried. */
export function recallTable(rows: readonly RecallRow[], title?: string): string {
  return [
    title ??
      `What compaction loses: ${needleParameters.steps} steps, facts planted at seeded steps, recall in the final window (mean over seeds)`,
    textTable(
      ['policy', 'recall', 'constraints', 'dead ends', 'ids', 'dead ends retried', 'recall calls', 'seeds'],
      rows.map((row) => [
        row.policy,
        percent(row.recall),
        percent(row.byKind.constraint),
        percent(row.byKind.dead_end),
        percent(row.byKind.id),
        `${row.deadEndRetries.toFixed(1)} of ${row.decisions}`,
        row.recalls.toFixed(1),
        String(row.seeds),
      ]),
    ),
  ].join('\n');
}

/** A quality bar of the issue, judged from the figures. */
export interface ContextBar {
  figure: string;
  shown: string;
  bar: string;
  /** undefined: no figure to judge (a part that did not run). */
  met: boolean | undefined;
}

/** The bars that the figures here decide (the overhead bar needs the child-process part). */
export function contextBars(
  figures: Pick<ContextBenchmarkFigures, 'runs' | 'growthExponent' | 'recall'>,
): ContextBar[] {
  const last = Math.max(...figures.runs.map((row) => row.steps));
  const at = (policy: string) => figures.runs.find((row) => row.policy === policy && row.steps === last);
  const append = at('append-only');
  const retrieval = at('cache-policy+retrieval');
  const share = append && retrieval ? retrieval.billedTokens / append.billedTokens : undefined;
  const exponent = figures.growthExponent['cache-policy+retrieval'];
  const row = (policy: string) => figures.recall.find((entry) => entry.policy === policy);
  const pinned = row('pinned+summarize');
  const pinnedShare = pinned ? Math.min(pinned.byKind.constraint, pinned.byKind.dead_end) : undefined;
  const summarize = row('summarize');
  const fifo = row('fifo');
  const judged = (value: number | undefined, test: (v: number) => boolean) =>
    value === undefined || !Number.isFinite(value) ? undefined : test(value);
  return [
    {
      figure: `retrieval's billed tokens ÷ append-only's at ${tokens(last)} steps`,
      shown: share === undefined ? '—' : percent(share),
      bar: '≤ 2 %',
      met: judged(share, (v) => v <= 0.02),
    },
    {
      figure: `retrieval's growth exponent (${'fit on ≥ 500 steps'})`,
      shown: exponent === undefined ? '—' : exponent.toFixed(2),
      bar: '≤ 1.1',
      met: judged(exponent, (v) => v <= 1.1),
    },
    {
      figure: 'pinned + summarize: pinned facts (constraints, dead ends) recalled',
      shown: pinnedShare === undefined ? '—' : percent(pinnedShare),
      bar: '100 %',
      met: judged(pinnedShare, (v) => v === 1),
    },
    {
      figure: 'summarize (structured digest): planted dead ends recalled',
      shown: summarize ? percent(summarize.byKind.dead_end) : '—',
      bar: '≥ 95 %',
      met: judged(summarize?.byKind.dead_end, (v) => v >= 0.95),
    },
    {
      figure: 'FIFO: planted dead ends recalled',
      shown: fifo ? percent(fifo.byKind.dead_end) : '—',
      bar: '< 50 %',
      met: judged(fifo?.byKind.dead_end, (v) => v < 0.5),
    },
  ];
}

export function barsTable(bars: readonly ContextBar[]): string {
  return [
    'Quality bars',
    textTable(
      ['figure', 'measured', 'bar', 'met'],
      bars.map((bar) => [
        bar.figure,
        bar.shown,
        bar.bar,
        bar.met === undefined ? 'no figure' : bar.met ? 'met' : 'NOT met',
      ]),
    ),
  ].join('\n');
}
