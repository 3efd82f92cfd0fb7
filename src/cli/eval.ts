import { readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import { importOptionalPeer } from '../errors/missing-peer.js';
import { ConfigurationError } from '../errors/reins-error.js';
import { compareEvals } from '../eval/compare-evals.js';
import type { EvalReport, EvalSuite } from '../eval/eval-types.js';
import { failureClasses } from '../eval/failure-class.js';
import { type ToolFault, toolFaults } from '../eval/fault-injection.js';
import { type FaultMatrixReport, runFaultMatrix } from '../eval/fault-matrix.js';
import { parseEvalReport } from '../eval/parse-eval-report.js';
import { renderEvalReportHtml } from '../eval/render-eval-html.js';
import { type RunEvalOptions, runEval } from '../eval/run-eval.js';
import { type RegressionOptions, runRegression } from '../eval/trace-cases.js';
import { readJsonlTrace } from '../node/jsonl-trace-sink.js';
import { SqliteEvalResultsStore } from '../sqlite/sqlite-eval-results-store.js';
import { sanitize } from './sanitize.js';

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
  /** Also run the fault matrix: these faults (all when empty), on these tools (all when unset). */
  faultMatrix?:
    | {
        faults: string[];
        tools?: string[] | undefined;
        rate?: number | undefined;
        atCall?: number | undefined;
      }
    | undefined;
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

/** Imports a user's module: JavaScript as it is, TypeScript through tsx's loader when tsx is installed. */
export async function importModule(file: string, what: string): Promise<Record<string, unknown>> {
  const path = isAbsolute(file) ? file : resolve(process.cwd(), file);
  const url = pathToFileURL(path).href;
  if (/\.[cm]?tsx?$/.test(path)) {
    const tsx = await importOptionalPeer('tsx', () => import('tsx/esm/api'));
    if (!tsx)
      throw new ConfigurationError(
        what,
        `${file} is TypeScript: install tsx (npm install -D tsx) or point reins at the compiled .js`,
      );
    return (await tsx.tsImport(url, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

/** Loads a suite file, which exports the suite as `default` or `suite` (and may export `evalOptions`). */
export async function loadSuite(
  file: string,
): Promise<{ suite: EvalSuite; options: Partial<RunEvalOptions> }> {
  const module = (await importModule(file, 'suite')) as SuiteModule;
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
  if (report.judge?.warning) lines.push(`WARNING: ${sanitize(report.judge.warning)}`);
  if (report.stopped)
    lines.push(
      report.stopped.budget === 'signal'
        ? `STOPPED: the eval was cancelled; ${report.summary.trials} trial(s) recorded, ${report.stopped.skippedTrials} never started, ${report.stopped.cancelledTrials} cancelled in flight`
        : `STOPPED: the eval's ${report.stopped.budget} budget ran out (${report.stopped.actual} of ${report.stopped.limit}); ${report.summary.trials} trial(s) recorded, ${report.stopped.skippedTrials} never started, ${report.stopped.cancelledTrials} cancelled in flight (they spent ${report.stopped.cancelledTokens} tokens, ${usd(report.stopped.cancelledUsd)}, not in the figures)`,
    );
  const { summary } = report;
  const head = new Table({
    head: ['suite', 'trials', 'pass rate [95 %: trials; by case]', `pass@${summary.k}`, `pass^${summary.k}`],
  });
  head.push([
    sanitize(report.suite),
    String(summary.trials),
    `${percent(summary.passRate)}${interval(summary.passRateCi95)};${interval(summary.passRateByCaseCi95)}`,
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
      sanitize(one.id),
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
  let faults: FaultMatrixReport | undefined;
  if (flags.faultMatrix) {
    const unknown = flags.faultMatrix.faults.filter(
      (fault) => !(toolFaults as readonly string[]).includes(fault),
    );
    if (unknown.length > 0)
      throw new ConfigurationError('--faults', `no fault ${unknown.join(', ')} (${toolFaults.join(', ')})`);
    const matrixOptions: Parameters<typeof runFaultMatrix>[1] = {
      run: { ...options, onTrial: () => {} },
      // The eval just run is the matrix's baseline: the same suite, seed and trials, not run twice.
      baseline: report,
      onCell: (cell, done, total) => {
        if (!flags.json && flags.progress && cell)
          process.stderr.write(`  fault matrix ${done}/${total}: ${cell.tool} × ${cell.fault}\n`);
      },
    };
    delete matrixOptions.run?.store;
    if (flags.faultMatrix.faults.length > 0) matrixOptions.faults = flags.faultMatrix.faults as ToolFault[];
    if (flags.faultMatrix.tools) matrixOptions.tools = flags.faultMatrix.tools;
    if (flags.faultMatrix.rate !== undefined) matrixOptions.rate = flags.faultMatrix.rate;
    if (flags.faultMatrix.atCall !== undefined) matrixOptions.atCall = flags.faultMatrix.atCall;
    faults = await runFaultMatrix(suite, matrixOptions);
  }
  if (flags.html) writeFileSync(flags.html, renderEvalReportHtml(report, faults ? { faults } : {}));
  if (flags.json) {
    const printed = flags.traces ? report : withoutTraces(report);
    console.log(JSON.stringify(faults ? { ...printed, faults } : printed, null, 2));
  } else {
    console.log(evalTables(report));
    if (faults) console.log(faultTable(faults));
    if (flags.html) console.log(`HTML report: ${flags.html}`);
  }
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

/** `reins eval regress`: what the configuration module exports. */
interface RegressionModule {
  default?: unknown;
  agent?: unknown;
  expect?: RegressionOptions['expect'];
  live?: boolean;
}

/**
 * `reins eval regress TRACE --agent FILE`: every recorded run in the trace replayed against the
 * configuration FILE exports (`agent(run, context)`, or a default export of it), tool results from
 * the recording. Exit 1 when any run's outcome kind changed, 2 for an unusable trace.
 */
export async function evalRegress(
  traceFile: string,
  agentFile: string,
  flags: { json: boolean; live: boolean; trials?: number },
): Promise<number> {
  const { events } = readJsonlTrace(traceFile);
  if (events.length === 0) {
    console.error(`reins eval regress: ${sanitize(traceFile)} holds no trace events`);
    return 2;
  }
  const module = (await importModule(agentFile, 'agent')) as RegressionModule;
  const agent = typeof module.agent === 'function' ? module.agent : module.default;
  if (typeof agent !== 'function')
    throw new ConfigurationError('agent', `${agentFile} exports no agent(run, context) function`);
  const options: Parameters<typeof runRegression>[1] = {
    agent: agent as RegressionOptions['agent'],
    live: flags.live || module.live === true,
    run: { trials: flags.trials ?? 1, k: 1 },
  };
  if (module.expect) options.expect = module.expect;
  const { report, diffs } = await runRegression(events, options);
  if (flags.json) console.log(JSON.stringify({ diffs, report: withoutTraces(report) }, null, 2));
  else {
    const table = new Table({ head: ['run', 'recorded', 'replayed', 'cost Δ', 'divergences'] });
    for (const diff of diffs)
      table.push([
        sanitize(diff.caseId),
        `${diff.recorded.outcome ?? '—'} · ${diff.recorded.steps} steps · ${usd(diff.recorded.costUsd)}`,
        diff.replayed.map((one) => `${one.outcome} · ${one.steps} steps`).join(', '),
        `${diff.costDeltaUsd >= 0 ? '+' : '−'}${usd(Math.abs(diff.costDeltaUsd))}`,
        sanitize(diff.divergences.flat().join('\n')),
      ]);
    console.log(table.toString());
    const changed = diffs.filter((diff) => diff.outcomeChanged).length;
    console.log(
      `${diffs.length} recorded run(s); ${changed} changed outcome; pass rate ${percent(report.summary.passRate)}`,
    );
  }
  return diffs.some((diff) => diff.outcomeChanged) ? 1 : 0;
}

/** The fault matrix as a table: recovery rate and cost multiplier per (tool, fault). */
export function faultTable(matrix: FaultMatrixReport): string {
  const faults = [...new Set(matrix.cells.map((cell) => cell.fault))];
  const tools = [...new Set(matrix.cells.map((cell) => cell.tool))];
  const table = new Table({ head: ['recovered (unfaulted) · cost ×', ...faults] });
  for (const tool of tools)
    table.push([
      sanitize(tool),
      ...faults.map((fault) => {
        const cell = matrix.cells.find((one) => one.tool === tool && one.fault === fault);
        if (!cell) return '';
        if (cell.recoveryRate === null) return 'untested';
        return `${percent(cell.recoveryRate)} (${percent(cell.baselinePassRateOnFaulted)}) · ${cell.costMultiplier === null ? '—' : cell.costMultiplier.toFixed(2)}×`;
      }),
    ]);
  return `Fault matrix: passes among the trials where the fault fired (the same trials unfaulted) · their cost over the same trials unfaulted; baseline pass rate ${percent(matrix.baseline.passRate)}\n${table.toString()}`;
}

/** `reins eval compare BASELINE CANDIDATE`: exit 0 within noise or better, 1 when the candidate passes less. */
export function evalCompare(baselineFile: string, candidateFile: string, json: boolean): number {
  const read = (file: string) => {
    const parsed = parseEvalReport(readFileSync(file, 'utf8'));
    if (!parsed.ok) throw new ConfigurationError('report', `${file}: ${parsed.error}`);
    return parsed.report;
  };
  const comparison = compareEvals(read(baselineFile), read(candidateFile));
  if (json) console.log(JSON.stringify(comparison, null, 2));
  else {
    console.log(comparison.verdict);
    const table = new Table({ head: ['case', 'n', 'baseline', 'candidate', 'change'] });
    for (const one of comparison.cases)
      table.push([
        sanitize(one.id),
        String(one.n),
        percent(one.baselinePassRate),
        percent(one.candidatePassRate),
        `${one.difference >= 0 ? '+' : '−'}${Math.abs(one.difference * 100).toFixed(1)}`,
      ]);
    console.log(table.toString());
    const ci = comparison.costUsd.differenceCi95;
    console.log(
      `cost per trial ${comparison.costUsd.meanDifference >= 0 ? '+' : '−'}${usd(Math.abs(comparison.costUsd.meanDifference))}${ci ? ` [${usd(ci[0])}, ${usd(ci[1])}]` : ''} · cost p99 ${usd(comparison.costP99.baseline)} → ${usd(comparison.costP99.candidate)} · latency p99 ${comparison.latencyP99Ms.baseline} → ${comparison.latencyP99Ms.candidate} ms · ${comparison.pairs} paired trials${comparison.unpaired > 0 ? `, ${comparison.unpaired} unpaired left out` : ''}`,
    );
  }
  return !comparison.withinNoise && comparison.passRate.difference < 0 ? 1 : 0;
}
