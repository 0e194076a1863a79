//! The trace as the core holds it after parsing: a header, one [`Attempt`] per request sent,
//! GPU samples and an optional footer.
//!
//! Inside the core every duration of an attempt is measured from that attempt's own start, so a
//! metric never has to subtract two clock readings; the file keeps offsets from the run's origin
//! (see `docs/trace-format.md`).

use serde::{Deserialize, Serialize};

pub mod engine;
pub mod peer;
pub mod simulation;

use crate::text::Text;

/// The schema version this core reads and writes.
pub const SCHEMA_VERSION: u32 = 1;
/// The value of the header's `schema` field.
pub const SCHEMA_NAME: &str = "tracelab.trace";

/// A whole trace. It is never serialised as a whole: files use trace format v1 (`write`,
/// `parse`), and the lab's bundles pass the text a trace was read from (`handoff::WorkingText`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    pub header: Header,
    pub attempts: Vec<Attempt>,
    pub gpu: Vec<GpuSample>,
    /// The serving engine's own signals, scraped on the run's clock (`--server-metrics`).
    pub engine: Vec<engine::EngineSample>,
    pub footer: Option<Footer>,
    /// Things worth telling the reader that did not stop the load (unknown record kinds, …).
    pub warnings: Vec<String>,
}

impl Trace {
    /// A run without a footer did not finish cleanly (crash, kill) or is still being written.
    pub fn is_incomplete(&self) -> bool {
        !Footer::finished(self.footer)
    }

    /// What kind of record this is, for the reader's first line about it.
    pub fn completeness(&self) -> Completeness {
        Completeness::of(&self.header, self.footer)
    }

    /// The peer tool's own figures about this run (`header.source.figures`), empty when the
    /// trace was not imported from a tool that reports any. Parsing checks them (natively; the
    /// lab's second bundle checks them on entry with [`Trace::check_peer_figures`]).
    pub fn peer_figures(&self) -> Vec<peer::PeerFigure> {
        self.header
            .source
            .as_ref()
            .and_then(|s| s.figures.read().ok())
            .unwrap_or_default()
    }

    /// Refuses a trace whose peer figures cannot be read, naming the field.
    pub fn check_peer_figures(&self) -> Result<(), crate::error::ParseError> {
        self.header
            .source
            .as_ref()
            .map_or(Ok(()), |s| s.figures.read().map(|_| ()))
    }

    /// Whether the trace carries a peer tool's own figures (without reading them).
    pub fn has_peer_figures(&self) -> bool {
        self.header.has_peer_figures()
    }

    /// How many attempts were warm-up attempts.
    pub fn warmup_count(&self) -> usize {
        warmup_count(&self.attempts)
    }
}

impl Completeness {
    /// From the header and the footer (a trace read as a stream has no [`Trace`]).
    pub fn of(header: &Header, footer: Option<Footer>) -> Completeness {
        if !header.capabilities.workload_executed {
            return Completeness::CapabilityScan;
        }
        match footer {
            Some(Footer {
                finished_cleanly: true,
                ..
            }) => Completeness::Complete,
            Some(_) => Completeness::StoppedEarly,
            None => Completeness::Incomplete,
        }
    }
}

/// How many of these attempts are warm-up attempts (the lab keeps a trace's attempts apart from
/// its header, so it counts the list it shows).
pub fn warmup_count(attempts: &[Attempt]) -> usize {
    attempts.iter().filter(|a| a.phase == Phase::Warmup).count()
}

/// Whether a trace holds the whole planned run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// The run finished as planned and wrote its footer.
    Complete,
    /// The run was stopped (Ctrl-C) and says so in its footer: every attempt it started is here.
    StoppedEarly,
    /// No footer: the writer crashed or was killed, or the file is still being written.
    Incomplete,
    /// `tracelab probe`: no requests were sent, only capabilities recorded.
    CapabilityScan,
}

