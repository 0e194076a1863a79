//! The GPU beside each slow attempt: the GPU samples taken inside each attempt's interval on the
//! run's clock, for the slow attempts against the fast ones. "The GPU is busy, so users must be
//! fast" is a claim about the same moments; this sets them side by side. Without telemetry the
//! answer is "unverified", never a guess, and an attempt with no sample inside its interval
//! is left out rather than given its neighbours' readings.

use crate::format::{integer, trim_num};
use crate::settings::Settings;
use crate::text::Lang;
use crate::trace::{Phase, Trace, GPU_UNSUPPORTED};
pub use crate::verdict::{slowest_e2e, Span, SLOWEST_PERCENTILE};

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
    Measured {
        slow: GroupGpu,
        fast: GroupGpu,
        attempts: Vec<AttemptGpu>,
    },
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

/// Whether a trace with this header can say anything about its GPU (it then keeps [`Span`]s).
pub fn has_telemetry(header: &crate::trace::Header) -> bool {
    header.capabilities.gpu_telemetry != GPU_UNSUPPORTED
}

/// What decides each span: the E2E tail over all spans, and the samples in time order.
struct Clock {
    slowest: Option<f64>,
    samples: Vec<crate::trace::GpuSample>,
}

impl Clock {
    fn new<'a>(spans: impl Iterator<Item = &'a Span>, gpu: &[crate::trace::GpuSample]) -> Clock {
        let slowest = slowest_e2e(spans);
        let mut samples = gpu.to_vec();
        samples.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
        Clock { slowest, samples }
    }

    /// Slow or not, samples inside, mean utilisation and memory.
    fn place(&self, s: &Span) -> (bool, usize, Option<f64>, Option<f64>) {
        let slow = s.is_slow(self.slowest);
        let from = self.samples.partition_point(|g| g.t_ms < s.start_ms);
        let inside = &self.samples[from..self.samples.partition_point(|g| g.t_ms <= s.end_ms)];
        let mean = |f: fn(&crate::trace::GpuSample) -> f64| {
            (!inside.is_empty()).then(|| inside.iter().map(f).sum::<f64>() / inside.len() as f64)
        };
        (
            slow,
            inside.len(),
            mean(|g| g.util_pct),
            mean(|g| g.mem_used_mib),
        )
    }
}

/// One group's running sums, in attempt order.
#[derive(Default)]
struct GroupSum {
    attempts: usize,
    with_samples: usize,
    util: f64,
    mem: f64,
}

impl GroupSum {
    fn add(&mut self, samples: usize, util: Option<f64>, mem: Option<f64>) {
        self.attempts += 1;
        if samples > 0 {
            self.with_samples += 1;
            self.util += util.unwrap_or(0.0);
            self.mem += mem.unwrap_or(0.0);
        }
    }

    fn done(&self) -> GroupGpu {
        let n = self.with_samples;
        GroupGpu {
            attempts: self.attempts,
            with_samples: n,
            util_pct: (n > 0).then(|| self.util / n as f64),
            mem_used_mib: (n > 0).then(|| self.mem / n as f64),
        }
    }
}

pub fn gpu_beside(trace: &Trace, settings: &Settings) -> GpuBeside {
    if !has_telemetry(&trace.header) || trace.gpu.is_empty() {
        return GpuBeside::Unverified;
    }
    let spans: Vec<(usize, Span)> = trace
        .attempts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Some((i, Span::of(a, settings)?)))
        .collect();
    let clock = Clock::new(spans.iter().map(|(_, s)| s), &trace.gpu);
    let (mut slow_sum, mut fast_sum) = (GroupSum::default(), GroupSum::default());
    let attempts: Vec<AttemptGpu> = spans
        .iter()
        .map(|&(index, span)| {
            let (slow, samples, util_pct, mem_used_mib) = clock.place(&span);
            if slow { &mut slow_sum } else { &mut fast_sum }.add(samples, util_pct, mem_used_mib);
            AttemptGpu {
                index,
                id: trace.attempts[index].id.clone(),
                start_ms: span.start_ms,
                end_ms: span.end_ms,
                slow,
                samples,
                util_pct,
                mem_used_mib,
            }
        })
        .collect();
    GpuBeside::Measured {
        slow: slow_sum.done(),
        fast: fast_sum.done(),
        attempts,
    }
}

