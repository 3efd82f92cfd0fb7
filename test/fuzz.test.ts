/**
 * Property-based fuzzing of the loop's contract (README: "runAgent never throws for how a run
 * ends"): whatever the model, the tools, the callbacks, the options, the saved state or the trace
 * file, a run ends in a labeled outcome (or a synchronous ConfigurationError), never rejects, never
 * outlives `maxWallMs`, and never performs one side effect twice.
 *
 * Budget: `FUZZ_RUNS` (default 200) runs shared by every property here; `FUZZ_RUNS=100000` on
 * demand. fast-check prints the seed and path of a failure: replay it with `FUZZ_SEED=… FUZZ_PATH=…`; the default seed is fixed (`FUZZ_SEED=random` explores).
 * `FUZZ_COLLECT=1` (or `FUZZ_IGNORE=regex`) records violations instead of failing on the first one,
 * for long exploration runs; see test/fuzz/contract.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { z } from 'zod';
import {
  type AnyCheckpointStore,
  type CheckpointStore,
  MemoryCheckpointStore,
} from '../src/checkpoint/checkpoint-store.js';
import { isReinsError } from '../src/errors/reins-error.js';
import type { ApprovalVerdict } from '../src/loop/approval.js';
import type { RunOptions } from '../src/loop/options.js';
import { outcomeKinds } from '../src/loop/outcome.js';
import { resumeAgent, runAgent } from '../src/loop/run-agent.js';
import { assertRunState, parseRunState, type RunState } from '../src/loop/run-state.js';
import type { AssistantBlock } from '../src/model/content.js';
import type { Model } from '../src/model/model.js';
import { readJsonlTrace } from '../src/node/jsonl-trace-sink.js';
import { scriptedModel } from '../src/testing/scripted-model.js';
import { defineTool } from '../src/tools/define-tool.js';
import { ToolError } from '../src/tools/tool-error.js';
import { CompactTraceEncoder } from '../src/trace/compact-trace-encoder.js';
import type { TraceEvent } from '../src/trace/events.js';
import { replayTrace } from '../src/trace/replay.js';
import { memoryTraceSink } from '../src/trace/sink.js';
import {
  checked,
  collected,
  coverage,
  covered,
  expectContract,
  expectOncePerProposal,
  fuzzParameters,
  runsFor,
  violation,
} from './fuzz/contract.js';
import { drivenClock } from './fuzz/drive.js';
import { describe as show } from './fuzz/hostile.js';
import { junkFor } from './fuzz/junk.js';
import { fuzzModel, type TurnSpec, turnSpec } from './fuzz/models.js';
import { type Mutation, mutate, mutation } from './fuzz/mutate.js';
import { samples, sampleTools } from './fuzz/samples.js';
import { buildRun, type Scenario, scenario } from './fuzz/scenario.js';
import type { Execution } from './fuzz/tools.js';

const weights = {
  hostileModel: 3,
  hostileTools: 3,
  hostileCallbacks: 3,
  everything: 3,
  options: 3,
  exactlyOnce: 2,
  crash: 2,
  state: 3,
  trace: 3,
  ownTrace: 2,
};
const totalWeight = Object.values(weights).reduce((sum, weight) => sum + weight, 0);
// biome-ignore lint/suspicious/noExplicitAny: one budget for properties of every input type
const runs = (name: keyof typeof weights) => fuzzParameters<any>(runsFor(weights[name], totalWeight));

afterAll(() => {
  if (process.env['FUZZ_STATS'] === '1' || process.env['FUZZ_COLLECT'] === '1')
    console.log(`fuzz coverage:\n${[...coverage].map(([what, count]) => `  ${count}× ${what}`).join('\n')}`);
  if (collected.size === 0) return;
  const lines = [...collected].map(
    ([signature, { count, example }]) => `${count}× ${signature}\n  e.g. ${example}`,
  );
  console.log(`fuzz: ${collected.size} distinct violation(s) recorded\n${lines.join('\n')}`);
});

function resumeOptions(options: RunOptions): Omit<RunOptions, 'input' | 'runId' | 'system'> {
  const { input: _input, runId: _runId, system: _system, ...rest } = options;
  return rest;
}

/** One generated run, then a resume of the state it returned: both under the contract. */
async function runScenario(spec: Scenario): Promise<void> {
  const run = buildRun(spec);
  const maxWallMs = spec.limits.maxWallMs;
  const ran = await expectContract(() => runAgent(run.options), {
    clock: run.clock,
    maxWallMs,
    what: 'runAgent',
  });
  expectOncePerProposal(run.log, run.proposals);
  if (ran.kind !== 'result') return;
  const state = ran.result.state;
  try {
    assertRunState(state);
  } catch (thrown) {
    violation(`the loop's own state is rejected: ${show(thrown)}`);
  }
  let json: string;
  try {
    json = JSON.stringify(state);
  } catch (thrown) {
    violation(`the loop's own state is not JSON (${ran.result.outcome.kind}): ${show(thrown)}`);
  }
  try {
    parseRunState(json);
  } catch (thrown) {
    violation(`the loop's own state does not survive JSON: ${show(thrown)}`);
  }
  const fresh = run.freshModel('resumed');
  const outcome = ran.result.outcome;
  const approvals =
    outcome.kind === 'awaiting_approval'
      ? outcome.requests.map((request) => ({ approvalId: request.approvalId, decision: 'approve' as const }))
      : undefined;
  const resumed = await expectContract(
    () =>
      resumeAgent(state as RunState, {
        ...resumeOptions(run.options),
        model: fresh.model,
        ...(approvals ? { approvals } : {}),
      }),
    {
      clock: run.clock,
      maxWallMs,
      what: 'resumeAgent',
      ...(maxWallMs === undefined ? {} : { wallTimerMs: Math.max(0, maxWallMs - state.elapsedMs) }),
    },
  );
  expectOncePerProposal(run.log, new Map([...run.proposals, ...fresh.proposals]));
  if (resumed.kind !== 'result') violation(`resume of the loop's own state threw: ${show(resumed.error)}`);
}

