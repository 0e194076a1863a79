//! The event loop. With one first-come-first-served queue and no preemption, a request starts
//! on the slot that frees first, at its arrival or that moment, whichever is later; so the loop
//! only needs each slot's free time, and a closed loop's clients in order of their next send.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{
    Listed, Load, Params, Schedule, Service, SimulateError, SimulationRecord, Stall, TokenCost,
};
use crate::trace::*;

/// One simulated request, in seconds from the run's origin.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job {
    pub arrival: f64,
    pub send: f64,
    /// When a slot took it (after the stall, if it arrived during one).
    pub service_start: f64,
    pub first_token: f64,
    pub end: f64,
    /// Which empirical sample gave its service time.
    pub sample: Option<usize>,
}

/// Runs the simulation and writes its trace. A [`Load::Workload`] needs its arrival times:
/// run it with [`simulate_at`].
pub fn simulate(p: &Params) -> Result<Trace, SimulateError> {
    p.check()?;
    if matches!(p.load, Load::Workload { .. }) {
        return Err(SimulateError::new(
            "workload",
            "a workload's load needs its arrival times; run it with simulate_at",
        ));
    }
    let jobs = run(p, &[], None);
    Ok(to_trace(p, &jobs, None))
}

/// An open loop at exactly `arrivals_ms` (ms from the run's origin, in order, e.g. a workload
/// file's times after [`crate::workload::Workload::replay`]): request `i` arrives at
/// `arrivals_ms[i]` whatever the server does. `p.load` and `p.requests` are replaced by the
/// list's ([`Load::Workload`]); the service, slots, seed and stall are `p`'s. Each request's
/// service comes from `p.service`, not from anything the list's source says about it.
pub fn simulate_at(p: &Params, arrivals_ms: &[f64]) -> Result<Trace, SimulateError> {
    let listed: Vec<Listed> = arrivals_ms
        .iter()
        .map(|&at_ms| Listed {
            at_ms,
            input_tokens: 0,
            output_tokens: 0,
        })
        .collect();
    simulate_listed(p, &listed, None)
}

/// [`simulate_at`] with each request's lengths: with `tokens`, a request's service is the
/// service's draw plus its input tokens × the prefill cost (before the first token) and its
/// output tokens × the decode cost (after it), recorded in the header's `simulation.tokens`.
/// A per-token cost on top of a trace's measured services is refused: those already hold
/// their own lengths' time.
pub fn simulate_listed(
    p: &Params,
    listed: &[Listed],
    tokens: Option<TokenCost>,
) -> Result<Trace, SimulateError> {
    if listed.is_empty() {
        return Err(SimulateError::new(
            "workload",
            "no arrival times to simulate",
        ));
    }
    let mut previous = 0.0;
    for (i, l) in listed.iter().enumerate() {
        let at = l.at_ms;
        if !(at.is_finite() && at >= previous) {
            return Err(SimulateError::new(
                "workload",
                format!("arrival {} at {at} ms: arrival times must be 0 ms or later and never decrease (the one before is at {previous} ms)", i + 1),
            ));
        }
        previous = at;
    }
    if let Some(t) = &tokens {
        t.check()?;
        if matches!(p.service, Service::Empirical(_)) {
            return Err(SimulateError::new(
                "service-per-output-token",
                "a trace's measured service times already hold their own lengths' time; use fixed:S or exponential:MEAN_S as the base",
            ));
        }
    }
    let requests = u32::try_from(listed.len()).unwrap_or(u32::MAX);
    let p = Params {
        load: Load::Workload {
            requests,
            span_s: (previous - listed[0].at_ms) / 1000.0,
        },
        requests,
        ..p.clone()
    };
    p.check()?;
    let jobs = run(&p, listed, tokens);
    Ok(to_trace(&p, &jobs, tokens))
}

/// Where work that needs `w` seconds of server time, started at `s`, is done: the stall adds
/// its length to anything it overlaps, and work cannot start inside it.
fn advance(s: f64, w: f64, stall: Option<Stall>) -> f64 {
    let Some(Stall { at_s, for_s }) = stall else {
        return s + w;
    };
    let resume = at_s + for_s;
    if s >= resume || s + w <= at_s {
        s + w
    } else if s >= at_s {
        resume + w
    } else {
        s + w + for_s
    }
}

/// Service draws come from their own stream, so the same seed gives the same service times
/// under any load (the closed and the open loop of a comparison serve the same work).
const SERVICE_STREAM: u64 = 0x5e41_71ce_0000_0001;

