/**
 * `reins/plot`: a model's chart as a standalone SVG. It imports d3-scale 4 and d3-shape 3, optional
 * peer dependencies of reins: `npm install d3-scale@^4 d3-shape@^3` before importing it.
 */
export type { ChartFormat, ChartSpec } from '../sim/chart.js';
export { chartPalette, formatValue, type RenderOptions, renderChartSvg } from './render-svg.js';
