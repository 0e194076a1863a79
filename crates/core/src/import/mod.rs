//! Opening the result files of the benchmark tools learners already use — vLLM `bench serve`,
//! NVIDIA AIPerf, guidellm, Ray LLMPerf — as traces, so every attempt can be seen, the tool's
//! own figures reproduced ([`reproduce()`]) and then recomputed under the lesson's definitions.
//!
//! Files are recognised from their content, never from their name ([`detect`]). Each importer
//! maps the tool's per-request data to trace format v1 attempts and records the tool, its
//! version when the file says, and how the tool defines its figures in `header.source`.
//! Response text is never kept. Files that hold only aggregates are recognised and refused with
//! the name of the per-request file to upload instead; [`peer_figures_from_aggregate`] reads
//! such a file as the tool's own figures for a trace imported from the per-request file.
//!
//! ```
//! use tracelab_core::import::{load_any, PeerTool};
//! let text = r#"[{"error_code": null, "error_msg": "", "ttft_s": 0.5, "end_to_end_latency_s": 2.0,
//!   "inter_token_latency_s": 0.01, "number_input_tokens": 10, "number_output_tokens": 150}]"#;
//! let imported = load_any("run_individual_responses.json", text).unwrap();
//! assert_eq!(imported.detected.tool, PeerTool::Llmperf);
//! let trace = imported.single("run_individual_responses.json").unwrap();
//! assert_eq!(trace.attempts[0].ttft_ms, Some(500.0));
//! ```

mod aiperf;
mod genai_perf;
mod guidellm;
pub mod handoff;
mod llmperf;
mod python_tokens;
mod refuse;
mod vllm;

pub use crate::trace::peer::{Over, PeerFigure, PeerFigures, RateSpan, PeerPercentile, PeerUnit, Quantity, Reproducibility, Stat};
pub use crate::reproduce::{reproduce, resolution_note, ReproRow, ReproSummary};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ParseError;
use crate::parse::parse_trace;
use crate::trace::{Attempt, Conditions, Footer, Header, Outcome, Source, Trace, MAX_TIME_MS};

/// The tools whose files are recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerTool {
    /// Our own formats: trace format v1 (JSON Lines) and the classroom CSV.
    TraceLab,
    Vllm,
    Aiperf,
    GenaiPerf,
    Guidellm,
    Llmperf,
    Sglang,
    /// Hugging Face `inference-benchmarker` (aggregates only: recognised and refused).
    HfInferenceBenchmarker,
    Unknown,
}

impl PeerTool {
    /// The name written in `header.source.tool` and shown to people.
    pub fn name(self) -> &'static str {
        match self {
            PeerTool::TraceLab => "Trace Lab",
            PeerTool::Vllm => "vLLM bench serve",
            PeerTool::Aiperf => "NVIDIA AIPerf",
            PeerTool::GenaiPerf => "NVIDIA GenAI-Perf",
            PeerTool::Guidellm => "guidellm",
            PeerTool::Llmperf => "Ray LLMPerf",
            PeerTool::Sglang => "SGLang bench_serving",
            PeerTool::HfInferenceBenchmarker => "HF inference-benchmarker",
            PeerTool::Unknown => "unknown tool",
        }
    }

    /// The tool a `header.source.tool` names.
    pub fn from_name(name: &str) -> PeerTool {
        [
            PeerTool::Vllm,
            PeerTool::Aiperf,
            PeerTool::GenaiPerf,
            PeerTool::Guidellm,
            PeerTool::Llmperf,
            PeerTool::Sglang,
            PeerTool::HfInferenceBenchmarker,
            PeerTool::TraceLab,
        ]
            .into_iter()
            .find(|t| t.name() == name)
            .unwrap_or(PeerTool::Unknown)
    }
}

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Content {
    /// A Trace Lab trace.
    Trace,
    /// One record per request: importable.
    PerRequest,
    /// Summary statistics only: refused by [`import`], read by [`peer_figures_from_aggregate`].
    AggregateOnly,
    /// Per-request data in a layout recognised but not read by this version.
    Unsupported,
    Unknown,
}

/// What [`detect`] recognised in a file's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detected {
    pub tool: PeerTool,
    pub content: Content,
    /// A stable code for the layout (`vllm-save-result`, `aiperf-jsonl-ttft`, `guidellm-benchmarks`, …).
    pub layout: String,
    /// The tool's version when the file records it.
    pub version: Option<String>,
    /// What was seen, in words (the keys that decided it).
    pub evidence: String,
    /// Python's non-finite tokens (`Infinity`, `NaN`) the file holds outside strings, in words,
    /// when the tool is one that writes them; each imported trace carries it as a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonstandard: Option<String>,
}

impl Detected {
    fn new(tool: PeerTool, content: Content, layout: &str, evidence: impl Into<String>) -> Detected {
        Detected { tool, content, layout: layout.to_string(), version: None, evidence: evidence.into(), nonstandard: None }
    }

    fn unknown(evidence: impl Into<String>) -> Detected {
        Detected::new(PeerTool::Unknown, Content::Unknown, "unknown", evidence)
    }
}

/// One trace of an import, with a label to choose it by (guidellm: one per benchmark).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTrace {
    /// "benchmark 1: concurrent, 4 streams"; empty when the file holds one run.
    pub label: String,
    pub trace: Trace,
}

/// An imported trace: the tool, its version, layout, definitions and own figures recorded in
/// the header, and a footer when the file was whole (a cut-off file loads as incomplete).
pub(crate) fn assemble(
    detected: &Detected,
    mut header: Header,
    definitions: Vec<String>,
    figures: Vec<PeerFigure>,
    attempts: Vec<Attempt>,
    warnings: Vec<String>,
    whole: bool,
) -> Trace {
    header.source = Some(Source {
        tool: detected.tool.name().to_string(),
        version: detected.version.clone(),
        definitions,
        layout: Some(detected.layout.clone()),
        figures: PeerFigures::of(&figures),
        samples: Default::default(),
    });
    let count = attempts.len() as u64;
    Trace {
        header,
        attempts,
        gpu: Vec::new(),
        engine: Vec::new(),
        footer: whole.then_some(Footer { finished_cleanly: true, attempts: count, gpu_samples: 0 }),
        warnings,
    }
}

