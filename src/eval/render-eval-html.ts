import { escapeHtml } from './escape-html.js';
import type { EvalReport } from './eval-types.js';
import type { FaultMatrixReport } from './fault-matrix.js';
import { renderCostHistogramSvg, renderFailureMixSvg, renderFaultHeatMap } from './report-charts.js';
import { evalReportCss } from './report-style.js';
import {
  renderCaseTable,
  renderReportBanner,
  renderReportConfig,
  renderSummaryTable,
} from './report-tables.js';
import { renderFailedTrials } from './report-trials.js';

/** Options for {@link renderEvalReportHtml}. */
export interface RenderEvalHtmlOptions {
  /** A fault matrix of the same suite: adds the heat map. */
  faults?: FaultMatrixReport;
  /** @default `Eval: <suite>` */
  title?: string;
}

/**
 * The report's body, section by section: banner, summary, cases, failure mix, cost, fault heat map
 * and failed trials with their traces. Every string from the report is escaped. The lab shows a
 * report with this same function.
 */
export function renderEvalReportBody(report: EvalReport, options: RenderEvalHtmlOptions = {}): string {
  const title = options.title ?? `Eval: ${report.suite}`;
  const section = (id: string, heading: string, body: string) =>
    `<section aria-labelledby="${id}"><h2 id="${id}">${heading}</h2>\n${body}\n</section>`;
  return [
    renderReportBanner(report),
    `<h1>${escapeHtml(title)}</h1>`,
    renderReportConfig(report),
    section('eval-summary', 'Summary', renderSummaryTable(report)),
    section('eval-cases', 'Cases', renderCaseTable(report)),
    section('eval-failures', 'Failure mix', renderFailureMixSvg(report)),
    section('eval-cost', 'Cost per trial', renderCostHistogramSvg(report)),
    options.faults ? section('eval-faults', 'Fault matrix', renderFaultHeatMap(options.faults)) : '',
    section('eval-failed', 'Failed trials', renderFailedTrials(report)),
  ]
    .filter((part) => part !== '')
    .join('\n');
}

/**
 * The eval report as one self-contained HTML page: inline CSS and SVG, no script, no external
 * fetch (a Content-Security-Policy says so too, in case a future change forgets an escape). The
 * judge's warning and an early stop come first.
 *
 * @example
 * const html = renderEvalReportHtml(report, { faults: matrix });
 * // write html to eval-report.html and open it anywhere
 */
export function renderEvalReportHtml(report: EvalReport, options: RenderEvalHtmlOptions = {}): string {
  const title = options.title ?? `Eval: ${report.suite}`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>body { margin: 0 auto; max-width: 1080px; padding: 0 12px 32px; }${evalReportCss}</style>`,
    '</head><body><main class="eval-report">',
    renderEvalReportBody(report, options),
    '</main></body></html>',
    '',
  ].join('\n');
}
