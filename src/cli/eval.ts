import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { importOptionalPeer } from '../errors/missing-peer.js';
import { ConfigurationError } from '../errors/reins-error.js';
import type { EvalReport, EvalSuite } from '../eval/eval-types.js';
import { failureClasses } from '../eval/failure-class.js';
import { type RunEvalOptions, runEval } from '../eval/run-eval.js';
import { SqliteEvalResultsStore } from '../sqlite/sqlite-eval-results-store.js';

/** What `reins eval run` takes. */
export interface EvalRunFlags {
  trials?: number;
  k?: number;
  concurrency?: number;
  seed?: number;
  results?: string;
  budgetUsd?: number;
  budgetTokens?: number;
  budgetWallMs?: number;
  cases?: string[];
  json: boolean;
  html?: string;
  minPassRate?: number;
  progress: boolean;
  /** Keep each trial's trace in the JSON. */
  traces: boolean;
}

/** The report with each trial's trace left out (they are most of its size). */
export function withoutTraces(report: EvalReport): EvalReport {
  return { ...report, trials: report.trials.map((trial) => ({ ...trial, trace: [] })) };
}

/** What a suite file may export beside the suite: eval options it always wants (a judge's summary, say). */
interface SuiteModule {
  default?: unknown;
  suite?: unknown;
  evalOptions?: Partial<RunEvalOptions>;
}

function isSuite(value: unknown): value is EvalSuite {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as EvalSuite).cases) &&
    typeof (value as EvalSuite).agent === 'function'
  );
}

/**
 * Loads a suite file: JavaScript as it is, TypeScript through tsx's loader when tsx is installed.
 * The file exports the suite as `default` or `suite`.
 */
export async function loadSuite(
  file: string,
): Promise<{ suite: EvalSuite; options: Partial<RunEvalOptions> }> {
  const path = isAbsolute(file) ? file : resolve(process.cwd(), file);
  const url = pathToFileURL(path).href;
  let module: SuiteModule;
  if (/\.[cm]?tsx?$/.test(path)) {
    const tsx = await importOptionalPeer('tsx', () => import('tsx/esm/api'));
    if (!tsx)
      throw new ConfigurationError(
        'suite',
        `${file} is TypeScript: install tsx (npm install -D tsx) or point reins at the compiled .js`,
      );
    module = (await tsx.tsImport(url, import.meta.url)) as SuiteModule;
  } else module = (await import(url)) as SuiteModule;
  const suite = isSuite(module.suite) ? module.suite : isSuite(module.default) ? module.default : undefined;
  if (!suite)
    throw new ConfigurationError(
      'suite',
      `${file} exports no suite: export default (or export const suite) { name, cases, agent }`,
    );
  return { suite, options: module.evalOptions ?? {} };
}

