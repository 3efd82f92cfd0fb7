import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fakeClock } from '../testing/fake-clock.js';
import type { ScriptedTurn } from '../testing/scripted-model.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { EvalSuite, TrialRecord } from './eval-types.js';
import { memoryEvalResultsStore } from './results-store.js';
import { runEval } from './run-eval.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a thing up.',
  effect: 'read',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key, value: `value of ${key}` }),
});
const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  effect: 'destructive',
  input: z.object({ order: z.string() }),
  execute: () => ({ ok: true }),
});

type Behaviour = 'right' | 'wrong' | 'loop' | 'hallucinate' | 'refund' | 'wander';

function scriptFor(behaviour: Behaviour): ScriptedTurn[] {
  const look = { name: 'lookup', input: { key: 'a' } };
  switch (behaviour) {
    case 'right':
      return [{ toolCalls: [look] }, { text: 'The value is value of a.' }];
    case 'wrong':
      return [{ toolCalls: [look] }, { text: 'The value is 42.' }];
    case 'loop':
      return [{ toolCalls: [look] }, { toolCalls: [look] }, { toolCalls: [look] }, { toolCalls: [look] }];
    case 'hallucinate':
      return [{ toolCalls: [{ name: 'search_everything', input: {} }] }, { text: 'No idea, 42.' }];
    case 'refund':
      return [{ toolCalls: [{ name: 'refund', input: { order: 'o-1' } }] }];
    case 'wander':
      return [1, 2, 3, 4].map((i) => ({ toolCalls: [{ name: 'lookup', input: { key: `k${i}` } }] }));
  }
}

/** A suite whose model behaves as the trial's seed draws it, with the given odds of answering right. */
function suiteOf(
  behaviours: Record<string, (random: () => number) => Behaviour>,
  calls?: { n: number },
): EvalSuite {
  return {
    name: 'unit',
    cases: Object.keys(behaviours).map((id) => ({
      id,
      input: `question ${id}`,
      expect: ({ answer }) => answer?.includes('value of a') === true,
    })),
    agent: ({ caseId, random }) => {
      const behaviour = (behaviours[caseId] as (random: () => number) => Behaviour)(random);
      const script = scriptFor(behaviour);
      // Counts trials that ran (their first model call), not trials built to check a stored one.
      const [first, ...rest] = script;
      const counted = calls
        ? [
            () => {
              calls.n++;
              return first as ScriptedTurn;
            },
            ...rest,
          ]
        : script;
      return {
        model: scriptedModel(counted),
        tools: [lookup, refund],
        maxSteps: 3,
        onStepLimit: 'stop',
        repeatLimit: 2,
        clock: fakeClock(),
      };
    },
  };
}

const coin = (p: number) => (random: () => number) => (random() < p ? 'right' : 'wrong');

