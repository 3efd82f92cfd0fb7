import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import type { Model } from '../model/model.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { replayTrace } from '../trace/replay.js';
import { memoryTraceSink } from '../trace/sink.js';
import { resumeAgent, runAgent } from './run-agent.js';
import type { RunState } from './run-state.js';

const wires: number[] = [];
const wireMoney = defineTool({
  name: 'wire_money',
  description: 'Send money.',
  effect: 'destructive',
  input: z.object({ amount: z.number() }),
  execute: ({ amount }) => {
    wires.push(amount);
    return { sent: amount };
  },
});
const lookup = defineTool({
  name: 'lookup',
  description: 'Look up.',
  effect: 'read',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key }),
});

async function pausedWire(options: {
  checkpoint?: MemoryCheckpointStore;
  trace?: ReturnType<typeof memoryTraceSink>;
}) {
  const first = await runAgent({
    model: scriptedModel([
      { text: 'Paying the invoice.', toolCalls: [{ name: 'wire_money', input: { amount: 120 } }] },
    ]),
    input: 'pay invoice 7',
    tools: [wireMoney],
    runId: 'pay-1',
    clock: fakeClock(),
    ...options,
  });
  expect(first.outcome.kind).toBe('awaiting_approval');
  const request = first.outcome.kind === 'awaiting_approval' ? first.outcome.requests[0] : undefined;
  return { state: first.state, approvalId: request?.approvalId as string };
}

describe('exactly-once resume', () => {
  for (const withStore of [true, false]) {
    it(`a second resume of one approved state is refused and the wire runs once (${withStore ? 'memory store' : 'no store'})`, async () => {
      wires.length = 0;
      const store = withStore ? new MemoryCheckpointStore() : undefined;
      const { state, approvalId } = await pausedWire(store ? { checkpoint: store } : {});
      const again = () =>
        resumeAgent(structuredClone(state), {
          model: scriptedModel([{ text: 'Paid.' }]),
          tools: [wireMoney],
          approvals: [{ approvalId, decision: 'approve', by: 'ops' }],
          clock: fakeClock(),
          ...(store ? { checkpoint: store } : {}),
        });
      const first = await again();
      const second = await again();
      expect(first.outcome).toEqual({ kind: 'answered', text: 'Paid.' });
      expect(second.outcome).toMatchObject({ kind: 'stale_state', revision: state.revision });
      if (store) expect(second.outcome).toMatchObject({ currentRevision: store.load('pay-1')?.revision });
      expect(wires).toEqual([120]);
    });
  }

  it('two workers racing on one checkpoint: exactly one runs the approved batch', async () => {
    wires.length = 0;
    const store = new MemoryCheckpointStore();
    const { approvalId } = await pausedWire({ checkpoint: store });
    const worker = () =>
      resumeAgent(store.load('pay-1') as RunState, {
        model: scriptedModel([{ text: 'Paid.' }]),
        tools: [wireMoney],
        approvals: [{ approvalId, decision: 'approve' }],
        checkpoint: store,
      });
    const outcomes = (await Promise.all([worker(), worker(), worker()])).map((result) => result.outcome.kind);
    expect(outcomes.filter((kind) => kind === 'answered')).toHaveLength(1);
    expect(outcomes.filter((kind) => kind === 'stale_state')).toHaveLength(2);
    expect(wires).toEqual([120]);
  });

  it('a fresh run whose id the store already holds is refused before the model is called', async () => {
    const store = new MemoryCheckpointStore();
    await runAgent({ model: scriptedModel([{ text: 'one' }]), input: 'q', runId: 'dup', checkpoint: store });
    const model = scriptedModel([{ text: 'two' }]);
    const second = await runAgent({ model, input: 'q', runId: 'dup', checkpoint: store });
    expect(second.outcome.kind).toBe('stale_state');
    expect(model.calls).toHaveLength(0);
  });
});

