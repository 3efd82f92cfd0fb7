/**
 * The seeds' own cost arithmetic, as closed forms, so the benchmark prints its agreement with the
 * figures the posts printed (and a reader can see the measured runs start from the same model).
 * Prices: $3 / $15 per million input / output tokens.
 */

const inputUsd = 3 / 1e6;
const outputUsd = 15 / 1e6;

/** post-09's `run_cost(N, per_step_context)`: SYS 1,500, OUT 300, every call re-sends SYS + context(k). */
export function post09RunCost(steps: number, perStepContext: (k: number) => number): number {
  let input = 0;
  let output = 0;
  for (let k = 1; k <= steps; k++) {
    input += 1_500 + perStepContext(k);
    output += 300;
  }
  return input * inputUsd + output * outputUsd;
}

/** post-09's naive transcript: `(k - 1) * (OUT + RESULT)`, RESULT 600. */
export const post09Naive = (k: number) => (k - 1) * (300 + 600);
/** post-09's first move: each prior step keeps a 40-token digest of its result. */
export const post09Digests = (k: number) => (k - 1) * (300 + 40);

/** The transcript cross-post's `run_cost(N, digest_tokens)`: SYS 1,500, OUT 300, one digest per 10 prior steps. */
export function transcriptCrossPostRunCost(steps: number, digestTokens = 50): number {
  let input = 0;
  let output = 0;
  for (let k = 1; k <= steps; k++) {
    input += 1_500 + Math.floor((k - 1) / 10) * digestTokens;
    output += 300;
  }
  return input * inputUsd + output * outputUsd;
}

/** A closed form beside the figure its post printed. */
export interface SeedAgreement {
  source: string;
  steps: number;
  printed: string;
  computed: string;
  agrees: boolean;
}

/** Every printed figure the closed forms reproduce: post-09's table and the transcript cross-post's. */
export function seedAgreements(): SeedAgreement[] {
  const rows: SeedAgreement[] = [];
  const add = (source: string, steps: number, printed: string, value: number, digits: number) => {
    const computed = value.toFixed(digits);
    rows.push({
      source,
      steps,
      printed: `$${printed}`,
      computed: `$${computed}`,
      agrees: computed === printed,
    });
  };
  for (const [steps, printed] of [
    [10, '0.2115'],
    [20, '0.6930'],
    [40, '2.4660'],
    [80, '9.2520'],
  ] as const)
    add('post-09, naive', steps, printed, post09RunCost(steps, post09Naive), 4);
  // post-09 prints "about $3.94" for the 40-token digests at N=80.
  add('post-09, 40-token result digests', 80, '3.94', post09RunCost(80, post09Digests), 2);
  for (const [steps, printed] of [
    [100, '0.968'],
    [500, '6.338'],
    [2_000, '47.850'],
    [5_000, '232.125'],
  ] as const)
    add(
      'transcript cross-post, 50-token digest / 10 steps',
      steps,
      printed,
      transcriptCrossPostRunCost(steps),
      3,
    );
  return rows;
}

/**
 * The exponent b of `y ≈ a·xᵇ`, fitted by least squares on log x and log y: 2 for a bill that
 * grows with the square of the run's length, 1 for one that grows with it.
 */
export function growthExponent(points: readonly (readonly [number, number])[]): number {
  if (points.length < 2) return Number.NaN;
  const xs = points.map(([x]) => Math.log(x));
  const ys = points.map(([, y]) => Math.log(y));
  const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
  const mx = mean(xs);
  const my = mean(ys);
  let numerator = 0;
  let denominator = 0;
  for (let i = 0; i < xs.length; i++) {
    numerator += ((xs[i] as number) - mx) * ((ys[i] as number) - my);
    denominator += ((xs[i] as number) - mx) ** 2;
  }
  return numerator / denominator;
}
