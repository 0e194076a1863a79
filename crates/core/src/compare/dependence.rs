//! Whether a run's attempts are independent draws, and how many independent ones they are worth.
//!
//! A load test's requests form a series in start order: a request that waits behind a long one
//! makes the next wait too, and a stall touches hundreds in a row. Every figure is an average of
//! a 0/1 series over that order — a share directly, a percentile through "at or below the
//! estimate" (its interval is that share's, read back as ranks). Batch means measure how much
//! more the average swings than independent draws would: the variance inflation τ, so n attempts
//! are worth n / τ independent ones, the effective sample size.
//!
//! The batch size follows the data: the smallest batches whose means no longer correlate with
//! their neighbours (lag-1 correlation of the batch means within its 5 % noise), never fewer
//! than [`MIN_BATCHES`]. Independence is rejected when τ̂ lies beyond the χ² 95 % point the
//! batch means would reach by chance; otherwise τ = 1 and the figure keeps its exact interval.
//! The uncertainty of τ̂ itself is carried by Student's t with (batches − 1) degrees of freedom.

use serde::Serialize;

use super::stats::{Bounds, Z95};
use crate::index::{Index, Step};
use crate::text::{Lang, Text};

/// Below this many samples a series is not checked: the exact interval stands, with a line
/// saying it assumes independent attempts. Ten batches of fewer than 20 say too little about
/// their swings (a 150-request run's batch means call it correlated on one chance stretch).
pub const MIN_SERIES: usize = 200;
/// The fewest batches the variance is read from (t with 9 degrees of freedom at the least).
pub const MIN_BATCHES: usize = 10;
/// The most batches tried first (the smallest batches).
const MAX_BATCHES: usize = 10;
/// The one-sided 95 % normal point (the batch means' lag-1 test and the χ² approximation).
const Z_ONE_SIDED: f64 = 1.644_853_626_951_472_2;

/// What the series says about one figure's samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dependence {
    /// Samples in the series (attempts for a share, ranked values for a percentile).
    pub n: usize,
    /// n / τ: how many independent samples the series is worth for this figure.
    pub effective_n: f64,
    /// The inflation the interval uses: τ̂ when independence is rejected, else 1.
    pub inflation: f64,
    /// τ̂ as measured (batch means), whatever the verdict.
    pub measured_inflation: f64,
    pub batches: usize,
    pub batch_size: usize,
    /// Lag-1 correlation of the batch means at the chosen size (near 0: batches independent).
    pub batch_lag1: f64,
    pub verdict: Independence,
}

/// The verdict on independence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Independence {
    /// Too few samples to check ([`MIN_SERIES`]): the exact interval assumes independence.
    Unchecked,
    /// The trace has no start times, so its order along the run is unknown: the exact interval
    /// assumes independence.
    NoStartTimes,
    /// The batch means swing no more than independent draws would: the exact interval stands.
    NotRejected,
    /// Correlated: the interval is widened by τ (batch means).
    Correlated,
    /// Correlated even between the largest batches allowed: the interval is widened by τ̂ but
    /// may still be too narrow (run longer, or replicate).
    StillCorrelated,
}

impl Dependence {
    /// `n` samples taken at their word (τ = 1), no batches read: a series not checked, or one
    /// whose verdict keeps the exact interval.
    pub fn exact(n: usize, verdict: Independence) -> Dependence {
        Dependence {
            n,
            effective_n: n as f64,
            inflation: 1.0,
            measured_inflation: 1.0,
            batches: 0,
            batch_size: 0,
            batch_lag1: 0.0,
            verdict,
        }
    }

    /// Whether the interval must be widened (τ > 1).
    pub fn widens(&self) -> bool {
        matches!(
            self.verdict,
            Independence::Correlated | Independence::StillCorrelated
        )
    }

    /// The critical value two-sided 95 %: Student's t with batches − 1 degrees of freedom when
    /// the variance came from batch means, the normal one otherwise.
    pub fn critical(&self) -> f64 {
        if self.widens() {
            t975(self.batches as f64 - 1.0)
        } else {
            Z95
        }
    }

