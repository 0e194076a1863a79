//! Percentiles over sorted samples, by the methods learners meet: nearest-rank (the lesson's),
//! numpy's default linear interpolation (what vLLM, AIPerf and most peers report), lower, higher.

use serde::{Deserialize, Serialize};

use crate::format::integer;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PercentileMethod {
    /// The ⌈p/100 · n⌉-th smallest value: always one of the samples.
    #[default]
    NearestRank,
    /// numpy's default: interpolate between the two samples around (n − 1) · p/100.
    Linear,
    /// The sample just below (n − 1) · p/100.
    Lower,
    /// The sample just above (n − 1) · p/100.
    Higher,
}

impl PercentileMethod {
    pub const ALL: [PercentileMethod; 4] = [
        PercentileMethod::NearestRank,
        PercentileMethod::Linear,
        PercentileMethod::Lower,
        PercentileMethod::Higher,
    ];

    pub fn code(self) -> &'static str {
        match self {
            PercentileMethod::NearestRank => "nearest-rank",
            PercentileMethod::Linear => "linear",
            PercentileMethod::Lower => "lower",
            PercentileMethod::Higher => "higher",
        }
    }

    pub fn from_code(code: &str) -> Option<PercentileMethod> {
        Self::ALL
            .into_iter()
            .find(|m| m.code() == code || m.code().replace('-', "_") == code)
    }

    /// The method's name for a page, in both languages (the code stays the file's word).
    pub fn name(self) -> crate::text::Text {
        let zh = match self {
            PercentileMethod::NearestRank => "最近秩",
            PercentileMethod::Linear => "线性插值",
            PercentileMethod::Lower => "取下侧样本",
            PercentileMethod::Higher => "取上侧样本",
        };
        crate::text::Text::new(self.code(), zh)
    }
}

/// The rank (1-based) the nearest-rank method picks for `p` over `n` samples.
pub fn nearest_rank(p: f64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    // p·n first, then /100: 95·20/100 is exactly 19, while 0.95·20 is not.
    let exact = p * n as f64 / 100.0;
    let rank = (exact - 1e-9).ceil() as usize;
    rank.clamp(1, n)
}

/// A sample in ascending order, read by rank: a slice, or [`CountedSample`] (each distinct
/// value once with its count) where a sample has far more values than distinct ones.
pub trait Ranked {
    fn len(&self) -> usize;
    /// The value of 0-based rank `i` (`i < len()`).
    fn at(&self, i: usize) -> f64;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Ranked for [f64] {
    fn len(&self) -> usize {
        <[f64]>::len(self)
    }
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
}

impl Ranked for Vec<f64> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
}

/// A sorted sample kept as its distinct values, each with its count: the same order statistics
/// as the full sorted list, in memory that grows with the number of distinct values. Gaps
/// between stream events are written to the microsecond, so ten million attempts' hundreds of
/// millions of gaps take a few hundred thousand distinct values.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CountedSample {
    /// Distinct values, ascending (`f64::total_cmp`).
    values: Vec<f64>,
    /// `ends[j]`: how many values are ≤ `values[j]` (running count).
    ends: Vec<u64>,
}

impl CountedSample {
    /// From `(value, count)` pairs in any order, each value once.
    pub fn from_counts(mut counts: Vec<(f64, u64)>) -> CountedSample {
        counts.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        let mut total = 0;
        let (values, ends) = counts
            .into_iter()
            .map(|(v, n)| {
                total += n;
                (v, total)
            })
            .unzip();
        CountedSample { values, ends }
    }

    /// How many distinct values it holds.
    pub fn distinct(&self) -> usize {
        self.values.len()
    }
}

impl Ranked for CountedSample {
    fn len(&self) -> usize {
        self.ends.last().map_or(0, |&n| n as usize)
    }
    fn at(&self, i: usize) -> f64 {
        self.values[self.ends.partition_point(|&end| end <= i as u64)]
    }
}

/// The `p`-th percentile (0 < p ≤ 100) of `sorted` (ascending), or `None` when empty.
pub fn percentile(sorted: &[f64], p: f64, method: PercentileMethod) -> Option<f64> {
    percentile_of(sorted, p, method)
}

/// [`percentile`] of any sample read by rank.
pub fn percentile_of<S: Ranked + ?Sized>(
    sorted: &S,
    p: f64,
    method: PercentileMethod,
) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let p = p.clamp(0.0, 100.0);
    let virtual_index = (n - 1) as f64 * p / 100.0;
    Some(match method {
        PercentileMethod::NearestRank => sorted.at(nearest_rank(p, n) - 1),
        PercentileMethod::Lower => sorted.at(virtual_index.floor() as usize),
        PercentileMethod::Higher => sorted.at((virtual_index.ceil() as usize).min(n - 1)),
        PercentileMethod::Linear => {
            let below = virtual_index.floor();
            let i = below as usize;
            if i + 1 >= n {
                sorted.at(n - 1)
            } else {
                let t = virtual_index - below;
                lerp(sorted.at(i), sorted.at(i + 1), t)
            }
        }
    })
}

/// numpy's `_lerp`: the two formulas keep the result monotone and exact at t = 1.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let diff = b - a;
    if t >= 0.5 {
        b - diff * (1.0 - t)
    } else {
        a + diff * t
    }
}

/// Human description of how a percentile was picked, e.g. "nearest-rank: 8th of 8".
pub fn describe(p: f64, n: usize, method: PercentileMethod) -> String {
    match method {
        PercentileMethod::NearestRank if n > 0 => {
            format!(
                "nearest-rank: ⌈{}·{}/100⌉ = {} of {}",
                trim(p),
                integer(n as u64),
                integer(nearest_rank(p, n) as u64),
                integer(n as u64)
            )
        }
        PercentileMethod::Linear if n > 0 => {
            format!(
                "linear: index (n−1)·p = {:.2} of 0…{}",
                (n - 1) as f64 * p / 100.0,
                integer(n as u64 - 1)
            )
        }
        _ => method.code().to_string(),
    }
}

/// [`describe`] in both languages.
pub fn describe_text(p: f64, n: usize, method: PercentileMethod) -> crate::text::Text {
    let zh = match method {
        PercentileMethod::NearestRank if n > 0 => {
            format!(
                "最近秩：⌈{}·{}/100⌉ = 第 {} 个（共 {} 个）",
                trim(p),
                integer(n as u64),
                integer(nearest_rank(p, n) as u64),
                integer(n as u64)
            )
        }
        PercentileMethod::Linear if n > 0 => {
            format!(
                "线性插值：下标 (n−1)·p = {:.2}（0…{}）",
                (n - 1) as f64 * p / 100.0,
                integer(n as u64 - 1)
            )
        }
        PercentileMethod::NearestRank => "最近秩".to_string(),
        PercentileMethod::Linear => "线性插值".to_string(),
        PercentileMethod::Lower => "取下侧样本".to_string(),
        PercentileMethod::Higher => "取上侧样本".to_string(),
    };
    crate::text::Text::new(describe(p, n, method), zh)
}

fn trim(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