/// The traces read from one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub detected: Detected,
    pub traces: Vec<ImportedTrace>,
}

impl Imported {
    /// The one trace of a file that holds one; an error listing the choices otherwise.
    pub fn single(self, file: &str) -> Result<Trace, ParseError> {
        if self.traces.len() == 1 {
            return Ok(self.traces.into_iter().next().expect("one").trace);
        }
        Err(ParseError::new(format!(
            "this {} file holds {} benchmarks; choose one: {}",
            self.detected.tool.name(),
            self.traces.len(),
            self.labels().join("; ")
        ))
        .in_file(file))
    }

    /// The `n`-th trace (1-based), or an error listing the choices.
    pub fn pick(self, file: &str, n: usize) -> Result<ImportedTrace, ParseError> {
        let count = self.traces.len();
        if n == 0 || n > count {
            return Err(ParseError::new(format!(
                "there is no benchmark {n}: this file holds {count} ({})",
                self.labels().join("; ")
            ))
            .in_file(file));
        }
        Ok(self.traces.into_iter().nth(n - 1).expect("checked"))
    }

    /// "1: concurrent, 4 streams (4 attempts)", one per trace.
    pub fn labels(&self) -> Vec<String> {
        self.traces
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let label = if t.label.is_empty() { "the run".to_string() } else { t.label.clone() };
                format!("{}: {label} ({} attempts)", i + 1, t.trace.attempts.len())
            })
            .collect()
    }
}

/// The tool's own figures read from a separate aggregate file (AIPerf's
/// `profile_export_aiperf.json`, GenAI-Perf's `profile_export_genai_perf.json`, LLMPerf's `*_summary.json`).
#[derive(Debug, Clone, PartialEq)]
pub struct PeerSummary {
    pub detected: Detected,
    pub figures: Vec<PeerFigure>,
    /// The run's conditions the summary states (model, concurrency, …).
    pub conditions: Conditions,
    /// How many attempts the summary counts, to check it belongs to the trace.
    pub attempts: Option<u64>,
    /// How many complete successes it counts, when it counts only those (GenAI-Perf's
    /// `request_count`), for the same check.
    pub successes: Option<u64>,
    /// The run's duration when the summary states it.
    pub duration_s: Option<f64>,
}

/// Recognises a file from its content. Never fails: an unreadable file is `Unknown`, with why.
pub fn detect(text: &str) -> Detected {
    match sniff(text) {
        Ok(Sniffed::Ours(d)) => d,
        Ok(Sniffed::Peer(p)) => p.detected().clone(),
        Err(e) => Detected::unknown(e.message),
    }
}

/// What an upload holds: traces to open, or a tool's own figures to set beside the trace
/// imported from the same run's per-request file.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded {
    Traces(Imported),
    Summary(Box<PeerSummary>),
}

/// Reads an uploaded file once: an aggregate file that [`peer_figures_from_aggregate`] reads
/// becomes its figures; anything else is read as [`load_any`] does (an aggregate it cannot read
/// is refused with what to upload instead).
pub fn load_upload(file: &str, text: &str) -> Result<Loaded, ParseError> {
    match sniff(text).map_err(|e| e.in_file(file))? {
        Sniffed::Ours(detected) => {
            let trace = parse_trace(file, text)?;
            Ok(Loaded::Traces(Imported { detected, traces: vec![ImportedTrace { label: String::new(), trace }] }))
        }
        Sniffed::Peer(peer) => {
            if let Some(Ok(summary)) = summary_of(&peer) {
                return Ok(Loaded::Summary(Box::new(summary)));
            }
            import_sniffed(file, text, peer).map(Loaded::Traces)
        }
    }
}

/// The figures of an aggregate file the summary readers know; `None` for any other file.
fn summary_of(peer: &PeerFile) -> Option<Result<PeerSummary, ParseError>> {
    match peer {
        PeerFile::Json(d, Json::Aggregate(map)) => match d.tool {
            PeerTool::Aiperf => Some(aiperf::summary(d.clone(), map)),
            PeerTool::Llmperf => Some(llmperf::summary(d.clone(), map)),
            PeerTool::GenaiPerf => Some(genai_perf::summary(d.clone(), map)),
            _ => None,
        },
        _ => None,
    }
}

/// Reads any supported file: our own formats first (as [`parse_trace`] does), then the peers'.
/// This is what the lab's upload and `tracelab report` call.
pub fn load_any(file: &str, text: &str) -> Result<Imported, ParseError> {
    match sniff(text).map_err(|e| e.in_file(file))? {
        Sniffed::Ours(detected) => {
            let trace = parse_trace(file, text)?;
            Ok(Imported { detected, traces: vec![ImportedTrace { label: String::new(), trace }] })
        }
        Sniffed::Peer(peer) => import_sniffed(file, text, peer),
    }
}

/// [`load_any`] from bytes, refusing text that is not UTF-8 with the line where it breaks.
pub fn load_any_bytes(file: &str, bytes: &[u8]) -> Result<Imported, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => load_any(file, text),
        Err(e) => {
            // Bytes that break UTF-8 (or NULs) right at the start: an image or an archive, not text.
            if refuse::bytes_not_text(bytes, e.valid_up_to()) {
                return Err(refuse::binary_error(&bytes[..bytes.len().min(16)]).in_file(file));
            }
            let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to here");
            if let Ok(Sniffed::Ours(_)) = sniff(good) {
                // Our own reader knows how to treat a cut-off last line.
                let trace = crate::parse::parse_trace_bytes(file, bytes)?;
                let detected = detect(good);
                return Ok(Imported { detected, traces: vec![ImportedTrace { label: String::new(), trace }] });
            }
            let line = good.bytes().filter(|&b| b == b'\n').count() + 1;
            Err(ParseError::new("the file is not UTF-8 text (is it a benchmark result or a trace?)")
                .at_line(line)
                .in_file(file))
        }
    }
}

