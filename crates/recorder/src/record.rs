//! `tracelab record`: measure a real OpenAI-compatible endpoint into a trace the lab loads.
//!
//! This module turns the command line into a [`Plan`] (checking every value and saying what to
//! fix), runs it, and prints the summary the core computes from the written file.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tracelab_core::trace::Money;
use tracelab_core::{format, parse::parse_trace_bytes, Index, Lang, Metrics, Settings};

use crate::engine::{self, Load, Plan, Recorded};
use crate::exit::Exit;
use crate::openai::Api;
use crate::prompts::PromptSet;
use crate::schedule::Arrival;

#[derive(Args, Debug, Clone)]
#[command(after_help = Exit::help_text())]
pub struct RecordArgs {
    /// The endpoint's OpenAI-compatible base URL, including `/v1`, e.g. http://localhost:8000/v1.
    /// Used only to send requests: it is never written to the trace or printed.
    #[arg(
        long,
        env = "TRACELAB_BASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub base_url: String,
    /// The model id to request (written to the trace's header).
    #[arg(long, value_name = "ID")]
    pub model: String,
    /// Prompt set, JSON Lines of {"id", "prompt", "rubric"?} [default: the built-in baseline set].
    #[arg(long, value_name = "FILE")]
    pub prompts: Option<PathBuf>,
    /// Measured rounds: each prompt is sent this many times.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repetitions: u32,
    /// Warm-up rounds over the prompt set sent first (each prompt N times; with --workload, N
    /// requests), recorded as phase `warmup` and never mixed into the figures. `--warmup` is
    /// the same flag by its older name.
    #[arg(
        long = "warmup-rounds",
        visible_alias = "warmup",
        default_value_t = 1,
        value_name = "N"
    )]
    pub warmup: u32,
    /// The `max_tokens` of every request.
    #[arg(long, default_value_t = 128, value_name = "N")]
    pub max_tokens: u32,
    /// Where to write the trace (JSON Lines).
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite --output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Replications: record this many independent runs under one contract, one after the
    /// other, each with its own warm-up and (open loop) the seed + run − 1, to FILE's name with
    /// `-run-K` before its extension; then print each figure's interval between the runs.
    #[arg(long, default_value_t = 1, value_name = "R", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    #[arg(long, value_enum, default_value = "chat")]
    pub api: Api,
    /// The environment variable holding the API key (sent as a bearer token; unset: no key).
    #[arg(long, default_value = "OPENAI_API_KEY", value_name = "NAME")]
    pub api_key_env: String,
    /// Give up on an attempt after this long (then `timeout_after_first_token`).
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    pub timeout: f64,
    /// Give up when no token came this long after the start (then `timeout_before_first_token`)
    /// [default: --timeout].
    #[arg(long, value_name = "SECONDS")]
    pub first_token_timeout: Option<f64>,
    /// Closed loop: this many requests in flight, each sent when a previous one ended.
    #[arg(long, default_value_t = 1, value_name = "N", conflicts_with = "rate")]
    pub concurrency: u32,
    /// Open loop: send this many requests per second on a fixed schedule, never waiting for replies.
    #[arg(long, value_name = "PER_SECOND")]
    pub rate: Option<f64>,
    /// How the open loop spaces its requests (with --rate, or a sweep's --rates) [default: poisson].
    #[arg(long, value_enum)]
    pub arrival: Option<Arrival>,
    /// Gamma shape of the Poisson gaps: 1 is Poisson, below 1 burstier, above 1 steadier (with
    /// --rate, or a sweep's --rates).
    #[arg(long, value_name = "SHAPE")]
    pub burstiness: Option<f64>,
    /// Measure for this long (cycling through the prompts) instead of --repetitions rounds.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Seed of the Poisson schedule.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Where GPU utilisation and memory come from (never the GPU's name, UUID or serial):
    /// auto, nvml, nvidia-smi, off, or dcgm=URL[,URL…] to scrape NVIDIA dcgm-exporter on each
    /// node of a fleet (nodes are named 0, 1, … by position; URLs and hostnames are not written).
    /// Checked by `plan`, not clap, whose errors would echo the URLs.
    #[arg(long, default_value = "auto", value_name = "SOURCE")]
    pub gpu: String,
    /// How often the GPUs are sampled.
    #[arg(long, default_value_t = 500, value_name = "MS")]
    pub gpu_interval_ms: u64,
    /// The serving engine's own Prometheus endpoint(s) (vLLM, SGLang, TGI, llama-server
    /// --metrics), scraped during the run on the recorder's clock: its queue, running batch,
    /// KV cache, preemptions and its own queue-time and TTFT histograms, set beside each slow
    /// attempt on the card. Named 0, 1, … by position; URLs and hostnames are not written.
    /// Checked by `plan`, not clap, whose errors would echo the URLs.
    #[arg(long, value_name = "URL[,URL…]")]
    pub server_metrics: Option<String>,
    /// How often --server-metrics is scraped.
    #[arg(
        long,
        default_value_t = 1000,
        value_name = "MS",
        requires = "server_metrics"
    )]
    pub server_metrics_interval_ms: u64,
    /// The fixed window goodput and cost refer to, from the end of the warm-up
    /// [default: the measured span].
    #[arg(long, value_name = "SECONDS")]
    pub window: Option<f64>,
    /// What the window cost (needs --window: a cost belongs to a known length of time).
    #[arg(long, value_name = "AMOUNT", requires = "window")]
    pub window_cost: Option<f64>,
    /// Currency of --window-cost.
    #[arg(long, default_value = "USD", requires = "window_cost")]
    pub currency: String,
    /// Speak HTTP/2 over plain http:// (h2c). https:// negotiates HTTP/2 by itself.
    #[arg(long)]
    pub http2_prior_knowledge: bool,
    /// Also trust the CA certificate(s) in this PEM file for https:// (e.g. a private or
    /// company CA); Mozilla's bundled roots are always trusted.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// After Ctrl-C, how long in-flight requests may finish before they are recorded as cancelled.
    #[arg(long, default_value_t = 2.0, value_name = "SECONDS")]
    pub grace: f64,
    /// What the server's prefix cache held of this prompt set before the run, written into the
    /// contract (a warm cache and a first load answer different questions): cold (restarted or
    /// cleared), warm (the set was sent before), or unknown.
    #[arg(long, value_enum, default_value = "unknown")]
    pub cache_state: CacheState,
    /// Do not ask the server what it is before the run (its info endpoints: /v1/models,
    /// /version, /props, /info, …); the header's runtime then holds only what the streams say.
    #[arg(long)]
    pub no_runtime_probe: bool,
    /// Replay a real workload file instead of the prompt set: the Azure LLM inference trace's CSV
    /// (TIMESTAMP,ContextTokens,GeneratedTokens) or Mooncake's JSON Lines (timestamp,
    /// input_length, output_length, hash_ids). An open loop at the file's own times; each request
    /// gets a synthetic prompt of its input length (in the server's tokens where it has a
    /// tokenize endpoint, else approximate) and max_tokens = its output length. Mooncake's shared
    /// prefix blocks become shared prompt text. --warmup then counts requests.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["rate", "prompts", "duration", "concurrency", "max_tokens", "repetitions"])]
    pub workload: Option<PathBuf>,
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub conversation: crate::conversation::SessionArgs,
    /// No progress bar and no summary.
    #[arg(long, short)]
    pub quiet: bool,
    #[command(flatten)]
    pub fleet: crate::shard::ShardArgs,
}

fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    if value.is_finite() && value > 0.0 && value < 1e9 {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(format!(
            "{flag} must be a positive number of seconds, got {value}"
        ))
    }
}

/// The endpoint URL for `api`, keeping any query the base carries (e.g. an api-version).
pub fn endpoint_url(base_url: &str, api: Api) -> Result<url::Url, String> {
    let mut url = url::Url::parse(base_url.trim()).map_err(|_| {
        "--base-url is not a valid URL; expected something like http://localhost:8000/v1"
            .to_string()
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err("--base-url must be an http:// or https:// URL with a host, e.g. http://localhost:8000/v1".into());
    }
    {
        let mut segments = url.path_segments_mut().map_err(|_| {
            "--base-url cannot take a path; expected something like http://localhost:8000/v1"
                .to_string()
        })?;
        segments.pop_if_empty();
        segments.extend(api.path().split('/'));
    }
    Ok(url)
}

/// Reads the API key from the named variable; an unset or empty variable means no key.
pub fn api_key(name: &str) -> Result<Option<String>, String> {
    match std::env::var(name) {
        Ok(key) if key.trim().is_empty() => Ok(None),
        Ok(key) => Ok(Some(key.trim().to_string())),
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(format!("the variable {name} (from --api-key-env) is not valid Unicode; set it to the plain key"))
        }
    }
}

