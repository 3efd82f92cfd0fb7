import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSupportService } from '../examples/queued-support-agent.js';
import { stepViews } from '../lab/src/step-views.js';
import { describeOutcome } from '../src/index.js';
import { readJsonlTrace } from '../src/node/index.js';

// The run viewer that `reins/server` serves at `/`, built into dist/viewer by `npm run build`,
// driven in Debian's Chromium against the example's support agent on the in-process queue.
const chromiumPath = process.env['REINS_CHROMIUM'] ?? '/usr/bin/chromium';
const skip = process.env['REINS_SKIP_BROWSER'] === '1';
const root = new URL('..', import.meta.url).pathname;
const artifacts = join(root, 'test-artifacts', 'viewer');
const fixture = join(root, 'test', 'fixtures', 'trace-v1-loops.jsonl');
const tokens = { 'token-for-cust-ana': 'cust-ana', 'token-for-cust-ben': 'cust-ben' };

let browser: Browser;
let service: Awaited<ReturnType<typeof startSupportService>>;

/** A fresh context (its own sessionStorage) and a page that records every console error and warning. */
async function open(width: number): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { context, page, problems };
}

const focused = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');

/** Presses Tab until `id` has the focus: the way a keyboard user gets there. */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let hops = 0; hops < 60; hops += 1) {
    if ((await focused(page)) === id) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached #${id} (focus is on #${await focused(page)})`);
}

/** Controls with no accessible name, and text under 4.5:1 contrast, among what is visible. */
function accessibilityProblems(page: Page) {
  return page.evaluate(() => {
    const unlabelled = [...document.querySelectorAll('input, select, button, textarea')]
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
      if (!own || (element as HTMLElement).offsetParent === null) continue;
      const fg = luminance(parse(getComputedStyle(element).color).slice(0, 3));
      const bg = luminance(background(element));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5)
        lowContrast.push(
          `${element.tagName} ${ratio.toFixed(2)} ${(element.textContent ?? '').slice(0, 30)}`,
        );
    }
    return { unlabelled, lowContrast };
  });
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(service.url);
  await page.waitForSelector('#main[data-ready=signed-out]');
  await tabTo(page, 'token');
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#main[data-ready=signed-in]');
}

