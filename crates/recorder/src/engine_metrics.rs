//! The serving engine's own signals (`--server-metrics URL[,URL…]`): its Prometheus endpoint
//! scraped during the run on the recorder's clock, each engine's metric names mapped to a few
//! common signals, written as `engine` records (`trace::engine::EngineSample`).
//!
//! The names come from each engine's own source: vLLM `vllm/v1/metrics/loggers.py` (V1) and
//! `vllm/engine/metrics.py` (V0: `gpu_cache_usage_perc`), SGLang
//! `python/sglang/srt/metrics/collector.py`, TGI's router (`router/src/infer/…`, the `tgi_`
//! families), and llama.cpp's `llama-server --metrics` (`tools/server/server.cpp`, `llamacpp:`).
//! Unknown metrics are ignored. Of the labels only `le` (a bucket's bound) and a rank label
//! (`tp_rank`, `dp_rank`, `rank`) are read: hosts, pods, paths and model names are dropped as
//! they are parsed, and the URLs are never written or printed.

use std::collections::BTreeMap;
use std::time::Duration;

use tracelab_core::trace::engine::{EngineHistogram, EngineSample, EngineScrape};

use crate::clock::Clock;

/// One engine's names for the common signals.
struct Names {
    engine: &'static str,
    /// Metric-name prefix that identifies the engine.
    prefix: &'static str,
    waiting: &'static [&'static str],
    running: &'static [&'static str],
    /// A 0–1 share; the first name present wins (V1 before V0).
    kv_cache: &'static [&'static str],
    preemptions_total: &'static [&'static str],
    queue_time: &'static [&'static str],
    ttft: &'static [&'static str],
}

const ENGINES: [Names; 4] = [
    Names {
        engine: "vllm",
        prefix: "vllm:",
        waiting: &["vllm:num_requests_waiting"],
        running: &["vllm:num_requests_running"],
        kv_cache: &["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
        preemptions_total: &["vllm:num_preemptions_total"],
        queue_time: &["vllm:request_queue_time_seconds"],
        ttft: &["vllm:time_to_first_token_seconds"],
    },
    Names {
        engine: "sglang",
        prefix: "sglang:",
        waiting: &["sglang:num_queue_reqs"],
        running: &["sglang:num_running_reqs"],
        kv_cache: &["sglang:token_usage"],
        preemptions_total: &["sglang:num_retracted_requests_total"],
        queue_time: &["sglang:queue_time_seconds"],
        ttft: &["sglang:time_to_first_token_seconds"],
    },
    Names {
        engine: "tgi",
        prefix: "tgi_",
        waiting: &["tgi_queue_size"],
        running: &["tgi_batch_current_size"],
        kv_cache: &[],
        preemptions_total: &[],
        queue_time: &["tgi_request_queue_duration"],
        ttft: &[],
    },
    Names {
        engine: "llamacpp",
        prefix: "llamacpp:",
        waiting: &["llamacpp:requests_deferred"],
        running: &["llamacpp:requests_processing"],
        kv_cache: &["llamacpp:kv_cache_usage_ratio"],
        preemptions_total: &[],
        queue_time: &[],
        ttft: &[],
    },
];

/// Labels that tell ranks apart: every rank reports the same scheduler, so only rank 0 counts.
const RANK_LABELS: [&str; 3] = ["tp_rank", "dp_rank", "rank"];

/// One scrape, mapped: the signals found and the preemption counter (its rate needs the last).
#[derive(Debug, Clone, PartialEq)]
pub struct Scraped {
    pub engine: &'static str,
    pub waiting: Option<f64>,
    pub running: Option<f64>,
    pub kv_cache: Option<f64>,
    pub preemptions_total: Option<f64>,
    pub queue_time: Option<EngineHistogram>,
    pub ttft: Option<EngineHistogram>,
}

impl Scraped {
    /// The common signals this scrape carried, by their trace names.
    pub fn signals(&self) -> Vec<&'static str> {
        let mut s = Vec::new();
        for (name, present) in [
            ("waiting", self.waiting.is_some()),
            ("running", self.running.is_some()),
            ("kv_cache", self.kv_cache.is_some()),
            ("preemptions_per_s", self.preemptions_total.is_some()),
            ("queue_time", self.queue_time.is_some()),
            ("ttft", self.ttft.is_some()),
        ] {
            if present {
                s.push(name);
            }
        }
        s
    }
}

#[derive(Default)]
struct Family {
    /// Gauge or counter values of every label set (rank 0 only).
    values: Vec<f64>,
    /// Histogram parts summed over label sets: bucket bound → count, and `_sum`, `_count`.
    buckets: BTreeMap<u64, (f64, f64)>,
    sum: f64,
    count: Option<f64>,
}

