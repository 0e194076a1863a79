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
//! use tracelab_peers::import::{load_any, PeerTool};
//! let text = r#"[{"error_code": null, "error_msg": "", "ttft_s": 0.5, "end_to_end_latency_s": 2.0,
//!   "inter_token_latency_s": 0.01, "number_input_tokens": 10, "number_output_tokens": 150}]"#;
//! let imported = load_any("run_individual_responses.json", text).unwrap();
//! assert_eq!(imported.detected.tool, PeerTool::Llmperf);
//! let trace = imported.single("run_individual_responses.json").unwrap();
//! assert_eq!(trace.attempts[0].ttft_ms, Some(500.0));
//! ```

mod aiperf;
mod fields;
mod genai_perf;
mod guidellm;
mod llmperf;
mod python_tokens;
mod refuse;
mod sniff;
mod vllm;

pub use tracelab_core::reproduce::{reproduce, resolution_note, ReproRow, ReproSummary};
pub use tracelab_core::trace::peer::{
    Over, PeerFigure, PeerFigures, PeerPercentile, PeerUnit, Quantity, RateSpan, Reproducibility,
    Stat,
};

pub(crate) use fields::{
    classify_failure, detail_text, kind_of, number, opt_num, time_ms, unique_id, FAILURE_MAPPING,
};
use sniff::{describe, import_sniffed, sniff, strip_position, Json, PeerFile, Sniffed};
pub use tracelab_core::handoff::{is_ours, ImportedTrace};

use serde::{Deserialize, Serialize};

use tracelab_core::error::ParseError;
use tracelab_core::parse::parse_trace;
use tracelab_core::trace::{Attempt, Conditions, Footer, Header, Source, Trace};

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
    fn new(
        tool: PeerTool,
        content: Content,
        layout: &str,
        evidence: impl Into<String>,
    ) -> Detected {
        Detected {
            tool,
            content,
            layout: layout.to_string(),
            version: None,
            evidence: evidence.into(),
            nonstandard: None,
        }
    }

    fn unknown(evidence: impl Into<String>) -> Detected {
        Detected::new(PeerTool::Unknown, Content::Unknown, "unknown", evidence)
    }
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
        footer: whole.then_some(Footer {
            finished_cleanly: true,
            attempts: count,
            gpu_samples: 0,
        }),
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
                let label = if t.label.is_empty() {
                    "the run".to_string()
                } else {
                    t.label.clone()
                };
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
            Ok(Loaded::Traces(Imported {
                detected,
                traces: vec![ImportedTrace {
                    label: String::new(),
                    trace,
                }],
            }))
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
            Ok(Imported {
                detected,
                traces: vec![ImportedTrace {
                    label: String::new(),
                    trace,
                }],
            })
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
                let trace = tracelab_core::parse::parse_trace_bytes(file, bytes)?;
                let detected = detect(good);
                return Ok(Imported {
                    detected,
                    traces: vec![ImportedTrace {
                        label: String::new(),
                        trace,
                    }],
                });
            }
            let line = good.bytes().filter(|&b| b == b'\n').count() + 1;
            Err(ParseError::new(
                "the file is not UTF-8 text (is it a benchmark result or a trace?)",
            )
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
    let keys: Vec<&str> = summary
        .figures
        .iter()
        .map(|f| f.tool_key.as_str())
        .collect();
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
    let measured = trace
        .attempts
        .iter()
        .filter(|a| a.phase == tracelab_core::trace::Phase::Measure)
        .count() as u64;
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
            .filter(|a| a.phase == tracelab_core::trace::Phase::Measure && a.outcome.is_success())
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
        match tracelab_core::reproduce::success_span_s(trace) {
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
            Ok(p) if p > 0.0 && p <= 100.0 => Stat::Percentile {
                p,
                method: PeerPercentile::Linear,
            },
            _ => return None,
        },
    })
}

/// The tool's own figures a trace carries (empty for our own traces).
pub fn figures(trace: &Trace) -> Vec<PeerFigure> {
    trace.peer_figures()
}
