//! How much each figure of one run could move by chance: its 95 % interval and the method that
//! gave it. Rates get Wilson, percentiles the distribution-free order-statistic interval (which
//! says so when a bound does not exist), goodput and cost the exact Poisson interval of the count
//! — each on the attempts as independent draws while their series in start order does not reject
//! that, else on the effective sample that [`super::dependence`] measures, named so.

use serde::Serialize;

use super::dependence::{self, Dependence};
use super::stats::{
    min_n_for_quantile, poisson, poisson_real, quantile_interval, quantile_ranks, wilson, Bounds,
};
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
    OrderStatistics {
        lo_rank: usize,
        hi_rank: usize,
        n: usize,
    },
    /// Exact (Garwood) interval of a Poisson count, divided by the window.
    PoissonExact,
    /// Newcombe's hybrid score interval for a difference of two proportions.
    Newcombe,
    /// Newcombe's construction (MOVER) with the exact Poisson limits of each count.
    PoissonMover,
    /// Percentile bootstrap of the difference, resampling each run's successes.
    Bootstrap { seed: u64, resamples: usize },
    /// Wilson's score interval on the effective sample (k ÷ τ of n ÷ τ, τ from batch means of
    /// the series in start order), with Student's t for the batches.
    EffectiveWilson { batches: usize, batch_size: usize },
    /// Order statistics at the binomial ranks of the effective sample, read back at the same
    /// levels of the whole one (τ of "at or below the estimate", batch means).
    EffectiveOrderStatistics { batches: usize, batch_size: usize },
    /// The exact Poisson interval of the effective count (count ÷ τ, τ of the qualified share
    /// by batch means), scaled back and divided by the window.
    EffectivePoisson { batches: usize, batch_size: usize },
    /// Newcombe's construction (MOVER) from each run's own interval (effective where its
    /// attempts are correlated).
    Mover,
}

