//! The load models side by side: the same server under a closed loop of N clients and under an
//! open loop at the throughput the closed loop reached, each summarised from its trace
//! (latency from the intended start, requests in flight over time).

use super::{Arrival, ArrivalName, Load, Params, SimulateError};
use crate::percentile::{percentile, PercentileMethod};
use crate::trace::Trace;

/// What the load-model panel shows of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSummary {
    /// Every attempt's time from its intended start to its end, in seconds, sorted. For a closed
    /// loop the intended start is the send; for an open loop it is the schedule's slot, so a
    /// request that waited for anything counts that wait.
    pub latency_s: Vec<f64>,
    pub p50_s: Option<f64>,
    pub p95_s: Option<f64>,
    pub max_s: Option<f64>,
    /// Attempts per second between the first start and the last end.
    pub throughput_per_s: Option<f64>,
    /// Requests sent and not yet finished, as steps `(time s, count from then on)`.
    pub in_flight: Vec<(f64, u32)>,
}

/// The percentile method of the panel's P50 and P95 (the lesson's default).
pub const SUMMARY_METHOD: PercentileMethod = PercentileMethod::NearestRank;

pub fn summarize(trace: &Trace) -> LoadSummary {
    let mut latency_s: Vec<f64> = trace
        .attempts
        .iter()
        .filter_map(|a| {
            let start = a.start_ms?;
            let intended = a.intended_start_ms.unwrap_or(start);
            Some((start + a.e2e_ms? - intended) / 1000.0)
        })
        .collect();
    latency_s.sort_by(f64::total_cmp);
    let first = trace
        .attempts
        .iter()
        .filter_map(|a| a.start_ms)
        .fold(f64::INFINITY, f64::min);
    let last = trace
        .attempts
        .iter()
        .filter_map(|a| Some(a.start_ms? + a.e2e_ms?))
        .fold(f64::NEG_INFINITY, f64::max);
    let throughput_per_s =
        (last > first).then(|| latency_s.len() as f64 / ((last - first) / 1000.0));
    LoadSummary {
        p50_s: percentile(&latency_s, 50.0, SUMMARY_METHOD),
        p95_s: percentile(&latency_s, 95.0, SUMMARY_METHOD),
        max_s: latency_s.last().copied(),
        throughput_per_s,
        in_flight: in_flight(trace),
        latency_s,
    }
}

/// Requests in flight (sent, not finished) over time, from the client's clock. An end and a
/// start at the same instant: the end counts first.
pub fn in_flight(trace: &Trace) -> Vec<(f64, u32)> {
    let mut edges: Vec<(f64, i32)> = Vec::new();
    for a in &trace.attempts {
        if let (Some(start), Some(e2e)) = (a.start_ms, a.e2e_ms) {
            edges.push((start / 1000.0, 1));
            edges.push(((start + e2e) / 1000.0, -1));
        }
    }
    edges.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    let mut steps: Vec<(f64, u32)> = Vec::new();
    let mut n: i32 = 0;
    for (t, d) in edges {
        n += d;
        match steps.last_mut() {
            Some(last) if last.0 == t => last.1 = n as u32,
            _ => steps.push((t, n as u32)),
        }
    }
    steps
}

/// The same server under both load models.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadComparison {
    /// The open loop's rate: the closed loop's throughput without the stall.
    pub rate_per_s: f64,
    pub closed: Trace,
    pub open: Trace,
    pub closed_summary: LoadSummary,
    pub open_summary: LoadSummary,
}

impl LoadComparison {
    /// Whether the closed loop's P95 is clearly the calmer of the two (under half the open
    /// loop's): its clients stop sending while the server is stopped, so fewer requests meet a
    /// stall. With many clients and no think time the closed loop queues on its own and the two
    /// come out alike; a page must not claim the closed loop hides anything then.
    pub fn closed_p95_calmer(&self) -> bool {
        matches!((self.closed_summary.p95_s, self.open_summary.p95_s), (Some(c), Some(o)) if c < 0.5 * o)
    }
}

/// Runs `closed` (whose load must be a closed loop), then an open loop at the throughput the
/// closed loop reached without the stall, with the same server, service, seed and stall.
pub fn compare_loads(
    closed: &Params,
    arrival: Arrival,
    burstiness: f64,
) -> Result<LoadComparison, SimulateError> {
    if !matches!(closed.load, Load::Closed { .. }) {
        return Err(SimulateError::new(
            "closed",
            "the comparison starts from a closed loop",
        ));
    }
    let calm = super::simulate(&Params {
        stall: None,
        ..closed.clone()
    })?;
    let rate_per_s = summarize(&calm).throughput_per_s.ok_or_else(|| {
        SimulateError::new(
            "closed",
            "the closed loop finished in no time, so it has no throughput to match",
        )
    })?;
    let closed_trace = if closed.stall.is_some() {
        super::simulate(closed)?
    } else {
        calm
    };
    let open = Params {
        load: Load::Open {
            rate_per_s,
            arrival: ArrivalName::from(arrival),
            burstiness,
        },
        ..closed.clone()
    };
    let open_trace = super::simulate(&open)?;
    Ok(LoadComparison {
        rate_per_s,
        closed_summary: summarize(&closed_trace),
        open_summary: summarize(&open_trace),
        closed: closed_trace,
        open: open_trace,
    })
}

/// Counts of `values` in `bins` equal bins over `[0, max)`; a value at or above `max` goes in the
/// last bin, so two runs drawn on one scale keep every request.
pub fn histogram(values: &[f64], bins: usize, max: f64) -> Vec<u32> {
    let mut counts = vec![0u32; bins];
    if bins == 0 || max.is_nan() || max <= 0.0 {
        return counts;
    }
    for &v in values {
        let i = ((v / max) * bins as f64).floor();
        let i = if i.is_finite() && i > 0.0 {
            (i as usize).min(bins - 1)
        } else {
            0
        };
        counts[i] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_keeps_every_value() {
        assert_eq!(
            histogram(&[0.0, 0.5, 0.99, 1.0, 3.0, 10.0], 4, 4.0),
            [3, 1, 0, 2]
        );
        assert_eq!(histogram(&[1.0], 0, 4.0), Vec::<u32>::new());
        assert_eq!(histogram(&[1.0], 2, 0.0), [0, 0]);
    }
}
