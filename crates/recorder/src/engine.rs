//! The run: warm-up, then the measured phase in a closed loop (N workers, each sending when its
//! previous reply ended) or an open loop (sends on a schedule fixed in advance, never waiting
//! for a reply), every attempt written the moment it ends, GPU samples alongside.
//!
//! The open loop's dispatcher is an OS thread sleeping to each intended start rather than a
//! tokio timer, whose millisecond granularity would by itself cost up to 1 ms of start lag.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracelab_core::trace::{Capabilities, Conditions, Money, PrefixReuse, Window};
use tracelab_core::{write, Header, Phase, PromptSend, SessionTurn};

use crate::attempt::{self, Endpoint, Job, Measured};
use crate::clock::Clock;
use crate::gpu::{self, GpuSource, Sampler};
use crate::openai::{self, Api};
use crate::prompts::{PromptSet, Rubric};
use crate::schedule::{Arrival, Schedule};
use crate::shard::{self, ClockSync, ShardPlan};
use crate::share::{ClientTally, CpuClock};
use crate::transport::{self, Protocol, Transport};
use crate::writer::{self, TraceWriter, Written};

/// How the measured requests are paced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// `concurrency` workers, each sending its next request when the previous one ended.
    Closed { concurrency: u32 },
    /// Sends at `rate_per_s` on a fixed schedule, however slow the replies.
    Open {
        rate_per_s: f64,
        arrival: Arrival,
        burstiness: f64,
        seed: u64,
    },
    /// Sends at a workload file's own (scaled) times ([`Plan::replay`]), however slow the replies.
    Replay,
    /// Sessions ([`Plan::sessions`]) start open-loop; each one's turns follow its replies.
    Sessions,
}

/// A workload file replayed (`--workload`): its requests as the core planned them (window,
/// speed-up, idle cap applied), and the header's record of the file and the replay.
pub struct ReplayPlan {
    pub requests: Vec<tracelab_core::workload::Planned>,
    /// Per request: its prefix blocks already sent by an earlier request of the replay.
    pub seen_before: Vec<u32>,
    /// The core's `workload` record (file name, sha256, layout, replay parameters).
    pub record: serde_json::Map<String, serde_json::Value>,
    /// The file's name (without directory) and sha256, for the contract's prompt set.
    pub file: String,
    pub sha256: String,
    /// The replay's span in seconds (first send to last), for the warm-up's connections.
    pub span_s: f64,
}

/// Everything a run needs. The API key is passed separately and never stored here.
pub struct Plan {
    /// The full endpoint URL (`…/v1/chat/completions`); used for requests only, never written.
    pub url: url::Url,
    pub model: String,
    pub api: Api,
    pub max_tokens: u32,
    pub prompts: PromptSet,
    /// Measured rounds over the prompt set (ignored when `duration` is set).
    pub repetitions: u32,
    /// Warm-up rounds over the prompt set before measuring.
    pub warmup: u32,
    pub load: Load,
    /// Measure for this long instead of a number of rounds, cycling through the prompts.
    pub duration: Option<Duration>,
    pub timeout: Duration,
    pub first_token_timeout: Duration,
    pub http2_prior_knowledge: bool,
    /// Extra trusted root certificates (PEM) for https://.
    pub ca_cert: Option<PathBuf>,
    pub gpu: GpuSource,
    pub gpu_interval: Duration,
    /// The serving engine's Prometheus endpoints (`--server-metrics`), scraped every
    /// `server_metrics_interval`; never written (only their position is).
    pub server_metrics: Vec<url::Url>,
    pub server_metrics_interval: Duration,
    /// A fixed window (s); when absent the measured span is written into the header at the end.
    pub window_s: Option<f64>,
    pub window_cost: Option<Money>,
    pub output: PathBuf,
    pub force: bool,
    /// A progress bar and the GPU telemetry note on stderr.
    pub progress: bool,
    /// Stop on Ctrl-C / SIGTERM: no new requests, a grace period, then cancel the rest.
    pub handle_signals: bool,
    pub grace: Duration,
    /// This process's part of a sharded run (see [`crate::shard`]); None: the whole run.
    pub shard: Option<ShardPlan>,
    /// Wait for this wall-clock instant before the warm-up.
    pub start_at: Option<std::time::SystemTime>,
    /// What the server's cache held of the prompt set before the run, as the user states it
    /// (`cold`, `warm`); None: unknown.
    pub cache_state: Option<String>,
    /// Ask the server what it is before the run (`conditions.runtime`).
    pub ask_runtime: bool,
    /// `--workload`: the file's requests instead of the prompt set (with [`Load::Replay`]);
    /// `warmup` then counts requests, not rounds.
    pub replay: Option<ReplayPlan>,
    /// `--sessions`: synthetic conversations instead of the prompt set (with [`Load::Sessions`]);
    /// `warmup` then counts requests, not rounds.
    pub sessions: Option<crate::conversation::SessionPlan>,
}

/// The server's root (the base URL without `/v1`) and its model list, from the endpoint URL
/// (`…/v1/chat/completions`): where the engines' info endpoints live.
pub fn runtime_urls(endpoint: &url::Url) -> (url::Url, url::Url) {
    let path = endpoint.path().trim_end_matches('/');
    let base = path
        .strip_suffix("/chat/completions")
        .or_else(|| path.strip_suffix("/completions"))
        .unwrap_or(path);
    let mut models = endpoint.clone();
    models.set_path(&format!("{base}/models"));
    let mut root = endpoint.clone();
    root.set_query(None);
    root.set_path(base.strip_suffix("/v1").unwrap_or(base));
    (root, models)
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a run left behind.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The instant all the trace's times are measured from.
    pub origin: Instant,
    pub written: Written,
    pub interrupted: bool,
    /// Measured (not warm-up) attempts that succeeded and that failed.
    pub measured_successes: u64,
    pub measured_failures: u64,
    pub gpu_telemetry: &'static str,
    pub gpu_note: String,
    /// What the recorder itself did to the measurement (also in the trace's header).
    pub client: tracelab_core::trace::ClientShare,
}

/// Runs the plan on its own runtime and writes the trace.
pub fn record(plan: Plan, api_key: Option<String>) -> Result<Recorded, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("tracelab-worker")
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(record_async(plan, api_key))
}

