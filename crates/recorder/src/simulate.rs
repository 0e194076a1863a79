//! `tracelab simulate`: the core's load-model simulation from the terminal. It writes a trace
//! marked as simulated (every parameter and the seed in its header) that `report`, `export`,
//! `compare` and the lab read like any other.
//!
//! `--workload FILE` replays a real workload file's arrivals (after its window, speed-up and
//! idle cap, [`tracelab_core::workload::Workload::replay`], as `tracelab record --workload`)
//! through the simulator as an open loop at exactly those times. Each request's service comes
//! from `--service`, plus, with `--service-per-output-token` (and `--service-per-input-token`),
//! the time of the lengths the file gives it; the lengths are kept on each attempt
//! (`intended_input_tokens`, `intended_output_tokens`) and the header's `workload` names the
//! file by name and sha256, says it was simulated and how its service was made.
//!
//! [`ServerArgs`] (the simulated server: slots, service, first-token share, stall, per-token
//! service) is shared with `tracelab simulate-sweep`.

use std::path::PathBuf;

use clap::{ArgGroup, Args};
use serde_json::{json, Map, Value};
use tracelab_core::simulate::session::{simulate_sessions, SessionParams};
use tracelab_core::simulate::{
    self, Empirical, Listed, Load, Params, Service, ServiceSpec, SessionJitter, Stall, TokenCost,
};
use tracelab_core::workload::{self, Replay, Replayed, Workload};
use tracelab_core::{write, Lang, Trace};

use crate::settings_args::LangArg;
use tracelab_recorder::schedule::Arrival;

const AFTER_HELP: &str = "\
The server has --slots slots and one first-come-first-served queue. Each request's service time
is split into time to first token and streaming: a trace's successes keep their own split;
fixed and exponential times put --first-token-share of it before the first token.

Workload: --workload FILE (Azure CSV or Mooncake JSONL) sends one request at each of the file's
arrival times, after --from/--for (file seconds), --speedup and --max-idle, exactly as
`tracelab record --workload` plans them; --requests is the window's count. Each request's
service is --service's draw (its base), plus --service-per-output-token S times the output
length the file gives it (after the first token) and --service-per-input-token S times its
input length (before the first token): a linear model, no batching. Without them the file's
lengths do not drive the service. The header's workload record says which was used, and the
lengths are kept on each attempt beside its simulated times.

