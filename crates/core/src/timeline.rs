//! What the lab's charts place, so a chart never ranks or counts for itself: each TTFT of the
//! percentile's sample with the row it came from and that row's verdict (the index's population
//! rules), and how many requests were in flight over the run's clock.

use crate::settings::{MissingTtft, Settings};
use crate::trace::Attempt;
use crate::verdict::{effective_ttft_ms, is_counted, verdict, Verdict};

/// One TTFT of the sample the percentiles rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TtftPoint {
    pub ttft_ms: f64,
    /// The row in the attempts given.
    pub row: usize,
    pub verdict: Verdict,
    /// A missing TTFT put in the sample as 0 (the wrong "missing as 0" choice).
    pub zero_for_missing: bool,
}

/// The TTFT sample, sorted (ties by row), each point with its row and verdict. The same
/// attempts as [`crate::Index`]'s sample: counted attempts, successes only unless missing TTFTs
/// are (wrongly) counted as 0.
pub fn ttft_points(attempts: &[Attempt], settings: &Settings) -> Vec<TtftPoint> {
    let population = settings.population;
    let mut out: Vec<TtftPoint> = attempts
        .iter()
        .enumerate()
        .filter(|(_, a)| is_counted(a, &population))
        .filter(|(_, a)| {
            a.outcome.is_success() || population.missing_ttft == MissingTtft::TreatAsZero
        })
        .filter_map(|(row, a)| {
            let ttft_ms = effective_ttft_ms(a, &population)?;
            Some(TtftPoint {
                ttft_ms,
                row,
                verdict: verdict(a, settings),
                zero_for_missing: a.ttft_under(population.first_token).is_none(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.ttft_ms.total_cmp(&b.ttft_ms).then(a.row.cmp(&b.row)));
    out
}

/// Requests in flight over the run's clock, as steps `(t_ms, count from t on)`, from each
/// attempt's start to its end (its last known moment). Attempts without a clock position are
/// left out. Starts sort before ends at the same instant, so back-to-back requests count once.
pub fn in_flight(attempts: &[Attempt]) -> Vec<(f64, usize)> {
    let mut edges: Vec<(f64, i8)> = Vec::with_capacity(attempts.len() * 2);
    for a in attempts {
        let Some(start) = a.start_ms else { continue };
        let length = a
            .e2e_ms
            .or(a.events.last().map(|e| e.at_ms))
            .or(a.ttft_ms)
            .unwrap_or(0.0);
        edges.push((start, 1));
        edges.push((start + length, -1));
    }
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut steps: Vec<(f64, usize)> = Vec::new();
    let mut n: i64 = 0;
    for (t, d) in edges {
        n += i64::from(d);
        let count = n.max(0) as usize;
        match steps.last_mut() {
            Some(last) if last.0 == t => last.1 = count,
            _ => steps.push((t, count)),
        }
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Outcome, Quality};

    fn at(id: &str, start: f64, e2e: f64) -> Attempt {
        let mut a = Attempt::new(id, Outcome::Success, Some(e2e / 2.0), Quality::Pass);
        a.start_ms = Some(start);
        a.e2e_ms = Some(e2e);
        a
    }

    #[test]
    fn in_flight_counts_overlaps_and_back_to_back_once() {
        let steps = in_flight(&[
            at("a", 0.0, 100.0),
            at("b", 50.0, 100.0),
            at("c", 150.0, 10.0),
        ]);
        assert_eq!(
            steps,
            vec![(0.0, 1), (50.0, 2), (100.0, 1), (150.0, 1), (160.0, 0)]
        );
    }

    #[test]
    fn ttft_points_follow_the_population() {
        let mut s = Settings::default();
        let failed = Attempt::new("f", Outcome::ConnectError, None, Quality::NotEvaluated);
        let ok = Attempt::new("o", Outcome::Success, Some(300.0), Quality::Pass);
        assert_eq!(ttft_points(&[failed.clone(), ok.clone()], &s).len(), 1);
        s.population.missing_ttft = MissingTtft::TreatAsZero;
        let p = ttft_points(&[ok, failed], &s);
        assert_eq!((p[0].row, p[0].zero_for_missing, p[1].row), (1, true, 0));
    }
}