async fn record_async(plan: Plan, api_key: Option<String>) -> Result<Recorded, String> {
    check_open_file_limit(&plan)?;
    // A connection still not up after 10 s is a connect_error; a shorter first-token timeout
    // ends the attempt first, as timeout_before_first_token (the client cannot tell which step
    // of the request was slow).
    let connection = transport::Options {
        protocol: if plan.http2_prior_knowledge {
            Protocol::Http2PriorKnowledge
        } else {
            Protocol::Negotiated
        },
        connect_timeout: (plan.first_token_timeout > CONNECT_TIMEOUT).then_some(CONNECT_TIMEOUT),
        ca_cert: plan.ca_cert.clone(),
        https: plan.url.scheme() == "https",
    };
    let client = Transport::new(&connection)?;
    let endpoint = Endpoint::new(
        client,
        plan.url.clone(),
        api_key.as_deref(),
        plan.timeout,
        plan.first_token_timeout,
    )?;

    // The engine's endpoints are asked once before anything is sent: what they are, for the header.
    let engine_scrape = if plan.server_metrics.is_empty() {
        None
    } else {
        let (scrape, notes) =
            crate::engine_metrics::detect(&plan.server_metrics, plan.server_metrics_interval)?;
        for note in notes {
            eprintln!("tracelab: {note}");
        }
        Some(scrape)
    };
    // What serves the run, asked of the server before anything is sent (nothing is written yet).
    let mut runtime = if plan.ask_runtime {
        let (root, models) = runtime_urls(&plan.url);
        let asker = crate::scrape::client("runtime")?;
        if plan.progress {
            eprintln!(
                "tracelab: asking the server what it is ({}; at most {} s; --no-runtime-probe skips this)",
                crate::runtime::ENDPOINTS,
                crate::runtime::ASK_TIMEOUT.as_secs()
            );
        }
        Some(
            crate::runtime::probe(&asker, &root, &models, endpoint.auth.as_ref(), &plan.model)
                .await,
        )
    } else {
        Some(tracelab_core::trace::Runtime {
            note: Some(
                "the server was not asked (--no-runtime-probe): only what its streams carried"
                    .into(),
            ),
            ..Default::default()
        })
    };
    // A replay's prompt lengths: measured once at the server's tokenize endpoint, where it has one.
    let replay = match &plan.replay {
        Some(r) => {
            let (lengths, ignore_eos) =
                measured_lengths(&plan, &endpoint, runtime.as_ref()).await?;
            let mut record = r.record.clone();
            record.insert("input_lengths".into(), lengths.record());
            record.insert("ignore_eos".into(), serde_json::Value::Bool(ignore_eos));
            let mut ctx = ReplayCtx {
                requests: r.requests.clone(),
                seen_before: r.seen_before.clone(),
                lengths,
                ignore_eos,
                api: plan.api,
                model: plan.model.clone(),
                bodies: None,
            };
            ctx.prebuild();
            Some((Arc::new(ctx), record))
        }
        None => None,
    };
    // Sessions' user messages: their lengths measured at the tokenize endpoint the same way.
    let sessions = match &plan.sessions {
        Some(p) => {
            let (lengths, ignore_eos) =
                measured_lengths(&plan, &endpoint, runtime.as_ref()).await?;
            let record = p.record(&lengths, ignore_eos);
            let ctx = SessionCtx {
                rubric: p.rubric().map(Arc::new),
                plan: p.clone(),
                lengths,
                ignore_eos,
                model: plan.model.clone(),
            };
            Some((Arc::new(ctx), record))
        }
        None => None,
    };
    // Everything that can fail without touching the disk has been checked; now the output.
    let writer = Arc::new(TraceWriter::create(&plan.output, plan.force)?);
    let telemetry = gpu::detect_source(&plan.gpu);
    let gpu_telemetry = telemetry.name();
    let gpu_note = telemetry.describe();
    if plan.progress {
        eprintln!("{gpu_note}");
    }

    // A shard: how well its clock is synchronised, then the shared start instant. The clock's
    // origin (and so the header's wall-clock anchor) is taken right after the wait.
    let sync = plan.shard.as_ref().map(|_| ClockSync::query());
    let mut late = None;
    let log_lines = plan.progress && plan.shard.is_some() && !std::io::stderr().is_terminal();
    // With --barrier, the instant to wait for is the one shard 0 announces once all are ready.
    let mut start_at = plan.start_at;
    if let Some(s) = plan.shard.clone().filter(|s| s.barrier.is_some()) {
        let at = plan.start_at;
        let met = tokio::task::spawn_blocking(move || {
            shard::barrier(&s, at, &|what| {
                if log_lines {
                    eprintln!(
                        "{}",
                        shard::log_line(&s, "barrier", &[("note", what.to_string())])
                    );
                }
            })
        })
        .await
        .unwrap_or_else(|_| Err("the barrier stopped unexpectedly".into()));
        match met {
            Ok(go) => start_at = Some(go),
            Err(why) => {
                let _ = std::fs::remove_file(&plan.output);
                return Err(why);
            }
        }
    }
    if let Some(at) = start_at {
        let waited = tokio::task::spawn_blocking(move || shard::wait_until(at)).await;
        match waited.unwrap_or_else(|_| Err("the wait for --start-at stopped unexpectedly".into()))
        {
            Ok(by) => late = Some(by),
            Err(why) => {
                let _ = std::fs::remove_file(&plan.output);
                return Err(why);
            }
        }
    }
    let clock = Clock::start();
    let mut shard_extra = match (&plan.shard, &sync) {
        (Some(s), Some(sync)) => shard::header_extra(s, start_at, late, sync),
        _ => serde_json::Map::new(),
    };
    if let Some((_, record)) = &replay {
        shard_extra.insert("workload".into(), serde_json::Value::Object(record.clone()));
    }
    if let Some((_, record)) = &sessions {
        shard_extra.insert("sessions".into(), record.clone());
    }
    // A shard's progress goes to its log as lines (a pod's log is no terminal for a bar).
    if let (true, Some(s)) = (log_lines, &plan.shard) {
        let late_s = late.unwrap_or_default().as_secs_f64();
        let mut fields = vec![("late_s", format!("{late_s:.3}"))];
        if late_s >= 0.001 {
            fields.push(("note", format!("started {late_s:.3} s after --start-at; every request of this shard is shifted by as much")));
        }
        eprintln!("{}", shard::log_line(s, "start", &fields));
    }
    let mut header = header(&plan, &clock, gpu_telemetry, &connection);
    header.engine_metrics = engine_scrape;
    header.conditions.runtime = runtime.clone();
    if let Err(e) = tracelab_core::parse::validate_header(&header) {
        let _ = std::fs::remove_file(&plan.output);
        return Err(format!(
            "the run's settings make an invalid trace header: {e}"
        ));
    }
    writer.header(&write::header_line_with(&header, &shard_extra))?;

    let sink = writer.clone();
    let sampler = Sampler::start(telemetry, plan.gpu_interval, clock, move |s| {
        sink.gpu(&s);
    })?;
    let engine_sink = writer.clone();
    let scrapers = crate::engine_metrics::Scrapers::start(
        &plan.server_metrics,
        plan.server_metrics_interval,
        clock,
        Arc::new(move |s| {
            engine_sink.engine(&s);
        }),
    );

    let n = plan.prompts.prompts.len() as u64;
    let (warmup_total, measured_total) = match (&plan.replay, &plan.sessions) {
        // A replay's warm-up counts requests, and it sends each of the file's requests once.
        (Some(r), _) => (u64::from(plan.warmup), Some(r.requests.len() as u64)),
        (None, Some(s)) => (u64::from(plan.warmup), Some(s.total_turns())),
        (None, None) => (
            u64::from(plan.warmup) * n,
            match plan.duration {
                Some(_) => None,
                None => Some(u64::from(plan.repetitions) * n),
            },
        ),
    };
    let progress = progress_bar(plan.progress, measured_total.map(|m| m + warmup_total));
    let ctx = Arc::new(Ctx {
        endpoint,
        clock,
        writer: writer.clone(),
        progress,
        bodies: plan
            .prompts
            .prompts
            .iter()
            .map(|p| {
                Bytes::from(openai::request_body(
                    plan.api,
                    &plan.model,
                    &p.prompt,
                    plan.max_tokens,
                ))
            })
            .collect(),
        ids: plan.prompts.prompts.iter().map(|p| p.id.clone()).collect(),
        warmup_rounds: plan.warmup,
        identities: Mutex::new(Identities::default()),
        rubrics: plan
            .prompts
            .prompts
            .iter()
            .map(|p| p.rubric.clone().map(Arc::new))
            .collect(),
        max_tokens: plan.max_tokens,
        stop: Stop::default(),
        measure_origin: AtomicU64::new(u64::MAX),
        cancel: CancellationToken::new(),
        ok: AtomicU64::new(0),
        failed: AtomicU64::new(0),
        measured_ok: AtomicU64::new(0),
        measured_failed: AtomicU64::new(0),
        measured_end_us: AtomicU64::new(0),
        warmup_e2e_max_us: AtomicU64::new(0),
        warm_connections: AtomicU64::new(0),
        tally: ClientTally::default(),
        cpu: Mutex::new(None),
        replay: replay.map(|(r, _)| r),
        sessions: sessions.map(|(s, _)| s),
    });

    let replay_times: Vec<f64> = plan
        .replay
        .as_ref()
        .map(|r| r.requests.iter().map(|q| q.at_ms).collect())
        .unwrap_or_default();
    let replay_rate = match (&plan.replay, &plan.sessions) {
        (Some(r), _) => r.requests.len() as f64 / r.span_s.max(1.0),
        // Every session in flight holds one connection at most.
        (None, Some(s)) => s.rate_per_s,
        (None, None) => 0.0,
    };
    // Held through the run and let go just before the header is rewritten: a run whose
    // requests used every file the process may open still has the few it needs at the end.
    let reserve = FileReserve::hold();
    let work = drive(
        ctx.clone(),
        warmup_total,
        measured_total,
        plan.load,
        plan.duration,
        plan.shard.clone(),
        (replay_times, replay_rate),
    );
    let lines = match (log_lines, &plan.shard) {
        (true, Some(s)) => Some(tokio::spawn(log_progress(
            ctx.clone(),
            s.clone(),
            measured_total.map(|m| s.jobs_of(m) + s.jobs_of(warmup_total)),
        ))),
        _ => None,
    };
    let interrupted = if plan.handle_signals {
        supervise(work, &ctx, plan.grace).await?
    } else {
        work.await;
        false
    };
    if let (Some(lines), Some(s)) = (lines, &plan.shard) {
        lines.abort();
        let total = measured_total.map(|m| s.jobs_of(m) + s.jobs_of(warmup_total));
        eprintln!(
            "{}",
            shard::log_line(
                s,
                if interrupted { "stopped" } else { "done" },
                &progress_fields(&ctx, total)
            )
        );
    }
    ctx.progress.finish_and_clear();
    sampler.stop();
    scrapers.stop();
    let write_error = writer.error();
    let written = writer.finish(!interrupted && write_error.is_none())?;
    if let Some(e) = write_error {
        return Err(e);
    }

    // The window starts where measuring started (after the warm-up). Without a fixed length the
    // measured span is the window, so goodput and tokens/s are defined and `tracelab report`
    // shows the same figures as this run's summary. The recorder's own share goes in too.
    let cpu = ctx
        .cpu
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .and_then(CpuClock::cores_busy);
    let (measured_ok, measured_failed) = (
        ctx.measured_ok.load(Ordering::Relaxed),
        ctx.measured_failed.load(Ordering::Relaxed),
    );
    let warm = ctx.warm_connections.load(Ordering::Relaxed);
    let client = ctx.tally.share(
        measured_ok + measured_failed,
        measured_failed,
        warm,
        cpu,
        ctx.endpoint.transport.closes_after_reply(),
    );
    let end_us = ctx.measured_end_us.load(Ordering::Relaxed);
    if let (Some(origin_ms), true) = (ctx.measure_origin_ms(), end_us > 0) {
        let span_s = ((end_us as f64 / 1000.0 - origin_ms) * 1000.0).round() / 1e6;
        let length_s = plan.window_s.unwrap_or(span_s);
        if length_s > 0.0 {
            header.window = Some(Window {
                start_ms: (origin_ms * 1000.0).round() / 1000.0,
                length_s,
            });
        }
    }
    if client.measured > 0 {
        header.client = Some(client.clone());
    }
    if let Some(r) = runtime.as_mut() {
        let ids = ctx.identities.lock().unwrap_or_else(|p| p.into_inner());
        crate::runtime::add_streams(r, &ids.fingerprints, &ids.models);
        header.conditions.runtime = Some(r.clone());
    }
    drop(reserve);
    if header.window.is_some() || header.client.is_some() || header.conditions.runtime.is_some() {
        writer::replace_header(
            &plan.output,
            &write::header_line_with(&header, &shard_extra),
        )?;
    }
    Ok(Recorded {
        origin: clock.origin(),
        written,
        interrupted,
        measured_successes: measured_ok,
        measured_failures: measured_failed,
        gpu_telemetry,
        gpu_note,
        client,
    })
}

