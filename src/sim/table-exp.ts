// e^x for the latency model's 1.8 million lognormal draws per run. V8's Math.exp is a call into
// C++ (~14–25 ns here); this splits x = j + l/1024 + r with integer j, 0 ≤ l < 1024 and
// |r| ≤ 1/2048, reads e^j and e^(l/1024) from two small tables (both correctly rounded by
// Math.exp at load) and finishes e^r with a degree-4 polynomial (truncation < 3·10⁻¹⁸ relative):
// ~4 ns, within 3 ulp of Math.exp (tested). Outside (−700, 700), where the tables would lose
// precision or overflow, it is Math.exp.

const WHOLE = new Float64Array(1401);
for (let j = -700; j <= 700; j++) WHOLE[j + 700] = Math.exp(j);
const FRACTION = new Float64Array(1024);
for (let l = 0; l < 1024; l++) FRACTION[l] = Math.exp(l / 1024);

/** e^x within 3 ulp of `Math.exp`, about 3× faster in a hot loop. */
export function tableExp(x: number): number {
  if (!(x > -699 && x < 699)) return Math.exp(x);
  const k = Math.floor(x * 1024 + 0.5);
  const r = x - k / 1024;
  const l = k & 1023;
  const j = (k - l) / 1024;
  return (
    (WHOLE[j + 700] as number) *
    (FRACTION[l] as number) *
    (1 + r * (1 + r * (0.5 + r * (1 / 6 + r * (1 / 24)))))
  );
}
