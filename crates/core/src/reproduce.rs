//! "The tool said / we recompute with the tool's method / under the lesson's definitions", side
//! by side. With the tool's method (its sample, its success filter, its percentile) our figure
//! must equal the tool's to floating-point rounding; the lesson's column then shows what moves:
//! nearest-rank instead of interpolation, failures kept in the denominator, goodput instead of
//! throughput, no figure where the lesson has none.
//!
//! The figures come from the trace's header ([`crate::trace::peer`]), where the importers
//! ([`crate::import`]) put them; this recomputation sits beside the metrics, above the schema.

use serde::Serialize;

use crate::format::trim_num;
use crate::metrics::Metrics;
use crate::percentile::{describe_text, percentile, PercentileMethod};
use crate::settings::{Population, Settings};
use crate::text::Text;
use crate::trace::peer::{
    Over, PeerFigure, PeerPercentile, PeerUnit, Quantity, RateSpan, Reproducibility, Stat,
};
use crate::trace::{Outcome, Phase, Trace};

/// Said wherever the tool's figures and ours are compared: a converted trace keeps its times to
/// the microsecond, so a figure recomputed from it may differ from the tool's by less than 1 µs
/// (and a rate by what 1 µs at each end of its span moves it); such a figure still matches.
pub fn resolution_note() -> Text {
    Text::new(
        "Times in a converted trace are kept to the microsecond, so a figure recomputed from one may differ from the tool's by \
         less than 1 µs (a rate by what 1 µs at each end of its span moves it); such a figure still counts as a match (✓). A \
         standard deviation also matches within 10⁻⁹ × the largest value of its sample: the float noise of the tool's own \
         arithmetic (a std of 5.7e-14 for equal values is 0).",
        "转换后的轨迹把时间保留到微秒，所以由它重算的数字可能与工具给出的相差不到 1 微秒（比率则相差其时间跨度两端各 1 微秒所带来的变化）；\
         这样的数字仍算作一致（✓）。标准差在其样本最大值的 10⁻⁹ 倍以内也算一致：这是工具自身浮点运算的噪声（相同值的标准差写成 5.7e-14 即为 0）。",
    )
}

/// One row of the side-by-side panel. The lab renders these as they are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReproRow {
    /// Stable code: `ttft_p99`, `e2e_mean`, `successes`.
    pub key: String,
    pub label: Text,
    /// The tool's own name for the figure.
    pub tool_key: String,
    pub unit: PeerUnit,
    /// What the tool wrote.
    pub tool_said: f64,
    /// Recomputed from the attempts with the tool's method; `None` when the file lacks what it
    /// needs (see `reproducibility`).
    pub tool_method: Option<f64>,
    /// The tool's figure and ours agree to floating-point rounding (or, for a trace read back
    /// from JSON Lines, to the microsecond it keeps).
    pub matches: Option<bool>,
    /// The same figure under the lesson's definitions; `None` where the lesson has none.
    pub lesson: Option<f64>,
    /// Sample size behind the tool-method figure.
    pub n: Option<usize>,
    /// How the tool computes it, in its words.
    pub how_tool: String,
    /// How the lesson computes it.
    pub how_lesson: Text,
    /// Why the lesson's value differs or is missing, when that needs saying.
    pub note: Option<Text>,
    pub reproducibility: Reproducibility,
    /// Among the few rows shown first (P50, P99 and mean of the latencies; the counts).
    pub headline: bool,
}

/// The panel's summary line: of the figures recomputed with the tool's exact method, how many
/// equal the tool's own ("9 / 10 figures …"). Approximate and unreproducible rows are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ReproSummary {
    /// Rows with a value recomputed by the tool's exact method.
    pub recomputed: usize,
    /// Of those, the rows whose value matches the tool's.
    pub matching: usize,
}

impl ReproSummary {
    pub fn of(rows: &[ReproRow]) -> ReproSummary {
        let exact: Vec<&ReproRow> = rows
            .iter()
            .filter(|r| r.tool_method.is_some() && r.reproducibility.is_exact())
            .collect();
        ReproSummary {
            recomputed: exact.len(),
            matching: exact.iter().filter(|r| r.matches == Some(true)).count(),
        }
    }
}

