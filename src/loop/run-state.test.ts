import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MemoryCheckpointStore } from '../checkpoint/checkpoint-store.js';
import { isReinsError } from '../errors/reins-error.js';
import { fakeClock } from '../testing/fake-clock.js';
import { scriptedModel } from '../testing/scripted-model.js';
import { defineTool } from '../tools/define-tool.js';
import { ToolError } from '../tools/tool-error.js';
import { outcomeKinds } from './outcome.js';
import { resumeAgent, runAgent } from './run-agent.js';
import { assertRunState, parseRunState, type RunState } from './run-state.js';

const fixture = new URL('../../test/fixtures/run-state-v1-happy.json', import.meta.url);

const tools = () => [
  defineTool({
    name: 'lookup',
    description: 'Look something up.',
    effect: 'read',
    input: z.object({ key: z.string() }),
    trustedOutputFields: ['id'],
    execute: ({ key }) => ({ id: `id-${key}`, size: key.length }),
  }),
  defineTool({
    name: 'draft_email',
    description: 'Draft an email.',
    effect: 'write',
    autonomy: 'draft',
    input: z.object({ to: z.string() }),
    execute: () => 'never runs',
  }),
  defineTool({
    name: 'flaky',
    description: 'Fails for good.',
    effect: 'read',
    input: z.object({}),
    execute: () => {
      throw new ToolError('gone', { code: 'gone', retry: 'no' });
    },
  }),
  defineTool({
    name: 'wipe',
    description: 'Delete everything.',
    effect: 'destructive',
    input: z.object({ target: z.string() }),
    execute: ({ target }) => ({ wiped: target }),
  }),
];

const call = (name: string, input: unknown) => ({ text: `calling ${name}`, toolCalls: [{ name, input }] });
const json = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** States as the loop writes them, with every field: answered, paused, failed mid-run, stored mid-run. */
let answered: RunState;
let paused: RunState;
let failed: RunState;
let stored: RunState;
let old: RunState;

beforeAll(async () => {
  const run = (
    script: Parameters<typeof scriptedModel>[0],
    runId: string,
    checkpoint?: MemoryCheckpointStore,
  ) =>
    runAgent({
      model: scriptedModel(script),
      input: 'Find alpha, draft an email to ops, then clean up.',
      system: 'You are careful.',
      tools: tools(),
      runId,
      clock: fakeClock(),
      ...(checkpoint ? { checkpoint } : {}),
    });
  answered = json(
    (
      await run(
        [
          call('lookup', { key: 'alpha' }),
          call('draft_email', { to: 'ops' }),
          call('flaky', {}),
          { text: 'Done.' },
        ],
        'answered',
      )
    ).state,
  );
  paused = json(
    (await run([call('lookup', { key: 'alpha' }), call('wipe', { target: 'alpha' })], 'paused')).state,
  );
  const store = new MemoryCheckpointStore();
  failed = json(
    (
      await run(
        [call('lookup', { key: 'a' }), call('lookup', { key: 'b' }), { throws: new Error('socket hang up') }],
        'failed',
        store,
      )
    ).state,
  );
  stored = json(store.load('failed') as RunState);
  old = parseRunState(readFileSync(fixture, 'utf8'));
});

/** The labeled error `assertRunState` throws for `value`, or undefined when it accepts it. */
function rejection(value: unknown): { reason: string; message: string } | undefined {
  try {
    assertRunState(value);
  } catch (thrown) {
    expect(isReinsError(thrown), `not a ReinsError: ${String(thrown)}`).toBe(true);
    return thrown as { reason: string; message: string };
  }
  return undefined;
}

function expectCorrupt(value: unknown, field: string): void {
  const error = rejection(value);
  expect(error, `accepted a state with a bad ${field}`).toBeDefined();
  expect(error?.reason).toBe('corrupt_state');
  expect(error?.message).toContain(`field ${field}`);
}

/** A copy of `base` with `change` applied to it. */
function changed(base: RunState, change: (state: Record<string, unknown>) => void): unknown {
  const copy = structuredClone(base) as unknown as Record<string, unknown>;
  change(copy);
  return copy;
}