    /// "2,000 attempts ≈ 140 independent ones (strongly correlated: …)".
    pub fn summary(&self, what: &Text, lang: Lang) -> String {
        let n = crate::format::integer(self.n as u64);
        let what = what.get(lang);
        let eff = crate::format::integer(self.effective_n.round().max(1.0) as u64);
        let tau = crate::format::trim_num((self.measured_inflation * 10.0).round() / 10.0);
        let (b, m) = (
            crate::format::integer(self.batches as u64),
            crate::format::integer(self.batch_size as u64),
        );
        match (self.verdict, lang) {
            (Independence::Unchecked, Lang::En) => {
                format!("{n} {what}, too few to check for dependence: the interval assumes they are independent")
            }
            (Independence::Unchecked, Lang::Zh) => format!("{n} 个{what}，太少，无法检验相关性：区间假定它们相互独立"),
            (Independence::NoStartTimes, Lang::En) => {
                format!("{n} {what} without start times, so their order along the run is unknown: the interval assumes they are independent")
            }
            (Independence::NoStartTimes, Lang::Zh) => format!("{n} 个{what}没有开始时间，不知道它们在运行中的先后：区间假定它们相互独立"),
            (Independence::NotRejected, Lang::En) => format!(
                "{n} {what}, independence not rejected (batch means: {b} batches of {m}, variance ×{tau}): the exact interval stands"
            ),
            (Independence::NotRejected, Lang::Zh) => {
                format!("{n} 个{what}，未能否定独立性（批均值：{b} 批，每批 {m} 个，方差 ×{tau}）：沿用精确区间")
            }
            (Independence::Correlated, Lang::En) => format!(
                "{n} {what} ≈ {eff} independent ones ({}: batch means of {b} batches of {m} in start order swing ×{tau} the variance of independent draws, as when requests queue behind each other)",
                strength(self.measured_inflation).en
            ),
            (Independence::Correlated, Lang::Zh) => format!(
                "{n} 个{what} ≈ {eff} 个独立样本（{}：按开始时间分成 {b} 批、每批 {m} 个，批均值的方差是独立抽样的 {tau} 倍，就像请求彼此排队时那样）",
                strength(self.measured_inflation).zh
            ),
            (Independence::StillCorrelated, Lang::En) => format!(
                "{n} {what} ≈ {eff} independent ones or fewer (even batches of {m} still correlate, lag-1 {:.2}: the interval may be too narrow; run longer or repeat the run)",
                self.batch_lag1
            ),
            (Independence::StillCorrelated, Lang::Zh) => format!(
                "{n} 个{what} ≈ {eff} 个独立样本，甚至更少（每批 {m} 个的批均值仍然相关，滞后 1 相关 {:.2}：区间可能仍然偏窄；请跑得更久，或重复运行）",
                self.batch_lag1
            ),
        }
    }
}

/// How strong the correlation is, in words, from the variance inflation.
fn strength(tau: f64) -> Text {
    if tau >= 5.0 {
        Text::new("strongly correlated", "强相关")
    } else if tau >= 2.0 {
        Text::new("correlated", "相关")
    } else {
        Text::new("mildly correlated", "弱相关")
    }
}

/// A series whose order along the run is unknown: not checked.
pub fn untimed(n: usize) -> Dependence {
    Dependence::exact(n, Independence::NoStartTimes)
}

/// The dependence of a 0/1 series (in start order).
pub fn of_indicator(series: &[bool]) -> Dependence {
    of_values(series.iter().map(|&b| b as u8 as f64))
}

/// The dependence of a series of values in start order (a 0/1 series, or the values
/// themselves: a TTFT sample shows how long a queue's memory is even where few cross the
/// threshold).
pub fn of_series(x: &[f64]) -> Dependence {
    of_values(x.iter().copied())
}