impl Completeness {
    pub fn text(self) -> Text {
        match self {
            Completeness::Complete => Text::new("complete run", "运行完整"),
            Completeness::StoppedEarly => Text::new(
                "stopped early (every started attempt kept)",
                "提前停止（已开始的尝试都保留了）",
            ),
            Completeness::Incomplete => {
                Text::new("incomplete run (no footer)", "运行不完整（没有结束记录）")
            }
            Completeness::CapabilityScan => Text::new(
                "capability scan only: no requests were sent",
                "仅能力扫描：没有发送任何请求",
            ),
        }
    }
}

/// The first record of a trace: who wrote it, under which conditions, and what could be measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub schema: String,
    pub version: u32,
    pub tool: Tool,
    /// The UTC wall-clock time of the run's monotonic origin (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_clock_anchor_utc: Option<String>,
    #[serde(default)]
    pub conditions: Conditions,
    #[serde(default)]
    pub capabilities: Capabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_cost: Option<Money>,
    /// Settings the author of the trace intends (e.g. the lesson's 1 s threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defaults: Option<HeaderDefaults>,
    /// Where an imported trace came from and how that tool defines its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Present on a trace written by the simulation: every parameter and the seed. Such a trace
    /// was computed, not measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<simulation::SimulationRecord>,
    /// What the recorder itself did to the measurement (connections it opened, requests it
    /// resent or never sent, the delay it added to its own timestamps), measured during the run
    /// and written when the run ends (`tracelab record` rewrites the header then). Absent from
    /// other tools' traces and from a run that was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientShare>,
    /// What `tracelab record --server-metrics` scraped from the serving engine, how often, and
    /// which signals it found; the samples are `engine` records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_metrics: Option<engine::EngineScrape>,
}

impl Header {
    /// Whether the header carries a peer tool's own figures (without reading them).
    pub fn has_peer_figures(&self) -> bool {
        self.source.as_ref().is_some_and(|s| !s.figures.is_empty())
    }
}

