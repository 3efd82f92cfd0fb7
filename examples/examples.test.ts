import { describe, expect, it } from 'vitest';
import { main as budget } from './budget-a-retry-policy.js';
import { main as incidentEval } from './eval-incident-agent.js';
import { main as judgeCalibration } from './judge-calibration.js';
import { main as nightlySummary } from './nightly-summary.js';
import { main as payBill } from './pay-a-bill-safely.js';
import { main as perFileMigration } from './per-file-migration.js';
import { main as queuedSupport } from './queued-support-agent.js';
import { main as routeTickets } from './route-support-tickets.js';
import { main } from './support-agent.js';
import { main as ticketTriage } from './ticket-triage.js';

describe('examples run offline', () => {
  it('support-agent answers, with the cross-customer lookup denied', async () => {
    const { result, denials, model } = await main();
    expect(result.outcome.kind).toBe('answered');
    expect(denials).toHaveLength(1);
    expect(JSON.stringify(result.messages)).not.toContain('delivered');
    model.assertDone();
  });

  it('queued-support-agent: queued over HTTP, paused before the refund, approved, answered; the stream has every seq once', async () => {
    const { seqs, paused, approvedBy, final, refunds } = await queuedSupport();
    expect(paused).toEqual({ tool: 'refund', input: { orderId: 'o-1001', amount: 84.5 } });
    expect(approvedBy).toBe('cust-ana');
    expect(final).toMatchObject({ status: 'ended', outcome: { kind: 'answered' } });
    expect(refunds).toEqual([{ orderId: 'o-1001', amount: 84.5 }]);
    expect(seqs).toEqual(seqs.map((_, index) => index));
  });

  it.skipIf(process.env['REINS_SKIP_REDIS'] === '1')(
    'queued-support-agent --bullmq: the same run through BullMQ, Redis records and the Redis trace log',
    async () => {
      const redisUrl = process.env['REINS_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
      const { seqs, paused, final, refunds } = await queuedSupport(() => {}, redisUrl);
      expect(paused).toEqual({ tool: 'refund', input: { orderId: 'o-1001', amount: 84.5 } });
      expect(final).toMatchObject({ status: 'ended', outcome: { kind: 'answered' } });
      expect(refunds).toEqual([{ orderId: 'o-1001', amount: 84.5 }]);
      expect(seqs).toEqual(seqs.map((_, index) => index));
    },
  );

  it('budget-a-retry-policy: restarts cost more than resuming, and Monte Carlo agrees with the exact mean', () => {
    const { inPlace, restart, check, timeout } = budget();
    expect(restart.multiplier).toBeGreaterThan(inPlace.multiplier);
    expect(check.ci95[0]).toBeLessThanOrEqual(inPlace.meanCostUsd);
    expect(check.ci95[1]).toBeGreaterThanOrEqual(inPlace.meanCostUsd);
    expect(timeout.curve.map((point) => point.timeoutSeconds)).toContain(timeout.optimum.timeoutSeconds);
  });

  it('pay-a-bill-safely: both payments are asked as tainted, the bill is paid once, the injected one never', async () => {
    const { first, result, paid } = await payBill();
    expect(first.outcome).toMatchObject({
      kind: 'awaiting_approval',
      requests: [{ cause: 'tainted_context' }, { cause: 'tainted_context' }],
    });
    expect(result.outcome.kind).toBe('answered');
    expect(paid).toEqual([{ recipient: 'UK12345678901234567890', amount: 98.7 }]);
    // A person who approves everything: the plan's one use and the policy's cap still refuse the second.
    const careless = await payBill(true);
    expect(careless.paid).toEqual([{ recipient: 'UK12345678901234567890', amount: 98.7 }]);
  });

  it('eval-incident-agent: 12 cases × 10 trials; pass^3 well under pass@3, every failure classified', async () => {
    const { report, matrix } = await incidentEval();
    expect(report.cases).toHaveLength(12);
    expect(report.summary.trials).toBe(120);
    expect(report.summary.passAtK).toBeGreaterThan(report.summary.passHatK ?? 1);
    const failed = report.trials.filter((trial) => !trial.pass);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((trial) => trial.failureClass !== null)).toBe(true);
    const classes = Object.values(report.failureClasses).reduce((sum, count) => sum + (count ?? 0), 0);
    expect(classes).toBe(failed.length);
    // Harder cases fail more: the hardest case passes less often than the easiest.
    const byId = new Map(report.cases.map((one) => [one.id, one]));
    expect(byId.get('payments-full')?.passes).toBeLessThan(byId.get('checkout-health')?.passes ?? 0);
    // The fault matrix: 4 tools × 8 faults, each cell tested (the plans call every one of them).
    expect(matrix.cells).toHaveLength(32);
    expect(matrix.cells.every((cell) => cell.injected > 0 && cell.recoveryRate !== null)).toBe(true);
    // A failing tool costs passes: some cell recovers less often than the same trials pass unfaulted.
    expect(
      matrix.cells.some((cell) => (cell.recoveryRate ?? 1) < (cell.baselinePassRateOnFaulted ?? 0)),
    ).toBe(true);
    // A slow tool changes nothing but time: the same trials pass as often.
    for (const cell of matrix.cells.filter((one) => one.fault === 'slow'))
      expect(cell.recoveryRate).toBe(cell.baselinePassRateOnFaulted);
  });

  it('judge-calibration: raw agreement looks fine while κ, position flips and padding expose the judge', async () => {
    const { calibration, summary, model } = await judgeCalibration();
    expect(calibration.n).toBe(60);
    expect(calibration.agreement).toBeGreaterThanOrEqual(0.8);
    expect(calibration.kappa).toBeLessThan(0.4);
    expect(calibration.positionFlipRate).toBeGreaterThan(0);
    expect(calibration.verbositySensitivity).toBeGreaterThan(0);
    expect(calibration.invalidRate).toBe(0);
    expect(summary.warning).toMatch(/below the required 0\.60/);
    model.assertDone();
  });

  it('route-support-tickets: the fitted threshold is above 0.5, meets its target, and production stays in band', async () => {
    const { calibration, production, check, costUsd } = await routeTickets();
    expect(calibration.threshold.value).toBeGreaterThan(0.5);
    expect(calibration.misrouteRate.interval[1]).toBeLessThanOrEqual(0.05);
    expect(production.requests).toBe(100);
    expect(production.escalated).toBeGreaterThan(0);
    expect(check.kind).toBe('ok');
    // Cheaper than sending all 100 to the large model (800 in, 40 out at $15/$75).
    expect(costUsd).toBeLessThan((100 * (800 * 15 + 40 * 75)) / 1e6);
  });
});