/// The samples the tools summarise: the attempts of the measured phase a figure covers (the
/// complete successes unless it says otherwise), ascending, in ms. The counts cover every
/// measured attempt.
struct Samples {
    ttft: Vec<f64>,
    ttst: Vec<f64>,
    e2e: Vec<f64>,
    /// Start → last output token (the last stream event).
    to_last_token: Vec<f64>,
    /// Input + output tokens of each attempt that has either count.
    total_tokens: Vec<f64>,
    /// First start → last output token of the sample, in seconds (GenAI-Perf's duration).
    span_to_last_token_s: Option<f64>,
    /// Each attempt's `(start, end)` from the run's origin, ms.
    intervals: Vec<(f64, f64)>,
    gaps: Vec<f64>,
    tpot: Vec<f64>,
    /// guidellm's per-request ITL and TPOT with their weights, `(value, weight)`.
    itl_weighted: Vec<(f64, f64)>,
    tpot_weighted: Vec<(f64, f64)>,
    attempts: usize,
    successes: usize,
    failures: usize,
    cancelled: usize,
    /// Successes whose quality was never judged.
    unevaluated: usize,
    output_tokens: Option<u64>,
    /// First start → last end of the sample, in seconds (AIPerf's benchmark duration).
    success_span_s: Option<f64>,
    /// Where each attempt of the sample ended, from the run's origin (ms).
    success_ends_ms: Vec<f64>,
    /// Input and output tokens of each success that has the count, ascending.
    input_tokens: Vec<f64>,
    output_each: Vec<f64>,
    /// Σ input tokens of the successes; `None` when one lacks the count.
    input_sum: Option<u64>,
    /// Σ E2E of the successes, ms.
    e2e_sum_ms: f64,
    /// The error code of each failure that has one (HTTP status, or the tool's `error_code`).
    failure_codes: Vec<i64>,
}