/// Checks the arguments and builds the plan.
pub fn plan(args: &RecordArgs) -> Result<Plan, String> {
    let url = endpoint_url(&args.base_url, args.api)?;
    if args.model.trim().is_empty() {
        return Err(
            "--model is empty; give the model id the server serves (see its /v1/models)".into(),
        );
    }
    let prompts = match &args.prompts {
        Some(path) => PromptSet::load(path)?,
        None => PromptSet::baseline(),
    };
    if args.max_tokens == 0 {
        return Err("--max-tokens must be at least 1".into());
    }
    if args.repetitions == 0 && args.duration.is_none() {
        return Err("--repetitions must be at least 1 (or give --duration)".into());
    }
    let timeout = seconds(args.timeout, "--timeout")?;
    let first_token_timeout = match args.first_token_timeout {
        Some(v) => seconds(v, "--first-token-timeout")?,
        None => timeout,
    };
    if first_token_timeout > timeout {
        return Err("--first-token-timeout cannot be longer than --timeout".into());
    }
    if args.ca_cert.is_some() && url.scheme() != "https" {
        return Err("--ca-cert applies to https:// URLs only; --base-url is plain http://".into());
    }
    let duration = args
        .duration
        .map(|d| seconds(d, "--duration"))
        .transpose()?;
    let replay = args
        .workload
        .as_deref()
        .map(|path| replay_plan(path, args))
        .transpose()?;
    let sessions = args.conversation.plan(args.seed, args.api)?;
    // Checked here, not by clap's `requires`: a sweep sets the rate per step from --rates.
    if args.rate.is_none() && (args.arrival.is_some() || args.burstiness.is_some()) {
        return Err("--arrival and --burstiness shape an open loop's schedule: give --rate (or a sweep's --rates)".into());
    }
    let arrival = args.arrival.unwrap_or(Arrival::Poisson);
    let load = match args.rate {
        None if replay.is_some() => Load::Replay,
        None if sessions.is_some() => Load::Sessions,
        None => {
            if args.concurrency == 0 {
                return Err("--concurrency must be at least 1".into());
            }
            Load::Closed {
                concurrency: args.concurrency,
            }
        }
        Some(rate) => {
            if !(rate.is_finite() && rate > 0.0 && rate <= 1e6) {
                return Err(format!(
                    "--rate must be a positive number of requests per second, got {rate}"
                ));
            }
            let burstiness = match (arrival, args.burstiness) {
                (_, None) => 1.0,
                (Arrival::Constant, Some(_)) => {
                    return Err(
                        "--burstiness shapes Poisson gaps; use it with --arrival poisson".into(),
                    )
                }
                (Arrival::Poisson, Some(b)) if b.is_finite() && b > 0.0 => b,
                (Arrival::Poisson, Some(b)) => {
                    return Err(format!("--burstiness must be above 0, got {b}"))
                }
            };
            Load::Open {
                rate_per_s: rate,
                arrival,
                burstiness,
                seed: args.seed,
            }
        }
    };
    if args.gpu_interval_ms < 10 {
        return Err("--gpu-interval-ms must be at least 10".into());
    }
    if args.server_metrics_interval_ms < 50 {
        return Err("--server-metrics-interval-ms must be at least 50 (a scrape reads tens of KiB and costs the engine too)".into());
    }
    let window_s = args
        .window
        .map(|w| seconds(w, "--window").map(|d| d.as_secs_f64()))
        .transpose()?;
    let window_cost = match args.window_cost {
        Some(amount) if amount.is_finite() && amount >= 0.0 => Some(Money {
            amount,
            currency: args.currency.clone(),
        }),
        Some(amount) => return Err(format!("--window-cost cannot be negative, got {amount}")),
        None => None,
    };
    let contract = format!(
        "{}|{}|{}|{load:?}|{}|{}|{duration:?}|{sessions:?}",
        args.model.trim(),
        prompts.sha256,
        args.max_tokens,
        args.repetitions,
        args.warmup
    );
    let job_index = std::env::var("JOB_COMPLETION_INDEX").ok();
    let (shard, start_at) = crate::shard::plan(&args.fleet, job_index.as_deref(), &contract)?;
    if shard.is_some() && sessions.is_some() {
        return Err("--sessions runs in one process: a session's turns cannot be split between shards (drop --shard and --shards)".into());
    }
    if let (Some(s), Load::Closed { concurrency }) = (&shard, &load) {
        if *concurrency < s.count {
            return Err(format!(
                "--concurrency {concurrency} cannot be shared by {} shards: give each at least 1",
                s.count
            ));
        }
    }
    Ok(Plan {
        shard,
        start_at,
        url,
        model: args.model.trim().to_string(),
        api: args.api,
        max_tokens: args.max_tokens,
        prompts,
        repetitions: args.repetitions,
        warmup: args.warmup,
        load,
        duration,
        timeout,
        first_token_timeout,
        http2_prior_knowledge: args.http2_prior_knowledge,
        ca_cert: args.ca_cert.clone(),
        gpu: crate::gpu::parse_source(&args.gpu)?,
        gpu_interval: Duration::from_millis(args.gpu_interval_ms),
        server_metrics: match &args.server_metrics {
            Some(list) => crate::engine_metrics::parse_sources(list)?,
            None => Vec::new(),
        },
        server_metrics_interval: Duration::from_millis(args.server_metrics_interval_ms),
        window_s,
        window_cost,
        output: args.output.clone(),
        force: args.force,
        progress: !args.quiet,
        handle_signals: true,
        grace: if args.grace == 0.0 {
            Duration::ZERO
        } else {
            seconds(args.grace, "--grace")?
        },
        cache_state: match args.cache_state {
            CacheState::Unknown => None,
            state => Some(state.name().to_string()),
        },
        ask_runtime: !args.no_runtime_probe,
        replay,
        sessions,
    })
}

