//! Open-loop arrival schedules: when each request is meant to start, fixed before the run so a
//! slow response can never delay the next send (no coordinated omission).
//!
//! `poisson` with burstiness `b` draws gaps from a gamma distribution of shape `b` and mean
//! `1/rate` (as vLLM's `--burstiness`): `b = 1` is a Poisson process, `b < 1` burstier,
//! `b > 1` steadier. A seeded generator makes the schedule reproducible.

/// How an open-loop run spaces its requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Arrival {
    /// Exactly `1/rate` apart.
    Constant,
    /// Random gaps with mean `1/rate` (gamma-distributed under `--burstiness`).
    Poisson,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson => "poisson",
        }
    }
}

/// Intended start offsets in ms from the measured phase's origin, in order.
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
        Schedule { arrival, rate_per_ms: rate_per_s / 1000.0, burstiness, rng: Rng::new(seed), next_ms: 0.0, k: 0 }
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

/// xoshiro256** seeded through splitmix64: small, fast and the same on every platform.
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut split = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng { s: [split(), split(), split(), split()] }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in (0, 1): never 0, so `ln` is finite.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang; shape < 1 through the boost `G(a+1)·U^(1/a)`.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.uniform();
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        if shape == 1.0 {
            return -self.uniform().ln();
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
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
        let t: Vec<f64> = Schedule::new(Arrival::Constant, 500.0, 1.0, 0).take(4).collect();
        assert_eq!(t, [0.0, 2.0, 4.0, 6.0]);
    }

    #[test]
    fn poisson_has_the_asked_mean_and_is_reproducible() {
        let g = gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 7), 20_000);
        let (mean, cv) = mean_cv(&g);
        assert!((mean - 10.0).abs() < 0.3, "mean {mean}");
        assert!((cv - 1.0).abs() < 0.05, "exponential gaps have cv 1, got {cv}");
        let again = gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 7), 20_000);
        assert_eq!(g, again);
        assert_ne!(g, gaps(Schedule::new(Arrival::Poisson, 100.0, 1.0, 8), 20_000));
    }

    #[test]
    fn burstiness_changes_spread_not_mean() {
        for (b, cv_expected) in [(0.25, 2.0), (4.0, 0.5)] {
            let g = gaps(Schedule::new(Arrival::Poisson, 100.0, b, 3), 40_000);
            let (mean, cv) = mean_cv(&g);
            assert!((mean - 10.0).abs() < 0.5, "b {b}: mean {mean}");
            assert!((cv - cv_expected).abs() < 0.15, "b {b}: cv {cv}, expected {cv_expected}");
        }
    }
}
