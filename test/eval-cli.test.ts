import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist/cli/reins.js');
const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
delete env['FORCE_COLOR'];
const reins = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env, cwd: dir, maxBuffer: 64 << 20 });
const dir = mkdtempSync(join(tmpdir(), 'reins-eval-cli-'));
const example = join(root, 'examples/eval-incident-agent.ts');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A JavaScript suite module: `odds` of a right answer per trial; every trial that runs (calls its model) is logged. */
function suiteFile(name: string, odds: number, extra = ''): string {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
import { scriptedModel } from ${JSON.stringify(join(root, 'dist/testing/index.js'))};
${extra}
export default {
  name: ${JSON.stringify(name)},
  cases: ['a', 'b', 'c'].map((id) => ({ id, input: 'question ' + id, expect: ({ answer }) => answer === 'right' })),
  agent: ({ caseId, trial, random }) => {
    const text = random() < ${odds} ? 'right' : 'wrong';
    return {
      model: scriptedModel([
        () => {
          appendFileSync(${JSON.stringify(join(dir, `${name}.starts`))}, caseId + ' ' + trial + '\\n');
          return { text };
        },
      ]),
    };
  },
};
`,
  );
  return file;
}
const starts = (name: string) =>
  readFileSync(join(dir, `${name}.starts`), 'utf8')
    .split('\n')
    .filter(Boolean);

describe('reins eval', () => {
  it('run --json prints the documented fields, through tsx for a TypeScript suite', () => {
    const run = reins('eval', 'run', example, '--trials', '3', '--json');
    expect(run.status, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.cases).toHaveLength(12);
    expect(Object.keys(report.cases[0])).toEqual(
      expect.arrayContaining(['id', 'n', 'passes', 'passAtK', 'passHatK']),
    );
    expect(Object.keys(report.summary)).toEqual(
      expect.arrayContaining(['k', 'passRate', 'passRateCi95', 'passAtK', 'passHatK', 'costP50', 'costP99']),
    );
    expect(report.summary.k).toBe(3);
    expect(typeof report.failureClasses).toBe('object');
    // Traces are left out of --json unless asked for.
    expect(report.trials.every((trial: { trace: unknown[] }) => trial.trace.length === 0)).toBe(true);
    // The HTML report is written by default (with every failed trial's trace), beside the tables.
    const html = readFileSync(join(dir, 'eval-report.html'), 'utf8');
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('incident-agent');
    rmSync(join(dir, 'eval-report.html'));
    expect(reins('eval', 'run', example, '--trials', '1', '--no-html', '--json').status).toBe(0);
    expect(existsSync(join(dir, 'eval-report.html'))).toBe(false);
  });

  it('a budget stops the eval with exit 1; --results resumes it without re-running a finished trial', () => {
    const file = suiteFile('resume', 0.5);
    const results = join(dir, 'resume.sqlite');
    const first = reins(
      'eval',
      'run',
      file,
      '--trials',
      '10',
      '--concurrency',
      '1',
      '--results',
      results,
      '--budget-tokens',
      '60',
      '--json',
    );
    expect(first.status).toBe(1);
    const stopped = JSON.parse(first.stdout);
    expect(stopped.stopped).toMatchObject({ budget: 'tokens', limit: 60 });
    const done = stopped.trials.map(
      (trial: { caseId: string; trial: number }) => `${trial.caseId} ${trial.trial}`,
    );
    expect(done.length).toBeGreaterThan(0);
    const before = starts('resume').length;
    const second = reins('eval', 'run', file, '--trials', '10', '--results', results, '--json');
    expect(second.status, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).summary.trials).toBe(30);
    const rerun = starts('resume').slice(before);
    expect(rerun).toHaveLength(30 - done.length);
    for (const trial of rerun) expect(done).not.toContain(trial);
  });

  it('--min-pass-rate fails the command under the bar; a judge without calibration leads the output', () => {
    const judged = suiteFile(
      'judged',
      0.5,
      `export const evalOptions = { judge: { judgeId: 'j', model: 'm', rubricVersion: '1', kappa: null, agreement: null, positionFlipRate: null, warning: 'judge j has no calibration on record: its verdicts are unmeasured' } };`,
    );
    const run = reins('eval', 'run', judged, '--trials', '4', '--min-pass-rate', '0.99');
    expect(run.status).toBe(1);
    expect(run.stdout.split('\n')[0]).toBe(
      'WARNING: judge j has no calibration on record: its verdicts are unmeasured',
    );
    expect(run.stderr).toMatch(/under --min-pass-rate/);
  });

  it('compare: the same seed is required; a worse candidate exits 1, noise exits 0', () => {
    const good = suiteFile('good', 0.95);
    const bad = suiteFile('bad', 0.2);
    const write = (file: string, ...args: string[]) => {
      const out = join(dir, `${file}.json`);
      const run = reins('eval', 'run', ...args, '--json');
      expect(run.status === 0 || run.status === 1).toBe(true);
      writeFileSync(out, run.stdout);
      return out;
    };
    const a = write('a', good, '--trials', '20');
    const b = write('b', bad, '--trials', '20');
    const a2 = write('a2', good, '--trials', '20');
    const other = write('other', good, '--trials', '20', '--seed', '9');
    const worse = reins('eval', 'compare', a, b);
    expect(worse.status).toBe(1);
    expect(worse.stdout).toMatch(/^the candidate passes less/);
    const same = reins('eval', 'compare', a, a2, '--json');
    expect(same.status).toBe(0);
    expect(JSON.parse(same.stdout).passRate.withinNoise).toBe(true);
    const mismatched = reins('eval', 'compare', a, other);
    expect(mismatched.status).toBe(2);
    expect(mismatched.stderr).toMatch(/trials pair only on the same seed/);
    writeFileSync(join(dir, 'junk.json'), '{"v": 2}');
    const junk = reins('eval', 'compare', a, join(dir, 'junk.json'));
    expect(junk.status).toBe(2);
    expect(junk.stderr).toMatch(/junk\.json/);
  });

  it('regress: a recorded run replayed under a lower step limit changes outcome and exits 1', () => {
    const trace = join(dir, 'happy.jsonl');
    expect(reins('demo', 'happy', '--trace-out', trace).status).toBe(0);
    const agent = join(dir, 'agent.mjs');
    writeFileSync(
      agent,
      `import { recordedModel } from ${JSON.stringify(join(root, 'dist/eval/index.js'))};
export const agent = (run) => ({ model: recordedModel(run), system: run.system, maxSteps: Number(process.env.STEPS), onStepLimit: 'stop', actor: { id: 'x', scopes: ['incidents:read'] } });
`,
    );
    const changed = spawnSync(process.execPath, [cli, 'eval', 'regress', trace, '--agent', agent, '--json'], {
      encoding: 'utf8',
      env: { ...env, STEPS: '2' },
    });
    expect(changed.status, changed.stderr).toBe(1);
    expect(JSON.parse(changed.stdout).diffs[0]).toMatchObject({
      outcomeChanged: true,
      recorded: { outcome: 'answered' },
      replayed: [{ outcome: 'step_limit' }],
    });
    const same = spawnSync(process.execPath, [cli, 'eval', 'regress', trace, '--agent', agent], {
      encoding: 'utf8',
      env: { ...env, STEPS: '6' },
    });
    expect(same.status, same.stderr).toBe(0);
    expect(same.stdout).toMatch(/0 changed outcome/);
  });

  it('a file that is not a suite, a missing file and bad flags are labeled usage errors (exit 2)', () => {
    const empty = join(dir, 'empty.mjs');
    writeFileSync(empty, 'export const nothing = 1;\n');
    const notSuite = reins('eval', 'run', empty);
    expect(notSuite.status).toBe(2);
    expect(notSuite.stderr).toMatch(/exports no suite/);
    expect(reins('eval', 'run', join(dir, 'missing.mjs')).status).toBe(2);
    const badK = reins('eval', 'run', suiteFile('k', 0.5), '--trials', '2', '--k', '3');
    expect(badK.status).toBe(2);
    expect(badK.stderr).toMatch(/k: must be at most trials/);
    expect(reins('eval', 'run', empty, '--trials', 'zero').status).toBe(2);
    const badFault = reins('eval', 'run', suiteFile('f', 0.5), '--trials', '1', '--fault-matrix', 'meteor');
    expect(badFault.status).toBe(2);
    expect(badFault.stderr).toMatch(/no fault meteor/);
  });
});