Closed loop: --closed N clients all start at 0 and each sends again --think seconds after its
reply ends. Open loop: requests leave on a schedule fixed in advance (--rate, --arrival,
--burstiness as in `tracelab record` and vLLM's bench), whatever the server does.

Each attempt's intended_start_ms is its arrival, start_ms when the client sent it, and end_ms
when the server finished it, queueing included: end - start is the time in system. The same
flags and seed always write the same file. OUTPUT is never overwritten without --force.

Sessions: --sessions N --turns K --session-rate R [--think-s T] send N conversations, started
open-loop (Poisson, R a second); within one, turn k + 1 goes --think-s after turn k's answer and
resends turns 1..k as history plus --new-tokens. A turn's prefill is --service's base (fixed:S,
or exponential:M for a prefill times an Exp(1) draw) + --per-uncached-token-s × the prompt tokens
the prefix cache (--cache-tokens, LRU) does not hold, then --per-output-token-s per answer token.
The simulator writes no answers: every simulated answer counts as passing quality (the header's
simulation.sessions says so). `tracelab report` prints the per-turn and per-session figures.
  tracelab simulate --sessions 500 --turns 10 --think-s 5 --session-rate 1 --slots 16 \\
      --service exponential:0.05 --per-uncached-token-s 0.0002 --per-output-token-s 0.005 \\
      --cache-tokens 200000 --seed 1 --output sessions.jsonl
  (at --threshold 0.5: 96 % of sessions qualify; with --cache-tokens 20000 the histories are
  evicted, late turns prefill them again, and 7 % do)

Example, the stall demonstration:
  tracelab simulate --slots 8 --service exponential:1 --closed 16 --think 4 \\
      --requests 1000 --seed 11 --stall 60:20 --output closed.jsonl
  tracelab simulate --slots 8 --service exponential:1 --rate 3.2 \\
      --requests 1000 --seed 11 --stall 60:20 --output open.jsonl";

#[derive(Args)]
#[command(after_help = AFTER_HELP, group(ArgGroup::new("load").required(true).args(["closed", "rate", "workload", "sessions"])))]
pub struct SimulateArgs {
    #[command(flatten)]
    pub server: ServerArgs,
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
    /// Open loop at a real workload file's own arrival times (Azure LLM inference trace CSV or
    /// Mooncake JSONL); the service is still --service.
    #[arg(long, value_name = "FILE")]
    pub workload: Option<PathBuf>,
    #[command(flatten)]
    pub replay: tracelab_recorder::record::ReplayArgs,
    #[command(flatten)]
    pub conversation: SessionArgs,
    /// How many requests to simulate (with --workload: the window's requests, with --sessions:
    /// sessions × turns, so not given).
    #[arg(
        long,
        value_name = "K",
        required_unless_present_any = ["workload", "sessions"],
        conflicts_with_all = ["workload", "sessions"]
    )]
    pub requests: Option<u32>,
    /// The seed of the arrivals and service times.
    #[arg(long, value_name = "SEED")]
    pub seed: u64,
    /// Where to write the simulated trace (JSON Lines, trace format v1).
    #[arg(long, short, value_name = "sim.jsonl")]
    pub output: PathBuf,
    /// Overwrite OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
    /// Language of what is printed (the run's description).
    #[arg(long, value_enum, default_value = "en")]
    pub lang: LangArg,
}

/// Conversations instead of independent requests (`--sessions N --turns K`).
#[derive(Args, Clone)]
pub struct SessionArgs {
    /// Sessions: N conversations, arriving open-loop (Poisson at --session-rate); within one,
    /// turn k + 1 is sent --think-s after turn k's answer ended and resends turns 1..k.
    #[arg(long, value_name = "N")]
    pub sessions: Option<u32>,
    /// Sessions: turns per conversation.
    #[arg(long, value_name = "K", requires = "sessions")]
    pub turns: Option<u32>,
    /// Sessions: seconds between a turn's answer and the next turn.
    #[arg(long, value_name = "T", requires = "sessions")]
    pub think_s: Option<f64>,
    /// Sessions: conversations started per second (Poisson).
    #[arg(long, value_name = "R", requires = "sessions")]
    pub session_rate: Option<f64>,
    /// Sessions: new prompt tokens each turn adds.
    #[arg(
        long,
        value_name = "TOKENS",
        requires = "sessions",
        default_value_t = 200
    )]
    pub new_tokens: u32,
    /// Sessions: answer tokens of each turn (they join the next turn's history).
    #[arg(
        long,
        value_name = "TOKENS",
        requires = "sessions",
        default_value_t = 100
    )]
    pub output_tokens: u32,
    /// Sessions: prefill seconds per prompt token the prefix cache does not hold.
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "sessions",
        default_value_t = 0.0005
    )]
    pub per_uncached_token_s: f64,
    /// Sessions: decode seconds per answer token after the first.
    #[arg(
        long,
        value_name = "SECONDS",
        requires = "sessions",
        default_value_t = 0.01
    )]
    pub per_output_token_s: f64,
    /// Sessions: the server's prefix cache in tokens, least recently used evicted first (0: none).
    #[arg(
        long,
        value_name = "TOKENS",
        requires = "sessions",
        default_value_t = 0
    )]
    pub cache_tokens: u64,
}

