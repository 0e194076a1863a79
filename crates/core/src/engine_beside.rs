//! The serving engine beside each slow attempt: the engine's own signals (its queue, its
//! running batch, its KV cache, preemptions) scraped inside each attempt's interval on the
//! recorder's clock, for the slow attempts against the fast ones. "Why was R8 slow?" gets an
//! answer from evidence, or an honest "unverified" when the run scraped no engine. When the
//! engine also counts its own TTFT, the run's server-side distribution is set beside the
//! client's: distributions, never a per-request subtraction across two clocks.
//!
//! Signals that were recorded do not by themselves explain anything: under steady queueing the
//! slow and the fast attempts waited behind the same queue. So each signal is also asked whether
//! it separates the two groups ([`Separation`]); only one that does explains the slow attempts.

use crate::format::{integer, trim_num};
use crate::percentile::{percentile, PercentileMethod};
use crate::settings::Settings;
use crate::text::Lang;
use crate::trace::engine::{EngineHistogram, EngineSample};
use crate::trace::{Header, Trace};
use crate::verdict::{slowest_e2e, Span};

/// What one group's attempts ran beside: over the attempts with a scrape inside their
/// interval, the median of each attempt's own mean.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EngineGroup {
    pub attempts: usize,
    /// Attempts with at least one scrape inside their interval (the others are left out).
    pub with_samples: usize,
    pub waiting: Option<f64>,
    pub running: Option<f64>,
    pub kv_cache: Option<f64>,
    pub preemptions_per_s: Option<f64>,
}

/// The engine's own TTFT over the measured window beside the client's.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerTtft {
    /// The engine's metric and how many first tokens it counted in the window.
    pub metric: &'static str,
    pub count: f64,
    /// The bucket holding its P50 (seconds): a histogram gives an interval.
    pub p50_bounds: (f64, Option<f64>),
    /// Its mean (sum / count), seconds.
    pub mean_s: f64,
}

/// The client's TTFT P50 and its 95 % interval (seconds; an open side is `None`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientP50 {
    pub value: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

/// A slow attempt's value above a fast one's in at least this share of (slow, fast) pairs
/// (ties count half) separates the groups: 0.5 is no difference at all, 1 every slow attempt
/// above every fast one. Three pairs in four is a difference a reader can see in the rows.
pub const SEPARATES_AT: f64 = 0.75;

/// One signal's power to tell slow from fast: over every (slow, fast) pair of attempts with the
/// signal inside their interval, the share where the slow attempt's mean is higher (ties half):
/// the Mann–Whitney U over its largest value, the probability of superiority. Higher on the slow
/// side is what explains slowness (a longer queue, a fuller cache, more preemptions); a signal
/// higher on the fast side explains nothing about the slow ones.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Separation {
    /// `waiting`, `running`, `kv_cache` or `preemptions_per_s`.
    pub signal: &'static str,
    pub share: f64,
    /// Slow × fast pairs compared.
    pub pairs: u64,
}

impl Separation {
    pub fn separates(&self) -> bool {
        self.share >= SEPARATES_AT
    }

    fn words(&self, zh: bool) -> &'static str {
        match (self.signal, zh) {
            ("waiting", false) => "queue",
            ("running", false) => "running batch",
            ("kv_cache", false) => "KV cache",
            (_, false) => "preemptions",
            ("waiting", true) => "排队数",
            ("running", true) => "运行批次",
            ("kv_cache", true) => "KV 缓存",
            (_, true) => "抢占",
        }
    }
}

const SIGNALS: [&str; 4] = ["waiting", "running", "kv_cache", "preemptions_per_s"];

/// The share of (slow, fast) pairs where the slow value is higher, ties half; `None` when a
/// side is empty. Sorting the fast side makes it O((s + f) log f).
fn superiority(slow: &[f64], fast: &[f64]) -> Option<(f64, u64)> {
    if slow.is_empty() || fast.is_empty() {
        return None;
    }
    let mut fast = fast.to_vec();
    fast.sort_unstable_by(f64::total_cmp);
    let mut wins = 0.0;
    for &v in slow {
        let below = fast.partition_point(|&f| f < v);
        let not_above = fast.partition_point(|&f| f <= v);
        wins += below as f64 + (not_above - below) as f64 / 2.0;
    }
    let pairs = slow.len() as u64 * fast.len() as u64;
    Some((wins / pairs as f64, pairs))
}

// One summary per card: boxing the measured variant would save nothing worth the indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum EngineSummary {
    /// No engine metrics were scraped: nothing can be said about the engine.
    Unverified,
    Measured {
        engine: String,
        slow: EngineGroup,
        fast: EngineGroup,
        server_ttft: Option<ServerTtft>,
        /// The signal that best tells slow from fast (`None`: no signal inside attempts of
        /// both groups).
        separation: Option<Separation>,
    },
}