/// Imports a peer tool's per-request file. A Trace Lab trace is refused (open it with
/// [`parse_trace`] or [`load_any`]); an aggregate-only file is refused with the name of the
/// per-request file to upload instead.
pub fn import(file: &str, text: &str) -> Result<Imported, ParseError> {
    match sniff(text).map_err(|e| e.in_file(file))? {
        Sniffed::Ours(d) => Err(ParseError::new(format!(
            "this is already a Trace Lab trace ({}): open it directly, there is nothing to import",
            d.layout
        ))
        .in_file(file)),
        Sniffed::Peer(peer) => import_sniffed(file, text, peer),
    }
}

/// Reads the tool's own figures from an aggregate file (AIPerf's `profile_export_aiperf.json`, GenAI-Perf's
/// `profile_export_genai_perf.json`,
/// LLMPerf's `*_summary.json`), to attach to the trace imported from the matching per-request
/// file with [`attach_summary`].
pub fn peer_figures_from_aggregate(file: &str, text: &str) -> Result<PeerSummary, ParseError> {
    let sniffed = sniff(text).map_err(|e| e.in_file(file))?;
    let read = match &sniffed {
        Sniffed::Peer(peer) => summary_of(peer),
        Sniffed::Ours(_) => None,
    };
    let result = match (read, &sniffed) {
        (Some(result), _) => result,
        (None, Sniffed::Peer(PeerFile::Refused(d, _))) if d.layout == "aiperf-aggregate-csv" => Err(ParseError::new(
            "this is AIPerf's aggregate CSV; its figures are read from profile_export_aiperf.json, the same summary as JSON in the \
             same artifacts folder: add that file instead",
        )),
        (None, Sniffed::Peer(PeerFile::Json(d, _))) if d.content == Content::PerRequest && d.tool == PeerTool::Vllm => Err(ParseError::new(
            "this vLLM result carries its own figures already; import it directly, no separate summary is needed",
        )),
        (None, other) => {
            let d = other.detected();
            Err(ParseError::new(format!(
                "expected a tool's summary (AIPerf profile_export_aiperf.json, GenAI-Perf profile_export_genai_perf.json or LLMPerf \
                 *_summary.json); this looks like {} ({})",
                describe(d),
                d.evidence
            )))
        }
    };
    result.map_err(|e| e.in_file(file))
}

/// Adds a summary's figures to a trace imported from the same run's per-request file, after
/// checking that both come from the same tool; conditions the trace lacks are filled in, and a
/// count that disagrees becomes a warning (are they from the same run?).
pub fn attach_summary(trace: &mut Trace, summary: &PeerSummary) -> Result<(), ParseError> {
    let Some(source) = trace.header.source.as_mut() else {
        return Err(ParseError::new(format!(
            "this trace was not imported from {}; a {} summary can only be set beside its own per-request file",
            summary.detected.tool.name(),
            summary.detected.tool.name()
        )));
    };
    let tool = PeerTool::from_name(&source.tool);
    if tool != summary.detected.tool {
        return Err(ParseError::new(format!(
            "the trace comes from {} but the summary from {}: they cannot describe the same run",
            source.tool,
            summary.detected.tool.name()
        )));
    }
    let keys: Vec<&str> = summary.figures.iter().map(|f| f.tool_key.as_str()).collect();
    let mut figures = source.figures.read()?;
    figures.retain(|f| !keys.contains(&f.tool_key.as_str()));
    // A figure over per-request values the trace does not keep (imported by an older version)
    // cannot be recomputed: say so, and how to get them.
    figures.extend(summary.figures.iter().cloned().map(|mut f| {
        if f.sample.as_ref().is_some_and(|name| !source.samples.contains_key(name)) {
            f.reproducibility = Reproducibility::Not(format!(
                "this trace does not keep {}'s per-request `{}` values: import the per-request file again with this version",
                summary.detected.tool.name(),
                f.sample.as_deref().unwrap_or_default()
            ));
        }
        f
    }));
    source.figures = PeerFigures::of(&figures);
    if source.version.is_none() {
        source.version = summary.detected.version.clone();
    }
    let c = &mut trace.header.conditions;
    let s = &summary.conditions;
    c.model = c.model.take().or_else(|| s.model.clone());
    c.concurrency = c.concurrency.or(s.concurrency);
    c.rate_per_s = c.rate_per_s.or(s.rate_per_s);
    c.arrival = c.arrival.take().or_else(|| s.arrival.clone());
    c.max_tokens = c.max_tokens.or(s.max_tokens);
    let measured = trace.attempts.iter().filter(|a| a.phase == crate::trace::Phase::Measure).count() as u64;
    if let Some(n) = summary.attempts {
        if n != measured {
            trace.warnings.push(format!(
                "the summary counts {n} requests but the per-request file holds {measured} measured attempts: are they from the same run?"
            ));
        }
    }
    if let Some(n) = summary.successes {
        let succeeded = trace
            .attempts
            .iter()
            .filter(|a| a.phase == crate::trace::Phase::Measure && a.outcome.is_success())
            .count() as u64;
        if n != succeeded {
            trace.warnings.push(format!(
                "the summary counts {n} requests it kept but the per-request file holds {succeeded} complete successes: are they \
                 from the same run?"
            ));
        }
    }
    if let Some(d) = summary.duration_s {
        // AIPerf's benchmark_duration spans the records without an error only; compare like with
        // like (each end kept to the microsecond), and say when the window differs by definition.
        let tool = summary.detected.tool.name();
        match crate::reproduce::success_span_s(trace) {
            Some(span) if (d - span).abs() > 2e-6 + 1e-9 * d.abs() => trace.warnings.push(format!(
                "the summary's benchmark duration is {d} s, but the per-request records without an error span {span} s \
                 (first request → last response, as {tool} measures it): they do not describe the same run"
            )),
            Some(_) => {
                if let Some(w) = trace.header.window.filter(|w| (w.length_s - d).abs() > 2e-6 + 1e-9 * d.abs()) {
                    trace.warnings.push(format!(
                        "a definition difference, not a mismatch: {tool}'s benchmark duration ({d} s) spans only the requests \
                         without an error, and its throughputs divide by it; the lesson's window ({} s) spans every attempt, \
                         failures included",
                        w.length_s
                    ));
                }
            }
            None => {}
        }
    }
    Ok(())
}