impl Default for Header {
    fn default() -> Self {
        Header {
            schema: SCHEMA_NAME.to_string(),
            version: SCHEMA_VERSION,
            tool: Tool {
                name: "tracelab".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            wall_clock_anchor_utc: None,
            conditions: Conditions::default(),
            capabilities: Capabilities::default(),
            window: None,
            window_cost: None,
            defaults: None,
            source: None,
            simulation: None,
            client: None,
            engine_metrics: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The run's conditions: what must be held fixed for a rerun to be comparable.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Conditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_set_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u32>,
    /// `closed` (wait for a reply before sending the next), `constant` or `poisson` (open loop),
    /// or `fixed-table` for a hand-made teaching trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burstiness: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_token_timeout_s: Option<f64>,
    /// How the recorder's connections behaved (pooling, resends, TLS), as its timings depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<ConnectionPolicy>,
    /// What served the run, as the server said before it and in its stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Runtime>,
    /// Whether prompts are sent more than once (so a prefix cache can serve them), and what the
    /// server's cache held before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_reuse: Option<PrefixReuse>,
}

/// What served a run, asked of the server itself (`tracelab record`): each engine's own info
/// endpoints and what every stream chunk carries. Unknown stays `null`, never guessed; a model
/// path keeps its file name only; no host, URL, directory, UUID or key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Runtime {
    /// `vllm`, `llama.cpp`, `sglang`, `tgi`, `ollama`, or another name a server gave.
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    /// The model as the server names it.
    pub model_id: Option<String>,
    /// A revision or content hash of the weights, when the server gives one.
    pub model_revision: Option<String>,
    /// The context length the server serves with.
    pub max_context: Option<u64>,
    /// The streams' `system_fingerprint` (one value, or the first of several: see `note`).
    pub system_fingerprint: Option<String>,
    /// Which endpoints were asked and how each answered (`/version 200`, `/props 404`, …).
    #[serde(default)]
    pub asked: Vec<String>,
    /// What could not be known, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Prefix reuse, stated: a warm cache and a first load answer different questions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefixReuse {
    /// The run sends some prompt more than once (rounds, a warm-up that sends the same set), so
    /// later sends may be served from the server's prefix cache.
    pub by_design: bool,
    /// What the server's cache held of this prompt set before the run: `cold`, `warm`, or
    /// `unknown` (the default: only the person running it can say).
    pub before_run: String,
}

/// The recorder's connection policy: what its start, first-byte and TTFT times include.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectionPolicy {
    /// `http/1.1`, `h2-prior-knowledge` (h2c), or `alpn` (https: HTTP/2 or HTTP/1.1 as negotiated).
    pub protocol: String,
    /// https only: `bundled` (Mozilla's roots) or `bundled+ca-cert` (plus `--ca-cert`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_roots: Option<String>,
    /// Connections are kept open and reused between requests.
    pub keep_alive: bool,
    /// An idle pooled connection is closed after this long.
    pub pool_idle_timeout_s: f64,
    /// A request lost unanswered on a reused connection the server had closed (no response byte)
    /// is sent again on another connection, at most this many times, timed from its first send.
    pub resend_unanswered_on_reused: u32,
    /// An attempt's clock starts before any connect / TLS handshake it needs, so a new
    /// connection's set-up is inside its first-byte time, TTFT and E2E.
    pub timing_includes_connect: bool,
}

/// The recorder's own share of a run's figures, counted over the measured attempts (warm-up
/// apart): what a reader needs to tell the client's doing from the server's.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientShare {
    /// Measured attempts, and how many of them failed (any outcome but success).
    pub measured: u64,
    pub measured_failures: u64,
    /// Measured attempts whose request went out on a connection opened for it: their first
    /// byte, TTFT and E2E include the connect (and TLS handshake). The rest reused one.
    pub new_connections: u64,
    /// Connections open when measuring began (opened by the warm-up).
    pub warm_connections: u64,
    /// Measured attempts sent a second time because their reused connection closed before the
    /// request was fully written (provably never received).
    pub resent: u64,
    /// Measured attempts the recorder could not send because it ran out of open files: the
    /// client's failures, recorded as `connect_error` and kept in the failure rate's
    /// denominator (they were intended requests), but never the server's doing.
    pub not_sent: u64,
    /// The delay between a response byte reaching this machine's network stack and the
    /// recorder's timestamp of it; absent where the kernel gives no receive timestamps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<ClientTiming>,
    /// The recorder's CPU time over the run's wall time (1 = one core busy throughout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_cores_busy: Option<f64>,
    /// The server closed its connections right after its replies though they said keep-alive
    /// (llama.cpp's `llama-server` does), so the recorder stopped reusing them: each request
    /// then opened its own, and `conditions.connection.keep_alive` was asked, not had.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_closed_after_reply: bool,
}

/// How late the recorder's timestamps were, measured on every timed read of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientTiming {
    /// How it was measured, in words (the trace format doc explains it).
    pub method: String,
    /// At each measured attempt's first token: the error the client adds to TTFT.
    pub first_token: Lateness,
    /// At every timed stream event (ITL and E2E carry these).
    pub events: Lateness,
}

/// A distribution of delays, in milliseconds (upper bucket edges: never below the true value).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Lateness {
    pub n: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    /// A 95 % upper confidence bound on the P99, distribution-free (the order statistic at
    /// `compare::stats::upper_bound_rank`): the sample's own P99 is below the population's about
    /// half the time, so a bound stated from it would fail the 99 % it promises as often.
    /// Absent under 299 samples (even the maximum is no such bound) and in older traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_bound_ms: Option<f64>,
}

impl Lateness {
    /// The error the card states: the bound when there is one, else the maximum seen, which is
    /// then only what this run saw (the card says so).
    pub fn stated_ms(&self) -> f64 {
        self.p99_bound_ms.unwrap_or(self.max_ms)
    }
}

/// What the run actually did and could observe. A trace never claims more than it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Requests were really sent (false for a `tracelab probe` capability scan).
    pub workload_executed: bool,
    /// The attempts are a latency benchmark of an inference endpoint.
    pub inference_benchmark: bool,
    /// `nvml`, `nvidia-smi` or `unsupported` (no GPU figure may then be shown as measured).
    pub gpu_telemetry: String,
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            workload_executed: true,
            inference_benchmark: true,
            gpu_telemetry: GPU_UNSUPPORTED.to_string(),
        }
    }
}