describe('fuzz: the loop keeps its contract', () => {
  it('against hostile model responses (bad blocks, circular and deep input, bad usage, hostile throws, hangs)', async () => {
    const arbitrary = scenario({ hostileModel: true, hostileTools: false, callbacks: false, hang: true });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('hostile model', () => runScenario(spec), spec)),
      runs('hostileModel'),
    );
  });

  it('against hostile tools (execute, validate, preconditions, invariants, output schemas)', async () => {
    const arbitrary = scenario({ hostileModel: false, hostileTools: true, callbacks: false, hang: true });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('hostile tools', () => runScenario(spec), spec)),
      runs('hostileTools'),
    );
  });

  it('against hostile callbacks (authorizer, prepareStep, worldState, sinks, stores, limiter, signal)', async () => {
    const arbitrary = scenario({ hostileModel: false, hostileTools: false, callbacks: true, hang: true });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('hostile callbacks', () => runScenario(spec), spec)),
      runs('hostileCallbacks'),
    );
  });

  it('against everything hostile at once', async () => {
    const arbitrary = scenario({
      hostileModel: true,
      hostileTools: true,
      callbacks: true,
      hang: true,
      prototypeNames: true,
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('everything', () => runScenario(spec), spec)),
      runs('everything'),
    );
  });
});

describe('fuzz: option objects', () => {
  const fields = Object.keys(junkFor(drivenClock(), null));
  it('random option objects, wrong types included: a ConfigurationError at call time or a labeled outcome', async () => {
    const arbitrary = fc.record({
      base: scenario({ hostileModel: false, hostileTools: false, callbacks: false, hang: false }),
      junk: fc.array(fc.record({ field: fc.constantFrom(...fields), pick: fc.nat() }), {
        minLength: 1,
        maxLength: 3,
      }),
      whole: fc.option(fc.constantFrom<unknown>(null, 5, 'options', []), { nil: undefined, freq: 20 }),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) =>
        checked(
          'options',
          async () => {
            const run = buildRun(spec.base);
            const junk = junkFor(run.clock, run.options.tools?.[0]);
            const options: Record<string, unknown> = { ...run.options };
            for (const { field, pick } of spec.junk) {
              const pool = junk[field] as (() => unknown)[];
              options[field] = (pool[pick % pool.length] as () => unknown)();
            }
            const wall = options['maxWallMs'];
            const maxWallMs =
              typeof wall === 'number' && wall > 0 && options['clock'] === run.clock ? wall : undefined;
            const given = spec.whole === undefined ? options : spec.whole;
            await expectContract(() => runAgent(given as RunOptions), { clock: run.clock, maxWallMs });
          },
          spec,
        ),
      ),
      runs('options'),
    );
  });
});

