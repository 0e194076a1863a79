//! The difference between two runs, figure by figure: both values, the difference, its 95 %
//! interval and a verdict in words. Proportions use Newcombe's interval, goodput the same
//! construction with exact Poisson limits, percentiles a seeded bootstrap — while each run's
//! attempts pass as independent draws. Where either run's series is correlated
//! (`dependence`), the difference is Newcombe's construction (MOVER) from each run's own
//! interval on its effective sample, and a difference too small for them names the run length
//! that would resolve it.

use serde::Serialize;

use super::stats::{newcombe, poisson, resample_sorted, Bounds, SplitMix64};
use super::uncertainty::{FigureInterval, IntervalMethod, Intervals};
use crate::figure::{Figure, Unit};
use crate::format::signed_in_unit;
use crate::index::Index;
use crate::metrics::Metrics;
use crate::percentile::percentile;
use crate::settings::Settings;
use crate::text::{Lang, Text};

/// The seed and resample count of the percentile bootstrap (printed with every result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bootstrap {
    pub seed: u64,
    pub resamples: usize,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            seed: 42,
            resamples: 2000,
        }
    }
}

/// Which way is worse for a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Worse {
    Higher,
    Lower,
}

/// What the difference says, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Judgement {
    /// The interval of new − base lies wholly above 0.
    Up,
    /// The interval of new − base lies wholly below 0.
    Down,
    /// The interval includes 0.
    NoEvidence,
    /// The interval cannot be formed; `needed` samples per run would allow it.
    TooFew { needed: usize },
    /// One side has no value at all (e.g. goodput without a window).
    Undefined,
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffRow {
    pub key: String,
    pub name: Text,
    pub unit: Unit,
    pub base: Option<f64>,
    pub new: Option<f64>,
    pub base_interval: Option<FigureInterval>,
    pub new_interval: Option<FigureInterval>,
    /// new − base.
    pub difference: Option<f64>,
    pub difference_interval: Option<Bounds>,
    pub method: Option<IntervalMethod>,
    pub judgement: Judgement,
    pub worse: Worse,
    /// The verdict in words, prefixed when the contract is broken.
    pub verdict: Text,
    /// Sample sizes behind each side (attempts for rates, successes for percentiles).
    pub n_base: usize,
    pub n_new: usize,
    /// What `n_base` and `n_new` count ("all attempts", "jointly qualified attempts", …), for a
    /// page that shows n beside each value.
    pub n_counts: Text,
    pub contract_broken: bool,
    /// Where the interval includes 0 and either run is correlated: about how many requests per
    /// run (at the same correlation), or how many runs per side, would resolve a difference of
    /// the size seen.
    pub resolve: Option<Resolve>,
}

/// What it would take to tell a difference of the size seen from noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Resolve {
    /// Requests per run.
    pub requests: usize,
    /// Or runs per side, each as long as these.
    pub runs: usize,
}

/// One run as the comparison sees it.
pub struct Side<'a> {
    pub index: &'a Index,
    pub settings: &'a Settings,
    pub metrics: &'a Metrics,
    pub intervals: &'a Intervals,
}

/// Every comparable figure, in card order.
pub fn diff_rows(base: &Side, new: &Side, boot: Bootstrap, contract_broken: bool) -> Vec<DiffRow> {
    let (bm, nm) = (base.metrics, new.metrics);
    let mut rows = vec![
        percentile_row(
            &bm.ttft_p50,
            &nm.ttft_p50,
            &base.index.ttft_ms,
            &new.index.ttft_ms,
            50.0,
            base,
            new,
            boot,
        ),
        percentile_row(
            &bm.ttft_tail,
            &nm.ttft_tail,
            &base.index.ttft_ms,
            &new.index.ttft_ms,
            base.settings.p,
            base,
            new,
            boot,
        ),
        proportion_row(&bm.failure_rate, &nm.failure_rate, Worse::Higher, base, new),
        proportion_row(
            &bm.quality_pass_rate,
            &nm.quality_pass_rate,
            Worse::Lower,
            base,
            new,
        ),
        proportion_row(&bm.joint_rate, &nm.joint_rate, Worse::Lower, base, new),
        goodput_row(base, new),
        percentile_row(
            &bm.e2e_p50,
            &nm.e2e_p50,
            &base.index.e2e_ms,
            &new.index.e2e_ms,
            50.0,
            base,
            new,
            boot,
        ),
        percentile_row(
            &bm.e2e_tail,
            &nm.e2e_tail,
            &base.index.e2e_ms,
            &new.index.e2e_ms,
            base.settings.p,
            base,
            new,
            boot,
        ),
    ];
    for row in &mut rows {
        row.contract_broken = contract_broken;
        row.verdict = verdict_text(row);
    }
    rows
}

