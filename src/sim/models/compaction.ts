import { type Estimate, proportionEstimate } from '../estimate.js';
import { type MonteCarloOptions, monteCarloSettings } from '../monte-carlo.js';
import { type ParamSpec, probabilityParam, resolveParams } from '../params.js';
import { simRandom } from '../random.js';

/**
 * Does the load-bearing fact survive compaction (post-11)? One fact arrives per turn; the window
 * holds `budget` facts verbatim; older facts go into a summary that keeps each with probability
 * `retain`, decided once. Under `salience` the load-bearing fact is pinned and always kept.
 */
export interface CompactionParams {
  turns: number;
  /** Facts held verbatim before compacting. */
  budget: number;
  /** Chance the summary keeps a given old fact. */
  retain: number;
  /** 0-based turn at which the load-bearing fact arrives. */
  keyTurn: number;
  policy: 'recency' | 'salience';
}

export const compactionDefaults: CompactionParams = {
  turns: 120,
  budget: 30,
  retain: 0.3,
  keyTurn: 3,
  policy: 'recency',
};

export const compactionParamSpecs: readonly ParamSpec[] = [
  {
    key: 'turns',
    flag: '--turns',
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    description: 'turns in the run',
    slider: { min: 1, max: 200, step: 1 },
  },
  {
    key: 'budget',
    flag: '--budget',
    kind: 'integer',
    min: 1,
    description: 'facts held verbatim',
    slider: { min: 1, max: 100, step: 1 },
  },
  probabilityParam('retain', 'chance the summary keeps an old fact', 1, 0.01),
  {
    key: 'keyTurn',
    flag: '--key-turn',
    kind: 'integer',
    min: 0,
    description: '0-based turn the load-bearing fact arrives',
    slider: { min: 0, max: 50, step: 1 },
  },
  {
    key: 'policy',
    flag: '--policy',
    kind: 'choice',
    choices: ['recency', 'salience'],
    description: 'recency summarizes by age; salience pins the load-bearing fact',
  },
];

const crossCheck = (params: CompactionParams) =>
  params.keyTurn >= params.turns
    ? { key: 'keyTurn', problem: `must be < --turns (${params.turns}), got ${params.keyTurn}` }
    : undefined;

function checked(given?: Partial<CompactionParams>): CompactionParams {
  return resolveParams(compactionParamSpecs, compactionDefaults, given, crossCheck);
}

export interface CompactionExact {
  /** Probability the fact is present at the final turn. */
  survival: number;
  /** Whether the fact has left the verbatim window by the final turn. */
  agedOut: boolean;
}

/**
 * The fact leaves the window at turn keyTurn + budget; from then on it survives only if the
 * summary kept it (retain) or it was pinned (1).
 *
 * @example
 * compactionExact(); // { survival: 0.3, agedOut: true }
 */
export function compactionExact(given?: Partial<CompactionParams>): CompactionExact {
  const { turns, budget, retain, keyTurn, policy } = checked(given);
  const agedOut = turns - 1 >= keyTurn + budget;
  return { survival: !agedOut || policy === 'salience' ? 1 : retain, agedOut };
}

/** Survival at the final turn for every run length from 1 to `turns` (0 before the fact arrives). */
export function compactionSurvivalCurve(
  given?: Partial<CompactionParams>,
): { turns: number; survival: number }[] {
  const params = checked(given);
  return Array.from({ length: params.turns }, (_, index) => {
    const turns = index + 1;
    return {
      turns,
      survival: turns <= params.keyTurn ? 0 : compactionExact({ ...params, turns }).survival,
    };
  });
}

export interface CompactionMonteCarlo {
  survival: number;
  ci95: Estimate['ci95'];
  trials: number;
  seed: number;
}

/**
 * The post's simulation, turn by turn: the window is tracked as a count and the fact's position
 * in it, so a trial costs O(turns) rather than O(turns × budget) list copies.
 */
export function compactionMonteCarlo(
  given?: Partial<CompactionParams>,
  options?: MonteCarloOptions,
): CompactionMonteCarlo {
  const { turns, budget, retain, keyTurn, policy } = checked(given);
  const { trials, seed, report, finish } = monteCarloSettings(options, 200_000);
  const random = simRandom(seed);
  let survived = 0;
  for (let trial = 0; trial < trials; trial++) {
    if ((trial & 4095) === 0 && report) report(trial, trials);
    let held = 0;
    // The fact's index from the oldest end of the window, or −1 once it has left.
    let keyIndex = -1;
    let summarized: boolean | undefined;
    for (let t = 0; t < turns; t++) {
      if (t === keyTurn) keyIndex = held;
      held += 1;
      if (held > budget) {
        const leaving = held - budget;
        if (keyIndex >= 0) {
          if (keyIndex < leaving) {
            keyIndex = -1;
            summarized = policy === 'salience' ? true : (summarized ?? random.uniform() < retain);
          } else keyIndex -= leaving;
        }
        held = budget;
      }
    }
    if (keyIndex >= 0 || summarized === true) survived += 1;
  }
  finish();
  const estimate = proportionEstimate(survived, trials);
  return { survival: estimate.value, ci95: estimate.ci95, trials, seed };
}