/// [`of_series`] over values read from `x` a few times over, never collected: a million-attempt
/// run's qualified series is read again on every threshold edit, and a copy of it (and of its
/// running sums) cost more than the reading. The sums are taken in the same order as over a
/// slice, so the result is the same to the bit.
pub fn of_values<I: ExactSizeIterator<Item = f64> + Clone>(x: I) -> Dependence {
    let n = x.len();
    let unchecked = Dependence::exact(n, Independence::Unchecked);
    if n < MIN_SERIES {
        return unchecked;
    }
    let mean = x.clone().sum::<f64>() / n as f64;
    let var = x.clone().map(|v| (v - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
    from_batches(n, var, |b, m| {
        // Each batch's mean is the difference of the running sum of the centred values at its
        // two ends: one pass per batch count tried.
        let mut ends = Vec::with_capacity(b + 1);
        ends.push(0.0);
        let mut c = 0.0;
        for (i, v) in x.clone().take(b * m).enumerate() {
            c += v - mean;
            if (i + 1) % m == 0 {
                ends.push(c);
            }
        }
        ends.windows(2).map(|w| (w[1] - w[0]) / m as f64).collect()
    })
}

/// The dependence of a 0/1 series of `n` values known by its counts: `ones` in all, and
/// `batch_ones(b, m)`, the ones in each of `b` batches of `m` consecutive values (the last
/// n − b·m left out). The qualified series is read so: its counts per batch come from the
/// index by binary searches (`Readings`), so a threshold edit reads no series at all. The same
/// arithmetic as [`of_values`] on the counts' exact sums, which may differ from its running
/// sums in the last bits.
pub(crate) fn of_counts(
    n: usize,
    ones: usize,
    batch_ones: impl Fn(usize, usize) -> Vec<usize>,
) -> Dependence {
    if n < MIN_SERIES {
        return Dependence::exact(n, Independence::Unchecked);
    }
    let mean = ones as f64 / n as f64;
    let var =
        (ones as f64 * (1.0 - mean).powi(2) + (n - ones) as f64 * mean.powi(2)) / (n as f64 - 1.0);
    from_batches(n, var, |b, m| {
        batch_ones(b, m)
            .into_iter()
            .map(|c| (c as f64 - m as f64 * mean) / m as f64)
            .collect()
    })
}

/// The dependence of a series of `n` (at least [`MIN_SERIES`]) values with this variance, from
/// its centred batch means (`batch_means(b, m)`: b batches of m = n / b).
fn from_batches(n: usize, var: f64, batch_means: impl Fn(usize, usize) -> Vec<f64>) -> Dependence {
    if var.is_nan() || var <= 0.0 || !var.is_finite() {
        // A constant series says nothing about its swings: the exact interval (which is
        // one-sided at 0 of n or n of n) stands.
        return Dependence {
            verdict: Independence::NotRejected,
            ..Dependence::exact(n, Independence::Unchecked)
        };
    }
    let mut b = MAX_BATCHES.min(n / MIN_BATCHES).max(MIN_BATCHES);
    loop {
        let m = n / b;
        // Batches of m consecutive attempts; the last n − b·m are left out of the batches (not
        // of the figure).
        let means = batch_means(b, m);
        let (bmean, s2) = mean_var(&means);
        let lag1 = lag1(&means, bmean, s2);
        let independent_batches = lag1 <= Z_ONE_SIDED / (b as f64).sqrt();
        if independent_batches || b == MIN_BATCHES {
            let tau = (m as f64 * s2 / var).max(f64::MIN_POSITIVE);
            let df = b as f64 - 1.0;
            let rejected = tau * df > chi2_95(df);
            let verdict = match (rejected, independent_batches) {
                (false, _) => Independence::NotRejected,
                (true, true) => Independence::Correlated,
                (true, false) => Independence::StillCorrelated,
            };
            // Batch means that still lean on their neighbours understate the variance of their
            // average by about (1 + r₁)/(1 − r₁) (an AR(1) view of the batch means): widen by
            // it for a positive lag-1 correlation (kept below 0.5, where batches stop helping).
            let r1 = lag1.clamp(0.0, 0.5);
            let inflation = if rejected {
                tau * (1.0 + r1) / (1.0 - r1)
            } else {
                1.0
            };
            return Dependence {
                n,
                effective_n: n as f64 / inflation,
                inflation,
                measured_inflation: tau,
                batches: b,
                batch_size: m,
                batch_lag1: lag1,
                verdict,
            };
        }
        b = (b / 2).max(MIN_BATCHES);
    }
}

/// The more cautious of two readings of one figure's series: the one that widens more.
pub fn wider(a: Dependence, b: Dependence) -> Dependence {
    if b.inflation > a.inflation {
        Dependence {
            n: a.n,
            effective_n: a.n as f64 / b.inflation,
            ..b
        }
    } else {
        a
    }
}

/// Mean and sample variance (n − 1).
pub(crate) fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let s2 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, s2)
}

/// Lag-1 autocorrelation (0 for a constant series).
fn lag1(x: &[f64], mean: f64, s2: f64) -> f64 {
    let n = x.len();
    if n < 2 || s2 <= 0.0 {
        return 0.0;
    }
    let c1: f64 = x
        .windows(2)
        .map(|w| (w[0] - mean) * (w[1] - mean))
        .sum::<f64>()
        / n as f64;
    c1 / (s2 * (n as f64 - 1.0) / n as f64)
}