fn row(b: &Figure, n: &Figure, worse: Worse, base: &Side, new: &Side) -> DiffRow {
    DiffRow {
        key: b.key.clone(),
        name: b.name.clone(),
        unit: b.unit.clone(),
        base: b.value,
        new: n.value,
        base_interval: base.intervals.get(&b.key).cloned(),
        new_interval: new.intervals.get(&n.key).cloned(),
        difference: b.value.zip(n.value).map(|(b, n)| n - b),
        difference_interval: None,
        method: None,
        judgement: Judgement::Undefined,
        worse,
        verdict: Text::default(),
        n_base: 0,
        n_new: 0,
        n_counts: Text::default(),
        contract_broken: false,
        resolve: None,
    }
}

/// Whether either run's interval for this figure was widened for correlated attempts.
fn correlated(r: &DiffRow) -> bool {
    let widens = |i: &Option<FigureInterval>| {
        i.as_ref()
            .and_then(|i| i.dependence.as_ref())
            .is_some_and(|d| d.widens())
    };
    widens(&r.base_interval) || widens(&r.new_interval)
}

/// MOVER (Newcombe's construction) from each run's own interval: the difference new − base
/// with each side's distance to its limits combined in quadrature. None when a side has no
/// value or an open interval.
fn mover(r: &DiffRow) -> Option<Bounds> {
    super::stats::mover(
        r.base?,
        r.base_interval.as_ref()?.bounds,
        r.new?,
        r.new_interval.as_ref()?.bounds,
    )
}

/// The fewest independent samples a run must be worth for a difference of rates (not of
/// percentiles, whose own intervals open below their n) between correlated runs: below it the runs' few independent stretches decide the difference (A/A
/// pairs of a 16-slot server at 2,000 requests, ≈ 55 independent each, were called "beyond
/// noise" twice as often as a 95 % interval allows).
pub const MIN_EFFECTIVE: f64 = 100.0;

