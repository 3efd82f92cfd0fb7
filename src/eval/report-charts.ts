import { escapeHtml } from './escape-html.js';
import type { EvalReport } from './eval-types.js';
import type { FaultMatrixReport } from './fault-matrix.js';
import { interval, multiplier, percent, usd, whole } from './report-format.js';

// Charts are inline SVG scaled to their container (viewBox, width 100 %), so they fit 375 px.
const ink = '#1a1a1a';
const bar = '#0b5cad';

/** The failure mix: one horizontal bar per failure class, longest first. */
export function renderFailureMixSvg(report: EvalReport): string {
  const entries = Object.entries(report.failureClasses)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number' && entry[1] > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return '<p data-testid="failure-mix">No trial failed.</p>';
  const rowHeight = 28;
  const labelWidth = 150;
  const width = 480;
  const barWidth = width - labelWidth - 50;
  const most = entries[0]?.[1] ?? 1;
  const height = entries.length * rowHeight + 8;
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  const rows = entries.map(([name, count], index) => {
    const y = 4 + index * rowHeight;
    const length = Math.max(2, (count / most) * barWidth);
    return (
      `<text x="${labelWidth - 8}" y="${y + 18}" text-anchor="end">${escapeHtml(name)}</text>` +
      `<rect x="${labelWidth}" y="${y + 4}" width="${length.toFixed(1)}" height="${rowHeight - 8}" fill="${bar}"><title>${escapeHtml(`${name}: ${count} of ${total} failures`)}</title></rect>` +
      `<text x="${(labelWidth + length + 6).toFixed(1)}" y="${y + 18}">${escapeHtml(whole(count))}</text>`
    );
  });
  return (
    `<svg data-testid="failure-mix" role="img" aria-label="${escapeHtml(`Failure mix: ${entries.map(([n, c]) => `${n} ${c}`).join(', ')}`)}" ` +
    `viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet" font-size="13" fill="${ink}" class="chart">` +
    `${rows.join('')}</svg>`
  );
}

/** Trial cost as a histogram: how the bill is spread, tail included. */
export function renderCostHistogramSvg(report: EvalReport, bins = 12): string {
  const costs = report.trials.map((trial) => trial.costUsd).filter((cost) => Number.isFinite(cost));
  if (costs.length === 0) return '<p data-testid="cost-histogram">No trial cost recorded.</p>';
  const low = Math.min(...costs);
  const high = Math.max(...costs);
  const count = high === low ? 1 : Math.min(bins, Math.max(1, costs.length));
  const step = (high - low) / count;
  const heights = new Array<number>(count).fill(0);
  for (const cost of costs) {
    const at = step === 0 ? 0 : Math.min(count - 1, Math.floor((cost - low) / step));
    heights[at] = (heights[at] ?? 0) + 1;
  }
  const width = 480;
  const height = 180;
  const left = 36;
  const bottom = 28;
  const plotWidth = width - left - 8;
  const plotHeight = height - bottom - 10;
  const tallest = Math.max(...heights);
  const columnWidth = plotWidth / count;
  const columns = heights.map((n, index) => {
    const h = (n / tallest) * plotHeight;
    const from = low + index * step;
    const to = step === 0 ? high : from + step;
    return (
      `<rect x="${(left + index * columnWidth + 1).toFixed(1)}" y="${(10 + plotHeight - h).toFixed(1)}" width="${Math.max(1, columnWidth - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${bar}">` +
      `<title>${escapeHtml(`${usd(from)}–${usd(to)}: ${n} trial${n === 1 ? '' : 's'}`)}</title></rect>`
    );
  });
  const axis =
    `<line x1="${left}" y1="${10 + plotHeight}" x2="${width - 8}" y2="${10 + plotHeight}" stroke="${ink}"/>` +
    `<text x="${left}" y="${height - 8}">${escapeHtml(usd(low))}</text>` +
    `<text x="${width - 8}" y="${height - 8}" text-anchor="end">${escapeHtml(usd(high))}</text>` +
    `<text x="${left - 6}" y="20" text-anchor="end">${escapeHtml(whole(tallest))}</text>` +
    `<text x="${left - 6}" y="${10 + plotHeight}" text-anchor="end">0</text>`;
  return (
    `<svg data-testid="cost-histogram" role="img" aria-label="${escapeHtml(`Cost per trial from ${usd(low)} to ${usd(high)} over ${costs.length} trials`)}" ` +
    `viewBox="0 0 ${width} ${height}" width="100%" preserveAspectRatio="xMinYMin meet" font-size="12" fill="${ink}" class="chart">` +
    `${columns.join('')}${axis}</svg>`
  );
}

/** A light colour from red (0) through amber to green (1): dark text stays readable on every one. */
function recoveryColour(rate: number): string {
  const hue = Math.round(Math.max(0, Math.min(1, rate)) * 120);
  return `hsl(${hue} 70% 86%)`;
}

/**
 * The fault matrix as a tool × fault grid, each cell coloured by its recovery rate and showing the
 * cost multiplier. A table rather than SVG so it reads aloud and scrolls sideways on a phone.
 */
export function renderFaultHeatMap(matrix: FaultMatrixReport): string {
  const tools = [...new Set(matrix.cells.map((cell) => cell.tool))];
  const faults = [...new Set(matrix.cells.map((cell) => cell.fault))];
  const firing = 'rate' in matrix.firing ? `rate ${matrix.firing.rate}` : `at call ${matrix.firing.atCall}`;
  const head = faults.map((fault) => `<th scope="col">${escapeHtml(fault)}</th>`).join('');
  const rows = tools.map((tool) => {
    const cells = faults.map((fault) => {
      const cell = matrix.cells.find((one) => one.tool === tool && one.fault === fault);
      if (!cell) return '<td>—</td>';
      if (cell.recoveryRate === null)
        return `<td class="untested" data-injected="0"><span class="rate">untested</span><span class="hint">fault never fired</span></td>`;
      return (
        `<td style="background:${recoveryColour(cell.recoveryRate)}" data-injected="${escapeHtml(cell.injected)}" ` +
        `title="${escapeHtml(`${cell.recoveries} of ${cell.faultedTrials} faulted trials passed (95 % ${interval(cell.recoveryCi95)}); the same trials unfaulted: ${percent(cell.baselinePassRateOnFaulted ?? 0)}; ${cell.injected} faults fired`)}">` +
        `<span class="rate">${escapeHtml(percent(cell.recoveryRate))}</span>` +
        `<span class="hint">unfaulted ${escapeHtml(percent(cell.baselinePassRateOnFaulted ?? 0))}</span>` +
        `<span class="hint">cost ${escapeHtml(multiplier(cell.costMultiplier))}</span></td>`
      );
    });
    return `<tr><th scope="row">${escapeHtml(tool)}</th>${cells.join('')}</tr>`;
  });
  return [
    '<div class="scroll"><table class="heat" data-testid="fault-heat-map">',
    `<caption>Recovery when one tool fails (${escapeHtml(firing)}); baseline pass rate ${escapeHtml(percent(matrix.baseline.passRate))}, ` +
      `mean cost ${escapeHtml(usd(matrix.baseline.meanCostUsd))}</caption>`,
    `<thead><tr><th scope="col">Tool</th>${head}</tr></thead>`,
    `<tbody>${rows.join('')}</tbody></table></div>`,
  ].join('\n');
}