/// The autocorrelation of `x` at `lag` (None when the lag leaves fewer than 2 pairs or the
/// series is constant).
pub fn autocorrelation(x: &[f64], lag: usize) -> Option<f64> {
    let n = x.len();
    if lag == 0 || n < lag + 2 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let c0 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
    if c0 <= 0.0 {
        return None;
    }
    let ck = (0..n - lag)
        .map(|i| (x[i] - mean) * (x[i + lag] - mean))
        .sum::<f64>()
        / n as f64;
    Some(ck / c0)
}

/// Student's t quantile at 0.975 (two-sided 95 %). Below 9 degrees of freedom, where the
/// expansion is poor (0.004 off at 3), the table's value at the whole df at or below (a
/// fractional df is rounded down, which only widens); from 9 on, the Cornish–Fisher expansion in
/// the normal quantile (Abramowitz & Stegun 26.7.5), within 10⁻⁴ of the table. Batch means ask
/// for 9 or more; replications and Welch's df for fewer.
pub fn t975(df: f64) -> f64 {
    /// t₀.₉₇₅ at 1 … 8 degrees of freedom.
    const TABLE: [f64; 8] = [
        12.706_204_736,
        4.302_652_730,
        3.182_446_305,
        2.776_445_105,
        2.570_581_836,
        2.446_911_851,
        2.364_624_252,
        2.306_004_135,
    ];
    if df < 9.0 {
        return TABLE[(df.floor().max(1.0) as usize) - 1];
    }
    let z = Z95;
    let (z2, v) = (z * z, df);
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
}

/// χ² quantile at 0.95 (Wilson–Hilferty; within 1 % from 9 degrees of freedom).
fn chi2_95(df: f64) -> f64 {
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + Z_ONE_SIDED * a.sqrt()).powi(3)
}

pub use super::stats::wilson_z;

/// The run's series, read for each figure.
impl Index {
    /// Whether every counted attempt has a start time, so the series is in start order and its
    /// dependence can be measured.
    pub fn in_start_order(&self) -> bool {
        self.series_timed
    }

    /// From the first counted attempt's start to the last one's, in ms (None without start
    /// times).
    pub fn start_span_ms(&self) -> Option<f64> {
        let (first, last) = (self.series.first()?, self.series.last()?);
        self.series_timed.then_some(last.start_ms - first.start_ms)
    }

    /// Counted attempts in start order: the failure indicator.
    pub fn failure_series(&self) -> Vec<bool> {
        self.series.iter().map(|s| !s.is(Step::SUCCESS)).collect()
    }

    /// Successes in start order: passed quality or not.
    pub fn quality_series(&self) -> Vec<bool> {
        self.series
            .iter()
            .filter(|s| s.is(Step::SUCCESS))
            .map(|s| s.is(Step::QUALITY_PASS))
            .collect()
    }

    /// Counted attempts in start order: jointly qualified under `threshold_ms` and `comparison`.
    pub fn joint_series(&self, threshold_ms: f64, comparison: crate::Comparison) -> Vec<bool> {
        self.series
            .iter()
            .map(|s| s.is(Step::CANDIDATE) && comparison.holds(s.ttft_ms, threshold_ms))
            .collect()
    }

    /// The qualified attempts under `threshold_ms` and `comparison` in each of `b` batches of
    /// `m` consecutive counted attempts in start order: one pass.
    pub(crate) fn joint_batch_ones(
        &self,
        threshold_ms: f64,
        comparison: crate::Comparison,
        b: usize,
        m: usize,
    ) -> Vec<usize> {
        self.series[..b * m]
            .chunks(m)
            .map(|batch| {
                batch
                    .iter()
                    .filter(|s| s.is(Step::CANDIDATE) && comparison.holds(s.ttft_ms, threshold_ms))
                    .count()
            })
            .collect()
    }

    /// The candidates' TTFTs (ms) in each of `b` batches of `m` consecutive counted attempts in
    /// start order, each batch ascending: a threshold's qualified count per batch is then one
    /// binary search (the same count as [`joint_batch_ones`](Index::joint_batch_ones)).
    pub(crate) fn candidate_ttft_by_batch(&self, b: usize, m: usize) -> Vec<Vec<f64>> {
        self.series[..b * m]
            .chunks(m)
            .map(|batch| {
                let mut t: Vec<f64> = batch
                    .iter()
                    .filter(|s| s.is(Step::CANDIDATE))
                    .map(|s| s.ttft_ms)
                    .collect();
                t.sort_unstable_by(f64::total_cmp);
                t
            })
            .collect()
    }

