import fc from 'fast-check';
import type { CheckpointCommit, CheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { MemoryCheckpointStore } from '../../src/checkpoint/checkpoint-store.js';
import { contextPolicy } from '../../src/context/cache-policy.js';
import type { ContextPolicyInput } from '../../src/context/context-policy.js';
import type { PrepareStep, RunOptions } from '../../src/loop/options.js';
import type { RunState } from '../../src/loop/run-state.js';
import type { Model } from '../../src/model/model.js';
import type { SpendLimiter } from '../../src/resilience/spend-limiter.js';
import type { TraceEvent } from '../../src/trace/events.js';
import type { TraceSink } from '../../src/trace/sink.js';
import { type Behavior, behavior, behaviors, play, player } from './behavior.js';
import type { DrivenClock } from './drive.js';
import { type HostileTag, hostile, hostileTag, throwingProxy } from './hostile.js';

export type PrepareSpec =
  | 'undefined'
  | 'empty'
  | 'lastMessages'
  | 'emptyMessages'
  | 'messagesNotArray'
  | 'systemNumber'
  | 'systemString'
  | 'activeToolsKnown'
  | 'activeToolsUnknown'
  | 'activeToolsNotArray'
  | 'toolChoiceNone'
  | 'toolChoiceBad'
  | 'maxOutputTokens'
  | 'maxOutputTokensBad'
  | 'modelHostile'
  | 'modelGood'
  | 'notObject';

export type ContextSpec =
  | 'undefined'
  | 'builtin'
  | 'evictWhole'
  | 'evictBad'
  | 'pinHuge'
  | 'clearNotResult'
  | 'editsNotArray'
  | 'spentGarbage'
  | 'notObject';

export type StoreSpec =
  | { kind: 'memory' }
  | { kind: 'wrapped'; commit: Behavior<'pass' | 'refuse' | 'garbage'>[]; load: Behavior<'pass'>[] }
  | { kind: 'legacy'; save: Behavior<'pass'>[] };

export interface SinkSpec {
  write: Behavior<null>[];
  flush: Behavior<null>[] | undefined;
  nextSeq: Behavior<'number' | 'garbage' | 'undefined'>[] | undefined;
}

export interface CallbackSpecs {
  authorize: Behavior<'allow' | 'deny' | 'garbage'>[] | undefined;
  prepareStep: Behavior<PrepareSpec>[] | undefined;
  context: Behavior<ContextSpec>[] | undefined;
  worldState: Behavior<'same' | 'changing' | 'number' | 'object'>[] | undefined;
  sinks: SinkSpec[] | undefined;
  checkpoint: StoreSpec | undefined;
  accountSpend:
    | {
        spent: Behavior<'zero' | 'over' | 'nan' | 'negative' | 'string'>[];
        add: Behavior<null>[];
        limitUsd: number;
      }
    | undefined;
  signal: { at: 'before' | number; reason: HostileTag | 'plain' } | undefined;
}

const prepareSpec = fc.constantFrom<PrepareSpec>(
  'undefined',
  'empty',
  'lastMessages',
  'emptyMessages',
  'messagesNotArray',
  'systemNumber',
  'systemString',
  'activeToolsKnown',
  'activeToolsUnknown',
  'activeToolsNotArray',
  'toolChoiceNone',
  'toolChoiceBad',
  'maxOutputTokens',
  'maxOutputTokensBad',
  'modelHostile',
  'modelGood',
  'notObject',
);

export function callbackSpecs({ hang }: { hang: boolean }): fc.Arbitrary<CallbackSpecs> {
  const opt = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 2 });
  return fc.record({
    authorize: opt(
      behaviors(fc.constantFrom('allow' as const, 'deny' as const, 'garbage' as const), { hang }),
    ),
    prepareStep: opt(behaviors(prepareSpec, { hang })),
    context: opt(
      behaviors(
        fc.constantFrom<ContextSpec>(
          'undefined',
          'builtin',
          'evictWhole',
          'evictBad',
          'pinHuge',
          'clearNotResult',
          'editsNotArray',
          'spentGarbage',
          'notObject',
        ),
        { hang, goodWeight: 6 },
      ),
    ),
    worldState: opt(
      behaviors(fc.constantFrom('same' as const, 'changing' as const, 'number' as const, 'object' as const), {
        hang,
      }),
    ),
    sinks: opt(
      fc.array(
        fc.record({
          write: behaviors(fc.constant(null), { hang, goodWeight: 12 }),
          flush: opt(behaviors(fc.constant(null), { hang })),
          nextSeq: opt(
            behaviors(fc.constantFrom('number' as const, 'garbage' as const, 'undefined' as const), { hang }),
          ),
        }),
        { minLength: 1, maxLength: 2 },
      ),
    ),
    checkpoint: opt(
      fc.oneof(
        fc.constant({ kind: 'memory' as const }),
        fc
          .record({
            commit: behaviors(fc.constantFrom('pass' as const, 'refuse' as const, 'garbage' as const), {
              hang,
              goodWeight: 8,
            }),
            load: behaviors(fc.constant('pass' as const), { hang }),
          })
          .map((r) => ({ kind: 'wrapped' as const, ...r })),
        fc
          .record({ save: behaviors(fc.constant('pass' as const), { hang, goodWeight: 8 }) })
          .map((r) => ({ kind: 'legacy' as const, ...r })),
      ),
    ),
    accountSpend: opt(
      fc.record({
        spent: behaviors(
          fc.constantFrom(
            'zero' as const,
            'over' as const,
            'nan' as const,
            'negative' as const,
            'string' as const,
          ),
          { hang },
        ),
        add: behaviors(fc.constant(null), { hang }),
        limitUsd: fc.double({ min: 0.0001, max: 10, noNaN: true }),
      }),
    ),
    signal: opt(
      fc.record({
        at: fc.oneof(fc.constant('before' as const), fc.integer({ min: 0, max: 60_000 })),
        reason: fc.oneof(fc.constant('plain' as const), hostileTag),
      }),
    ),
  });
}