describe('fuzz: exactly once', () => {
  it('a destructive approved call runs exactly once, however often its paused state is resumed', async () => {
    const arbitrary = fc.record({
      store: fc.constantFrom('memory' as const, 'none' as const, 'legacy' as const),
      concurrent: fc.boolean(),
      source: fc.constantFrom('same' as const, 'clone' as const, 'json' as const, 'load' as const),
      decision: fc.constantFrom('approve' as const, 'edit' as const),
      siblings: fc.nat(2),
      rePause: fc.boolean(),
      resumes: fc.integer({ min: 2, max: 3 }),
      after: fc.array(turnSpec({ toolNames: ['wire', 'lookup'], hostile: false, hang: false }), {
        maxLength: 3,
      }),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('exactly once', () => doubleResume(spec), spec)),
      runs('exactlyOnce'),
    );
  });

  it('a resume after a crash never re-runs a completed step\u2019s calls', async () => {
    const arbitrary = fc.record({
      steps: fc.integer({ min: 1, max: 6 }),
      calls: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 6, maxLength: 6 }),
      crashes: fc.array(
        fc.record({
          afterCommits: fc.nat(8),
          mode: fc.constantFrom('before' as const, 'after' as const, 'hang' as const),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      concurrency: fc.integer({ min: 1, max: 3 }),
      flakyAt: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('crash', () => crashAndResume(spec), spec)),
      runs('crash'),
    );
  });
});

describe('fuzz: saved states and traces', () => {
  it('a mutated RunState: a labeled state error at call time, or a resume to a labeled outcome', async () => {
    const arbitrary = fc.record({
      which: fc.nat(),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
      viaJson: fc.boolean(),
      store: fc.boolean(),
      turns: fc.array(turnSpec({ toolNames: ['lookup', 'wipe'], hostile: false, hang: false }), {
        maxLength: 2,
      }),
    });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('state', () => resumeMutated(spec), spec)),
      runs('state'),
    );
  });

  it('the loop\u2019s own trace of a well-behaved run replays to its recorded outcome', async () => {
    const arbitrary = scenario({ hostileModel: false, hostileTools: true, callbacks: false, hang: true });
    await fc.assert(
      fc.asyncProperty(arbitrary, (spec) => checked('own trace', () => replayOwnTrace(spec), spec)),
      runs('ownTrace'),
    );
  });

  it('replayTrace on random and mutated trace files returns, or throws a ReinsError', async () => {
    await fc.assert(
      fc.asyncProperty(traceInput, (spec) => checked('trace', () => replayFuzzed(spec), spec)),
      runs('trace'),
    );
  });
});

let uniqueRuns = 0;

interface DoubleResume {
  store: 'memory' | 'none' | 'legacy';
  concurrent: boolean;
  source: 'same' | 'clone' | 'json' | 'load';
  decision: 'approve' | 'edit';
  siblings: number;
  rePause: boolean;
  resumes: number;
  after: TurnSpec[];
}