describe('runEval', () => {
  it('runs k trials per case and computes the unbiased estimators per case', async () => {
    const suite = suiteOf({ always: () => 'right', never: () => 'wrong', half: coin(0.5) });
    const report = await runEval(suite, { trials: 8, k: 2, clock: fakeClock() });
    expect(report.summary.trials).toBe(24);
    const always = report.cases.find((one) => one.id === 'always');
    const never = report.cases.find((one) => one.id === 'never');
    expect(always).toMatchObject({ n: 8, passes: 8, passAtK: 1, passHatK: 1 });
    expect(never).toMatchObject({ n: 8, passes: 0, passAtK: 0, passHatK: 0 });
    const half = report.cases.find((one) => one.id === 'half');
    const c = half?.passes ?? 0;
    // pass^2 = C(c,2)/C(8,2), never the plug-in (c/8)^2.
    expect(half?.passHatK).toBeCloseTo((c * (c - 1)) / (8 * 7), 12);
    expect(report.failureClasses.wrong_answer).toBe(8 + (8 - c));
    expect(report.summary.passRateCi95[0]).toBeLessThan(report.summary.passRate);
    expect(report.summary.passRateCi95[1]).toBeGreaterThan(report.summary.passRate);
  });

  it('is reproducible: the same seed gives the same trials at any concurrency; another seed draws others', async () => {
    const behaviours = { a: coin(0.5), b: coin(0.3), c: coin(0.7) };
    const strip = (records: TrialRecord[]) =>
      records.map(({ caseId, trial, seed, pass }) => ({ caseId, trial, seed, pass }));
    const one = await runEval(suiteOf(behaviours), {
      trials: 10,
      concurrency: 1,
      seed: 7,
      clock: fakeClock(),
    });
    const four = await runEval(suiteOf(behaviours), {
      trials: 10,
      concurrency: 4,
      seed: 7,
      clock: fakeClock(),
    });
    const other = await runEval(suiteOf(behaviours), {
      trials: 10,
      concurrency: 4,
      seed: 8,
      clock: fakeClock(),
    });
    expect(strip(four.trials)).toEqual(strip(one.trials));
    expect(four.summary).toEqual(one.summary);
    expect(strip(other.trials)).not.toEqual(strip(one.trials));
    expect(new Set(one.trials.map((trial) => trial.seed)).size).toBe(30);
  });

  it('classifies each failure from the outcome and the trace', async () => {
    const report = await runEval(
      suiteOf({
        wrong: () => 'wrong',
        loop: () => 'loop',
        hallucinate: () => 'hallucinate',
        refund: () => 'refund',
        wander: () => 'wander',
      }),
      { trials: 1, clock: fakeClock() },
    );
    const classOf = (id: string) => report.trials.find((trial) => trial.caseId === id)?.failureClass;
    expect(classOf('wrong')).toBe('wrong_answer');
    expect(classOf('loop')).toBe('looped');
    expect(classOf('hallucinate')).toBe('hallucinated_tool');
    expect(classOf('refund')).toBe('needed_person');
    expect(classOf('wander')).toBe('step_cap');
    const loop = report.trials.find((trial) => trial.caseId === 'loop');
    expect(loop?.trajectory.repeatedCalls).toBeGreaterThan(0);
    const hallucinated = report.trials.find((trial) => trial.caseId === 'hallucinate');
    expect(hallucinated?.trajectory).toMatchObject({
      unknownToolCalls: 1,
      invalidToolCalls: 1,
      wastedSteps: 1,
    });
    expect(report.trajectory.toolCallValidity).toBeLessThan(1);
  });

  it('fails a trial that answers right by the wrong path, as a trajectory failure', async () => {
    const suite = suiteOf({ right: () => 'right' });
    const report = await runEval(
      {
        ...suite,
        cases: [
          { ...(suite.cases[0] as EvalSuite['cases'][number]), trajectory: { mustNotCall: ['lookup'] } },
        ],
      },
      { trials: 2, clock: fakeClock() },
    );
    expect(report.trials.map((trial) => [trial.pass, trial.failureClass, trial.reason])).toEqual([
      [false, 'trajectory', 'lookup was called'],
      [false, 'trajectory', 'lookup was called'],
    ]);
  });

  it('a predicate that throws or returns junk fails the trial with a reason, and the eval goes on', async () => {
    const suite = suiteOf({ a: () => 'right', b: () => 'right' });
    const cases = [
      {
        ...(suite.cases[0] as EvalSuite['cases'][number]),
        expect: () => {
          throw new Error('boom');
        },
      },
      { ...(suite.cases[1] as EvalSuite['cases'][number]), expect: () => 'yes' as never },
    ];
    const report = await runEval({ ...suite, cases }, { trials: 1, clock: fakeClock() });
    expect(report.trials.map((trial) => trial.reason)).toEqual([
      'the predicate threw: boom',
      'the predicate returned string, not a boolean or { pass }',
    ]);
  });

  it('stops cleanly when the shared budget is spent, and a resume runs only the missing trials', async () => {
    const calls = { n: 0 };
    const store = memoryEvalResultsStore();
    const suite = suiteOf({ a: coin(0.5), b: coin(0.5), c: coin(0.5) }, calls);
    const first = await runEval(suite, {
      trials: 10,
      concurrency: 2,
      store,
      budget: { tokens: 2_000 },
      clock: fakeClock(),
    });
    expect(first.stopped).toMatchObject({ budget: 'tokens', limit: 2_000 });
    expect(first.stopped?.actual).toBeGreaterThan(2_000);
    const recorded = first.trials.length;
    expect(recorded).toBeGreaterThan(0);
    expect(recorded).toBeLessThan(30);
    // Nothing cancelled by the budget was recorded as a failure.
    expect(first.trials.every((trial) => trial.outcome.kind !== 'cancelled')).toBe(true);
    const before = calls.n;
    const second = await runEval(suite, { trials: 10, concurrency: 2, store, clock: fakeClock() });
    expect(second.stopped).toBeNull();
    expect(second.summary.trials).toBe(30);
    expect(calls.n - before).toBe(30 - recorded);
    const fresh = await runEval(suite, { trials: 10, concurrency: 3, clock: fakeClock() });
    const strip = (records: TrialRecord[]) =>
      records.map(({ caseId, trial, pass }) => ({ caseId, trial, pass }));
    expect(strip(second.trials)).toEqual(strip(fresh.trials));
  });

  it('refuses options it cannot honour, with the option named', async () => {
    const suite = suiteOf({ a: () => 'right' });
    await expect(runEval(suite, { trials: 0 })).rejects.toThrow('trials');
    await expect(runEval(suite, { trials: 2, k: 3 })).rejects.toThrow('k: must be at most trials');
    await expect(runEval(suite, { budget: { usd: -1 } })).rejects.toThrow('budget.usd');
    await expect(runEval({ ...suite, cases: [...suite.cases, ...suite.cases] })).rejects.toThrow('two cases');
    await expect(runEval(suite, { cases: ['nope'] })).rejects.toThrow('no case "nope"');
  });
});