/// Maps one exposition to the common signals; None when no known engine's metrics are in it.
pub fn map_exposition(text: &str) -> Option<Scraped> {
    let names = ENGINES
        .iter()
        .find(|n| text.lines().any(|l| l.trim_start().starts_with(n.prefix)))?;
    let wanted: Vec<&str> = [
        names.waiting,
        names.running,
        names.kv_cache,
        names.preemptions_total,
        names.queue_time,
        names.ttft,
    ]
    .concat();
    let mut families: BTreeMap<&str, Family> = BTreeMap::new();
    for line in text.lines() {
        let Some(series) = crate::prom::parse_line(line, &["le", "tp_rank", "dp_rank", "rank"])
        else {
            continue;
        };
        if RANK_LABELS
            .iter()
            .any(|r| series.label(r).is_some_and(|v| v != "0"))
        {
            continue;
        }
        let (base, part) = split_histogram_part(series.name, &wanted);
        let Some(base) = wanted.iter().find(|w| **w == base) else {
            continue;
        };
        let family = families.entry(base).or_default();
        match part {
            Part::Value => family.values.push(series.value),
            Part::Sum => family.sum += series.value,
            Part::Count => *family.count.get_or_insert(0.0) += series.value,
            Part::Bucket => {
                let Some(le) = series.label("le") else {
                    continue;
                };
                if le == "+Inf" {
                    continue; // equal to `_count`
                }
                let Ok(bound) = le.parse::<f64>() else {
                    continue;
                };
                let entry = family
                    .buckets
                    .entry(bound.to_bits())
                    .or_insert((bound, 0.0));
                entry.1 += series.value;
            }
        }
    }
    let gauge_sum = |names: &[&str]| {
        names.iter().find_map(|n| {
            families
                .get(n)
                .filter(|f| !f.values.is_empty())
                .map(|f| f.values.iter().sum::<f64>())
        })
    };
    let gauge_mean = |names: &[&str]| {
        names.iter().find_map(|n| {
            families
                .get(n)
                .filter(|f| !f.values.is_empty())
                .map(|f| f.values.iter().sum::<f64>() / f.values.len() as f64)
        })
    };
    let histogram = |names: &[&str]| {
        names.iter().find_map(|n| {
            let f = families.get(n)?;
            let count = f.count?;
            let mut buckets: Vec<[f64; 2]> = f.buckets.values().map(|(b, c)| [*b, *c]).collect();
            buckets.sort_by(|a, b| a[0].total_cmp(&b[0]));
            Some(EngineHistogram {
                count,
                sum_s: f.sum,
                buckets,
            })
        })
    };
    Some(Scraped {
        engine: names.engine,
        waiting: gauge_sum(names.waiting),
        running: gauge_sum(names.running),
        kv_cache: gauge_mean(names.kv_cache).filter(|k| (0.0..=1.0).contains(k)),
        preemptions_total: gauge_sum(names.preemptions_total),
        queue_time: histogram(names.queue_time),
        ttft: histogram(names.ttft),
    })
}

enum Part {
    Value,
    Sum,
    Count,
    Bucket,
}

/// `X_bucket` / `X_sum` / `X_count` of a wanted histogram `X`, else the name itself.
fn split_histogram_part<'a>(name: &'a str, wanted: &[&str]) -> (&'a str, Part) {
    for (suffix, part) in [
        ("_bucket", Part::Bucket),
        ("_sum", Part::Sum),
        ("_count", Part::Count),
    ] {
        if let Some(base) = name.strip_suffix(suffix) {
            if wanted.contains(&base) {
                return (base, part);
            }
        }
    }
    (name, Part::Value)
}

/// `URL[,URL…]` → the endpoint URLs, in order. Errors never echo a URL (it names a host).
pub fn parse_sources(list: &str) -> Result<Vec<url::Url>, String> {
    crate::scrape::parse_urls(
        list,
        "--server-metrics",
        "list the endpoints as URL,URL",
        "http://localhost:8000/metrics",
    )
}