/// The simulated server, shared by `simulate` and `simulate-sweep`.
#[derive(Args)]
pub struct ServerArgs {
    /// Requests the server works on at once.
    #[arg(long, value_name = "C")]
    pub slots: u32,
    /// Service time per request: exponential:MEAN_S, fixed:S, or trace:FILE (drawn from that
    /// trace's measured successes). With --service-per-output-token it is each request's base.
    #[arg(long, value_name = "SPEC")]
    pub service: String,
    /// With --workload: seconds of service per output token the file gives a request, after its
    /// first token, added to --service's draw.
    #[arg(long, value_name = "SECONDS", requires = "workload")]
    pub service_per_output_token: Option<f64>,
    /// With --workload: seconds of service per input token the file gives a request, before its
    /// first token (prefill), added to --service's draw.
    #[arg(long, value_name = "SECONDS", requires = "workload")]
    pub service_per_input_token: Option<f64>,
    /// Fixed and exponential service: the share of the service time before the first token.
    #[arg(long, value_name = "F", default_value_t = simulate::DEFAULT_FIRST_TOKEN_SHARE)]
    pub first_token_share: f64,
    /// The server stops AT_S seconds in, for FOR_S seconds.
    #[arg(long, value_name = "AT_S:FOR_S")]
    pub stall: Option<String>,
}

impl ServerArgs {
    /// The server's parameters for `load` (`requests` of them, from `seed`), and the per-token
    /// service when one is asked for; every value checked by the core when it runs.
    pub fn params(
        &self,
        load: Load,
        requests: u32,
        seed: u64,
    ) -> Result<(Params, Option<TokenCost>), String> {
        let flag = |e: simulate::SimulateError| format!("--{e}");
        let service = match ServiceSpec::parse(&self.service).map_err(flag)? {
            ServiceSpec::Fixed(s) => Service::Fixed { s },
            ServiceSpec::Exponential(mean_s) => Service::Exponential { mean_s },
            ServiceSpec::Trace(file) => {
                let (name, trace, _) = crate::import::load(std::path::Path::new(&file), None, None)
                    .map_err(|e| format!("--service trace:{file}: {e}"))?;
                Service::Empirical(Empirical::from_trace(&name, &trace).map_err(flag)?)
            }
        };
        let tokens = match (self.service_per_input_token, self.service_per_output_token) {
            (None, None) => None,
            (i, o) => {
                let t = TokenCost {
                    per_input_token_s: i.unwrap_or(0.0),
                    per_output_token_s: o.unwrap_or(0.0),
                };
                t.check().map_err(flag)?;
                if matches!(service, Service::Empirical(_)) {
                    return Err("--service-per-output-token and --service-per-input-token add to a fixed or exponential base; a trace's measured service times already hold their own lengths' time".into());
                }
                Some(t)
            }
        };
        let stall = self
            .stall
            .as_deref()
            .map(Stall::parse)
            .transpose()
            .map_err(flag)?;
        Ok((
            Params {
                slots: self.slots,
                service,
                first_token_share: self.first_token_share,
                load,
                requests,
                seed,
                stall,
            },
            tokens,
        ))
    }
}

/// How a workload run's service was made, for the header's `workload.service`.
fn service_words(tokens: Option<TokenCost>) -> String {
    match tokens {
        None => "service times from the simulation's --service model; the file's input and output lengths do not drive them".into(),
        Some(t) => format!(
            "service = the --service model's draw + {} s × the file's input tokens (before the first token) + {} s × its output tokens (after it); a linear model, no batching",
            t.per_input_token_s, t.per_output_token_s
        ),
    }
}

/// A workload file's planned requests as the simulator's listed load.
pub fn listed(planned: &Replayed) -> Vec<Listed> {
    planned
        .requests
        .iter()
        .map(|p| Listed {
            at_ms: p.at_ms,
            input_tokens: p.input_tokens,
            output_tokens: p.output_tokens,
        })
        .collect()
}