describe('pipeline examples run offline', () => {
  it('nightly-summary: the send fails, the re-run restores every stage and pays for no summary twice', async () => {
    const { first, second, sent, model, budget } = await nightlySummary();
    expect(first.outcome).toMatchObject({ kind: 'stage_error', stage: 'nightly/send' });
    expect(first.modelCalls).toBe(3);
    expect(second.outcome).toEqual({ kind: 'completed', output: { sent: true, lines: 3 } });
    expect(second.modelCalls).toBe(0);
    expect(sent).toHaveLength(1);
    expect(budget.spent().calls).toBe(3);
    model.assertDone();
  });

  it('per-file-migration: 4 files migrated, the invalid and the hung one labeled for review', async () => {
    const { result } = await perFileMigration();
    expect(result.outcome.kind).toBe('completed');
    if (result.outcome.kind !== 'completed') return;
    expect(result.outcome.output.migrated).toHaveLength(4);
    expect(result.outcome.output.review).toEqual(['changelog.md: invalid_output', 'huge.md: timed_out']);
  });

  it('ticket-triage: one model call per ticket; an unknown category goes to the fallback, labeled', async () => {
    const { results, trace, model } = await ticketTriage();
    expect(results.map((result) => result.modelCalls)).toEqual([1, 1, 1]);
    expect(
      results.map((result) => result.outcome.kind === 'completed' && result.outcome.output.category),
    ).toEqual(['billing', 'bug', 'general']);
    expect(results[0]?.outcome).toMatchObject({ output: { account: 'enterprise' } });
    expect(
      trace.events
        .filter((event) => event.type === 'route')
        .map((event) => event.type === 'route' && event.fallback),
    ).toEqual([false, false, true]);
    model.assertDone();
  });
});