/// One scrape of every source before the run, for the header: which engine each is and which
/// signals it has, and a note for each source that did not answer or whose metrics name no
/// engine we know (named by position only). The run goes on without what a source cannot
/// give, as it does without GPU telemetry: its `engines` entry is `null`, and nothing about
/// it is invented.
pub fn detect(
    sources: &[url::Url],
    interval: Duration,
) -> Result<(EngineScrape, Vec<String>), String> {
    let sources = sources.to_vec();
    std::thread::spawn(move || -> Result<(EngineScrape, Vec<String>), String> {
        let rt = crate::scrape::runtime("engine-metrics")?;
        let client = crate::scrape::client("engine-metrics")?;
        let mut engines = Vec::new();
        let mut signals: Vec<&str> = Vec::new();
        let mut notes = Vec::new();
        for (i, url) in sources.iter().enumerate() {
            let scraped = match rt.block_on(crate::scrape::fetch(&client, url)) {
                Err(why) => {
                    notes.push(format!("--server-metrics source {i} {why}: no engine signals from it"));
                    None
                }
                Ok(text) => {
                    let scraped = map_exposition(&text);
                    if scraped.is_none() {
                        notes.push(format!(
                            "--server-metrics source {i} serves no metrics of an engine Trace Lab knows (vllm:, sglang:, tgi_, \
                             llamacpp:); is it the engine's /metrics (llama-server needs --metrics)?"
                        ));
                    }
                    scraped
                }
            };
            for s in scraped.iter().flat_map(Scraped::signals) {
                if !signals.contains(&s) {
                    signals.push(s);
                }
            }
            engines.push(scraped.map(|s| s.engine.to_string()));
        }
        let scrape = EngineScrape {
            sources: sources.len() as u32,
            interval_ms: interval.as_secs_f64() * 1000.0,
            engines,
            signals: signals.into_iter().map(str::to_string).collect(),
        };
        Ok((scrape, notes))
    })
    .join()
    .map_err(|_| "the engine-metrics probe stopped unexpectedly".to_string())?
}

/// Scrapes `url` every `interval` until `stopped` closes, handing each mapped scrape to `sink`
/// stamped with the run's clock when its reply had arrived. A failed scrape leaves a gap:
/// nothing is carried over or interpolated.
pub fn sample_source(
    source: u32,
    url: url::Url,
    interval: Duration,
    clock: Clock,
    stopped: std::sync::mpsc::Receiver<()>,
    sink: std::sync::Arc<dyn Fn(EngineSample) + Send + Sync>,
) {
    let (Ok(rt), Ok(client)) = (
        crate::scrape::runtime("engine-metrics"),
        crate::scrape::client("engine-metrics"),
    ) else {
        return;
    };
    let mut last_preemptions: Option<(f64, f64)> = None;
    crate::scrape::every(interval, &stopped, || {
        let Ok(text) = rt.block_on(crate::scrape::fetch(&client, &url)) else {
            return;
        };
        let t_ms = clock.now_ms();
        let Some(s) = map_exposition(&text) else {
            return;
        };
        // A counter's rate since the previous scrape; a reset (restart) gives none.
        let preemptions_per_s = match (s.preemptions_total, last_preemptions) {
            (Some(now), Some((then, at))) if now >= then && t_ms > at => {
                Some((now - then) / ((t_ms - at) / 1000.0))
            }
            _ => None,
        };
        last_preemptions = s.preemptions_total.map(|p| (p, t_ms));
        sink(EngineSample {
            t_ms,
            source,
            engine: s.engine.to_string(),
            waiting: s.waiting,
            running: s.running,
            kv_cache: s.kv_cache,
            preemptions_per_s,
            queue_time: s.queue_time,
            ttft: s.ttft,
        });
    });
}

