//! The interval methods behind every "± how much" in Trace Lab, written out here so the lab (wasm)
//! and the CLI use the same arithmetic and the core needs no numerics dependency.
//!
//! All intervals are two-sided at [`CONFIDENCE`]. A bound that the data cannot give is `None`,
//! never a made-up number: a P95 from 8 samples has no upper bound.

/// The confidence level of every interval.
pub const CONFIDENCE: f64 = 0.95;
/// The standard normal quantile for a two-sided 95 % interval, Φ⁻¹(0.975).
pub const Z95: f64 = 1.959_963_984_540_054;
const ALPHA_HALF: f64 = (1.0 - CONFIDENCE) / 2.0;

/// A two-sided interval; a missing bound does not exist for this sample.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Bounds {
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Bounds {
    pub fn closed(lo: f64, hi: f64) -> Bounds {
        Bounds {
            lo: Some(lo),
            hi: Some(hi),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.lo.is_some() && self.hi.is_some()
    }

    /// Whether `v` lies inside (a missing bound is open, so it never excludes anything).
    pub fn contains(&self, v: f64) -> bool {
        self.lo.is_none_or(|lo| lo <= v) && self.hi.is_none_or(|hi| v <= hi)
    }

    pub fn scale(self, k: f64) -> Bounds {
        Bounds {
            lo: self.lo.map(|v| v * k),
            hi: self.hi.map(|v| v * k),
        }
    }
}

/// Wilson score interval for `k` successes of `n` (None when n = 0: there is nothing to count).
pub fn wilson(k: u64, n: u64) -> Option<Bounds> {
    if n == 0 {
        return None;
    }
    wilson_z(k as f64, n as f64, Z95)
}

/// Wilson's score interval on `k` of `n` with critical value `z` (k and n need not be whole:
/// an effective sample's, `dependence`); None when n is not above 0 or k lies outside 0..=n.
pub fn wilson_z(k: f64, n: f64, z: f64) -> Option<Bounds> {
    if n.is_nan() || n <= 0.0 || k > n || k < 0.0 {
        return None;
    }
    let p = k / n;
    let z2 = z * z;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    // At 0 of n and n of n the bound is exactly 0 or 1; rounding must not push it past.
    let lo = if k == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    Some(Bounds::closed(lo, hi))
}

/// Newcombe's hybrid score interval (his method 10) for p_new − p_base, built from the two Wilson
/// intervals. None when either side has no attempts.
pub fn newcombe(k_new: u64, n_new: u64, k_base: u64, n_base: u64) -> Option<Bounds> {
    let w_new = wilson(k_new, n_new)?;
    let w_base = wilson(k_base, n_base)?;
    let p_new = k_new as f64 / n_new as f64;
    let p_base = k_base as f64 / n_base as f64;
    let (l_new, u_new) = (w_new.lo?, w_new.hi?);
    let (l_base, u_base) = (w_base.lo?, w_base.hi?);
    let d = p_new - p_base;
    let lo = d - ((p_new - l_new).powi(2) + (u_base - p_base).powi(2)).sqrt();
    let hi = d + ((u_new - p_new).powi(2) + (p_base - l_base).powi(2)).sqrt();
    Some(Bounds::closed(lo.max(-1.0), hi.min(1.0)))
}

/// MOVER (Newcombe's construction, Zou & Donner) for new − base from each estimate's own
/// interval: each side's distance to its limits combined in quadrature. None when a bound is
/// missing.
pub fn mover(base: f64, base_bounds: Bounds, new: f64, new_bounds: Bounds) -> Option<Bounds> {
    let (lb, ub, ln, un) = (
        base_bounds.lo?,
        base_bounds.hi?,
        new_bounds.lo?,
        new_bounds.hi?,
    );
    let d = new - base;
    Some(Bounds::closed(
        d - ((new - ln).powi(2) + (ub - base).powi(2)).sqrt(),
        d + ((un - new).powi(2) + (base - lb).powi(2)).sqrt(),
    ))
}

/// The distribution-free interval for the population's `q`-quantile (0 < q < 1) from `n` sorted
/// samples: the ranks (1-based) `lo`, `hi` of two order statistics with
/// P(X₍lo₎ ≤ ξ_q ≤ X₍hi₎) ≥ 95 %, each tail ≤ 2.5 %, from Binomial(n, q).
/// A rank of 0 means "no lower bound exists", n + 1 "no upper bound exists".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct OrderRanks {
    pub lo: usize,
    pub hi: usize,
    pub n: usize,
}