async function doubleResume(spec: DoubleResume): Promise<void> {
  const clock = drivenClock();
  const log: Execution[] = [];
  const tools = [
    defineTool({
      name: 'wire',
      description: 'Send money.',
      effect: 'destructive',
      input: z.object({ amount: z.number() }),
      execute: ({ amount }, context) => {
        log.push({
          runId: context.runId,
          step: context.step,
          callId: context.callId,
          tool: 'wire',
          input: amount,
        });
        return { sent: amount };
      },
    }),
    defineTool({
      name: 'lookup',
      description: 'Look up.',
      effect: 'read',
      input: z.object({}).passthrough(),
      execute: (input, context) => {
        log.push({ runId: context.runId, step: context.step, callId: context.callId, tool: 'lookup', input });
        return { found: true };
      },
    }),
  ];
  const inner = new MemoryCheckpointStore();
  const store: AnyCheckpointStore | undefined =
    spec.store === 'memory'
      ? inner
      : spec.store === 'legacy'
        ? { save: (state: RunState) => inner.save(state), load: (runId: string) => inner.load(runId) }
        : undefined;
  const runId = `once-${++uniqueRuns}`;
  const first = await expectContract(
    () =>
      runAgent({
        model: scriptedModel([
          {
            text: 'Paying.',
            toolCalls: [
              { name: 'wire', input: { amount: 120 } },
              ...Array.from({ length: spec.siblings }, (_, i) => ({ name: 'lookup', input: { i } })),
            ],
          },
        ]),
        input: 'pay invoice 7',
        tools,
        runId,
        clock,
        ...(store ? { checkpoint: store } : {}),
      }),
    { clock, maxWallMs: undefined },
  );
  if (first.kind !== 'result') violation('the paused run did not start');
  const paused = first.result;
  if (paused.outcome.kind !== 'awaiting_approval')
    violation(`a confirm tool did not pause the run: ${paused.outcome.kind}`);
  const request = paused.outcome.requests.find((entry) => entry.tool === 'wire');
  if (!request) violation('no approval request for the wire');
  const verdict =
    spec.decision === 'approve'
      ? { approvalId: request.approvalId, decision: 'approve' as const }
      : { approvalId: request.approvalId, decision: 'edit' as const, input: { amount: 99 } };
  const stateFor = (): RunState => {
    if (spec.source === 'same') return paused.state;
    if (spec.source === 'json') return JSON.parse(JSON.stringify(paused.state)) as RunState;
    if (spec.source === 'load' && store) return inner.load(runId) as RunState;
    return structuredClone(paused.state);
  };
  let models = 0;
  const resume = (approvals: ApprovalVerdict[]) => () =>
    resumeAgent(stateFor(), {
      model: fuzzModel(spec.after, clock, { idPrefix: `resume${++models}` }).model,
      tools,
      clock,
      approvals,
      ...(store ? { checkpoint: store } : {}),
    });
  if (spec.rePause) {
    const again = await expectContract(resume([]), { clock, maxWallMs: undefined });
    if (again.kind === 'result' && again.result.outcome.kind !== 'awaiting_approval')
      violation(`a resume without a verdict did not stay paused: ${again.result.outcome.kind}`);
    if (log.length > 0) violation('a resume without a verdict ran something');
  }
  if (spec.concurrent) {
    const started = Array.from({ length: spec.resumes }, () => {
      const start = resume([verdict]);
      try {
        return { promise: start() };
      } catch (thrown) {
        return { thrown };
      }
    });
    for (const entry of started)
      await expectContract(
        () => {
          if ('thrown' in entry) throw entry.thrown;
          return entry.promise;
        },
        { clock, maxWallMs: undefined },
      );
  } else {
    for (let i = 0; i < spec.resumes; i++)
      await expectContract(resume([verdict]), { clock, maxWallMs: undefined });
  }
  const wires = log.filter((entry) => entry.callId === request.callId && entry.tool === 'wire').length;
  if (wires > 1) violation(`the approved wire ran ${wires}× across ${spec.resumes} resumes`);
  // Exactly once, not at most once: the first claim of a freshly paused state must win.
  if (wires === 0)
    violation(
      `the approved wire never ran: every resume of the paused state was refused (${spec.store} store, state from ${spec.source})`,
    );
  covered(
    `exactly once: the approved wire ran ${wires}× (${spec.store} store, ${spec.concurrent ? 'concurrent' : 'sequential'})`,
  );
  const siblings = new Map<string, number>();
  for (const entry of log.filter((e) => e.tool === 'lookup' && e.callId.startsWith('call_'))) {
    const count = (siblings.get(entry.callId) ?? 0) + 1;
    siblings.set(entry.callId, count);
    if (count > 1) violation(`a sibling call of the approved batch (${entry.callId}) ran ${count}×`);
  }
}