/// Reads `--workload` and plans its replay; a bad file or parameter is refused before anything
/// is sent, naming the file, line and field (or the flag).
pub fn replay_plan(
    path: &std::path::Path,
    args: &RecordArgs,
) -> Result<engine::ReplayPlan, String> {
    use tracelab_core::workload;
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read --workload {}: {e}", path.display()))?;
    let w = workload::read(&path.display().to_string(), &bytes)
        .map_err(|e| format!("{e}; nothing was sent"))?;
    let replay = args.replay.replay();
    let replayed = w
        .replay(&replay)
        .map_err(|e| format!("{e}; nothing was sent"))?;
    let seen_before = workload::blocks_seen_before(&replayed.requests);
    let span_s = replayed.requests.last().map_or(0.0, |r| r.at_ms / 1000.0);
    Ok(engine::ReplayPlan {
        record: w.header_record(&replay, &replayed),
        seen_before,
        file: w.file.clone(),
        sha256: w.sha256.clone(),
        span_s,
        requests: replayed.requests,
    })
}

/// How a workload file is replayed (`--speedup`, `--from`, `--for`, `--max-idle`): the same
/// flags for `record --workload` and `simulate --workload`, read into the core's `workload::Replay`.
#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// Replay the workload this many times faster than the file (2: every gap halved).
    #[arg(long, default_value_t = 1.0, value_name = "X", requires = "workload")]
    pub speedup: f64,
    /// Start the replay this many seconds after the file's first request (file time).
    #[arg(long = "from", value_name = "SECONDS", requires = "workload")]
    pub from_s: Option<f64>,
    /// Replay this many seconds of the file (file time, before --speedup) [default: to its end].
    #[arg(long = "for", value_name = "SECONDS", requires = "workload")]
    pub for_s: Option<f64>,
    /// Cut any gap between two requests longer than this (replay seconds, after --speedup) to it.
    #[arg(long, value_name = "SECONDS", requires = "workload")]
    pub max_idle: Option<f64>,
}

impl ReplayArgs {
    /// The core's replay parameters (checked by the core when the file is replayed).
    pub fn replay(&self) -> tracelab_core::workload::Replay {
        tracelab_core::workload::Replay {
            speedup: self.speedup,
            from_s: self.from_s.unwrap_or(0.0),
            for_s: self.for_s,
            max_idle_s: self.max_idle,
        }
    }
}

