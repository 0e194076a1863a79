//! A coverage experiment, where the truth is known: many runs of one simulated server (M/M/c,
//! μ = 1/s, the first-token share at 0 so a request's TTFT is its wait in the queue, every
//! answer passing), each run's 95 % intervals of the joint rate and of P95 TTFT set against the
//! truth Erlang C gives, once taking the attempts as independent draws and once on the
//! effective sample the series in start order is worth (`compare::dependence`). A 95 % method
//! holds the truth in about 95 of 100 runs; the share that does is its coverage. The load-model
//! page runs it for a learner, and the core's coverage study checks the method with it.

use serde::Serialize;

use crate::compare::stats::{quantile_interval, wilson};
use crate::compare::{Bounds, Intervals};
use crate::index::Index;
use crate::metrics::Metrics;
use crate::settings::Settings;
use crate::simulate::theory::erlang_c;
use crate::simulate::{simulate, ArrivalName, Load, Params, Service, SimulateError};
use crate::trace::{Phase, Quality};

/// What a learner picks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Setup {
    pub slots: u32,
    /// Arrivals per second (μ = 1/s per slot, so the server is λ / c busy).
    pub rate_per_s: f64,
    /// The TTFT threshold of the joint rate, s.
    pub threshold_s: f64,
    pub runs: u32,
    /// Measured requests per run, after as many again / 10 of warm-up (the simulator starts
    /// empty; the truth is the steady state).
    pub requests: u32,
    pub seed: u64,
}

/// The most runs and requests the experiment takes (it runs in a browser tab).
pub const MAX_RUNS: u32 = 1_000;
pub const MAX_REQUESTS: u32 = 20_000;

/// The truth of one setup (Erlang C).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Truth {
    /// P(W ≤ threshold).
    pub joint_rate: f64,
    /// The 95th percentile of W, s (0 while fewer than 5 % wait at all).
    pub ttft_p95_s: f64,
    /// λ / (cμ).
    pub busy: f64,
}

impl Setup {
    pub fn truth(&self) -> Option<Truth> {
        let c = self.slots as f64;
        let wait = erlang_c(self.slots, self.rate_per_s, 1.0)?;
        let decay = c - self.rate_per_s;
        let joint_rate = 1.0 - wait * (-decay * self.threshold_s).exp();
        let ttft_p95_s = if wait <= 0.05 {
            0.0
        } else {
            (wait / 0.05).ln() / decay
        };
        Some(Truth {
            joint_rate,
            ttft_p95_s,
            busy: self.rate_per_s / c,
        })
    }

    /// Refuses what cannot run or has no steady state, naming the field.
    pub fn check(&self) -> Result<Truth, SimulateError> {
        if !(1..=MAX_RUNS).contains(&self.runs) {
            return Err(SimulateError::new(
                "runs",
                format!("must be between 1 and {MAX_RUNS}, got {}", self.runs),
            ));
        }
        if !(200..=MAX_REQUESTS).contains(&self.requests) {
            return Err(SimulateError::new(
                "requests",
                format!(
                    "must be between 200 and {MAX_REQUESTS}, got {}",
                    self.requests
                ),
            ));
        }
        if !(self.threshold_s.is_finite() && self.threshold_s > 0.0) {
            return Err(SimulateError::new(
                "threshold",
                format!("must be above 0 s, got {}", self.threshold_s),
            ));
        }
        if !(self.rate_per_s.is_finite() && self.rate_per_s > 0.0) {
            return Err(SimulateError::new(
                "rate",
                format!("must be above 0, got {}", self.rate_per_s),
            ));
        }
        self.truth().ok_or_else(|| {
            SimulateError::new(
                "rate",
                format!("{} /s on {} slots of 1 request/s each never settles: the queue grows without end (keep the rate below {})", self.rate_per_s, self.slots, self.slots),
            )
        })
    }
}

/// One run's two intervals of one figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunIntervals {
    pub value: Option<f64>,
    /// Taking the attempts as independent draws (Wilson, order statistics).
    pub independent: Bounds,
    /// On the effective sample (the card's interval).
    pub honest: Bounds,
    /// How many independent samples the run was worth for this figure.
    pub effective_n: f64,
}

/// The experiment's answer for one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureCoverage {
    pub truth: f64,
    pub runs: Vec<RunIntervals>,
    /// Runs whose interval holds the truth, of all runs.
    pub independent_covered: usize,
    pub honest_covered: usize,
}

impl FigureCoverage {
    fn new(truth: f64, runs: Vec<RunIntervals>) -> FigureCoverage {
        let independent_covered = runs
            .iter()
            .filter(|r| r.independent.contains(truth))
            .count();
        let honest_covered = runs.iter().filter(|r| r.honest.contains(truth)).count();
        FigureCoverage {
            truth,
            runs,
            independent_covered,
            honest_covered,
        }
    }

