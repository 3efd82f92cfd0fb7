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
    async check(input) {
      const spent: TriggerSpend[] = [];
      let score: number | undefined;
      for (const trigger of triggers) {
        const verdict = await trigger.check(input);
        if (verdict.spent) spent.push(...verdict.spent);
        if (verdict.score !== undefined) score = verdict.score;
        if (verdict.kind === 'escalate') return withSpend({ ...verdict }, spent);
      }
      const keep: TriggerVerdict = { kind: 'keep' };
      if (score !== undefined) keep.score = score;
      return withSpend(keep, spent);
    },
  };
}

function withSpend(verdict: TriggerVerdict, spent: TriggerSpend[]): TriggerVerdict {
  if (spent.length > 0) verdict.spent = spent;
  else delete verdict.spent;
  return verdict;
}