    /// The TTFT sample in start order (ms).
    pub fn ttft_in_order(&self) -> Vec<f64> {
        self.series
            .iter()
            .map(|s| s.ttft_ms)
            .filter(|t| !t.is_nan())
            .collect()
    }

    /// The E2E sample in start order (ms).
    pub fn e2e_in_order(&self) -> Vec<f64> {
        self.series
            .iter()
            .map(|s| s.e2e_ms)
            .filter(|t| !t.is_nan())
            .collect()
    }
}

/// The lags the card shows: the next request, ten later, a hundred later.
pub const LAGS: [usize; 3] = [1, 10, 100];

/// One per-attempt series' autocorrelation in start order at [`LAGS`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeriesAcf {
    /// `qualified`, `failed` or `ttft`.
    pub series: &'static str,
    pub n: usize,
    /// (lag, autocorrelation); None where the lag leaves too few pairs or the series is constant.
    pub at: Vec<(usize, Option<f64>)>,
}

/// The run's three series (qualified or not, failed or not, TTFT) at the lags that matter;
/// empty without start times or below [`MIN_SERIES`] attempts.
pub fn autocorrelations(
    ix: &Index,
    threshold_ms: f64,
    comparison: crate::Comparison,
) -> Vec<SeriesAcf> {
    if !ix.in_start_order() || ix.series.len() < MIN_SERIES {
        return Vec::new();
    }
    let flag = |v: Vec<bool>| v.into_iter().map(|b| b as u8 as f64).collect::<Vec<f64>>();
    [
        ("qualified", flag(ix.joint_series(threshold_ms, comparison))),
        ("failed", flag(ix.failure_series())),
        ("ttft", ix.ttft_in_order()),
    ]
    .into_iter()
    .map(|(series, x)| SeriesAcf {
        series,
        n: x.len(),
        at: LAGS
            .iter()
            .map(|&lag| (lag, autocorrelation(&x, lag)))
            .collect(),
    })
    .collect()
}

/// "Autocorrelation in start order (lag 1, 10, 100): qualified 0.62, 0.31, 0.05; …".
pub fn autocorrelation_line(acf: &[SeriesAcf], lang: Lang) -> Option<String> {
    if acf.is_empty() {
        return None;
    }
    let name = |s: &str| match (s, lang) {
        ("qualified", Lang::Zh) => "是否合格",
        ("failed", Lang::Zh) => "是否失败",
        ("ttft", _) => "TTFT",
        ("qualified", _) => "qualified",
        _ => {
            if lang == Lang::Zh {
                "是否失败"
            } else {
                "failed"
            }
        }
    };
    let parts: Vec<String> = acf
        .iter()
        .map(|a| {
            let v: Vec<String> =
                a.at.iter()
                    .map(|(_, r)| r.map_or("—".to_string(), |r| format!("{r:.2}")))
                    .collect();
            format!("{} {}", name(a.series), v.join(", "))
        })
        .collect();
    let lags: Vec<String> = LAGS.iter().map(|l| l.to_string()).collect();
    Some(match lang {
        Lang::En => format!(
            "Autocorrelation in start order (lag {}): {}",
            lags.join(", "),
            parts.join("; ")
        ),
        Lang::Zh => format!(
            "按开始时间的自相关（滞后 {}）：{}",
            lags.join("、"),
            parts.join("；")
        ),
    })
}

/// A percentile's dependence: that of "at or below the estimate" over the sample in start order.
pub fn of_quantile(in_order: &[f64], estimate: f64) -> Dependence {
    of_values(in_order.iter().map(|&v| (v <= estimate) as u8 as f64))
}

