import { randomInt, seededRandom } from '../../testing/seeded-random.js';

/**
 * The needle harness's run: post-11's parameters (TURNS 120, a verbatim budget of 30 steps, the
 * user's constraint at KEY_TURN 3), post-18's step sizes (a 300-token model turn and a
 * 1,200-token tool result on a 4,000-token stable prefix), and facts planted at seeded steps.
 */
export const needleParameters = {
  steps: 120,
  verbatimSteps: 30,
  keyTurn: 3,
  stablePrefixTokens: 4_000,
  outputTokens: 300,
  resultTokens: 1_200,
  deadEnds: 6,
  ids: 6,
} as const;

/** The working set every contender gets: the stable prefix and 30 steps verbatim (post-11's BUDGET). */
export const needleBudgetTokens =
  needleParameters.stablePrefixTokens +
  needleParameters.verbatimSteps * (needleParameters.outputTokens + needleParameters.resultTokens);

/** One fact planted in the run, and what a window must show for a model to know it. */
export interface PlantedFact {
  kind: 'constraint' | 'dead_end' | 'id';
  /** The step that states it (0: the task). */
  step: number;
  /** Every string here in one block of the window (a result, a text, a digest line) = the fact is known. */
  needles: readonly string[];
  /** What a model asking about it would search for: the question's words, never the answer. */
  query: string;
}

/** What one step of the run does. */
export type PlannedStep =
  | { kind: 'probe'; area: string }
  | { kind: 'try_fix'; approach: string; reason: string }
  | { kind: 'lookup'; customer: string; order: string };

export interface NeedlePlan {
  seed: number;
  task: string;
  /** The user's words after step `keyTurn`'s result (post-11's constraint "given on turn 3"). */
  userConstraint: string;
  steps: PlannedStep[];
  facts: PlantedFact[];
  /** In the retry run: at `step`, before doing it, the model considers `approach` again. */
  decisions: { step: number; approach: string }[];
}

// post-11's examples of a hard constraint.
const taskConstraint = 'the customer is in the EU so GDPR applies';
const turnConstraint = 'never touch the production database';
const approaches = [
  ['replica-promotion', 'the replica is 40 minutes behind the primary'],
  ['cache-flush', 'the cold cache tripled the latency and the error rate did not move'],
  ['pool-resize', 'the pool is not exhausted; connections wait on a lock'],
  ['flag-rollback', 'the flag was already off in that region'],
  ['dns-failover', 'the secondary region serves the same broken build'],
  ['index-rebuild', 'the index is healthy and the slow query does not use it'],
  ['queue-drain', 'draining lost nothing but the backlog came back in minutes'],
  ['node-restart', 'the process restarted cleanly and failed the same way'],
] as const;
const customers = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'wonka'];

/** The plan for one seed: which step plants which fact, and where the retry run's decisions fall. */
export function needlePlan(seed: number): NeedlePlan {
  const random = seededRandom(seed);
  const p = needleParameters;
  const steps: PlannedStep[] = [];
  for (let k = 1; k <= p.steps; k++) steps.push({ kind: 'probe', area: `area-${k}` });
  // Distinct steps for the planted facts, after the key turn and before the last ten steps.
  const taken = new Set<number>();
  const freeStep = () => {
    for (;;) {
      const step = randomInt(random, p.keyTurn + 1, p.steps - 10);
      if (!taken.has(step)) {
        taken.add(step);
        return step;
      }
    }
  };
  const facts: PlantedFact[] = [
    { kind: 'constraint', step: 0, needles: ['GDPR'], query: 'customer data rules region' },
    {
      kind: 'constraint',
      step: p.keyTurn,
      needles: ['production database'],
      query: 'which database must not be touched',
    },
  ];
  const shuffled = [...approaches].sort(() => random() - 0.5).slice(0, p.deadEnds);
  for (const [approach, reason] of shuffled) {
    const step = freeStep();
    steps[step - 1] = { kind: 'try_fix', approach, reason };
    facts.push({ kind: 'dead_end', step, needles: [approach, 'failed'], query: approach.replace('-', ' ') });
  }
  for (let i = 0; i < p.ids; i++) {
    const step = freeStep();
    const customer = `${customers[i % customers.length]}-${randomInt(random, 10, 99)}`;
    const order = `ORD-${randomInt(random, 10_000, 99_999)}`;
    steps[step - 1] = { kind: 'lookup', customer, order };
    facts.push({ kind: 'id', step, needles: [order, customer], query: `order of customer ${customer}` });
  }
  // Each dead end is considered again at a later probe step, anywhere up to the end.
  const decisions: NeedlePlan['decisions'] = [];
  for (const fact of facts) {
    if (fact.kind !== 'dead_end') continue;
    let step = randomInt(random, fact.step + 1, p.steps);
    while (steps[step - 1]?.kind !== 'probe' || decisions.some((d) => d.step === step))
      step = step >= p.steps ? fact.step + 1 : step + 1;
    decisions.push({ step, approach: fact.needles[0] as string });
  }
  decisions.sort((a, b) => a.step - b.step);
  return {
    seed,
    task: `Find why checkout is failing and fix it. Keep in mind that ${taskConstraint}.`,
    userConstraint: `One more thing from me: ${turnConstraint}.`,
    steps,
    facts,
    decisions,
  };
}

const filler =
  'the probe read the area and found the usual mix of healthy and slow handlers with nothing alarming in the logs ';

/** `prefix` padded with plain words to `tokens` (four characters a token). */
export function sizedText(prefix: string, tokens: number): string {
  const length = tokens * 4;
  let text = prefix;
  while (text.length < length) text += filler;
  return text.slice(0, length);
}

/** What the tool of a planned step returns (or, for `try_fix`, the error it fails with). */
export function stepResult(step: PlannedStep): { text: string; failed: boolean } {
  const tokens = needleParameters.resultTokens;
  switch (step.kind) {
    case 'probe':
      return { text: sizedText(`${step.area}: `, tokens), failed: false };
    case 'lookup':
      return {
        text: sizedText(`order ${step.order} for customer ${step.customer}: `, tokens),
        failed: false,
      };
    case 'try_fix':
      return { text: `${step.approach} failed: ${step.reason}`, failed: true };
  }
}

/** The tool call of a planned step. */
export function stepCall(step: PlannedStep): { name: string; input: Record<string, string> } {
  switch (step.kind) {
    case 'probe':
      return { name: 'probe', input: { area: step.area } };
    case 'lookup':
      return { name: 'lookup', input: { customer: step.customer } };
    case 'try_fix':
      return { name: 'try_fix', input: { approach: step.approach } };
  }
}

/** The model's words beside a call: narration that names no planted fact, padded to the turn's size. */
export function stepNarration(k: number, callTokens: number): string {
  return sizedText(`Step ${k}: working through the next check. `, needleParameters.outputTokens - callTokens);
}