/// `listed`: the requests of a [`Load::Workload`] (unused by the other loads), with `tokens`
/// their per-token service on top of each draw.
pub(super) fn run(p: &Params, listed: &[Listed], tokens: Option<TokenCost>) -> Vec<Job> {
    let mut service_rng = super::Rng::new(p.seed ^ SERVICE_STREAM);
    let mut draw = || -> (f64, f64, Option<usize>) {
        match &p.service {
            Service::Fixed { s } => (s * p.first_token_share, *s, None),
            Service::Exponential { mean_s } => {
                let total = service_rng.exponential(*mean_s);
                (total * p.first_token_share, total, None)
            }
            Service::Empirical(e) => {
                let i = service_rng.index(e.samples.len());
                let s = &e.samples[i];
                (s.ttft_ms / 1000.0, s.e2e_ms / 1000.0, Some(i))
            }
        }
    };
    let mut slots = vec![0.0_f64; p.slots as usize];
    let mut serve = |arrival: f64, send: f64, draw: (f64, f64, Option<usize>)| -> Job {
        // Earliest-free slot; the lowest index on a tie, so the run is deterministic.
        let (slot, free) =
            slots
                .iter()
                .copied()
                .enumerate()
                .fold(
                    (0, f64::INFINITY),
                    |best, (i, f)| if f < best.1 { (i, f) } else { best },
                );
        let (ttft, total, sample) = draw;
        let begin = send.max(free);
        let first_token = advance(begin, ttft, p.stall);
        let end = advance(begin, total, p.stall);
        slots[slot] = end;
        let service_start = advance(begin, 0.0, p.stall);
        Job {
            arrival,
            send,
            service_start,
            first_token,
            end,
            sample,
        }
    };
    let k = p.requests as usize;
    let mut jobs = Vec::with_capacity(k);
    match p.load {
        Load::Open {
            rate_per_s,
            arrival,
            burstiness,
        } => {
            for at_ms in Schedule::new(arrival.into(), rate_per_s, burstiness, p.seed).take(k) {
                let at = at_ms / 1000.0;
                jobs.push(serve(at, at, draw()));
            }
        }
        Load::Workload { .. } => {
            for l in listed.iter().take(k) {
                let at = l.at_ms / 1000.0;
                let (ttft, total, sample) = draw();
                let (ttft, total) = match tokens {
                    Some(t) => {
                        let prefill = t.per_input_token_s * l.input_tokens as f64;
                        let decode = t.per_output_token_s * l.output_tokens as f64;
                        (ttft + prefill, total + prefill + decode)
                    }
                    None => (ttft, total),
                };
                jobs.push(serve(at, at, (ttft, total, sample)));
            }
        }
        Load::Closed { clients, think_s } => {
            // Non-negative floats order like their bit patterns, which gives the heap a total order.
            let mut ready: BinaryHeap<Reverse<(u64, u32)>> = (0..clients)
                .map(|c| Reverse((0.0_f64.to_bits(), c)))
                .collect();
            while jobs.len() < k {
                let Reverse((bits, client)) =
                    ready.pop().expect("every client is in the heap once");
                let at = f64::from_bits(bits);
                let job = serve(at, at, draw());
                ready.push(Reverse(((job.end + think_s).to_bits(), client)));
                jobs.push(job);
            }
        }
    }
    jobs
}

fn to_trace(p: &Params, jobs: &[Job], tokens: Option<TokenCost>) -> Trace {
    let empirical = match &p.service {
        Service::Empirical(e) => Some(e),
        _ => None,
    };
    let width = jobs.len().to_string().len().max(4);
    let attempts: Vec<Attempt> = jobs
        .iter()
        .enumerate()
        .map(|(i, job)| {
            let rel = |t: f64| (t - job.send) * 1000.0;
            let mut a = Attempt::new(
                format!("sim-{:0width$}", i + 1),
                Outcome::Success,
                Some(rel(job.first_token)),
                Quality::NotEvaluated,
            );
            a.intended_start_ms = Some(job.arrival * 1000.0);
            a.start_ms = Some(job.send * 1000.0);
            a.e2e_ms = Some(rel(job.end));
            if let (Some(e), Some(s)) = (empirical, job.sample) {
                let sample = &e.samples[s];
                // The sample's events keep their place in its service, stretched by the stall.
                a.events = sample
                    .events
                    .iter()
                    .map(|ev| StreamEvent {
                        at_ms: rel(advance(job.service_start, ev.at_ms / 1000.0, p.stall)),
                        tokens: ev.tokens,
                    })
                    .collect();
                a.input_tokens = sample.input_tokens;
                a.output_tokens = sample.output_tokens;
                a.tokens_from_usage = sample.tokens_from_usage;
                a.event_tokens_estimated = sample.event_tokens_estimated;
                a.quality = sample.quality;
            }
            a
        })
        .collect();
    let last_end = jobs.iter().map(|j| j.end).fold(0.0, f64::max);
    let (arrival, concurrency, rate_per_s, burstiness) = match p.load {
        Load::Closed { clients, .. } => ("closed", Some(clients), None, None),
        Load::Workload { .. } => ("workload", None, None, None),
        Load::Open {
            rate_per_s,
            arrival,
            burstiness,
        } => {
            let arrival = super::Arrival::from(arrival);
            (
                arrival.name(),
                None,
                Some(rate_per_s),
                (arrival == super::Arrival::Poisson).then_some(burstiness),
            )
        }
    };
    let header = Header {
        tool: Tool {
            name: "tracelab simulate".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        conditions: Conditions {
            arrival: Some(arrival.into()),
            concurrency,
            rate_per_s,
            burstiness,
            seed: Some(p.seed),
            ..Conditions::default()
        },
        // Simulated attempts are a workload's record, but no inference endpoint was measured.
        capabilities: Capabilities {
            workload_executed: true,
            inference_benchmark: false,
            gpu_telemetry: GPU_UNSUPPORTED.into(),
        },
        // To the millisecond above the last end, so the window holds every attempt and reads cleanly.
        window: (last_end > 0.0).then(|| Window {
            start_ms: 0.0,
            length_s: (last_end * 1000.0).ceil() / 1000.0,
        }),
        defaults: empirical.and_then(|e| e.defaults.clone()),
        simulation: Some(SimulationRecord::of(&super::Simulation {
            tokens,
            ..super::record(p)
        })),
        ..Header::default()
    };
    let footer = Footer {
        finished_cleanly: true,
        attempts: attempts.len() as u64,
        gpu_samples: 0,
    };
    Trace {
        header,
        attempts,
        gpu: Vec::new(),
        engine: Vec::new(),
        footer: Some(footer),
        warnings: Vec::new(),
    }
}
