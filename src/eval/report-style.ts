/**
 * The report's CSS, scoped under `.eval-report` so the lab can load it beside its own styles.
 * Colours keep 4.5:1 contrast; wide tables scroll inside their box, so the page fits 375 px.
 */
export const evalReportCss = `
.eval-report { --ink: #1a1a1a; --muted: #4a4a4a; --line: #c9c9c9; --panel: #f4f5f7;
  color: var(--ink); font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; line-height: 1.45; }
.eval-report * { box-sizing: border-box; }
.eval-report h1 { font-size: 1.5rem; margin: 12px 0 4px; overflow-wrap: anywhere; }
.eval-report h2 { font-size: 1.15rem; margin: 24px 0 8px; }
.eval-report .banner { margin: 0 0 8px; padding: 8px 12px; border-left: 4px solid; overflow-wrap: anywhere; }
.eval-report .banner.warn { background: #fff4e0; border-color: #8a5300; color: #4d2e00; }
.eval-report .banner.bad { background: #fdecec; border-color: #a4161a; color: #6b0d10; }
.eval-report .hint { color: var(--muted); font-size: 0.9em; }
.eval-report .scroll { max-width: 100%; overflow-x: auto; margin: 0 0 12px; }
.eval-report table { border-collapse: collapse; min-width: 100%; font-variant-numeric: tabular-nums; }
.eval-report caption { text-align: left; color: var(--muted); padding: 4px 0; }
.eval-report th, .eval-report td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
.eval-report thead th { background: var(--panel); }
.eval-report td { white-space: nowrap; }
.eval-report th[scope=row] { overflow-wrap: anywhere; min-width: 6.5rem; max-width: 16rem; white-space: normal; }
.eval-report td.reason { min-width: 12rem; overflow-wrap: anywhere; white-space: normal; }
.eval-report .chart { display: block; max-width: 640px; height: auto; }
.eval-report table.heat td { min-width: 6.5rem; }
.eval-report table.heat .rate { display: block; font-weight: 600; }
.eval-report table.heat .hint { display: block; color: #333333; }
.eval-report td.untested { background: repeating-linear-gradient(45deg, #ececec 0 6px, #f7f7f7 6px 12px); }
.eval-report details.trace { border: 1px solid var(--line); margin: 6px 0; padding: 4px 8px; }
/* A trace link unfolds its target without a script, where the browser has ::details-content. */
.eval-report details.trace:target { outline: 3px solid #0b5cad; }
.eval-report details.trace:target::details-content { content-visibility: visible; display: block; }
.eval-report details.trace summary { cursor: pointer; overflow-wrap: anywhere; }
.eval-report pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85rem; margin: 8px 0 0; }
.eval-report a { color: #0b5cad; }
`;
