import { escapeHtml } from './escape-html.js';
import type { Distribution, EvalReport, FailureClass } from './eval-types.js';
import { interval, milliseconds, percent, usd, whole } from './report-format.js';

/**
 * The lines a reader must see before any number: the judge's calibration warning and an eval that
 * stopped early. Empty when there is neither.
 */
export function renderReportBanner(report: EvalReport): string {
  const lines: string[] = [];
  const warning = report.judge?.warning;
  if (warning)
    lines.push(
      `<p class="banner warn" data-testid="judge-warning"><strong>Judge:</strong> ${escapeHtml(warning)}</p>`,
    );
  if (report.stopped) {
    const { budget, limit, actual } = report.stopped;
    const figure = budget === 'usd' ? usd : budget === 'wall_ms' ? milliseconds : whole;
    const left = ` ${escapeHtml(whole(report.stopped.skippedTrials ?? 0))} trial(s) never started, ${escapeHtml(whole(report.stopped.cancelledTrials ?? 0))} were cancelled in flight.`;
    lines.push(
      budget === 'signal'
        ? `<p class="banner bad" data-testid="stopped"><strong>Stopped early:</strong> the eval was cancelled; not every trial ran.${left}</p>`
        : `<p class="banner bad" data-testid="stopped"><strong>Stopped early:</strong> the ${escapeHtml(budget)} budget ran out ` +
            `(limit ${escapeHtml(figure(limit))}, spent ${escapeHtml(figure(actual))}); not every trial ran.${left}</p>`,
    );
  }
  return lines.join('\n');
}

/** One line naming the suite and how it was run. */
export function renderReportConfig(report: EvalReport): string {
  const { trials, k, concurrency, seed } = report.config;
  return (
    `<p class="hint" data-testid="eval-config">Suite ${escapeHtml(report.suite)}: ${escapeHtml(trials)} trials a case, k = ${escapeHtml(k)}, ` +
    `concurrency ${escapeHtml(concurrency)}, seed ${escapeHtml(seed)}.</p>`
  );
}

const distributionCells = (value: Distribution, format: (n: number) => string) =>
  [value.p50, value.p90, value.p99, value.max, value.mean]
    .map((n) => `<td>${escapeHtml(format(n))}</td>`)
    .join('');

/** Pass rate, pass@k and pass^k with their intervals, then cost, latency, steps and tokens by their tails. */
export function renderSummaryTable(report: EvalReport): string {
  const { summary, trajectory } = report;
  const k = escapeHtml(summary.k);
  const rate = (label: string, value: number | null, range: EvalReport['summary']['passRateCi95'] | null) =>
    `<tr><th scope="row">${label}</th><td>${escapeHtml(percent(value))}</td><td>${escapeHtml(interval(range))}</td></tr>`;
  const rates = [
    rate('Pass rate', summary.passRate, summary.passRateCi95),
    rate(`pass@${k} <span class="hint">(any of ${k} passes)</span>`, summary.passAtK, summary.passAtKCi95),
    rate(`pass^${k} <span class="hint">(all ${k} pass)</span>`, summary.passHatK, summary.passHatKCi95),
  ].join('');
  const spread = (label: string, value: Distribution, format: (n: number) => string) =>
    `<tr><th scope="row">${label}</th>${distributionCells(value, format)}</tr>`;
  return [
    '<div class="scroll"><table data-testid="summary-rates">',
    `<caption>${escapeHtml(whole(summary.trials))} trials, k = ${k}</caption>`,
    '<thead><tr><th scope="col">Measure</th><th scope="col">Value</th><th scope="col">95 % interval</th></tr></thead>',
    `<tbody>${rates}</tbody></table></div>`,
    '<div class="scroll"><table data-testid="summary-distributions">',
    '<caption>Per trial, by the tail</caption>',
    '<thead><tr><th scope="col">Per trial</th><th scope="col">p50</th><th scope="col">p90</th><th scope="col">p99</th><th scope="col">max</th><th scope="col">mean</th></tr></thead>',
    '<tbody>',
    spread('Cost', summary.cost, usd),
    spread('Latency', summary.latencyMs, milliseconds),
    spread('Steps', summary.steps, (n) => (Number.isInteger(n) ? whole(n) : n.toFixed(1))),
    spread('Billed tokens', summary.billedTokens, whole),
    '</tbody></table></div>',
    `<p class="hint" data-testid="trajectory">Tool-call validity ${escapeHtml(percent(trajectory.toolCallValidity))}, ` +
      `${escapeHtml(trajectory.meanWastedSteps.toFixed(2))} wasted steps a trial, ${escapeHtml(whole(trajectory.repeatedCalls))} repeated calls.</p>`,
  ].join('\n');
}

/** The failure classes of a count record, most frequent first: `looped 3, budget 1`. */
export function failureMixText(classes: Partial<Record<FailureClass, number>>): string {
  const entries = Object.entries(classes).filter(([, count]) => typeof count === 'number' && count > 0);
  entries.sort((a, b) => (b[1] as number) - (a[1] as number) || a[0].localeCompare(b[0]));
  return entries.map(([name, count]) => `${name} ${count}`).join(', ');
}

/** One row per case: trials, passes, pass rate, pass@k, pass^k and why the failures failed. */
export function renderCaseTable(report: EvalReport): string {
  const k = escapeHtml(report.summary.k);
  const rows = report.cases.map(
    (one) =>
      `<tr><th scope="row">${escapeHtml(one.id)}</th><td>${escapeHtml(whole(one.n))}</td><td>${escapeHtml(whole(one.passes))}</td>` +
      `<td>${escapeHtml(percent(one.passRate))}</td><td>${escapeHtml(percent(one.passAtK))}</td><td>${escapeHtml(percent(one.passHatK))}</td>` +
      `<td>${escapeHtml(failureMixText(one.failureClasses)) || '—'}</td></tr>`,
  );
  return [
    '<div class="scroll"><table data-testid="case-table">',
    `<caption>${escapeHtml(whole(report.cases.length))} cases</caption>`,
    `<thead><tr><th scope="col">Case</th><th scope="col">Trials</th><th scope="col">Passes</th><th scope="col">Pass rate</th><th scope="col">pass@${k}</th><th scope="col">pass^${k}</th><th scope="col">Failures</th></tr></thead>`,
    `<tbody>${rows.join('')}</tbody></table></div>`,
  ].join('\n');
}
