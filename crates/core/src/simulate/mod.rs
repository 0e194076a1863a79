//! A deterministic discrete-event simulation of a server with a fixed number of concurrent
//! slots, fed by a closed loop (N clients, optional think time) or an open loop (a rate,
//! constant or Poisson with burstiness), with an optional stall. Its output is a trace in
//! format v1, marked as simulated in its header, so every view of a trace works on it unchanged.
//!
//! It exists to make the load model visible: a closed loop slows its own arrivals when the
//! server slows, so its percentiles hide a stall (coordinated omission); an open loop does not.
//! The same seed always gives the same trace, on every platform (our own [`Rng`]).

pub mod arrival;
mod engine;
mod load;
pub mod rng;
pub mod session;
pub mod theory;

use crate::trace::{HeaderDefaults, Phase, Quality, StreamEvent, Trace};

pub use crate::trace::simulation::{
    ArrivalName, Load, ServiceRecord, SessionJitter, SessionsRecord, Simulation, SimulationRecord,
    Stall, TokenCost,
};

pub use arrival::{Arrival, Schedule};
pub use engine::{simulate, simulate_at, simulate_listed};
pub use load::{
    compare_loads, histogram, in_flight, summarize, LoadComparison, LoadSummary, SUMMARY_METHOD,
};
pub use rng::Rng;

/// More requests than this are refused: the lab simulates in the page.
pub const MAX_REQUESTS: u32 = 1_000_000;

/// What went wrong with the simulation's parameters: which one, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulateError {
    /// The parameter at fault, named as the command-line flag without `--` (`slots`, `service`, …).
    pub field: String,
    pub message: String,
}

impl SimulateError {
    pub fn new(field: &str, message: impl Into<String>) -> SimulateError {
        SimulateError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SimulateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SimulateError {}

/// The time one request occupies a slot.
#[derive(Debug, Clone, PartialEq)]
pub enum Service {
    /// Always `s` seconds.
    Fixed { s: f64 },
    /// Exponentially distributed with mean `mean_s` seconds (the M in M/M/c).
    Exponential { mean_s: f64 },
    /// Drawn (with replacement) from a trace's measured successes: each keeps its own time to
    /// first token, streaming time, stream events, token counts and quality.
    Empirical(Empirical),
}

/// `--service` as written: `exponential:MEAN_S`, `fixed:S` or `trace:FILE` (the file is read by
/// the caller, which builds [`Empirical`] from it).
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceSpec {
    Fixed(f64),
    Exponential(f64),
    Trace(String),
}

impl ServiceSpec {
    pub fn parse(spec: &str) -> Result<ServiceSpec, SimulateError> {
        let (kind, value) = spec.split_once(':').ok_or_else(|| {
            SimulateError::new(
                "service",
                format!("`{spec}` is not one of exponential:MEAN_S, fixed:S, trace:FILE"),
            )
        })?;
        let seconds = |v: &str| -> Result<f64, SimulateError> {
            match v.trim().parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
                _ => Err(SimulateError::new(
                    "service",
                    format!("`{v}` in `{spec}` must be a number of seconds above 0"),
                )),
            }
        };
        match kind {
            "exponential" => Ok(ServiceSpec::Exponential(seconds(value)?)),
            "fixed" => Ok(ServiceSpec::Fixed(seconds(value)?)),
            "trace" if !value.is_empty() => Ok(ServiceSpec::Trace(value.to_string())),
            "trace" => Err(SimulateError::new(
                "service",
                "trace: needs a file, e.g. trace:run.jsonl",
            )),
            other => Err(SimulateError::new(
                "service",
                format!(
                    "unknown service `{other}`; expected exponential:MEAN_S, fixed:S or trace:FILE"
                ),
            )),
        }
    }
}

/// Service times taken from a real trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Empirical {
    /// The file's name, for the header.
    pub source: String,
    pub samples: Vec<ServiceSample>,
    /// The source trace's own defaults (its threshold), carried to the simulated trace.
    pub defaults: Option<HeaderDefaults>,
}