interface Crash {
  steps: number;
  calls: number[];
  crashes: { afterCommits: number; mode: 'before' | 'after' | 'hang' }[];
  concurrency: number;
  flakyAt: number | undefined;
}

/** A store that "dies" after some commits: the write fails (or lands, or never returns) and nothing more is written. */
function dyingStore(
  inner: MemoryCheckpointStore,
  crash: Crash['crashes'][number] | undefined,
): CheckpointStore {
  let commits = 0;
  let dead = false;
  return {
    commit(commit) {
      if (dead) throw new Error('the process is gone');
      if (crash && commits++ >= crash.afterCommits) {
        dead = true;
        if (crash.mode === 'after') inner.commit(commit);
        if (crash.mode === 'hang') return new Promise(() => {});
        throw new Error('crashed');
      }
      return inner.commit(commit);
    },
    load: (runId) => inner.load(runId),
  };
}

async function crashAndResume(spec: Crash): Promise<void> {
  const clock = drivenClock();
  const log: Execution[] = [];
  const record = defineTool({
    name: 'record',
    description: 'Record a step.',
    effect: 'read',
    input: z.object({ step: z.number(), j: z.number() }),
    execute: (input, context) => {
      log.push({ runId: context.runId, step: context.step, callId: context.callId, tool: 'record', input });
      return `recorded ${input.step}.${input.j}`;
    },
  });
  const flaky = defineTool({
    name: 'flaky',
    description: 'Fails for good.',
    effect: 'read',
    input: z.object({ step: z.number() }),
    execute: () => {
      throw new ToolError('gone', { code: 'gone', retry: 'no' });
    },
  });
  // The step a call belongs to comes from the transcript, so every process proposes the same calls for it.
  const model = (): Model => ({
    name: 'crashy',
    async generate(request) {
      const step = request.messages.filter((message) => message.role === 'assistant').length + 1;
      if (step > spec.steps)
        return { content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage: usage() };
      const content: AssistantBlock[] = [{ type: 'text', text: `step ${step}` }];
      for (let j = 0; j < (spec.calls[step - 1] ?? 1); j++)
        content.push({ type: 'tool_use', id: `s${step}_${j}`, name: 'record', input: { step, j } });
      if (spec.flakyAt === step)
        content.push({ type: 'tool_use', id: `f${step}`, name: 'flaky', input: { step } });
      return { content, stopReason: 'tool_use', usage: usage() };
    },
  });
  const inner = new MemoryCheckpointStore();
  const runId = `crash-${++uniqueRuns}`;
  const options = {
    tools: [record, flaky],
    clock,
    maxSteps: spec.steps + 2,
    maxWallMs: 600_000,
    toolConcurrency: spec.concurrency,
  };
  await expectContract(
    () =>
      runAgent({
        ...options,
        model: model(),
        input: 'record every step',
        runId,
        checkpoint: dyingStore(inner, spec.crashes[0]),
      }),
    { clock, maxWallMs: options.maxWallMs, what: 'runAgent' },
  );
  for (const crash of [...spec.crashes.slice(1), undefined]) {
    const loaded = inner.load(runId);
    if (!loaded) return;
    const before = log.length;
    // Each process gets the run's budget again, so a crash that used it all still leaves one to resume with.
    const maxWallMs = loaded.elapsedMs + options.maxWallMs;
    const ran = await expectContract(
      () =>
        resumeAgent(loaded, { ...options, maxWallMs, model: model(), checkpoint: dyingStore(inner, crash) }),
      { clock, maxWallMs, what: 'resumeAgent', wallTimerMs: options.maxWallMs },
    );
    const ranBefore = new Set(log.slice(0, before).map((entry) => entry.callId));
    if (loaded.step > 0) covered('crash: resumed a checkpoint with completed steps');
    if (log.slice(before).some((entry) => ranBefore.has(entry.callId)))
      covered('crash: the in-flight step ran again (at-least-once window)');
    for (const entry of log.slice(before)) {
      const step = (entry.input as { step: number }).step;
      if (step <= loaded.step)
        violation(
          `after a crash, call ${entry.callId} of step ${step} ran again though the checkpoint had completed step ${loaded.step}`,
        );
    }
    if (ran.kind === 'result' && ran.result.outcome.kind === 'stale_state')
      violation(
        `the only process resuming the checkpoint was refused: ${JSON.stringify(ran.result.outcome)}`,
      );
  }
}

