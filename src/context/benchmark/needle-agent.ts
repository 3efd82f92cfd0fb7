import { approxTokenEstimator } from '../../tokens/token-estimator.js';
import { type NeedlePlan, needleParameters, stepCall, stepNarration } from './needle-plan.js';
import { type RecallScore, recallScore, shows } from './recall-score.js';

/** A model turn the agent chose. */
export type AgentTurn =
  | { kind: 'call'; text: string; calls: { name: string; input: Record<string, unknown> }[] }
  | { kind: 'answer'; text: string };

/**
 * The needle harness's scripted model, written against what its window shows (the lines of its
 * request) so that it knows exactly what the window holds and nothing else:
 *
 * - It works through the plan's steps in order.
 * - In the retry run, at each decision step it considers a ruled-out approach again: if its window
 *   shows that the approach failed it moves on; if not and a `recall` tool is offered, it first
 *   searches for the approach by name, and decides on the next turn from what the window (with the
 *   recall's result) shows; otherwise it retries the approach (a "retried a dead end").
 * - After the last step it answers the questions; with `recall` offered it first searches, in one
 *   turn, for every planted fact its window does not show, by the question's words. The final
 *   window's score is the recall.
 */
export class NeedleAgent {
  readonly #plan: NeedlePlan;
  readonly #withDecisions: boolean;
  #next: number;
  #decided = new Set<number>();
  #recalledFor = new Set<number>();
  #askedRecall = false;
  #turns = 0;
  retries = 0;
  recalls = 0;
  final: RecallScore | undefined;

  constructor(plan: NeedlePlan, options: { firstStep: number; decisions: boolean }) {
    this.#plan = plan;
    this.#next = options.firstStep;
    this.#withDecisions = options.decisions;
  }

  get done(): boolean {
    return this.final !== undefined;
  }

  next(lines: readonly string[], canRecall: boolean): AgentTurn {
    this.#turns++;
    const plan = this.#plan;
    if (this.#next <= needleParameters.steps) {
      const decision = this.#withDecisions
        ? plan.decisions.find((d) => d.step === this.#next && !this.#decided.has(d.step))
        : undefined;
      if (decision) {
        const fact = plan.facts.find((f) => f.kind === 'dead_end' && f.needles[0] === decision.approach);
        if (fact && !shows(lines, fact)) {
          if (canRecall && !this.#recalledFor.has(decision.step)) {
            this.#recalledFor.add(decision.step);
            this.recalls++;
            return this.#turn([{ name: 'recall', input: { query: fact.query } }]);
          }
          this.#decided.add(decision.step);
          this.retries++;
          return this.#turn([{ name: 'try_fix', input: { approach: decision.approach } }]);
        }
        this.#decided.add(decision.step);
      }
      const call = stepCall(plan.steps[this.#next - 1] as NeedlePlan['steps'][number]);
      this.#next++;
      return this.#turn([call]);
    }
    if (canRecall && !this.#askedRecall) {
      this.#askedRecall = true;
      const missing = plan.facts.filter((fact) => !shows(lines, fact));
      if (missing.length > 0) {
        this.recalls += missing.length;
        return this.#turn(missing.map((fact) => ({ name: 'recall', input: { query: fact.query } })));
      }
    }
    this.final = recallScore(lines, plan.facts);
    return { kind: 'answer', text: 'Answers from what the window shows.' };
  }

  #turn(calls: { name: string; input: Record<string, unknown> }[]): AgentTurn {
    const callTokens = calls.reduce(
      (sum, call) => sum + approxTokenEstimator.countText(call.name + JSON.stringify(call.input)),
      0,
    );
    return { kind: 'call', text: stepNarration(this.#turns, Math.min(callTokens, 250)), calls };
  }
}