    /// The share of runs whose interval, taken as independent draws, holds the truth.
    pub fn independent_share(&self) -> f64 {
        self.independent_covered as f64 / self.runs.len().max(1) as f64
    }

    /// The share of runs whose interval on the effective sample holds the truth.
    pub fn honest_share(&self) -> f64 {
        self.honest_covered as f64 / self.runs.len().max(1) as f64
    }

    /// The mean effective sample over the runs.
    pub fn mean_effective_n(&self) -> f64 {
        self.runs.iter().map(|r| r.effective_n).sum::<f64>() / self.runs.len().max(1) as f64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    pub setup: Setup,
    pub truth: Truth,
    pub joint_rate: FigureCoverage,
    pub ttft_p95: FigureCoverage,
}

/// One run of `setup` with its `i`th seed: warm-up marked, every answer passing.
pub fn simulated_run(setup: &Setup, i: u32) -> Result<crate::trace::Trace, SimulateError> {
    let warmup = setup.requests / 10;
    let p = Params {
        slots: setup.slots,
        service: Service::Exponential { mean_s: 1.0 },
        first_token_share: 0.0,
        load: Load::Open {
            rate_per_s: setup.rate_per_s,
            arrival: ArrivalName::Poisson,
            burstiness: 1.0,
        },
        requests: setup.requests + warmup,
        seed: setup.seed.wrapping_add(u64::from(i)),
        stall: None,
    };
    let mut trace = simulate(&p)?;
    // The simulator does not judge answers; here every answer passes, so the joint rate is the
    // share served within the threshold.
    trace
        .attempts
        .iter_mut()
        .for_each(|a| a.quality = Quality::Pass);
    let mut by_start: Vec<usize> = (0..trace.attempts.len()).collect();
    by_start.sort_by(|&a, &b| {
        trace.attempts[a]
            .start_ms
            .unwrap_or(0.0)
            .total_cmp(&trace.attempts[b].start_ms.unwrap_or(0.0))
    });
    for &i in by_start.iter().take(warmup as usize) {
        trace.attempts[i].phase = Phase::Warmup;
    }
    Ok(trace)
}

/// Runs the experiment: `setup.runs` simulated runs, each judged both ways.
pub fn run(setup: Setup) -> Result<Coverage, SimulateError> {
    let truth = setup.check()?;
    let s = Settings {
        ttft_threshold_s: setup.threshold_s,
        ..Settings::default()
    };
    let (mut joint, mut p95) = (Vec::new(), Vec::new());
    for i in 0..setup.runs {
        let trace = simulated_run(&setup, i)?;
        let ix = Index::build(&trace.attempts, s.population);
        let m = Metrics::compute(&ix, &s);
        let iv = Intervals::compute(&ix, &s, &m);
        let eff = |key: &str| {
            iv.get(key)
                .and_then(|i| i.dependence.as_ref())
                .map_or(0.0, |d| d.effective_n)
        };
        let none = Bounds { lo: None, hi: None };
        joint.push(RunIntervals {
            value: m.joint_rate.value,
            independent: wilson(m.qualified as u64, m.attempts as u64).unwrap_or(none),
            honest: iv.get(&m.joint_rate.key).map_or(none, |i| i.bounds),
            effective_n: eff(&m.joint_rate.key),
        });
        p95.push(RunIntervals {
            value: m.ttft_p95.value,
            independent: quantile_interval(ix.ttft_sample_ms(), 0.95).scale(1.0 / 1000.0),
            honest: iv.get(&m.ttft_p95.key).map_or(none, |i| i.bounds),
            effective_n: eff(&m.ttft_p95.key),
        });
    }
    Ok(Coverage {
        setup,
        truth,
        joint_rate: FigureCoverage::new(truth.joint_rate, joint),
        ttft_p95: FigureCoverage::new(truth.ttft_p95_s, p95),
    })
}

/// The rate at which P(W > threshold) = `late` on `slots` slots (the critical load of a target
/// "share within the threshold ≥ 1 − late"), by bisection.
pub fn critical_rate(slots: u32, threshold_s: f64, late: f64) -> f64 {
    let c = slots as f64;
    let p_late = |lambda: f64| {
        erlang_c(slots, lambda, 1.0).map_or(1.0, |pc| pc * (-(c - lambda) * threshold_s).exp())
    };
    let (mut lo, mut hi) = (1e-9, c - 1e-9);
    for _ in 0..80 {
        let mid = (lo + hi) / 2.0;
        if p_late(mid) > late {
            hi = mid
        } else {
            lo = mid
        }
    }
    lo
}
