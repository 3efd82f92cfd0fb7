import { parseEvalReport } from '../../src/eval/parse-eval-report.js';
import { renderCostHistogramSvg, renderFailureMixSvg } from '../../src/eval/report-charts.js';
import { evalReportCss } from '../../src/eval/report-style.js';
import {
  renderCaseTable,
  renderReportBanner,
  renderReportConfig,
  renderSummaryTable,
} from '../../src/eval/report-tables.js';
import { renderFailedTrials } from '../../src/eval/report-trials.js';
import { h } from './dom.js';

/**
 * The Evals view: open a report file (`reins eval run --json`, or a saved `runEval` result) and
 * read it through the same rendering functions as the standalone HTML report. Every piece escapes
 * the report's text, so setting it as HTML here is as safe as the report page itself.
 */
export function mountEvals(root: HTMLElement): void {
  if (!document.getElementById('eval-report-css'))
    document.head.append(h('style', { id: 'eval-report-css' }, evalReportCss));
  const input = h('input', {
    type: 'file',
    id: 'eval-file',
    accept: '.json,application/json',
    'aria-describedby': 'eval-file-hint eval-file-error',
  });
  const error = h('p', { class: 'error', id: 'eval-file-error', role: 'alert', 'data-testid': 'eval-error' });
  const view = h('div', { class: 'eval-report', 'data-testid': 'eval-view', 'aria-live': 'polite' });
  root.append(
    h('h2', {}, 'Evals'),
    h(
      'p',
      {},
      'Open an eval report to read it: pass rate and pass^k with their intervals, cost by its tail, ',
      'why the failures failed, and the trace of every failed trial. The file stays in this page.',
    ),
    h(
      'div',
      { class: 'panel' },
      h('label', { for: 'eval-file' }, 'Eval report (JSON)'),
      ' ',
      input,
      h(
        'p',
        { class: 'hint', id: 'eval-file-hint' },
        'Written by reins eval run --json, or JSON.stringify of a runEval result.',
      ),
      error,
    ),
    view,
  );
  // A trial link would change the page's hash, which picks the lab's view: open its trace here instead.
  view.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest?.('a[href^="#trial-"]');
    if (!link) return;
    const target = document.getElementById(link.getAttribute('href')?.slice(1) ?? '');
    if (!(target instanceof HTMLDetailsElement)) return;
    event.preventDefault();
    target.open = true;
    target.scrollIntoView({ block: 'start' });
    target.querySelector('summary')?.focus();
  });
  input.addEventListener('change', async () => {
    const file = input.files?.[0];
    if (!file) return;
    const parsed = parseEvalReport(await file.text());
    if (!parsed.ok) {
      error.textContent = `${file.name}: ${parsed.error}`;
      input.setAttribute('aria-invalid', 'true');
      view.replaceChildren();
      root.dataset['state'] = 'error';
      return;
    }
    error.textContent = '';
    input.removeAttribute('aria-invalid');
    const { report } = parsed;
    const section = (heading: string, html: string) => `<h3>${heading}</h3>\n${html}`;
    view.innerHTML = [
      renderReportBanner(report),
      renderReportConfig(report),
      section('Summary', renderSummaryTable(report)),
      section('Cases', renderCaseTable(report)),
      section('Failure mix', renderFailureMixSvg(report)),
      section('Cost per trial', renderCostHistogramSvg(report)),
      section('Failed trials', renderFailedTrials(report)),
    ].join('\n');
    root.dataset['state'] = 'shown';
  });
}