/// What the server's cache held of the prompt set before the run (`--cache-state`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheState {
    /// Not known (the default): say so in the contract.
    Unknown,
    /// Restarted (or its cache cleared) before the run: no prompt of the set was cached.
    Cold,
    /// The prompt set was sent to it before this run: its prefixes may be cached.
    Warm,
}

impl CacheState {
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Unknown => "unknown",
            CacheState::Cold => "cold",
            CacheState::Warm => "warm",
        }
    }
}

/// Runs `tracelab record`; `Ok` holds the exit status ([`Exit::Done`], [`Exit::AllFailed`],
/// [`Exit::MeasuredTheClient`] or [`Exit::Interrupted`]).
pub fn run(args: RecordArgs) -> Result<u8, String> {
    if args.runs > 1 {
        return replications(args);
    }
    let plan = plan(&args)?;
    let key = api_key(&args.api_key_env)?;
    let output = plan.output.clone();
    if !args.quiet {
        let n = plan.prompts.prompts.len();
        if let Some(r) = &plan.replay {
            eprintln!(
                "tracelab: replaying {} requests of {} over {:.1} s ({} warm-up) against `{}` to {}",
                r.requests.len(),
                r.file,
                r.span_s,
                plan.warmup,
                plan.model,
                output.display()
            );
        } else if let Some(s) = &plan.sessions {
            eprintln!(
                "tracelab: recording `{}`: {} ({}, {}) ({} s think time) starting {}, {} to {}",
                plan.model,
                format::count(s.sessions as usize, "session", "sessions"),
                s.name(),
                format::count(s.total_turns() as usize, "turn", "turns"),
                s.think_s,
                if s.starts_from_file {
                    "at the file's timestamps".to_string()
                } else {
                    format!("at {} sessions/s", s.rate_per_s)
                },
                format::count(plan.warmup as usize, "warm-up request", "warm-up requests"),
                output.display()
            );
        } else {
            let what = match plan.duration {
                Some(d) => format!("for {} s", d.as_secs_f64()),
                None => format!(
                    "{} measured attempts",
                    n as u64 * u64::from(plan.repetitions)
                ),
            };
            eprintln!(
                "tracelab: recording `{}` ({} prompts, {} in {} of warm-up) {what} to {}",
                plan.model,
                plan.prompts.name,
                format::count(n * plan.warmup as usize, "request", "requests"),
                format::count(plan.warmup as usize, "round", "rounds"),
                output.display()
            );
        }
    }
    let recorded = engine::record(plan, key)?;
    if !args.quiet {
        summarise(&output, &recorded, &args.api_key_env)?;
    }
    Ok(exit_status(&recorded).code())
}

/// `FILE` with `-run-K` before its extension (`trace.jsonl` → `trace-run-2.jsonl`).
pub fn run_path(output: &std::path::Path, k: u32) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace".into());
    let name = match output.extension() {
        Some(ext) => format!("{stem}-run-{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}-run-{k}"),
    };
    output.with_file_name(name)
}