/// The order-statistic ranks for quantile `q` of `n` samples (see [`OrderRanks`]).
///
/// The ranks depend on `n` and `q` only, and finding them sums a Binomial(n, q) with one `exp`
/// per term: at 100,000 attempts that was 23 ms of every threshold edit in the lab, where the
/// sample (and so `n`) stays. The last few answers are kept, per thread.
pub fn quantile_ranks(q: f64, n: usize) -> OrderRanks {
    if n == 0 || !(q > 0.0 && q < 1.0) {
        return OrderRanks {
            lo: 0,
            hi: n + 1,
            n,
        };
    }
    /// How many (n, q) answers are kept: P50 and the tail of TTFT, E2E and ITL, with room.
    const KEPT: usize = 12;
    thread_local! {
        static RANKS: std::cell::RefCell<Vec<(usize, u64, OrderRanks)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let key = (n, q.to_bits());
    if let Some(r) = RANKS.with(|c| {
        c.borrow()
            .iter()
            .find(|(n, q, _)| (*n, *q) == key)
            .map(|(_, _, r)| *r)
    }) {
        return r;
    }
    let r = order_ranks(q, n);
    RANKS.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() == KEPT {
            c.remove(0);
        }
        c.push((key.0, key.1, r));
    });
    r
}

/// [`quantile_ranks`] computed afresh (0 < q < 1, n ≥ 1).
fn order_ranks(q: f64, n: usize) -> OrderRanks {
    let pmf = binomial_pmf(n, q);
    // lo = the largest l with P(B ≤ l − 1) ≤ 2.5 %; summed from the left for accuracy.
    let mut lo = 0;
    let mut cdf = 0.0;
    for (i, p) in pmf.iter().enumerate() {
        cdf += p;
        if cdf <= ALPHA_HALF * (1.0 + 1e-12) {
            lo = i + 1;
        } else {
            break;
        }
    }
    // hi = the smallest u with P(B ≥ u) ≤ 2.5 %; summed from the right.
    let mut hi = n + 1;
    let mut tail = 0.0;
    for u in (1..=n).rev() {
        tail += pmf[u];
        if tail <= ALPHA_HALF * (1.0 + 1e-12) {
            hi = u;
        } else {
            break;
        }
    }
    OrderRanks { lo, hi, n }
}

/// The interval for the `q`-quantile from the ascending `sorted` sample.
pub fn quantile_interval(sorted: &[f64], q: f64) -> Bounds {
    let r = quantile_ranks(q, sorted.len());
    Bounds {
        lo: (r.lo >= 1).then(|| sorted[r.lo - 1]),
        hi: (r.hi <= r.n).then(|| sorted[r.hi.saturating_sub(1).min(r.n.saturating_sub(1))]),
    }
}

/// The smallest n for which both bounds of the `q`-quantile's interval exist.
pub fn min_n_for_quantile(q: f64) -> usize {
    if !(q > 0.0 && q < 1.0) {
        return usize::MAX;
    }
    // Both bounds exist once qⁿ ≤ 2.5 % and (1 − q)ⁿ ≤ 2.5 %.
    let need = |p: f64| (ALPHA_HALF.ln() / p.ln() - 1e-9).ceil().max(1.0) as usize;
    need(q).max(need(1.0 - q))
}