/// One measured success: its durations from its own start.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSample {
    pub ttft_ms: f64,
    pub e2e_ms: f64,
    pub events: Vec<StreamEvent>,
    pub input_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    pub tokens_from_usage: bool,
    pub event_tokens_estimated: bool,
    pub quality: Quality,
}

impl Empirical {
    /// The measured successes of `trace` that have both a first token and an end. Their times
    /// include whatever queueing the recorded server did; the simulation adds its own on top.
    pub fn from_trace(source: &str, trace: &Trace) -> Result<Empirical, SimulateError> {
        let samples: Vec<ServiceSample> = trace
            .attempts
            .iter()
            .filter(|a| a.phase == Phase::Measure && a.outcome.is_success())
            .filter_map(|a| {
                let (ttft_ms, e2e_ms) = (a.ttft_ms?, a.e2e_ms?);
                Some(ServiceSample {
                    ttft_ms,
                    e2e_ms: e2e_ms.max(ttft_ms),
                    events: a.events.clone(),
                    input_tokens: a.input_tokens,
                    output_tokens: a.output_tokens,
                    tokens_from_usage: a.tokens_from_usage,
                    event_tokens_estimated: a.event_tokens_estimated,
                    quality: a.quality,
                })
            })
            .collect();
        if samples.is_empty() {
            return Err(SimulateError::new(
                "service",
                format!(
                    "{source} has no measured success with both a first token and an end time, so no service time can be drawn from it"
                ),
            ));
        }
        if samples.iter().all(|s| s.e2e_ms <= 0.0) {
            return Err(SimulateError::new(
                "service",
                format!("{source}: every success took 0 ms; a service time must be above 0"),
            ));
        }
        Ok(Empirical {
            source: source.to_string(),
            samples,
            defaults: trace.header.defaults.clone(),
        })
    }
}

impl From<ArrivalName> for Arrival {
    fn from(a: ArrivalName) -> Arrival {
        match a {
            ArrivalName::Constant => Arrival::Constant,
            ArrivalName::Poisson => Arrival::Poisson,
        }
    }
}

impl From<Arrival> for ArrivalName {
    fn from(a: Arrival) -> ArrivalName {
        match a {
            Arrival::Constant => ArrivalName::Constant,
            Arrival::Poisson => ArrivalName::Poisson,
        }
    }
}

impl Stall {
    /// `AT_S:FOR_S`, e.g. `10:5`.
    pub fn parse(spec: &str) -> Result<Stall, SimulateError> {
        let bad = || {
            SimulateError::new(
                "stall",
                format!("`{spec}` is not AT_S:FOR_S (e.g. 10:5, a 5 s stall 10 s in)"),
            )
        };
        let (at, len) = spec.split_once(':').ok_or_else(bad)?;
        let at_s: f64 = at.trim().parse().map_err(|_| bad())?;
        let for_s: f64 = len.trim().parse().map_err(|_| bad())?;
        let stall = Stall { at_s, for_s };
        stall.check()?;
        Ok(stall)
    }

    fn check(&self) -> Result<(), SimulateError> {
        if !(self.at_s.is_finite() && self.at_s >= 0.0) {
            return Err(SimulateError::new(
                "stall",
                format!("the stall's start must be 0 s or later, got {}", self.at_s),
            ));
        }
        if !(self.for_s.is_finite() && self.for_s > 0.0) {
            return Err(SimulateError::new(
                "stall",
                format!("the stall's length must be above 0 s, got {}", self.for_s),
            ));
        }
        Ok(())
    }
}

/// Everything a simulation needs. The same parameters always give the same trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Requests the server works on at once; the others wait in one first-come-first-served queue.
    pub slots: u32,
    pub service: Service,
    /// For fixed and exponential service: the share of the service time spent before the first
    /// token (the rest is streaming). Empirical service keeps each sample's own split.
    pub first_token_share: f64,
    pub load: Load,
    pub requests: u32,
    pub seed: u64,
    pub stall: Option<Stall>,
}

