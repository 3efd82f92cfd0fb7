import { scaleLinear, scaleLog } from 'd3-scale';
import { curveStepAfter, line } from 'd3-shape';
import type { ChartFormat, ChartSpec } from '../sim/chart.js';

/** Okabe–Ito: distinguishable with the common colour-vision deficiencies, readable on white. */
export const chartPalette = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000'];

export interface RenderOptions {
  /** @default 720 */
  width?: number;
  /** @default 420 */
  height?: number;
}

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Formats a number the way the chart's axis is labelled. */
export function formatValue(value: number, format: ChartFormat = 'number'): string {
  const compact = (x: number) => {
    const abs = Math.abs(x);
    if (abs >= 1e6) return `${+(x / 1e6).toPrecision(3)}M`;
    if (abs >= 1e4) return `${+(x / 1e3).toPrecision(3)}k`;
    return `${+x.toPrecision(4)}`;
  };
  switch (format) {
    case 'percent':
      return `${+(value * 100).toPrecision(3)}%`;
    case 'usd':
      return Math.abs(value) >= 100 ? `$${compact(value)}` : `$${+value.toPrecision(3)}`;
    case 'ms':
      return `${compact(Math.round(value))} ms`;
    case 'seconds':
      return `${compact(value)} s`;
    case 'multiplier':
      return `×${+value.toPrecision(3)}`;
    case 'tokens':
      return compact(Math.round(value));
    default:
      return compact(value);
  }
}

/**
 * Renders a {@link ChartSpec} to a standalone SVG document: axes with ticks, a legend, lines,
 * histogram bars, stacked bars, rules and highlighted points. The same function draws the CLI's
 * `--plot` file and the lab's charts.
 */