/// `--runs R`: R independent runs of one plan, then each figure between the runs. A run that
/// was stopped (Ctrl-C) ends the series; every finished run's file is kept.
fn replications(args: RecordArgs) -> Result<u8, String> {
    let total = args.runs;
    // Every file is checked before the first request, so run 3 never fails on an existing file.
    for k in 1..=total {
        let path = run_path(&args.output, k);
        crate::writer::refuse_overwrite(
            &path,
            args.force,
            &format!(" (run {k} of {total} would overwrite it)"),
        )?;
    }
    let mut files = Vec::new();
    let mut status = 0;
    for k in 1..=total {
        let mut one = args.clone();
        one.runs = 1;
        one.output = run_path(&args.output, k);
        one.seed = args.seed.wrapping_add(u64::from(k - 1));
        if !args.quiet {
            eprintln!("tracelab: run {k} of {total} → {}", one.output.display());
        }
        let code = run(one)?;
        files.push(run_path(&args.output, k));
        status = status.max(code);
        if code == 130 {
            break;
        }
    }
    let mut metrics = Vec::new();
    for f in &files {
        let bytes =
            std::fs::read(f).map_err(|e| format!("cannot read back {} ({e})", f.display()))?;
        let trace = tracelab_core::parse::parse_trace_bytes(&f.display().to_string(), &bytes)
            .map_err(|e| e.to_string())?;
        let s = tracelab_core::Settings::from_header(&trace.header);
        let ix = tracelab_core::Index::build(&trace.attempts, s.population);
        metrics.push(tracelab_core::Metrics::compute(&ix, &s));
    }
    let refs: Vec<&tracelab_core::Metrics> = metrics.iter().collect();
    crate::outln!("{} runs under one contract; each figure between the runs (one value per run, Student's t):", files.len());
    for r in tracelab_core::compare::replications::between_runs(&refs) {
        let cell = |v: Option<f64>| {
            v.map(|v| tracelab_core::format::number_in_unit(v, &r.unit, tracelab_core::Lang::En))
                .unwrap_or_else(|| "—".into())
        };
        let bounds = r
            .bounds
            .map(|b| format!("{} … {}", cell(b.lo), cell(b.hi)))
            .unwrap_or_else(|| "—".into());
        crate::outln!(
            "  {}: mean {} (95 % interval between runs {bounds}; {} runs)",
            r.name.en,
            cell(r.mean),
            r.runs
        );
    }
    crate::outln!(
        "Compare with another setup's runs: tracelab compare {} --vs …",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(status)
}

/// Stopped by a signal beats everything; then a run that measured the client (requests it
/// could not send); then a run whose measured attempts all failed.
fn exit_status(recorded: &Recorded) -> Exit {
    if recorded.interrupted {
        Exit::Interrupted
    } else if recorded.client.not_sent > 0 {
        Exit::MeasuredTheClient
    } else if recorded.measured_successes == 0 && recorded.measured_failures > 0 {
        Exit::AllFailed
    } else {
        Exit::Done
    }
}

/// The end-of-run summary, computed by the core from the file as written — the same numbers
/// `tracelab report` and the lab show.
fn summarise(path: &std::path::Path, recorded: &Recorded, key_env: &str) -> Result<(), String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read back {name}: {e}"))?;
    let trace = parse_trace_bytes(&name, &bytes)
        .map_err(|e| format!("the recorded trace does not load: {e}"))?;
    let settings = Settings::from_header(&trace.header);
    let index = Index::build(&trace.attempts, settings.population);
    let m = Metrics::compute(&index, &settings);
    let v = |f: &tracelab_core::Figure| format::value(f, Lang::En);
    let state = if recorded.interrupted {
        "stopped early (Ctrl-C or SIGTERM)"
    } else {
        "complete"
    };
    crate::outln!(
        "Recorded {} to {name} — {state}; {} warm-up excluded",
        format::count(recorded.written.attempts as usize, "attempt", "attempts"),
        m.warmup_excluded
    );
    let no_token = match m.successes_without_token {
        0 => String::new(),
        n => format!(
            "; {} without any output token",
            format::count(n, "success", "successes")
        ),
    };
    crate::outln!(
        "  TTFT  P50 {:<10} P95 {:<10} (successes, n = {}{no_token})",
        v(&m.ttft_p50),
        v(&m.ttft_p95),
        format::integer(m.ttft_p50.n.unwrap_or(0) as u64)
    );
    crate::outln!("  E2E   P50 {:<10} P95 {}", v(&m.e2e_p50), v(&m.e2e_tail));
    let failures: Vec<String> = m
        .failures_by_outcome
        .iter()
        .map(|(o, n)| format!("{o} {}", format::integer(*n as u64)))
        .collect();
    let failures = if failures.is_empty() {
        String::new()
    } else {
        format!(": {}", failures.join(", "))
    };
    crate::outln!(
        "  Failure rate {} ({} of {}{failures})",
        v(&m.failure_rate),
        format::integer(m.failures as u64),
        format::integer(m.attempts as u64)
    );
    match (
        m.output_tokens_per_s.value,
        format::remark(&m.output_tokens_per_s, Lang::En),
    ) {
        (Some(_), _) => crate::outln!(
            "  Output tokens/s {} (server usage over the window)",
            v(&m.output_tokens_per_s)
        ),
        (None, why) => crate::outln!("  Output tokens/s undefined: {}", why.unwrap_or_default()),
    }
    crate::outln!(
        "  GPU telemetry: {} ({} samples)",
        recorded.gpu_telemetry,
        recorded.written.gpu_samples
    );
    for line in
        tracelab_core::client::card_lines(&trace.header, &settings, m.itl_p50.value, Lang::En)
    {
        crate::outln!("  {line}");
    }
    // A session run: whether whole conversations were served, beside the per-attempt figures.
    if let Some(sessions) = tracelab_core::session::Sessions::of(&trace.attempts, &settings) {
        crate::outln!("  {}", sessions.session_share.line(Lang::En));
        crate::outln!("  {}", sessions.turn_rate.line(Lang::En));
    }
    crate::outln!("  Full metric card: tracelab report {name}");
    if let Some(hint) = hint(&m, key_env, &trace.attempts) {
        eprintln!("hint: {hint}");
    }
    let interrupted = trace
        .attempts
        .iter()
        .filter(|a| {
            a.detail
                .as_deref()
                .is_some_and(|d| d.starts_with("[DONE] without a finish_reason"))
        })
        .count();
    if interrupted > 0 {
        eprintln!(
            "hint: {} ended with [DONE] but no finish_reason (recorded as stream_broken). llama-cpp-python's \
             server cuts a running stream off this way when another request arrives, unless it runs with \
             --interrupt_requests False",
            format::count(interrupted, "attempt", "attempts")
        );
    }
    // The status the run exits with says which of these two lines applies.
    match exit_status(recorded) {
        status @ Exit::MeasuredTheClient => eprintln!(
            "tracelab: {} never sent: the recorder ran out of open files, so this run measured the client, not the server \
             (exit status {}); raise `ulimit -n` and record again",
            format::count(recorded.client.not_sent as usize, "measured attempt was", "measured attempts were"),
            status.code()
        ),
        status @ Exit::AllFailed => eprintln!(
            "tracelab: every measured attempt failed (exit status {}); the trace keeps them all",
            status.code()
        ),
        _ => {}
    }
    Ok(())
}

