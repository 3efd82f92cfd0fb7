import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStepperSettings, scenarioOverrides, stepViews } from '../lab/src/stepper.js';
import { parseEvalReport, renderEvalReportHtml, runFaultMatrix } from '../src/eval/index.js';
import { describeOutcome } from '../src/index.js';
import { renderChartSvg } from '../src/plot/index.js';
import { runScenario, type ScenarioName, scenarioNames } from '../src/scenarios/index.js';
import { findSimModel } from '../src/sim/index.js';
import { fakeClock } from '../src/testing/index.js';
import { hostileAnswer, sampleEvalSuite } from './support/eval-sample.js';
import { serveStatic } from './support/lab-server.js';

// The lab, built by `npm run lab:build`, served on loopback and driven in Debian's Chromium.
const distribution = new URL('../lab/dist', import.meta.url).pathname;
const chromiumPath = process.env['REINS_CHROMIUM'] ?? '/usr/bin/chromium';
const artifacts = new URL('../test-artifacts/lab', import.meta.url).pathname;
const skip = process.env['REINS_SKIP_BROWSER'] === '1';
const evalFixture = new URL('./fixtures/eval-report-v1.json', import.meta.url).pathname;

let browser: Browser;
let server: Awaited<ReturnType<typeof serveStatic>>;
const problems: string[] = [];

async function open(hash = '', width = 1100): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  // A dialog means text from a report ran as script.
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.goto(`${server.url}${hash}`);
  return page;
}

async function waitForRun(page: Page, after = 0): Promise<void> {
  await page.waitForFunction((n) => Number(document.getElementById('loop')?.dataset.ready ?? 0) > n, after);
}

const readyCount = (page: Page) =>
  page.evaluate(() => Number(document.getElementById('loop')?.dataset.ready ?? 0));
const value = (page: Page, id: string) => page.getAttribute(`[data-testid=${id}]`, 'data-value');

