import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../src/loop/run-agent.js';
import { jsonlTraceSink } from '../src/node/jsonl-trace-sink.js';
import { cascadeModel, structuralTrigger, type TriggerThreshold } from '../src/routing/index.js';
import { fakeClock, fakeClockEpoch } from '../src/testing/fake-clock.js';
import { scriptedModel } from '../src/testing/scripted-model.js';

// `reins stats` over cascade traces, as a user runs it: the built CLI (`npm test` builds first).
const cli = new URL('../dist/cli/reins.js', import.meta.url).pathname;
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
const day = 86_400_000;

let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'reins-routing-stats-'));
  const sink = jsonlTraceSink(join(dir, 'runs.jsonl'));
  // Twenty requests; the cheap tier answers eight of them too briefly, so 40 % escalate.
  for (let i = 0; i < 20; i++) {
    const cheap = scriptedModel([{ text: i % 5 < 2 ? 'no' : 'a complete answer' }], { name: 'cheap' });
    const strong = scriptedModel([{ text: 'a strong answer' }], { name: 'strong' });
    const model = cascadeModel({ tiers: [cheap, strong], escalate: structuralTrigger({ minChars: 5 }) });
    await runAgent({
      model,
      input: 'q',
      system: 'Answer briefly.',
      trace: sink,
      runId: `run_${i}`,
      clock: fakeClock(),
    });
  }
  const threshold = (low: number, high: number, fittedAtMs: number): TriggerThreshold => ({
    value: 0.8,
    fittedOn: { size: 2000, fingerprint: 'f' },
    fittedAtMs,
    escalationRate: { estimate: (low + high) / 2, interval: [low, high] },
  });
  const now = Date.now();
  writeFileSync(join(dir, 'in-band.json'), JSON.stringify({ threshold: threshold(0.35, 0.45, now - day) }));
  writeFileSync(join(dir, 'drifted.json'), JSON.stringify(threshold(0.02, 0.05, now - day)));
  writeFileSync(join(dir, 'stale.json'), JSON.stringify(threshold(0.35, 0.45, fakeClockEpoch - 400 * day)));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reins stats over cascade traces', () => {
  it('reports the escalation rate, by trigger and by answering tier, and each agent’s next-step tell', () => {
    const result = reins('stats', join(dir, 'runs.jsonl'), '--json');
    expect(result.status).toBe(0);
    const stats = JSON.parse(result.stdout);
    expect(stats.routing).toMatchObject({
      requests: 20,
      escalated: 8,
      byTrigger: { structural: 8 },
      answeredBy: { cheap: 12, strong: 8 },
    });
    expect(stats.agents).toMatchObject([
      { label: 'Answer briefly.', runs: 20, decisions: 20, straightLine: true },
    ]);
    const text = reins('stats', join(dir, 'runs.jsonl'));
    expect(text.stdout).toContain('escalation rate');
    expect(text.stdout).toContain('40.0% [');
    expect(text.stdout).toContain('loop around a straight line');
  });

  it('--trigger-threshold exits 1 on a drifted escalation rate or a stale calibration, 0 in band', () => {
    const check = (file: string) =>
      reins('stats', join(dir, 'runs.jsonl'), '--trigger-threshold', join(dir, file));
    expect(check('in-band.json').status).toBe(0);
    const drifted = check('drifted.json');
    expect(drifted.status).toBe(1);
    expect(drifted.stderr).toMatch(/escalation rate 40\.0% .* outside the calibrated 2\.0%–5\.0%/);
    const stale = check('stale.json');
    expect(stale.status).toBe(1);
    expect(stale.stderr).toMatch(/trigger calibration \d+\.\d days old > 30/);
  });
});
