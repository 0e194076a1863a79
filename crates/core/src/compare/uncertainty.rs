//! How much each figure of one run could move by chance: its 95 % interval and the method that
//! gave it. Rates get Wilson, percentiles the distribution-free order-statistic interval (which
//! says so when a bound does not exist), goodput and cost the exact Poisson interval of the count.

use serde::Serialize;

use super::stats::{min_n_for_quantile, poisson, quantile_interval, quantile_ranks, wilson, Bounds};
use crate::figure::{Figure, Unit};
use crate::format::{integer, number_in_unit, percentile_label};
use crate::index::Index;
use crate::metrics::Metrics;
use crate::settings::{FailureDenominator, Settings};
use crate::text::{Lang, Text};

/// How an interval was computed (named on the card so anyone can recompute it).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum IntervalMethod {
    /// Wilson score interval of a proportion.
    Wilson,
    /// Order statistics X₍lo₎ … X₍hi₎ of n (binomial); a rank of 0 or n + 1 means no bound.
    OrderStatistics { lo_rank: usize, hi_rank: usize, n: usize },
    /// Exact (Garwood) interval of a Poisson count, divided by the window.
    PoissonExact,
    /// Newcombe's hybrid score interval for a difference of two proportions.
    Newcombe,
    /// Newcombe's construction (MOVER) with the exact Poisson limits of each count.
    PoissonMover,
    /// Percentile bootstrap of the difference, resampling each run's successes.
    Bootstrap { seed: u64, resamples: usize },
}

impl IntervalMethod {
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        match self {
            IntervalMethod::Wilson => if zh { "Wilson 得分区间" } else { "Wilson score" }.into(),
            IntervalMethod::OrderStatistics { lo_rank, hi_rank, n } => {
                let rank = |r: usize| if r == 0 || r > *n { "—".to_string() } else { integer(r as u64) };
                let n = integer(*n as u64);
                if zh {
                    format!("顺序统计量 X({})…X({})，共 {n} 个，二项分布，无分布假设", rank(*lo_rank), rank(*hi_rank))
                } else {
                    format!("order statistics X({})…X({}) of {n}, binomial, distribution-free", rank(*lo_rank), rank(*hi_rank))
                }
            }
            IntervalMethod::PoissonExact => if zh { "泊松计数的精确区间（Garwood）" } else { "exact Poisson count (Garwood)" }.into(),
            IntervalMethod::Newcombe => if zh { "Newcombe 混合得分区间" } else { "Newcombe hybrid score" }.into(),
            IntervalMethod::PoissonMover => {
                if zh { "MOVER（Newcombe 构造）+ 精确泊松区间" } else { "MOVER (Newcombe's construction) with exact Poisson limits" }.into()
            }
            IntervalMethod::Bootstrap { seed, resamples } => {
                // The seed is a name for a stream of draws, not a count: written as it is.
                let resamples = integer(*resamples as u64);
                if zh {
                    format!("自助法（bootstrap），重抽样 {resamples} 次，种子 {seed}")
                } else {
                    format!("bootstrap, {resamples} resamples, seed {seed}")
                }
            }
        }
    }
}

/// One figure's 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureInterval {
    /// The figure's key (`ttft_p95`, `failure_rate`, …).
    pub key: String,
    pub bounds: Bounds,
    pub method: IntervalMethod,
    /// Why a bound is missing, or what the interval assumes.
    pub note: Option<Text>,
}

impl FigureInterval {
    /// "95 % interval 0.31 s … no upper bound (order statistics …)".
    pub fn describe(&self, unit: &Unit, lang: Lang) -> String {
        let b = bounds_text(&self.bounds, unit, lang);
        let m = self.method.describe(lang);
        match lang {
            Lang::En => format!("95 % interval {b} ({m})"),
            Lang::Zh => format!("95 % 区间 {b}（{m}）"),
        }
    }
}

/// "0.2 s … 0.4 s", with "no lower bound" / "no upper bound" where one does not exist.
pub fn bounds_text(b: &Bounds, unit: &Unit, lang: Lang) -> String {
    let side = |v: Option<f64>, missing_en: &str, missing_zh: &str| match v {
        Some(v) => number_in_unit(v, unit, lang),
        None => if lang == Lang::Zh { missing_zh } else { missing_en }.to_string(),
    };
    format!("{} … {}", side(b.lo, "no lower bound", "无下界"), side(b.hi, "no upper bound", "无上界"))
}

/// The intervals of one run's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Intervals {
    pub items: Vec<FigureInterval>,
}

