import type { ModelRequest, ModelResponse, Usage } from '../model/model.js';

/** What kind of signal a trigger reads, cheapest and most trusted first (post-06). */
export type TriggerKind = 'structural' | 'confidence' | 'judge';

/** Tokens a trigger spent deciding (a judge's call), billed at that model's price. */
export interface TriggerSpend {
  model: string;
  usage: Usage;
}

/** What a trigger is asked about: the request a tier answered and that tier's answer. */
export interface TriggerInput {
  request: ModelRequest;
  response: ModelResponse;
  /** 0-based index of the tier that answered. */
  tier: number;
}

/**
 * A trigger's answer. `score` is the signal a scored trigger (confidence, judge) compared with its
 * threshold, present whether it kept or escalated: `calibrateTrigger` sweeps thresholds over it.
 * A verdict that escalates without a score was forced (a structural failure), whatever the threshold.
 */
export type TriggerVerdict =
  | { kind: 'keep'; score?: number; spent?: TriggerSpend[] }
  | {
      kind: 'escalate';
      /** The trigger that fired (`structural`, `confidence`, `judge` or a custom name). */
      trigger: string;
      /** Why, for a person reading the trace: `tool "search" is not offered`. */
      reason: string;
      score?: number;
      spent?: TriggerSpend[];
    };

/**
 * Decides whether a tier's answer goes to the next tier. A value: build one with
 * {@link structuralTrigger}, {@link confidenceTrigger}, {@link judgeTrigger}, combine with
 * {@link anyTrigger}, or write your own.
 */
export interface EscalationTrigger {
  /** Shown in traces. */
  readonly name: string;
  /** The kinds of signal this trigger (and any it combines) reads. */
  readonly kinds: readonly TriggerKind[];
  check(input: TriggerInput): TriggerVerdict | Promise<TriggerVerdict>;
}

/**
 * Escalates when any of `triggers` does, asking them in order and stopping at the first that fires:
 * put the free structural checks first and a judge (a paid call) last. A keep carries the last
 * score seen and every trigger's spend.
 *
 * @example
 * const escalate = anyTrigger(structuralTrigger({ refusal: true }), confidenceTrigger({ threshold: 0.8 }));
 */
export function anyTrigger(...triggers: EscalationTrigger[]): EscalationTrigger {
  const kinds = [...new Set(triggers.flatMap((trigger) => trigger.kinds))];
  return {
    name: triggers.map((trigger) => trigger.name).join('+'),
    kinds,
    // Synchronous while its triggers are: a cascade stage stays a few µs without a judge.
    check(input) {
      const spent: TriggerSpend[] = [];
      const state: { score?: number } = {};
      const settle = (verdict: TriggerVerdict): TriggerVerdict | undefined => {
        if (verdict.spent) spent.push(...verdict.spent);
        if (verdict.score !== undefined) state.score = verdict.score;
        return verdict.kind === 'escalate' ? withSpend({ ...verdict }, spent) : undefined;
      };
      const keep = (): TriggerVerdict => {
        const verdict: TriggerVerdict = { kind: 'keep' };
        if (state.score !== undefined) verdict.score = state.score;
        return withSpend(verdict, spent);
      };
      for (let i = 0; i < triggers.length; i++) {
        const verdict = (triggers[i] as EscalationTrigger).check(input);
        if (verdict instanceof Promise)
          return (async () => {
            const first = settle(await verdict);
            if (first) return first;
            for (const later of triggers.slice(i + 1)) {
              const settled = settle(await later.check(input));
              if (settled) return settled;
            }
            return keep();
          })();
        const settled = settle(verdict);
        if (settled) return settled;
      }
      return keep();
    },
  };
}

function withSpend(verdict: TriggerVerdict, spent: TriggerSpend[]): TriggerVerdict {
  if (spent.length > 0) verdict.spent = spent;
  else delete verdict.spent;
  return verdict;
}