/// The `gpu_telemetry` value of a run that had no way to read the GPU.
pub const GPU_UNSUPPORTED: &str = "unsupported";

// The sane limits every reader enforces (field named), so that sums over millions of attempts,
// the Perfetto export's integer microseconds and every figure stay finite: `metrics` promises a
// figure is a number or `undefined`, never infinity or NaN.

/// The latest time a trace may hold, in ms from the run's origin: 10^15 ms, about 31,700 years
/// (a Unix-epoch origin in ms is 1.8·10^12, well inside).
pub const MAX_TIME_MS: f64 = 1e15;
/// The shortest window, in s: one microsecond, the resolution traces are written with.
pub const MIN_WINDOW_S: f64 = 1e-6;
/// The longest window, in s (about 31,700 years) — also the largest TTFT threshold.
pub const MAX_WINDOW_S: f64 = 1e12;
/// The largest window cost, in any currency.
pub const MAX_COST: f64 = 1e12;

/// The fixed window that goodput and cost refer to.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    #[serde(default)]
    pub start_ms: f64,
    pub length_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Money {
    pub amount: f64,
    pub currency: String,
}

/// How a TTFT is compared with the threshold (a setting, and a default a trace can carry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// TTFT ≤ threshold: "within the threshold", as the lesson's SLO reads.
    #[default]
    Le,
    /// TTFT < threshold: a request exactly at the threshold counts as slow.
    Lt,
}

impl Comparison {
    pub fn code(self) -> &'static str {
        match self {
            Comparison::Le => "le",
            Comparison::Lt => "lt",
        }
    }

    pub fn from_code(code: &str) -> Option<Comparison> {
        match code.trim() {
            "le" | "<=" | "≤" => Some(Comparison::Le),
            "lt" | "<" => Some(Comparison::Lt),
            _ => None,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Le => "≤",
            Comparison::Lt => "<",
        }
    }

    /// Whether `value` is within `threshold` under this comparison.
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Comparison::Le => value <= threshold,
            Comparison::Lt => value < threshold,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderDefaults {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_threshold_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

/// Provenance of an imported trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How the source tool defines the figures it reports, in its own words where possible.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub definitions: Vec<String>,
    /// The layout of the file it was imported from (`vllm-bench-serve-save-result`, `aiperf-jsonl-ttft`, `guidellm-benchmarks`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
    /// The tool's own figures about this run, with how it computes each, so they can be
    /// recomputed from the attempts ([`crate::reproduce`]).
    #[serde(default, skip_serializing_if = "peer::PeerFigures::is_empty")]
    pub figures: peer::PeerFigures,
    /// The tool's own per-request values that the attempts' times cannot give back (LLMPerf's
    /// `inter_token_latency_s`, guidellm 0.3's `inter_token_latency_ms`), by the tool's name: a
    /// figure whose `sample` names one is recomputed over them with the tool's arithmetic.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub samples: std::collections::BTreeMap<String, Vec<peer::PeerValue>>,
}

/// Warm-up attempts are recorded but never mixed into the measured samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Warmup,
    #[default]
    Measure,
}

/// How an attempt ended. Only [`Outcome::Success`] is a complete success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Outcome {
    /// HTTP 2xx and the stream read to its proper end (`[DONE]` or a finish reason).
    Success,
    /// No token arrived before the deadline: TTFT is missing, not 0.
    TimeoutBeforeFirstToken,
    TimeoutAfterFirstToken,
    ConnectError,
    HttpError {
        status: u16,
    },
    /// HTTP 2xx, then the stream stopped early or was malformed.
    StreamBroken,
    /// Stopped by the user (Ctrl-C) or by the benchmark tool.
    Cancelled,
}