export function renderChartSvg(spec: ChartSpec, options: RenderOptions = {}): string {
  const width = options.width ?? 720;
  const height = options.height ?? 420;
  const margin = { top: 52, right: 24, bottom: 56, left: 76 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const parts: string[] = [];
  const text = (x: number, y: number, content: string, attributes = '') =>
    parts.push(`<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attributes}>${escapeXml(content)}</text>`);

  if (spec.stacked) return renderStacked(spec, width, height);

  const xs: number[] = [];
  const ys: number[] = [];
  for (const series of spec.lines ?? []) {
    for (const [px, py] of series.points) {
      xs.push(px);
      ys.push(py);
    }
  }
  for (const bin of spec.bins?.bins ?? []) {
    xs.push(bin.x0, bin.x1);
    ys.push(bin.y);
  }
  for (const point of spec.points ?? []) {
    xs.push(point.x);
    ys.push(point.y);
  }
  for (const rule of spec.rules ?? []) xs.push(rule.x);
  const finite = (values: number[]) => values.filter((v) => Number.isFinite(v));
  const xExtent = [Math.min(...finite(xs)), Math.max(...finite(xs))];
  const yValues = finite(ys);
  const yMin = spec.y.min ?? (spec.y.log ? Math.min(...yValues) : Math.min(0, ...yValues));
  const yMax = Math.max(...yValues);
  const x = (spec.x.log ? scaleLog() : scaleLinear())
    .domain([xExtent[0] ?? 0, xExtent[1] === xExtent[0] ? (xExtent[1] ?? 0) + 1 : (xExtent[1] ?? 1)])
    .range([0, plotWidth]);
  const y = (spec.y.log ? scaleLog() : scaleLinear())
    .domain([yMin, yMax === yMin ? yMin + 1 : yMax])
    .range([plotHeight, 0])
    .nice();

  parts.push(`<g transform="translate(${margin.left},${margin.top})">`);
  for (const tick of y.ticks(6)) {
    const ty = y(tick);
    parts.push(
      `<line x1="0" x2="${plotWidth}" y1="${ty.toFixed(1)}" y2="${ty.toFixed(1)}" stroke="#e3e3e3"/>`,
    );
    text(-8, ty + 4, formatValue(tick, spec.y.format), 'text-anchor="end" font-size="12" fill="#333"');
  }
  for (const tick of x.ticks(spec.x.log ? 5 : 8)) {
    const tx = x(tick);
    parts.push(
      `<line x1="${tx.toFixed(1)}" x2="${tx.toFixed(1)}" y1="${plotHeight}" y2="${plotHeight + 5}" stroke="#333"/>`,
    );
    text(
      tx,
      plotHeight + 19,
      formatValue(tick, spec.x.format),
      'text-anchor="middle" font-size="12" fill="#333"',
    );
  }
  parts.push(`<line x1="0" x2="${plotWidth}" y1="${plotHeight}" y2="${plotHeight}" stroke="#333"/>`);
  parts.push(`<line x1="0" x2="0" y1="0" y2="${plotHeight}" stroke="#333"/>`);

  if (spec.bins) {
    for (const bin of spec.bins.bins) {
      const left = x(bin.x0);
      const barWidth = Math.max(0.5, x(bin.x1) - left - 0.5);
      const top = y(bin.y);
      parts.push(
        `<rect x="${left.toFixed(1)}" y="${top.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(plotHeight - top).toFixed(1)}" fill="${chartPalette[5]}"/>`,
      );
    }
  }
  (spec.lines ?? []).forEach((series, index) => {
    const path = line<readonly [number, number]>()
      .defined(([px, py]) => Number.isFinite(px) && Number.isFinite(py) && (!spec.y.log || py > 0))
      .x(([px]) => x(px))
      .y(([, py]) => y(py));
    if (series.step) path.curve(curveStepAfter);
    const d = path(series.points) ?? '';
    parts.push(
      `<path d="${d}" fill="none" stroke="${chartPalette[index % chartPalette.length]}" stroke-width="2.5"${series.dashed ? ' stroke-dasharray="6 4"' : ''}><title>${escapeXml(series.name)}</title></path>`,
    );
  });
  for (const rule of spec.rules ?? []) {
    const rx = x(rule.x);
    parts.push(
      `<line x1="${rx.toFixed(1)}" x2="${rx.toFixed(1)}" y1="0" y2="${plotHeight}" stroke="#444" stroke-dasharray="3 3"/>`,
    );
    text(rx + 4, 12, rule.label, 'font-size="12" fill="#222"');
  }
  for (const point of spec.points ?? []) {
    const px = x(point.x);
    const py = y(point.y);
    parts.push(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="5" fill="#000"/>`);
    text(px + 8, py - 8, point.label, 'font-size="12" fill="#000"');
  }
  parts.push('</g>');

  text(
    margin.left + plotWidth / 2,
    height - 12,
    spec.x.label,
    'text-anchor="middle" font-size="13" fill="#222"',
  );
  text(
    16,
    margin.top + plotHeight / 2,
    spec.y.label,
    `text-anchor="middle" font-size="13" fill="#222" transform="rotate(-90 16 ${margin.top + plotHeight / 2})"`,
  );
  const legend = [...(spec.lines ?? []).map((series) => series.name), ...(spec.bins ? [spec.bins.name] : [])];
  legend.forEach((name, index) => {
    const lx = margin.left + 8 + index * Math.min(220, plotWidth / Math.max(1, legend.length));
    const colour =
      spec.bins && index === legend.length - 1 ? chartPalette[5] : chartPalette[index % chartPalette.length];
    parts.push(`<rect x="${lx}" y="30" width="14" height="4" fill="${colour}"/>`);
    text(lx + 18, 36, name, 'font-size="12" fill="#222"');
  });
  return wrap(spec.title, width, height, parts);
}

function wrap(title: string, width: number, height: number, parts: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(title)}" font-family="system-ui, sans-serif">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="12" y="18" font-size="14" font-weight="600" fill="#111">${escapeXml(title)}</text>`,
    ...parts,
    '</svg>',
  ].join('\n');
}

function renderStacked(spec: ChartSpec, width: number, height: number): string {
  const rows = spec.stacked?.rows ?? [];
  const margin = { top: 64, right: 24, bottom: 40, left: 120 };
  const plotWidth = width - margin.left - margin.right;
  const rowHeight = Math.min(48, (height - margin.top - margin.bottom) / Math.max(1, rows.length) - 10);
  const total = Math.max(...rows.map((row) => row.segments.reduce((sum, s) => sum + s.value, 0)), 1e-12);
  const x = scaleLinear().domain([0, total]).range([0, plotWidth]).nice();
  const parts: string[] = [];
  const names = rows[0]?.segments.map((segment) => segment.name) ?? [];
  names.forEach((name, index) => {
    const lx = margin.left + index * Math.min(110, plotWidth / Math.max(1, names.length));
    parts.push(
      `<rect x="${lx}" y="30" width="12" height="12" fill="${chartPalette[index % chartPalette.length]}"/>`,
    );
    parts.push(`<text x="${lx + 16}" y="40" font-size="12" fill="#222">${escapeXml(name)}</text>`);
  });
  rows.forEach((row, rowIndex) => {
    const top = margin.top + rowIndex * (rowHeight + 10);
    parts.push(
      `<text x="${margin.left - 8}" y="${top + rowHeight / 2 + 4}" text-anchor="end" font-size="12" fill="#222">${escapeXml(row.name)}</text>`,
    );
    let start = 0;
    row.segments.forEach((segment, index) => {
      const left = x(start);
      const barWidth = x(start + segment.value) - left;
      parts.push(
        `<rect x="${(margin.left + left).toFixed(1)}" y="${top}" width="${Math.max(0, barWidth).toFixed(1)}" height="${rowHeight}" fill="${chartPalette[index % chartPalette.length]}"><title>${escapeXml(`${segment.name}: ${formatValue(segment.value, spec.x.format)}`)}</title></rect>`,
      );
      start += segment.value;
    });
  });
  const axisY = margin.top + rows.length * (rowHeight + 10);
  for (const tick of x.ticks(6)) {
    parts.push(
      `<text x="${(margin.left + x(tick)).toFixed(1)}" y="${axisY + 14}" text-anchor="middle" font-size="12" fill="#333">${escapeXml(formatValue(tick, spec.x.format))}</text>`,
    );
  }
  parts.push(
    `<text x="${margin.left + plotWidth / 2}" y="${height - 10}" text-anchor="middle" font-size="13" fill="#222">${escapeXml(spec.x.label)}</text>`,
  );
  return wrap(spec.title, width, height, parts);
}
