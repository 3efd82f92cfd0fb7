import type { Message } from '../../model/content.js';
import type { PlantedFact } from './needle-plan.js';

/**
 * The lines a window shows, each a place a fact can be read from: every line of every text, tool
 * result and tool call. A fact is known only when one line holds all its needles (an approach's
 * name and that it failed; an order id and whose order it is): a call shown without its result, or
 * an id without what it identifies, does not count.
 */
export function windowLines(messages: readonly Message[]): string[] {
  const lines: string[] = [];
  for (const message of messages)
    for (const block of message.content) {
      const text =
        block.type === 'text'
          ? block.text
          : block.type === 'tool_result'
            ? block.content
            : block.type === 'tool_use'
              ? `${block.name}(${JSON.stringify(block.input)})`
              : '';
      if (text !== '') for (const line of text.split('\n')) lines.push(line);
    }
  return lines;
}

/** Whether a window (its lines) shows the fact. */
export function shows(lines: readonly string[], fact: PlantedFact): boolean {
  return lines.some((line) => fact.needles.every((needle) => line.includes(needle)));
}

/** Recall of one window: the share of the planted facts it shows, overall and by kind. */
export interface RecallScore {
  recall: number;
  byKind: Record<PlantedFact['kind'], number>;
  missing: PlantedFact[];
}

export function recallScore(lines: readonly string[], facts: readonly PlantedFact[]): RecallScore {
  const missing = facts.filter((fact) => !shows(lines, fact));
  const share = (kind: PlantedFact['kind']) => {
    const of = facts.filter((fact) => fact.kind === kind);
    return of.length === 0 ? Number.NaN : of.filter((fact) => !missing.includes(fact)).length / of.length;
  };
  return {
    recall: facts.length === 0 ? Number.NaN : (facts.length - missing.length) / facts.length,
    byKind: { constraint: share('constraint'), dead_end: share('dead_end'), id: share('id') },
    missing,
  };
}