/// A statistic's key in AIPerf's and GenAI-Perf's aggregates (`avg`, `std`, `min`, `max`,
/// `p50`, `p99.9`, …): both compute them with numpy (std ddof 0, linear percentiles).
fn aggregate_stat(key: &str) -> Option<Stat> {
    Some(match key {
        "avg" => Stat::Mean,
        "std" => Stat::Std { ddof: 0 },
        "min" => Stat::Min,
        "max" => Stat::Max,
        p => match p.strip_prefix('p')?.parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Stat::Percentile { p, method: PeerPercentile::Linear },
            _ => return None,
        },
    })
}

/// The tool's own figures a trace carries (empty for our own traces).
pub fn figures(trace: &Trace) -> Vec<PeerFigure> {
    trace.peer_figures()
}

// ---------------------------------------------------------------------------------------------
// Recognition

enum Sniffed {
    /// Our own formats, read by [`parse_trace`].
    Ours(Detected),
    Peer(PeerFile),
}

/// A peer tool's file as recognised, holding what its importer reads.
enum PeerFile {
    JsonLines(Detected),
    Json(Detected, Json),
    /// Recognised, and answered with what to upload instead.
    Refused(Detected, String),
    /// JSON Lines of one result object per run (SGLang appends a line per run).
    Runs(Detected, Vec<Map<String, Value>>),
}

/// A whole-JSON file in the shape its detection saw, so each importer takes the typed value it
/// reads and never re-checks (or assumes) what detection already decided.
enum Json {
    /// vLLM `--save-result --save-detailed` or SGLang `--output-details`: one run's object.
    Run(Map<String, Value>),
    /// guidellm `benchmarks.json`: the root (for `args`) and its `benchmarks`.
    Benchmarks(Map<String, Value>, Vec<Value>),
    /// GenAI-Perf `profile_export.json`: its `experiments`.
    Experiments(Vec<Value>),
    /// LLMPerf `*_individual_responses.json`: its records.
    Records(Vec<Value>),
    /// One AIPerf per-request record written as a whole file.
    AiperfRecord(Map<String, Value>),
    /// An aggregate-only object: refused, or read as the tool's figures.
    Aggregate(Map<String, Value>),
    /// Nothing an importer reads (unknown or unsupported layouts).
    Other,
}

impl Json {
    fn of(d: &Detected, value: Value) -> Json {
        match (d.tool, d.content, value) {
            (PeerTool::Vllm | PeerTool::Sglang, Content::PerRequest, Value::Object(map)) => Json::Run(map),
            (PeerTool::Guidellm, Content::PerRequest, Value::Object(mut map)) => match map.remove("benchmarks") {
                Some(Value::Array(benchmarks)) => Json::Benchmarks(map, benchmarks),
                _ => Json::Other,
            },
            (PeerTool::GenaiPerf, Content::PerRequest, Value::Object(mut map)) => match map.remove("experiments") {
                Some(Value::Array(experiments)) => Json::Experiments(experiments),
                _ => Json::Other,
            },
            (PeerTool::Llmperf, Content::PerRequest, Value::Array(records)) => Json::Records(records),
            (PeerTool::Aiperf, Content::PerRequest, Value::Object(map)) => Json::AiperfRecord(map),
            (_, Content::AggregateOnly, Value::Object(map)) => Json::Aggregate(map),
            _ => Json::Other,
        }
    }
}

impl Sniffed {
    fn detected(&self) -> &Detected {
        match self {
            Sniffed::Ours(d) => d,
            Sniffed::Peer(p) => p.detected(),
        }
    }
}

impl PeerFile {
    fn detected(&self) -> &Detected {
        match self {
            PeerFile::JsonLines(d) | PeerFile::Json(d, _) | PeerFile::Refused(d, _) | PeerFile::Runs(d, _) => d,
        }
    }
}

fn describe(d: &Detected) -> String {
    let what = match d.content {
        Content::Trace => "trace",
        Content::PerRequest => "per-request file",
        Content::AggregateOnly => "aggregate-only file",
        Content::Unsupported => "file",
        Content::Unknown => "file",
    };
    match d.tool {
        PeerTool::Unknown => "a file of an unknown tool".to_string(),
        tool => format!("a {} {what}", tool.name()),
    }
}

/// The tools whose files are written with Python's `json.dump(s)` (default `allow_nan=True`),
/// which writes a non-finite float as the bare token `Infinity`, `-Infinity` or `NaN`: not JSON,
/// but what these tools write (SGLang's default `--request-rate inf` lands in every result).
/// guidellm (pydantic) and AIPerf (orjson/pydantic) write `null` instead, and GenAI-Perf's
/// exports are read through the same json module but hold no non-finite value it writes.
const PYTHON_JSON_TOOLS: [PeerTool; 3] = [PeerTool::Sglang, PeerTool::Vllm, PeerTool::Llmperf];