impl Outcome {
    /// Every outcome name as written in a trace.
    pub const NAMES: [&'static str; 7] = [
        "success",
        "timeout_before_first_token",
        "timeout_after_first_token",
        "connect_error",
        "http_error",
        "stream_broken",
        "cancelled",
    ];

    pub fn is_success(self) -> bool {
        self == Outcome::Success
    }

    /// The name written in a trace (`http_error` for every status).
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::TimeoutBeforeFirstToken => "timeout_before_first_token",
            Outcome::TimeoutAfterFirstToken => "timeout_after_first_token",
            Outcome::ConnectError => "connect_error",
            Outcome::HttpError { .. } => "http_error",
            Outcome::StreamBroken => "stream_broken",
            Outcome::Cancelled => "cancelled",
        }
    }

    /// The outcome in words for a page, the trace's own name in brackets in Chinese (so the
    /// file and the page can still be read side by side).
    pub fn label(self, lang: crate::text::Lang) -> String {
        if lang == crate::text::Lang::En {
            return self.to_string();
        }
        let zh = self.words(lang);
        match self {
            Outcome::HttpError { .. } => format!("{zh}（http_error）"),
            _ => format!("{zh}（{}）", self.name()),
        }
    }

    /// The outcome in the reader's words alone, without the trace's name: a learner's line.
    pub fn words(self, lang: crate::text::Lang) -> String {
        if lang == crate::text::Lang::En {
            return self.to_string();
        }
        let zh = match self {
            Outcome::Success => "成功",
            Outcome::TimeoutBeforeFirstToken => "首字前超时",
            Outcome::TimeoutAfterFirstToken => "首字后超时",
            Outcome::ConnectError => "连接失败",
            Outcome::HttpError { .. } => "HTTP 错误",
            Outcome::StreamBroken => "流中断",
            Outcome::Cancelled => "已取消",
        };
        match self {
            Outcome::HttpError { status } => format!("{zh} {status}"),
            _ => zh.to_string(),
        }
    }

    /// Parses a name; `http_error` needs the status beside it.
    pub fn from_name(name: &str, http_status: Option<u16>) -> Result<Outcome, String> {
        Ok(match name {
            "success" => Outcome::Success,
            "timeout_before_first_token" => Outcome::TimeoutBeforeFirstToken,
            "timeout_after_first_token" => Outcome::TimeoutAfterFirstToken,
            "connect_error" => Outcome::ConnectError,
            "stream_broken" => Outcome::StreamBroken,
            "cancelled" => Outcome::Cancelled,
            "http_error" => match http_status {
                Some(status) => Outcome::HttpError { status },
                None => return Err("outcome `http_error` needs the field `http_status`".into()),
            },
            other => {
                return Err(format!(
                    "unknown outcome `{other}`; expected one of {}",
                    Outcome::NAMES.join(", ")
                ))
            }
        })
    }

    pub fn http_status(self) -> Option<u16> {
        match self {
            Outcome::HttpError { status } => Some(status),
            _ => None,
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::HttpError { status } => write!(f, "http_error {status}"),
            other => f.write_str(other.name()),
        }
    }
}

/// The result of the quality rubric, fixed before the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    Pass,
    Fail,
    #[default]
    NotEvaluated,
}

impl Quality {
    pub fn name(self) -> &'static str {
        match self {
            Quality::Pass => "pass",
            Quality::Fail => "fail",
            Quality::NotEvaluated => "not_evaluated",
        }
    }

    /// The quality verdict in the reader's words (the glossary's 质量通过).
    pub fn label(self, lang: crate::text::Lang) -> &'static str {
        match (self, lang) {
            (Quality::Pass, crate::text::Lang::En) => "quality pass",
            (Quality::Fail, crate::text::Lang::En) => "quality fail",
            (Quality::NotEvaluated, crate::text::Lang::En) => "quality not evaluated",
            (Quality::Pass, crate::text::Lang::Zh) => "质量通过",
            (Quality::Fail, crate::text::Lang::Zh) => "质量未通过",
            (Quality::NotEvaluated, crate::text::Lang::Zh) => "未评估质量",
        }
    }

    pub fn from_name(name: &str) -> Option<Quality> {
        match name {
            "pass" => Some(Quality::Pass),
            "fail" => Some(Quality::Fail),
            "not_evaluated" | "" => Some(Quality::NotEvaluated),
            _ => None,
        }
    }
}