/// When every measured attempt failed the same way, say what to check.
fn hint(m: &Metrics, key_env: &str, attempts: &[tracelab_core::Attempt]) -> Option<String> {
    if m.attempts == 0 || m.successes > 0 || m.failures_by_outcome.len() != 1 {
        return None;
    }
    let outcome = m.failures_by_outcome[0].0.as_str();
    // A connection that was made and then failed (TLS, wrong protocol, not HTTP) is not a
    // server that is down: its detail says what to fix.
    let mut details = attempts
        .iter()
        .filter(|a| a.phase == tracelab_core::Phase::Measure)
        .filter_map(|a| a.detail.as_deref())
        .collect::<Vec<_>>();
    details.sort_unstable();
    details.dedup();
    let not_there = [
        "could not connect",
        "connection refused",
        "DNS lookup failed",
        "connect timed out",
        "timed out",
    ];
    Some(match outcome {
        "connect_error" if details.len() == 1 && !not_there.contains(&details[0]) => {
            format!("every attempt failed before a response: {}", details[0])
        }
        "connect_error" => "every attempt failed to connect: is the server running, and is --base-url right?".into(),
        "http_error 404" => "the server answered 404: does --base-url end with /v1 (e.g. http://localhost:8000/v1), and is --api right?".into(),
        "http_error 401" | "http_error 403" => {
            format!("the server refused the request: put the API key in the variable {key_env} (or name another with --api-key-env)")
        }
        "http_error 400" | "http_error 422" => "the server rejected the request: check --model against its /v1/models".into(),
        "timeout_before_first_token" => "no token ever came: raise --first-token-timeout, or check that the server is not stuck".into(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_urls() {
        assert_eq!(
            endpoint_url("http://h:8000/v1", Api::Chat)
                .unwrap()
                .as_str(),
            "http://h:8000/v1/chat/completions"
        );
        assert_eq!(
            endpoint_url("http://h:8000/v1/", Api::Completions)
                .unwrap()
                .as_str(),
            "http://h:8000/v1/completions"
        );
        assert_eq!(
            endpoint_url("https://h/openai/v1?api-version=2", Api::Chat)
                .unwrap()
                .as_str(),
            "https://h/openai/v1/chat/completions?api-version=2"
        );
        let secret = "ftp://user:hunter2@h/v1";
        let err = endpoint_url(secret, Api::Chat).unwrap_err();
        assert!(!err.contains("hunter2"), "the URL is never echoed: {err}");
        assert!(endpoint_url("not a url hunter2", Api::Chat)
            .unwrap_err()
            .contains("--base-url"));
    }
}