/// A simulated workload run as written: the header's `workload` record (file name and sha256,
/// never a path; `simulated: true`; how the service was made) and each attempt's intended
/// lengths (attempts are in the window's order).
pub fn workload_trace_text(
    w: &Workload,
    replay: &Replay,
    planned: &Replayed,
    trace: &Trace,
    tokens: Option<TokenCost>,
) -> String {
    let mut record = w.header_record(replay, planned);
    record.insert("simulated".into(), json!(true));
    record.insert("service".into(), json!(service_words(tokens)));
    let mut extra = Map::new();
    extra.insert("workload".into(), Value::Object(record));
    let mut text = write::header_line_with(&trace.header, &extra);
    text.push('\n');
    for (a, p) in trace.attempts.iter().zip(&planned.requests) {
        let mut extra = Map::new();
        extra.insert("intended_input_tokens".into(), json!(p.input_tokens));
        extra.insert("intended_output_tokens".into(), json!(p.output_tokens));
        text.push_str(&write::attempt_line_with(a, &extra));
        text.push('\n');
    }
    if let Some(footer) = &trace.footer {
        text.push_str(&write::footer_line(footer));
        text.push('\n');
    }
    text
}

/// Reads a workload file, refusing a bad one naming the file, line and field.
pub fn read_workload(path: &std::path::Path) -> Result<Workload, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read --workload {}: {e}", path.display()))?;
    workload::read(&path.display().to_string(), &bytes)
        .map_err(|e| format!("{e}; nothing was simulated"))
}

/// The workload's replayed arrivals through the simulator, and the trace as written. A bad file
/// or window is refused naming the file, line and field (or the flag) before anything is simulated.
fn replayed(
    path: &std::path::Path,
    replay: &Replay,
    params: &Params,
    tokens: Option<TokenCost>,
) -> Result<(Trace, String), String> {
    let w = read_workload(path)?;
    let planned = w
        .replay(replay)
        .map_err(|e| format!("{e}; nothing was simulated"))?;
    if planned.requests.len() > simulate::MAX_REQUESTS as usize {
        return Err(format!(
            "the window of {} holds {} requests, more than the simulator's {}; choose a shorter --for",
            w.file,
            planned.requests.len(),
            simulate::MAX_REQUESTS
        ));
    }
    let trace = simulate::simulate_listed(params, &listed(&planned), tokens)
        .map_err(|e| format!("--{e}"))?;
    let text = workload_trace_text(&w, replay, &planned, &trace, tokens);
    Ok((trace, text))
}

/// `--sessions`: the server's `--slots` and `--service` (fixed:S, or exponential:M for a
/// prefill jittered by Exp(1)) as the prefill's base, the conversation flags for the rest.
fn session_params(args: &SimulateArgs, sessions: u32) -> Result<SessionParams, String> {
    session_params_of(&args.server, &args.conversation, sessions, args.seed)
}

/// The session simulator's parameters from the server's and the conversation's flags (shared by
/// `simulate --sessions` and `simulate-sweep --sessions`, whose rate comes from --rates).
pub fn session_params_of(
    server: &ServerArgs,
    c: &SessionArgs,
    sessions: u32,
    seed: u64,
) -> Result<SessionParams, String> {
    let needs = |flag: &str| format!("--sessions needs {flag}");
    let (base_s, jitter) = match ServiceSpec::parse(&server.service).map_err(|e| format!("--{e}"))? {
        ServiceSpec::Fixed(s) => (s, SessionJitter::None),
        ServiceSpec::Exponential(m) => (m, SessionJitter::Exponential),
        ServiceSpec::Trace(_) => {
            return Err("--sessions computes each turn's prefill from its uncached prompt tokens; --service must be fixed:S or exponential:M (its base), not a trace".into())
        }
    };
    if server.stall.is_some() {
        return Err("--stall is not simulated with --sessions".into());
    }
    Ok(SessionParams {
        sessions,
        turns: c.turns.ok_or_else(|| needs("--turns K"))?,
        session_rate_per_s: c.session_rate.ok_or_else(|| needs("--session-rate R"))?,
        think_s: c.think_s.unwrap_or(0.0),
        slots: server.slots,
        new_tokens: c.new_tokens,
        output_tokens: c.output_tokens,
        base_s,
        per_uncached_token_s: c.per_uncached_token_s,
        per_output_token_s: c.per_output_token_s,
        jitter,
        cache_tokens: c.cache_tokens,
        seed,
    })
}

