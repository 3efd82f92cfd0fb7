import fc from 'fast-check';
import type { Model, ModelRequest } from '../../src/model/model.js';
import { type Behavior, behavior, play } from './behavior.js';
import type { DrivenClock } from './drive.js';
import { deep, throwingProxy } from './hostile.js';

/** A tool call's input as generated: JSON, or one of the inputs a model or adapter can produce by mistake. */
export type InputSpec =
  | { kind: 'json'; value: unknown }
  | {
      kind: 'special';
      tag: 'circular' | 'deep600' | 'bigint' | 'huge' | 'protoKey' | 'invalidJson' | 'undefined' | 'proxy';
    };

export interface CallSpec {
  tool: string;
  input: InputSpec;
  /** Reuse the previous call's id in this response (a model that repeats ids). */
  duplicateId: boolean;
}

export type UsageSpec =
  | 'counted'
  | 'missing'
  | 'null'
  | 'nan'
  | 'negative'
  | 'string'
  | 'infinite'
  | 'huge'
  | 'proxy'
  | 'fractional';

export type BlockTag =
  | 'text'
  | 'textNumber'
  | 'image'
  | 'null'
  | 'number'
  | 'toolUseNoId'
  | 'toolUseNameNumber'
  | 'toolUseCircular'
  | 'toolUseDeep'
  | 'toolUseValid'
  | 'proxy'
  | 'getterThrows';

export type TurnSpec =
  | {
      kind: 'reply';
      text: string;
      calls: CallSpec[];
      stopReason: string;
      usage: UsageSpec;
      delayMs: number;
    }
  | {
      kind: 'raw';
      content: BlockTag[] | 'notArray' | 'missing';
      stopReason: unknown;
      usage: UsageSpec;
    }
  | { kind: 'behave'; behavior: Behavior<null> };

export const stopReasons = [
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'refusal',
  'pause_turn',
  'context_window_exceeded',
  'interrupted',
  'other',
  'no_such_reason',
  '',
];

const smallJson = fc.jsonValue({ maxDepth: 3 });

export function inputSpec(hostile: boolean): fc.Arbitrary<InputSpec> {
  const json = fc.oneof(
    { weight: 2, arbitrary: smallJson.map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 1,
      arbitrary: fc
        .record(
          { n: fc.oneof(fc.integer(), fc.double()), s: fc.string({ maxLength: 12 }) },
          { requiredKeys: [] },
        )
        .map((value) => ({ kind: 'json' as const, value })),
    },
  );
  if (!hostile) return json;
  return fc.oneof(
    { weight: 6, arbitrary: smallJson.map((value) => ({ kind: 'json' as const, value })) },
    {
      weight: 3,
      arbitrary: fc
        .record(
          { n: fc.oneof(fc.integer(), fc.double()), s: fc.string({ maxLength: 12 }) },
          { requiredKeys: [] },
        )
        .map((value) => ({ kind: 'json' as const, value })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          'circular',
          'deep600',
          'bigint',
          'huge',
          'protoKey',
          'invalidJson',
          'undefined',
          'proxy',
        )
        .map((tag) => ({ kind: 'special' as const, tag })),
    },
  );
}

export function callSpec(toolNames: readonly string[], hostile: boolean): fc.Arbitrary<CallSpec> {
  return fc.record({
    tool: fc.constantFrom(...toolNames, 'no_such_tool', 'cannot_complete'),
    input: inputSpec(hostile),
    duplicateId: fc.oneof(
      { weight: 9, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  });
}

const usageSpec: fc.Arbitrary<UsageSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('counted' as const) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<UsageSpec>(
      'missing',
      'null',
      'nan',
      'negative',
      'string',
      'infinite',
      'huge',
      'proxy',
      'fractional',
    ),
  },
);

const blockTag: fc.Arbitrary<BlockTag> = fc.constantFrom(
  'text',
  'textNumber',
  'image',
  'null',
  'number',
  'toolUseNoId',
  'toolUseNameNumber',
  'toolUseCircular',
  'toolUseDeep',
  'toolUseValid',
  'proxy',
  'getterThrows',
);

export interface TurnOptions {
  toolNames: readonly string[];
  /** Ill-formed responses and hostile throws. */
  hostile: boolean;
  /** Delays and hangs (only with a `maxWallMs`). */
  hang: boolean;
}

export function turnSpec(options: TurnOptions): fc.Arbitrary<TurnSpec> {
  const reply = fc
    .record({
      text: fc.oneof(fc.constant(''), fc.string({ maxLength: 20 })),
      calls: fc.array(callSpec(options.toolNames, options.hostile), { maxLength: 3 }),
      stopReason: fc.oneof({ weight: 8, arbitrary: fc.constant('auto') }, fc.constantFrom(...stopReasons)),
      usage: options.hostile ? usageSpec : fc.constant('counted' as const),
      delayMs: options.hang ? fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20_000 })) : fc.constant(0),
    })
    .map((turn) => ({ kind: 'reply' as const, ...turn }));
  if (!options.hostile) return reply;
  return fc.oneof(
    { weight: 5, arbitrary: reply },
    {
      weight: 1,
      arbitrary: fc
        .record({
          content: fc.oneof(
            fc.array(blockTag, { minLength: 1, maxLength: 3 }),
            fc.constantFrom('notArray' as const, 'missing' as const),
          ),
          stopReason: fc.oneof(fc.constantFrom(...stopReasons), fc.constantFrom(5, null, undefined)),
          usage: usageSpec,
        })
        .map((turn) => ({ kind: 'raw' as const, ...turn })),
    },
    {
      weight: 1,
      arbitrary: behavior(fc.constant(null), { hang: options.hang, goodWeight: 0 }).map((b) => ({
        kind: 'behave' as const,
        behavior: b,
      })),
    },
  );
}

