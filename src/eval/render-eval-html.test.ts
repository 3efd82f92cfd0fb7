import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  hostileAnswer,
  hostileCaseId,
  sampleEvalSuite,
  uncalibratedJudge,
} from '../../test/support/eval-sample.js';
import { fakeClock } from '../testing/fake-clock.js';
import { escapeHtml } from './escape-html.js';
import type { EvalReport } from './eval-types.js';
import { type FaultMatrixReport, runFaultMatrix } from './fault-matrix.js';
import { parseEvalReport } from './parse-eval-report.js';
import { renderEvalReportHtml } from './render-eval-html.js';
import { usd } from './report-format.js';
import { runEval } from './run-eval.js';

let report: EvalReport;
let matrix: FaultMatrixReport;

beforeAll(async () => {
  const run = { trials: 4, k: 2, concurrency: 1, seed: 3, clock: fakeClock(), judge: uncalibratedJudge };
  report = await runEval(sampleEvalSuite(), run);
  matrix = await runFaultMatrix(sampleEvalSuite(), { faults: ['http_500', 'empty'], run });
});

const count = (text: string, part: string) => text.split(part).length - 1;

describe('renderEvalReportHtml', () => {
  it('is one self-contained page: no script, nothing fetched, a policy that forbids both', () => {
    const html = renderEvalReportHtml(report, { faults: matrix });
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'`);
    expect(html.toLowerCase()).not.toContain('<script');
    expect(html).not.toMatch(/\s(src|href)="(https?:)?\/\//);
    expect(html).not.toContain('<link');
    expect(html).toContain('<style>');
    expect(html).toContain('name="viewport"');
  });

  it('opens with the judge warning, then the title and every section', () => {
    const html = renderEvalReportHtml(report, { faults: matrix, title: 'Nightly' });
    const body = html
      .slice(html.indexOf('<main class="eval-report">') + '<main class="eval-report">'.length)
      .trimStart();
    expect(body.startsWith('<p class="banner warn" data-testid="judge-warning">')).toBe(true);
    expect(body).toContain(escapeHtml(uncalibratedJudge.warning));
    expect(html).toContain('<title>Nightly</title>');
    for (const id of [
      'summary-rates',
      'summary-distributions',
      'case-table',
      'failure-mix',
      'cost-histogram',
      'fault-heat-map',
      'failed-trials',
    ])
      expect(html, id).toContain(`data-testid="${id}"`);
    expect(count(html, '<svg')).toBe(2);
    // The summary states the pass rate with its interval, and the tail of cost.
    const [low, high] = report.summary.passRateCi95;
    expect(html).toContain(
      `<td>${(report.summary.passRate * 100).toFixed(1)} %</td><td>${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)} %</td>`,
    );
    expect(html).toContain(`<td>${usd(report.summary.cost.p99)}</td>`);
    expect(html).toContain('pass^2');
  });

  it('shows an early stop in the banner, and leaves the banner out when there is nothing to warn of', () => {
    const stopped = renderEvalReportHtml({
      ...report,
      stopped: {
        budget: 'usd',
        limit: 0.5,
        actual: 0.52,
        skippedTrials: 3,
        cancelledTrials: 1,
        cancelledTokens: 40,
        cancelledUsd: 0.01,
      },
    });
    expect(stopped).toContain('data-testid="stopped"');
    expect(stopped).toContain('the usd budget ran out (limit $0.500, spent $0.520)');
    const { judge: _judge, ...calm } = report;
    const quiet = renderEvalReportHtml({ ...calm, stopped: null });
    expect(quiet).not.toContain('class="banner');
  });

  it('links every failed trial to an anchor holding its rendered trace', () => {
    const html = renderEvalReportHtml(report);
    const failed = report.trials.filter((trial) => !trial.pass);
    expect(failed.length).toBeGreaterThan(0);
    const links = [...html.matchAll(/<a href="#(trial-\d+)">/g)].map((match) => match[1]);
    const anchors = [...html.matchAll(/<details id="(trial-\d+)" class="trace">/g)].map((match) => match[1]);
    expect(links).toHaveLength(failed.length);
    expect(anchors).toEqual(links);
    const loop = report.trials.findIndex((trial) => trial.failureClass === 'looped');
    const trace = html.slice(html.indexOf(`<details id="trial-${loop}"`));
    expect(trace.slice(0, trace.indexOf('</details>'))).toContain('proposed 3× (limit 3): not executed');
  });

  it('escapes model and tool text everywhere: answers, case ids, reasons, traces, attributes', () => {
    const html = renderEvalReportHtml(report, { faults: matrix });
    expect(html).not.toContain(hostileAnswer);
    expect(html).not.toContain(hostileCaseId);
    expect(html).toContain(escapeHtml(hostileCaseId));
    expect(html).toContain(escapeHtml(`answered ${hostileAnswer}`));
    expect(html.toLowerCase()).not.toContain('<img');
    expect(html).not.toContain('<b>bold</b>');
    // A model's `</details>` cannot close a trace early: the tags balance.
    expect(count(html, '<details')).toBe(count(html, '</details>'));
    expect(count(html, '<pre>')).toBe(count(html, '</pre>'));
    expect(count(html, '<table')).toBe(count(html, '</table>'));
    // Attribute values never hold a raw quote from the report.
    for (const match of html.matchAll(/\s(?:aria-label|title)="([^"]*)"/g))
      expect(match[1]).not.toMatch(/[<>]/);
  });

  it('escapes any text at all: the markup is the same whatever the text', () => {
    const withText = (text: string) =>
      renderEvalReportHtml({
        ...report,
        suite: text,
        cases: report.cases.map((one) => ({ ...one, id: text })),
        trials: report.trials.map((trial) => ({ ...trial, caseId: text, reason: text })),
      });
    const tags = (html: string) => count(html, '<');
    const plainTags = tags(withText('plain'));
    fc.assert(
      fc.property(fc.string(), (body) => {
        const text = `§${body}§`;
        const html = withText(text);
        expect(tags(html)).toBe(plainTags);
        if (/[<>&"']/.test(body)) expect(html).not.toContain(text);
      }),
      { numRuns: 200 },
    );
  });

  it('colours the heat map by recovery and says when a fault never fired', () => {
    const html = renderEvalReportHtml(report, { faults: matrix });
    const untested = matrix.cells.filter((cell) => cell.injected === 0);
    expect(untested.length).toBeGreaterThan(0);
    expect(count(html, 'class="untested"')).toBe(untested.length);
    const recovered = matrix.cells.find((cell) => cell.tool === 'lookup_order' && cell.fault === 'http_500');
    expect(recovered?.recoveryRate).not.toBeNull();
    expect(html).toContain('<span class="hint">cost ×');
    expect(html).toContain('hsl(');
  });
});

describe('the frozen report fixture', () => {
  it('still parses and renders', () => {
    const text = readFileSync(new URL('../../test/fixtures/eval-report-v1.json', import.meta.url), 'utf8');
    const parsed = parseEvalReport(text);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(parsed.report.summary.trials).toBe(12);
    expect(renderEvalReportHtml(parsed.report)).toContain('data-testid="failed-trials"');
  });
});

describe('parseEvalReport', () => {
  it('names what is wrong with a file that is not a report', () => {
    expect(parseEvalReport('{"v":1')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^This file is not JSON/),
    });
    expect(parseEvalReport('[1,2]')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/holds no object/),
    });
    expect(parseEvalReport('{"suite":"x"}')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/no version field "v"/),
    });
    expect(parseEvalReport(JSON.stringify({ ...report, v: 2 }))).toEqual({
      ok: false,
      error: 'This eval report has version 2; this reader knows version 1.',
    });
    const broken = { ...report, summary: { ...report.summary, passRate: 'high' } };
    expect(parseEvalReport(JSON.stringify(broken))).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^This file is not a valid eval report: summary\.passRate: /),
    });
  });

  it('reads back what runEval wrote', () => {
    const parsed = parseEvalReport(JSON.stringify(report));
    expect(parsed.ok && parsed.report).toEqual(JSON.parse(JSON.stringify(report)));
  });
});