describe('one trace contract across resumes', () => {
  it('an approve-and-resume flow in one sink: seq runs on without a gap, segments 0 and 1, and it replays', async () => {
    wires.length = 0;
    const trace = memoryTraceSink();
    const { state, approvalId } = await pausedWire({ trace });
    const resumed = await resumeAgent(state, {
      model: scriptedModel([{ text: 'Paid.' }]),
      tools: [wireMoney],
      approvals: [{ approvalId, decision: 'approve' }],
      trace,
      clock: fakeClock(),
    });
    expect(resumed.outcome.kind).toBe('answered');
    expect(trace.events.map((event) => event.seq)).toEqual(trace.events.map((_, index) => index));
    const starts = trace.events.filter((event) => event.type === 'run-start');
    expect(starts.map((event) => event.type === 'run-start' && event.segment)).toEqual([0, 1]);
    const replay = await replayTrace(JSON.parse(JSON.stringify(trace.events)));
    expect(replay.segments.map((segment) => segment.matches)).toEqual([true, true]);
    expect(replay.matches).toBe(true);
    expect(replay.outcome).toEqual(resumed.outcome);
  });

  it('a refused resume writes nothing to the trace', async () => {
    const trace = memoryTraceSink();
    const { state, approvalId } = await pausedWire({ trace });
    const options = {
      model: scriptedModel([{ text: 'Paid.' }]),
      tools: [wireMoney],
      approvals: [{ approvalId, decision: 'approve' as const }],
      trace,
    };
    await resumeAgent(state, options);
    const before = trace.events.length;
    const refused = await resumeAgent(state, { ...options, model: scriptedModel([{ text: 'Paid.' }]) });
    expect(refused.outcome.kind).toBe('stale_state');
    expect(trace.events).toHaveLength(before);
  });

  it('replay refuses an edited tool name and reordered lines', async () => {
    const trace = memoryTraceSink();
    await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'lookup', input: { key: 'a' } }] }, { text: 'done' }]),
      input: 'q',
      tools: [lookup],
      trace,
      clock: fakeClock(),
    });
    const renamed = structuredClone(trace.events);
    for (const event of renamed) if (event.type === 'tool-result') event.tool = 'wire_money';
    expect((await replayTrace(renamed)).matches).toBe(false);
    const reordered = structuredClone(trace.events);
    const [a, b] = [reordered[2], reordered[3]];
    reordered[2] = b as (typeof reordered)[number];
    reordered[3] = a as (typeof reordered)[number];
    const replay = await replayTrace(reordered);
    expect(replay.matches).toBe(false);
    expect(replay.problems.join(' ')).toContain('seq');
  });
});

describe('prepareStep, the extension point before each call', () => {
  it('replaces the messages, tools, model and settings of one call; each change is a trace event and replays', async () => {
    const trace = memoryTraceSink();
    const cheap = scriptedModel([{ toolCalls: [{ name: 'lookup', input: { key: 'k' } }] }], {
      name: 'cheap',
    });
    const strong = scriptedModel([{ text: 'answer' }], { name: 'strong' });
    const result = await runAgent({
      model: cheap,
      input: 'q',
      tools: [lookup, wireMoney],
      trace,
      clock: fakeClock(),
      prepareStep: ({ step, messages }) =>
        step === 1
          ? { activeTools: ['lookup'], maxOutputTokens: 100 }
          : { model: strong, messages: messages.slice(-2), system: 'be brief' },
    });
    expect(result.outcome).toEqual({ kind: 'answered', text: 'answer' });
    expect(cheap.calls[0]?.tools.map((tool) => tool.name)).toEqual(['lookup']);
    expect(cheap.calls[0]?.maxOutputTokens).toBe(100);
    expect(strong.calls[0]?.messages).toHaveLength(2);
    expect(strong.calls[0]?.system).toBe('be brief');
    // The transcript is the whole history, never the edited window.
    expect(result.messages).toHaveLength(4);
    const prepared = trace.events.filter((event) => event.type === 'step-prepare');
    expect(
      prepared.map((event) => event.type === 'step-prepare' && Object.keys(event.changes).sort()),
    ).toEqual([
      ['activeTools', 'maxOutputTokens'],
      ['messages', 'model', 'system'],
    ]);
    const replay = await replayTrace(JSON.parse(JSON.stringify(trace.events)));
    expect(replay.matches).toBe(true);
    expect(replay.result.billedTokens).toBe(result.billedTokens);
  });

  it('a call to a tool this step did not offer is refused as unknown, and nothing runs', async () => {
    wires.length = 0;
    const result = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'wire_money', input: { amount: 5 } }] }, { text: 'ok' }]),
      input: 'q',
      tools: [lookup, wireMoney],
      prepareStep: () => ({ activeTools: ['lookup'] }),
    });
    expect(result.outcome.kind).toBe('answered');
    expect(result.toolStats['wire_money']?.ok ?? 0).toBe(0);
    expect(wires).toEqual([]);
  });

  it('a throw ends the run hard_error/prepare_step; a hang is bounded by maxWallMs', async () => {
    const thrown = await runAgent({
      model: scriptedModel([]),
      input: 'q',
      prepareStep: () => {
        throw Object.create(null);
      },
    });
    expect(thrown.outcome).toMatchObject({ kind: 'hard_error', source: 'prepare_step' });
    const clock = fakeClock();
    const hung = await clock.runUntilSettled(
      runAgent({
        model: scriptedModel([]),
        input: 'q',
        clock,
        maxWallMs: 1_000,
        prepareStep: () => new Promise(() => {}),
      }),
    );
    expect(hung.outcome).toMatchObject({ kind: 'over_budget', budget: 'wall_ms' });
  });
});