/// Whether a trace with this header scraped an engine (it then keeps [`Span`]s when streamed).
pub fn has_engine(header: &Header) -> bool {
    header.engine_metrics.is_some()
}

/// The signals of the scrapes inside `[start, end]`, each averaged over them.
fn inside(samples: &[EngineSample], span: &Span) -> Option<[Option<f64>; 4]> {
    let from = samples.partition_point(|s| s.t_ms < span.start_ms);
    let to = samples.partition_point(|s| s.t_ms <= span.end_ms);
    let inside = &samples[from..to];
    if inside.is_empty() {
        return None;
    }
    let mean = |f: fn(&EngineSample) -> Option<f64>| {
        let v: Vec<f64> = inside.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Some([
        mean(|s| s.waiting),
        mean(|s| s.running),
        mean(|s| s.kv_cache),
        mean(|s| s.preemptions_per_s),
    ])
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_unstable_by(f64::total_cmp);
    percentile(&v, 50.0, PercentileMethod::Linear)
}

#[derive(Default)]
struct GroupSum {
    attempts: usize,
    with_samples: usize,
    signals: [Vec<f64>; 4],
}

impl GroupSum {
    fn add(&mut self, signals: Option<[Option<f64>; 4]>) {
        self.attempts += 1;
        if let Some(s) = signals {
            self.with_samples += 1;
            for (all, v) in self.signals.iter_mut().zip(s) {
                all.extend(v);
            }
        }
    }

    fn done(self) -> EngineGroup {
        let [w, r, k, p] = self.signals;
        EngineGroup {
            attempts: self.attempts,
            with_samples: self.with_samples,
            waiting: median(w),
            running: median(r),
            kv_cache: median(k),
            preemptions_per_s: median(p),
        }
    }
}

/// The engine's TTFT histogram over the measured window: the last scrape's counts minus the
/// last scrape before the window began (or the first scrape, when none came before).
fn server_ttft(header: &Header, samples: &[EngineSample]) -> Option<ServerTtft> {
    let start = header
        .window
        .map(|w| w.start_ms)
        .unwrap_or(f64::NEG_INFINITY);
    let with: Vec<(&EngineSample, &EngineHistogram)> = samples
        .iter()
        .filter_map(|s| Some((s, s.ttft.as_ref()?)))
        .collect();
    let before = with
        .iter()
        .rev()
        .find(|(s, _)| s.t_ms <= start)
        .or(with.first())?;
    let last = with.last()?;
    let run = last.1.since(before.1)?;
    let metric = match last.0.engine.as_str() {
        "vllm" => "vllm:time_to_first_token_seconds",
        "sglang" => "sglang:time_to_first_token_seconds",
        _ => return None,
    };
    Some(ServerTtft {
        metric,
        count: run.count,
        p50_bounds: run.percentile_bounds(50.0)?,
        mean_s: run.sum_s / run.count,
    })
}

/// The slow and fast groups from the attempts' spans and the engine's scrapes (source 0: the
/// engine the requests went to; another source is another engine and is not mixed in).
pub fn summarise(header: &Header, spans: &[Span], engine: &[EngineSample]) -> EngineSummary {
    let mut samples: Vec<EngineSample> = engine.iter().filter(|s| s.source == 0).cloned().collect();
    if !has_engine(header) || samples.is_empty() {
        return EngineSummary::Unverified;
    }
    samples.sort_by(|a, b| a.t_ms.total_cmp(&b.t_ms));
    let slowest = slowest_e2e(spans.iter());
    let (mut slow, mut fast) = (GroupSum::default(), GroupSum::default());
    for span in spans {
        let group = if span.is_slow(slowest) {
            &mut slow
        } else {
            &mut fast
        };
        group.add(inside(&samples, span));
    }
    // The best signal, first in `SIGNALS` order on a tie, so the card names one deterministically.
    let separation = SIGNALS
        .iter()
        .zip(slow.signals.iter().zip(&fast.signals))
        .filter_map(|(&signal, (s, f))| {
            let (share, pairs) = superiority(s, f)?;
            Some(Separation {
                signal,
                share,
                pairs,
            })
        })
        .fold(None, |best: Option<Separation>, c| match best {
            Some(b) if b.share >= c.share => Some(b),
            _ => Some(c),
        });
    EngineSummary::Measured {
        engine: samples[0].engine.clone(),
        slow: slow.done(),
        fast: fast.done(),
        server_ttft: server_ttft(header, &samples),
        separation,
    }
}

/// [`summarise`] over a whole trace.
pub fn engine_beside(trace: &Trace, settings: &Settings) -> EngineSummary {
    // Nothing scraped: `summarise` answers "unverified" whatever the spans, so none is built
    // (a pass over every attempt and a span each, on every threshold edit).
    if !has_engine(&trace.header) || !trace.engine.iter().any(|s| s.source == 0) {
        return EngineSummary::Unverified;
    }
    let spans: Vec<Span> = trace
        .attempts
        .iter()
        .filter_map(|a| Span::of(a, settings))
        .collect();
    summarise(&trace.header, &spans, &trace.engine)
}

/// What the card says after the groups: whether the best signal tells slow from fast, with its
/// share of pairs, so a line that explains nothing says so.
fn separation_words(separation: Option<Separation>, zh: bool) -> String {
    let Some(s) = separation else {
        return if zh {
            "；信号已记录，但区分不了慢与快（没有一个信号同时落在慢请求和快请求的区间内）".into()
        } else {
            "; signals recorded, but they do not separate slow from fast (no signal inside attempts of both groups)".into()
        };
    };
    let share = trim_num((s.share * 100.0).round());
    let pairs = integer(s.pairs);
    let need = trim_num(SEPARATES_AT * 100.0);
    match (s.separates(), zh) {
        (true, false) => format!(
            "; the {} separates slow from fast: higher for the slow attempt in {share} % of {pairs} slow–fast pairs",
            s.words(false)
        ),
        (true, true) => format!(
            "；{}能区分慢与快：{pairs} 对慢–快请求中，慢请求更高的占 {share} %",
            s.words(true)
        ),
        (false, false) => format!(
            "; signals recorded, but they do not separate slow from fast (the best, the {}, is higher for the slow attempt in {share} % of {pairs} slow–fast pairs; separating takes {need} %)",
            s.words(false)
        ),
        (false, true) => format!(
            "；信号已记录，但区分不了慢与快（最能区分的{}，在 {pairs} 对慢–快请求中慢请求更高的只占 {share} %；要达到 {need} % 才算区分）",
            s.words(true)
        ),
    }
}

fn num(v: f64) -> String {
    trim_num((v * 10.0).round() / 10.0)
}

fn seconds(v: f64) -> String {
    crate::format::duration(v)
}

impl EngineSummary {
    /// Whether the engine's signals tell the slow attempts from the fast ones (`None`: no
    /// engine scraped, nothing to tell).
    pub fn separates(&self) -> Option<bool> {
        match self {
            EngineSummary::Unverified => None,
            EngineSummary::Measured { separation, .. } => {
                Some(separation.is_some_and(|s| s.separates()))
            }
        }
    }

    /// The card's lines: the engine beside the slow attempts and, when the engine counts its
    /// own TTFT, its distribution beside the client's (`client_ttft_p50`: the run's P50 and its
    /// 95 % interval's bounds, seconds).
    pub fn card_lines(
        &self,
        settings: &Settings,
        client_ttft_p50: Option<ClientP50>,
        lang: Lang,
    ) -> Vec<String> {
        let zh = lang == Lang::Zh;
        let (engine, slow, fast, server, separation) = match self {
            EngineSummary::Unverified => {
                return vec![if zh {
                    "慢请求旁的推理引擎：未验证 — 这次运行没有抓取引擎指标（--server-metrics）"
                        .into()
                } else {
                    "Engine beside slow attempts: unverified — this run scraped no engine metrics (--server-metrics)".into()
                }]
            }
            EngineSummary::Measured {
                engine,
                slow,
                fast,
                server_ttft,
                separation,
            } => (engine, slow, fast, server_ttft, separation),
        };
        let group = |g: &EngineGroup| {
            if g.with_samples == 0 {
                let attempts = integer(g.attempts as u64);
                return if zh {
                    format!("区间内无抓取（{attempts} 个）")
                } else {
                    format!("no scrape inside ({attempts} attempts)")
                };
            }
            let mut parts = Vec::new();
            if let Some(w) = g.waiting {
                parts.push(if zh {
                    format!("排队 {} 个", num(w))
                } else {
                    format!("behind {} queued", num(w))
                });
            }
            if let Some(r) = g.running {
                parts.push(if zh {
                    format!("运行中 {} 个", num(r))
                } else {
                    format!("{} running", num(r))
                });
            }
            if let Some(k) = g.kv_cache {
                parts.push(if zh {
                    format!("KV 缓存 {} %", trim_num((k * 100.0).round()))
                } else {
                    format!("at {} % KV cache", trim_num((k * 100.0).round()))
                });
            }
            if let Some(p) = g.preemptions_per_s {
                parts.push(if zh {
                    format!("抢占 {}/秒", num(p))
                } else {
                    format!("{} preemptions/s", num(p))
                });
            }
            let with = if zh {
                format!(
                    "（{} 个中 {} 个区间内有抓取）",
                    integer(g.attempts as u64),
                    integer(g.with_samples as u64)
                )
            } else {
                format!(
                    " ({} of {} with a scrape inside)",
                    integer(g.with_samples as u64),
                    integer(g.attempts as u64)
                )
            };
            format!("{}{with}", parts.join(if zh { "、" } else { ", " }))
        };
        let threshold = trim_num(settings.ttft_threshold_s);
        let mut lines = vec![if zh {
            format!(
                "慢请求旁的推理引擎（{engine}；TTFT 超过 {threshold} 秒、超时或 E2E 最慢 5 %；每个请求区间内取平均，再取中位数）：慢请求 {} 个，{}；快请求 {} 个，{}",
                integer(slow.attempts as u64),
                group(slow),
                integer(fast.attempts as u64),
                group(fast)
            )
        } else {
            format!(
                "Engine beside slow attempts ({engine}; TTFT over {threshold} s, a timeout, or the slowest 5 % E2E; median of each attempt's mean): {} slow waited {}; {} fast {}",
                integer(slow.attempts as u64),
                group(slow),
                integer(fast.attempts as u64),
                group(fast)
            )
        }];
        lines[0].push_str(&separation_words(*separation, zh));
        if let Some(s) = server {
            let bounds = match s.p50_bounds {
                (lo, Some(hi)) => format!("({}, {}]", seconds(lo), seconds(hi)),
                (lo, None) => format!("> {}", seconds(lo)),
            };
            let compare = client_ttft_p50.map(|c| {
                let (lo, hi) = s.p50_bounds;
                // Told apart only when the client's whole interval clears the engine's bucket.
                let client_low = c.lo.unwrap_or(c.value);
                let client_high = c.hi.unwrap_or(f64::INFINITY);
                let larger = match (zh, hi.is_some_and(|h| client_low > h), client_high < lo) {
                    (false, true, _) => "the client's is larger: the gap is the network, the client and what the engine does not count (e.g. waiting before its clock starts)",
                    (false, _, true) => "the engine's is larger: the two do not count the same requests or the same span",
                    (false, _, _) => "the client's falls inside the engine's bucket: no gap can be told apart",
                    (true, true, _) => "客户端的更大：差距来自网络、客户端和引擎没计入的部分（比如它开始计时前的等待）",
                    (true, _, true) => "引擎的更大：两者统计的请求或时间段不同",
                    (true, _, _) => "客户端的落在引擎的同一个桶里：分不出差距",
                };
                let interval = match (c.lo, c.hi) {
                    (Some(l), Some(h)) => format!("[{}, {}]", seconds(l), seconds(h)),
                    (Some(l), None) => format!("[{}, —]", seconds(l)),
                    _ => "—".into(),
                };
                if zh {
                    format!("；客户端 TTFT P50 {}（95 % 区间 {interval}）：{larger}", seconds(c.value))
                } else {
                    format!("; the client's TTFT P50 is {} (95 % interval {interval}): {larger}", seconds(c.value))
                }
            });
            lines.push(if zh {
                format!(
                    "引擎自己统计的 TTFT（{}，本窗口 {} 个）：P50 落在 {bounds}，均值 {}{}",
                    s.metric,
                    trim_num(s.count),
                    seconds(s.mean_s),
                    compare.unwrap_or_default()
                )
            } else {
                format!(
                    "The engine's own TTFT ({}, {} in the window): P50 in {bounds}, mean {}{}",
                    s.metric,
                    trim_num(s.count),
                    seconds(s.mean_s),
                    compare.unwrap_or_default()
                )
            });
        }
        lines
    }
}

impl EngineGroup {
    fn to_json(self) -> serde_json::Value {
        serde_json::json!({
            "attempts": self.attempts,
            "with_samples": self.with_samples,
            "waiting_median": self.waiting,
            "running_median": self.running,
            "kv_cache_median": self.kv_cache,
            "preemptions_per_s_median": self.preemptions_per_s,
        })
    }
}

impl EngineSummary {
    /// What `report --json` carries: the same groups as the card, or `unverified` with why.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            EngineSummary::Unverified => serde_json::json!({
                "status": "unverified",
                "why": "the run scraped no engine metrics (--server-metrics)",
            }),
            EngineSummary::Measured {
                engine,
                slow,
                fast,
                server_ttft,
                separation,
            } => serde_json::json!({
                "status": "measured",
                "engine": engine,
                "slow": slow.to_json(),
                "fast": fast.to_json(),
                "separates": separation.is_some_and(|s| s.separates()),
                "separation": separation.map(|s| serde_json::json!({
                    "signal": s.signal,
                    "slow_higher_share": s.share,
                    "pairs": s.pairs,
                    "separates_at": SEPARATES_AT,
                })),
                "server_ttft": server_ttft.as_ref().map(|s| serde_json::json!({
                    "metric": s.metric,
                    "count": s.count,
                    "p50_bucket_s": [s.p50_bounds.0, s.p50_bounds.1],
                    "mean_s": s.mean_s,
                })),
            }),
        }
    }
}