describe('assertRunState accepts every state the loop writes', () => {
  it('answered, paused, failed and stored states, in memory and through JSON', () => {
    for (const state of [answered, paused, failed, stored]) {
      expect(assertRunState(state)).toBe(state);
      expect(parseRunState(JSON.stringify(state))).toEqual(state);
    }
    expect(paused.pending?.calls).toHaveLength(1);
    expect(answered.handoffs).toHaveLength(1);
    expect(answered.terminalFailures).toHaveLength(1);
    expect(Object.keys(answered.toolStats ?? {})).toEqual(['lookup', 'draft_email', 'flaky']);
  });

  it('the frozen v1 fixture, and states without each field added after v1', () => {
    expect(old).toMatchObject({ version: 1, status: 'ended', outcome: { kind: 'hard_error' } });
    const later = ['pending', 'taint', 'terminalFailures', 'toolStats', 'handoffs', 'revision', 'trace'];
    for (const field of later)
      expect(rejection(changed(answered, (state) => delete state[field]))).toBeUndefined();
    expect(
      rejection(
        changed(answered, (state) => {
          for (const field of later) delete state[field];
        }),
      ),
    ).toBeUndefined();
  });

  it('null where the type allows it: pending, taint, drift; an ended state marked by hand without an outcome', () => {
    expect(rejection({ ...answered, pending: null, taint: null, drift: null })).toBeUndefined();
    expect(rejection({ ...stored, status: 'ended', outcome: null })).toBeUndefined();
  });
});