fn run_sessions(args: &SimulateArgs, sessions: u32) -> Result<(), String> {
    let params = session_params(args, sessions)?;
    let trace = simulate_sessions(&params).map_err(|e| format!("--{e}"))?;
    std::fs::write(&args.output, write::to_jsonl(&trace))
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    let lang = match args.lang {
        LangArg::En => Lang::En,
        LangArg::Zh => Lang::Zh,
    };
    eprintln!("{}", params.record().describe(lang));
    eprintln!(
        "{}",
        match lang {
            Lang::En => format!(
                "wrote {}: {} turns of {} sessions; `tracelab report` judges every session by its turns",
                args.output.display(),
                trace.attempts.len(),
                sessions
            ),
            Lang::Zh => format!(
                "已写入 {}：{} 个会话共 {} 轮；用 `tracelab report` 按每一轮判定每个会话",
                args.output.display(),
                sessions,
                trace.attempts.len()
            ),
        }
    );
    Ok(())
}

pub fn run(args: SimulateArgs) -> Result<(), String> {
    let flag = |e: simulate::SimulateError| format!("--{e}");
    tracelab_recorder::writer::refuse_overwrite(&args.output, args.force, "")?;
    if let Some(sessions) = args.conversation.sessions {
        return run_sessions(&args, sessions);
    }
    // Checked here rather than by clap's `requires`, which the load group overrides.
    if args.think.is_some() && args.closed.is_none() {
        return Err("--think is the closed loop's pause between a reply and the next request; it needs --closed N".into());
    }
    if args.rate.is_none() {
        if let Some(flag) = [
            (args.arrival.is_some(), "--arrival"),
            (args.burstiness.is_some(), "--burstiness"),
        ]
        .iter()
        .find(|f| f.0)
        {
            return Err(format!(
                "{} shapes an open loop's schedule; it needs --rate R",
                flag.1
            ));
        }
    }
    let load = match (args.closed, args.rate) {
        _ if args.workload.is_some() => Load::Workload {
            requests: 0,
            span_s: 0.0,
        },
        (Some(clients), None) => Load::Closed {
            clients,
            think_s: args.think.unwrap_or(0.0),
        },
        (None, Some(rate_per_s)) => {
            let arrival = args.arrival.unwrap_or(Arrival::Poisson);
            if arrival == Arrival::Constant && args.burstiness.is_some() {
                return Err("--burstiness shapes random gaps; it needs --arrival poisson".into());
            }
            Load::Open {
                rate_per_s,
                arrival: arrival.core().into(),
                burstiness: args.burstiness.unwrap_or(1.0),
            }
        }
        _ => unreachable!("clap requires exactly one of --closed and --rate"),
    };
    let (params, tokens) = args
        .server
        .params(load, args.requests.unwrap_or(0), args.seed)?;
    if tokens.is_some() && args.workload.is_none() {
        return Err("--service-per-output-token and --service-per-input-token need the lengths of a workload file: --workload FILE".into());
    }
    let (trace, text) = match &args.workload {
        Some(path) => {
            let replay = args.replay.replay();
            replayed(path, &replay, &params, tokens)?
        }
        None => {
            let trace = simulate::simulate(&params).map_err(flag)?;
            let text = write::to_jsonl(&trace);
            (trace, text)
        }
    };
    std::fs::write(&args.output, text)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    let summary = simulate::summarize(&trace);
    let secs = |v: Option<f64>| v.map(|s| format!("{s:.3} s")).unwrap_or_else(|| "—".into());
    eprintln!(
        "{}",
        trace
            .header
            .simulation
            .as_ref()
            .expect("a simulated header")
            .read()
            .expect("written just now")
            .describe(Lang::En)
    );
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
