//! The GPU beside each slow attempt: the GPU samples taken inside each attempt's interval on the
//! run's clock, for the slow attempts against the fast ones. "The GPU is busy, so users must be
//! fast" is a claim about the same moments; this sets them side by side. Without telemetry the
//! answer is "unverified", never a guess, and an attempt with no sample inside its interval
//! is left out rather than given its neighbours' readings.

use crate::format::trim_num;
use crate::percentile::{percentile, PercentileMethod};
use crate::settings::Settings;
use crate::text::Lang;
use crate::trace::{Attempt, Outcome, Phase, Trace, GPU_UNSUPPORTED};
use crate::verdict::{verdict, Latency};

/// An attempt is also slow when its E2E is at or above this percentile of the run's E2E.
pub const SLOWEST_PERCENTILE: f64 = 95.0;

/// One attempt's place on the clock and what the GPU did meanwhile.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptGpu {
    pub index: usize,
    pub id: String,
    pub start_ms: f64,
    pub end_ms: f64,
    pub slow: bool,
    /// Samples inside `[start_ms, end_ms]` (every GPU).
    pub samples: usize,
    pub util_pct: Option<f64>,
    pub mem_used_mib: Option<f64>,
}

/// What one group's attempts ran at: the mean over attempts of each attempt's own mean.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupGpu {
    pub attempts: usize,
    /// Attempts with at least one sample inside their interval (the others are not averaged).
    pub with_samples: usize,
    pub util_pct: Option<f64>,
    pub mem_used_mib: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum GpuBeside {
    /// The trace has no GPU telemetry: nothing can be said about the GPU.
    Unverified,
    Measured { slow: GroupGpu, fast: GroupGpu, attempts: Vec<AttemptGpu> },
}

/// The measured attempts that have a place on the clock: `(index, start, end)`.
pub fn intervals(trace: &Trace) -> Vec<(usize, f64, f64)> {
    trace
        .attempts
        .iter()
        .enumerate()
        .filter(|(_, a)| a.phase == Phase::Measure)
        .filter_map(|(i, a)| Some((i, a.start_ms?, a.start_ms? + a.e2e_ms?)))
        .collect()
}

fn is_timeout(a: &Attempt) -> bool {
    matches!(a.outcome, Outcome::TimeoutBeforeFirstToken | Outcome::TimeoutAfterFirstToken)
}

pub fn gpu_beside(trace: &Trace, settings: &Settings) -> GpuBeside {
    if trace.header.capabilities.gpu_telemetry == GPU_UNSUPPORTED || trace.gpu.is_empty() {
        return GpuBeside::Unverified;
    }
    let spans = intervals(trace);
    let mut e2e: Vec<f64> = spans.iter().map(|s| s.2 - s.1).collect();
    e2e.sort_by(f64::total_cmp);
    let slowest = percentile(&e2e, SLOWEST_PERCENTILE, PercentileMethod::NearestRank);
    let mut samples = trace.gpu.clone();
    samples.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    let attempts: Vec<AttemptGpu> = spans
        .iter()
        .map(|&(index, start_ms, end_ms)| {
            let a = &trace.attempts[index];
            let slow = verdict(a, settings).latency == Latency::Over
                || is_timeout(a)
                || slowest.is_some_and(|p| end_ms - start_ms >= p);
            let from = samples.partition_point(|s| s.t_ms < start_ms);
            let inside = &samples[from..samples.partition_point(|s| s.t_ms <= end_ms)];
            let mean = |f: fn(&crate::trace::GpuSample) -> f64| {
                (!inside.is_empty()).then(|| inside.iter().map(f).sum::<f64>() / inside.len() as f64)
            };
            AttemptGpu {
                index,
                id: a.id.clone(),
                start_ms,
                end_ms,
                slow,
                samples: inside.len(),
                util_pct: mean(|s| s.util_pct),
                mem_used_mib: mean(|s| s.mem_used_mib),
            }
        })
        .collect();
    let group = |slow: bool| {
        let members: Vec<&AttemptGpu> = attempts.iter().filter(|a| a.slow == slow).collect();
        let sampled: Vec<&&AttemptGpu> = members.iter().filter(|a| a.samples > 0).collect();
        let mean = |f: fn(&AttemptGpu) -> Option<f64>| {
            (!sampled.is_empty()).then(|| sampled.iter().filter_map(|a| f(a)).sum::<f64>() / sampled.len() as f64)
        };
        GroupGpu {
            attempts: members.len(),
            with_samples: sampled.len(),
            util_pct: mean(|a| a.util_pct),
            mem_used_mib: mean(|a| a.mem_used_mib),
        }
    };
    GpuBeside::Measured { slow: group(true), fast: group(false), attempts }
}

fn gib(mib: f64) -> String {
    trim_num((mib / 1024.0 * 10.0).round() / 10.0)
}

fn pct(v: f64) -> String {
    trim_num(v.round())
}

impl GpuBeside {
    /// The card's summary line.
    pub fn card_line(&self, settings: &Settings, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let (slow, fast) = match self {
            GpuBeside::Unverified => {
                return if zh {
                    "慢请求旁的 GPU：未验证 — 这份记录没有 GPU 遥测，无法判断".into()
                } else {
                    "GPU beside slow attempts: unverified — this trace has no GPU telemetry".into()
                }
            }
            GpuBeside::Measured { slow, fast, .. } => (slow, fast),
        };
        let at = |g: &GroupGpu| match (g.util_pct, g.mem_used_mib) {
            (Some(u), Some(m)) if zh => format!("利用率 {} %、显存 {} GiB（{} 个中 {} 个区间内有采样）", pct(u), gib(m), g.attempts, g.with_samples),
            (Some(u), Some(m)) => format!("{} % util and {} GiB ({} of {} with samples inside)", pct(u), gib(m), g.with_samples, g.attempts),
            _ if zh => format!("无采样（{} 个）", g.attempts),
            _ => format!("no samples inside ({} attempts)", g.attempts),
        };
        let threshold = trim_num(settings.ttft_threshold_s);
        if zh {
            format!(
                "慢请求旁的 GPU（TTFT 超过 {threshold} 秒、超时或 E2E 最慢 5 %；每 GPU 平均）：慢请求 {} 个，运行时{}；快请求 {} 个，运行时{}",
                slow.attempts,
                at(slow),
                fast.attempts,
                at(fast)
            )
        } else {
            format!(
                "GPU beside slow attempts (TTFT over {threshold} s, a timeout, or the slowest 5 % E2E; mean per GPU): {} slow ran at {}; {} fast at {}",
                slow.attempts,
                at(slow),
                fast.attempts,
                at(fast)
            )
        }
    }
}