/// A failure's error code: its HTTP status, or the code an importer kept at the start of the
/// detail (`error_code -100: Output too few tokens`).
pub(crate) fn failure_code(a: &crate::trace::Attempt) -> Option<i64> {
    if let Outcome::HttpError { status } = a.outcome {
        return Some(i64::from(status));
    }
    let rest = a.detail.as_deref()?.strip_prefix("error_code ")?;
    let end = rest
        .find(|c: char| c != '-' && !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

impl Samples {
    /// `over`: which attempts the samples cover; `zero`: a value an attempt lacks counts as 0
    /// (guidellm's `or 0.0`) instead of leaving the attempt out.
    fn of(trace: &Trace, over: Over, zero: bool) -> Samples {
        let mut s = Samples {
            ttft: Vec::new(),
            ttst: Vec::new(),
            e2e: Vec::new(),
            to_last_token: Vec::new(),
            total_tokens: Vec::new(),
            span_to_last_token_s: None,
            intervals: Vec::new(),
            gaps: Vec::new(),
            tpot: Vec::new(),
            itl_weighted: Vec::new(),
            tpot_weighted: Vec::new(),
            attempts: 0,
            successes: 0,
            failures: 0,
            cancelled: 0,
            unevaluated: 0,
            output_tokens: Some(0),
            success_span_s: None,
            success_ends_ms: Vec::new(),
            input_tokens: Vec::new(),
            output_each: Vec::new(),
            input_sum: Some(0),
            e2e_sum_ms: 0.0,
            failure_codes: Vec::new(),
        };
        let (mut first, mut last) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut last_token = f64::NEG_INFINITY;
        for a in trace.attempts.iter().filter(|a| a.phase == Phase::Measure) {
            s.attempts += 1;
            if !a.outcome.is_success() {
                s.failures += 1;
                if a.outcome == Outcome::Cancelled {
                    s.cancelled += 1;
                }
                if let Some(code) = failure_code(a) {
                    s.failure_codes.push(code);
                }
            } else {
                s.successes += 1;
                if a.quality == crate::trace::Quality::NotEvaluated {
                    s.unevaluated += 1;
                }
            }
            if !over.admits(a.outcome) {
                continue;
            }
            let or_zero = |v: Option<f64>| if zero { Some(v.unwrap_or(0.0)) } else { v };
            if let (Some(start), Some(e2e)) = (a.start_ms, a.e2e_ms) {
                first = first.min(start);
                last = last.max(start + e2e);
                s.success_ends_ms.push(start + e2e);
                s.intervals.push((start, start + e2e));
                if let Some(t) = a.last_token_at_ms() {
                    last_token = last_token.max(start + t);
                }
            }
            if let Some(t) = or_zero(a.ttft_ms) {
                s.ttft.push(t);
            }
            if let Some(e) = or_zero(a.e2e_ms) {
                s.e2e.push(e);
                s.e2e_sum_ms += e;
            }
            if let Some(t) = or_zero(a.last_token_at_ms()) {
                s.to_last_token.push(t);
            }
            if let Some(i) = or_zero(a.input_tokens.map(f64::from)) {
                s.input_tokens.push(i);
            }
            if let Some(o) = or_zero(a.output_tokens.map(f64::from)) {
                s.output_each.push(o);
            }
            let total = match (a.input_tokens, a.output_tokens) {
                (None, None) => None,
                (i, o) => Some(f64::from(i.unwrap_or(0)) + f64::from(o.unwrap_or(0))),
            };
            if let Some(t) = or_zero(total) {
                s.total_tokens.push(t);
            }
            s.input_sum = match (s.input_sum, a.input_tokens) {
                (Some(sum), Some(i)) => Some(sum + u64::from(i)),
                _ => None,
            };
            if a.events.len() >= 2 {
                s.ttst.push(a.events[1].at_ms - a.events[0].at_ms);
            }
            s.gaps.extend(a.event_gaps_ms());
            if let (Some(e), Some(t), Some(out)) = (a.e2e_ms, a.ttft_ms, a.output_tokens) {
                if out > 1 {
                    s.tpot.push((e - t) / f64::from(out - 1));
                }
            }
            // guidellm's own fallbacks: a missing value counts as 0 (`or 0.0`), a missing count
            // as 0 tokens; the weights are output tokens − 1 and output tokens.
            let out = a.output_tokens.map(f64::from);
            let itl = match (a.ttft_ms, a.last_token_at_ms(), out) {
                (Some(first), Some(last), Some(o)) if o > 1.0 => (last - first) / (o - 1.0),
                _ => 0.0,
            };
            s.itl_weighted
                .push((itl, out.unwrap_or(1.0).max(1.0) - 1.0));
            let tpot = match (a.last_token_at_ms().or(a.e2e_ms), out) {
                (Some(last), Some(o)) if o > 0.0 => last / o,
                _ => 0.0,
            };
            s.tpot_weighted.push((tpot, out.unwrap_or(0.0)));
            s.output_tokens = match (s.output_tokens, a.output_tokens) {
                (Some(sum), Some(out)) => Some(sum + u64::from(out)),
                _ => None,
            };
        }
        for v in [
            &mut s.ttft,
            &mut s.ttst,
            &mut s.e2e,
            &mut s.gaps,
            &mut s.tpot,
            &mut s.input_tokens,
            &mut s.output_each,
            &mut s.to_last_token,
            &mut s.total_tokens,
        ] {
            v.sort_unstable_by(f64::total_cmp);
        }
        s.success_span_s = (last > first).then(|| (last - first) / 1000.0);
        s.span_to_last_token_s = (last_token > first).then(|| (last_token - first) / 1000.0);
        for v in [&mut s.itl_weighted, &mut s.tpot_weighted] {
            v.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        }
        s
    }

    fn sample(&self, q: Quantity) -> Option<&[f64]> {
        Some(match q {
            Quantity::Ttft => &self.ttft,
            Quantity::Ttst => &self.ttst,
            Quantity::E2e => &self.e2e,
            Quantity::EventGap => &self.gaps,
            Quantity::TimePerOutputToken => &self.tpot,
            Quantity::InputTokens => &self.input_tokens,
            Quantity::OutputTokens => &self.output_each,
            Quantity::ToLastToken => &self.to_last_token,
            Quantity::TotalTokens => &self.total_tokens,
            _ => return None,
        })
    }

    fn weighted(&self, q: Quantity) -> Option<&[(f64, f64)]> {
        match q {
            Quantity::ItlPerRequestTokenWeighted => Some(&self.itl_weighted),
            Quantity::TpotFromStartTokenWeighted => Some(&self.tpot_weighted),
            _ => None,
        }
    }
}

/// A statistic of an ascending weighted sample, guidellm's way (`DistributionSummary` over
/// `(value, weight)` pairs): zero weights dropped, probabilities = weight / total (equal weights
/// when the total is ~0); mean and variance weighted by them (ddof 0), percentiles the first
/// value whose running sum of probabilities reaches p, summed one sample at a time. Equal values
/// are not merged first: merging adds their shares in another order, and at a tie the rounded
/// sum can land on the other side of p (guidellm's p99.9 of 514 vs 515 on a real file).
fn weighted_stat(sorted: &[(f64, f64)], stat: Stat) -> Option<f64> {
    let mut kept: Vec<(f64, f64)> = sorted.iter().copied().filter(|&(_, w)| w > 0.0).collect();
    if kept.is_empty() {
        return None;
    }
    let mut total: f64 = kept.iter().map(|&(_, w)| w).sum();
    if total <= 1e-6 {
        kept.iter_mut().for_each(|m| m.1 = 1.0);
        total = kept.len() as f64;
    }
    let probabilities: Vec<f64> = kept.iter().map(|&(_, w)| w / total).collect();
    let mean: f64 = kept
        .iter()
        .zip(&probabilities)
        .map(|(&(v, _), p)| v * p)
        .sum();
    Some(match stat {
        Stat::Value | Stat::Sum => return None,
        Stat::Mean => mean,
        Stat::Std { .. } => kept
            .iter()
            .zip(&probabilities)
            .map(|(&(v, _), p)| (v - mean) * (v - mean) * p)
            .sum::<f64>()
            .sqrt(),
        Stat::Min => kept[0].0,
        Stat::Max => kept[kept.len() - 1].0,
        Stat::Percentile { p, .. } => {
            let q = p / 100.0;
            let mut cdf = 0.0;
            let mut found = kept[kept.len() - 1].0;
            for (&(v, _), share) in kept.iter().zip(&probabilities) {
                cdf += share;
                if cdf >= q {
                    found = v;
                    break;
                }
            }
            found
        }
    })
}

/// First start → last end over the complete successes of the measured phase, in seconds: the
/// duration AIPerf divides its throughputs by.
pub fn success_span_s(trace: &Trace) -> Option<f64> {
    Samples::of(trace, Over::Successes, false).success_span_s
}

/// A statistic of an ascending sample, the tool's way.
fn tool_stat(sorted: &[f64], stat: Stat) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    Some(match stat {
        Stat::Value => return None,
        Stat::Mean => mean(sorted),
        Stat::Std { ddof } => {
            if n <= ddof as usize {
                return None;
            }
            let m = mean(sorted);
            let ss: f64 = sorted.iter().map(|x| (x - m) * (x - m)).sum();
            (ss / (n - ddof as usize) as f64).sqrt()
        }
        Stat::Min => sorted[0],
        Stat::Max => sorted[n - 1],
        Stat::Sum => sorted.iter().sum(),
        Stat::Percentile {
            p,
            method: PeerPercentile::Linear,
        } => percentile(sorted, p, PercentileMethod::Linear)?,
        Stat::Percentile {
            p,
            method: PeerPercentile::CumulativeShare,
        } => cumulative_share(sorted, p),
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// guidellm's percentile: probabilities = 1 / n, the first value whose running sum of
/// probabilities reaches p / 100 (`np.searchsorted(cdf, q, side="left")`), summed one sample at
/// a time, not one distinct value at a time (see [`weighted_stat`]: the two differ at ties).
fn cumulative_share(sorted: &[f64], p: f64) -> f64 {
    let share = 1.0 / sorted.len() as f64;
    let q = p / 100.0;
    let mut cdf = 0.0;
    for &v in sorted {
        cdf += share;
        if cdf >= q {
            return v;
        }
    }
    sorted[sorted.len() - 1]
}

/// Equal to floating-point rounding; an exactly reproducible figure may also differ by the
/// microsecond a trace read back from JSON Lines keeps. An approximate one must be equal.
fn close(ours: f64, theirs: f64, unit: PeerUnit, exact: bool) -> bool {
    let resolution = if exact { unit.trace_resolution() } else { 0.0 };
    (ours - theirs).abs() <= (1e-9 * theirs.abs()).max(resolution)
}

/// Recomputes every figure with the tool's method and under the lesson's definitions. The
/// lesson's column always uses nearest-rank percentiles and counts every attempt of the
/// measured phase, whatever `settings` says; `settings` gives the threshold and window that
/// goodput needs.
pub fn reproduce(trace: &Trace, figures: &[PeerFigure], settings: &Settings) -> Vec<ReproRow> {
    let mut by_sample: Vec<((Over, bool), Samples)> = Vec::new();
    for f in figures {
        // The lesson's column never counts a missing value as 0, so a figure that does (the
        // tool's `or 0.0`) also gets the plain sample.
        for which in [(f.over, f.missing_as_zero), (f.over, false)] {
            if !by_sample.iter().any(|(w, _)| *w == which) {
                by_sample.push((which, Samples::of(trace, which.0, which.1)));
            }
        }
    }
    let tool = trace
        .header
        .source
        .as_ref()
        .map(|s| s.tool.clone())
        .unwrap_or_else(|| "the tool".into());
    let mut lesson_settings = settings.clone();
    lesson_settings.percentile = PercentileMethod::NearestRank;
    lesson_settings.population = Population::default();
    if lesson_settings.window_s.is_none() {
        lesson_settings.window_s = trace.header.window.map(|w| w.length_s);
    }
    let metrics = Metrics::of(&trace.attempts, &lesson_settings);
    let window_s = trace.header.window.map(|w| w.length_s).filter(|w| *w > 0.0);

    figures
        .iter()
        .map(|f| {
            let samples = &by_sample
                .iter()
                .find(|(w, _)| *w == (f.over, f.missing_as_zero))
                .expect("built above")
                .1;
            // A figure over the tool's own per-request values (`source.samples`) reads them, not
            // the attempts' times.
            let kept = f
                .sample
                .as_deref()
                .map(|name| kept_sample(trace, name, f.over, f.quantity.weighted()));
            let (sample, weighted) = match &kept {
                Some(Some(Kept::Plain(values))) => (Some(values.as_slice()), None),
                Some(Some(Kept::Weighted(pairs))) => (None, Some(pairs.as_slice())),
                Some(None) => (None, None),
                None => (samples.sample(f.quantity), samples.weighted(f.quantity)),
            };
            let computed = match (&f.reproducibility, sample) {
                (Reproducibility::Not(_), _) => None,
                _ if matches!(kept, Some(None)) => None,
                _ if weighted.is_some() => match weighted.and_then(|w| weighted_stat(w, f.stat)) {
                    Some(v) => Some(f.unit.from_ms(v)),
                    // guidellm writes 0 for a distribution with no weight at all.
                    None if f.empty_as_zero && !matches!(f.stat, Stat::Value | Stat::Sum) => {
                        Some(0.0)
                    }
                    None => None,
                },
                (_, Some(values)) => match tool_stat(values, f.stat) {
                    Some(v) => Some(f.unit.from_ms(v)),
                    None if values.is_empty() && f.empty_as_zero => Some(0.0),
                    None => None,
                },
                (_, None) => match (f.duration, f.quantity, trace.header.window) {
                    (RateSpan::EndsInWindow, Quantity::RequestThroughput, Some(w))
                        if w.length_s > 0.0 =>
                    {
                        let (from, to) =
                            (w.start_ms - 1e-3, w.start_ms + w.length_s * 1000.0 + 1e-3);
                        let ended = samples
                            .success_ends_ms
                            .iter()
                            .filter(|e| (from..=to).contains(*e))
                            .count();
                        Some(ended as f64 / w.length_s)
                    }
                    (RateSpan::EndsInWindow, ..) => None,
                    (RateSpan::OverlapWithWindow, Quantity::MeanConcurrency, Some(w))
                        if w.length_s > 0.0 =>
                    {
                        let (from, to) = (w.start_ms, w.start_ms + w.length_s * 1000.0);
                        let inside: f64 = samples
                            .intervals
                            .iter()
                            .map(|&(s, e)| (e.min(to) - s.max(from)).max(0.0))
                            .sum();
                        Some(inside / 1000.0 / w.length_s)
                    }
                    (RateSpan::OverlapWithWindow, ..) => None,
                    _ => count_value(
                        f,
                        samples,
                        match f.duration {
                            RateSpan::SuccessSpan => samples.success_span_s,
                            RateSpan::SuccessSpanToLastToken => samples.span_to_last_token_s,
                            _ => window_s,
                        },
                    ),
                },
            };
            let plain = &by_sample
                .iter()
                .find(|(w, _)| *w == (f.over, false))
                .expect("built above")
                .1;
            // The lesson has no figure over a tool's own per-request values.
            let lesson_sample = if kept.is_some() {
                None
            } else {
                plain.sample(f.quantity)
            };
            let (lesson, how_lesson, note) =
                lesson_view(f, lesson_sample, plain, &metrics, &lesson_settings, &tool);
            ReproRow {
                key: f.key(),
                label: f.label(),
                tool_key: f.tool_key.clone(),
                unit: f.unit,
                tool_said: f.value,
                tool_method: computed,
                matches: computed.map(|v| {
                    let span = match f.duration {
                        RateSpan::SuccessSpan => samples.success_span_s,
                        RateSpan::SuccessSpanToLastToken => samples.span_to_last_token_s,
                        _ => None,
                    };
                    match (span, f.duration, window_s) {
                        // A span read back from JSON Lines keeps each end to the microsecond.
                        (Some(span), ..) if f.reproducibility.is_exact() => {
                            (v - f.value).abs()
                                <= (1e-9 * f.value.abs()).max(f.value.abs() * 2e-6 / span)
                        }
                        // So does each request's time inside the window: 2 µs per request at most.
                        (None, RateSpan::OverlapWithWindow, Some(w))
                            if f.reproducibility.is_exact() =>
                        {
                            (v - f.value).abs()
                                <= (1e-9 * f.value.abs())
                                    .max(2e-6 * samples.intervals.len() as f64 / w)
                        }
                        _ => {
                            close(v, f.value, f.unit, f.reproducibility.is_exact())
                                || std_noise(f, sample, weighted)
                                    .is_some_and(|tol| (v - f.value).abs() <= tol)
                        }
                    }
                }),
                lesson,
                n: sample
                    .map(<[f64]>::len)
                    .or(weighted.map(<[(f64, f64)]>::len)),
                how_tool: f.how.clone(),
                how_lesson,
                note,
                reproducibility: f.reproducibility.clone(),
                headline: f.is_headline(),
            }
        })
        .collect()
}

/// A tool's own per-request values, ascending, over the measured attempts a figure covers.
enum Kept {
    Plain(Vec<f64>),
    Weighted(Vec<(f64, f64)>),
}

/// The values of `source.samples[name]` for the measured attempts `over` admits, in the
/// trace's attempts (a learner's deleted row is gone from both); `None` when the trace does not
/// keep that sample (imported by an older version: import the file again).
fn kept_sample(trace: &Trace, name: &str, over: Over, weighted: bool) -> Option<Kept> {
    let list = trace.header.source.as_ref()?.samples.get(name)?;
    let by_id: std::collections::HashMap<&str, (f64, f64)> = list
        .iter()
        .map(|v| (v.id.as_str(), (v.value, v.weight)))
        .collect();
    let mut pairs: Vec<(f64, f64)> = trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Measure && over.admits(a.outcome))
        .filter_map(|a| by_id.get(a.id.as_str()).copied())
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    Some(if weighted {
        Kept::Weighted(pairs)
    } else {
        Kept::Plain(pairs.into_iter().map(|p| p.0).collect())
    })
}

/// How far a standard deviation may be from the tool's and still match: 10⁻⁹ × the largest
/// |value| of its sample (in the figure's unit). The float noise of a std scales with the values,
/// not with the std: guidellm writes 5.68e-14 for a sample of equal values whose std is 0.
/// [`resolution_note`] states it.
fn std_noise(
    f: &PeerFigure,
    sample: Option<&[f64]>,
    weighted: Option<&[(f64, f64)]>,
) -> Option<f64> {
    if !matches!(f.stat, Stat::Std { .. }) || !f.reproducibility.is_exact() {
        return None;
    }
    let largest = match (sample, weighted) {
        (Some(values), _) => values.iter().fold(0.0f64, |m, v| m.max(v.abs())),
        (None, Some(pairs)) => pairs
            .iter()
            .filter(|p| p.1 > 0.0)
            .fold(0.0f64, |m, p| m.max(p.0.abs())),
        (None, None) => return None,
    };
    Some(1e-9 * f.unit.from_ms(largest).abs())
}

fn count_value(f: &PeerFigure, s: &Samples, window_s: Option<f64>) -> Option<f64> {
    Some(match f.quantity {
        Quantity::Successes => s.successes as f64,
        Quantity::Failures => s.failures as f64,
        Quantity::Cancelled => s.cancelled as f64,
        Quantity::Attempts => s.attempts as f64,
        Quantity::Errored => (s.failures - s.cancelled) as f64,
        Quantity::AttemptThroughput => s.attempts as f64 / window_s?,
        Quantity::ErrorRate => {
            if s.attempts == 0 {
                return None;
            }
            s.failures as f64 / s.attempts as f64
        }
        Quantity::RequestThroughput => s.successes as f64 / window_s?,
        Quantity::OutputThroughput => s.output_tokens? as f64 / window_s?,
        Quantity::InputThroughput => s.input_sum? as f64 / window_s?,
        Quantity::TotalTokenThroughput => (s.input_sum? + s.output_tokens?) as f64 / window_s?,
        Quantity::MeanConcurrency => s.e2e_sum_ms / 1000.0 / window_s?,
        Quantity::FailuresWithCode => {
            let code = f.error_code?;
            s.failure_codes.iter().filter(|c| **c == code).count() as f64
        }
        _ => return None,
    })
}

fn lesson_view(
    f: &PeerFigure,
    sample: Option<&[f64]>,
    s: &Samples,
    metrics: &Metrics,
    settings: &Settings,
    tool: &str,
) -> (Option<f64>, Text, Option<Text>) {
    if f.over != Over::Successes {
        return (
            None,
            t("—", "—"),
            Some(t(
                "the lesson summarises latency and tokens over complete successes only; every failure counts in its failure rate",
                "课程只对完整成功的请求汇总时延与 token；每个失败都计入失败率",
            )),
        );
    }
    if matches!(
        f.quantity,
        Quantity::TimePerOutputToken
            | Quantity::ItlPerRequestTokenWeighted
            | Quantity::TpotFromStartTokenWeighted
    ) {
        return (
            None,
            t("—", "—"),
            Some(t(
                "the lesson has no per-request average: its ITL is the gap between stream events (the ITL rows), per event",
                "课程没有按请求平均的指标：它的 ITL 是流事件之间的间隔（见 ITL 行），按事件计",
            )),
        );
    }
    if let Some(values) = sample {
        let n = values.len();
        let empty_note = || {
            (f.empty_as_zero && n == 0).then(|| {
                t(
                    format!("{tool} writes 0 when there is no sample; the lesson leaves it undefined: there is nothing to rank"),
                    format!("没有样本时 {tool} 写 0；课程中它无定义：没有可排序的值"),
                )
            })
        };
        return match f.stat {
            Stat::Percentile { p, .. } => {
                let value = percentile(values, p, PercentileMethod::NearestRank).map(|v| f.unit.from_ms(v));
                let desc = describe_text(p, n, PercentileMethod::NearestRank);
                (value, t(format!("{}, successes only", desc.en), format!("{}，仅成功请求", desc.zh)), empty_note())
            }
            Stat::Min | Stat::Max => {
                let value = tool_stat(values, f.stat).map(|v| f.unit.from_ms(v));
                let (en, zh) = if f.stat == Stat::Min { ("smallest", "最小") } else { ("largest", "最大") };
                (value, t(format!("the {en} value of the same sample"), format!("同一样本的{zh}值")), empty_note())
            }
            Stat::Mean => (
                None,
                t("—", "—"),
                Some(t(
                    "the lesson reports nearest-rank percentiles, not means: a few very slow requests can hide in a mean",
                    "课程报告最近秩分位数而不是均值：少数很慢的请求会被均值掩盖",
                )),
            ),
            Stat::Std { .. } | Stat::Value | Stat::Sum => (None, t("—", "—"), None),
        };
    }
    let failure_rate = metrics
        .failure_rate
        .value
        .map(|r| format!("{} %", trim_num((r * 10000.0).round() / 100.0)));
    match f.quantity {
        Quantity::Successes => (
            Some(s.successes as f64),
            t("complete successes: HTTP success and the stream read to its end", "完整成功：HTTP 成功且流读到正常结束"),
            Some(t(
                format!(
                    "the lesson divides every rate by all {} attempts, failures included (failure rate {})",
                    s.attempts,
                    failure_rate.clone().unwrap_or_else(|| "undefined".into())
                ),
                format!(
                    "课程中每个比率都除以全部 {} 次尝试，失败也计入（失败率 {}）",
                    s.attempts,
                    failure_rate.clone().unwrap_or_else(|| "无定义".into())
                ),
            )),
        ),
        Quantity::Failures => (
            Some(s.failures as f64),
            t("every attempt that is not a complete success, cancellations included", "所有非完整成功的尝试，含取消"),
            None,
        ),
        Quantity::Cancelled => (Some(s.cancelled as f64), t("attempts cancelled", "被取消的尝试"), None),
        Quantity::Attempts => (Some(s.attempts as f64), t("every attempt sent (warm-up excluded)", "发出的全部尝试（不含预热）"), None),
        Quantity::ErrorRate => (
            metrics.failure_rate.value,
            t("failure rate: failures / all attempts", "失败率：失败次数 / 全部尝试"),
            None,
        ),
        Quantity::RequestThroughput | Quantity::Goodput => {
            let threshold = trim_num(settings.ttft_threshold_s);
            let symbol = settings.comparison.symbol();
            let unevaluated = s.unevaluated;
            let note = if unevaluated > 0 {
                t(
                    format!(
                        "goodput counts only jointly qualified attempts; {unevaluated} successes carry no quality verdict from {tool}, \
                         so they do not qualify until one is given"
                    ),
                    format!("goodput 只计联合合格的尝试；{unevaluated} 个成功请求没有来自 {tool} 的质量评估，在给出评估前不算合格"),
                )
            } else {
                t(
                    "goodput counts only jointly qualified attempts, not every completed one",
                    "goodput 只计联合合格的尝试，而不是所有完成的请求",
                )
            };
            (
                metrics.goodput.value,
                t(
                    format!("goodput: jointly qualified (success ∧ quality pass ∧ TTFT {symbol} {threshold} s) / window seconds"),
                    format!("合格 goodput：联合合格（完整成功 ∧ 质量通过 ∧ TTFT {symbol} {threshold} 秒）/ 窗口秒数"),
                ),
                Some(note),
            )
        }
        Quantity::OutputThroughput => (
            metrics.output_tokens_per_s.value,
            t("output tokens of successes from the server's usage / window seconds", "成功请求的输出 token（服务端 usage）/ 窗口秒数"),
            metrics.output_tokens_per_s.value.is_none().then(|| {
                t(
                    format!("the lesson counts the server's usage tokens only; {tool} counted tokens itself"),
                    format!("课程只计服务端 usage 给出的 token；{tool} 是自己数的 token"),
                )
            }),
        ),
        _ => (None, t("—", "—"), None),
    }
}

fn t(en: impl Into<String>, zh: impl Into<String>) -> Text {
    Text::new(en, zh)
}