/// The card's two groups from spans kept while reading a trace as a stream (the same sums as
/// [`gpu_beside`], without the per-attempt list).
pub fn summarise(
    header: &crate::trace::Header,
    spans: &[Span],
    gpu: &[crate::trace::GpuSample],
) -> GpuSummary {
    if !has_telemetry(header) || gpu.is_empty() {
        return GpuSummary::Unverified;
    }
    let clock = Clock::new(spans.iter(), gpu);
    let (mut slow_sum, mut fast_sum) = (GroupSum::default(), GroupSum::default());
    for span in spans {
        let (slow, samples, util, mem) = clock.place(span);
        if slow { &mut slow_sum } else { &mut fast_sum }.add(samples, util, mem);
    }
    GpuSummary::Measured {
        slow: slow_sum.done(),
        fast: fast_sum.done(),
    }
}

/// [`GpuBeside`] without the per-attempt list: what the card's line says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GpuSummary {
    Unverified,
    Measured { slow: GroupGpu, fast: GroupGpu },
}

impl GpuBeside {
    pub fn summary(&self) -> GpuSummary {
        match self {
            GpuBeside::Unverified => GpuSummary::Unverified,
            GpuBeside::Measured { slow, fast, .. } => GpuSummary::Measured {
                slow: *slow,
                fast: *fast,
            },
        }
    }

    /// The card's summary line.
    pub fn card_line(&self, settings: &Settings, lang: Lang) -> String {
        self.summary().card_line(settings, lang)
    }
}

fn gib(mib: f64) -> String {
    trim_num((mib / 1024.0 * 10.0).round() / 10.0)
}

fn pct(v: f64) -> String {
    trim_num(v.round())
}

impl GpuSummary {
    /// The card's summary line.
    pub fn card_line(&self, settings: &Settings, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let (slow, fast) = match self {
            GpuSummary::Unverified => {
                return if zh {
                    "慢请求旁的 GPU：未验证 — 这份记录没有 GPU 遥测，无法判断".into()
                } else {
                    "GPU beside slow attempts: unverified — this trace has no GPU telemetry".into()
                }
            }
            GpuSummary::Measured { slow, fast } => (slow, fast),
        };
        let at = |g: &GroupGpu| {
            let (attempts, with_samples) =
                (integer(g.attempts as u64), integer(g.with_samples as u64));
            match (g.util_pct, g.mem_used_mib) {
                (Some(u), Some(m)) if zh => format!(
                    "利用率 {} %、显存 {} GiB（{attempts} 个中 {with_samples} 个区间内有采样）",
                    pct(u),
                    gib(m)
                ),
                (Some(u), Some(m)) => format!(
                    "{} % util and {} GiB ({with_samples} of {attempts} with samples inside)",
                    pct(u),
                    gib(m)
                ),
                _ if zh => format!("无采样（{attempts} 个）"),
                _ => format!("no samples inside ({attempts} attempts)"),
            }
        };
        let threshold = trim_num(settings.ttft_threshold_s);
        if zh {
            format!(
                "慢请求旁的 GPU（TTFT 超过 {threshold} 秒、超时或 E2E 最慢 5 %；每 GPU 平均）：慢请求 {} 个，运行时{}；快请求 {} 个，运行时{}",
                integer(slow.attempts as u64),
                at(slow),
                integer(fast.attempts as u64),
                at(fast)
            )
        } else {
            format!(
                "GPU beside slow attempts (TTFT over {threshold} s, a timeout, or the slowest 5 % E2E; mean per GPU): {} slow ran at {}; {} fast at {}",
                integer(slow.attempts as u64),
                at(slow),
                integer(fast.attempts as u64),
                at(fast)
            )
        }
    }
}
