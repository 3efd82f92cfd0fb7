import { errorInfo } from '../errors/error-info.js';
import { renderTrace } from '../trace/render.js';
import { escapeHtml } from './escape-html.js';
import type { EvalReport, TrialRecord } from './eval-types.js';
import { milliseconds, usd } from './report-format.js';

/** The anchor of a trial's trace: by its place in `report.trials`, never by its (untrusted) case id. */
export const trialAnchor = (index: number) => `trial-${index}`;

/** The trace as `renderTrace` prints it, or why it could not be (a report file can hold anything). */
function traceText(trial: TrialRecord): string {
  if (!Array.isArray(trial.trace) || trial.trace.length === 0) return '(no trace kept)';
  try {
    return renderTrace(trial.trace);
  } catch (thrown) {
    return `(the trace could not be rendered: ${errorInfo(thrown).message})`;
  }
}

/**
 * Every failed trial: a table row linking to an anchor that holds its rendered trace, inside a
 * `<details>` so a long report stays scannable.
 */
export function renderFailedTrials(report: EvalReport): string {
  const failed = report.trials.map((trial, index) => ({ trial, index })).filter(({ trial }) => !trial.pass);
  if (failed.length === 0) return '<p data-testid="failed-trials">Every trial passed.</p>';
  const rows = failed.map(
    ({ trial, index }) =>
      `<tr><th scope="row"><a href="#${trialAnchor(index)}">${escapeHtml(trial.caseId)} #${escapeHtml(trial.trial)}</a></th>` +
      `<td>${escapeHtml(trial.failureClass ?? '—')}</td><td>${escapeHtml(trial.outcome?.kind ?? '—')}</td>` +
      `<td>${escapeHtml(usd(trial.costUsd))}</td><td>${escapeHtml(milliseconds(trial.latencyMs))}</td>` +
      `<td class="reason">${escapeHtml(trial.reason ?? '')}</td></tr>`,
  );
  const traces = failed.map(
    ({ trial, index }) =>
      `<details id="${trialAnchor(index)}" class="trace"><summary>${escapeHtml(trial.caseId)} #${escapeHtml(trial.trial)}: ` +
      `${escapeHtml(trial.failureClass ?? 'failed')} (seed ${escapeHtml(trial.seed)})</summary>` +
      `<pre>${escapeHtml(traceText(trial))}</pre></details>`,
  );
  return [
    '<div class="scroll"><table data-testid="failed-trials">',
    `<caption>${failed.length} failed trial${failed.length === 1 ? '' : 's'}: open one for its trace</caption>`,
    '<thead><tr><th scope="col">Trial</th><th scope="col">Class</th><th scope="col">Outcome</th><th scope="col">Cost</th><th scope="col">Latency</th><th scope="col">Why</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody></table></div>`,
    `<div data-testid="traces">${traces.join('\n')}</div>`,
  ].join('\n');
}