/// The smaller effective n of the two runs' intervals, with the larger n behind it.
fn effective(r: &DiffRow) -> Option<(f64, usize)> {
    let eff = |i: &Option<FigureInterval>| {
        i.as_ref()
            .and_then(|i| i.dependence.as_ref())
            .map(|d| (d.effective_n, d.n))
    };
    match (eff(&r.base_interval), eff(&r.new_interval)) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// Judges `r` by MOVER from each run's own interval, and, when that includes 0, what would
/// resolve a difference of the size seen. False when either interval is missing or open.
fn judge_by_mover(r: &mut DiffRow) -> bool {
    let rate = r.unit != Unit::Seconds;
    if let Some((eff, n)) = effective(r).filter(|(eff, _)| rate && *eff < MIN_EFFECTIVE) {
        r.judgement = Judgement::TooFew {
            needed: (n as f64 * MIN_EFFECTIVE / eff.max(1.0)).ceil() as usize,
        };
        return true;
    }
    let Some(d) = mover(r) else { return false };
    r.judgement = by_interval(&d);
    if r.judgement == Judgement::NoEvidence {
        r.resolve = resolve(r, &d);
    }
    r.difference_interval = Some(d);
    r.method = Some(IntervalMethod::Mover);
    true
}

/// The half-width shrinks as 1/√(run length) (or 1/√runs): the length at which it would be as
/// small as the difference seen. None for no difference at all.
fn resolve(r: &DiffRow, d: &Bounds) -> Option<Resolve> {
    let diff = r.difference?.abs();
    let half = (d.hi? - d.lo?) / 2.0;
    if diff <= 0.0 || half <= 0.0 {
        return None;
    }
    let factor = (half / diff).powi(2);
    if !factor.is_finite() || factor > 1e9 {
        return None;
    }
    let n = r.n_base.max(r.n_new).max(1) as f64;
    Some(Resolve {
        requests: (n * factor).ceil() as usize,
        runs: factor.ceil().max(2.0) as usize,
    })
}

fn by_interval(d: &Bounds) -> Judgement {
    match (d.lo, d.hi) {
        (Some(lo), _) if lo > 0.0 => Judgement::Up,
        (_, Some(hi)) if hi < 0.0 => Judgement::Down,
        _ => Judgement::NoEvidence,
    }
}

fn proportion_row(b: &Figure, n: &Figure, worse: Worse, base: &Side, new: &Side) -> DiffRow {
    let mut r = row(b, n, worse, base, new);
    let parts = |f: &Figure| {
        Some((f.numerator?, f.denominator?)).filter(|(k, d)| k <= d && f.value.is_some())
    };
    r.n_base = b.denominator.unwrap_or(0.0) as usize;
    r.n_new = n.denominator.unwrap_or(0.0) as usize;
    r.n_counts = b
        .denominator_label
        .clone()
        .unwrap_or_else(|| Text::new("attempts", "尝试"));
    if correlated(&r) && judge_by_mover(&mut r) {
        return r;
    }
    match (parts(b), parts(n)) {
        (Some((kb, db)), Some((kn, dn))) => {
            if let Some(d) = newcombe(kn as u64, dn as u64, kb as u64, db as u64) {
                r.judgement = by_interval(&d);
                r.difference_interval = Some(d);
                r.method = Some(IntervalMethod::Newcombe);
            }
        }
        _ if b.denominator == Some(0.0) || n.denominator == Some(0.0) => {
            r.judgement = Judgement::TooFew { needed: 1 }
        }
        _ => {}
    }
    r
}

fn goodput_row(base: &Side, new: &Side) -> DiffRow {
    let (b, n) = (&base.metrics.goodput, &new.metrics.goodput);
    let mut r = row(b, n, Worse::Lower, base, new);
    r.n_base = base.metrics.qualified;
    r.n_new = new.metrics.qualified;
    // Not attempts: the exact Poisson interval rests on the count of qualified attempts.
    r.n_counts = Text::new("jointly qualified attempts", "联合合格的尝试");
    if correlated(&r) && judge_by_mover(&mut r) {
        return r;
    }
    if let (Some(wb), Some(wn), Some(rb), Some(rn)) = (
        base.settings.window_s,
        new.settings.window_s,
        b.value,
        n.value,
    ) {
        // MOVER: each rate's own exact limits, combined as Newcombe combines Wilson limits.
        let lb = poisson(base.metrics.qualified as u64).scale(1.0 / wb);
        let ln = poisson(new.metrics.qualified as u64).scale(1.0 / wn);
        let (l1, u1, l2, u2) = (
            lb.lo.unwrap_or(0.0),
            lb.hi.unwrap_or(0.0),
            ln.lo.unwrap_or(0.0),
            ln.hi.unwrap_or(0.0),
        );
        let d = rn - rb;
        let bounds = Bounds::closed(
            d - ((rn - l2).powi(2) + (u1 - rb).powi(2)).sqrt(),
            d + ((u2 - rn).powi(2) + (rb - l1).powi(2)).sqrt(),
        );
        r.judgement = by_interval(&bounds);
        r.difference_interval = Some(bounds);
        r.method = Some(IntervalMethod::PoissonMover);
    }
    r
}

#[allow(clippy::too_many_arguments)]
fn percentile_row(
    b: &Figure,
    n: &Figure,
    sb: &[f64],
    sn: &[f64],
    p: f64,
    base: &Side,
    new: &Side,
    boot: Bootstrap,
) -> DiffRow {
    let mut r = row(b, n, Worse::Higher, base, new);
    r.n_base = sb.len();
    r.n_new = sn.len();
    let what = if b.key.starts_with("e2e") {
        "E2E"
    } else {
        "TTFT"
    };
    r.n_counts = Text::new(
        format!("{what} samples ranked"),
        format!("参与排序的 {what} 样本"),
    );
    let needed = super::stats::min_n_for_quantile(p / 100.0);
    if sb.is_empty() || sn.is_empty() {
        r.judgement = Judgement::TooFew { needed };
        return r;
    }
    let open = |i: &Option<FigureInterval>| i.as_ref().is_none_or(|i| !i.bounds.is_closed());
    let method = base.settings.percentile;
    if open(&r.base_interval) || open(&r.new_interval) {
        // The data cannot bound this percentile, so no interval of the difference is honest.
        // Two equal samples still show no change. Correlated samples need as many more as
        // they are worth fewer.
        let needed = match effective(&r).filter(|_| correlated(&r)) {
            Some((eff, n)) => (needed as f64 * n as f64 / eff.max(1.0)).ceil() as usize,
            None => needed,
        };
        r.judgement = if sb == sn {
            Judgement::NoEvidence
        } else {
            Judgement::TooFew { needed }
        };
        return r;
    }
    if correlated(&r) && judge_by_mover(&mut r) {
        return r;
    }
    let d = bootstrap_difference(sb, sn, p, method, boot);
    r.judgement = by_interval(&d);
    r.difference_interval = Some(d);
    r.method = Some(IntervalMethod::Bootstrap {
        seed: boot.seed,
        resamples: boot.resamples,
    });
    r
}

/// The 2.5th and 97.5th percentiles (linear) of `resamples` bootstrap differences
/// Pp(new*) − Pp(base*), in seconds. The same seed always gives the same interval.
pub fn bootstrap_difference(
    base_ms: &[f64],
    new_ms: &[f64],
    p: f64,
    method: crate::PercentileMethod,
    boot: Bootstrap,
) -> Bounds {
    let mut rng = SplitMix64::new(boot.seed);
    let (mut counts, mut buf) = (Vec::new(), Vec::new());
    let mut diffs = Vec::with_capacity(boot.resamples);
    for _ in 0..boot.resamples.max(1) {
        resample_sorted(base_ms, &mut rng, &mut counts, &mut buf);
        let b = percentile(&buf, p, method).unwrap_or(f64::NAN);
        resample_sorted(new_ms, &mut rng, &mut counts, &mut buf);
        let n = percentile(&buf, p, method).unwrap_or(f64::NAN);
        diffs.push((n - b) / 1000.0);
    }
    diffs.sort_unstable_by(f64::total_cmp);
    let lin = crate::PercentileMethod::Linear;
    Bounds {
        lo: percentile(&diffs, 2.5, lin),
        hi: percentile(&diffs, 97.5, lin),
    }
}

/// How every verdict of [`diff_rows`] is decided, in words, from the same rules: the lines a
/// page shows beside the table. `rows` gives each figure's worse direction by name.
pub fn verdict_rule(rows: &[DiffRow]) -> Vec<Text> {
    let pct = crate::format::trim_num(super::stats::CONFIDENCE * 100.0);
    let names = |worse: Worse, lang: Lang| {
        let sep = if lang == Lang::Zh { "、" } else { ", " };
        rows.iter()
            .filter(|r| r.worse == worse && r.unit != Unit::Seconds)
            .map(|r| r.name.get(lang).to_string())
            .collect::<Vec<_>>()
            .join(sep)
    };
    // A Latin word before Chinese text takes a space ("合格 goodput 降低").
    let spaced = |s: String| {
        if s.ends_with(|c: char| c.is_ascii_alphanumeric()) {
            format!("{s} ")
        } else {
            s
        }
    };
    vec![
        Text::new(
            format!("Each row's verdict reads the {pct} % interval of the difference new − base (Newcombe for a rate, exact Poisson limits combined by MOVER for goodput, a seeded bootstrap for a percentile)."),
            format!("每一行的结论只看差值（新 − 基线）的 {pct} % 区间（比率用 Newcombe，goodput 用精确 Poisson 界经 MOVER 合成，分位数用固定种子的自助法）。"),
        ),
        Text::new(
            "Wholly above 0: higher beyond noise (a latency: slower). Wholly below 0: lower beyond noise (a latency: faster).",
            "区间完全在 0 之上：超出噪声地升高（时延即变慢）；完全在 0 之下：超出噪声地降低（时延即变快）。",
        ),
        Text::new(
            format!("Higher is worse for latencies and for {}; lower is worse for {}.", names(Worse::Higher, Lang::En), names(Worse::Lower, Lang::En)),
            format!("时延和{}升高为变差；{}降低为变差。", spaced(names(Worse::Higher, Lang::Zh)), spaced(names(Worse::Lower, Lang::Zh))),
        ),
        Text::new(
            "The interval includes 0: no evidence of a change — which is not evidence that nothing changed.",
            "区间包含 0：没有证据表明有变化——这并不等于证明没有变化。",
        ),
        Text::new(
            "A percentile whose own interval in either run has no bound (too few samples) gets no interval of the difference: too few samples to tell, with the n each run needs.",
            "若任一次运行中某个分位数自身的区间缺少上下界（样本太少），就不构造差值区间：样本太少，无法判断，并写出每次运行所需的 n。",
        ),
        Text::new(
            "A side without a value (goodput without a window): cannot compare. A broken contract marks every verdict: the runs differ in more than what is compared.",
            "有一方没有数值（如未设置窗口的 goodput）：无法比较。契约被破坏时每条结论都加上标记：两次运行的差别不止被比较的那一项。",
        ),
        Text::new(
            "Where either run's attempts are correlated in start order (requests queue behind each other), its intervals are on the effective sample, and the difference is Newcombe's construction (MOVER) from the two runs' own intervals.",
            "若任一次运行的尝试按开始时间相关（请求彼此排队），它的区间取自有效样本，差值区间则由两次运行各自的区间经 Newcombe 构造（MOVER）合成。",
        ),
    ]
}

fn verdict_text(r: &DiffRow) -> Text {
    let latency = r.unit == Unit::Seconds;
    let worse_or_better = |up: bool| {
        let worse = (up && r.worse == Worse::Higher) || (!up && r.worse == Worse::Lower);
        if worse {
            ("worse", "变差")
        } else {
            ("better", "变好")
        }
    };
    let t = match &r.judgement {
        Judgement::Up if latency => Text::new("slower beyond noise", "超出噪声：变慢"),
        Judgement::Down if latency => Text::new("faster beyond noise", "超出噪声：变快"),
        Judgement::Up => {
            let (en, zh) = worse_or_better(true);
            Text::new(
                format!("higher beyond noise ({en})"),
                format!("超出噪声：升高（{zh}）"),
            )
        }
        Judgement::Down => {
            let (en, zh) = worse_or_better(false);
            Text::new(
                format!("lower beyond noise ({en})"),
                format!("超出噪声：降低（{zh}）"),
            )
        }
        Judgement::NoEvidence => match r.resolve {
            Some(Resolve { requests, runs }) => {
                let (n, k) = (
                    crate::format::integer(requests as u64),
                    crate::format::integer(runs as u64),
                );
                Text::new(
                    format!("no evidence of a change: too few independent samples to tell a difference this small (needs about {n} requests per run, or {k} runs per side)"),
                    format!("没有证据表明有变化：独立样本太少，分辨不了这么小的差别（每次运行约需 {n} 个请求，或每边 {k} 次运行）"),
                )
            }
            None => Text::new("no evidence of a change", "没有证据表明有变化"),
        },
        Judgement::TooFew { needed } if correlated(r) => {
            let needed = crate::format::integer(*needed as u64);
            Text::new(
                format!("too few independent samples to tell (the attempts are correlated; needs about {needed} per run at this correlation, or more runs)"),
                format!("独立样本太少，无法判断（各次尝试相关；在这种相关程度下每次运行约需 {needed} 个，或更多次运行）"),
            )
        }
        Judgement::TooFew { needed } => {
            let needed = crate::format::integer(*needed as u64);
            Text::new(
                format!("too few samples to tell (needs n ≥ {needed} per run)"),
                format!("样本太少，无法判断（每次运行需要 n ≥ {needed}）"),
            )
        }
        Judgement::Undefined => Text::new(
            "cannot compare: a side has no value",
            "无法比较：有一方没有数值",
        ),
    };
    if r.contract_broken {
        Text::new(
            format!("[contract broken] {}", t.en),
            format!("［契约被破坏］{}", t.zh),
        )
    } else {
        t
    }
}

impl DiffRow {
    /// "+0.12 s" / "−3 %" (a difference of shares is written in percentage points).
    pub fn difference_text(&self, lang: Lang) -> String {
        match self.difference {
            None => "—".into(),
            Some(d) => signed_in_unit(d, &self.unit, lang),
        }
    }

    /// "−0.05 s … +0.2 s".
    pub fn interval_text(&self, lang: Lang) -> String {
        match &self.difference_interval {
            None => "—".into(),
            Some(b) => {
                let side = |v: Option<f64>| {
                    v.map(|v| signed_in_unit(v, &self.unit, lang))
                        .unwrap_or_else(|| "?".into())
                };
                format!("{} … {}", side(b.lo), side(b.hi))
            }
        }
    }
}
