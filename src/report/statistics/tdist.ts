/**
 * Student's t distribution: two-sided p-values and critical values at any level, for the
 * multiplicity adjustments (family.ts), which need t quantiles at levels like 1 − 0.05/(2·8)
 * that the 95% tables of interval.ts do not hold. Pure numbers.
 *
 * The CDF is the regularized incomplete beta function, P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2),
 * evaluated by its continued fraction (Lentz's method; Press et al., Numerical Recipes, 3rd ed.,
 * §6.4, `betacf`); the quantile inverts it by bisection on log-scale (monotone, 200 steps at most).
 * Checked in test/report/tdist.test.ts against the tables of interval.ts (t(0.975, df)).
 */

/** ln Γ(x), Lanczos approximation (g = 7, n = 9; accurate to ~1e-15 for x > 0). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const y = x - 1;
  let a = c[0];
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta (Lentz). */
function betacf(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-14) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1. */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const lbt = lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x);
  const bt = Math.exp(lbt);
  if (x < (a + 1) / (a + b + 2)) return (bt * betacf(x, a, b)) / a;
  return 1 - (bt * betacf(1 - x, b, a)) / b;
}

/**
 * Two-sided p-value of a t statistic with `df` degrees of freedom: P(|T| ≥ |t|). NaN for a NaN
 * statistic or df < 1; 0 for an infinite statistic (a zero standard error with a nonzero effect).
 */
export function tTwoSidedP(t: number, df: number): number {
  if (Number.isNaN(t) || !(df >= 1)) return Number.NaN;
  if (!Number.isFinite(t)) return 0;
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/**
 * The critical value c with P(|T| ≥ c) = alpha for `df` degrees of freedom: the half-width
 * multiplier of a two-sided (1 − alpha) interval. alpha in (0, 1).
 */
export function tCriticalTwoSided(alpha: number, df: number): number {
  if (!(alpha > 0 && alpha < 1) || !(df >= 1)) return Number.NaN;
  let lo = 0;
  let hi = 1;
  while (tTwoSidedP(hi, df) > alpha) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (tTwoSidedP(mid, df) > alpha) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The standard normal quantile Φ⁻¹(p), p in (0, 1): Peter J. Acklam's rational approximation
 * ("An algorithm for computing the inverse normal cumulative distribution function", 2003;
 * relative error below 1.15e-9), without the refinement step. NaN outside (0, 1).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) return Number.NaN;
  const lower = 0.02425;
  if (p < lower || p > 1 - lower) {
    const q = Math.sqrt(-2 * Math.log(p < lower ? p : 1 - p));
    const x =
      (((((-7.784894002430293e-3 * q - 3.223964580411365e-1) * q - 2.400758277161838) * q - 2.549732539343734) * q +
        4.374664141464968) *
        q +
        2.938163982698783) /
      ((((7.784695709041462e-3 * q + 3.224671290700398e-1) * q + 2.445134137142996) * q + 3.754408661907416) * q + 1);
    return p < lower ? x : -x;
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((-3.969683028665376e1 * r + 2.209460984245205e2) * r - 2.759285104469687e2) * r + 1.38357751867269e2) * r -
      3.066479806614716e1) *
      r +
      2.506628277459239) *
      q) /
    (((((-5.447609879822406e1 * r + 1.615858368580409e2) * r - 1.556989798598866e2) * r + 6.680131188771972e1) * r -
      1.328068155288572e1) *
      r +
      1)
  );
}