/// The rank (1-based) of the order statistic that bounds the population's `q`-quantile from
/// above with confidence `1 − alpha`, distribution-free: the smallest `u` with
/// P(Binomial(n, q) ≥ u) ≤ alpha, so P(ξ_q ≤ X₍u₎) ≥ 1 − alpha. `None` when no such rank exists
/// (n too small: even the maximum is not a bound, which needs 1 − qⁿ ≥ 1 − alpha).
///
/// Sums the upper tail from `n` downwards in log space and stops once it passes `alpha`, so a
/// run's ten million timed reads cost about n·(1 − q) terms and no table.
pub fn upper_bound_rank(q: f64, n: u64, alpha: f64) -> Option<u64> {
    if n == 0 || !(q > 0.0 && q < 1.0) || !(alpha > 0.0 && alpha < 1.0) {
        return None;
    }
    let (lq, lr) = (q.ln(), (1.0 - q).ln());
    // log P(B = n) = n ln q; P(B = u − 1) = P(B = u) · u / (n − u + 1) · (1 − q) / q.
    let mut log_p = n as f64 * lq;
    let mut tail = 0.0;
    let mut u = n;
    loop {
        tail += log_p.exp();
        if tail > alpha * (1.0 + 1e-12) {
            // Adding P(B = u) broke the bound: u + 1 is the smallest rank that keeps it.
            return (u < n).then_some(u + 1);
        }
        if u == 0 {
            // The whole distribution summed to ≤ alpha: only rounding gets here.
            return Some(1);
        }
        log_p += (u as f64).ln() - ((n - u + 1) as f64).ln() + lr - lq;
        u -= 1;
    }
}

/// Binomial(n, q) probabilities, by a log-space recurrence (no factorials, no underflow trap).
fn binomial_pmf(n: usize, q: f64) -> Vec<f64> {
    let (lq, lr) = (q.ln(), (1.0 - q).ln());
    let mut log_p = n as f64 * lr;
    let mut out = Vec::with_capacity(n + 1);
    out.push(log_p.exp());
    for i in 0..n {
        log_p += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + lq - lr;
        out.push(log_p.exp());
    }
    out
}

/// The exact (Garwood) interval for the mean of a Poisson count `k`.
pub fn poisson(k: u64) -> Bounds {
    let kf = k as f64;
    let lo = if k == 0 {
        0.0
    } else {
        gamma_quantile(kf, ALPHA_HALF)
    };
    let hi = gamma_quantile(kf + 1.0, 1.0 - ALPHA_HALF);
    Bounds::closed(lo, hi)
}

/// [`poisson`] for a count that need not be whole (an effective count, k ÷ τ). Below half a
/// count the lower limit is 0.
pub fn poisson_real(k: f64) -> Bounds {
    let lo = if k < 0.5 {
        0.0
    } else {
        gamma_quantile(k, ALPHA_HALF)
    };
    let hi = gamma_quantile(k + 1.0, 1.0 - ALPHA_HALF);
    Bounds::closed(lo, hi)
}

