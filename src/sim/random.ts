/** The draws a simulation needs, all from one seeded stream so a seed reproduces a run bit for bit. */
export interface SimRandom {
  /** Uniform in [0, 1). */
  uniform(): number;
  /** 32 uniform bits as an unsigned integer: `bits() < threshold` is a Bernoulli draw without division. */
  bits(): number;
  /** Standard normal. */
  normal(): number;
  /** Fills `out` with standard normals: the same stream as calling `normal()` that many times, faster. */
  fillNormal(out: Float64Array): void;
}

// Ziggurat tables (Marsaglia & Tsang, 2000) for the standard normal, 128 layers.
const LAYERS = 128;
const kn = new Float64Array(LAYERS);
const wn = new Float64Array(LAYERS);
const fn = new Float64Array(LAYERS);
const TAIL = 3.442619855899;
{
  const m1 = 2147483648;
  const vn = 9.91256303526217e-3;
  let dn = TAIL;
  let tn = dn;
  const q = vn / Math.exp(-0.5 * dn * dn);
  kn[0] = (dn / q) * m1;
  kn[1] = 0;
  wn[0] = q / m1;
  wn[LAYERS - 1] = dn / m1;
  fn[0] = 1;
  fn[LAYERS - 1] = Math.exp(-0.5 * dn * dn);
  for (let i = LAYERS - 2; i >= 1; i--) {
    dn = Math.sqrt(-2 * Math.log(vn / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = (dn / tn) * m1;
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / m1;
  }
}

/**
 * mulberry32 for uniforms (`seededRandom` in reins/testing is this stream) and the ziggurat for
 * normals: about 3 ns and 6 ns a draw, where Box–Muller's log, sqrt, sin and cos cost ~50 ns.
 */
class Mulberry32 implements SimRandom {
  // An Int32Array slot, not a field: the state leaves the small-integer range, and a plain field
  // would box a fresh heap number on every draw.
  private readonly state = new Int32Array(1);

  constructor(seed: number) {
    this.state[0] = seed >>> 0;
  }

  /** 32 random bits as a signed integer. */
  int32(): number {
    const state = this.state;
    let t = ((state[0] as number) + 0x6d2b79f5) | 0;
    state[0] = t;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return t ^ (t >>> 14);
  }

  uniform(): number {
    return (this.int32() >>> 0) / 4_294_967_296;
  }

  bits(): number {
    return this.int32() >>> 0;
  }

  fillNormal(out: Float64Array): void {
    for (let i = 0; i < out.length; i++) out[i] = this.normal();
  }

  normal(): number {
    const hz = this.int32();
    const iz = hz & (LAYERS - 1);
    // 98.8 % of draws end here; the rest (wedges and the tail) are in a separate function so this
    // one stays small enough to inline and quick to compile.
    if (Math.abs(hz) < (kn[iz] as number)) return hz * (wn[iz] as number);
    return this.normalSlow(hz, iz);
  }

  private normalSlow(firstHz: number, firstIz: number): number {
    let hz = firstHz;
    let iz = firstIz;
    for (;;) {
      const x = hz * (wn[iz] as number);
      if (iz === 0) {
        // The base layer's tail beyond TAIL, by Marsaglia's exponential rejection.
        let tailX: number;
        let tailY: number;
        do {
          tailX = -Math.log(1 - this.uniform()) / TAIL;
          tailY = -Math.log(1 - this.uniform());
        } while (tailY + tailY < tailX * tailX);
        return hz > 0 ? TAIL + tailX : -TAIL - tailX;
      }
      if (
        (fn[iz] as number) + this.uniform() * ((fn[iz - 1] as number) - (fn[iz] as number)) <
        Math.exp(-0.5 * x * x)
      ) {
        return x;
      }
      hz = this.int32();
      iz = hz & (LAYERS - 1);
      if (Math.abs(hz) < (kn[iz] as number)) return hz * (wn[iz] as number);
    }
  }
}

/**
 * A seeded source of uniform and normal draws.
 *
 * @example
 * const random = simRandom(7);
 * const latencyMs = Math.exp(6 + 0.6 * random.normal());
 */
export function simRandom(seed: number): SimRandom {
  return new Mulberry32(seed);
}