describe('runEval under abuse (from the adversarial review)', () => {
  const plainSuite = (system: string, calls: { n: number }, odds = 0.5): EvalSuite => ({
    name: 'review',
    cases: ['a', 'b'].map((id) => ({ id, input: `q ${id}`, expect: ({ answer }) => answer === 'right' })),
    agent: ({ random }) => {
      const text = random() < odds ? 'right' : 'wrong';
      return {
        system,
        model: scriptedModel([
          () => {
            calls.n++;
            return { text };
          },
        ]),
      };
    },
  });

  it('reuses a stored trial only under the same configuration: a changed prompt re-runs every trial', async () => {
    const store = memoryEvalResultsStore();
    const calls = { n: 0 };
    await runEval(plainSuite('v1', calls), { trials: 3, store });
    expect(calls.n).toBe(6);
    await runEval(plainSuite('v1', calls), { trials: 3, store });
    expect(calls.n).toBe(6);
    await runEval(plainSuite('v2', calls), { trials: 3, store });
    expect(calls.n).toBe(12);
    await runEval(plainSuite('v1', calls), { trials: 3, store, version: 'model weights 2' });
    expect(calls.n).toBe(18);
  });

  it('a ConfigurationError in one trial stops the others before it is thrown', async () => {
    const calls = { n: 0 };
    const suite = plainSuite('s', calls);
    const broken: EvalSuite = {
      ...suite,
      cases: Array.from({ length: 20 }, (_, i) => ({ id: `c${i}`, input: 'q', expect: () => true })),
      agent: (context) =>
        context.caseId === 'c3' ? { model: scriptedModel([]), maxSteps: -1 } : suite.agent(context),
    };
    await expect(runEval(broken, { trials: 5, concurrency: 4 })).rejects.toThrow('maxSteps');
    const atThrow = calls.n;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.n).toBe(atThrow);
    expect(calls.n).toBeLessThan(20);
  });

  it('a budget crossed by the last trial does not mark a finished eval as stopped', async () => {
    const calls = { n: 0 };
    const full = await runEval(plainSuite('s', calls), { trials: 2, concurrency: 1 });
    const spent = full.trials.reduce((sum, trial) => sum + trial.billedTokens, 0);
    const report = await runEval(plainSuite('s', calls), {
      trials: 2,
      concurrency: 1,
      budget: { tokens: spent - 1 },
    });
    expect(report.summary.trials).toBe(4);
    expect(report.stopped).toBeNull();
  });

  it('an outer signal is a named stop; a predicate that never settles is abandoned at the wall budget', async () => {
    const calls = { n: 0 };
    const controller = new AbortController();
    controller.abort();
    const cancelled = await runEval(plainSuite('s', calls), { trials: 3, signal: controller.signal });
    expect(cancelled.stopped).toMatchObject({ budget: 'signal', skippedTrials: 6 });
    const hanging: EvalSuite = {
      ...plainSuite('s', calls),
      cases: [{ id: 'hang', input: 'q', expect: () => new Promise<boolean>(() => {}) }],
    };
    const clock = fakeClock();
    const running = runEval(hanging, { trials: 2, clock, budget: { wallMs: 1_000 } });
    const report = await clock.runUntilSettled(running);
    expect(report.stopped).toMatchObject({ budget: 'wall_ms', cancelledTrials: 2, skippedTrials: 0 });
    expect(report.summary.trials).toBe(0);
  });

  it('a trial that hits its step cap fails, even when its forced final answer is right', async () => {
    const suite: EvalSuite = {
      name: 'cap',
      cases: [{ id: 'a', input: 'q', expect: ({ answer }) => answer?.includes('value of a') === true }],
      agent: () => ({
        model: scriptedModel([
          { toolCalls: [{ name: 'lookup', input: { key: 'a' } }] },
          { text: 'The value is value of a.' },
        ]),
        tools: [lookup],
        maxSteps: 2,
      }),
    };
    const report = await runEval(suite, { trials: 1 });
    expect(report.trials[0]).toMatchObject({
      pass: false,
      failureClass: 'step_cap',
      outcome: { kind: 'step_limit' },
    });
    expect(report.trials[0]?.reason).toMatch(/ended step_limit, not answered/);
    const accepting = {
      ...suite,
      cases: [{ ...(suite.cases[0] as EvalSuite['cases'][number]), acceptOutcomes: ['step_limit' as const] }],
    };
    expect((await runEval(accepting, { trials: 1 })).trials[0]?.pass).toBe(true);
  });

  it('mustNotCall counts a call whose tool ran even when its output failed the tool\u2019s checks', async () => {
    let deleted = 0;
    const remove = defineTool({
      name: 'remove',
      description: 'Removes a record.',
      effect: 'read',
      input: z.object({ id: z.string() }),
      output: z.object({ ok: z.literal(true) }),
      execute: () => {
        deleted++;
        return { ok: 'yes' } as unknown as { ok: true };
      },
    });
    const report = await runEval(
      {
        name: 'side-effect',
        cases: [{ id: 'a', input: 'q', expect: () => true, trajectory: { mustNotCall: ['remove'] } }],
        agent: () => ({
          model: scriptedModel([{ toolCalls: [{ name: 'remove', input: { id: 'x' } }] }, { text: 'done' }]),
          tools: [remove],
        }),
      },
      { trials: 1 },
    );
    expect(deleted).toBe(1);
    expect(report.trials[0]).toMatchObject({ pass: false, reason: 'remove was called' });
    // The tool failed its own checks: the model's call was valid.
    expect(report.trajectory.toolCallValidity).toBe(1);
  });
});

describe('runEval resume under a spent budget', () => {
  it('stored spend over the budget starts no new trial (no model call is paid for and thrown away)', async () => {
    const calls = { n: 0 };
    const store = memoryEvalResultsStore();
    const suite: EvalSuite = {
      name: 'spent',
      cases: ['a', 'b', 'c'].map((id) => ({ id, input: 'q', expect: () => true })),
      agent: () => ({
        model: scriptedModel([
          () => {
            calls.n++;
            return { text: 'ok' };
          },
        ]),
      }),
    };
    const first = await runEval(suite, { trials: 10, concurrency: 2, store, budget: { tokens: 100 } });
    expect(first.stopped?.budget).toBe('tokens');
    const before = calls.n;
    const again = await runEval(suite, { trials: 10, concurrency: 2, store, budget: { tokens: 100 } });
    expect(calls.n).toBe(before);
    expect(again.stopped).toMatchObject({ budget: 'tokens', cancelledTrials: 0 });
    expect(again.summary.trials).toBe(first.summary.trials);
  });
});