function usage() {
  return { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

interface MutatedState {
  which: number;
  mutations: Mutation[];
  viaJson: boolean;
  store: boolean;
  turns: TurnSpec[];
}

async function resumeMutated(spec: MutatedState): Promise<void> {
  const { states } = await samples();
  const base = states[spec.which % states.length] as RunState;
  const mutated = mutate({ ...base, runId: `${base.runId}-m${++uniqueRuns}` }, spec.mutations);
  let state: RunState = mutated;
  if (spec.viaJson) {
    let text: string;
    try {
      text = JSON.stringify(mutated);
    } catch {
      return;
    }
    try {
      state = parseRunState(text);
    } catch (thrown) {
      if (
        isReinsError(thrown) &&
        (thrown.reason === 'corrupt_state' || thrown.reason === 'unsupported_state_version')
      )
        return;
      violation(`parseRunState threw ${show(thrown)}`);
    }
  }
  const clock = drivenClock();
  const outcome = base.outcome;
  const approvals =
    outcome?.kind === 'awaiting_approval'
      ? outcome.requests.map((request) => ({ approvalId: request.approvalId, decision: 'approve' as const }))
      : undefined;
  const ran = await expectContract(
    () =>
      resumeAgent(state, {
        model: fuzzModel(spec.turns, clock).model,
        tools: sampleTools(),
        clock,
        maxWallMs: 60_000,
        ...(approvals ? { approvals } : {}),
        ...(spec.store ? { checkpoint: new MemoryCheckpointStore() } : {}),
      }),
    { clock, maxWallMs: 60_000, stateErrors: true },
  );
  covered(
    ran.kind === 'result'
      ? `state: accepted, resumed to ${ran.result.outcome.kind}`
      : `state: refused (${ran.kind})`,
  );
}

const eventTypes = [
  'run-start',
  'step-prepare',
  'step-start',
  'budget-check',
  'model-response',
  'model-error',
  'repeat-check',
  'authorization',
  'tool-call',
  'tool-result',
  'taint-check',
  'approval-request',
  'approval',
  'tool-late-result',
  'progress-check',
  'step-end',
  'run-end',
  'no-such-event',
];

const randomEvent = fc.record(
  {
    v: fc.constantFrom<unknown>(1, 1, 1, 2, '1'),
    runId: fc.constantFrom<unknown>('r1', 'r1', 'r2', 5),
    seq: fc.oneof(fc.nat(12), fc.constant(-1), fc.constant('3')),
    at: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constant(Number.NaN)),
    type: fc.constantFrom(...eventTypes),
    step: fc.oneof(fc.nat(4), fc.constant(null)),
    callId: fc.constantFrom('c1', 'c2'),
    tool: fc.constantFrom('lookup', 'wipe', 5),
    limits: fc.oneof(fc.constant(undefined), fc.constant(null), fc.object({ maxDepth: 1 })),
    messages: fc.oneof(fc.constant([]), fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })),
    tools: fc.oneof(fc.constant([]), fc.constant(undefined), fc.jsonValue({ maxDepth: 2 })),
    response: fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 3 })),
    outcome: fc.oneof(
      fc.constant(undefined),
      fc.record({ kind: fc.constantFrom('answered', 'cancelled', 'over_budget', 'boom'), text: fc.string() }),
    ),
    request: fc.oneof(fc.constant(undefined), fc.object({ maxDepth: 1 })),
    changes: fc.oneof(fc.constant(undefined), fc.object({ maxDepth: 1 })),
    resumedFrom: fc.oneof(fc.constant(null), fc.constant(undefined), fc.object({ maxDepth: 1 })),
    error: fc.oneof(fc.constant(undefined), fc.record({ name: fc.string(), message: fc.string() })),
  },
  { requiredKeys: ['type'] },
);