impl IntervalMethod {
    pub fn describe(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        match self {
            IntervalMethod::Wilson => if zh {
                "Wilson 得分区间"
            } else {
                "Wilson score"
            }
            .into(),
            IntervalMethod::OrderStatistics {
                lo_rank,
                hi_rank,
                n,
            } => {
                let rank = |r: usize| {
                    if r == 0 || r > *n {
                        "—".to_string()
                    } else {
                        integer(r as u64)
                    }
                };
                let n = integer(*n as u64);
                if zh {
                    format!(
                        "顺序统计量 X({})…X({})，共 {n} 个，二项分布，无分布假设",
                        rank(*lo_rank),
                        rank(*hi_rank)
                    )
                } else {
                    format!(
                        "order statistics X({})…X({}) of {n}, binomial, distribution-free",
                        rank(*lo_rank),
                        rank(*hi_rank)
                    )
                }
            }
            IntervalMethod::PoissonExact => if zh {
                "泊松计数的精确区间（Garwood）"
            } else {
                "exact Poisson count (Garwood)"
            }
            .into(),
            IntervalMethod::Newcombe => if zh {
                "Newcombe 混合得分区间"
            } else {
                "Newcombe hybrid score"
            }
            .into(),
            IntervalMethod::PoissonMover => if zh {
                "MOVER（Newcombe 构造）+ 精确泊松区间"
            } else {
                "MOVER (Newcombe's construction) with exact Poisson limits"
            }
            .into(),
            IntervalMethod::EffectiveWilson {
                batches,
                batch_size,
            } => {
                let (b, m) = (integer(*batches as u64), integer(*batch_size as u64));
                if zh {
                    format!("有效样本上的 Wilson 得分区间（n ÷ τ，τ 取自按开始时间排列的 {b} 批、每批 {m} 个的批均值，t 分布）")
                } else {
                    format!("Wilson score on the effective sample (n ÷ τ, τ from batch means: {b} batches of {m} in start order, Student's t)")
                }
            }
            IntervalMethod::EffectiveOrderStatistics {
                batches,
                batch_size,
            } => {
                let (b, m) = (integer(*batches as u64), integer(*batch_size as u64));
                if zh {
                    format!("有效样本上的顺序统计量（按 ⌊n ÷ τ⌋ 个独立样本取二项分布的秩，再读回同样的水平；τ 取自 {b} 批、每批 {m} 个的批均值）")
                } else {
                    format!("order statistics on the effective sample (binomial ranks for ⌊n ÷ τ⌋ independent samples, read back at the same levels; τ from batch means: {b} batches of {m})")
                }
            }
            IntervalMethod::EffectivePoisson {
                batches,
                batch_size,
            } => {
                let (b, m) = (integer(*batches as u64), integer(*batch_size as u64));
                if zh {
                    format!("有效计数的精确泊松区间（计数 ÷ τ，τ 取自合格与否的 {b} 批、每批 {m} 个的批均值）")
                } else {
                    format!("exact Poisson on the effective count (count ÷ τ, τ from batch means of qualified or not: {b} batches of {m})")
                }
            }
            IntervalMethod::Mover => if zh {
                "MOVER（Newcombe 构造），取自每次运行自己的区间"
            } else {
                "MOVER (Newcombe's construction) from each run's own interval"
            }
            .into(),
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
    /// How many independent samples the series behind the figure is worth (None where it is
    /// not measured: the business figure, goodput without a window).
    pub dependence: Option<Dependence>,
}

impl FigureInterval {
    /// "95 % interval 0.31 s … no upper bound (order statistics …)".
    pub fn describe(&self, unit: &Unit, lang: Lang) -> String {
        let b = bounds_text(&self.bounds, unit, lang);
        let m = self.method.describe(lang);
        match (lang, self.dependence.as_ref().filter(|d| d.widens())) {
            (Lang::En, None) => format!("95 % interval {b} ({m})"),
            (Lang::Zh, None) => format!("95 % 区间 {b}（{m}）"),
            (Lang::En, Some(d)) => format!(
                "95 % interval {b} ({} ≈ {} independent; {m})",
                integer(d.n as u64),
                integer(d.effective_n.round().max(1.0) as u64)
            ),
            (Lang::Zh, Some(d)) => format!(
                "95 % 区间 {b}（{} 个 ≈ {} 个独立样本；{m}）",
                integer(d.n as u64),
                integer(d.effective_n.round().max(1.0) as u64)
            ),
        }
    }

    /// What the figure's samples are, for the dependence line ("attempts", "TTFT samples").
    pub fn samples_word(&self) -> Text {
        if self.key.starts_with("ttft") {
            Text::new("TTFT samples", "TTFT 样本")
        } else if self.key.starts_with("e2e") {
            Text::new("E2E samples", "E2E 样本")
        } else if self.key == "quality_pass_rate" {
            Text::new("successes", "成功请求")
        } else {
            Text::new("attempts", "尝试")
        }
    }

    /// "2,000 attempts ≈ 140 independent ones (…)", or None where nothing was measured.
    pub fn dependence_text(&self, lang: Lang) -> Option<String> {
        self.dependence
            .as_ref()
            .map(|d| d.summary(&self.samples_word(), lang))
    }
}

/// "0.2 s … 0.4 s", with "no lower bound" / "no upper bound" where one does not exist.
pub fn bounds_text(b: &Bounds, unit: &Unit, lang: Lang) -> String {
    let side = |v: Option<f64>, missing_en: &str, missing_zh: &str| match v {
        Some(v) => number_in_unit(v, unit, lang),
        None => if lang == Lang::Zh {
            missing_zh
        } else {
            missing_en
        }
        .to_string(),
    };
    format!(
        "{} … {}",
        side(b.lo, "no lower bound", "无下界"),
        side(b.hi, "no upper bound", "无上界")
    )
}

/// The intervals of one run's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Intervals {
    pub items: Vec<FigureInterval>,
}

/// What one index's series say that no threshold, comparison, window or cost edit changes: the
/// dependence of the TTFT and E2E samples, of the failures and of quality, and of "at or below
/// the estimate" for each percentile estimate asked so far. Read the first time a figure needs
/// them and kept, so that on a threshold edit [`Intervals::compute_kept`] reads only the
/// qualified series again, and with [`Readings::for_edits`] only its counts per batch (at
/// 1,000,000 attempts every series read afresh took hundreds of milliseconds per edit).
/// Whoever keeps an index keeps its readings beside it (the lab and its second bundle do); they
/// belong to that one index.
#[derive(Debug, Default)]
pub struct Readings {
    kept: std::sync::Mutex<Vec<(Reading, Dependence)>>,
    /// Kept for edits ([`Readings::for_edits`]): the qualified series is then read from the
    /// candidates' TTFTs per batch, sorted once, instead of from the series.
    for_edits: bool,
    /// Per batch count, the candidates' TTFTs in each batch, ascending.
    batches: std::sync::Mutex<Vec<(usize, Vec<Vec<f64>>)>>,
}

/// Which series a [`Readings`] entry read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reading {
    Failures,
    Quality,
    TtftValues,
    E2eValues,
    /// "At or below" this estimate (its bits) over the TTFT sample in start order.
    TtftAtOrBelow(u64),
    /// The same over the E2E sample.
    E2eAtOrBelow(u64),
}

