//! Recognising a file from its content, never from its name: our own formats, a peer tool's
//! per-request file (with the Python `json.dumps` spellings of non-finite numbers read where the
//! tool is known to write them), or a layout recognised only to be refused with what to upload
//! instead. Then handing what was recognised to its importer.

use serde_json::{Map, Value};

use super::fields::{kind_of, within_limits};
use super::{
    aiperf, genai_perf, guidellm, llmperf, python_tokens, refuse, vllm, Content, Detected,
    Imported, ImportedTrace, PeerTool,
};
use tracelab_core::error::ParseError;

pub(super) enum Sniffed {
    /// Our own formats, read by [`parse_trace`](tracelab_core::parse::parse_trace).
    Ours(Detected),
    Peer(PeerFile),
}

/// A peer tool's file as recognised, holding what its importer reads.
pub(super) enum PeerFile {
    JsonLines(Detected),
    Json(Detected, Json),
    /// Recognised, and answered with what to upload instead.
    Refused(Detected, String),
    /// JSON Lines of one result object per run (SGLang appends a line per run).
    Runs(Detected, Vec<Map<String, Value>>),
}

/// A whole-JSON file in the shape its detection saw, so each importer takes the typed value it
/// reads and never re-checks (or assumes) what detection already decided.
pub(super) enum Json {
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
    pub(super) fn of(d: &Detected, value: Value) -> Json {
        match (d.tool, d.content, value) {
            (PeerTool::Vllm | PeerTool::Sglang, Content::PerRequest, Value::Object(map)) => {
                Json::Run(map)
            }
            (PeerTool::Guidellm, Content::PerRequest, Value::Object(mut map)) => {
                match map.remove("benchmarks") {
                    Some(Value::Array(benchmarks)) => Json::Benchmarks(map, benchmarks),
                    _ => Json::Other,
                }
            }
            (PeerTool::GenaiPerf, Content::PerRequest, Value::Object(mut map)) => {
                match map.remove("experiments") {
                    Some(Value::Array(experiments)) => Json::Experiments(experiments),
                    _ => Json::Other,
                }
            }
            (PeerTool::Llmperf, Content::PerRequest, Value::Array(records)) => {
                Json::Records(records)
            }
            (PeerTool::Aiperf, Content::PerRequest, Value::Object(map)) => Json::AiperfRecord(map),
            (_, Content::AggregateOnly, Value::Object(map)) => Json::Aggregate(map),
            _ => Json::Other,
        }
    }
}

impl Sniffed {
    pub(super) fn detected(&self) -> &Detected {
        match self {
            Sniffed::Ours(d) => d,
            Sniffed::Peer(p) => p.detected(),
        }
    }
}

impl PeerFile {
    pub(super) fn detected(&self) -> &Detected {
        match self {
            PeerFile::JsonLines(d)
            | PeerFile::Json(d, _)
            | PeerFile::Refused(d, _)
            | PeerFile::Runs(d, _) => d,
        }
    }
}

pub(super) fn describe(d: &Detected) -> String {
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
pub(super) const PYTHON_JSON_TOOLS: [PeerTool; 3] =
    [PeerTool::Sglang, PeerTool::Vllm, PeerTool::Llmperf];

/// Reads a file, first as JSON; when that fails only because of Python's non-finite tokens
/// outside strings, reads it again with each token as a string (`"Infinity"`, `"NaN"`: the
/// importers' [`number`](super::number) reads them as the non-finite numbers they stand for) and keeps it
/// only when the tool detected is one that writes them; the trace then says so in a warning.
pub(super) fn sniff(text: &str) -> Result<Sniffed, ParseError> {
    let strict = sniff_strict(text);
    let Err(error) = strict else { return strict };
    let Some((rewritten, tokens)) = python_tokens::rewrite(text) else {
        return Err(error);
    };
    let Ok(mut sniffed) = sniff_strict(&rewritten) else {
        return Err(error);
    };
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
        Sniffed::Peer(
            PeerFile::JsonLines(d)
            | PeerFile::Json(d, _)
            | PeerFile::Refused(d, _)
            | PeerFile::Runs(d, _),
        ) => {
            d.nonstandard = Some(note);
        }
        Sniffed::Ours(_) => {}
    }
    Ok(sniffed)
}