describe('the one error boundary', () => {
  const hostile = [
    [
      'a null-prototype circular object',
      () => {
        const value = Object.create(null) as Record<string, unknown>;
        value['self'] = value;
        return value;
      },
    ],
    [
      'a Proxy whose traps throw',
      () =>
        new Proxy(
          {},
          {
            get() {
              throw new Error('trap');
            },
            getPrototypeOf() {
              throw new Error('trap');
            },
            ownKeys() {
              throw new Error('trap');
            },
          },
        ),
    ],
    [
      'an Error whose message getter throws',
      () => {
        const error = new Error('x');
        Object.defineProperty(error, 'message', {
          get() {
            throw new Error('getter');
          },
        });
        return error;
      },
    ],
  ] as const;

  const tool = (name: string, extra: Record<string, unknown>) =>
    defineTool({
      name,
      description: 'x',
      effect: 'read',
      input: z.object({}),
      execute: () => 'ok',
      ...extra,
    } as never);

  for (const [what, make] of hostile) {
    it(`never rejects when a callback throws ${what}`, async () => {
      const cases: [string, Parameters<typeof runAgent>[0]][] = [
        [
          'precondition',
          {
            model: scriptedModel([{ toolCalls: [{ name: 'p', input: {} }] }]),
            input: 'q',
            tools: [
              tool('p', {
                preconditions: () => {
                  throw make();
                },
              }),
            ],
          },
        ],
        [
          'invariant',
          {
            model: scriptedModel([{ toolCalls: [{ name: 'i', input: {} }] }]),
            input: 'q',
            tools: [
              tool('i', {
                invariants: [
                  () => {
                    throw make();
                  },
                ],
              }),
            ],
          },
        ],
        [
          'world_state',
          {
            model: scriptedModel([{ toolCalls: [{ name: 'l', input: {} }] }]),
            input: 'q',
            tools: [tool('l', {})],
            worldState: () => {
              throw make();
            },
          },
        ],
        [
          'trace',
          {
            model: scriptedModel([{ text: 'x' }]),
            input: 'q',
            trace: {
              write: () => {
                throw make();
              },
            },
          },
        ],
        [
          'checkpoint',
          {
            model: scriptedModel([{ text: 'x' }]),
            input: 'q',
            checkpoint: {
              commit: () => {
                throw make();
              },
              load: () => undefined,
            },
          },
        ],
        [
          'limiter',
          {
            model: scriptedModel([{ text: 'x' }]),
            input: 'q',
            prices: { '*': { inputUsdPerMillionTokens: 1, outputUsdPerMillionTokens: 1 } },
            accountSpend: {
              accountId: 'a',
              limitUsd: 1,
              limiter: {
                spent: () => {
                  throw make();
                },
                add: () => {},
              } as never,
            },
          },
        ],
      ];
      for (const [source, options] of cases) {
        const result = await runAgent(options);
        expect(result.outcome, source).toMatchObject({ kind: 'hard_error', source });
        expect(typeof (result.outcome as { error: { message: string } }).error.message).toBe('string');
      }
    });
  }

  it('a hung authorizer, sink or checkpoint store is bounded by maxWallMs', async () => {
    const never = () => new Promise<never>(() => {});
    const variants: Partial<Parameters<typeof runAgent>[0]>[] = [
      {
        authorize: never,
        tools: [lookup],
        model: scriptedModel([{ toolCalls: [{ name: 'lookup', input: { key: 'a' } }] }]),
      },
      { trace: { write: never } },
      { checkpoint: { commit: never, load: () => undefined } },
    ];
    for (const variant of variants) {
      const clock = fakeClock();
      const result = await clock.runUntilSettled(
        runAgent({ model: scriptedModel([{ text: 'x' }]), input: 'q', clock, maxWallMs: 5_000, ...variant }),
      );
      expect(result.outcome).toMatchObject({ kind: 'over_budget', budget: 'wall_ms' });
    }
  });

  it('circular or 3,000-deep tool input from a custom model is a labeled malformed response', async () => {
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    let deep: unknown = {};
    for (let i = 0; i < 3_000; i++) deep = { deep };
    for (const input of [circular, deep]) {
      const model: Model = {
        name: 'custom',
        generate: async () => ({
          content: [{ type: 'tool_use', id: 'c1', name: 'lookup', input }],
          stopReason: 'tool_use',
          usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        }),
      };
      const result = await runAgent({ model, input: 'q', tools: [lookup] });
      expect(result.outcome).toMatchObject({ kind: 'hard_error', source: 'malformed_response' });
    }
  });
});

