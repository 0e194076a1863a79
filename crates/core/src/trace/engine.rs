//! A serving engine's own signals (its queue, its running batch, its KV cache, preemptions,
//! and its own queue-time and TTFT histograms), scraped from its Prometheus endpoint by
//! `tracelab record --server-metrics` on the recorder's clock. The time of each scrape is the
//! recorder's, so nothing is subtracted across two machines' clocks.

use serde::{Deserialize, Serialize};

/// One scrape of one engine endpoint (record kind `engine`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineSample {
    /// When the scrape's reply arrived, on the run's clock (ms from its origin).
    pub t_ms: f64,
    /// Which `--server-metrics` endpoint (its position, from 0): URLs are never written.
    #[serde(default)]
    pub source: u32,
    /// The engine the metric names belong to: `vllm`, `sglang`, `tgi` or `llamacpp`.
    pub engine: String,
    /// Requests waiting in the engine's queue (summed over its engines / data-parallel ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<f64>,
    /// Requests the engine is running (in its batch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<f64>,
    /// KV-cache usage, a share from 0 to 1 (mean over the engine's label sets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_cache: Option<f64>,
    /// Preemptions per second since the previous scrape (a counter's rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptions_per_s: Option<f64>,
    /// The engine's own queue-time histogram, cumulative since the engine started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time: Option<EngineHistogram>,
    /// The engine's own time-to-first-token histogram, cumulative since the engine started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft: Option<EngineHistogram>,
}

/// A Prometheus histogram as scraped: cumulative counts since the engine started. The run's
/// own part is the difference between two scrapes.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EngineHistogram {
    pub count: f64,
    pub sum_s: f64,
    /// `[upper bound in seconds, cumulative count]`, in increasing bound; the `+Inf` bucket is
    /// `count`.
    #[serde(default)]
    pub buckets: Vec<[f64; 2]>,
}

impl EngineHistogram {
    /// `self − earlier` (a counter reset, e.g. an engine restart, gives None).
    pub fn since(&self, earlier: &EngineHistogram) -> Option<EngineHistogram> {
        if self.count < earlier.count || self.buckets.len() != earlier.buckets.len() {
            return None;
        }
        let buckets = self
            .buckets
            .iter()
            .zip(&earlier.buckets)
            .map(|(now, then)| {
                (now[0] == then[0] && now[1] >= then[1]).then_some([now[0], now[1] - then[1]])
            })
            .collect::<Option<Vec<_>>>()?;
        Some(EngineHistogram {
            count: self.count - earlier.count,
            sum_s: self.sum_s - earlier.sum_s,
            buckets,
        })
    }

    /// The bucket holding the `p`-th percentile (nearest rank): `(lower, upper)` bounds in
    /// seconds (upper `None`: beyond the last bound). A histogram gives an interval, not a value.
    pub fn percentile_bounds(&self, p: f64) -> Option<(f64, Option<f64>)> {
        if self.count < 1.0 {
            return None;
        }
        let rank = (p / 100.0 * self.count).ceil().max(1.0);
        let mut lower = 0.0;
        for [le, cumulative] in &self.buckets {
            if *cumulative >= rank {
                return Some((lower, Some(*le)));
            }
            lower = *le;
        }
        Some((lower, None))
    }
}

/// What `--server-metrics` scraped, in the header (`engine_metrics`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct EngineScrape {
    /// Endpoints scraped (named 0, 1, … by position; the URLs are not written).
    pub sources: u32,
    pub interval_ms: f64,
    /// The engine recognised at each source (`null` where its metrics named none we know).
    pub engines: Vec<Option<String>>,
    /// The common signals found at any source: `waiting`, `running`, `kv_cache`,
    /// `preemptions_per_s`, `queue_time`, `ttft`.
    pub signals: Vec<String>,
}
