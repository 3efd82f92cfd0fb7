import fc from 'fast-check';
import type { RunOptions } from '../../src/loop/options.js';
import type { Message } from '../../src/model/content.js';
import { type BuiltCallbacks, buildCallbacks, type CallbackSpecs, callbackSpecs } from './callbacks.js';
import { type DrivenClock, drivenClock } from './drive.js';
import { fuzzModel, type TurnSpec, turnSpec } from './models.js';
import { buildTools, type Execution, type ToolSpecF, toolSpecs } from './tools.js';

export interface Limits {
  maxSteps?: number;
  maxWallMs?: number;
  toolTimeoutMs?: number;
  repeatLimit?: number | false;
  drift?: { window: number; minDistinct: number } | false;
  maxContextTokens?: number;
  maxBilledTokens?: number;
  maxToolErrors?: number;
  toolConcurrency?: number;
  maxResultTokens?: number;
  maxSpendUsd?: number;
  writesDisabled?: boolean;
  onStepLimit?: 'final-answer' | 'stop';
  taint?: { onTaintedCall: 'ask' | 'deny' };
  giveUpTool?: boolean;
}

export interface Scenario {
  tools: ToolSpecF[];
  turns: TurnSpec[];
  callbacks: CallbackSpecs | undefined;
  limits: Limits;
  input: 'text' | 'conversation';
  actor: boolean;
}

export interface ScenarioOptions {
  hostileModel: boolean;
  hostileTools: boolean;
  callbacks: boolean;
  /** Hanging and slow user code; forces a `maxWallMs`. */
  hang: boolean;
  prototypeNames?: boolean;
}

const opt = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

export function limits(hang: boolean): fc.Arbitrary<Limits> {
  return fc
    .record(
      {
        maxSteps: opt(fc.integer({ min: 1, max: 8 })),
        maxWallMs: hang ? fc.integer({ min: 1, max: 120_000 }) : opt(fc.integer({ min: 1, max: 120_000 })),
        toolTimeoutMs: opt(fc.integer({ min: 1, max: 60_000 })),
        repeatLimit: opt(fc.oneof(fc.integer({ min: 2, max: 4 }), fc.constant(false as const))),
        drift: opt(
          fc.oneof(
            fc.constant(false as const),
            fc
              .integer({ min: 2, max: 6 })
              .chain((window) =>
                fc.integer({ min: 1, max: window }).map((minDistinct) => ({ window, minDistinct })),
              ),
          ),
        ),
        maxContextTokens: opt(fc.integer({ min: 1, max: 20_000 })),
        maxBilledTokens: opt(fc.integer({ min: 1, max: 50_000 })),
        maxToolErrors: opt(fc.integer({ min: 0, max: 4 })),
        toolConcurrency: opt(fc.integer({ min: 1, max: 4 })),
        maxResultTokens: opt(fc.integer({ min: 1, max: 400 })),
        maxSpendUsd: opt(fc.double({ min: 0.000_001, max: 1, noNaN: true })),
        writesDisabled: opt(fc.boolean()),
        onStepLimit: opt(fc.constantFrom('final-answer' as const, 'stop' as const)),
        taint: opt(
          fc.constantFrom('ask' as const, 'deny' as const).map((onTaintedCall) => ({ onTaintedCall })),
        ),
        giveUpTool: opt(fc.boolean()),
      },
      { requiredKeys: hang ? ['maxWallMs'] : [] },
    )
    .map((picked) => {
      const out: Limits = {};
      for (const [key, value] of Object.entries(picked))
        if (value !== undefined) (out as never)[key] = value as never;
      return out;
    });
}

export function scenario(options: ScenarioOptions): fc.Arbitrary<Scenario> {
  return toolSpecs({
    hostile: options.hostileTools,
    hang: options.hang,
    prototypeNames: options.prototypeNames ?? false,
  }).chain((tools) =>
    fc.record({
      tools: fc.constant(tools),
      turns: fc.array(
        turnSpec({
          toolNames: tools.map((tool) => tool.name),
          hostile: options.hostileModel,
          hang: options.hang,
        }),
        { maxLength: 8 },
      ),
      callbacks: options.callbacks ? callbackSpecs({ hang: options.hang }) : fc.constant(undefined),
      limits: limits(options.hang),
      input: fc.constantFrom('text' as const, 'conversation' as const),
      actor: fc.boolean(),
    }),
  );
}

let runs = 0;

export interface BuiltRun {
  clock: DrivenClock;
  options: RunOptions;
  log: Execution[];
  proposals: Map<string, number>;
  callbacks: BuiltCallbacks | undefined;
  /** A fresh model playing the same turns (ids under another prefix), for a resume. */
  freshModel: (idPrefix: string) => ReturnType<typeof fuzzModel>;
}

const conversation: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'Earlier question about checkout.' }] },
  { role: 'assistant', content: [{ type: 'text', text: 'Earlier answer.' }] },
  { role: 'user', content: [{ type: 'text', text: 'Now look up n for me, then write a note.' }] },
];

export function buildRun(spec: Scenario): BuiltRun {
  const clock = drivenClock();
  const log: Execution[] = [];
  const tools = buildTools(spec.tools, clock, log);
  const { model, proposals } = fuzzModel(spec.turns, clock);
  const callbacks = spec.callbacks
    ? buildCallbacks(spec.callbacks, clock, { toolNames: spec.tools.map((tool) => tool.name), model })
    : undefined;
  const { maxSpendUsd, ...rest } = spec.limits;
  const options: RunOptions = {
    model,
    input: spec.input === 'text' ? 'Look up n, then write a note about it.' : structuredClone(conversation),
    tools,
    clock,
    runId: `fuzz-run-${++runs}`,
    system: 'You are a fuzz agent.',
    ...(spec.actor ? { actor: { id: 'fuzz-user', scopes: [] } } : {}),
    ...rest,
    ...(maxSpendUsd === undefined
      ? {}
      : { maxSpendUsd, prices: { '*': { inputUsdPerMillionTokens: 3, outputUsdPerMillionTokens: 15 } } }),
    ...(callbacks?.options ?? {}),
  };
  return {
    clock,
    options,
    log,
    proposals,
    callbacks,
    freshModel: (idPrefix) => fuzzModel(spec.turns, clock, { idPrefix }),
  };
}