const traceInput = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('mutated' as const),
      which: fc.nat(),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
      drop: fc.option(fc.nat(), { nil: undefined }),
      duplicate: fc.option(fc.nat(), { nil: undefined }),
      asFile: fc.boolean(),
      compact: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('random' as const),
      events: fc.array(
        fc.oneof({ weight: 9, arbitrary: randomEvent }, { weight: 1, arbitrary: fc.jsonValue() }),
        {
          maxLength: 8,
        },
      ),
      asFile: fc.boolean(),
      compact: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('text' as const),
      lines: fc.array(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc.constantFrom(
            '{"v":1',
            '{"v":1,"type":"run-start","runId":"r","seq":0,"at":0}',
            'null',
            '5',
            '[]',
          ),
        ),
        { maxLength: 6 },
      ),
    }),
  },
);

type TraceInput = typeof traceInput extends fc.Arbitrary<infer T> ? T : never;
const traceDir = mkdtempSync(join(tmpdir(), 'reins-fuzz-trace-'));
afterAll(() => rmSync(traceDir, { recursive: true, force: true }));
let traceFiles = 0;

async function replayFuzzed(spec: TraceInput): Promise<void> {
  let events: unknown[];
  let text: string | undefined;
  if (spec.kind === 'text') text = spec.lines.join('\n');
  else {
    if (spec.kind === 'mutated') {
      const { traces } = await samples();
      events = mutate(traces[spec.which % traces.length] as TraceEvent[], spec.mutations) as unknown[];
      if (!Array.isArray(events)) events = [events];
      if (spec.drop !== undefined && events.length > 0) events.splice(spec.drop % events.length, 1);
      if (spec.duplicate !== undefined && events.length > 0)
        events.splice(spec.duplicate % events.length, 0, events[spec.duplicate % events.length]);
    } else events = spec.events;
    if (spec.asFile) {
      try {
        text = events.map((event) => JSON.stringify(event)).join('\n');
      } catch {
        text = undefined;
      }
      // What JSON can write, the compact encoding must write too, and the reader read back.
      if (text !== undefined && spec.compact) {
        const encoder = new CompactTraceEncoder();
        text = events.map((event) => encoder.encode(event as TraceEvent)).join('');
      }
    }
  }
  if (text !== undefined) {
    const path = join(traceDir, `trace-${++traceFiles}.jsonl`);
    writeFileSync(path, text);
    try {
      events = readJsonlTrace(path).events;
    } catch (thrown) {
      if (isReinsError(thrown)) return;
      violation(`readJsonlTrace threw ${show(thrown)}`);
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    Promise.resolve()
      .then(() => replayTrace(events as TraceEvent[]))
      .then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    new Promise<'hang'>((resolve) => {
      timer = setTimeout(() => resolve('hang'), 15_000);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === 'hang') violation('replayTrace did not settle within 15 s');
  if (!outcome.ok) {
    if (isReinsError(outcome.error)) return;
    violation(`replayTrace threw ${show(outcome.error)}`);
  }
  const kind = (outcome.value as { outcome?: { kind?: unknown } })?.outcome?.kind;
  if (!outcomeKinds.includes(kind as never))
    violation(`replayTrace returned no labeled outcome: ${show(kind)}`);
}

/** A run with a memory sink, then `replayTrace` of what it wrote: the same outcome, no problem reported. */
async function replayOwnTrace(spec: Scenario): Promise<void> {
  const run = buildRun(spec);
  const sink = memoryTraceSink();
  const ran = await expectContract(() => runAgent({ ...run.options, trace: sink }), {
    clock: run.clock,
    maxWallMs: spec.limits.maxWallMs,
    what: 'runAgent',
  });
  if (ran.kind !== 'result') return;
  // A model that repeats a call id in one response is not replayable by id (no provider does that).
  if ([...run.proposals.values()].some((count) => count > 1)) return;
  let replay: Awaited<ReturnType<typeof replayTrace>>;
  try {
    replay = await replayTrace(sink.events);
  } catch (thrown) {
    violation(`replayTrace of the loop's own trace threw ${show(thrown)}`);
  }
  if (!replay.matches)
    violation(
      `the loop's own trace does not replay: recorded ${show(replay.recorded)}, replayed ${show(replay.outcome)}; problems ${show(replay.problems)}; divergences ${show(replay.divergences)}`,
    );
}
