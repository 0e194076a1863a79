//! `tracelab simulate`: the core's load-model simulation from the terminal. It writes a trace
//! marked as simulated (every parameter and the seed in its header) that `report`, `export`,
//! `compare` and the lab read like any other.

use std::path::PathBuf;

use clap::{ArgGroup, Args};
use tracelab_core::simulate::{self, Empirical, Load, Params, Service, ServiceSpec, Stall};
use tracelab_core::{write, Lang};

use tracelab_recorder::schedule::Arrival;

const AFTER_HELP: &str = "\
The server has --slots slots and one first-come-first-served queue. Each request's service time
is split into time to first token and streaming: a trace's successes keep their own split;
fixed and exponential times put --first-token-share of it before the first token.

Closed loop: --closed N clients all start at 0 and each sends again --think seconds after its
reply ends. Open loop: requests leave on a schedule fixed in advance (--rate, --arrival,
--burstiness as in `tracelab record` and vLLM's bench), whatever the server does.

Each attempt's intended_start_ms is its arrival, start_ms when the client sent it, and end_ms
when the server finished it, queueing included: end - start is the time in system. The same
flags and seed always write the same file. OUTPUT is never overwritten without --force.

Example, the stall demonstration:
  tracelab simulate --slots 8 --service exponential:1 --closed 16 --think 4 \\
      --requests 1000 --seed 11 --stall 60:20 --output closed.jsonl
  tracelab simulate --slots 8 --service exponential:1 --rate 3.2 \\
      --requests 1000 --seed 11 --stall 60:20 --output open.jsonl";

#[derive(Args)]
#[command(after_help = AFTER_HELP, group(ArgGroup::new("load").required(true).args(["closed", "rate"])))]
pub struct SimulateArgs {
    /// Requests the server works on at once.
    #[arg(long, value_name = "C")]
    pub slots: u32,
    /// Service time per request: exponential:MEAN_S, fixed:S, or trace:FILE (drawn from that
    /// trace's measured successes).
    #[arg(long, value_name = "SPEC")]
    pub service: String,
    /// Closed loop: this many clients, each waiting for its reply before sending again.
    #[arg(long, value_name = "N")]
    pub closed: Option<u32>,
    /// Closed loop: seconds a client waits after a reply before sending again.
    #[arg(long, value_name = "S")]
    pub think: Option<f64>,
    /// Open loop: requests per second, sent on schedule whatever the server does.
    #[arg(long, value_name = "R")]
    pub rate: Option<f64>,
    /// Open loop: how the schedule spaces requests.
    #[arg(long, value_enum)]
    pub arrival: Option<Arrival>,
    /// Open loop, poisson: gamma shape of the gaps (1 Poisson, < 1 burstier, > 1 steadier).
    #[arg(long, value_name = "B")]
    pub burstiness: Option<f64>,
    /// How many requests to simulate.
    #[arg(long, value_name = "K")]
    pub requests: u32,
    /// The seed of the arrivals and service times.
    #[arg(long, value_name = "SEED")]
    pub seed: u64,
    /// The server stops AT_S seconds in, for FOR_S seconds.
    #[arg(long, value_name = "AT_S:FOR_S")]
    pub stall: Option<String>,
    /// Fixed and exponential service: the share of the service time before the first token.
    #[arg(long, value_name = "F", default_value_t = simulate::DEFAULT_FIRST_TOKEN_SHARE)]
    pub first_token_share: f64,
    /// Where to write the simulated trace (JSON Lines, trace format v1).
    #[arg(long, short, value_name = "sim.jsonl")]
    pub output: PathBuf,
    /// Overwrite OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: SimulateArgs) -> Result<(), String> {
    let flag = |e: simulate::SimulateError| format!("--{e}");
    if args.output.exists() && !args.force {
        return Err(format!("{} already exists; pass --force to overwrite it", args.output.display()));
    }
    let service = match ServiceSpec::parse(&args.service).map_err(flag)? {
        ServiceSpec::Fixed(s) => Service::Fixed { s },
        ServiceSpec::Exponential(mean_s) => Service::Exponential { mean_s },
        ServiceSpec::Trace(file) => {
            let (name, trace, _) = crate::import::load(std::path::Path::new(&file), None, None)
                .map_err(|e| format!("--service trace:{file}: {e}"))?;
            Service::Empirical(Empirical::from_trace(&name, &trace).map_err(flag)?)
        }
    };
    // Checked here rather than by clap's `requires`, which the load group overrides.
    if args.think.is_some() && args.closed.is_none() {
        return Err("--think is the closed loop's pause between a reply and the next request; it needs --closed N".into());
    }
    if args.rate.is_none() {
        if let Some(flag) = [(args.arrival.is_some(), "--arrival"), (args.burstiness.is_some(), "--burstiness")].iter().find(|f| f.0) {
            return Err(format!("{} shapes an open loop's schedule; it needs --rate R", flag.1));
        }
    }
    let load = match (args.closed, args.rate) {
        (Some(clients), None) => Load::Closed { clients, think_s: args.think.unwrap_or(0.0) },
        (None, Some(rate_per_s)) => {
            let arrival = args.arrival.unwrap_or(Arrival::Poisson);
            if arrival == Arrival::Constant && args.burstiness.is_some() {
                return Err("--burstiness shapes random gaps; it needs --arrival poisson".into());
            }
            Load::Open { rate_per_s, arrival: arrival.core().into(), burstiness: args.burstiness.unwrap_or(1.0) }
        }
        _ => unreachable!("clap requires exactly one of --closed and --rate"),
    };
    let stall = args.stall.as_deref().map(Stall::parse).transpose().map_err(flag)?;
    let params = Params {
        slots: args.slots,
        service,
        first_token_share: args.first_token_share,
        load,
        requests: args.requests,
        seed: args.seed,
        stall,
    };
    let trace = simulate::simulate(&params).map_err(flag)?;
    std::fs::write(&args.output, write::to_jsonl(&trace))
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    let summary = simulate::summarize(&trace);
    let secs = |v: Option<f64>| v.map(|s| format!("{s:.3} s")).unwrap_or_else(|| "—".into());
    eprintln!("{}", trace.header.simulation.as_ref().expect("a simulated header").read().expect("written just now").describe(Lang::En));
    eprintln!(
        "wrote {}: time in system from intended start P50 {} · P95 {} · max {} ({}); throughput {}/s",
        args.output.display(),
        secs(summary.p50_s),
        secs(summary.p95_s),
        secs(summary.max_s),
        simulate::SUMMARY_METHOD.code(),
        summary.throughput_per_s.map(|x| format!("{x:.3}")).unwrap_or_else(|| "—".into())
    );
    Ok(())
}
