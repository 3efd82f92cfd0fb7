export type { ChartFormat, ChartSpec } from '../sim/chart.js';
export { chartPalette, formatValue, type RenderOptions, renderChartSvg } from './render-svg.js';