describe('assertRunState names the bad field', () => {
  it('not an object, or another version', () => {
    for (const value of [null, 5, 'state', [], undefined])
      expect(rejection(value)).toMatchObject({ reason: 'corrupt_state' });
    expect(rejection({ ...answered, version: 2 })).toMatchObject({ reason: 'unsupported_state_version' });
    expectCorrupt({ ...answered, version: '1' }, 'version');
    expectCorrupt(
      changed(answered, (state) => delete state['version']),
      'version',
    );
  });

  it('identity and status: runId, status, system', () => {
    expectCorrupt({ ...answered, runId: 5 }, 'runId');
    expectCorrupt({ ...answered, status: 'paused' }, 'status');
    expectCorrupt({ ...answered, system: null }, 'system');
  });

  it('counters: whole numbers ≥ 0 where they count, finite numbers ≥ 0 where they measure', () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53 + 2, '2', null]) {
      expectCorrupt({ ...answered, step: bad }, 'step');
      expectCorrupt({ ...answered, toolErrors: bad }, 'toolErrors');
      expectCorrupt({ ...answered, completedMessages: bad }, 'completedMessages');
    }
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '2', null]) {
      for (const field of ['billedTokens', 'costUsd', 'contextTokens', 'elapsedMs'])
        expectCorrupt({ ...answered, [field]: bad }, field);
      for (const field of ['startedAt', 'updatedAt'])
        expectCorrupt({ ...answered, [field]: bad === -1 ? 'x' : bad }, field);
    }
    expect(rejection({ ...answered, costUsd: 0.25, contextTokens: 12.5 })).toBeUndefined();
  });

  it('completedMessages cannot exceed the messages', () => {
    expectCorrupt({ ...answered, completedMessages: answered.messages.length + 1 }, 'completedMessages');
  });

  it('messages: role, content and each block by its type', () => {
    const at = (change: (messages: Record<string, unknown>[]) => void) =>
      changed(answered, (state) => change(state['messages'] as Record<string, unknown>[]));
    const block = (message: number, index: number, value: unknown) =>
      at((messages) => {
        (messages[message]?.['content'] as unknown[])[index] = value;
      });
    expectCorrupt({ ...answered, messages: {} }, 'messages');
    expectCorrupt(
      at((messages) => messages.splice(1, 1, null as never)),
      'messages.1',
    );
    expectCorrupt(
      at((messages) => Object.assign(messages[0] as object, { role: 'system' })),
      'messages.0.role',
    );
    expectCorrupt(
      at((messages) => Object.assign(messages[0] as object, { content: 'hi' })),
      'messages.0.content',
    );
    expectCorrupt(block(0, 0, null), 'messages.0.content.0');
    expectCorrupt(block(0, 0, { text: 'no type' }), 'messages.0.content.0.type');
    expectCorrupt(block(0, 0, { type: 'text', text: 5 }), 'messages.0.content.0.text');
    expectCorrupt(block(0, 0, { type: 'image', source: 'x' }), 'messages.0.content.0.source');
    expectCorrupt(block(0, 0, { type: 'video', source: {} }), 'messages.0.content.0.type');
    expectCorrupt(block(1, 0, { type: 'thinking' }), 'messages.1.content.0.thinking');
    expectCorrupt(
      block(1, 0, { type: 'provider', provider: 'anthropic', kind: 'x' }),
      'messages.1.content.0.raw',
    );
    expectCorrupt(
      block(0, 0, { type: 'tool_use', id: 'x', name: 'lookup', input: {} }),
      'messages.0.content.0.type',
    );
    expectCorrupt(
      block(1, 0, { type: 'tool_result', toolUseId: 'x', content: '', isError: false }),
      'messages.1.content.0.type',
    );
  });

  it('tool calls: string id and name, text arguments, JSON input no deeper than the loop accepts', () => {
    const toolUse = (change: Record<string, unknown>) =>
      changed(answered, (state) => {
        const message = (state['messages'] as { content: Record<string, unknown>[] }[])[1];
        Object.assign(message?.content[1] as object, change);
      });
    expect(answered.messages[1]?.content[1]?.type).toBe('tool_use');
    expectCorrupt(toolUse({ id: 5 }), 'messages.1.content.1.id');
    expectCorrupt(toolUse({ name: undefined }), 'messages.1.content.1.name');
    expectCorrupt(toolUse({ inputText: {} }), 'messages.1.content.1.inputText');
    expectCorrupt(toolUse({ input: { n: 10n } }), 'messages.1.content.1.input');
    let deep: unknown = 'bottom';
    for (let i = 0; i < 600; i++) deep = { d: deep };
    expectCorrupt(toolUse({ input: deep }), 'messages.1.content.1.input');
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expectCorrupt(toolUse({ input: circular }), 'messages.1.content.1.input');
    expect(rejection(toolUse({ input: undefined, inputText: '{not json' }))).toBeUndefined();
  });

  it('tool results: string toolUseId and content, boolean isError', () => {
    const result = (change: Record<string, unknown>) =>
      changed(answered, (state) => {
        const message = (state['messages'] as { content: Record<string, unknown>[] }[])[2];
        Object.assign(message?.content[0] as object, change);
      });
    expectCorrupt(result({ toolUseId: null }), 'messages.2.content.0.toolUseId');
    expectCorrupt(result({ content: { data: 1 } }), 'messages.2.content.0.content');
    expectCorrupt(result({ isError: 'no' }), 'messages.2.content.0.isError');
  });

  it('usage: four finite counts ≥ 0', () => {
    expectCorrupt({ ...answered, usage: null }, 'usage');
    for (const field of ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'])
      for (const bad of [-1, Number.NaN, '3', undefined])
        expectCorrupt({ ...answered, usage: { ...answered.usage, [field]: bad } }, `usage.${field}`);
  });

  it('repeatCounts: [key, count] pairs', () => {
    for (const bad of [{}, [['k']], [['k', 1, 2]], [[5, 1]], [['k', -1]], [['k', 1.5]], [null]])
      expectCorrupt({ ...answered, repeatCounts: bad }, 'repeatCounts');
  });

  it('drift: null or lists of strings', () => {
    expectCorrupt({ ...answered, drift: 'x' }, 'drift');
    expectCorrupt(
      changed(answered, (state) => delete state['drift']),
      'drift',
    );
    expectCorrupt({ ...answered, drift: { actions: 'a', worldStates: [] } }, 'drift.actions');
    expectCorrupt({ ...answered, drift: { actions: [], worldStates: [42] } }, 'drift.worldStates.0');
  });

  it('outcome: null while running; an outcome of a known kind, with its fields, once ended', () => {
    expectCorrupt({ ...stored, status: 'running', outcome: { kind: 'answered', text: 'x' } }, 'outcome');
    expectCorrupt(
      changed(stored, (state) => delete state['outcome']),
      'outcome',
    );
    expectCorrupt({ ...answered, outcome: 'answered' }, 'outcome');
    expectCorrupt({ ...answered, outcome: { kind: 'exploded' } }, 'outcome.kind');
    expectCorrupt({ ...answered, outcome: { kind: 'answered', text: 5 } }, 'outcome.text');
    expectCorrupt({ ...failed, outcome: { kind: 'hard_error', source: 'model' } }, 'outcome.error');
    expectCorrupt(
      { ...failed, outcome: { kind: 'hard_error', source: 'model', error: { name: 'E' } } },
      'outcome.error.message',
    );
    expectCorrupt(
      { ...answered, outcome: { kind: 'step_limit', limit: 6, finalText: 'x' } },
      'outcome.unexecutedCalls',
    );
    expectCorrupt(
      {
        ...answered,
        outcome: { kind: 'over_budget', budget: 'wall_ms', limit: 1, actual: null, phase: 'before-call' },
      },
      'outcome.actual',
    );
    expectCorrupt(
      {
        ...answered,
        outcome: {
          kind: 'over_budget',
          budget: 'spend_usd',
          limit: 1,
          actual: 0,
          phase: 'before-call',
          unpriced: 5,
        },
      },
      'outcome.unpriced',
    );
    expectCorrupt({ ...answered, outcome: { kind: 'looped', reason: 'bored' } }, 'outcome.reason');
    expectCorrupt(
      { ...paused, outcome: { kind: 'awaiting_approval', requests: [null] } },
      'outcome.requests.0',
    );
    expectCorrupt(
      { ...answered, outcome: { kind: 'stale_state', revision: -1, currentRevision: null } },
      'outcome.revision',
    );
    const kinds = [answered, paused, failed].map((state) => state.outcome?.kind);
    expect(kinds).toEqual(['answered', 'awaiting_approval', 'hard_error']);
  });

  it('pending: the paused batch, its tool calls, thought and verdicts; required while awaiting approval', () => {
    const pending = paused.pending as NonNullable<RunState['pending']>;
    expectCorrupt({ ...paused, pending: 5 }, 'pending');
    expectCorrupt({ ...paused, pending: null }, 'pending');
    expectCorrupt(
      changed(paused, (state) => delete state['pending']),
      'pending',
    );
    expectCorrupt({ ...paused, pending: { ...pending, step: -1 } }, 'pending.step');
    expectCorrupt({ ...paused, pending: { ...pending, calls: [] } }, 'pending.calls');
    expectCorrupt(
      { ...paused, pending: { ...pending, calls: [{ ...pending.calls[0], id: 5 }] } },
      'pending.calls.0.id',
    );
    expectCorrupt(
      { ...paused, pending: { ...pending, calls: [{ type: 'text', text: 'x' }] } },
      'pending.calls.0.type',
    );
    expectCorrupt({ ...paused, pending: { ...pending, thought: null } }, 'pending.thought');
    expectCorrupt({ ...paused, pending: { ...pending, verdicts: {} } }, 'pending.verdicts');
    expectCorrupt(
      { ...paused, pending: { ...pending, verdicts: [{ approvalId: 'a', decision: 'maybe' }] } },
      'pending.verdicts.0',
    );
    expect(
      rejection({ ...paused, pending: { ...pending, verdicts: [{ approvalId: 'a', decision: 'deny' }] } }),
    ).toBeUndefined();
  });

  it('taint, terminalFailures, toolStats and handoffs', () => {
    const stats = answered.toolStats?.['lookup'];
    expectCorrupt({ ...answered, taint: 'tainted' }, 'taint');
    expectCorrupt(
      { ...answered, taint: { untrustedResults: -1, trustedValues: [] } },
      'taint.untrustedResults',
    );
    expectCorrupt(
      { ...answered, taint: { untrustedResults: 1, trustedValues: [7] } },
      'taint.trustedValues.0',
    );
    expectCorrupt({ ...answered, terminalFailures: 'flaky:{}' }, 'terminalFailures');
    expectCorrupt({ ...answered, terminalFailures: null }, 'terminalFailures');
    expectCorrupt({ ...answered, terminalFailures: [1] }, 'terminalFailures.0');
    expectCorrupt({ ...answered, toolStats: [] }, 'toolStats');
    expectCorrupt({ ...answered, toolStats: { lookup: 5 } }, 'toolStats.lookup');
    expectCorrupt({ ...answered, toolStats: { lookup: { ...stats, ok: -1 } } }, 'toolStats.lookup.ok');
    expectCorrupt(
      changed(
        answered,
        (state) =>
          delete (state['toolStats'] as Record<string, Record<string, unknown>>)['lookup']?.['denied'],
      ),
      'toolStats.lookup.denied',
    );
    expectCorrupt(
      { ...answered, toolStats: { lookup: { ...stats, validationFailureRate: 2 } } },
      'toolStats.lookup.validationFailureRate',
    );
    expectCorrupt(
      JSON.parse(JSON.stringify(answered).replace('"toolStats":{', '"toolStats":{"__proto__":{},')),
      'toolStats.__proto__',
    );
    const handoff = answered.handoffs?.[0];
    expectCorrupt({ ...answered, handoffs: {} }, 'handoffs');
    expectCorrupt({ ...answered, handoffs: [{ ...handoff, kind: 'email' }] }, 'handoffs.0.kind');
    expectCorrupt({ ...answered, handoffs: [{ ...handoff, step: 'one' }] }, 'handoffs.0.step');
    expectCorrupt({ ...answered, handoffs: [{ ...handoff, callId: undefined }] }, 'handoffs.0.callId');
  });

  it('revision and trace cursor: whole numbers ≥ 0 when present', () => {
    for (const bad of [-1, 0.5, 2 ** 53 + 2, '1', null])
      expectCorrupt({ ...answered, revision: bad }, 'revision');
    expectCorrupt({ ...answered, trace: null }, 'trace');
    expectCorrupt({ ...answered, trace: { segment: -1, nextSeq: 0 } }, 'trace.segment');
    expectCorrupt({ ...answered, trace: { segment: 0 } }, 'trace.nextSeq');
  });

  it('a state whose getters throw is corrupt_state, not the getter’s error', () => {
    const trap = () => {
      throw new Error('trap');
    };
    expect(rejection(new Proxy({}, { get: trap }))).toMatchObject({ reason: 'corrupt_state' });
    expect(
      rejection({
        ...answered,
        get usage() {
          return trap();
        },
      }),
    ).toMatchObject({ reason: 'corrupt_state' });
  });

  it('parseRunState: not JSON, or not text', () => {
    expect(() => parseRunState('{not json')).toThrow(/not valid JSON/);
    expect(() => parseRunState(5 as never)).toThrow(/JSON text/);
  });

  it('resumeAgent throws the labeled error synchronously, before anything runs', () => {
    const model = scriptedModel([]);
    const bad = {
      ...failed,
      messages: [...failed.messages, { role: 'user', content: [{ type: 'text', text: 5 }] }],
    };
    expect(() => resumeAgent(bad as never, { model })).toThrow(/messages\.\d+\.content\.0\.text/);
    expect(model.calls).toHaveLength(0);
  });

  it('keeps up: a 20,000-message state is checked in a fraction of the time JSON.parse takes to read it', () => {
    const messages: RunState['messages'] = [{ role: 'user', content: [{ type: 'text', text: 'go' }] }];
    for (let i = 0; i < 10_000; i++) {
      messages.push({
        role: 'assistant',
        content: [
          { type: 'text', text: 'thinking about the next check' },
          {
            type: 'tool_use',
            id: `c${i}`,
            name: 'lookup',
            input: { key: `k${i}`, options: { depth: [1, 2] } },
          },
        ],
      });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: `c${i}`, content: 'x'.repeat(200), isError: false }],
      });
    }
    const big = { ...answered, messages, completedMessages: messages.length };
    const text = JSON.stringify(big);
    const time = (work: () => void) => {
      const start = performance.now();
      for (let i = 0; i < 3; i++) work();
      return (performance.now() - start) / 3;
    };
    time(() => assertRunState(big));
    expect(time(() => assertRunState(big))).toBeLessThan(time(() => JSON.parse(text)));
  });
});