/// Reads a file, first as JSON; when that fails only because of Python's non-finite tokens
/// outside strings, reads it again with each token as a string (`"Infinity"`, `"NaN"`: the
/// importers' [`number`] reads them as the non-finite numbers they stand for) and keeps it
/// only when the tool detected is one that writes them; the trace then says so in a warning.
fn sniff(text: &str) -> Result<Sniffed, ParseError> {
    let strict = sniff_strict(text);
    let Err(error) = strict else { return strict };
    let Some((rewritten, tokens)) = python_tokens::rewrite(text) else { return Err(error) };
    let Ok(mut sniffed) = sniff_strict(&rewritten) else { return Err(error) };
    let d = sniffed.detected();
    if !PYTHON_JSON_TOOLS.contains(&d.tool) {
        let first = &tokens[0];
        let tool = match d.tool {
            PeerTool::Unknown => "a file of no tool Trace Lab knows".to_string(),
            tool => format!("a {} file", tool.name()),
        };
        return Err(ParseError::new(format!(
            "not valid JSON at column {}: the bare token `{}`{} is Python's json.dumps spelling of a non-finite number, which only \
             SGLang bench_serving, vLLM bench serve and LLMPerf files may hold; this is {tool} ({}), whose writer never puts it \
             there: was the file edited? Replace it with null, or upload the file as the tool wrote it",
            first.column,
            first.token,
            first.key.as_ref().map(|k| format!(" (at `{k}`)")).unwrap_or_default(),
            d.evidence
        ))
        .at_line(first.line));
    }
    let note = python_tokens::describe(&tokens);
    match &mut sniffed {
        Sniffed::Peer(PeerFile::JsonLines(d) | PeerFile::Json(d, _) | PeerFile::Refused(d, _) | PeerFile::Runs(d, _)) => {
            d.nonstandard = Some(note);
        }
        Sniffed::Ours(_) => {}
    }
    Ok(sniffed)
}

fn sniff_strict(text: &str) -> Result<Sniffed, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ParseError::new(
            "the file is empty: expected a trace or a benchmark tool's result file",
        ));
    }
    if let Some(e) = refuse::not_text(text) {
        return Err(e);
    }
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let starts = first_line.trim_start().chars().next();
    if !matches!(starts, Some('{') | Some('[')) {
        if let Some((d, message)) = refuse::aggregate_csv(first_line) {
            return Ok(Sniffed::Peer(PeerFile::Refused(d, message)));
        }
        return Ok(Sniffed::Ours(Detected::new(
            PeerTool::TraceLab,
            Content::Trace,
            "tracelab-csv",
            "the first line is not JSON, so it is read as the classroom CSV",
        )));
    }
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(first_line) {
        if map.contains_key("kind") {
            return Ok(Sniffed::Ours(Detected::new(
                PeerTool::TraceLab,
                Content::Trace,
                "tracelab-jsonl",
                "the first line is a JSON record with a `kind`",
            )));
        }
        if map.contains_key("metadata") && (map.contains_key("metrics") || map.contains_key("error")) {
            return Ok(Sniffed::Peer(PeerFile::JsonLines(aiperf::detect_record(&map))));
        }
        let rest_is_empty = text.trim_start()[first_line.trim_start().len()..].trim().is_empty();
        if rest_is_empty {
            let value = Value::Object(map);
            if let Some(refused) = refused_json(&value) {
                return Ok(Sniffed::Peer(refused));
            }
            return Ok(Sniffed::Peer(match classify(&value) {
                d if d.tool == PeerTool::Sglang && d.content == Content::AggregateOnly => {
                    PeerFile::Refused(d, refuse::sglang_aggregate(1).1)
                }
                d => {
                    let json = Json::of(&d, value);
                    PeerFile::Json(d, json)
                }
            }));
        }
        if refuse::is_sglang(&map) {
            return sglang_lines(text);
        }
    } else if first_line.contains("\"kind\"") && first_line.trim_start().starts_with('{') {
        // Our JSON Lines with a broken first record: our own reader says what is wrong.
        return Ok(Sniffed::Ours(Detected::new(
            PeerTool::TraceLab,
            Content::Trace,
            "tracelab-jsonl",
            "the first line mentions `kind`",
        )));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Ok(Sniffed::Peer(refused_json(&value).unwrap_or_else(|| {
            let d = classify(&value);
            let json = Json::of(&d, value);
            PeerFile::Json(d, json)
        }))),
        Err(err) => Err(json_error(text, err)),
    }
}

/// Whether a file is in one of our own formats (trace format v1 or the classroom CSV), read by
/// [`parse_trace`]; anything else goes to the importers. Decides as [`load_upload`] does.
pub fn is_ours(text: &str) -> bool {
    // The same decisions as `sniff`, in the same order, without reaching any importer: the lab
    // links this, and the importers stay in their own bundle.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() || refuse::not_text(text).is_some() {
        return false;
    }
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !matches!(first_line.trim_start().chars().next(), Some('{') | Some('[')) {
        return refuse::aggregate_csv(first_line).is_none();
    }
    match serde_json::from_str::<Value>(first_line) {
        Ok(Value::Object(map)) => map.contains_key("kind"),
        Ok(_) => false,
        Err(_) => first_line.contains("\"kind\"") && first_line.trim_start().starts_with('{'),
    }
}

/// Whole-JSON layouts that are recognised only to be refused.
fn refused_json(value: &Value) -> Option<PeerFile> {
    if let Some((d, message)) = refuse::hf_inference_benchmarker(value) {
        return Some(PeerFile::Refused(d, message));
    }
    if let Value::Array(items) = value {
        if let Some(Value::Object(first)) = items.first() {
            if let Some((d, message)) = refuse::vllm_sweep(first, items.len()) {
                return Some(PeerFile::Refused(d, message));
            }
        }
    }
    None
}

