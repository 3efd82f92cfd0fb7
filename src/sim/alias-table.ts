import type { SimRandom } from './random.js';

/**
 * Draws from a fixed discrete distribution in constant time (Walker's alias method, Vose's
 * construction): two 32-bit draws and one comparison, whatever the number of outcomes. The
 * simulators use it for "how does this step or pass end", where a scan of the cumulative table
 * would take as many comparisons as the expected outcome.
 */
export class AliasTable {
  readonly size: number;
  private readonly threshold: Float64Array;
  private readonly alias: Int32Array;

  /** `weights` need not sum to 1; they must be finite, non-negative and not all zero. */
  constructor(weights: ArrayLike<number>) {
    const n = weights.length;
    let total = 0;
    for (let i = 0; i < n; i++) total += weights[i] as number;
    if (!(n > 0 && total > 0 && Number.isFinite(total)))
      throw new RangeError('AliasTable needs positive, finite weights');
    this.size = n;
    this.threshold = new Float64Array(n);
    this.alias = new Int32Array(n);
    const scaled = Float64Array.from({ length: n }, (_, i) => ((weights[i] as number) * n) / total);
    const small: number[] = [];
    const large: number[] = [];
    for (let i = n - 1; i >= 0; i--) ((scaled[i] as number) < 1 ? small : large).push(i);
    while (small.length > 0 && large.length > 0) {
      const less = small.pop() as number;
      const more = large.pop() as number;
      this.threshold[less] = (scaled[less] as number) * 4_294_967_296;
      this.alias[less] = more;
      scaled[more] = (scaled[more] as number) + (scaled[less] as number) - 1;
      ((scaled[more] as number) < 1 ? small : large).push(more);
    }
    // What is left has probability 1 up to rounding: always itself.
    for (const i of [...small, ...large]) {
      this.threshold[i] = Number.POSITIVE_INFINITY;
      this.alias[i] = i;
    }
  }

  /** An outcome index in [0, size). */
  sample(random: SimRandom): number {
    const column = Math.floor((random.bits() * this.size) / 4_294_967_296);
    return random.bits() < (this.threshold[column] as number) ? column : (this.alias[column] as number);
  }
}