/// The default [`Params::first_token_share`].
pub const DEFAULT_FIRST_TOKEN_SHARE: f64 = 0.2;

impl Params {
    pub fn check(&self) -> Result<(), SimulateError> {
        let positive = |field: &str, v: f64, what: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(SimulateError::new(
                    field,
                    format!("{what} must be above 0, got {v}"),
                ))
            }
        };
        if self.slots == 0 {
            return Err(SimulateError::new(
                "slots",
                "the server needs at least 1 slot",
            ));
        }
        match &self.service {
            Service::Fixed { s } => positive("service", *s, "the fixed service time")?,
            Service::Exponential { mean_s } => {
                positive("service", *mean_s, "the mean service time")?
            }
            Service::Empirical(e) if e.samples.is_empty() => {
                return Err(SimulateError::new(
                    "service",
                    format!("{} gave no service times", e.source),
                ))
            }
            Service::Empirical(_) => {}
        }
        if !(0.0..=1.0).contains(&self.first_token_share) {
            return Err(SimulateError::new(
                "first-token-share",
                format!("must be between 0 and 1, got {}", self.first_token_share),
            ));
        }
        match self.load {
            Load::Closed { clients, think_s } => {
                if clients == 0 {
                    return Err(SimulateError::new(
                        "closed",
                        "a closed loop needs at least 1 client",
                    ));
                }
                if !(think_s.is_finite() && think_s >= 0.0) {
                    return Err(SimulateError::new(
                        "think",
                        format!("the think time must be 0 s or more, got {think_s}"),
                    ));
                }
            }
            Load::Open {
                rate_per_s,
                burstiness,
                ..
            } => {
                positive("rate", rate_per_s, "the arrival rate")?;
                positive("burstiness", burstiness, "the burstiness")?;
            }
            // Its times are checked by `simulate_at`, the only way to run it.
            Load::Workload { .. } => {}
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(SimulateError::new(
                "requests",
                format!(
                    "must be between 1 and {MAX_REQUESTS}, got {}",
                    self.requests
                ),
            ));
        }
        if let Some(stall) = &self.stall {
            stall.check()?;
        }
        Ok(())
    }
}

/// One request of a listed load (a workload file's replay): when it arrives (ms from the run's
/// origin) and the lengths the file gives it, which a [`TokenCost`] turns into service time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Listed {
    pub at_ms: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

impl TokenCost {
    /// Both costs finite and 0 or more, one of them above 0; flags named as on the command line.
    pub fn check(&self) -> Result<(), SimulateError> {
        for (field, v) in [
            ("service-per-input-token", self.per_input_token_s),
            ("service-per-output-token", self.per_output_token_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(SimulateError::new(
                    field,
                    format!("must be 0 s or more per token, got {v}"),
                ));
            }
        }
        if self.per_input_token_s == 0.0 && self.per_output_token_s == 0.0 {
            return Err(SimulateError::new(
                "service-per-output-token",
                "a per-token service needs a cost above 0 s per input or output token",
            ));
        }
        Ok(())
    }
}

/// The header's record of `p` (its `tokens` are a listed run's: [`simulate_listed`] sets them).
pub fn record(p: &Params) -> Simulation {
    let (service, share) = match &p.service {
        Service::Fixed { s } => (ServiceRecord::Fixed { s: *s }, Some(p.first_token_share)),
        Service::Exponential { mean_s } => (
            ServiceRecord::Exponential { mean_s: *mean_s },
            Some(p.first_token_share),
        ),
        Service::Empirical(e) => (
            ServiceRecord::Trace {
                file: e.source.clone(),
                successes: e.samples.len(),
            },
            None,
        ),
    };
    Simulation {
        slots: p.slots,
        service,
        first_token_share: share,
        load: p.load,
        requests: p.requests,
        seed: p.seed,
        stall: p.stall,
        tokens: None,
        sessions: None,
    }
}