describe.skipIf(skip)('the run viewer in Chromium', () => {
  beforeAll(async () => {
    if (!existsSync(join(root, 'dist', 'viewer', 'index.html')))
      throw new Error('dist/viewer is missing: run `npm run build` first (npm test does).');
    if (!existsSync(chromiumPath))
      throw new Error(
        `Chromium not found at ${chromiumPath}; set REINS_SKIP_BROWSER=1 to skip the browser tests.`,
      );
    mkdirSync(artifacts, { recursive: true });
    service = await startSupportService({ tokens, stepDelayMs: 50, viewer: true });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('at 375 px, by keyboard alone: start a run, watch its steps arrive, approve the refund, see the outcome; then a second actor gets 403', async () => {
    const { context, page, problems } = await open(375);
    await signIn(page, 'token-for-cust-ana');
    expect(await page.textContent('[data-testid=actor]')).toBe('cust-ana');

    await tabTo(page, 'run-input');
    await page.keyboard.type('Order o-1001 is late. Can I get my money back?');
    await page.keyboard.press('Enter');

    // The trace streams in: the order lookup, then the refund, which waits for a person.
    await page.waitForSelector('#timeline li[data-step="1"]');
    await page.waitForSelector('#approve-0');
    await page.waitForSelector('#timeline li[data-step="2"] [data-status="awaiting approval"]');
    expect(await page.getAttribute('[data-testid=outcome-kind]', 'data-value')).toBe('awaiting approval');
    expect(await page.$('#timeline li[data-step="3"]')).toBeNull();
    expect(await page.textContent('#approvals pre')).toBe('{"amount":84.5,"orderId":"o-1001"}');
    expect(service.refunds).toEqual([]);
    expect(await accessibilityProblems(page)).toEqual({ unlabelled: [], lowContrast: [] });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const runId = decodeURIComponent(new URL(page.url()).hash.replace('#run/', ''));
    expect(runId).toMatch(/^run_/);
    await page.screenshot({ path: join(artifacts, 'paused-375.png'), fullPage: true });

    await tabTo(page, 'approve-0');
    await page.keyboard.press('Enter');

    // The same page, still following the stream: step 3 arrives and the badge turns.
    await page.waitForSelector('[data-testid=outcome-kind][data-value=answered]');
    await page.waitForSelector('#timeline li[data-step="3"]');
    expect(service.refunds).toEqual([{ orderId: 'o-1001', amount: 84.5 }]);
    const record = (await (
      await fetch(`${service.url}runs/${runId}`, { headers: { Authorization: 'Bearer token-for-cust-ana' } })
    ).json()) as { billedTokens: number; steps: number; outcome: Parameters<typeof describeOutcome>[0] };
    expect(Number(await page.getAttribute('[data-testid=billed]', 'data-value'))).toBe(record.billedTokens);
    expect(record.billedTokens).toBeGreaterThan(0);
    expect(await page.textContent('[data-testid=outcome-cause]')).toBe(describeOutcome(record.outcome));
    expect(await page.textContent('#timeline li[data-step="2"] [data-status]')).toContain('R-1');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.screenshot({ path: join(artifacts, 'answered-375.png'), fullPage: true });
    expect(problems).toEqual([]);
    await context.close();

    // Another actor: its list is empty and the first actor's run is refused, on the page and over HTTP.
    const other = await open(375);
    await signIn(other.page, 'token-for-cust-ben');
    expect(await other.page.textContent('#run-list')).toBe('No runs yet.');
    expect(await other.page.textContent('#run-list')).not.toContain(runId);
    await other.page.evaluate((id) => {
      location.hash = `#run/${encodeURIComponent(id)}`;
    }, runId);
    await other.page.waitForSelector('#viewer-error:has-text("403 forbidden")');
    expect(await other.page.$$('#timeline li')).toHaveLength(0);
    expect(await other.page.textContent('#run')).not.toContain('o-1001');
    // The only console lines are the browser's own notes of the refused request.
    expect(other.problems.every((line) => line.includes('403'))).toBe(true);
    for (const path of [`runs/${runId}`, `runs/${runId}/events`]) {
      const response = await fetch(`${service.url}${path}`, {
        headers: { Authorization: 'Bearer token-for-cust-ben' },
      });
      expect(response.status, path).toBe(403);
    }
    await other.context.close();
  });

  it('deny and edit from the page: an edited refund runs with the edited amount; a denied one never runs', async () => {
    const { context, page, problems } = await open(1100);
    await signIn(page, 'token-for-cust-ana');
    for (const [verdict, expected] of [
      ['edit', [{ orderId: 'o-1001', amount: 40 }]],
      ['deny', []],
    ] as const) {
      const before = service.refunds.length;
      await page.fill('#run-input', 'Refund o-1001 please.');
      await page.click('#start-button');
      await page.waitForSelector(`#${verdict}-0`);
      await page.click(`#${verdict}-0`);
      if (verdict === 'edit') {
        await page.fill('#edit-input-0', '{ "orderId": "o-1001", "amount": 40 }');
        await page.click('text=Send edited call');
      } else {
        await page.fill('#deny-reason-0', 'Refunds over 50 need a manager');
        await page.click('text=Send denial');
      }
      await page.waitForSelector('[data-testid=outcome-kind][data-value=answered]');
      expect(service.refunds.slice(before)).toEqual(expected);
      await page.evaluate(() => {
        location.hash = '';
      });
    }
    expect(problems).toEqual([]);
    await context.close();
  });

  it('cancel by keyboard: a run paused for a refund is cancelled from the page and the refund never runs', async () => {
    const { context, page, problems } = await open(375);
    await signIn(page, 'token-for-cust-ana');
    const before = service.refunds.length;
    await tabTo(page, 'run-input');
    await page.keyboard.type('Refund o-1001 please.');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#approve-0');
    await tabTo(page, 'cancel-run');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid=outcome-kind][data-value=cancelled]');
    expect(await page.isVisible('#cancel-run')).toBe(false);
    expect(await page.$('#approve-0')).toBeNull();
    const runId = decodeURIComponent(new URL(page.url()).hash.replace('#run/', ''));
    const record = (await (
      await fetch(`${service.url}runs/${runId}`, { headers: { Authorization: 'Bearer token-for-cust-ana' } })
    ).json()) as { status: string; outcome: { kind: string } };
    expect(record).toMatchObject({ status: 'ended', outcome: { kind: 'cancelled' } });
    // A verdict after the cancel is refused; nothing was refunded.
    const late = await fetch(`${service.url}runs/${runId}/approvals`, {
      method: 'POST',
      headers: { Authorization: 'Bearer token-for-cust-ana', 'Content-Type': 'application/json' },
      body: JSON.stringify({ verdicts: [{ decision: 'approve', by: 'cust-ana' }] }),
    });
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect(service.refunds.length).toBe(before);
    expect(problems.every((line) => line.includes('409') || line.includes('400'))).toBe(true);
    await context.close();
  });

  it('a stream torn mid-event reconnects with Last-Event-ID and shows every step once, as a clean stream does', async () => {
    const { context, page, problems } = await open(1100);
    // In the page: the first events stream delivers its first two blocks whole and half of the third, then
    // fails as a dropped connection does. Every events request's Last-Event-ID is recorded.
    await page.addInitScript(() => {
      const original = window.fetch.bind(window);
      const seen: (string | null)[] = [];
      (window as unknown as { lastEventIds: (string | null)[] }).lastEventIds = seen;
      let torn = false;
      window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
        const url = new URL(input instanceof Request ? input.url : String(input), location.href);
        if (!/\/runs\/[^/]+\/events$/.test(url.pathname)) return original(input, init);
        seen.push(new Headers(init?.headers).get('Last-Event-ID'));
        const response = await original(input, init);
        if (torn || !response.body) return response;
        torn = true;
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let text = '';
        while (text.split('\n\n').length < 4) {
          const { done, value } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
        await reader.cancel();
        const blocks = text.split('\n\n');
        const whole = blocks.slice(0, 2).join('\n\n');
        (window as unknown as { tornWhole: string }).tornWhole = whole;
        const cut = `${whole}\n\n${(blocks[2] ?? '').slice(0, 20)}`;
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(cut));
            setTimeout(() => controller.error(new TypeError('network error')), 50);
          },
        });
        return new Response(body, { status: 200, headers: response.headers });
      };
    });
    await signIn(page, 'token-for-cust-ana');
    await page.fill('#run-input', 'Order o-1001 is late. Can I get my money back?');
    await page.click('#start-button');
    await page.waitForSelector('#approve-0');
    await page.waitForSelector('#timeline li[data-step="2"] [data-status="awaiting approval"]');
    const { ids, whole } = await page.evaluate(() => {
      const held = window as unknown as { lastEventIds: (string | null)[]; tornWhole: string };
      return { ids: held.lastEventIds, whole: held.tornWhole };
    });
    // The second connection asks for what follows the last whole trace event the first delivered.
    const delivered = [...whole.matchAll(/^id: (\d+)$/gm)].map((match) => match[1]);
    expect(delivered.length).toBeGreaterThan(0);
    expect(ids.slice(0, 2)).toEqual([null, delivered.at(-1)]);
    const timeline = () =>
      page.$$eval('#timeline > li', (items) =>
        items.map(
          (item) => `${item.getAttribute('data-step')}: ${item.querySelector('[data-status]')?.textContent}`,
        ),
      );
    const torn = await timeline();
    expect(torn.map((line) => line.split(':')[0])).toEqual(['1', '2']);
    // A clean page on the same run shows the same thing.
    const clean = await open(1100);
    await signIn(clean.page, 'token-for-cust-ana');
    await clean.page.goto(page.url());
    await clean.page.reload();
    await clean.page.waitForSelector('#main[data-ready=signed-in]');
    await clean.page.waitForSelector('#timeline li[data-step="2"] [data-status="awaiting approval"]');
    expect(
      await clean.page.$$eval('#timeline > li', (items) =>
        items.map(
          (item) => `${item.getAttribute('data-step')}: ${item.querySelector('[data-status]')?.textContent}`,
        ),
      ),
    ).toEqual(torn);
    expect(problems).toEqual([]);
    expect(clean.problems).toEqual([]);
    await clean.context.close();
    await context.close();
  });

  it('reins trace view FILE serves the viewer over a recorded trace, read-only, with the same steps and outcome', async () => {
    const child: ChildProcess = spawn(
      process.execPath,
      [join(root, 'dist/cli/reins.js'), 'trace', 'view', fixture],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /http:\/\/127\.0\.0\.1:\d+\//.exec(out);
          if (match) resolve(match[0]);
        });
        child.once('exit', (code) => reject(new Error(`reins trace view exited ${code}: ${out}`)));
      });
      const { events } = readJsonlTrace(fixture);
      const runEnd = events.findLast((event) => (event as { type?: string }).type === 'run-end') as {
        outcome: Parameters<typeof describeOutcome>[0];
      };
      const { context, page, problems } = await open(1100);
      await page.goto(url);
      await page.waitForSelector('#main[data-ready=signed-in]');
      await page.click('#run-list a');
      await page.waitForSelector(`[data-testid=outcome-kind][data-value=${runEnd.outcome.kind}]`);
      await page.waitForSelector('[data-testid=stream-state]:has-text("the run has ended")');
      const views = stepViews(events as Parameters<typeof stepViews>[0]);
      expect(await page.$$('#timeline > li')).toHaveLength(views.length);
      expect(Number(await page.getAttribute('[data-testid=billed]', 'data-value'))).toBe(
        views.at(-1)?.billedTokens,
      );
      expect(await page.textContent('[data-testid=outcome-cause]')).toBe(describeOutcome(runEnd.outcome));
      expect(await page.isVisible('#start-run')).toBe(false);
      const write = await fetch(`${url}runs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: '{"agent":"x","input":"y"}',
      });
      expect(write.status).toBe(405);
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  });
});