/// SGLang's `--output-file`, one JSON line appended per run: each line a run.
fn sglang_lines(text: &str) -> Result<Sniffed, ParseError> {
    let mut runs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(run)) => runs.push(run),
            Ok(other) => {
                return Err(ParseError::new(format!(
                    "SGLang bench_serving output: each line should be one run's JSON object, found {}",
                    kind_of(&other)
                ))
                .at_line(i + 1))
            }
            Err(err) => {
                return Err(ParseError::new(format!(
                    "SGLang bench_serving output: not valid JSON at column {}: {} (cut off?); nothing was imported",
                    err.column(),
                    strip_position(&err.to_string())
                ))
                .at_line(i + 1))
            }
        }
    }
    let detailed = runs.iter().any(|r| r.get("ttfts").is_some());
    if !detailed {
        let (d, message) = refuse::sglang_aggregate(runs.len());
        return Ok(Sniffed::Peer(PeerFile::Refused(d, message)));
    }
    let d = Detected::new(
        PeerTool::Sglang,
        Content::PerRequest,
        "sglang-bench-serving-details",
        format!("SGLang bench_serving results with per-request lists ({} runs)", runs.len()),
    );
    Ok(Sniffed::Peer(PeerFile::Runs(d, runs)))
}

/// Guesses the tool of a file that did not parse, from the keys it mentions.
fn guess_from_text(text: &str) -> Option<(PeerTool, &'static str)> {
    let has = |s: &str| text.contains(s);
    // SGLang's own keys first: its results share vLLM's `ttfts`/`itls` (as `refuse::is_sglang`).
    if has("\"total_output_tokens_retokenized\"") || has("\"mean_e2e_latency_ms\"") || has("\"backend\": \"sglang") || has("\"backend\":\"sglang") {
        Some((PeerTool::Sglang, "SGLang bench_serving result (saw `total_output_tokens_retokenized`/`backend: sglang`)"))
    } else if has("\"ttfts\"") || has("\"itls\"") {
        Some((PeerTool::Vllm, "vLLM bench serve result (saw `ttfts`/`itls`)"))
    } else if has("\"mean_ttft_ms\"") {
        Some((PeerTool::Vllm, "vLLM bench serve result (saw `mean_ttft_ms`)"))
    } else if has("\"benchmarks\"") && (has("guidellm") || has("generative_benchmark")) {
        Some((PeerTool::Guidellm, "guidellm benchmarks.json (saw `benchmarks`)"))
    } else if has("\"results_ttft_s") {
        Some((PeerTool::Llmperf, "LLMPerf summary (saw `results_ttft_s…`)"))
    } else if has("\"ttft_s\"") && has("\"end_to_end_latency_s\"") {
        Some((PeerTool::Llmperf, "LLMPerf individual responses (saw `ttft_s`, `end_to_end_latency_s`)"))
    } else if has("\"perf_analyzer\"") || has("genai_perf") || has("\"telemetry_stats\"") {
        Some((PeerTool::GenaiPerf, "GenAI-Perf export (saw `perf_analyzer`/`telemetry_stats`)"))
    } else if has("\"records\"") && has("\"error_request_count\"") {
        Some((PeerTool::Aiperf, "AIPerf profile_export_aiperf.json (saw `records`)"))
    } else if has("\"metadata\"") && has("\"metrics\"") {
        Some((PeerTool::Aiperf, "AIPerf profile_export.jsonl (saw `metadata`, `metrics`)"))
    } else {
        None
    }
}