/// One stream event seen by the client: when (from the attempt's start) and how many tokens it
/// carried. An event may carry several tokens, so gaps between events are not per-token gaps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    pub at_ms: f64,
    pub tokens: u32,
}

/// One request sent by the client. A retry is a new attempt with the same business id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub id: String,
    /// Ties the retries of one user request together.
    pub business_id: String,
    /// 1 for the first try, 2 for the first retry, …
    pub attempt: u32,
    pub phase: Phase,
    /// Where the schedule wanted it to start, from the run's origin.
    pub intended_start_ms: Option<f64>,
    /// When it actually started, from the run's origin; `None` when the source kept no clock
    /// positions (the attempt then has durations but no place on the run's timeline).
    pub start_ms: Option<f64>,
    /// From this attempt's start.
    pub first_byte_ms: Option<f64>,
    /// Time to the first non-empty output token, from this attempt's start. Missing, not 0,
    /// when no token came.
    pub ttft_ms: Option<f64>,
    /// Events relative to this attempt's start, in arrival order.
    pub events: Vec<StreamEvent>,
    /// The last output token, from this attempt's start, when the source kept its time but not
    /// the individual events (guidellm keeps only the first and last token times). With events,
    /// the last event is the last token and this stays `None`.
    pub last_token_ms: Option<f64>,
    /// End-to-end: from this attempt's start to the end of the stream or of the failure.
    pub e2e_ms: Option<f64>,
    pub outcome: Outcome,
    /// Free text kept from the source (an importer's error message), never response text.
    pub detail: Option<String>,
    pub quality: Quality,
    pub input_tokens: Option<u32>,
    pub output_tokens: Option<u32>,
    /// The token counts came from the server's `usage`, not from counting chunks.
    pub tokens_from_usage: bool,
    /// Tokens per event were estimated (one chunk = one token) rather than known.
    pub event_tokens_estimated: bool,
    /// Set when the source kept reasoning apart from the answer (a reasoning model's
    /// `reasoning_content`): `ttft_ms` is then the first output of either kind, and the course's
    /// TTFT is the first answer token kept here. `None`: no reasoning was seen apart, so the
    /// first output token is the first answer token.
    pub reasoning: Option<ReasoningStart>,
    /// Which prompt of the run's set this attempt sent, and whether the server had been sent it
    /// before in this run (`tracelab record`); `None` for sources that do not say.
    pub prompt: Option<PromptSend>,
    /// The conversation this attempt is a turn of, when the run sent sessions (`tracelab
    /// simulate --sessions`); `None` for a trace of independent requests.
    pub session: Option<SessionTurn>,
}

/// One turn of a user's conversation: turn k + 1 resends turns 1..k as its history, so the
/// server's prefix cache decides how much of its prompt is prefilled again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTurn {
    /// The conversation's id, shared by all its turns (never empty).
    pub session_id: String,
    /// 1 for the first turn, 2 for the second, … (a retry of a turn keeps its number).
    pub turn: u32,
    /// Prompt tokens carried from earlier turns (their prompts and answers), when known.
    pub history_tokens: Option<u32>,
    /// Prompt tokens the server served from its cache, when it says and the attempt has no
    /// [`PromptSend`] to carry them (with one, they are `prompt.cached_tokens`).
    pub cached_tokens: Option<u32>,
}

/// The first reasoning token and the first answer token of an attempt whose source kept them
/// apart, both from the attempt's start.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReasoningStart {
    pub first_reasoning_ms: f64,
    /// `None` when the answer never began (the stream ended inside the reasoning).
    pub first_content_ms: Option<f64>,
}