impl Readings {
    /// Readings of an index kept through edits of the threshold or the comparison: the first
    /// reading of the qualified series also sorts the candidates' TTFTs within each batch (a
    /// copy of the candidates' TTFTs), so every later threshold reads its qualified count per
    /// batch by binary searches, not from a pass over every attempt. ([`Default`] readings,
    /// for one computation, read the series once instead.)
    pub fn for_edits() -> Readings {
        Readings {
            for_edits: true,
            ..Readings::default()
        }
    }

    /// The dependence of the qualified series under `threshold_ms` and `comparison`.
    fn joint(&self, ix: &Index, threshold_ms: f64, comparison: crate::Comparison) -> Dependence {
        let ones = ix.qualified(threshold_ms, comparison);
        dependence::of_counts(ix.series.len(), ones, |b, m| {
            if !self.for_edits {
                return ix.joint_batch_ones(threshold_ms, comparison, b, m);
            }
            let mut kept = self.batches.lock().unwrap_or_else(|p| p.into_inner());
            let at = match kept.iter().position(|(k, _)| *k == b) {
                Some(at) => at,
                None => {
                    kept.push((b, ix.candidate_ttft_by_batch(b, m)));
                    kept.len() - 1
                }
            };
            kept[at]
                .1
                .iter()
                .map(|t| t.partition_point(|&v| comparison.holds(v, threshold_ms)))
                .collect()
        })
    }

    /// The reading `key`, read by `read` the first time it is asked for.
    fn get(&self, key: Reading, read: impl FnOnce() -> Dependence) -> Dependence {
        // A panic while reading leaves nothing half-written behind: the list is only pushed to.
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, d)) = kept.iter().find(|(k, _)| *k == key) {
            return d.clone();
        }
        let d = read();
        kept.push((key, d.clone()));
        d
    }
}

impl Intervals {
    /// Every figure that has an interval. ITL has none: the gaps within one stream are not
    /// independent samples, which the order-statistic interval needs.
    pub fn compute(ix: &Index, s: &Settings, m: &Metrics) -> Intervals {
        Intervals::compute_kept(ix, &Readings::default(), s, m)
    }