/// x with P(a, x) = target, where P is the regularized lower incomplete gamma function.
fn gamma_quantile(a: f64, target: f64) -> f64 {
    let (mut lo, mut hi) = (0.0_f64, a + 10.0 * a.sqrt() + 20.0);
    while gamma_p(a, hi) < target {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if gamma_p(a, mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi.max(1.0) {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// Regularized lower incomplete gamma P(a, x): series below a + 1, continued fraction above.
fn gamma_p(a: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let log_front = a * x.ln() - x - ln_gamma(a);
    if x < a + 1.0 {
        let (mut term, mut sum, mut ap) = (1.0 / a, 1.0 / a, a);
        for _ in 0..10_000 {
            ap += 1.0;
            term *= x / ap;
            sum += term;
            if term.abs() < sum.abs() * 1e-16 {
                break;
            }
        }
        (sum.ln() + log_front).exp().min(1.0)
    } else {
        // Lentz's method for the continued fraction of Q(a, x).
        let tiny = 1e-300;
        let mut b = x + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / b;
        let mut h = d;
        for i in 1..10_000 {
            let an = -(i as f64) * (i as f64 - a);
            b += 2.0;
            d = an * d + b;
            if d.abs() < tiny {
                d = tiny;
            }
            c = b + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let delta = d * c;
            h *= delta;
            if (delta - 1.0).abs() < 1e-16 {
                break;
            }
        }
        (1.0 - (h.ln() + log_front).exp()).max(0.0)
    }
}

/// ln Γ(x) for x ≥ 0.5 (Lanczos, g = 7, n = 9; about 15 significant digits). Its one caller,
/// [`gamma_p`], asks for Γ of a Poisson count or the count + 1 (≥ 1), so the reflection formula
/// below 0.5 is left out: it would link the sine (and its argument reduction) into every bundle
/// that shows an interval, the lab's first download among them, for a branch never taken.
fn ln_gamma(x: f64) -> f64 {
    debug_assert!(x >= 0.5, "ln_gamma({x}): only x ≥ 0.5 is supported");
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fully specified generator, so a bootstrap with
/// the same seed gives the same interval on every machine and in the browser.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index in 0..n by multiply-shift (Lemire); the bias is below n / 2⁶⁴.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Draws a resample of the ascending `sorted` with replacement, returned ascending: counting how
/// often each position is drawn avoids a sort per resample.
pub fn resample_sorted(
    sorted: &[f64],
    rng: &mut SplitMix64,
    counts: &mut Vec<u32>,
    out: &mut Vec<f64>,
) {
    let n = sorted.len();
    counts.clear();
    counts.resize(n, 0);
    for _ in 0..n {
        counts[rng.below(n)] += 1;
    }
    out.clear();
    for (v, &c) in sorted.iter().zip(counts.iter()) {
        for _ in 0..c {
            out.push(*v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_bound_rank_matches_the_binomial_tail() {
        // Below 299 samples not even the maximum bounds P99 at 95 %: 0.99^298 > 0.05.
        assert_eq!(upper_bound_rank(0.99, 298, 0.05), None);
        assert_eq!(upper_bound_rank(0.99, 299, 0.05), Some(299));
        // Against the full table from binomial_pmf, for sizes either side of the edges.
        for n in [299usize, 300, 473, 1000, 4321, 20_000] {
            let pmf = binomial_pmf(n, 0.99);
            let tail_from = |u: usize| pmf[u..].iter().sum::<f64>();
            let u = upper_bound_rank(0.99, n as u64, 0.05).unwrap() as usize;
            assert!(
                tail_from(u) <= 0.05 + 1e-12,
                "n {n}: rank {u} keeps the tail"
            );
            assert!(tail_from(u - 1) > 0.05, "n {n}: rank {u} is the smallest");
        }
        // Large n: about n·q + 1.645·√(n·q·(1 − q)) (normal approximation), far below n.
        let n = 10_000_000u64;
        let u = upper_bound_rank(0.99, n, 0.05).unwrap() as f64;
        let approx = n as f64 * 0.99 + 1.645 * (n as f64 * 0.99 * 0.01).sqrt();
        assert!((u - approx).abs() < 3.0, "{u} vs {approx}");
    }

    #[test]
    fn kept_ranks_are_the_ranks_computed_afresh() {
        // More distinct (n, q) than are kept, twice over, in an order that evicts and refills.
        let asks: Vec<(f64, usize)> = [0.5, 0.9, 0.95, 0.99]
            .iter()
            .flat_map(|q| [8, 20, 100, 1_000, 100_000].map(|n| (*q, n)))
            .collect();
        for _ in 0..2 {
            for (q, n) in &asks {
                assert_eq!(
                    quantile_ranks(*q, *n),
                    order_ranks(*q, *n),
                    "q = {q}, n = {n}"
                );
                assert_eq!(
                    quantile_ranks(*q, *n),
                    order_ranks(*q, *n),
                    "q = {q}, n = {n}, asked again"
                );
            }
        }
        // A P95 of 100 samples, checked with exact binomial sums in Python (math.comb): the 90th
        // and the 100th order statistics.
        assert_eq!(
            quantile_ranks(0.95, 100),
            OrderRanks {
                lo: 90,
                hi: 100,
                n: 100
            }
        );
    }

    #[test]
    fn ln_gamma_matches_factorials() {
        for (x, f) in [(1.0, 1.0f64), (2.0, 1.0), (5.0, 24.0), (11.0, 3_628_800.0)] {
            assert!((ln_gamma(x) - f.ln()).abs() < 1e-12, "lnΓ({x})");
        }
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
    }

    #[test]
    fn gamma_p_matches_the_poisson_sum() {
        // P(X ≥ k; μ) = P(k, μ): check against the plain sum for small k.
        for k in 1..8u32 {
            for mu in [0.3f64, 1.0, 4.0, 9.5] {
                let below: f64 = (0..k)
                    .map(|i| {
                        (-mu).exp() * mu.powi(i as i32) / (1..=i).map(f64::from).product::<f64>()
                    })
                    .sum();
                assert!(
                    (gamma_p(k as f64, mu) - (1.0 - below)).abs() < 1e-12,
                    "k={k} mu={mu}"
                );
            }
        }
    }
}