fn json_error(text: &str, err: serde_json::Error) -> ParseError {
    let guess = guess_from_text(text).map(|(_, what)| what);
    let looks = match guess {
        Some(what) => format!("it looks like a {what}"),
        None => "no known tool's keys were seen".to_string(),
    };
    let message = strip_position(&err.to_string());
    let e = if err.is_eof() {
        ParseError::new(format!(
            "the JSON ends early at column {} — {looks}, cut off (truncated download or copy?); nothing was imported",
            err.column()
        ))
    } else {
        ParseError::new(format!(
            "not valid JSON at column {}: {message} — {looks}; nothing was imported",
            err.column()
        ))
    };
    e.at_line(err.line())
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn classify(value: &Value) -> Detected {
    match value {
        Value::Array(items) => match items.first() {
            None => Detected::unknown("an empty JSON array: no records"),
            Some(Value::Object(first)) if llmperf::is_record(first) => Detected::new(
                PeerTool::Llmperf,
                Content::PerRequest,
                "llmperf-individual-responses",
                "an array of records with `ttft_s` and `end_to_end_latency_s`",
            ),
            Some(Value::Object(first)) => Detected::unknown(format!(
                "a JSON array of records with keys {}, which no supported tool writes",
                key_list(first)
            )),
            Some(_) => Detected::unknown("a JSON array that does not hold records"),
        },
        Value::Object(map) => classify_object(map),
        _ => Detected::unknown("a single JSON value, not a result file"),
    }
}

fn classify_object(map: &Map<String, Value>) -> Detected {
    if refuse::is_sglang(map) {
        if map.contains_key("ttfts") {
            return Detected::new(
                PeerTool::Sglang,
                Content::PerRequest,
                "sglang-bench-serving-details",
                "SGLang bench_serving results with per-request lists (`ttfts`, `itls`, `output_lens`, `errors`)",
            );
        }
        return refuse::sglang_aggregate(1).0;
    }
    if let Some(d) = vllm::detect(map) {
        return d;
    }
    if let Some(d) = guidellm::detect(map) {
        return d;
    }
    if let Some(d) = llmperf::detect_summary(map) {
        return d;
    }
    if let Some(d) = aiperf::detect_aggregate(map) {
        return d;
    }
    if let Some(d) = genai_perf::detect(map) {
        return d;
    }
    if map.contains_key("experiments") && map.get("experiments").is_some_and(Value::is_array) {
        return Detected::new(
            PeerTool::GenaiPerf,
            Content::Unsupported,
            "genai-perf-profile-export",
            "an `experiments` list with per-request `response_timestamps` (perf_analyzer / GenAI-Perf profile_export.json)",
        );
    }
    if map.contains_key("metadata") && (map.contains_key("metrics") || map.contains_key("error")) {
        return aiperf::detect_record(map);
    }
    Detected::unknown(format!("a JSON object with keys {}, which no supported tool writes", key_list(map)))
}

fn key_list(map: &Map<String, Value>) -> String {
    let mut keys: Vec<String> = map.keys().take(8).map(|k| format!("`{k}`")).collect();
    if map.len() > 8 {
        keys.push("…".into());
    }
    if keys.is_empty() {
        "(none)".into()
    } else {
        keys.join(", ")
    }
}

fn import_sniffed(file: &str, text: &str, peer: PeerFile) -> Result<Imported, ParseError> {
    let result = match peer {
        PeerFile::Refused(_, message) => Err(ParseError::new(message)),
        PeerFile::Runs(d, runs) => sglang_runs(d, &runs),
        PeerFile::JsonLines(d) => aiperf::import_jsonl(d, text),
        PeerFile::Json(d, json) => match (d.tool, d.content, json) {
            (_, _, Json::Run(map)) => vllm::import(d, &map),
            (_, _, Json::Benchmarks(root, benchmarks)) => guidellm::import(d, &root, &benchmarks),
            (_, _, Json::Experiments(experiments)) => genai_perf::import(d, &experiments),
            (_, _, Json::Records(records)) => llmperf::import(d, &records),
            (_, _, Json::AiperfRecord(map)) => {
                let line = Value::Object(map).to_string();
                aiperf::import_jsonl(d, &line)
            }
            (_, _, Json::Aggregate(map)) => Err(refuse_aggregate(&d, &map)),
            (_, Content::AggregateOnly, Json::Other) => Err(refuse_aggregate(&d, &Map::new())),
            (PeerTool::GenaiPerf, Content::Unsupported, Json::Other) => Err(ParseError::new(format!(
                "recognised {}, but its first request carries no `timestamp` and `response_timestamps`: a layout this version \
                 does not know. Upload the profile_export.json GenAI-Perf wrote beside its aggregate, or rerun with NVIDIA AIPerf \
                 (GenAI-Perf's successor) and upload its profile_export.jsonl",
                d.evidence
            ))),
            _ => Err(ParseError::new(format!(
                "not a file Trace Lab can open: {}. Supported: a Trace Lab trace (.jsonl, .csv), vLLM bench serve --save-result --save-detailed, \
                 AIPerf profile_export.jsonl, GenAI-Perf profile_export.json, guidellm benchmarks.json, LLMPerf *_individual_responses.json, \
                 SGLang bench_serving --output-details",
                d.evidence
            ))),
        },
    };
    let checked = result.and_then(|mut imported| {
        for t in &mut imported.traces {
            within_limits(&t.trace)?;
            if let Some(note) = &imported.detected.nonstandard {
                t.trace.warnings.push(note.clone());
            }
        }
        Ok(imported)
    });
    checked.map_err(|e| e.in_file(file))
}

/// One trace per line of an SGLang output file (it appends a line per run); lines without
/// per-request lists are skipped with a warning on the first trace.
fn sglang_runs(d: Detected, runs: &[Map<String, Value>]) -> Result<Imported, ParseError> {
    let mut traces = Vec::new();
    let mut skipped = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        if run.get("ttfts").is_none() {
            skipped.push((i + 1).to_string());
            continue;
        }
        let imported = vllm::import(d.clone(), run).map_err(|e| e.at_line(i + 1))?;
        let trace = imported.traces.into_iter().next().expect("one run").trace;
        let rate = run.get("request_rate").map(|r| match r {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let mut label = format!("line {}", i + 1);
        if let Some(r) = rate {
            label.push_str(&format!(": request rate {r}"));
        }
        if let Some(c) = run.get("max_concurrency").and_then(Value::as_u64) {
            label.push_str(&format!(", max concurrency {c}"));
        }
        traces.push(ImportedTrace { label, trace });
    }
    if let (Some(first), false) = (traces.first_mut(), skipped.is_empty()) {
        first.trace.warnings.push(format!(
            "lines {} of this file hold aggregates only (run without --output-details): skipped",
            skipped.join(", ")
        ));
    }
    Ok(Imported { detected: d, traces })
}

fn refuse_aggregate(d: &Detected, value: &Map<String, Value>) -> ParseError {
    let message = match d.tool {
        PeerTool::Vllm => vllm::refusal(value),
        PeerTool::Aiperf => aiperf::refusal(value),
        PeerTool::GenaiPerf => "this is GenAI-Perf's aggregate profile_export_genai_perf.json: summary statistics only, no attempts. \
             Upload profile_export.json from the same artifacts folder instead (GenAI-Perf's per-request export: one entry per \
             request with its response timestamps); this file can then be added beside it as GenAI-Perf's own figures"
            .to_string(),
        PeerTool::Llmperf => llmperf::refusal(value),
        PeerTool::Sglang => refuse::sglang_aggregate(1).1,
        _ => format!("{}: summary statistics only, no attempts", d.evidence),
    };
    ParseError::new(message)
}

// ---------------------------------------------------------------------------------------------
// Shared helpers for the importers

/// A number, or a numeric string (LLMPerf writes some minima as `"550"`); `None` for null.
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// Reads an optional finite number at `key`; a value of the wrong kind is an error naming `path`.
pub(crate) fn opt_num(map: &Map<String, Value>, key: &str, path: &str, what: &str) -> Result<Option<f64>, ParseError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match number(v) {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(ParseError::new(format!("{what}: expected a number, found {}", kind_of(v))).field(path.to_string())),
        },
    }
}