describe.skipIf(skip)('the lab in Chromium', () => {
  beforeAll(async () => {
    if (!existsSync(join(distribution, 'index.html'))) {
      throw new Error('lab/dist is missing: run `npm run lab:build` first (npm test does).');
    }
    if (!existsSync(chromiumPath)) {
      throw new Error(
        `Chromium not found at ${chromiumPath}. Install Debian's package (apt-get install chromium; .ci/run does) ` +
          'or set REINS_SKIP_BROWSER=1 to skip the browser tests.',
      );
    }
    mkdirSync(artifacts, { recursive: true });
    server = await serveStatic(distribution);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it.each(scenarioNames)(
    'clicks %s through to its outcome; every number is the library’s',
    async (name: ScenarioName) => {
      const page = await open('#loop');
      await waitForRun(page);
      const before = await readyCount(page);
      await page.click(`[data-scenario=${name}]`);
      await waitForRun(page, before);
      const run = await runScenario(name);
      const views = stepViews(run.trace);
      while (await page.isEnabled('#step-forward')) await page.click('#step-forward');
      expect(await page.textContent('[data-testid=step-position]')).toBe(
        `step ${views.length} / ${views.length}`,
      );
      expect(Number(await value(page, 'context-used'))).toBe(run.contextTokens);
      expect(Number(await value(page, 'context-budget'))).toBe(run.maxContextTokens);
      expect(Number(await value(page, 'billed'))).toBe(run.billedTokens);
      expect(await value(page, 'outcome-kind')).toBe(run.outcome.kind);
      expect(await page.textContent('[data-testid=outcome-cause]')).toBe(describeOutcome(run.outcome));
      // Each step on the way shows the library's counters too.
      await page.focus('#stepper');
      await page.keyboard.press('Home');
      for (const view of views) {
        expect(Number(await value(page, 'billed'))).toBe(view.billedTokens);
        if (view !== views.at(-1)) await page.click('#step-forward');
      }
      await page.screenshot({ path: join(artifacts, `loop-${name}.png`), fullPage: true });
      await page.close();
    },
  );

  it('the toggles re-run the real loop: no repeat detection burns the step limit, capped results answer', async () => {
    const page = await open('#loop');
    await waitForRun(page);
    let ready = await readyCount(page);
    await page.click('[data-scenario=loops]');
    await waitForRun(page, ready);
    ready = await readyCount(page);
    await page.uncheck('#toggle-repeat');
    await waitForRun(page, ready);
    await page.click('#step-forward');
    await page.keyboard.press('End');
    const loops = await runScenario('loops', { repeatLimit: false });
    await page.focus('#stepper');
    await page.keyboard.press('End');
    expect(await value(page, 'outcome-kind')).toBe(loops.outcome.kind);
    expect(loops.outcome.kind).toBe('step_limit');
    expect(Number(await value(page, 'billed'))).toBe(loops.billedTokens);

    ready = await readyCount(page);
    await page.click('[data-scenario=drowns]');
    await waitForRun(page, ready);
    ready = await readyCount(page);
    await page.check('#toggle-cap');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    const drowns = await runScenario('drowns', { maxResultTokens: 2_000 });
    expect(await value(page, 'outcome-kind')).toBe(drowns.outcome.kind);
    expect(Number(await value(page, 'billed'))).toBe(drowns.billedTokens);

    ready = await readyCount(page);
    await page.fill('#toggle-steps', '3');
    await page.press('#toggle-steps', 'Enter');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    const short = await runScenario('drowns', { maxResultTokens: 2_000, maxSteps: 3 });
    expect(await value(page, 'outcome-kind')).toBe(short.outcome.kind);
    await page.close();
  });

  it('the context policy toggle: drowns answers with its result admitted capped, and the context view shows the window', async () => {
    const page = await open('#loop');
    await waitForRun(page);
    let ready = await readyCount(page);
    await page.click('[data-scenario=drowns]');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    expect(await page.textContent('[data-testid=outcome-kind]')).toBe('over budget');

    ready = await readyCount(page);
    await page.check('#toggle-context');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    // What the page shows is what the same run gives outside the browser.
    const settings = { ...defaultStepperSettings, scenario: 'drowns' as const, contextPolicy: true };
    const drowns = await runScenario('drowns', scenarioOverrides(settings));
    expect(drowns.outcome.kind).toBe('answered');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 2 / 2');
    expect(await page.textContent('[data-testid=outcome-kind]')).toBe('answered');
    expect(await page.textContent('[data-testid=outcome-cause]')).toBe(describeOutcome(drowns.outcome));

    await page.click('#context-view summary');
    expect(await page.textContent('#context-view summary')).toBe('What the window holds at step 2');
    const figures = drowns.trace.find((event) => event.type === 'context-window' && event.step === 2);
    if (figures?.type !== 'context-window') throw new Error('no context-window event for step 2');
    const tokens = (n: number) => n.toLocaleString('en-US');
    expect(await page.textContent('[data-testid=window-tokens]')).toBe(
      `${tokens(figures.contextTokens)} tokens (3 of 3 messages)`,
    );
    expect(await page.textContent('[data-testid=transcript-tokens]')).toBe(
      `${tokens(figures.transcriptTokens)} tokens (${tokens(figures.transcriptTokens - figures.contextTokens)} kept out)`,
    );
    expect(figures.transcriptTokens).toBeGreaterThan(41_000);
    expect(await page.textContent('[data-testid=stable-prefix]')).toBe(
      `${tokens(figures.stablePrefixTokens)} tokens cacheable from the last call`,
    );
    expect(await page.textContent('[data-testid=context-edits]')).toMatch(/^admit: step 1's result, capped/);
    const parts = page.locator('[data-testid=window-parts] > li');
    expect(await parts.count()).toBe(3);
    const head = (n: number) =>
      Promise.all(
        ['.tag', 'strong', '.hint'].map((part) => parts.nth(n).locator(`.part-head ${part}`).textContent()),
      );
    expect(await head(0)).toEqual(['live', 'task', '12 tokens']);
    const [tag, label, size] = await head(2);
    expect([tag, label]).toEqual(['admitted capped', 'step 1 · result']);
    expect(size).toMatch(/^\d{3} tokens, for 40,\d{3} in the transcript$/);
    expect(await parts.nth(2).locator('pre').textContent()).toContain(
      'recall({ step: 1 }) reads it in pages',
    );
    // The handle points to a tool the model has.
    expect(await page.textContent('[data-testid=policy-tools]')).toBe('recall (offered to the model)');
    await page.screenshot({ path: join(artifacts, 'loop-context.png'), fullPage: true });

    ready = await readyCount(page);
    await page.uncheck('#toggle-context');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    expect(await page.textContent('[data-testid=outcome-kind]')).toBe('over budget');
    expect(await page.textContent('#context-view summary')).toBe(
      'What the window holds at step 1 (no context policy)',
    );
    expect(await page.textContent('[data-testid=context-body]')).toContain('The context policy is off');
    await page.close();
  });

  it('the context view marks summarized and evicted steps (wanders)', async () => {
    const page = await open('#loop');
    await waitForRun(page);
    let ready = await readyCount(page);
    await page.click('[data-scenario=wanders]');
    await waitForRun(page, ready);
    ready = await readyCount(page);
    await page.check('#toggle-context');
    await waitForRun(page, ready);
    await page.click('#context-view summary');
    await page.focus('#stepper');
    await page.keyboard.press('End');
    const tags = () => page.locator('[data-testid=window-parts] .tag').allInnerTexts();
    expect(await tags()).toContain('summarized');
    expect(await page.textContent('[data-testid=window-parts]')).toContain('reins summarized steps 1–2');
    await page.screenshot({ path: join(artifacts, 'loop-context-wanders.png'), fullPage: true });
    // Step 4 is before the first compaction: everything live.
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowLeft');
    expect(await page.textContent('#context-view summary')).toBe('What the window holds at step 4');
    expect(new Set(await tags())).toEqual(new Set(['live']));

    ready = await readyCount(page);
    await page.selectOption('#toggle-compaction', 'evict');
    await waitForRun(page, ready);
    await page.focus('#stepper');
    await page.keyboard.press('End');
    expect(await tags()).toContain('evicted');
    expect(await page.textContent('[data-testid=window-parts]')).toContain(
      'steps 1–2 were evicted from the window',
    );
    await page.close();
  });

  it('operates the stepper by keyboard alone', async () => {
    const page = await open('#loop');
    await waitForRun(page);
    const focused = () =>
      page.evaluate(() => document.activeElement?.id || document.activeElement?.textContent || '');
    // Tab from the top of the page to the Forward button, then Enter.
    let hops = 0;
    while ((await focused()) !== 'step-forward' && hops++ < 40) await page.keyboard.press('Tab');
    expect(await focused()).toBe('step-forward');
    await page.keyboard.press('Enter');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 2 / 4');
    await page.keyboard.press('Space');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 3 / 4');
    // Arrow keys, Home and End inside the stepper.
    await page.keyboard.press('ArrowLeft');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 2 / 4');
    await page.keyboard.press('End');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 4 / 4');
    expect(await value(page, 'outcome-kind')).toBe('answered');
    await page.keyboard.press('Home');
    expect(await page.textContent('[data-testid=step-position]')).toBe('step 1 / 4');
    // Shift+Tab back to Play and start it with the keyboard: it advances on its own.
    while ((await focused()) !== 'step-play' && hops++ < 80) await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => document.querySelector('[data-testid=step-position]')?.textContent === 'step 4 / 4',
    );
    expect(await value(page, 'outcome-kind')).toBe('answered');
    await page.close();
  });

  it('a slider moves the chart and the readout to the library’s values', async () => {
    const page = await open('#models');
    await page.waitForSelector('#playground[data-state=done]');
    const model = findSimModel('retry');
    if (!model) throw new Error('no retry model');
    await page.fill('#param-trials', '20000');
    await page.press('#param-trials', 'Tab');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=sim-status]')?.textContent?.includes('20,000 trials'),
    );
    const paths = () =>
      page.$$eval('[data-testid=chart] svg path', (nodes) => nodes.map((node) => node.getAttribute('d')));
    const pointLabel = () =>
      page.$$eval('[data-testid=chart] svg circle + text', (nodes) => nodes.map((node) => node.textContent));
    const beforePaths = await paths();
    const beforeLabel = await pointLabel();
    await page.focus('#param-p');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    expect(await page.textContent('[data-testid=param-p-value]')).toBe('0.25');
    await page.waitForFunction(() =>
      document.querySelector('#playground')?.getAttribute('data-json')?.includes('"p":0.25'),
    );
    const expected = model.run({ ...model.defaults, p: 0.25 }, { trials: 20_000, seed: 1 });
    const expectedSvg = renderChartSvg(expected.chart);
    const expectedPaths = [...expectedSvg.matchAll(/<path d="([^"]*)"/g)].map((match) => match[1]);
    // The curves sweep p, so they stay; the marked point moves to the new p.
    expect(await paths()).toEqual(expectedPaths);
    expect(beforePaths).toEqual(expectedPaths);
    expect(await pointLabel()).toEqual(
      [...expectedSvg.matchAll(/<circle [^>]*\/>\s*<text [^>]*>([^<]*)</g)].map((match) => match[1]),
    );
    expect(await pointLabel()).not.toEqual(beforeLabel);
    const firstTable = await page.$$eval('[data-testid=readouts] table:first-of-type tbody tr', (rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
    );
    expect(firstTable).toEqual(expected.tables[0]?.rows);
    const json = JSON.parse((await page.getAttribute('#playground', 'data-json')) ?? '{}');
    expect(json.exact).toEqual(expected.json['exact']);
    expect(json.monteCarlo).toEqual(expected.json['monteCarlo']);
    await page.screenshot({ path: join(artifacts, 'models-retry.png'), fullPage: true });
    await page.close();
  });

  it('every model renders a chart and readouts without errors', async () => {
    const page = await open('#models');
    await page.waitForSelector('#playground[data-state=done]');
    const names = await page.$$eval('#model-picker option', (options) =>
      options.map((option) => (option as HTMLOptionElement).value),
    );
    expect(names.length).toBe(13);
    const runs = () =>
      page.evaluate(() => Number(document.querySelector<HTMLElement>('#playground')?.dataset.runs ?? 0));
    for (const name of names) {
      let before = await runs();
      await page.selectOption('#model-picker', name);
      await page.waitForFunction(
        (n) => Number(document.querySelector<HTMLElement>('#playground')?.dataset.runs ?? 0) > n,
        before,
      );
      if (findSimModel(name)?.monteCarlo) {
        before = await runs();
        await page.fill('#param-trials', '5000');
        await page.press('#param-trials', 'Tab');
        await page.waitForFunction(
          (n) => Number(document.querySelector<HTMLElement>('#playground')?.dataset.runs ?? 0) > n,
          before,
        );
      }
      expect(await page.$$eval('[data-testid=chart] svg', (nodes) => nodes.length), name).toBe(1);
      expect(
        await page.$$eval('[data-testid=readouts] table', (nodes) => nodes.length),
        name,
      ).toBeGreaterThan(0);
      await page.screenshot({ path: join(artifacts, `models-${name}.png`), fullPage: true });
    }
    await page.close();
  });

  it('a bad parameter gets a labeled message naming the flag, and nothing runs until it is fixed', async () => {
    const page = await open('#models');
    await page.waitForSelector('#playground[data-state=done]');
    await page.selectOption('#model-picker', 'timeout');
    await page.waitForSelector('#playground[data-state=done]');
    await page.fill('#param-durations', '0.5:1-6');
    await page.press('#param-durations', 'Tab');
    expect(await page.textContent('#param-durations-error')).toMatch(
      /--durations must be .* weights sum to 0.5, not 1/,
    );
    expect(await page.getAttribute('#param-durations', 'aria-invalid')).toBe('true');
    await page.fill('#param-durations', '0.5:1-6,0.5:6-30');
    await page.press('#param-durations', 'Tab');
    await page.waitForFunction(() =>
      document.querySelector('#playground')?.getAttribute('data-json')?.includes('"high":30'),
    );
    expect(await page.textContent('#param-durations-error')).toBe('');
    await page.close();
  });

  it('a 200,000-trial Monte Carlo run never blocks the page', async () => {
    const page = await open('#models');
    await page.waitForSelector('#playground[data-state=done]');
    await page.selectOption('#model-picker', 'latency');
    await page.waitForSelector('#playground[data-state=done]');
    // Watch the main thread while the worker draws: record long tasks and every progress update.
    await page.evaluate(() => {
      const w = window as unknown as { longTasks: number[]; progress: number[] };
      w.longTasks = [];
      w.progress = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.longTasks.push(entry.duration);
      }).observe({ type: 'longtask' });
      const bar = document.querySelector('#playground progress') as HTMLProgressElement;
      new MutationObserver(() => w.progress.push(bar.value)).observe(bar, { attributes: true });
    });
    // The post's count is the default; a new seed starts a fresh 200,000-trial run.
    expect(await page.inputValue('#param-trials')).toBe('200000');
    await page.fill('#param-seed', '2');
    await page.press('#param-seed', 'Tab');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid=sim-status]')?.textContent?.includes('200,000 trials, seed 2'),
    );
    const { longTasks, progress } = await page.evaluate(() => {
      const w = window as unknown as { longTasks: number[]; progress: number[] };
      return { longTasks: w.longTasks, progress: w.progress };
    });
    const intermediate = progress.filter((share) => share > 0 && share < 1);
    expect(intermediate.length).toBeGreaterThan(0);
    expect(Math.max(0, ...longTasks)).toBeLessThan(250);
    await page.close();
  });

  it('the checks answer from the library and show the arithmetic', async () => {
    const page = await open('#checks');
    await page.waitForSelector('#detection-0');
    await page.check('#complexity-1');
    expect(await page.textContent('[data-testid=complexity-verdict]')).toMatch(
      /^Not quite: the library bills 56,000/,
    );
    await page.check('#complexity-0');
    expect(await page.textContent('[data-testid=complexity-verdict]')).toBe(
      'Right: the library sums the prefixes: 56,000 tokens, 28× one call.',
    );
    expect(await page.textContent('[data-testid=complexity-arithmetic]')).toContain('= 56,000 tokens');
    await page.check('#detection-1');
    expect(await page.textContent('[data-testid=detection-verdict]')).toMatch(
      /^Not quite: keyed on the name, the detector stops an honest run/,
    );
    await page.check('#detection-0');
    expect(await page.textContent('[data-testid=detection-verdict]')).toMatch(/^Right/);
    const loops = await runScenario('loops');
    if (loops.outcome.kind !== 'looped' || loops.outcome.reason !== 'repeated_call')
      throw new Error('loops did not loop');
    expect(await page.textContent('[data-testid=detection-loops]')).toContain(
      `${loops.outcome.key} proposed ${loops.outcome.count}×`,
    );
    await page.screenshot({ path: join(artifacts, 'checks.png'), fullPage: true });
    await page.close();
  });

  it('is usable at 375 px: no sideways scrolling, every control labelled, readable contrast', async () => {
    for (const view of ['#loop', '#models', '#checks', '#evals']) {
      const page = await open(view, 375);
      await page.waitForTimeout(0);
      if (view === '#models') await page.waitForSelector('#playground[data-state=done]');
      if (view === '#loop') {
        // With the context policy on and its view open, so its options and parts are checked too.
        await waitForRun(page);
        const ready = await readyCount(page);
        await page.check('#toggle-context');
        await waitForRun(page, ready);
        await page.click('#context-view summary');
        await page.focus('#stepper');
        await page.keyboard.press('End');
      }
      if (view === '#checks') await page.waitForSelector('#detection-0');
      if (view === '#evals') {
        // With a report open and a trace unfolded, so the tables, charts and traces are checked too.
        await page.setInputFiles('#eval-file', evalFixture);
        await page.waitForSelector('#evals[data-state=shown]');
        await page.click('#evals details.trace summary');
      }
      const report = await page.evaluate(() => {
        const unlabelled = [...document.querySelectorAll('input, select, button')]
          .filter((element) => (element as HTMLElement).offsetParent !== null)
          .filter((element) => {
            const id = element.getAttribute('id');
            const labelled = id !== null && document.querySelector(`label[for="${id}"]`) !== null;
            return (
              !labelled &&
              !element.getAttribute('aria-label') &&
              !(element.textContent ?? '').trim() &&
              !element.closest('label')
            );
          })
          .map((element) => element.outerHTML.slice(0, 80));
        const luminance = (rgb: number[]) => {
          const [r, g, b] = rgb.map((c) => {
            const s = c / 255;
            return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
          }) as [number, number, number];
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const parse = (color: string) => (color.match(/[\d.]+/g) ?? []).map(Number);
        const background = (element: Element | null): number[] => {
          for (let node = element; node; node = node.parentElement) {
            const parts = parse(getComputedStyle(node).backgroundColor);
            if (parts.length >= 3 && (parts[3] === undefined || parts[3] > 0.5)) return parts.slice(0, 3);
          }
          return [255, 255, 255];
        };
        const lowContrast: string[] = [];
        for (const element of document.querySelectorAll('body *')) {
          const own = [...element.childNodes].some(
            (node) => node.nodeType === 3 && (node.textContent ?? '').trim(),
          );
          if (!own || (element as HTMLElement).offsetParent === null || element.closest('svg')) continue;
          const fg = luminance(parse(getComputedStyle(element).color).slice(0, 3));
          const bg = luminance(background(element));
          const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
          if (ratio < 4.5)
            lowContrast.push(
              `${element.tagName} ${ratio.toFixed(2)} ${(element.textContent ?? '').slice(0, 30)}`,
            );
        }
        return { scrollWidth: document.documentElement.scrollWidth, unlabelled, lowContrast };
      });
      expect(report.scrollWidth, view).toBeLessThanOrEqual(375);
      expect(report.unlabelled, view).toEqual([]);
      expect(report.lowContrast, view).toEqual([]);
      await page.screenshot({ path: join(artifacts, `narrow-${view.slice(1)}.png`), fullPage: true });
      await page.close();
    }
  });

  it('the Evals tab opens a report file and shows it through the report’s own renderers', async () => {
    const parsed = parseEvalReport(readFileSync(evalFixture, 'utf8'));
    if (!parsed.ok) throw new Error(parsed.error);
    const report = parsed.report;
    const page = await open('#evals');
    // The file input is reachable by keyboard and labelled.
    let hops = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== 'eval-file' && hops++ < 20)
      await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('eval-file');
    expect(await page.textContent('label[for=eval-file]')).toBe('Eval report (JSON)');
    await page.setInputFiles('#eval-file', evalFixture);
    await page.waitForSelector('#evals[data-state=shown]');
    expect(await page.textContent('[data-testid=judge-warning]')).toBe(`Judge: ${report.judge?.warning}`);
    const rates = await page.$$eval('[data-testid=summary-rates] tbody tr', (rows) =>
      rows.map((row) => [...row.querySelectorAll('th, td')].map((cell) => cell.textContent)),
    );
    const [low, high] = report.summary.passRateCi95;
    expect(rates[0]).toEqual([
      'Pass rate',
      `${(report.summary.passRate * 100).toFixed(1)} %`,
      `${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)} %`,
    ]);
    const cases = await page.$$eval('[data-testid=case-table] tbody th', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(cases).toEqual(report.cases.map((one) => one.id));
    expect(await page.locator('[data-testid=failure-mix]').count()).toBe(1);
    expect(await page.locator('[data-testid=cost-histogram] rect').count()).toBeGreaterThan(0);
    const failed = report.trials.filter((trial) => !trial.pass);
    expect(await page.locator('[data-testid=failed-trials] tbody tr').count()).toBe(failed.length);
    expect(await page.locator('#evals details.trace').count()).toBe(failed.length);
    // Model text arrives as text: no element was made from it, and it reads back verbatim.
    expect(await page.locator('#evals script, #evals img, #evals b').count()).toBe(0);
    expect(await page.textContent('[data-testid=failed-trials] tbody')).toContain(
      `answered ${hostileAnswer}`,
    );
    // A failed trial's link opens its trace.
    const link = page.locator('[data-testid=failed-trials] tbody a').first();
    const target = (await link.getAttribute('href'))?.slice(1) ?? '';
    await link.click();
    expect(await page.getAttribute(`#${target}`, 'open')).toBe('');
    expect(await page.evaluate(() => location.hash)).toBe('#evals');
    expect(await page.isVisible('#evals')).toBe(true);
    expect(await page.textContent(`#${target} pre`)).toContain('outcome');
    await page.screenshot({ path: join(artifacts, 'evals.png'), fullPage: true });
    await page.close();
  });

  it('the Evals tab names what is wrong with a file that is not an eval report', async () => {
    const page = await open('#evals');
    const file = (name: string, text: string) => ({
      name,
      mimeType: 'application/json',
      buffer: Buffer.from(text),
    });
    await page.setInputFiles('#eval-file', file('old.json', '{"v":2,"suite":"x"}'));
    await page.waitForSelector('#evals[data-state=error]');
    expect(await page.textContent('#eval-file-error')).toBe(
      'old.json: This eval report has version 2; this reader knows version 1.',
    );
    expect(await page.getAttribute('#eval-file', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#eval-file', 'aria-describedby')).toContain('eval-file-error');
    expect(await page.getAttribute('#eval-file-error', 'role')).toBe('alert');
    expect(await page.locator('[data-testid=eval-view] table').count()).toBe(0);
    await page.setInputFiles('#eval-file', file('notes.json', 'these are not JSON'));
    await page.waitForFunction(() =>
      document.querySelector('#eval-file-error')?.textContent?.startsWith('notes.json'),
    );
    expect(await page.textContent('#eval-file-error')).toMatch(/^notes\.json: This file is not JSON/);
    // A good file clears the error.
    await page.setInputFiles('#eval-file', evalFixture);
    await page.waitForSelector('#evals[data-state=shown]');
    expect(await page.textContent('#eval-file-error')).toBe('');
    expect(await page.getAttribute('#eval-file', 'aria-invalid')).toBeNull();
    await page.close();
  });

  it('the standalone HTML report runs nothing, fetches nothing and fits 375 px', async () => {
    const parsed = parseEvalReport(readFileSync(evalFixture, 'utf8'));
    if (!parsed.ok) throw new Error(parsed.error);
    const faults = await runFaultMatrix(sampleEvalSuite(), {
      faults: ['http_500', 'empty', 'schema_invalid'],
      run: { trials: 2, k: 1, clock: fakeClock() },
    });
    const page = await browser.newPage({ viewport: { width: 375, height: 800 } });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('dialog', (dialog) => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await page.setContent(renderEvalReportHtml(parsed.report, { faults }));
    // Without a script, a failed trial's link still shows its trace (CSS unfolds the target).
    const link = page.locator('[data-testid=failed-trials] tbody a').first();
    const target = (await link.getAttribute('href'))?.slice(1) ?? '';
    expect(await page.isVisible(`#${target} pre`)).toBe(false);
    await link.click();
    expect(await page.isVisible(`#${target} pre`)).toBe(true);
    const shape = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      scripts: document.querySelectorAll('script').length,
      first: document.querySelector('main')?.firstElementChild?.getAttribute('data-testid'),
      heat: document.querySelectorAll('[data-testid=fault-heat-map] tbody td').length,
      untested: document.querySelectorAll('[data-testid=fault-heat-map] td.untested').length,
    }));
    expect(shape).toEqual({
      scrollWidth: 375,
      scripts: 0,
      first: 'judge-warning',
      heat: faults.cells.length,
      untested: faults.cells.filter((cell) => cell.recoveryRate === null).length,
    });
    expect(requests.filter((url) => !url.startsWith('about:') && !url.startsWith('data:'))).toEqual([]);
    await page.screenshot({ path: join(artifacts, 'eval-report-narrow.png'), fullPage: true });
    await page.close();
  });

  it('all JavaScript of the built site is at most 200 KB gzipped', () => {
    const assets = join(distribution, 'assets');
    const gzipped = readdirSync(assets)
      .filter((file) => file.endsWith('.js'))
      .reduce((total, file) => total + gzipSync(readFileSync(join(assets, file)), { level: 9 }).length, 0);
    expect(gzipped).toBeGreaterThan(10_000);
    expect(gzipped).toBeLessThanOrEqual(200 * 1024);
  });

  it('logged no console errors or warnings', () => {
    expect(problems).toEqual([]);
  });
});