const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)} %`);
const interval = (value: [number, number] | null) =>
  value === null ? '' : ` [${(value[0] * 100).toFixed(1)}, ${(value[1] * 100).toFixed(1)}]`;
const usd = (value: number) => `$${value < 0.01 ? value.toFixed(5) : value.toFixed(4)}`;

/** The report as tables, the judge's warning (if any) on the first line. */
export function evalTables(report: EvalReport): string {
  const lines: string[] = [];
  if (report.judge?.warning) lines.push(`WARNING: ${report.judge.warning}`);
  if (report.stopped)
    lines.push(
      `STOPPED: the eval's ${report.stopped.budget} budget ran out (${report.stopped.actual} of ${report.stopped.limit}); ${report.summary.trials} trial(s) recorded`,
    );
  const { summary } = report;
  const head = new Table({
    head: ['suite', 'trials', 'pass rate [95 %]', `pass@${summary.k}`, `pass^${summary.k}`],
  });
  head.push([
    report.suite,
    String(summary.trials),
    `${percent(summary.passRate)}${interval(summary.passRateCi95)}`,
    `${percent(summary.passAtK)}${interval(summary.passAtKCi95)}`,
    `${percent(summary.passHatK)}${interval(summary.passHatKCi95)}`,
  ]);
  lines.push(head.toString());
  const dist = new Table({ head: ['', 'p50', 'p90', 'p99', 'max'] });
  dist.push(
    ['cost', usd(summary.cost.p50), usd(summary.cost.p90), usd(summary.cost.p99), usd(summary.cost.max)],
    [
      'latency ms',
      ...[summary.latencyMs.p50, summary.latencyMs.p90, summary.latencyMs.p99, summary.latencyMs.max].map(
        String,
      ),
    ],
    ['steps', ...[summary.steps.p50, summary.steps.p90, summary.steps.p99, summary.steps.max].map(String)],
  );
  lines.push(dist.toString());
  const cases = new Table({
    head: ['case', 'n', 'passes', `pass@${summary.k}`, `pass^${summary.k}`, 'failures'],
  });
  for (const one of report.cases)
    cases.push([
      one.id,
      String(one.n),
      String(one.passes),
      percent(one.passAtK),
      percent(one.passHatK),
      Object.entries(one.failureClasses)
        .map(([name, count]) => `${name} ${count}`)
        .join(', '),
    ]);
  lines.push(cases.toString());
  const failed = summary.trials - Math.round(summary.passRate * summary.trials);
  if (failed > 0) {
    const mix = new Table({ head: ['failure class', 'trials', 'share of failures'] });
    for (const name of failureClasses) {
      const count = report.failureClasses[name];
      if (count) mix.push([name, String(count), percent(count / failed)]);
    }
    lines.push(mix.toString());
  }
  const t = report.trajectory;
  lines.push(
    `tool-call validity ${percent(t.toolCallValidity)} · repeated calls ${t.repeatedCalls} · wasted steps per trial ${t.meanWastedSteps.toFixed(2)}`,
  );
  return lines.join('\n');
}

/** `reins eval run FILE`: exit 0, or 1 when the pass rate is under `--min-pass-rate` or the budget stopped the eval. */
export async function evalRun(file: string, flags: EvalRunFlags): Promise<number> {
  const { suite, options: fromFile } = await loadSuite(file);
  const store = flags.results ? new SqliteEvalResultsStore({ database: flags.results }) : undefined;
  const budget: NonNullable<RunEvalOptions['budget']> = { ...fromFile.budget };
  if (flags.budgetUsd !== undefined) budget.usd = flags.budgetUsd;
  if (flags.budgetTokens !== undefined) budget.tokens = flags.budgetTokens;
  if (flags.budgetWallMs !== undefined) budget.wallMs = flags.budgetWallMs;
  const options: RunEvalOptions = { ...fromFile, budget };
  if (flags.trials !== undefined) options.trials = flags.trials;
  if (flags.k !== undefined) options.k = flags.k;
  if (flags.concurrency !== undefined) options.concurrency = flags.concurrency;
  if (flags.seed !== undefined) options.seed = flags.seed;
  if (flags.cases && flags.cases.length > 0) options.cases = flags.cases;
  if (store) options.store = store;
  const bar =
    flags.progress && !flags.json && process.stderr.isTTY
      ? new cliProgress.SingleBar(
          {
            format: 'trials {bar} {value}/{total} · failed {failed}',
            stream: process.stderr,
            hideCursor: true,
          },
          cliProgress.Presets.shades_classic,
        )
      : undefined;
  let failedSoFar = 0;
  let barStarted = false;
  options.onTrial = (record, done, total) => {
    if (!record.pass) failedSoFar++;
    if (!bar) return;
    if (!barStarted) {
      bar.start(total, done, { failed: failedSoFar });
      barStarted = true;
    }
    bar.update(done, { failed: failedSoFar });
  };
  let report: EvalReport;
  try {
    report = await runEval(suite, options);
  } finally {
    if (barStarted) bar?.stop();
    store?.close();
  }
  if (flags.json) console.log(JSON.stringify(flags.traces ? report : withoutTraces(report), null, 2));
  else console.log(evalTables(report));
  if (report.stopped) return 1;
  if (flags.minPassRate !== undefined && report.summary.passRate < flags.minPassRate) {
    if (!flags.json)
      console.error(
        `pass rate ${percent(report.summary.passRate)} is under --min-pass-rate ${percent(flags.minPassRate)}`,
      );
    return 1;
  }
  return 0;
}
