//! Open-loop arrival schedules: when each request is meant to start, fixed before the run so a
//! slow response can never delay the next send (no coordinated omission). The recorder and the
//! simulation use the same schedule.
//!
//! `poisson` with burstiness `b` draws gaps from a gamma distribution of shape `b` and scale
//! `1/(rate·b)`, so the mean gap is `1/rate` whatever `b` is, as vLLM's `bench serve`
//! (`get_request`: `np.random.gamma(shape=burstiness, scale=1/(rate·burstiness))`): `b = 1` is a
//! Poisson process, `b < 1` burstier, `b > 1` steadier. Two differences from vLLM, on purpose:
//! our first request leaves at 0 (vLLM waits one gap first), and we do not rescale the whole
//! schedule so the last arrival lands at `K/rate` (newer vLLM does), because that rescaling makes
//! the gaps depend on each other and the run no longer a Poisson process.

use super::rng::Rng;

/// How an open-loop run spaces its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Exactly `1/rate` apart.
    Constant,
    /// Random gaps with mean `1/rate` (gamma-distributed under a burstiness other than 1).
    Poisson,
}

impl Arrival {
    /// The name written in a trace's `conditions.arrival`.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson => "poisson",
        }
    }

    pub fn from_name(name: &str) -> Option<Arrival> {
        match name {
            "constant" => Some(Arrival::Constant),
            "poisson" => Some(Arrival::Poisson),
            _ => None,
        }
    }
}

/// Intended start offsets in ms from the schedule's origin, in order; the first is 0.
pub struct Schedule {
    arrival: Arrival,
    rate_per_ms: f64,
    burstiness: f64,
    rng: Rng,
    next_ms: f64,
    k: u64,
}

impl Schedule {
    pub fn new(arrival: Arrival, rate_per_s: f64, burstiness: f64, seed: u64) -> Schedule {
        Schedule {
            arrival,
            rate_per_ms: rate_per_s / 1000.0,
            burstiness,
            rng: Rng::new(seed),
            next_ms: 0.0,
            k: 0,
        }
    }
}

impl Iterator for Schedule {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        let at = match self.arrival {
            // k / rate rather than a running sum, so a long run does not drift.
            Arrival::Constant => self.k as f64 / self.rate_per_ms,
            Arrival::Poisson => {
                let at = self.next_ms;
                let mean = 1.0 / self.rate_per_ms;
                self.next_ms += self.rng.gamma(self.burstiness) * mean / self.burstiness;
                at
            }
        };
        self.k += 1;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(s: Schedule, n: usize) -> Vec<f64> {
        let t: Vec<f64> = s.take(n + 1).collect();
        t.windows(2).map(|w| w[1] - w[0]).collect()
    }

    fn mean_cv(g: &[f64]) -> (f64, f64) {
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / g.len() as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn constant_is_exact_and_starts_at_zero() {
        let t: Vec<f64> = Schedule::new(Arrival::Constant, 500.0, 1.0, 0)
            .take(4)
            .collect();
        assert_eq!(t, [0.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn poisson_has_the_asked_mean_and_is_reproducible() {
        let g = gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 7), 20_000);
        let (mean, cv) = mean_cv(&g);
        assert!((mean - 10.0).abs() < 0.3, "mean {mean}");
        assert!(
            (cv - 1.0).abs() < 0.05,
            "exponential gaps have cv 1, got {cv}"
        );
        let again = gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 7), 20_000);
        assert_eq!(g, again);
        assert_ne!(
            g,
            gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 8), 20_000)
        );
    }

    #[test]
    fn burstiness_changes_spread_not_mean() {
        // Gamma(b) gaps have cv 1/√b.
        for (b, cv_expected) in [(0.25, 2.0), (4.0, 0.5)] {
            let g = gaps(Schedule::new(Arrival::Poisson, 100.0, b, 3), 40_000);
            let (mean, cv) = mean_cv(&g);
            assert!((mean - 10.0).abs() < 0.5, "b {b}: mean {mean}");
            assert!(
                (cv - cv_expected).abs() < 0.15,
                "b {b}: cv {cv}, expected {cv_expected}"
            );
        }
    }
}