/// What an attempt sent: its prompt's place in the prompt set, the round, and whether the same
/// prompt had already gone out earlier in the run (its prefix may then be served from a cache).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PromptSend {
    /// 0-based position of the prompt in the run's prompt set.
    pub index: u32,
    /// 1 for the first round of its phase, 2 for the second, …
    pub repetition: u32,
    /// The same prompt was sent earlier in this run (a warm-up or an earlier round).
    pub repeat: bool,
    /// Prompt tokens the server says it served from its cache (`usage.prompt_tokens_details.
    /// cached_tokens`, or llama.cpp's `timings.cache_n`), when it says.
    pub cached_tokens: Option<u32>,
}

/// Which token starts TTFT: the course's definition, or the one most tools use for a reasoning
/// model. The same for every attempt whose source kept no reasoning apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FirstToken {
    /// The first non-empty answer-content token: the course's definition.
    #[default]
    Content,
    /// The first non-empty output token of any kind, reasoning included.
    AnyOutput,
}

impl FirstToken {
    pub const ALL: [FirstToken; 2] = [FirstToken::Content, FirstToken::AnyOutput];

    pub fn code(self) -> &'static str {
        match self {
            FirstToken::Content => "content",
            FirstToken::AnyOutput => "any",
        }
    }

    pub fn from_code(code: &str) -> Option<FirstToken> {
        match code.trim() {
            "content" | "answer" => Some(FirstToken::Content),
            "any" | "any_output" | "output" => Some(FirstToken::AnyOutput),
            _ => None,
        }
    }

    /// What the TTFT figures measure under this choice, for their labels.
    pub fn text(self) -> Text {
        match self {
            FirstToken::Content => Text::new(
                "first answer token (the course's definition)",
                "首个回答 token（课程的定义）",
            ),
            FirstToken::AnyOutput => Text::new(
                "first output token, reasoning included",
                "首个输出 token（含推理）",
            ),
        }
    }
}

/// Where TTFT and E2E are measured from: the attempt's actual start (what it lived through once
/// sent), or the start its open loop's schedule intended. A request sent late waited for the
/// client before its actual start; a user arriving on schedule waited through that too, and
/// leaving it out is coordinated omission: the tail improves exactly when the client falls
/// behind. Attempts without an intended start (a closed loop has no schedule) are measured from
/// their actual start under either choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LatencyOrigin {
    /// The moment the request was sent: what every tool reports by default.
    #[default]
    Actual,
    /// The moment the schedule meant it to be sent (open loop): the lag is included.
    Intended,
}

impl LatencyOrigin {
    pub const ALL: [LatencyOrigin; 2] = [LatencyOrigin::Actual, LatencyOrigin::Intended];

    pub fn code(self) -> &'static str {
        match self {
            LatencyOrigin::Actual => "actual",
            LatencyOrigin::Intended => "intended",
        }
    }

    pub fn from_code(code: &str) -> Option<LatencyOrigin> {
        match code.trim() {
            "actual" => Some(LatencyOrigin::Actual),
            "intended" | "scheduled" => Some(LatencyOrigin::Intended),
            _ => None,
        }
    }

    /// The origin as a figure's name says it.
    pub fn text(self) -> Text {
        match self {
            LatencyOrigin::Actual => Text::new("from the actual start", "从实际开始时间算起"),
            LatencyOrigin::Intended => Text::new("from the intended start", "从计划开始时间算起"),
        }
    }
}

impl Attempt {
    /// How long before its actual start the attempt's latencies are measured from under
    /// `origin`: 0 from the actual start; from the intended one, the client's lag (actual −
    /// intended). `None` when the origin is the intended start and the attempt has none to
    /// use (no schedule, or no actual start to set it against): it is then measured from its
    /// actual start, and counted as such. A request sent early is measured from when it was
    /// sent: nobody waited for it before that, so the lag is never taken below 0.
    pub fn origin_lead_ms(&self, origin: LatencyOrigin) -> Option<f64> {
        match origin {
            LatencyOrigin::Actual => Some(0.0),
            LatencyOrigin::Intended => Some((self.start_ms? - self.intended_start_ms?).max(0.0)),
        }
    }