describe('checkpoints are deltas on a snapshot', () => {
  it('a long checkpointed run loads back equal to its final state, and resumes from it', async () => {
    const store = new MemoryCheckpointStore();
    const turns = Array.from({ length: 300 }, (_, i) => ({
      text: `step ${i}`,
      toolCalls: [{ name: 'lookup', input: { key: `k${i}` } }],
    }));
    const first = await runAgent({
      model: scriptedModel([...turns, { throws: new Error('connection reset') }]),
      input: 'q',
      tools: [lookup],
      runId: 'long',
      maxSteps: 400,
      checkpoint: store,
      clock: fakeClock(),
    });
    expect(first.outcome).toMatchObject({ kind: 'hard_error', source: 'model' });
    const loaded = store.load('long') as RunState;
    expect(loaded).toEqual(JSON.parse(JSON.stringify(first.state)));
    const resumed = await resumeAgent(loaded, {
      model: scriptedModel([{ text: 'done' }]),
      tools: [lookup],
      maxSteps: 400,
      checkpoint: store,
    });
    expect(resumed.outcome).toEqual({ kind: 'answered', text: 'done' });
    expect(resumed.steps).toBe(301);
  });
});

describe('approvals across resumes', () => {
  const sent: string[] = [];
  const email = defineTool({
    name: 'send_email',
    description: 'Send an e-mail.',
    effect: 'write',
    autonomy: 'confirm',
    input: z.object({ to: z.string() }),
    execute: ({ to }) => {
      sent.push(to);
      return { sent: to };
    },
  });
  const pausedBoth = () =>
    runAgent({
      model: scriptedModel([
        {
          toolCalls: [
            { name: 'send_email', input: { to: 'a@corp.example' } },
            { name: 'send_email', input: { to: 'b@corp.example' } },
          ],
        },
      ]),
      input: 'mail a and b',
      tools: [email],
    });
  const idsOf = (outcome: { kind: string; requests?: { approvalId: string }[] }) =>
    (outcome.requests ?? []).map((request) => request.approvalId);

  it('a verdict holds until its batch runs: approve a (paused on b), approve b, and both run once', async () => {
    sent.length = 0;
    const first = await pausedBoth();
    const [a, b] = idsOf(first.outcome as never) as [string, string];
    const second = await resumeAgent(first.state, {
      model: scriptedModel([]),
      tools: [email],
      approvals: [{ approvalId: a, decision: 'approve' }],
    });
    expect(second.outcome.kind).toBe('awaiting_approval');
    expect(sent).toEqual([]);
    const third = await resumeAgent(second.state, {
      model: scriptedModel([{ text: 'both sent' }]),
      tools: [email],
      approvals: [{ approvalId: b, decision: 'approve' }],
    });
    expect(third.outcome).toEqual({ kind: 'answered', text: 'both sent' });
    expect(sent).toEqual(['a@corp.example', 'b@corp.example']);
  });

  it('an edited call is shown to the model as the call that ran; the transcript keeps the original', async () => {
    sent.length = 0;
    const first = await runAgent({
      model: scriptedModel([{ toolCalls: [{ name: 'send_email', input: { to: 'typo@corp.example' } }] }]),
      input: 'mail the team',
      tools: [email],
    });
    const [id] = idsOf(first.outcome as never) as [string];
    const model = scriptedModel([{ text: 'sent' }]);
    const resumed = await resumeAgent(first.state, {
      model,
      tools: [email],
      approvals: [{ approvalId: id, decision: 'edit', input: { to: 'team@corp.example' } }],
    });
    expect(sent).toEqual(['team@corp.example']);
    const shown = JSON.stringify(model.calls[0]?.messages);
    expect(shown).toContain('ran with input {\\"to\\":\\"team@corp.example\\"}');
    expect(JSON.stringify(resumed.messages)).toContain('typo@corp.example');
  });
});

describe('exactly-once without a store', () => {
  it('two concurrent resumes of one paused state in one process: one runs, one is refused', async () => {
    wires.length = 0;
    const { state, approvalId } = await pausedWire({});
    const resume = () =>
      resumeAgent(structuredClone(state), {
        model: scriptedModel([{ text: 'Paid.' }]),
        tools: [wireMoney],
        approvals: [{ approvalId, decision: 'approve' }],
      });
    const kinds = (await Promise.all([resume(), resume()])).map((result) => result.outcome.kind).sort();
    expect(kinds).toEqual(['answered', 'stale_state']);
    expect(wires).toEqual([120]);
  });
});