describe('assertRunState on mutated states (property)', () => {
  type Op =
    | 'delete'
    | 'null'
    | 'nan'
    | 'negative'
    | 'huge'
    | 'unsafe'
    | 'fraction'
    | 'string'
    | 'number'
    | 'array'
    | 'object'
    | 'protoKey';
  const ops: Op[] = [
    'delete',
    'null',
    'nan',
    'negative',
    'huge',
    'unsafe',
    'fraction',
    'string',
    'number',
    'array',
    'object',
    'protoKey',
  ];
  type Place = { parent: Record<string, unknown> | unknown[]; key: string | number };
  const places = (value: unknown, out: Place[] = []): Place[] => {
    if (Array.isArray(value))
      value.forEach((item, key) => {
        out.push({ parent: value, key });
        places(item, out);
      });
    else if (value !== null && typeof value === 'object')
      for (const key of Object.keys(value)) {
        out.push({ parent: value as Record<string, unknown>, key });
        places((value as Record<string, unknown>)[key], out);
      }
    return out;
  };
  const replacement = (op: Op, current: unknown): unknown =>
    ({
      null: null,
      nan: Number.NaN,
      negative: -1,
      huge: 1e300,
      unsafe: 2 ** 53 + 2,
      fraction: typeof current === 'number' ? current + 0.5 : 0.5,
      string: typeof current === 'string' ? `${current}!` : String(JSON.stringify(current) ?? 'x'),
      number: 7,
      array: [current],
      object: {},
      protoKey: JSON.parse('{"__proto__": {"polluted": true}}'),
      delete: undefined,
    })[op];
  /** Mutates a copy of a JSON state in place: delete a key, change a type, put NaN, -1, a huge number, null or a `__proto__` key. */
  const mutate = (base: RunState, mutations: { at: number; op: Op }[]): unknown => {
    const root = { root: structuredClone(base) as unknown };
    for (const { at, op } of mutations) {
      const all = places(root.root);
      if (all.length === 0) break;
      const { parent, key } = all[at % all.length] as Place;
      const current = (parent as Record<string | number, unknown>)[key];
      if (op === 'delete') {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key as string];
      } else if (
        op === 'protoKey' &&
        current !== null &&
        typeof current === 'object' &&
        !Array.isArray(current)
      )
        Object.defineProperty(current, '__proto__', {
          value: {},
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else (parent as Record<string | number, unknown>)[key] = replacement(op, current);
    }
    return root.root;
  };

  it('a mutated state is refused with a labeled error, or resumes to a labeled outcome', async () => {
    const bases = [answered, paused, failed, stored, old];
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.nat(bases.length - 1),
        fc.array(fc.record({ at: fc.nat(), op: fc.constantFrom(...ops) }), { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        async (which, mutations, viaJson) => {
          const base = bases[which] as RunState;
          // A run id of its own, so this process's memory of resumed runs does not refuse it as stale.
          let state = mutate({ ...base, runId: `${base.runId}-${++runs}` }, mutations);
          if (viaJson) {
            const error = rejection(JSON.parse(JSON.stringify(state)));
            if (error)
              return void expect(['corrupt_state', 'unsupported_state_version']).toContain(error.reason);
            state = parseRunState(JSON.stringify(state));
          }
          const error = rejection(state);
          if (error)
            return void expect(['corrupt_state', 'unsupported_state_version']).toContain(error.reason);
          const clock = fakeClock();
          const approvals =
            base.outcome?.kind === 'awaiting_approval'
              ? base.outcome.requests.map((request) => ({
                  approvalId: request.approvalId,
                  decision: 'approve' as const,
                }))
              : undefined;
          const result = await clock.runUntilSettled(
            resumeAgent(state as RunState, {
              model: scriptedModel([call('lookup', { key: 'next' }), { text: 'Resumed.' }]),
              tools: tools(),
              clock,
              maxWallMs: 60_000,
              ...(approvals ? { approvals } : {}),
            }),
          );
          expect(outcomeKinds).toContain(result.outcome.kind);
          // A state the check let through must not break the loop: no defect of reins' own.
          if (result.outcome.kind === 'hard_error') expect(result.outcome.source).not.toBe('internal');
        },
      ),
      { numRuns: Number(process.env['FUZZ_RUNS'] ?? 200) },
    );
  });
});