/// The scrapers of a run, one thread per source; stopped (and joined) at the end.
pub struct Scrapers {
    stop: Vec<std::sync::mpsc::Sender<()>>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Scrapers {
    pub fn start(
        sources: &[url::Url],
        interval: Duration,
        clock: Clock,
        sink: std::sync::Arc<dyn Fn(EngineSample) + Send + Sync>,
    ) -> Scrapers {
        let mut scrapers = Scrapers {
            stop: Vec::new(),
            threads: Vec::new(),
        };
        for (i, url) in sources.iter().enumerate() {
            let (tx, rx) = std::sync::mpsc::channel();
            let (url, sink) = (url.clone(), sink.clone());
            if let Ok(t) = std::thread::Builder::new()
                .name(format!("tracelab-engine-{i}"))
                .spawn(move || sample_source(i as u32, url, interval, clock, rx, sink))
            {
                scrapers.stop.push(tx);
                scrapers.threads.push(t);
            }
        }
        scrapers
    }

    pub fn stop(self) {
        drop(self.stop);
        for t in self.threads {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real capture, read in place through the test kit.
    fn real(name: &str) -> String {
        tracelab_testkit::read_fixture_text(&format!("servers/{name}"))
    }

    #[test]
    fn vllm_v1_under_load() {
        // vLLM 0.25.1, 128 requests in flight: 64 running, 64 waiting (the `_by_reason` family
        // shares the prefix and is not added in), KV cache 11 %, TTFT counted 664 times.
        let s = map_exposition(&real("vllm_0.25.1_opt125m_tp2_loaded128.metrics.txt")).unwrap();
        assert_eq!(
            (s.engine, s.waiting, s.running),
            ("vllm", Some(64.0), Some(64.0))
        );
        assert_eq!(s.kv_cache, Some(0.11223878211531546));
        assert_eq!(s.preemptions_total, Some(0.0));
        let ttft = s.ttft.clone().unwrap();
        assert_eq!(ttft.count, 664.0);
        assert!(
            ttft.buckets
                .windows(2)
                .all(|w| w[0][0] < w[1][0] && w[0][1] <= w[1][1]),
            "{:?}",
            ttft.buckets
        );
        assert_eq!(s.queue_time.as_ref().unwrap().count, 600.0);
        assert_eq!(
            s.signals(),
            [
                "waiting",
                "running",
                "kv_cache",
                "preemptions_per_s",
                "queue_time",
                "ttft"
            ]
        );
    }

    #[test]
    fn vllm_v0_names_and_a_path_in_a_label() {
        // The V0 engine's KV-cache gauge; the model_name label is a filesystem path with a user
        // id, and no label value is kept at all.
        let text = real("vllm_fork_0.5.2.dev1210_llama2_7b_startup.metrics.txt");
        let s = map_exposition(&text).unwrap();
        assert_eq!(
            (s.waiting, s.running, s.kv_cache),
            (Some(0.0), Some(0.0), Some(0.0))
        );
        let sample = EngineSample {
            t_ms: 1.0,
            source: 0,
            engine: s.engine.into(),
            waiting: s.waiting,
            running: s.running,
            kv_cache: s.kv_cache,
            preemptions_per_s: None,
            queue_time: s.queue_time,
            ttft: s.ttft,
        };
        let line = tracelab_core::write::engine_line(&sample);
        assert!(!line.contains("gpfs") && !line.contains("bsc"), "{line}");
    }

    #[test]
    fn sglang_tgi_and_llamacpp() {
        let s = map_exposition(&real("sglang_docs_llama31_8b_loaded.metrics.txt")).unwrap();
        assert_eq!(
            (s.engine, s.waiting, s.running, s.kv_cache),
            ("sglang", Some(2826.0), Some(162.0), Some(0.28))
        );
        assert_eq!(s.ttft.unwrap().count, 11008.0);
        let t = map_exposition(&real("tgi_3.x_datadog_fixture.metrics.txt")).unwrap();
        assert_eq!(
            (t.engine, t.waiting, t.running, t.kv_cache),
            ("tgi", Some(0.0), Some(0.0), None)
        );
        assert_eq!(t.queue_time.unwrap().count, 109.0);
        for name in [
            "llamacpp_b9383_after_tests.metrics.txt",
            "llamacpp_b10452_idle.metrics.txt",
            "llamacpp_b6283_after_tests.metrics.txt",
        ] {
            let l = map_exposition(&real(name)).unwrap();
            assert_eq!(
                (l.engine, l.waiting, l.running),
                ("llamacpp", Some(0.0), Some(0.0)),
                "{name}"
            );
        }
    }

    #[test]
    fn ranks_beyond_zero_are_not_added_twice_and_unknown_pages_are_none() {
        let text =
            "sglang:num_queue_reqs{tp_rank=\"0\"} 5\nsglang:num_queue_reqs{tp_rank=\"1\"} 5\n";
        assert_eq!(map_exposition(text).unwrap().waiting, Some(5.0));
        let dp = "vllm:num_requests_waiting{engine=\"0\"} 3\nvllm:num_requests_waiting{engine=\"1\"} 4\n";
        assert_eq!(
            map_exposition(dp).unwrap().waiting,
            Some(7.0),
            "data-parallel engines each queue their own"
        );
        assert!(map_exposition("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\n").is_none());
        assert!(
            map_exposition("vllm:kv_cache_usage_perc 7\n")
                .unwrap()
                .kv_cache
                .is_none(),
            "not a share: not kept"
        );
    }

    #[test]
    fn source_urls_are_never_echoed() {
        let err = parse_sources("http://a:8000/metrics,secret-host:8000").unwrap_err();
        assert!(err.contains("number 2") && !err.contains("secret"), "{err}");
        assert_eq!(
            parse_sources("http://a:8000").unwrap()[0].path(),
            "/metrics"
        );
    }
}