/// Open files kept aside for the end of a run: rewriting the header reads the trace back and
/// writes a temporary copy (two files), and `record` then reads it once more for its summary.
/// A run out of open files (its in-flight requests hold every one; they are kept as `not_sent`)
/// would otherwise lose its header's `client` record with "Too many open files".
struct FileReserve {
    _files: Vec<std::fs::File>,
}

impl FileReserve {
    const FILES: usize = 4;

    fn hold() -> FileReserve {
        FileReserve {
            _files: (0..Self::FILES)
                .filter_map(|_| std::fs::File::open(std::env::current_exe().ok()?).ok())
                .collect(),
        }
    }
}

fn header(
    plan: &Plan,
    clock: &Clock,
    gpu_telemetry: &str,
    connection: &transport::Options,
) -> Header {
    let (arrival, concurrency, rate, burstiness, seed) = match plan.load {
        Load::Closed { concurrency } => ("closed", Some(concurrency), None, None, None),
        Load::Open {
            rate_per_s,
            arrival,
            burstiness,
            seed,
        } => (
            arrival.name(),
            None,
            Some(rate_per_s),
            (arrival == Arrival::Poisson).then_some(burstiness),
            (arrival == Arrival::Poisson).then_some(seed),
        ),
        Load::Replay => ("workload", None, None, None, None),
        // A file's own schedule: its sessions start at their first turns' timestamps.
        Load::Sessions if plan.sessions.as_ref().is_some_and(|s| s.starts_from_file) => {
            ("workload", None, None, None, None)
        }
        // Sessions arrive as a Poisson stream: the rate is sessions per second.
        Load::Sessions => {
            let s = plan.sessions.as_ref();
            (
                "poisson",
                None,
                s.map(|s| s.rate_per_s),
                Some(1.0),
                s.map(|s| s.seed),
            )
        }
    };
    let replay = plan.replay.as_ref();
    let sessions = plan.sessions.as_ref();
    let (prompt_set, prompt_set_sha256) = match (replay, sessions) {
        (Some(r), _) => (format!("workload:{}", r.file), r.sha256.clone()),
        (None, Some(s)) => (s.name(), s.sha256()),
        (None, None) => (plan.prompts.name.clone(), plan.prompts.sha256.clone()),
    };
    Header {
        wall_clock_anchor_utc: clock.anchor_utc(),
        conditions: Conditions {
            model: Some(plan.model.clone()),
            api: Some(plan.api.name().into()),
            // A replay's max_tokens is each request's own output length (its attempts keep it).
            max_tokens: match sessions {
                Some(s) => s.answer_tokens,
                None => replay.is_none().then_some(plan.max_tokens),
            },
            prompt_set: Some(prompt_set),
            prompt_set_sha256: Some(prompt_set_sha256),
            repetitions: (plan.duration.is_none() && replay.is_none() && sessions.is_none())
                .then_some(plan.repetitions),
            warmup: Some(plan.warmup),
            arrival: Some(arrival.into()),
            concurrency,
            rate_per_s: rate,
            burstiness,
            seed,
            timeout_s: Some(plan.timeout.as_secs_f64()),
            first_token_timeout_s: Some(plan.first_token_timeout.as_secs_f64()),
            connection: Some(connection.policy()),
            runtime: None,
            // A prompt sent more than once (rounds, a warm-up of the same set, or cycling for a
            // duration) may be served from the server's prefix cache the second time.
            prefix_reuse: Some(PrefixReuse {
                by_design: match (replay, sessions) {
                    // A replay sends the same text again only where the file's requests share blocks.
                    (Some(r), _) => r.seen_before.iter().any(|&b| b > 0),
                    // Every later turn resends its session's earlier turns.
                    (None, Some(s)) => s.turns > 1,
                    (None, None) => {
                        plan.repetitions > 1 || plan.warmup > 0 || plan.duration.is_some()
                    }
                },
                before_run: plan.cache_state.clone().unwrap_or_else(|| "unknown".into()),
            }),
        },
        capabilities: Capabilities {
            workload_executed: true,
            inference_benchmark: true,
            gpu_telemetry: gpu_telemetry.to_string(),
        },
        window: plan.window_s.map(|length_s| Window {
            start_ms: 0.0,
            length_s,
        }),
        window_cost: plan.window_cost.clone(),
        ..Header::default()
    }
}