    /// [`compute`](Intervals::compute) with the index's [`Readings`] kept from earlier calls
    /// (`readings` must have been used with `ix` alone): the same intervals.
    pub fn compute_kept(ix: &Index, readings: &Readings, s: &Settings, m: &Metrics) -> Intervals {
        let mut items = Vec::new();
        // Failures ÷ successes (the wrong denominator) is not a share of its denominator, even
        // when the failures are fewer than the successes: no Wilson interval for it (the
        // figure's note says why).
        let not_a_share = s.population.failure_denominator == FailureDenominator::Successes;
        let timed = ix.in_start_order();
        // Each sample in start order, its values' dependence read once for the joint rate and
        // every percentile of it (and kept); nothing to read where the order is unknown.
        let (ttft, e2e) = (
            timed.then(|| InOrder::of(ix, readings, Sample::Ttft)),
            timed.then(|| InOrder::of(ix, readings, Sample::E2e)),
        );
        let read = |n: usize, key: Reading, f: &dyn Fn() -> Dependence| {
            if timed {
                readings.get(key, f)
            } else {
                dependence::untimed(n)
            }
        };
        // Whether an attempt qualifies turns on its wait; the waits themselves show the queue's
        // memory even in a run where few cross the threshold, so the joint rate is read both ways.
        // The one series a threshold edit changes, read from its counts per batch.
        let joint = match &ttft {
            Some(t) => dependence::wider(
                readings.joint(ix, crate::verdict::threshold_ms(s), s.comparison),
                t.dependence.clone(),
            ),
            None => dependence::untimed(ix.attempts),
        };
        if !not_a_share {
            items.extend(proportion(
                &m.failure_rate,
                Some(read(ix.attempts, Reading::Failures, &|| {
                    dependence::of_indicator(&ix.failure_series())
                })),
            ));
        }
        items.extend(proportion(
            &m.quality_pass_rate,
            Some(read(ix.successes, Reading::Quality, &|| {
                dependence::of_indicator(&ix.quality_series())
            })),
        ));
        items.extend(proportion(&m.joint_rate, Some(joint.clone())));
        items.extend(proportion(&m.business_success_rate, None));
        let method = s.percentile;
        for (key, sorted, in_order, p) in [
            (&m.ttft_p50.key, &ix.ttft_ms, &ttft, 50.0),
            (&m.ttft_p95.key, &ix.ttft_ms, &ttft, 95.0),
            (&m.ttft_tail.key, &ix.ttft_ms, &ttft, s.p),
            (&m.e2e_p50.key, &ix.e2e_ms, &e2e, 50.0),
            (&m.e2e_tail.key, &ix.e2e_ms, &e2e, s.p),
        ] {
            items.extend(quantile_in_order(key, sorted, in_order.as_ref(), p, method));
        }
        if let Some(w) = s.window_s.filter(|w| *w > 0.0) {
            let (count, method, note) = qualified_count(m.qualified as u64, &joint);
            items.push(FigureInterval {
                key: m.goodput.key.clone(),
                bounds: count.scale(1.0 / w),
                method: method.clone(),
                note: Some(note.clone()),
                dependence: Some(joint.clone()),
            });
            if let Some(cost) = s.window_cost {
                // Cost per 1,000 = cost·1000 / count: the count's upper limit gives the lower
                // cost. With nothing qualified the cost has no upper bound, but a lower one.
                let per = cost * 1000.0;
                let hi = count.lo.filter(|lo| *lo > 0.0).map(|lo| per / lo);
                items.push(FigureInterval {
                    key: m.cost_per_1000_qualified.key.clone(),
                    bounds: Bounds { lo: count.hi.map(|hi| per / hi), hi },
                    method,
                    note: Some(if m.qualified == 0 {
                        Text::new(
                            "nothing qualified: no upper bound exists; the lower bound is the cost over the most qualified requests the window could hold by chance",
                            "没有合格的请求：上界不存在；下界是窗口内偶然可能出现的最多合格请求所分摊的成本",
                        )
                    } else {
                        note
                    }),
                    dependence: Some(joint),
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

/// The qualified count's interval: exact Poisson, on the effective count when the qualified
/// series is correlated.
fn qualified_count(k: u64, joint: &Dependence) -> (Bounds, IntervalMethod, Text) {
    if !joint.widens() {
        return (poisson(k), IntervalMethod::PoissonExact, poisson_note());
    }
    let tau = joint.inflation;
    let count = poisson_real(k as f64 / tau).scale(tau);
    let method = IntervalMethod::EffectivePoisson {
        batches: joint.batches,
        batch_size: joint.batch_size,
    };
    let note = Text::new(
        "treats the qualified count ÷ τ as a Poisson count over the window: the qualified attempts come in runs, so they are worth fewer independent ones",
        "把合格数 ÷ τ 当作窗口内的泊松计数：合格的尝试成串出现，相当于更少的独立样本",
    );
    (count, method, note)
}

/// The line every exact interval carries when its series was not checked or not rejected.
fn independence_note(dep: &Dependence) -> Option<Text> {
    match dep.verdict {
        dependence::Independence::Unchecked => Some(Text::new(
            "assumes the attempts are independent draws (too few to check)",
            "假定各次尝试相互独立（样本太少，无法检验）",
        )),
        dependence::Independence::NoStartTimes => Some(Text::new(
            "assumes the attempts are independent draws (no start times, so their order along the run is unknown)",
            "假定各次尝试相互独立（没有开始时间，不知道它们在运行中的先后）",
        )),
        _ => None,
    }
}

/// Wilson on the figure's own numerator and denominator (None when the numerator exceeds the
/// denominator; a figure that is no share of its denominator is left out by the caller), on the
/// effective sample when `dep` says the series is correlated.
fn proportion(f: &Figure, dep: Option<Dependence>) -> Option<FigureInterval> {
    let (num, den) = (f.numerator?, f.denominator?);
    if f.value.is_none() || num > den {
        return None;
    }
    let (bounds, method, note) = match &dep {
        Some(d) if d.widens() && d.n as f64 == den => (
            dependence::wilson_z(num / d.inflation, den / d.inflation, d.critical())?,
            IntervalMethod::EffectiveWilson {
                batches: d.batches,
                batch_size: d.batch_size,
            },
            None,
        ),
        _ => (
            wilson(num as u64, den as u64)?,
            IntervalMethod::Wilson,
            dep.as_ref().and_then(independence_note),
        ),
    };
    Some(FigureInterval {
        key: f.key.clone(),
        bounds,
        method,
        note,
        dependence: dep,
    })
}

/// Which sample of an index a percentile is of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Sample {
    Ttft,
    E2e,
}

/// A sample in start order with the dependence of its values, read once for all its
/// percentiles (and kept in the index's [`Readings`]); the values themselves are gathered only
/// when a reading is not kept yet, and then once.
pub(crate) struct InOrder<'a> {
    ix: &'a Index,
    readings: &'a Readings,
    sample: Sample,
    values: std::cell::OnceCell<Vec<f64>>,
    dependence: Dependence,
}

impl<'a> InOrder<'a> {
    pub(crate) fn of(ix: &'a Index, readings: &'a Readings, sample: Sample) -> InOrder<'a> {
        let mut in_order = InOrder {
            ix,
            readings,
            sample,
            values: std::cell::OnceCell::new(),
            dependence: Dependence::exact(0, dependence::Independence::Unchecked),
        };
        let key = match sample {
            Sample::Ttft => Reading::TtftValues,
            Sample::E2e => Reading::E2eValues,
        };
        in_order.dependence = readings.get(key, || dependence::of_series(in_order.values()));
        in_order
    }

    /// The sample's values in start order, gathered the first time they are needed.
    fn values(&self) -> &[f64] {
        self.values.get_or_init(|| match self.sample {
            Sample::Ttft => self.ix.ttft_in_order(),
            Sample::E2e => self.ix.e2e_in_order(),
        })
    }

    /// The dependence of "at or below `estimate`" over the sample in start order.
    fn at_or_below(&self, estimate: f64) -> Dependence {
        let key = match self.sample {
            Sample::Ttft => Reading::TtftAtOrBelow(estimate.to_bits()),
            Sample::E2e => Reading::E2eAtOrBelow(estimate.to_bits()),
        };
        self.readings
            .get(key, || dependence::of_quantile(self.values(), estimate))
    }
}

/// [`quantile`], with the sample also in start order (None: its order is unknown): on the
/// effective sample when "at or below the estimate", or the values themselves, are correlated
/// along the run.
pub(crate) fn quantile_in_order(
    key: &str,
    sorted_ms: &[f64],
    in_order: Option<&InOrder>,
    p: f64,
    method: crate::PercentileMethod,
) -> Option<FigureInterval> {
    let mut iv = quantile(key, sorted_ms, p)?;
    let Some(in_order) = in_order else {
        let dep = dependence::untimed(sorted_ms.len());
        iv.note = iv.note.or_else(|| independence_note(&dep));
        iv.dependence = Some(dep);
        return Some(iv);
    };
    let Some(estimate) = crate::percentile::percentile(sorted_ms, p, method) else {
        return Some(iv);
    };
    let dep = dependence::wider(in_order.at_or_below(estimate), in_order.dependence.clone());
    if dep.widens() {
        iv.bounds = dependence::quantile_bounds(sorted_ms, p / 100.0, &dep).scale(1.0 / 1000.0);
        iv.method = IntervalMethod::EffectiveOrderStatistics {
            batches: dep.batches,
            batch_size: dep.batch_size,
        };
        iv.note = (!iv.bounds.is_closed()).then(|| {
            Text::new(
                format!("a bound is missing: the {} samples are worth about {:.0} independent ones, too few to bound this percentile; run longer or repeat the run", sorted_ms.len(), dep.effective_n),
                format!("缺少一个界：这 {} 个样本约等于 {:.0} 个独立样本，不足以界定这个分位数；请跑得更久，或重复运行", sorted_ms.len(), dep.effective_n),
            )
        });
    } else if iv.note.is_none() {
        iv.note = independence_note(&dep);
    }
    iv.dependence = Some(dep);
    Some(iv)
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
        method: IntervalMethod::OrderStatistics {
            lo_rank: ranks.lo,
            hi_rank: ranks.hi,
            n,
        },
        note,
        dependence: None,
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
