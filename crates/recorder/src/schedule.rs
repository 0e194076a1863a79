//! Open-loop arrival schedules for `record` and `simulate`: the command-line choice, and the
//! core's schedule behind it (`tracelab_core::simulate::arrival`, shared with the simulation so
//! a simulated run and a recorded one space their requests the same way).

use tracelab_core::simulate::arrival as core;

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
        self.core().name()
    }

    pub fn core(self) -> core::Arrival {
        match self {
            Arrival::Constant => core::Arrival::Constant,
            Arrival::Poisson => core::Arrival::Poisson,
        }
    }
}

/// Intended start offsets in ms from the measured phase's origin, in order.
pub struct Schedule(core::Schedule);

impl Schedule {
    pub fn new(arrival: Arrival, rate_per_s: f64, burstiness: f64, seed: u64) -> Schedule {
        Schedule(core::Schedule::new(
            arrival.core(),
            rate_per_s,
            burstiness,
            seed,
        ))
    }
}

impl Iterator for Schedule {
    type Item = f64;

    fn next(&mut self) -> Option<f64> {
        self.0.next()
    }
}