/// How often a shard writes a `tracelab progress` line.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// `t=… done=…/… ok=… failed=…` of a progress line.
fn progress_fields(ctx: &Ctx, total: Option<u64>) -> Vec<(&'static str, String)> {
    let (ok, failed) = (
        ctx.ok.load(Ordering::Relaxed),
        ctx.failed.load(Ordering::Relaxed),
    );
    let done = match total {
        Some(total) => format!("{}/{total}", ok + failed),
        None => (ok + failed).to_string(),
    };
    vec![
        ("t_s", format!("{:.1}", ctx.clock.now_ms() / 1000.0)),
        ("done", done),
        ("ok", ok.to_string()),
        ("failed", failed.to_string()),
    ]
}

async fn log_progress(ctx: Arc<Ctx>, shard: ShardPlan, total: Option<u64>) {
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    tick.tick().await;
    loop {
        tick.tick().await;
        eprintln!(
            "{}",
            shard::log_line(&shard, "progress", &progress_fields(&ctx, total))
        );
    }
}

fn progress_bar(enabled: bool, total: Option<u64>) -> ProgressBar {
    if !enabled {
        return ProgressBar::hidden();
    }
    let (bar, template) = match total {
        Some(total) => (
            ProgressBar::new(total),
            "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} attempts  {msg}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{spinner} {elapsed_precise} {pos} attempts  {msg}",
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// State shared by every task of the run.
struct Ctx {
    endpoint: Endpoint,
    clock: Clock,
    writer: Arc<TraceWriter>,
    progress: ProgressBar,
    /// One prepared request body per prompt.
    bodies: Vec<Bytes>,
    ids: Vec<String>,
    /// Warm-up rounds: after them every measured send is a repeat.
    warmup_rounds: u32,
    /// The distinct `system_fingerprint`s and served model names the streams carried.
    identities: Mutex<Identities>,
    rubrics: Vec<Option<Arc<Rubric>>>,
    max_tokens: u32,
    stop: Stop,
    /// When the measured phase began, in ms from the origin (f64 bits; u64::MAX while unset).
    measure_origin: AtomicU64,
    /// Fired after the grace period: in-flight attempts end as `cancelled`.
    cancel: CancellationToken,
    ok: AtomicU64,
    failed: AtomicU64,
    measured_ok: AtomicU64,
    measured_failed: AtomicU64,
    /// The latest end of a measured attempt, in µs from the origin (for the window).
    measured_end_us: AtomicU64,
    /// The slowest warm-up attempt (µs): how many connections an open loop will hold.
    warmup_e2e_max_us: AtomicU64,
    /// Connections open when measuring began.
    warm_connections: AtomicU64,
    /// The recorder's own share of the measured attempts.
    tally: ClientTally,
    /// The recorder's CPU time from the start of measuring.
    cpu: Mutex<Option<CpuClock>>,
    /// `--workload`: the file's requests replace the prompt set.
    replay: Option<Arc<ReplayCtx>>,
    /// `--sessions`: conversations replace the prompt set.
    sessions: Option<Arc<SessionCtx>>,
}

/// What a session run's turns are made from.
struct SessionCtx {
    plan: crate::conversation::SessionPlan,
    lengths: crate::workload::Lengths,
    ignore_eos: bool,
    model: String,
    /// Every turn's reply is judged by it (`--turn-min-chars`).
    rubric: Option<Arc<Rubric>>,
}

/// What a replay's jobs are made from: each body is built when its job is, so a long file's
/// prompts (Mooncake's average 12,000 tokens) are never all held at once.
struct ReplayCtx {
    requests: Vec<tracelab_core::workload::Planned>,
    seen_before: Vec<u32>,
    lengths: crate::workload::Lengths,
    ignore_eos: bool,
    api: crate::openai::Api,
    model: String,
    /// The measured requests' bodies, built before measuring when they fit in
    /// [`PREBUILT_BYTES`]: a burst of long prompts (Mooncake sends several 40,000-token prompts
    /// in one millisecond) would otherwise make the dispatcher late by the time it takes to write them.
    bodies: Option<Vec<Bytes>>,
}

/// The most prompt text a replay builds before measuring (about 6 bytes a word).
const PREBUILT_BYTES: f64 = 512.0 * 1024.0 * 1024.0;

impl ReplayCtx {
    fn prebuild(&mut self) {
        let words: f64 = self
            .requests
            .iter()
            .map(|r| f64::from(r.input_tokens) * self.lengths.words_per_token)
            .sum();
        if words * 6.0 <= PREBUILT_BYTES {
            let bodies = (0..self.requests.len() as u64)
                .map(|k| self.job(Phase::Measure, k, 0.0).body)
                .collect();
            self.bodies = Some(bodies);
        }
    }

    fn job(&self, phase: Phase, k: u64, intended_ms: f64) -> Job {
        use crate::workload::{body, prompt, Space};
        let i = (k as usize) % self.requests.len().max(1);
        let r = &self.requests[i];
        // The warm-up sends the first requests' lengths in text of its own, so it warms the
        // connections and the engine but not the replay's prefix cache.
        let (space, id) = match phase {
            Phase::Warmup => (Space::Warmup, format!("warmup-{k}")),
            Phase::Measure => (Space::Replay, format!("req-{}", r.index)),
        };
        let built = self
            .bodies
            .as_ref()
            .filter(|_| phase == Phase::Measure)
            .map(|b| b[i].clone());
        let body = built.unwrap_or_else(|| {
            Bytes::from(body(
                self.api,
                &self.model,
                &prompt(space, r, &self.lengths),
                r.output_tokens,
                self.ignore_eos,
            ))
        });
        Job {
            id,
            phase,
            intended_ms,
            body,
            rubric: None,
            max_tokens: Some(r.output_tokens),
            prompt: (phase == Phase::Measure).then(|| PromptSend {
                index: u32::try_from(r.index).unwrap_or(u32::MAX),
                repetition: 1,
                repeat: self.seen_before[i] > 0,
                cached_tokens: None,
            }),
            intended_tokens: Some((r.input_tokens, r.output_tokens)),
            session: None,
        }
    }
}

/// A replay's or a session workload's lengths: words per token measured once at the server's
/// tokenize endpoint (said on stderr), and whether its engine takes `ignore_eos`.
async fn measured_lengths(
    plan: &Plan,
    endpoint: &Endpoint,
    runtime: Option<&tracelab_core::trace::Runtime>,
) -> Result<(crate::workload::Lengths, bool), String> {
    let (root, _) = runtime_urls(&plan.url);
    let asker = crate::scrape::client("tokenize")?;
    let lengths = calibrate(&asker, &root, endpoint.auth.as_ref(), &plan.model).await;
    if plan.progress {
        eprintln!(
            "tracelab: {}",
            lengths.record()["note"].as_str().unwrap_or_default()
        );
    }
    let engine = runtime.and_then(|r| r.engine.as_deref());
    Ok((lengths, crate::workload::takes_ignore_eos(engine)))
}

/// Words per token from the server's tokenize endpoint, the first that answers with a count;
/// else one word per token, said to be approximate.
async fn calibrate(
    client: &Transport,
    root: &url::Url,
    auth: Option<&hyper::header::HeaderValue>,
    model: &str,
) -> crate::workload::Lengths {
    let text = crate::workload::sample();
    let mut asked = Vec::new();
    for (path, body) in crate::workload::tokenize_requests(model, &text) {
        let mut url = root.clone();
        let base = url.path().trim_end_matches('/').to_string();
        url.set_path(&format!("{base}{path}"));
        match crate::runtime::post_json(client, &url, auth, body).await {
            Ok(answer) => match crate::workload::count_in(&answer) {
                Some(tokens) if tokens > 0 => {
                    asked.push(format!("{path} 200"));
                    let words_per_token = crate::workload::SAMPLE_WORDS as f64 / tokens as f64;
                    return crate::workload::Lengths {
                        words_per_token,
                        measured_at: Some(path.to_string()),
                        asked,
                    };
                }
                _ => asked.push(format!("{path} 200, no token count")),
            },
            Err(said) => asked.push(format!("{path} {said}")),
        }
    }
    crate::workload::Lengths::approximate(asked)
}

/// The distinct identities the streams carried (a few at most; capped so a server that puts a
/// new fingerprint in every reply cannot grow it).
#[derive(Default)]
struct Identities {
    fingerprints: Vec<String>,
    models: Vec<String>,
}

impl Identities {
    const MAX: usize = 8;

    fn note(&mut self, id: &crate::openai::ChunkIdentity) {
        for (value, list) in [
            (&id.system_fingerprint, &mut self.fingerprints),
            (&id.model, &mut self.models),
        ] {
            if let Some(v) = value {
                if list.len() < Self::MAX && !list.contains(v) {
                    list.push(v.clone());
                }
            }
        }
    }
}

/// "Send nothing more", observable from tasks and from the dispatcher thread, whose sleep it
/// interrupts.
#[derive(Default)]
struct Stop {
    flag: AtomicBool,
    lock: Mutex<bool>,
    wake: Condvar,
}

impl Stop {
    fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.flag.store(true, Ordering::Relaxed);
        *self.lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.wake.notify_all();
    }

    /// Sleeps until `until` unless stopped first; false when stopped.
    fn sleep_until(&self, until: Instant) -> bool {
        let mut stopped = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if *stopped {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            stopped = self
                .wake
                .wait_timeout(stopped, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Ctx {
    fn set_measure_origin(&self, ms: f64) {
        self.measure_origin.store(ms.to_bits(), Ordering::Relaxed);
    }

    fn measure_origin_ms(&self) -> Option<f64> {
        match self.measure_origin.load(Ordering::Relaxed) {
            u64::MAX => None,
            bits => Some(f64::from_bits(bits)),
        }
    }

    fn job(&self, phase: Phase, k: u64, intended_ms: f64) -> Job {
        if let Some(replay) = &self.replay {
            return replay.job(phase, k, intended_ms);
        }
        if let Some(sessions) = &self.sessions {
            // Only the warm-up comes here: a session's turns are made by its own task.
            let mut one = crate::conversation::Conversation::default();
            one.user(sessions.plan.warmup_message(k, &sessions.lengths));
            return Job {
                id: format!("warmup-{k}"),
                phase,
                intended_ms,
                body: Bytes::from(one.body(
                    &sessions.model,
                    sessions.plan.warmup_max_tokens(),
                    sessions.ignore_eos,
                )),
                rubric: None,
                max_tokens: Some(sessions.plan.warmup_max_tokens()),
                prompt: None,
                intended_tokens: None,
                session: None,
            };
        }
        let n = self.bodies.len() as u64;
        let i = (k % n) as usize;
        let round = k / n + 1;
        let tag = match phase {
            Phase::Warmup => 'w',
            Phase::Measure => 'r',
        };
        // Sent before in this run: an earlier round of its phase, or any warm-up round.
        let repeat = round > 1 || (phase == Phase::Measure && self.warmup_rounds > 0);
        Job {
            id: format!("{}.{tag}{round}", self.ids[i]),
            phase,
            intended_ms,
            body: self.bodies[i].clone(),
            rubric: self.rubrics[i].clone(),
            max_tokens: Some(self.max_tokens),
            prompt: Some(PromptSend {
                index: i as u32,
                repetition: u32::try_from(round).unwrap_or(u32::MAX),
                repeat,
                cached_tokens: None,
            }),
            intended_tokens: None,
            session: None,
        }
    }

    async fn send(&self, job: Job) {
        let measured = attempt::run(&self.endpoint, &self.clock, job, &self.cancel).await;
        self.keep(measured);
    }

    fn keep(&self, m: Measured) {
        if m.identity.model.is_some() || m.identity.system_fingerprint.is_some() {
            let mut ids = self.identities.lock().unwrap_or_else(|p| p.into_inner());
            ids.note(&m.identity);
        }
        if !self.writer.attempt(&m.line()) {
            // The file cannot take more: stop sending, the error is reported at the end.
            self.stop.set();
        }
        let a = &m.attempt;
        if a.phase == Phase::Warmup {
            self.warmup_e2e_max_us.fetch_max(
                (a.e2e_ms.unwrap_or(0.0) * 1000.0).round() as u64,
                Ordering::Relaxed,
            );
        }
        if a.phase == Phase::Measure {
            self.tally.add(&m);
            let counter = if a.outcome.is_success() {
                &self.measured_ok
            } else {
                &self.measured_failed
            };
            counter.fetch_add(1, Ordering::Relaxed);
            let end_ms = a.start_ms.unwrap_or(0.0) + a.e2e_ms.unwrap_or(0.0);
            self.measured_end_us
                .fetch_max((end_ms * 1000.0).round() as u64, Ordering::Relaxed);
        }
        let (ok, failed) = if a.outcome.is_success() {
            (
                self.ok.fetch_add(1, Ordering::Relaxed) + 1,
                self.failed.load(Ordering::Relaxed),
            )
        } else {
            (
                self.ok.load(Ordering::Relaxed),
                self.failed.fetch_add(1, Ordering::Relaxed) + 1,
            )
        };
        self.progress.inc(1);
        self.progress
            .set_message(format!("{ok} ok, {failed} failed"));
    }
}

async fn drive(
    ctx: Arc<Ctx>,
    warmup_total: u64,
    measured_total: Option<u64>,
    load: Load,
    duration: Option<Duration>,
    shard: Option<ShardPlan>,
    (replay_times, replay_rate): (Vec<f64>, f64),
) {
    // A shard takes global jobs k ≡ index (mod count) and its share of the workers.
    let share = |workers: u32| shard.as_ref().map_or(workers, |s| s.share(workers).max(1));
    let stride = shard
        .as_ref()
        .map_or((1, 0), |s| (u64::from(s.count), u64::from(s.index)));
    if warmup_total > 0 {
        let concurrency = match load {
            Load::Closed { concurrency } => share(concurrency),
            Load::Open { .. } | Load::Replay | Load::Sessions => 1,
        };
        closed_loop(
            ctx.clone(),
            Phase::Warmup,
            Some(warmup_total),
            concurrency,
            None,
            stride,
        )
        .await;
        // Open the connections the measured phase will use, so no measured time carries a
        // connect: a closed loop holds one per worker; an open loop about rate × the slowest
        // warm-up reply (every request in flight holds one), plus one.
        let wanted = match load {
            Load::Closed { .. } => concurrency as usize,
            Load::Open { .. } | Load::Replay | Load::Sessions => {
                let rate_per_s = match load {
                    Load::Open { rate_per_s, .. } => rate_per_s,
                    _ => replay_rate,
                };
                let rate = rate_per_s / stride.0 as f64;
                let slowest_s = ctx.warmup_e2e_max_us.load(Ordering::Relaxed) as f64 / 1e6;
                ((rate * slowest_s).ceil() as usize + 1).min(MAX_WARM_CONNECTIONS)
            }
        };
        let open = ctx
            .endpoint
            .transport
            .warm(&ctx.endpoint.url, wanted.min(warm_room()))
            .await;
        ctx.warm_connections.store(open as u64, Ordering::Relaxed);
    }
    if ctx.stop.is_set() {
        return;
    }
    *ctx.cpu.lock().unwrap_or_else(|p| p.into_inner()) = Some(CpuClock::start());
    let origin_ms = ctx.clock.now_ms();
    ctx.set_measure_origin(origin_ms);
    let deadline = duration.map(|d| ctx.clock.at(origin_ms) + d);
    match load {
        Load::Closed { concurrency } => {
            closed_loop(
                ctx,
                Phase::Measure,
                measured_total,
                share(concurrency),
                deadline,
                stride,
            )
            .await
        }
        Load::Open {
            rate_per_s,
            arrival,
            burstiness,
            seed,
        } => {
            let schedule = Schedule::new(arrival, rate_per_s, burstiness, seed);
            open_loop(ctx, schedule, origin_ms, measured_total, duration, stride).await
        }
        Load::Replay => {
            open_loop(
                ctx,
                replay_times.into_iter(),
                origin_ms,
                measured_total,
                duration,
                stride,
            )
            .await
        }
        Load::Sessions => session_loop(ctx, origin_ms).await,
    }
}

/// Sessions start on a Poisson schedule (the dispatcher thread, as the open loop); each runs
/// its turns in order on its own task: turn k + 1 is intended `think_s` after turn k's reply
/// ended, and carries the conversation so far.
async fn session_loop(ctx: Arc<Ctx>, origin_ms: f64) {
    let Some(sessions) = ctx.sessions.clone() else {
        return;
    };
    let p = sessions.plan.clone();
    let starts = p.starts_ms();
    let alarm = Arc::new(TurnAlarm::default());
    let ringer = {
        let alarm = alarm.clone();
        std::thread::Builder::new()
            .name("tracelab-turns".into())
            .spawn(move || alarm.ring())
    };
    let tracker = TaskTracker::new();
    let handle = tokio::runtime::Handle::current();
    let (dispatch_ctx, dispatch_tracker, dispatch_alarm) =
        (ctx.clone(), tracker.clone(), alarm.clone());
    let dispatcher = spawn_dispatcher(move || {
        let (ctx, alarm) = (dispatch_ctx, dispatch_alarm);
        for (s, at_ms) in starts.into_iter().enumerate() {
            let intended_ms = origin_ms + at_ms;
            if !ctx.stop.sleep_until(ctx.clock.at(intended_ms)) {
                break;
            }
            let (task_ctx, task_sessions, task_alarm) =
                (ctx.clone(), sessions.clone(), alarm.clone());
            dispatch_tracker.spawn_on(
                async move {
                    run_session(task_ctx, task_sessions, task_alarm, s as u32, intended_ms).await
                },
                &handle,
            );
        }
    });
    wait_for_dispatch(&ctx, dispatcher, &tracker).await;
    alarm.close();
    if let Ok(thread) = ringer {
        let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    }
}

/// Wakes each session's task at its next turn's intended instant, from one OS thread with 1 µs
/// timer slack as the open loop's dispatcher: a tokio timer's millisecond granularity would
/// start every later turn up to 1 ms after the reply plus the think time.
#[derive(Default)]
struct TurnAlarm {
    queue: Mutex<AlarmQueue>,
    wake: Condvar,
}

#[derive(Default)]
struct AlarmQueue {
    /// (when, ticket), earliest first.
    due: std::collections::BinaryHeap<std::cmp::Reverse<(Instant, u64)>>,
    waiting: std::collections::HashMap<u64, tokio::sync::oneshot::Sender<()>>,
    next: u64,
    closed: bool,
}

impl TurnAlarm {
    /// Resolves at `at` (false once the alarm is closed).
    async fn at(&self, at: Instant) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        {
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            if q.closed {
                return false;
            }
            let ticket = q.next;
            q.next += 1;
            q.due.push(std::cmp::Reverse((at, ticket)));
            q.waiting.insert(ticket, tx);
        }
        self.wake.notify_one();
        rx.await.is_ok()
    }

    fn close(&self) {
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.wake.notify_all();
    }

    /// The ringing thread: sleeps to the earliest instant asked for, then wakes its task.
    fn ring(&self) {
        precise_sleeps();
        let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if q.closed {
                q.waiting.clear();
                return;
            }
            let now = Instant::now();
            match q.due.peek().map(|r| r.0) {
                None => q = self.wake.wait(q).unwrap_or_else(|p| p.into_inner()),
                Some((at, ticket)) if at <= now => {
                    q.due.pop();
                    if let Some(tx) = q.waiting.remove(&ticket) {
                        let _ = tx.send(());
                    }
                }
                Some((at, _)) => {
                    q = self
                        .wake
                        .wait_timeout(q, at - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
        }
    }
}

/// One session's turns, from its arrival at `start_ms`.
async fn run_session(
    ctx: Arc<Ctx>,
    sessions: Arc<SessionCtx>,
    alarm: Arc<TurnAlarm>,
    s: u32,
    start_ms: f64,
) {
    use crate::conversation::Conversation;
    let p = &sessions.plan;
    let session_id = p.session_id(s);
    let mut conversation = Conversation::default();
    let mut intended_ms = start_ms;
    let mut history_tokens = Some(0u32);
    for turn in 1..=p.turns_of(s) {
        if turn > 1 {
            tokio::select! {
                rang = alarm.at(ctx.clock.at(intended_ms)) => if !rang { return },
                () = ctx.cancel.cancelled() => return,
            }
        }
        if ctx.stop.is_set() {
            return;
        }
        let server_history = p.add_turn(&mut conversation, s, turn, &sessions.lengths);
        let max_tokens = p.max_tokens(s, turn, &sessions.lengths);
        let job = Job {
            id: format!("{session_id}.t{turn}"),
            phase: Phase::Measure,
            intended_ms,
            body: Bytes::from(conversation.body(&sessions.model, max_tokens, sessions.ignore_eos)),
            rubric: sessions.rubric.clone(),
            max_tokens: Some(max_tokens),
            prompt: None,
            intended_tokens: None,
            session: Some(SessionTurn {
                session_id: session_id.clone(),
                turn,
                // A file's whole message array carries the file's history, not the server's.
                history_tokens: history_tokens.filter(|_| server_history),
                cached_tokens: None,
            }),
        };
        let measured = attempt::run(&ctx.endpoint, &ctx.clock, job, &ctx.cancel).await;
        let a = &measured.attempt;
        let ended_ms = a.start_ms.unwrap_or(intended_ms) + a.e2e_ms.unwrap_or(0.0);
        // What the next turn carries, in the server's own counts: this turn's whole prompt and
        // its reply (unknown when the server reported neither).
        history_tokens = match (a.input_tokens, a.output_tokens) {
            (Some(i), Some(o)) if a.tokens_from_usage => Some(i.saturating_add(o)),
            _ => None,
        };
        // The reply stays with the session; the trace line keeps only its hash.
        let answer = measured.answer.clone();
        ctx.keep(measured);
        // A failed turn has no reply to resend: the user's conversation ends here, and its
        // turns never sent leave the progress bar's total.
        let Some(answer) = answer else {
            ctx.progress.inc(u64::from(p.turns_of(s) - turn));
            return;
        };
        if server_history {
            conversation.assistant(answer);
        }
        intended_ms = p.turn_at_ms(s, turn + 1, start_ms, ended_ms);
    }
}

/// `stride` = (shard count, shard index): the local n-th job is global job n·count + index.
async fn closed_loop(
    ctx: Arc<Ctx>,
    phase: Phase,
    total: Option<u64>,
    concurrency: u32,
    deadline: Option<Instant>,
    stride: (u64, u64),
) {
    let next = Arc::new(AtomicU64::new(0));
    let tracker = TaskTracker::new();
    for _ in 0..concurrency.max(1) {
        let (ctx, next) = (ctx.clone(), next.clone());
        tracker.spawn(async move {
            loop {
                if ctx.stop.is_set() || deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed) * stride.0 + stride.1;
                if total.is_some_and(|t| k >= t) {
                    break;
                }
                // A closed loop intends to send the moment a worker is free.
                let job = ctx.job(phase, k, ctx.clock.now_ms());
                ctx.send(job).await;
            }
        });
    }
    tracker.close();
    tracker.wait().await;
}

/// A shard (`stride` = (count, index)) keeps every count-th arrival of the one schedule.
async fn open_loop(
    ctx: Arc<Ctx>,
    schedule: impl Iterator<Item = f64> + Send + 'static,
    origin_ms: f64,
    total: Option<u64>,
    duration: Option<Duration>,
    stride: (u64, u64),
) {
    let tracker = TaskTracker::new();
    let handle = tokio::runtime::Handle::current();
    let limit_ms = duration.map(|d| d.as_secs_f64() * 1000.0);
    let (dispatch_ctx, dispatch_tracker) = (ctx.clone(), tracker.clone());
    let dispatcher = spawn_dispatcher(move || {
        let ctx = dispatch_ctx;
        for (k, at_ms) in schedule.enumerate() {
            let k = k as u64;
            if total.is_some_and(|t| k >= t) || limit_ms.is_some_and(|l| at_ms >= l) {
                break;
            }
            if k % stride.0 != stride.1 {
                continue;
            }
            let intended_ms = origin_ms + at_ms;
            // The job (a replay builds its prompt here) is made before the sleep, not after it.
            let job = ctx.job(Phase::Measure, k, intended_ms);
            if !ctx.stop.sleep_until(ctx.clock.at(intended_ms)) {
                break;
            }
            let task_ctx = ctx.clone();
            dispatch_tracker.spawn_on(async move { task_ctx.send(job).await }, &handle);
        }
    });
    wait_for_dispatch(&ctx, dispatcher, &tracker).await;
}

/// Lifts the soft open-file limit to the hard one and returns the limit now in force (None
/// where it cannot be read or is unlimited): every request in flight holds a socket.
pub fn raise_open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    // SAFETY: getrlimit/setrlimit on this process with an initialised struct.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
        // `rlim_t` is u64 on Linux but not on every target this compiles for.
        #[allow(clippy::unnecessary_cast)]
        (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

/// The most connections a warm-up opens for an open loop.
const MAX_WARM_CONNECTIONS: usize = 4096;

/// Files the recorder will open besides its sockets once the run starts: the trace, the GPU
/// telemetry (NVML or an nvidia-smi pipe), the runtime's worker wake-ups, with room to spare.
const FILES_TO_COME: u64 = 16;

/// File descriptors this process holds now (Linux: /proc/self/fd; elsewhere a safe guess).
fn files_open_now() -> u64 {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| d.count() as u64)
        .unwrap_or(64)
}

/// How many sockets still fit under the open-file limit.
fn socket_room() -> Option<(u64, u64, u64)> {
    let limit = raise_open_file_limit()?;
    let reserve = files_open_now() + FILES_TO_COME;
    Some((limit, reserve, limit.saturating_sub(reserve)))
}

/// Connections a warm-up may open, leaving the rest of the open-file limit to the run.
fn warm_room() -> usize {
    socket_room().map_or(MAX_WARM_CONNECTIONS, |(_, _, room)| room as usize)
}

/// Running out of file descriptors mid-run would read as server failures, so a limit too low
/// for the load is refused before anything is sent (closed loop: one socket per worker), or
/// warned about (open loop: in flight ≈ rate × how long a reply takes, unknown in advance).
/// The reserve is what this process really holds now, plus the few files the run opens.
fn check_open_file_limit(plan: &Plan) -> Result<(), String> {
    let Some((limit, reserve, room)) = socket_room() else {
        return Ok(());
    };
    match plan.load {
        Load::Closed { concurrency } if u64::from(concurrency) > room && room == 0 => Err(format!(
            "the open-file limit is {limit}, and the recorder already needs {reserve} files of its own: not even one \
             connection fits. Raise it (`ulimit -n {}` or more)",
            u64::from(concurrency) + reserve
        )),
        Load::Closed { concurrency } if u64::from(concurrency) > room => Err(format!(
            "the open-file limit is {limit}, too low for --concurrency {concurrency}: each request in flight holds a \
             connection, and running out would be recorded as connect errors that are not the server's. Raise it \
             (`ulimit -n {}` or more) or lower --concurrency to {room} or less",
            u64::from(concurrency) + reserve
        )),
        Load::Open { rate_per_s, .. } if plan.progress && rate_per_s * plan.timeout.as_secs_f64() > room as f64 => {
            eprintln!(
                "tracelab: note: the open-file limit is {limit}; if more than {room} requests are ever in flight at \
                 once (rate × reply time), the extra ones fail as `connect_error` with detail \
                 \"the recorder ran out of open files\" — raise `ulimit -n` to be sure"
            );
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The open loop's dispatcher: a thread of its own with precise sleeps, so a request (or a
/// session) leaves at its intended instant whatever the runtime's workers are doing.
fn spawn_dispatcher(
    dispatch: impl FnOnce() + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("tracelab-dispatch".into())
        .spawn(move || {
            precise_sleeps();
            dispatch();
        })
}

/// Waits for the dispatcher to send its last request (a dispatcher that could not start stops
/// the run), then for every task it spawned.
async fn wait_for_dispatch(
    ctx: &Ctx,
    dispatcher: std::io::Result<std::thread::JoinHandle<()>>,
    tracker: &TaskTracker,
) {
    match dispatcher {
        Ok(thread) => {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
        Err(_) => ctx.stop.set(),
    }
    tracker.close();
    tracker.wait().await;
}

/// Linux lets a sleeping thread wake up to 50 µs late by default (timer slack) to batch
/// wake-ups; the dispatcher asks for 1 µs, as its wake-up time is the measurement.
fn precise_sleeps() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack; no memory is passed.
    unsafe {
        libc::prctl(
            libc::PR_SET_TIMERSLACK,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}

/// Runs `work` until it ends or a signal comes; after a signal, no new request is sent,
/// in-flight ones get `grace` to finish and are then cancelled (at once on a second signal).
/// Under a [`listen_for_stop`] listener (a sweep) the signals are the listener's, counted from
/// this run's start: one that came while the run was still setting up stops it at once.
async fn supervise(
    work: impl std::future::Future<Output = ()>,
    ctx: &Ctx,
    grace: Duration,
) -> Result<bool, String> {
    let mut signals = match PROCESS_STOP.get() {
        Some(stop) => Interrupts::Shared {
            stop: stop.clone(),
            seen: 0,
        },
        None => Interrupts::Own(Signals::new()?),
    };
    tokio::pin!(work);
    tokio::select! {
        _ = &mut work => return Ok(false),
        _ = signals.recv() => {}
    }
    ctx.stop.set();
    ctx.progress.set_message(format!(
        "stopping: in-flight requests get {:.1} s to finish (Ctrl-C again to stop now)",
        grace.as_secs_f64()
    ));
    tokio::select! {
        _ = &mut work => {}
        _ = tokio::time::sleep(grace) => {
            ctx.cancel.cancel();
            work.await;
        }
        _ = signals.recv() => {
            ctx.cancel.cancel();
            work.await;
        }
    }
    Ok(true)
}

/// Ctrl-C and SIGTERM for the whole process, counted from the moment [`listen_for_stop`] was
/// called until it exits. A sweep runs many recordings, each on its own runtime: a signal
/// between two of them (when no run listens) would otherwise be swallowed by the handler the
/// first run installed.
pub struct ProcessStop {
    count: AtomicU64,
    notify: tokio::sync::Notify,
}

impl ProcessStop {
    /// How many signals came since listening began.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Whether a stop was asked.
    pub fn requested(&self) -> bool {
        self.count() > 0
    }

    /// Waits for the signal after the first `seen` ones.
    async fn after(&self, seen: u64) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.count() > seen {
                return;
            }
            notified.await;
        }
    }
}

static PROCESS_STOP: std::sync::OnceLock<Arc<ProcessStop>> = std::sync::OnceLock::new();

/// Listens for Ctrl-C and SIGTERM for the rest of the process on a thread of its own, and makes
/// every later recording ([`record`]) take its signals from here. Returns once listening: from
/// then on no signal is lost, whenever it comes. Calling it again returns the same listener.
pub fn listen_for_stop() -> Result<Arc<ProcessStop>, String> {
    if let Some(stop) = PROCESS_STOP.get() {
        return Ok(stop.clone());
    }
    let stop = Arc::new(ProcessStop {
        count: AtomicU64::new(0),
        notify: tokio::sync::Notify::new(),
    });
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let listener = stop.clone();
    std::thread::Builder::new()
        .name("tracelab-signals".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("cannot start the signal listener: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let mut signals = match Signals::new() {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                loop {
                    signals.recv().await;
                    listener.count.fetch_add(1, Ordering::SeqCst);
                    listener.notify.notify_waiters();
                }
            });
        })
        .map_err(|e| format!("cannot start the signal listener: {e}"))?;
    ready_rx
        .recv()
        .map_err(|_| "the signal listener stopped before it listened".to_string())??;
    Ok(PROCESS_STOP.get_or_init(|| stop).clone())
}

/// Where a run's signals come from: its own handler, or the process's listener.
enum Interrupts {
    Own(Signals),
    Shared { stop: Arc<ProcessStop>, seen: u64 },
}

impl Interrupts {
    async fn recv(&mut self) {
        match self {
            Interrupts::Own(s) => s.recv().await,
            Interrupts::Shared { stop, seen } => {
                stop.after(*seen).await;
                *seen += 1;
            }
        }
    }
}

struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, String> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let err = |e: std::io::Error| format!("cannot listen for Ctrl-C: {e}");
            Ok(Signals {
                interrupt: signal(SignalKind::interrupt()).map_err(err)?,
                terminate: signal(SignalKind::terminate()).map_err(err)?,
            })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_alarm_wakes_each_task_at_its_instant_never_before() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let alarm = Arc::new(TurnAlarm::default());
        let ringer = {
            let alarm = alarm.clone();
            std::thread::spawn(move || alarm.ring())
        };
        let t0 = Instant::now();
        // Asked out of order: each resolves at its own instant.
        let woke: Vec<(u64, Duration)> = runtime.block_on(async {
            let tasks: Vec<_> = [60u64, 20, 40]
                .into_iter()
                .map(|ms| {
                    let alarm = alarm.clone();
                    tokio::spawn(async move {
                        assert!(alarm.at(t0 + Duration::from_millis(ms)).await);
                        (ms, t0.elapsed())
                    })
                })
                .collect();
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        });
        for (ms, at) in woke {
            assert!(
                at >= Duration::from_millis(ms),
                "woke early: {at:?} for {ms} ms"
            );
            assert!(at < Duration::from_millis(ms + 500), "{at:?} for {ms} ms");
        }
        // Closed: a pending wait and any later one end, and the thread returns.
        alarm.close();
        assert!(!runtime.block_on(alarm.at(Instant::now() + Duration::from_secs(60))));
        ringer.join().unwrap();
    }
}