/// Describes a JSON value's kind for an error message.
pub(crate) fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("`{b}`"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("the string \"{short}\"")
        }
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Checks a time (ms) an importer is about to store.
pub(crate) fn time_ms(v: f64, path: &str, what: &str) -> Result<f64, ParseError> {
    if !v.is_finite() {
        return Err(ParseError::new(format!("{what}: `{v}` is not a time")).field(path.to_string()));
    }
    if v < 0.0 {
        return Err(ParseError::new(format!("{what}: negative time {v} ms")).field(path.to_string()));
    }
    if v > MAX_TIME_MS {
        return Err(ParseError::new(format!(
            "{what}: {v} ms is past the latest time a trace may hold (10^15 ms, about 31,700 years)"
        ))
        .field(path.to_string()));
    }
    Ok(v)
}

/// Checks what an importer built against the trace's limits, as the trace parser checks what it
/// reads: the importers compute positions from the tool's own units (epoch seconds, gaps that
/// add up), so the sums are checked here, once, naming the attempt and the field.
fn within_limits(trace: &Trace) -> Result<(), ParseError> {
    crate::parse::validate_header(&trace.header)?;
    for a in &trace.attempts {
        let at = |field: &str| format!("attempt `{}`: {field}", a.id);
        let times = [
            ("start_ms", a.start_ms),
            ("intended_start_ms", a.intended_start_ms),
            ("first_byte_ms", a.first_byte_ms),
            ("ttft_ms", a.ttft_ms),
            ("last_token_ms", a.last_token_ms),
            ("e2e_ms", a.e2e_ms),
        ];
        for (field, v) in times.into_iter().filter_map(|(f, v)| v.map(|v| (f, v))) {
            time_ms(v, field, &at(field))?;
        }
        for (i, e) in a.events.iter().enumerate() {
            let field = format!("events[{i}]");
            time_ms(e.at_ms, &field, &at(&field))?;
        }
    }
    Ok(())
}

/// The error text kept as an attempt's detail: the last line of a Python traceback, at most 500
/// characters. Never response text.
pub(crate) fn detail_text(message: &str) -> Option<String> {
    let message = message.trim();
    if message.is_empty() {
        return None;
    }
    let kept = if message.contains("Traceback (most recent call last)") {
        message.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(message).trim()
    } else {
        message
    };
    let mut out: String = kept.chars().take(500).collect();
    if kept.chars().count() > 500 {
        out.push('…');
    }
    Some(out)
}

/// Classifies a failure the tool describes only in words (and maybe an HTTP status).
/// Cancellations are recognised by the callers. A failure of unknown cause becomes
/// `stream_broken`, as [`FAILURE_MAPPING`] tells the reader.
pub(crate) fn classify_failure(message: &str, http_status: Option<i64>, got_token: bool) -> Outcome {
    if let Some(status) = http_status {
        if (400..=599).contains(&status) {
            return Outcome::HttpError { status: status as u16 };
        }
    }
    let trimmed = message.trim();
    let last_line = trimmed.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    // httpx's `raise_for_status` (guidellm's client): "Server error '500 Internal Server Error'
    // for url '…'", "Client error '429 Too Many Requests' for url '…'".
    for prefix in ["Server error '", "Client error '"] {
        if let Some(rest) = trimmed.split(prefix).nth(1) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(status @ 400..=599) = digits.parse::<u16>() {
                return Outcome::HttpError { status };
            }
        }
    }
    // aiohttp's `ClientResponseError: 429, message='Too Many Requests', …` (vLLM's and SGLang's
    // benchmark clients keep the traceback's last line).
    if let Some(rest) = last_line.split("ClientResponseError: ").nth(1) {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(status @ 400..=599) = digits.parse::<u16>() {
            return Outcome::HttpError { status };
        }
    }
    const REASONS: [(&str, u16); 15] = [
        ("Bad Request", 400),
        ("Unauthorized", 401),
        ("Forbidden", 403),
        ("Not Found", 404),
        ("Method Not Allowed", 405),
        ("Request Timeout", 408),
        ("Payload Too Large", 413),
        ("Request Entity Too Large", 413),
        ("Unprocessable Entity", 422),
        ("Too Many Requests", 429),
        ("Internal Server Error", 500),
        ("Bad Gateway", 502),
        ("Service Unavailable", 503),
        ("Gateway Timeout", 504),
        ("Gateway Time-out", 504),
    ];
    for (reason, status) in REASONS {
        if trimmed.eq_ignore_ascii_case(reason) || last_line.eq_ignore_ascii_case(reason) {
            return Outcome::HttpError { status };
        }
    }
    let lower = trimmed.to_ascii_lowercase();
    if lower.contains("timeout") || lower.contains("timed out") {
        return if got_token { Outcome::TimeoutAfterFirstToken } else { Outcome::TimeoutBeforeFirstToken };
    }
    if !got_token
        && (lower.contains("connectorerror")
            || lower.contains("connecterror")
            || lower.contains("connection refused")
            || lower.contains("cannot connect")
            || lower.contains("connectionerror"))
    {
        return Outcome::ConnectError;
    }
    Outcome::StreamBroken
}

/// The definition every importer records about unclassified failures.
pub(crate) const FAILURE_MAPPING: &str = "Failures are mapped from the tool's error: an HTTP status or reason phrase → http_error, \
     a timeout → timeout_before/after_first_token, a refused connection → connect_error, a cancellation → cancelled, \
     anything else → stream_broken; the tool's message is kept as the attempt's detail.";

/// Makes attempt ids unique by suffixing repeats (`id#2`). A suffixed id is itself recorded, so
/// a file whose ids are `x, x, x#2` gives `x, x#2, x#2#2`, never two `x#2`.
pub(crate) fn unique_id(seen: &mut std::collections::HashMap<String, usize>, id: String) -> String {
    let Some(&used) = seen.get(&id) else {
        seen.insert(id.clone(), 1);
        return id;
    };
    let mut n = used;
    loop {
        n += 1;
        let candidate = format!("{id}#{n}");
        if !seen.contains_key(&candidate) {
            seen.insert(id, n);
            seen.insert(candidate.clone(), 1);
            return candidate;
        }
    }
}