function buildInput(spec: InputSpec): { input: unknown; inputText?: string } {
  if (spec.kind === 'json') return { input: structuredClone(spec.value) };
  switch (spec.tag) {
    case 'circular': {
      const input: Record<string, unknown> = { n: 1 };
      input['self'] = input;
      return { input };
    }
    case 'deep600':
      return { input: deep(600) };
    case 'bigint':
      return { input: { n: 12n } };
    case 'huge':
      return { input: { s: 'y'.repeat(100_000) } };
    case 'protoKey':
      return { input: JSON.parse('{"__proto__": {"polluted": true}, "s": "x"}') };
    case 'invalidJson':
      return { input: undefined, inputText: '{"s": "unterminated' };
    case 'undefined':
      return { input: undefined };
    case 'proxy':
      return { input: throwingProxy() };
  }
}

function usageOf(spec: UsageSpec): unknown {
  const counted = { inputTokens: 40, outputTokens: 8, cacheReadTokens: 0, cacheWriteTokens: 0 };
  switch (spec) {
    case 'counted':
      return counted;
    case 'missing':
      return undefined;
    case 'null':
      return null;
    case 'nan':
      return { ...counted, inputTokens: Number.NaN };
    case 'negative':
      return { ...counted, outputTokens: -5, cacheReadTokens: -1 };
    case 'string':
      return { inputTokens: '40', outputTokens: '8' };
    case 'infinite':
      return { ...counted, inputTokens: Number.POSITIVE_INFINITY };
    case 'huge':
      return { ...counted, inputTokens: 1e308, outputTokens: 1e308 };
    case 'proxy':
      return throwingProxy();
    case 'fractional':
      return { ...counted, inputTokens: 0.5, cacheWriteTokens: 1.25 };
  }
}

function blockOf(tag: BlockTag, nextId: () => string): unknown {
  switch (tag) {
    case 'text':
      return { type: 'text', text: 'raw text' };
    case 'textNumber':
      return { type: 'text', text: 5 };
    case 'image':
      return { type: 'image', source: 'x' };
    case 'null':
      return null;
    case 'number':
      return 7;
    case 'toolUseNoId':
      return { type: 'tool_use', name: 'lookup', input: {} };
    case 'toolUseNameNumber':
      return { type: 'tool_use', id: nextId(), name: 5, input: {} };
    case 'toolUseCircular': {
      const input: Record<string, unknown> = {};
      input['self'] = input;
      return { type: 'tool_use', id: nextId(), name: 'lookup', input };
    }
    case 'toolUseDeep':
      return { type: 'tool_use', id: nextId(), name: 'lookup', input: deep(700) };
    case 'toolUseValid':
      return { type: 'tool_use', id: nextId(), name: 'lookup', input: { n: 1 } };
    case 'proxy':
      return throwingProxy();
    case 'getterThrows':
      return Object.defineProperty({ type: 'text' }, 'text', {
        enumerable: true,
        get() {
          throw new Error('text getter');
        },
      });
  }
}

/** A model that plays generated turns, then answers; `proposals` counts each call id it proposed. */
export function fuzzModel(
  turns: readonly TurnSpec[],
  clock: DrivenClock,
  { name = 'fuzz', idPrefix = 'call' }: { name?: string; idPrefix?: string } = {},
) {
  let ids = 0;
  const nextId = () => `${idPrefix}_${++ids}`;
  const proposals = new Map<string, number>();
  const requests: ModelRequest[] = [];
  let played = 0;
  const propose = (id: string) => proposals.set(id, (proposals.get(id) ?? 0) + 1);
  const model: Model = {
    name,
    generate(request) {
      requests.push(request);
      const turn = turns[played++] ?? {
        kind: 'reply',
        text: 'done',
        calls: [],
        stopReason: 'end_turn',
        usage: 'counted',
        delayMs: 0,
      };
      if (turn.kind === 'behave') return play(turn.behavior, clock, () => null) as never;
      if (turn.kind === 'raw') {
        const content =
          turn.content === 'notArray'
            ? 'not an array'
            : turn.content === 'missing'
              ? undefined
              : turn.content.map((tag) => blockOf(tag, nextId));
        if (Array.isArray(content))
          for (const block of content) {
            try {
              const typed = block as { type?: unknown; id?: unknown };
              if (typed?.type === 'tool_use' && typeof typed.id === 'string') propose(typed.id);
            } catch {
              // a hostile block
            }
          }
        return Promise.resolve({ content, stopReason: turn.stopReason, usage: usageOf(turn.usage) }) as never;
      }
      const content: unknown[] = [];
      if (turn.text !== '') content.push({ type: 'text', text: turn.text });
      let last: string | undefined;
      for (const call of turn.calls) {
        const id = call.duplicateId && last !== undefined ? last : nextId();
        last = id;
        propose(id);
        const built = buildInput(call.input);
        const input =
          call.tool === 'cannot_complete' && call.input.kind === 'json'
            ? { reason: 'fuzz gave up' }
            : built.input;
        content.push({
          type: 'tool_use',
          id,
          name: call.tool,
          input,
          ...(built.inputText === undefined ? {} : { inputText: built.inputText }),
        });
      }
      const stopReason =
        turn.stopReason === 'auto' ? (turn.calls.length > 0 ? 'tool_use' : 'end_turn') : turn.stopReason;
      const response = { content, stopReason, usage: usageOf(turn.usage), model: name };
      if (turn.delayMs === 0) return Promise.resolve(response) as never;
      return new Promise((resolve) => clock.setTimeout(() => resolve(response as never), turn.delayMs));
    },
  };
  return { model, proposals, requests };
}
