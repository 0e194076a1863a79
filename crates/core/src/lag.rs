//! Client lag in open-loop runs: how late the client sent each request against its schedule
//! (`start_ms − intended_start_ms`). An open loop's promise is that requests leave on schedule
//! whatever the server does; when the client itself falls behind, the arrival rate the server
//! saw was not the one asked for, and the run measured the client, not the server.

use crate::format::{integer, trim_num};
use crate::percentile::{percentile, PercentileMethod};
use crate::text::Lang;
use crate::trace::{Attempt, Header, Phase, Trace};

/// Lag is a warning when its P95 exceeds this share of the schedule's mean gap (`1/rate`) …
pub const LAG_WARN_SHARE_OF_GAP: f64 = 0.1;
/// … and this floor, so a microsecond of timer jitter at a very high rate is not one.
pub const LAG_WARN_FLOOR_MS: f64 = 1.0;

/// The lag figures of one open-loop run (measured attempts with both times).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientLag {
    pub n: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
    /// The schedule's mean gap, `1000 / rate_per_s`, when the header gives the rate.
    pub mean_gap_ms: Option<f64>,
    /// P95 lag above which the run is flagged.
    pub limit_ms: f64,
    /// The client could not keep its schedule.
    pub behind: bool,
}

pub const LAG_METHOD: PercentileMethod = PercentileMethod::NearestRank;

/// `None` unless the trace is an open-loop run (`constant` or `poisson`) with intended starts.
pub fn client_lag(trace: &Trace) -> Option<ClientLag> {
    if !is_open_loop(&trace.header) {
        return None;
    }
    client_lag_of(
        &trace.header,
        trace.attempts.iter().filter_map(lag_ms).collect(),
    )
}

/// Whether the header describes an open loop, the only runs with a client lag: a rate
/// (`constant`, `poisson`) or a workload file's own times (`workload`).
pub fn is_open_loop(header: &Header) -> bool {
    matches!(
        header.conditions.arrival.as_deref(),
        Some("constant" | "poisson" | "workload")
    )
}

/// One measured attempt's lag (actual − intended start), when it has both times.
pub fn lag_ms(a: &Attempt) -> Option<f64> {
    if a.phase != Phase::Measure {
        return None;
    }
    Some(a.start_ms? - a.intended_start_ms?)
}

/// The lag figures from the lags of the measured attempts ([`lag_ms`], in any order), for a
/// trace read as a stream.
pub fn client_lag_of(header: &Header, mut lags: Vec<f64>) -> Option<ClientLag> {
    if !is_open_loop(header) || lags.is_empty() {
        return None;
    }
    lags.sort_unstable_by(f64::total_cmp);
    let mean_gap_ms = header
        .conditions
        .rate_per_s
        .filter(|r| *r > 0.0)
        .map(|r| 1000.0 / r);
    let limit_ms = mean_gap_ms
        .map(|g| g * LAG_WARN_SHARE_OF_GAP)
        .unwrap_or(0.0)
        .max(LAG_WARN_FLOOR_MS);
    let p95_ms = percentile(&lags, 95.0, LAG_METHOD)?;
    Some(ClientLag {
        n: lags.len(),
        p50_ms: percentile(&lags, 50.0, LAG_METHOD)?,
        p95_ms,
        max_ms: *lags.last()?,
        mean_gap_ms,
        limit_ms,
        behind: p95_ms > limit_ms,
    })
}

fn ms(v: f64) -> String {
    trim_num((v * 1000.0).round() / 1000.0)
}

impl ClientLag {
    /// The limit is the floor, not 10 % of the mean gap (a gap under 10 ms): the warning must
    /// not call the floor "10 %".
    pub fn limit_is_floor(&self) -> bool {
        self.mean_gap_ms
            .is_none_or(|g| g * LAG_WARN_SHARE_OF_GAP < LAG_WARN_FLOOR_MS)
    }

    /// The card's line, and a second one when the client fell behind.
    pub fn card_lines(&self, lang: Lang) -> Vec<String> {
        let zh = lang == Lang::Zh;
        let mut lines = vec![if zh {
            format!(
                "客户端滞后（实际开始 − 计划开始，n = {}，{}）：P50 {} ms · P95 {} ms · 最大 {} ms",
                integer(self.n as u64),
                LAG_METHOD.name().zh,
                ms(self.p50_ms),
                ms(self.p95_ms),
                ms(self.max_ms)
            )
        } else {
            format!(
                "Client lag (actual − intended start, n = {}, {}): P50 {} ms · P95 {} ms · max {} ms",
                integer(self.n as u64),
                LAG_METHOD.code(),
                ms(self.p50_ms),
                ms(self.p95_ms),
                ms(self.max_ms)
            )
        }];
        if self.behind {
            let gap = self.mean_gap_ms.map(ms);
            lines.push(match (zh, gap) {
                (true, Some(g)) if !self.limit_is_floor() => format!(
                    "⚠ 客户端没能按计划发送：P95 滞后 {} ms，超过平均间隔 {g} ms 的 10 %（{} ms）。服务器实际收到的到达率不是设定的那个，这次运行测的是客户端，不是服务器。",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
                (true, Some(g)) => format!(
                    "⚠ 客户端没能按计划发送：P95 滞后 {} ms，超过 {} ms 的下限（平均间隔 {g} ms 的 10 % 更小，所以用下限）。服务器实际收到的到达率不是设定的那个，这次运行测的是客户端，不是服务器。",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
                (true, None) => format!(
                    "⚠ 客户端没能按计划发送：P95 滞后 {} ms，超过 {} ms。这次运行测的是客户端，不是服务器。",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
                (false, Some(g)) if !self.limit_is_floor() => format!(
                    "⚠ The client could not keep its schedule: P95 lag {} ms is over 10 % of the {g} ms mean gap ({} ms). The server did not see the arrival rate that was asked for: this run measured the client, not the server.",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
                (false, Some(g)) => format!(
                    "⚠ The client could not keep its schedule: P95 lag {} ms is over the {} ms floor (10 % of the {g} ms mean gap is less, so the floor applies). The server did not see the arrival rate that was asked for: this run measured the client, not the server.",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
                (false, None) => format!(
                    "⚠ The client could not keep its schedule: P95 lag {} ms is over {} ms. This run measured the client, not the server.",
                    ms(self.p95_ms),
                    ms(self.limit_ms)
                ),
            });
        }
        lines
    }
}