/// The `q`-quantile's interval from the ascending `sorted` sample on an effective sample: the
/// exact order-statistic ranks for ⌊n / τ⌋ independent samples, read back as the same levels of
/// the whole sample (rank r of n_eff is the r / n_eff point). With τ = 1 it is the exact
/// interval; a bound that n_eff independent samples could not give is missing here too.
pub fn quantile_bounds(sorted: &[f64], q: f64, dep: &Dependence) -> Bounds {
    let n = sorted.len();
    let n_eff = (dep.effective_n.floor() as usize).clamp(1, n.max(1));
    let r = super::stats::quantile_ranks(q, n_eff);
    let scale = n as f64 / n_eff as f64;
    // The lower bound takes the rank at or below its level, the upper the rank at or above,
    // so reading back only widens.
    let lo_rank = (r.lo as f64 * scale).floor() as usize;
    let hi_rank = ((r.hi as f64 * scale).ceil() as usize).min(n);
    Bounds {
        lo: (r.lo >= 1 && lo_rank >= 1).then(|| sorted[lo_rank - 1]),
        hi: (r.hi <= n_eff && hi_rank >= 1).then(|| sorted[hi_rank - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_table() {
        for (df, t) in [
            (1.0, 12.706_205),
            (1.5, 12.706_205),
            (2.0, 4.302_653),
            (3.0, 3.182_446),
            (4.0, 2.776_445),
            (8.5, 2.306_004),
            (9.0, 2.262_157),
            (15.0, 2.131_450),
            (31.0, 2.039_513),
            (63.0, 1.998_341),
        ] {
            assert!(
                (t975(df) - t).abs() < 1e-4,
                "t({df}) = {} against {t}",
                t975(df)
            );
        }
        for (df, c) in [(9.0, 16.918_98), (31.0, 44.985_34), (63.0, 82.528_73)] {
            assert!(
                (chi2_95(df) / c - 1.0).abs() < 0.01,
                "χ²({df}) = {} against {c}",
                chi2_95(df)
            );
        }
    }

    /// A two-state chain that keeps its state with probability `stay`: τ = (1 + ρ)/(1 − ρ)
    /// with ρ = 2·stay − 1.
    fn chain(n: usize, stay: f64, seed: u64) -> Vec<bool> {
        let mut rng = super::super::stats::SplitMix64::new(seed);
        let mut x = false;
        (0..n)
            .map(|_| {
                if (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 >= stay {
                    x = !x;
                }
                x
            })
            .collect()
    }

    #[test]
    fn independent_draws_keep_their_n_and_a_sticky_chain_is_worth_fewer() {
        // Independent draws: rejected in about 5 % of series, as a 5 % test should be.
        let rejected = (0..200)
            .filter(|&seed| of_indicator(&chain(2000, 0.5, seed)).widens())
            .count();
        assert!(
            rejected <= 20,
            "independence rejected in {rejected} of 200 independent series"
        );
        // stay = 0.95: ρ = 0.9, τ = 19, so 20,000 draws are worth about 1,053.
        let d = of_indicator(&chain(20_000, 0.95, 7));
        assert!(d.widens(), "{d:?}");
        assert!((8.0..40.0).contains(&d.inflation), "{d:?}");
        assert!(d.effective_n < 2500.0, "{d:?}");
        let few: Vec<bool> = (0..50).map(|i| i < 25).collect();
        assert_eq!(of_indicator(&few).verdict, Independence::Unchecked);
    }

    #[test]
    fn a_series_read_from_its_counts_reads_as_the_series_itself() {
        // The qualified series is read from its counts per batch (of_counts); the other series
        // value by value (of_values). Both readings of one 0/1 series agree but for rounding.
        let ones_in = |x: &[bool]| x.iter().filter(|&&v| v).count();
        for (n, stay, seed) in [
            (2000, 0.5, 1),
            (20_000, 0.95, 7),
            (5_003, 0.8, 3),
            (199, 0.5, 2),
            (1000, 1.0, 4),
        ] {
            let x = chain(n, stay, seed);
            let by_values = of_indicator(&x);
            let by_counts = of_counts(n, ones_in(&x), |b, m| {
                x[..b * m].chunks(m).map(ones_in).collect()
            });
            assert_eq!(by_counts.verdict, by_values.verdict, "{n} {stay}");
            assert_eq!(
                (by_counts.batches, by_counts.batch_size),
                (by_values.batches, by_values.batch_size)
            );
            for (a, b) in [
                (by_counts.inflation, by_values.inflation),
                (by_counts.measured_inflation, by_values.measured_inflation),
                (by_counts.effective_n, by_values.effective_n),
                (by_counts.batch_lag1, by_values.batch_lag1),
            ] {
                assert!(
                    (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                    "{n} {stay}: {a} vs {b}"
                );
            }
        }
    }
}