impl Intervals {
    /// Every figure that has an interval. ITL has none: the gaps within one stream are not
    /// independent samples, which the order-statistic interval needs.
    pub fn compute(ix: &Index, s: &Settings, m: &Metrics) -> Intervals {
        let mut items = Vec::new();
        // Failures ÷ successes (the wrong denominator) is not a share of its denominator, even
        // when the failures are fewer than the successes: no Wilson interval for it (the
        // figure's note says why).
        let not_a_share = s.population.failure_denominator == FailureDenominator::Successes;
        for f in [&m.failure_rate, &m.quality_pass_rate, &m.joint_rate, &m.business_success_rate] {
            if not_a_share && f.key == m.failure_rate.key {
                continue;
            }
            items.extend(proportion(f));
        }
        items.extend(quantile(&m.ttft_p50.key, &ix.ttft_ms, 50.0));
        items.extend(quantile(&m.ttft_p95.key, &ix.ttft_ms, 95.0));
        items.extend(quantile(&m.ttft_tail.key, &ix.ttft_ms, s.p));
        items.extend(quantile(&m.e2e_p50.key, &ix.e2e_ms, 50.0));
        items.extend(quantile(&m.e2e_tail.key, &ix.e2e_ms, s.p));
        if let Some(w) = s.window_s.filter(|w| *w > 0.0) {
            let count = poisson(m.qualified as u64);
            items.push(FigureInterval {
                key: m.goodput.key.clone(),
                bounds: count.scale(1.0 / w),
                method: IntervalMethod::PoissonExact,
                note: Some(poisson_note()),
            });
            if let (Some(cost), true) = (s.window_cost, m.qualified > 0) {
                // Cost per 1,000 = cost·1000 / count: the count's upper limit gives the lower cost.
                let per = cost * 1000.0;
                items.push(FigureInterval {
                    key: m.cost_per_1000_qualified.key.clone(),
                    bounds: Bounds::closed(per / count.hi.unwrap_or(f64::INFINITY), per / count.lo.unwrap_or(0.0)),
                    method: IntervalMethod::PoissonExact,
                    note: Some(poisson_note()),
                });
            }
        }
        Intervals { items }
    }

    pub fn get(&self, key: &str) -> Option<&FigureInterval> {
        self.items.iter().find(|i| i.key == key)
    }
}

fn poisson_note() -> Text {
    Text::new(
        "treats the qualified count as a Poisson count over the window",
        "把合格数当作窗口内的泊松计数",
    )
}

/// Wilson on the figure's own numerator and denominator (None when the numerator exceeds the
/// denominator; a figure that is no share of its denominator is left out by the caller).
fn proportion(f: &Figure) -> Option<FigureInterval> {
    let (num, den) = (f.numerator?, f.denominator?);
    if f.value.is_none() || num > den {
        return None;
    }
    Some(FigureInterval {
        key: f.key.clone(),
        bounds: wilson(num as u64, den as u64)?,
        method: IntervalMethod::Wilson,
        note: None,
    })
}

/// The order-statistic interval of the `p`th percentile of `sorted_ms`, in seconds.
pub fn quantile(key: &str, sorted_ms: &[f64], p: f64) -> Option<FigureInterval> {
    let n = sorted_ms.len();
    if n == 0 || !(p > 0.0 && p < 100.0) {
        return None;
    }
    let q = p / 100.0;
    let ranks = quantile_ranks(q, n);
    let bounds = quantile_interval(sorted_ms, q).scale(1.0 / 1000.0);
    let note = (!bounds.is_closed()).then(|| open_note(p, n, &bounds));
    Some(FigureInterval {
        key: key.to_string(),
        bounds,
        method: IntervalMethod::OrderStatistics { lo_rank: ranks.lo, hi_rank: ranks.hi, n },
        note,
    })
}

/// Why a percentile's interval is open, and the n that would close it.
pub fn open_note(p: f64, n: usize, b: &Bounds) -> Text {
    let need = min_n_for_quantile(p / 100.0);
    let label = percentile_label(p);
    let (side_en, side_zh) = match (b.lo.is_none(), b.hi.is_none()) {
        (true, true) => ("neither bound exists", "上下界都不存在"),
        (true, false) => ("no lower bound exists", "下界不存在"),
        _ => ("no upper bound exists", "上界不存在"),
    };
    Text::new(
        format!("{side_en}: from n = {n} samples the true {label} may lie beyond every sample; it takes n ≥ {need} for both bounds to exist"),
        format!("{side_zh}：只有 n = {n} 个样本时，真实的 {label} 可能落在所有样本之外；需要 n ≥ {need} 上下界才都存在"),
    )
}