/** What building the callbacks made, for the property to inspect afterwards. */
export interface BuiltCallbacks {
  options: Partial<RunOptions>;
  store: MemoryCheckpointStore | undefined;
  events: TraceEvent[];
}

export function buildCallbacks(
  specs: CallbackSpecs,
  clock: DrivenClock,
  { toolNames, model }: { toolNames: readonly string[]; model: Model },
): BuiltCallbacks {
  const options: Partial<RunOptions> = {};
  const events: TraceEvent[] = [];
  if (specs.authorize) {
    const next = player(specs.authorize, clock, (spec) =>
      spec === 'allow'
        ? { allow: true }
        : spec === 'deny'
          ? { allow: false, reason: 'fuzz says no' }
          : { allow: 'yes' },
    );
    options.authorize = () => next() as never;
  }
  if (specs.prepareStep) {
    let context: Parameters<PrepareStep>[0] | undefined;
    const next = player(specs.prepareStep, clock, (spec): unknown => {
      switch (spec) {
        case 'undefined':
          return undefined;
        case 'empty':
          return {};
        case 'lastMessages':
          return { messages: context?.messages.slice(-2) };
        case 'emptyMessages':
          return { messages: [] };
        case 'messagesNotArray':
          return { messages: 5 };
        case 'systemNumber':
          return { system: 5 };
        case 'systemString':
          return { system: 'prepared system' };
        case 'activeToolsKnown':
          return { activeTools: toolNames.slice(0, 1) };
        case 'activeToolsUnknown':
          return { activeTools: ['nope'] };
        case 'activeToolsNotArray':
          return { activeTools: 'lookup' };
        case 'toolChoiceNone':
          return { toolChoice: 'none' };
        case 'toolChoiceBad':
          return { toolChoice: 'sometimes' };
        case 'maxOutputTokens':
          return { maxOutputTokens: 64 };
        case 'maxOutputTokensBad':
          return { maxOutputTokens: -1 };
        case 'modelHostile':
          return { model: throwingProxy() };
        case 'modelGood':
          return { model };
        case 'notObject':
          return 'not an object';
      }
    });
    options.prepareStep = (ctx) => {
      context = ctx;
      return next() as never;
    };
  }
  if (specs.context) {
    // A real policy with a tiny budget beside hostile answers: edits that cannot apply, junk, throws, hangs.
    const real = contextPolicy({ budgetTokens: 400, keepRecentSteps: 1, recallTool: false });
    let input: ContextPolicyInput | undefined;
    const next = player(specs.context, clock, (spec): unknown => {
      const length = input?.transcript.length ?? 0;
      switch (spec) {
        case 'undefined':
          return undefined;
        case 'builtin':
          return input ? real.prepare(input) : undefined;
        case 'evictWhole':
          return { edits: [{ verb: 'evict', from: 1, to: length, steps: [1, 1], text: '' }] };
        case 'evictBad':
          return { edits: [{ verb: 'evict', from: 0, to: 2, steps: [1, 1], text: 'x' }] };
        case 'pinHuge':
          return { edits: [{ verb: 'pin', key: 'k', text: 'z'.repeat(50_000), at: 'end' }] };
        case 'clearNotResult':
          return { edits: [{ verb: 'clear', message: 0, block: 0, step: 1, text: '' }] };
        case 'editsNotArray':
          return { edits: { verb: 'pin' } };
        case 'spentGarbage':
          return { spent: { model: 5, usage: 'lots' } };
        case 'notObject':
          return 42;
      }
    });
    options.context = {
      name: 'fuzz',
      prepare: (given) => {
        input = given;
        return next() as never;
      },
    };
  }
  if (specs.worldState) {
    let calls = 0;
    const next = player(specs.worldState, clock, (spec): unknown =>
      spec === 'same' ? 'w' : spec === 'changing' ? `w${calls}` : spec === 'number' ? 42 : { w: 1 },
    );
    options.worldState = () => {
      calls++;
      return next() as never;
    };
  }
  if (specs.sinks) {
    options.trace = specs.sinks.map((spec): TraceSink => {
      const write = player(spec.write, clock, () => undefined);
      const sink: TraceSink = {
        write: (event) => {
          events.push(event);
          return write() as never;
        },
      };
      if (spec.flush) {
        const flush = player(spec.flush, clock, () => undefined);
        sink.flush = () => flush() as never;
      }
      if (spec.nextSeq) {
        const nextSeq = player(spec.nextSeq, clock, (kind): unknown =>
          kind === 'number' ? events.length : kind === 'garbage' ? 'seven' : undefined,
        );
        sink.nextSeq = () => nextSeq() as never;
      }
      return sink;
    });
  }
  let store: MemoryCheckpointStore | undefined;
  if (specs.checkpoint) {
    store = new MemoryCheckpointStore();
    const inner = store;
    const spec = specs.checkpoint;
    if (spec.kind === 'memory') options.checkpoint = inner;
    else if (spec.kind === 'wrapped') {
      let commits = 0;
      let loads = 0;
      options.checkpoint = {
        commit(commit: CheckpointCommit) {
          const played = spec.commit[Math.min(commits++, spec.commit.length - 1)] as Behavior<string>;
          // A store serializes before it resolves: what passes is committed now, whatever comes back.
          const answer =
            played.kind === 'return' || played.kind === 'resolve'
              ? played.value === 'pass'
                ? inner.commit(commit)
                : played.value === 'refuse'
                  ? { ok: false, currentRevision: 99 }
                  : { ok: 'yes' }
              : undefined;
          return play(played, clock, () => answer) as never;
        },
        load(runId: string) {
          const played = spec.load[Math.min(loads++, spec.load.length - 1)] as Behavior<string>;
          return play(played, clock, () => inner.load(runId)) as never;
        },
      } satisfies CheckpointStore;
    } else {
      let saves = 0;
      options.checkpoint = {
        save(state: RunState) {
          const played = spec.save[Math.min(saves++, spec.save.length - 1)] as Behavior<string>;
          if (played.kind === 'return' || played.kind === 'resolve') inner.save(state);
          return play(played, clock, () => undefined) as never;
        },
        load: (runId: string) => inner.load(runId),
      };
    }
  }
  if (specs.accountSpend) {
    const { limitUsd } = specs.accountSpend;
    const spent = player(specs.accountSpend.spent, clock, (kind): unknown =>
      kind === 'zero'
        ? 0
        : kind === 'over'
          ? limitUsd * 2
          : kind === 'nan'
            ? Number.NaN
            : kind === 'negative'
              ? -1
              : '0',
    );
    const add = player(specs.accountSpend.add, clock, () => undefined);
    const limiter = { spent: () => spent(), add: () => add() } as unknown as SpendLimiter;
    options.accountSpend = { limiter, accountId: 'acct', limitUsd };
    options.prices = { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } };
  }
  if (specs.signal) {
    const controller = new AbortController();
    const reason = specs.signal.reason;
    const abort = () => controller.abort(reason === 'plain' ? 'caller cancelled' : hostile(reason));
    if (specs.signal.at === 'before') abort();
    else clock.setTimeout(abort, specs.signal.at);
    options.signal = controller.signal;
  }
  return { options, store, events };
}

export { behavior };
