//! Reruns of one contract: the spread of P50 and of the tail across three or more runs, and the
//! lesson's rule — if P50 agrees and the tail does not, collect more samples before comparing tails.

use serde::Serialize;

use super::stats::{min_n_for_quantile, quantile_interval, Bounds};
use crate::format::percentile_label;
use crate::index::Index;
use crate::percentile::{percentile, PercentileMethod};
use crate::text::Text;

/// One percentile across the reruns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    pub label: String,
    pub p: f64,
    /// Each run's value (s), in the order given; None when a run has no sample.
    pub values: Vec<Option<f64>>,
    /// Each run's order-statistic interval (s).
    pub intervals: Vec<Bounds>,
    /// max − min of the values (s).
    pub range_s: Option<f64>,
    /// The runs' intervals share at least one value (every bound existing).
    pub agree: Agreement,
    /// The sample size at which every interval would be closed.
    pub needed: usize,
    /// The mean of the runs' values with its 95 % interval between the runs (Student's t on
    /// one value per run): what reruns of one contract say about how much the figure moves.
    pub between: Option<(f64, Bounds)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Agreement {
    Agree,
    Disagree,
    /// Some run's interval has no bound: it cannot be told.
    TooFew,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reruns {
    pub runs: usize,
    pub p50: Spread,
    pub tail: Spread,
    pub verdict: Text,
}

fn spread(indexes: &[&Index], p: f64, method: PercentileMethod) -> Spread {
    let samples: Vec<&[f64]> = indexes.iter().map(|ix| ix.ttft_ms.as_slice()).collect();
    let values: Vec<Option<f64>> = samples
        .iter()
        .map(|s| percentile(s, p, method).map(|v| v / 1000.0))
        .collect();
    // Each run's own interval, on its effective sample where its attempts are correlated.
    let intervals: Vec<Bounds> = indexes
        .iter()
        .map(|ix| {
            let readings = super::uncertainty::Readings::default();
            let in_order = ix.in_start_order().then(|| {
                super::uncertainty::InOrder::of(ix, &readings, super::uncertainty::Sample::Ttft)
            });
            super::uncertainty::quantile_in_order("p", &ix.ttft_ms, in_order.as_ref(), p, method)
                .map_or_else(
                    || quantile_interval(&ix.ttft_ms, p / 100.0).scale(1.0 / 1000.0),
                    |iv| iv.bounds,
                )
        })
        .collect();
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    let range_s = (present.len() == values.len() && !present.is_empty()).then(|| {
        present.iter().copied().fold(f64::MIN, f64::max)
            - present.iter().copied().fold(f64::MAX, f64::min)
    });
    let agree = if intervals.iter().any(|b| !b.is_closed()) {
        Agreement::TooFew
    } else {
        let lo = intervals
            .iter()
            .filter_map(|b| b.lo)
            .fold(f64::MIN, f64::max);
        let hi = intervals
            .iter()
            .filter_map(|b| b.hi)
            .fold(f64::MAX, f64::min);
        if lo <= hi {
            Agreement::Agree
        } else {
            Agreement::Disagree
        }
    };
    let between = super::replications::mean_interval(&present);
    Spread {
        label: percentile_label(p),
        p,
        values,
        intervals,
        range_s,
        agree,
        needed: min_n_for_quantile(p / 100.0),
        between,
    }
}

/// P50 and the tail across two or more runs of one contract, without the verdict the lesson's
/// rule gives three or more (the baseline's fifth check reads it); None for a single run.
pub fn spreads(
    indexes: &[&Index],
    tail_p: f64,
    method: PercentileMethod,
) -> Option<(Spread, Spread)> {
    if indexes.len() < 2 {
        return None;
    }
    Some((
        spread(indexes, 50.0, method),
        spread(indexes, tail_p, method),
    ))
}

/// The spread check over three or more runs (None for fewer: two runs are a comparison).
pub fn reruns(indexes: &[&Index], tail_p: f64, method: PercentileMethod) -> Option<Reruns> {
    if indexes.len() < 3 {
        return None;
    }
    let p50 = spread(indexes, 50.0, method);
    let tail = spread(indexes, tail_p, method);
    let t = &tail.label;
    let verdict = match (p50.agree, tail.agree) {
        (Agreement::Agree, Agreement::Agree) => Text::new(
            format!("Stable: the reruns agree on P50 and on {t}; the tail can be compared."),
            format!("稳定：各次重跑的 P50 与 {t} 都一致，可以比较尾部。"),
        ),
        (Agreement::Agree, Agreement::TooFew) => Text::new(
            format!("P50 agrees, but {t} rests on too few samples (n ≥ {} per run bounds it): collect more before comparing tails.", tail.needed),
            format!("P50 一致，但 {t} 的样本太少（每次运行 n ≥ {} 才有上下界）：比较尾部之前先收集更多样本。", tail.needed),
        ),
        (Agreement::Agree, Agreement::Disagree) => Text::new(
            format!("P50 agrees and {t} does not: the tail is not stable yet; collect more samples before comparing tails."),
            format!("P50 一致而 {t} 不一致：尾部还不稳定；比较尾部之前先收集更多样本。"),
        ),
        (Agreement::TooFew, _) => Text::new(
            format!("Too few samples to tell even P50 (n ≥ {} per run): collect more.", p50.needed),
            format!("样本太少，连 P50 都无法判断（每次运行需要 n ≥ {}）：请收集更多样本。", p50.needed),
        ),
        (Agreement::Disagree, _) => Text::new(
            "P50 itself moves between reruns: something changed — look for it in the headers (the contract) before blaming the server.",
            "P50 本身在重跑之间变化：有东西变了——先在记录头（契约）里找原因，再怀疑服务端。",
        ),
    };
    Some(Reruns {
        runs: indexes.len(),
        p50,
        tail,
        verdict,
    })
}