    /// A minimal attempt for tests and what-if edits: measured, first try, no timeline.
    pub fn new(
        id: impl Into<String>,
        outcome: Outcome,
        ttft_ms: Option<f64>,
        quality: Quality,
    ) -> Attempt {
        let id = id.into();
        Attempt {
            business_id: id.clone(),
            id,
            attempt: 1,
            phase: Phase::Measure,
            intended_start_ms: None,
            start_ms: None,
            first_byte_ms: None,
            ttft_ms,
            events: Vec::new(),
            last_token_ms: None,
            e2e_ms: None,
            outcome,
            detail: None,
            quality,
            input_tokens: None,
            output_tokens: None,
            tokens_from_usage: false,
            event_tokens_estimated: false,
            reasoning: None,
            prompt: None,
            session: None,
        }
    }

    /// Prompt tokens served from the server's cache, when reported (through the prompt set's
    /// record or the session's).
    pub fn cached_tokens(&self) -> Option<u32> {
        self.prompt
            .and_then(|p| p.cached_tokens)
            .or_else(|| self.session.as_ref().and_then(|s| s.cached_tokens))
    }

    /// The attempt's TTFT under `first`: missing when that token never came.
    pub fn ttft_under(&self, first: FirstToken) -> Option<f64> {
        match (first, self.reasoning) {
            (FirstToken::Content, Some(r)) => r.first_content_ms,
            _ => self.ttft_ms,
        }
    }

    /// The last output token's time: the last stream event, or the time the source kept alone.
    pub fn last_token_at_ms(&self) -> Option<f64> {
        self.events.last().map(|e| e.at_ms).or(self.last_token_ms)
    }

    /// Gaps between consecutive stream events (per event, not per token).
    pub fn event_gaps_ms(&self) -> impl Iterator<Item = f64> + '_ {
        self.events.windows(2).map(|w| w[1].at_ms - w[0].at_ms)
    }
}

/// One reading of one GPU, on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpuSample {
    pub t_ms: f64,
    /// Which node of a fleet (its position in `--gpu dcgm=URL,…`); absent for the local host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    pub gpu: u32,
    pub util_pct: f64,
    pub mem_used_mib: f64,
    pub mem_total_mib: f64,
}

impl GpuSample {
    /// Memory in use as a percentage of the GPU's memory; `None` when the total is not known (0).
    pub fn mem_used_pct(&self) -> Option<f64> {
        (self.mem_total_mib > 0.0).then(|| 100.0 * self.mem_used_mib / self.mem_total_mib)
    }
}

/// Written last by a run that finished cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Footer {
    pub finished_cleanly: bool,
    pub attempts: u64,
    #[serde(default)]
    pub gpu_samples: u64,
}

impl Footer {
    /// Whether a trace with this footer (or none) says its run finished cleanly.
    pub fn finished(footer: Option<Footer>) -> bool {
        matches!(
            footer,
            Some(Footer {
                finished_cleanly: true,
                ..
            })
        )
    }
}

/// Test data shared by the core's unit tests.
#[cfg(test)]
pub(crate) mod test_data {
    use super::{Attempt, Outcome, Quality};

    /// Lesson 3's ten requests (TTFT in ms): eight successes, two failures without a token.
    pub(crate) fn ten() -> Vec<Attempt> {
        let ok = |id: &str, ms: f64, q: Quality| Attempt::new(id, Outcome::Success, Some(ms), q);
        vec![
            ok("R1", 200.0, Quality::Pass),
            ok("R2", 300.0, Quality::Pass),
            ok("R3", 400.0, Quality::Pass),
            ok("R4", 500.0, Quality::Pass),
            ok("R5", 600.0, Quality::Fail),
            ok("R6", 800.0, Quality::Pass),
            ok("R7", 1200.0, Quality::Pass),
            ok("R8", 2000.0, Quality::Pass),
            Attempt::new(
                "R9",
                Outcome::TimeoutBeforeFirstToken,
                None,
                Quality::NotEvaluated,
            ),
            Attempt::new("R10", Outcome::ConnectError, None, Quality::NotEvaluated),
        ]
    }
}