pub(super) fn sniff_strict(text: &str) -> Result<Sniffed, ParseError> {
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
        if map.contains_key("metadata")
            && (map.contains_key("metrics") || map.contains_key("error"))
        {
            return Ok(Sniffed::Peer(PeerFile::JsonLines(aiperf::detect_record(
                &map,
            ))));
        }
        let rest_is_empty = text.trim_start()[first_line.trim_start().len()..]
            .trim()
            .is_empty();
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

/// Whole-JSON layouts that are recognised only to be refused.
pub(super) fn refused_json(value: &Value) -> Option<PeerFile> {
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
pub(super) fn sglang_lines(text: &str) -> Result<Sniffed, ParseError> {
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
        format!(
            "SGLang bench_serving results with per-request lists ({} runs)",
            runs.len()
        ),
    );
    Ok(Sniffed::Peer(PeerFile::Runs(d, runs)))
}

/// Guesses the tool of a file that did not parse, from the keys it mentions.
pub(super) fn guess_from_text(text: &str) -> Option<(PeerTool, &'static str)> {
    let has = |s: &str| text.contains(s);
    // SGLang's own keys first: its results share vLLM's `ttfts`/`itls` (as `refuse::is_sglang`).
    if has("\"total_output_tokens_retokenized\"")
        || has("\"mean_e2e_latency_ms\"")
        || has("\"backend\": \"sglang")
        || has("\"backend\":\"sglang")
    {
        Some((
            PeerTool::Sglang,
            "SGLang bench_serving result (saw `total_output_tokens_retokenized`/`backend: sglang`)",
        ))
    } else if has("\"ttfts\"") || has("\"itls\"") {
        Some((
            PeerTool::Vllm,
            "vLLM bench serve result (saw `ttfts`/`itls`)",
        ))
    } else if has("\"mean_ttft_ms\"") {
        Some((
            PeerTool::Vllm,
            "vLLM bench serve result (saw `mean_ttft_ms`)",
        ))
    } else if has("\"benchmarks\"") && (has("guidellm") || has("generative_benchmark")) {
        Some((
            PeerTool::Guidellm,
            "guidellm benchmarks.json (saw `benchmarks`)",
        ))
    } else if has("\"results_ttft_s") {
        Some((PeerTool::Llmperf, "LLMPerf summary (saw `results_ttft_s…`)"))
    } else if has("\"ttft_s\"") && has("\"end_to_end_latency_s\"") {
        Some((
            PeerTool::Llmperf,
            "LLMPerf individual responses (saw `ttft_s`, `end_to_end_latency_s`)",
        ))
    } else if has("\"perf_analyzer\"") || has("genai_perf") || has("\"telemetry_stats\"") {
        Some((
            PeerTool::GenaiPerf,
            "GenAI-Perf export (saw `perf_analyzer`/`telemetry_stats`)",
        ))
    } else if has("\"records\"") && has("\"error_request_count\"") {
        Some((
            PeerTool::Aiperf,
            "AIPerf profile_export_aiperf.json (saw `records`)",
        ))
    } else if has("\"metadata\"") && has("\"metrics\"") {
        Some((
            PeerTool::Aiperf,
            "AIPerf profile_export.jsonl (saw `metadata`, `metrics`)",
        ))
    } else {
        None
    }
}

pub(super) fn json_error(text: &str, err: serde_json::Error) -> ParseError {
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

pub(super) fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

pub(super) fn classify(value: &Value) -> Detected {
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

pub(super) fn classify_object(map: &Map<String, Value>) -> Detected {
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
    Detected::unknown(format!(
        "a JSON object with keys {}, which no supported tool writes",
        key_list(map)
    ))
}

pub(super) fn key_list(map: &Map<String, Value>) -> String {
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

pub(super) fn import_sniffed(
    file: &str,
    text: &str,
    peer: PeerFile,
) -> Result<Imported, ParseError> {
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
pub(super) fn sglang_runs(
    d: Detected,
    runs: &[Map<String, Value>],
) -> Result<Imported, ParseError> {
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
    Ok(Imported {
        detected: d,
        traces,
    })
}

pub(super) fn refuse_aggregate(d: &Detected, value: &Map<String, Value>) -> ParseError {
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
