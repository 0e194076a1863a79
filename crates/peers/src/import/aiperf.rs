//! NVIDIA AIPerf: the per-record `profile_export.jsonl` (older layout: `metrics.ttft`,
//! `metadata.timestamp_ns`; newer: `metrics.time_to_first_token`, `metadata.request_start_ns`)
//! and the aggregate `profile_export_aiperf.json` (the tool's own figures).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    classify_failure, detail_text, time_ms, unique_id, Content, Detected, Imported, ImportedTrace,
    PeerFigure, PeerSummary, PeerTool, PeerUnit, Quantity, RateSpan, Reproducibility, Stat,
    FAILURE_MAPPING,
};
use tracelab_core::error::ParseError;
use tracelab_core::trace::*;

const WHAT: &str = "AIPerf record";
const OLD: &str = "aiperf-jsonl-ttft";
const NEW: &str = "aiperf-jsonl-time-to-first-token";

fn layout_of(map: &Map<String, Value>) -> Option<&'static str> {
    let metrics = map.get("metrics").and_then(Value::as_object);
    let metadata = map.get("metadata").and_then(Value::as_object);
    if metrics.is_some_and(|m| m.contains_key("time_to_first_token"))
        || metadata.is_some_and(|m| m.contains_key("request_start_ns"))
    {
        Some(NEW)
    } else if metrics.is_some_and(|m| m.contains_key("ttft"))
        || metadata.is_some_and(|m| m.contains_key("timestamp_ns"))
    {
        Some(OLD)
    } else {
        None
    }
}

pub(super) fn detect_record(map: &Map<String, Value>) -> Detected {
    let layout = layout_of(map).unwrap_or("aiperf-jsonl");
    Detected::new(
        PeerTool::Aiperf,
        Content::PerRequest,
        layout,
        "JSON Lines records with `metadata` and `metrics`/`error` (AIPerf profile_export.jsonl)",
    )
}

pub(super) fn detect_aggregate(map: &Map<String, Value>) -> Option<Detected> {
    let input_config = map.get("input_config").and_then(Value::as_object);
    let genai = input_config
        .is_some_and(|c| c.contains_key("perf_analyzer") || c.contains_key("subcommand"))
        || (map.contains_key("telemetry_stats") && !map.contains_key("error_summary"));
    let stat_entry = |k: &str| {
        map.get(k)
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key("avg"))
    };
    if genai
        && (stat_entry("time_to_first_token")
            || stat_entry("request_latency")
            || stat_entry("request_throughput"))
    {
        return Some(Detected::new(
            PeerTool::GenaiPerf,
            Content::AggregateOnly,
            "genai-perf-aggregate",
            "GenAI-Perf's summary statistics (`time_to_first_token.avg`, `input_config.perf_analyzer`) without per-request data",
        ));
    }
    if let Some(records) = map.get("records").and_then(Value::as_object) {
        if records.values().any(|v| {
            v.as_object()
                .is_some_and(|o| o.contains_key("avg") || o.contains_key("tag"))
        }) {
            return Some(Detected::new(
                PeerTool::Aiperf,
                Content::AggregateOnly,
                "aiperf-aggregate-records",
                "AIPerf's summary statistics under `records` (profile_export_aiperf.json)",
            ));
        }
    }
    let aiperf_marks = map.contains_key("error_summary")
        || map.contains_key("was_cancelled")
        || input_config.is_some_and(|c| c.contains_key("loadgen") || c.contains_key("cli_command"));
    if aiperf_marks
        && (stat_entry("time_to_first_token")
            || stat_entry("request_latency")
            || stat_entry("ttft"))
    {
        let mut d = Detected::new(
            PeerTool::Aiperf,
            Content::AggregateOnly,
            "aiperf-aggregate-flat",
            "AIPerf's summary statistics (`time_to_first_token.avg`, `error_summary`) (profile_export_aiperf.json)",
        );
        d.version = map
            .get("aiperf_version")
            .and_then(Value::as_str)
            .map(str::to_string);
        return Some(d);
    }
    // A run in which every request failed: AIPerf computes no metric over the records without an
    // error, so no `request_count` and no latency; what is left is the error count and summary.
    if (aiperf_marks || map.contains_key("aiperf_version")) && all_failed(map) {
        let mut d = Detected::new(
            PeerTool::Aiperf,
            Content::AggregateOnly,
            "aiperf-aggregate-flat",
            "AIPerf's summary of a run in which every request failed (`error_request_count`, `error_summary`, no `request_count`) \
             (profile_export_aiperf.json)",
        );
        d.version = map
            .get("aiperf_version")
            .and_then(Value::as_str)
            .map(str::to_string);
        return Some(d);
    }
    None
}

/// An AIPerf aggregate with errors and no record without one: `error_request_count` (or a
/// non-empty `error_summary`) and no `request_count`, flat or under `records`.
fn all_failed(map: &Map<String, Value>) -> bool {
    let stats = map.get("records").and_then(Value::as_object).unwrap_or(map);
    let errors = stats
        .get("error_request_count")
        .and_then(Value::as_object)
        .and_then(|o| o.get("avg"))
        .and_then(super::number);
    let summarised = map
        .get("error_summary")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty());
    !stats.contains_key("request_count") && (errors.is_some_and(|e| e > 0.0) || summarised)
}

/// `error_summary` in words: "500 Internal Server Error × 4; 499 RequestCancellationError × 1".
fn error_summary_words(map: &Map<String, Value>) -> Option<String> {
    let list = map.get("error_summary").and_then(Value::as_array)?;
    let parts: Vec<String> = list
        .iter()
        .filter_map(|e| {
            let details = e.get("error_details");
            let code = details.and_then(|d| d.get("code")).and_then(Value::as_i64);
            let kind = details
                .and_then(|d| d.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let count = e.get("count").and_then(super::number)?;
            let code = code.map(|c| format!("{c} ")).unwrap_or_default();
            Some(
                format!("{code}{kind} × {}", tracelab_core::format::trim_num(count))
                    .trim()
                    .to_string(),
            )
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Why an AIPerf aggregate is refused, and what to upload instead; for a run in which every
/// request failed, its error summary too.
pub(super) fn refusal(map: &Map<String, Value>) -> String {
    let mut message = "this is AIPerf's aggregate profile_export_aiperf.json: summary statistics only, no attempts. Upload \
         profile_export.jsonl from the same artifacts folder (one record per request) instead; this file can then be added \
         beside it as AIPerf's own figures"
        .to_string();
    if all_failed(map) {
        let errors = error_summary_words(map)
            .map(|w| format!(" (its error summary: {w})"))
            .unwrap_or_default();
        message.push_str(&format!(
            ". Every request of this run failed{errors}: AIPerf then computes no latency at all, and profile_export.jsonl keeps \
             each failed request with its error"
        ));
    }
    message
}

/// A metric's value converted to ms when it is a time; `(value, unit)` otherwise.
fn metric<'a>(
    metrics: &'a Map<String, Value>,
    names: &[&'a str],
) -> Option<(&'a str, &'a Value, &'a str)> {
    names.iter().find_map(|name| {
        let entry = metrics.get(*name)?;
        match entry {
            Value::Object(o) => {
                let value = o.get("value")?;
                let unit = o.get("unit").and_then(Value::as_str).unwrap_or("");
                Some((*name, value, unit))
            }
            Value::Null => None,
            other => Some((*name, other, "")),
        }
    })
}

fn to_ms(value: f64, unit: &str, path: &str) -> Result<f64, ParseError> {
    let ms = match unit {
        "ms" | "" => value,
        "ns" => value / 1e6,
        "us" | "µs" => value / 1e3,
        "s" | "sec" => value * 1e3,
        other => {
            return Err(
                ParseError::new(format!("{WHAT}: unknown time unit `{other}`"))
                    .field(format!("{path}.unit")),
            )
        }
    };
    time_ms(ms, path, WHAT)
}

fn time_metric(metrics: &Map<String, Value>, names: &[&str]) -> Result<Option<f64>, ParseError> {
    match metric(metrics, names) {
        None => Ok(None),
        Some((name, value, unit)) => {
            let path = format!("metrics.{name}.value");
            let v = super::number(value)
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    ParseError::new(format!(
                        "{WHAT}: expected a time, found {}",
                        super::kind_of(value)
                    ))
                    .field(path.clone())
                })?;
            Ok(Some(to_ms(v, unit, &path)?))
        }
    }
}

fn count_metric(metrics: &Map<String, Value>, names: &[&str]) -> Option<u32> {
    metric(metrics, names)
        .and_then(|(_, v, _)| v.as_f64())
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v.round() as u32)
}

/// A timestamp in ns since the epoch: an integer (exact), or a float (to its ~256 ns precision).
fn ns_field(map: Option<&Map<String, Value>>, key: &str) -> Option<u64> {
    let v = map?.get(key)?;
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| f as u64)
    })
}

struct Record {
    line: usize,
    id: String,
    phase: Phase,
    start_ns: Option<u64>,
    ttft_ms: Option<f64>,
    e2e_ms: Option<f64>,
    gaps_ms: Vec<f64>,
    output_tokens: Option<u32>,
    input_tokens: Option<u32>,
    error: Option<(Outcome, Option<String>)>,
}

fn read_record(map: &Map<String, Value>, line: usize) -> Result<Record, ParseError> {
    let metadata = match map.get("metadata") {
        Some(Value::Object(m)) => Some(m),
        Some(Value::Null) | None => {
            return Err(ParseError::new(format!(
                "{WHAT} without `metadata`: every record of profile_export.jsonl has metadata, metrics and error"
            ))
            .field("metadata"))
        }
        Some(other) => {
            return Err(ParseError::new(format!("{WHAT}: `metadata` should be an object, found {}", super::kind_of(other)))
                .field("metadata"))
        }
    };
    let empty = Map::new();
    let metrics = match map.get("metrics") {
        Some(Value::Object(m)) => m,
        Some(Value::Null) | None => &empty,
        Some(other) => {
            return Err(ParseError::new(format!(
                "{WHAT}: `metrics` should be an object, found {}",
                super::kind_of(other)
            ))
            .field("metrics"))
        }
    };
    let phase_name = metadata
        .and_then(|m| m.get("benchmark_phase").or_else(|| m.get("credit_phase")))
        .and_then(Value::as_str)
        .unwrap_or("profiling");
    let phase = if phase_name.eq_ignore_ascii_case("warmup") {
        Phase::Warmup
    } else {
        Phase::Measure
    };
    let id = metadata
        .and_then(|m| m.get("x_request_id"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| format!("aiperf-line-{line}"));
    let start_ns = ns_field(metadata, "request_start_ns")
        .or_else(|| ns_field(metadata, "timestamp_ns"))
        .or_else(|| metric(metrics, &["min_request_timestamp"]).and_then(|(_, v, _)| v.as_u64()));
    let end_ns = ns_field(metadata, "request_end_ns")
        .or_else(|| metric(metrics, &["max_response_timestamp"]).and_then(|(_, v, _)| v.as_u64()));
    let ttft_ms = time_metric(metrics, &["time_to_first_token", "ttft"])?;
    let mut e2e_ms = time_metric(metrics, &["request_latency"])?;
    if e2e_ms.is_none() {
        if let (Some(s), Some(e)) = (start_ns, end_ns) {
            if e >= s {
                e2e_ms = Some((e - s) as f64 / 1e6);
            }
        }
    }
    let mut gaps_ms = Vec::new();
    if let Some((name, value, unit)) = metric(metrics, &["inter_chunk_latency"]) {
        let list = value.as_array().ok_or_else(|| {
            ParseError::new(format!(
                "{WHAT}: `{name}` should be a list of gaps, found {}",
                super::kind_of(value)
            ))
            .field(format!("metrics.{name}.value"))
        })?;
        for (j, g) in list.iter().enumerate() {
            let path = format!("metrics.{name}.value[{j}]");
            let g = super::number(g).filter(|v| v.is_finite()).ok_or_else(|| {
                ParseError::new(format!(
                    "{WHAT}: expected a gap, found {}",
                    super::kind_of(g)
                ))
                .field(path.clone())
            })?;
            gaps_ms.push(to_ms(g, unit, &path)?);
        }
    }
    let output_tokens = count_metric(metrics, &["output_sequence_length", "output_token_count"]);
    let input_tokens = count_metric(metrics, &["input_sequence_length", "error_isl"]);
    let error = match map.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => {
            let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
            let message = e.get("message").and_then(Value::as_str).unwrap_or("");
            let code = e.get("code").and_then(Value::as_i64);
            let cancelled = metadata
                .and_then(|m| m.get("was_cancelled"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || kind == "RequestCancellationError";
            let outcome = if cancelled {
                Outcome::Cancelled
            } else {
                classify_failure(&format!("{kind}: {message}"), code, ttft_ms.is_some())
            };
            let code_text = code.map(|c| format!(" (code {c})")).unwrap_or_default();
            let detail = detail_text(&format!("{kind}{code_text}: {message}"));
            Some((outcome, detail))
        }
        Some(other) => {
            return Err(ParseError::new(format!(
                "{WHAT}: `error` should be null or an object, found {}",
                super::kind_of(other)
            ))
            .field("error"))
        }
    };
    if error.is_none() && ttft_ms.is_none() && e2e_ms.is_none() {
        return Err(ParseError::new(format!(
            "{WHAT} without an error, yet with neither `metrics.ttft`/`metrics.time_to_first_token` nor `metrics.request_latency`: \
             a layout this version does not know"
        ))
        .field("metrics"));
    }
    Ok(Record {
        line,
        id,
        phase,
        start_ns,
        ttft_ms,
        e2e_ms,
        gaps_ms,
        output_tokens,
        input_tokens,
        error,
    })
}

pub(super) fn import_jsonl(mut detected: Detected, text: &str) -> Result<Imported, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let ends_with_newline = text.ends_with('\n');
    let mut records = Vec::new();
    let mut warnings = Vec::new();
    let mut truncated = false;
    let mut layouts: Vec<&'static str> = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    while let Some((index, raw)) = lines.next() {
        let line_no = index + 1;
        let is_last = lines.peek().is_none();
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        // The trace parser's cap: one request's record is kilobytes, so a longer line is not one.
        if line.len() > tracelab_core::parse::MAX_LINE_BYTES {
            return Err(ParseError::new(format!(
                "AIPerf profile_export.jsonl: this line is {:.1} MiB long; one record may be at most {} MiB — is this really \
                 AIPerf's per-request export?",
                line.len() as f64 / (1024.0 * 1024.0),
                tracelab_core::parse::MAX_LINE_BYTES / (1024 * 1024)
            ))
            .at_line(line_no));
        }
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(err) => {
                if is_last && !ends_with_newline && err.is_eof() && !records.is_empty() {
                    warnings.push(format!(
                        "line {line_no} is cut off (AIPerf was probably stopped while writing it, or the copy is incomplete); ignored"
                    ));
                    truncated = true;
                    break;
                }
                return Err(ParseError::new(format!(
                    "AIPerf profile_export.jsonl: not valid JSON at column {}: {}",
                    err.column(),
                    super::strip_position(&err.to_string())
                ))
                .at_line(line_no));
            }
        };
        let Value::Object(map) = value else {
            return Err(ParseError::new(
                "AIPerf profile_export.jsonl: every line should be one JSON object (a record)",
            )
            .at_line(line_no));
        };
        if let Some(l) = layout_of(&map) {
            if !layouts.contains(&l) {
                layouts.push(l);
            }
        }
        records.push(read_record(&map, line_no).map_err(|e| e.at_line(line_no))?);
    }
    if records.is_empty() {
        return Err(ParseError::new(
            "AIPerf profile_export.jsonl without a single record",
        ));
    }
    if layouts.len() == 1 {
        detected.layout = layouts[0].to_string();
    }
    let origin = records.iter().filter_map(|r| r.start_ns).min();
    let mut attempts = Vec::with_capacity(records.len());
    let mut seen = HashMap::new();
    let mut no_start = 0;
    for r in &records {
        let in_line = |e: ParseError| e.at_line(r.line);
        let start_ms = match (r.start_ns, origin) {
            (Some(s), Some(o)) => Some((s - o) as f64 / 1e6),
            _ => {
                no_start += 1;
                None
            }
        };
        let (outcome, detail) = match &r.error {
            None => (Outcome::Success, None),
            Some((o, d)) => (*o, d.clone()),
        };
        let ttft_ms = match outcome {
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError => None,
            _ => r.ttft_ms,
        };
        let e2e_ms = match (r.e2e_ms, ttft_ms) {
            (Some(e), Some(t)) => Some(e.max(t)),
            (e, _) => e,
        };
        let mut events = Vec::new();
        if let Some(t) = ttft_ms {
            let mut at = t;
            events.push(StreamEvent {
                at_ms: at,
                tokens: 1,
            });
            for g in &r.gaps_ms {
                at += g;
                events.push(StreamEvent {
                    at_ms: e2e_ms.map_or(at, |e| at.min(e)),
                    tokens: 1,
                });
            }
        }
        if outcome == Outcome::Success && e2e_ms.is_none() {
            return Err(in_line(
                ParseError::new(format!("{WHAT} without an error but without `metrics.request_latency`: its end is unknown"))
                    .field("metrics.request_latency"),
            ));
        }
        let estimated = !events.is_empty() && r.output_tokens != Some(events.len() as u32);
        attempts.push(Attempt {
            id: unique_id(&mut seen, r.id.clone()),
            business_id: r.id.clone(),
            attempt: 1,
            phase: r.phase,
            intended_start_ms: None,
            start_ms,
            first_byte_ms: None,
            ttft_ms,
            events,
            last_token_ms: None,
            e2e_ms,
            outcome,
            detail,
            quality: Quality::NotEvaluated,
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            tokens_from_usage: false,
            event_tokens_estimated: estimated,
            reasoning: None,
            prompt: None,
            session: None,
        });
    }
    if no_start > 0 {
        warnings.push(format!("{no_start} records carry no request timestamp: they have no place on the run's timeline"));
    }
    let mut header = Header::default();
    // The lesson's window spans every measured attempt, failures included. AIPerf's own
    // benchmark_duration spans only the records without an error (min request timestamp → max
    // response timestamp); its throughputs divide by that, as their figures say.
    let spans = attempts
        .iter()
        .filter(|a| a.phase == Phase::Measure)
        .filter_map(|a| Some((a.start_ms?, a.start_ms? + a.e2e_ms.unwrap_or(0.0))));
    let (first, last) = spans.fold((f64::INFINITY, f64::NEG_INFINITY), |(f, l), (s, e)| {
        (f.min(s), l.max(e))
    });
    if last > first {
        header.window = Some(Window {
            start_ms: first,
            length_s: (last - first) / 1000.0,
        });
    }
    let definitions = vec![
        "TTFT (`metrics.ttft` / `time_to_first_token`, ms): request start → first response chunk carrying output; AIPerf counts \
         reasoning tokens as output, so for a reasoning model the clock stops at the first reasoning token."
            .to_string(),
        "Stream events: TTFT, then each `inter_chunk_latency` gap — one per streamed chunk, not per token (tokens per event \
         estimated as 1)."
            .to_string(),
        "E2E (`request_latency`): request start → last response.".to_string(),
        "AIPerf's aggregate covers records without an error; a cancelled request (`RequestCancellationError`, code 499) is an \
         error there and `cancelled` here. Percentiles: numpy linear interpolation; std ddof 0."
            .to_string(),
        "Timestamps (ns since the epoch, `metadata.timestamp_ns` / `request_start_ns`) become offsets from the first request; \
         the window spans every measured attempt, failures included. AIPerf's benchmark_duration, which its throughputs divide \
         by, spans only the records without an error: their first request timestamp → their last response \
         (timestamp + request_latency)."
            .to_string(),
        "Output tokens: `output_sequence_length` (AIPerf's own tokenizer count, reasoning included), not the server's usage."
            .to_string(),
        "Records of the warm-up phase (`benchmark_phase`/`credit_phase` = warmup) are kept as warm-up.".to_string(),
        FAILURE_MAPPING.to_string(),
    ];
    let trace = super::assemble(
        &detected,
        header,
        definitions,
        Vec::new(),
        attempts,
        warnings,
        !truncated,
    );
    Ok(Imported {
        detected,
        traces: vec![ImportedTrace {
            label: String::new(),
            trace,
        }],
    })
}

/// The figures of `profile_export_aiperf.json`.
pub(super) fn summary(
    detected: Detected,
    map: &Map<String, Value>,
) -> Result<PeerSummary, ParseError> {
    let (stats, prefix) = match map.get("records").and_then(Value::as_object) {
        Some(records) => (records, "records."),
        None => (map, ""),
    };
    type Spec = (&'static [&'static str], Quantity, &'static str);
    let distributions: [Spec; 5] = [
        (&["time_to_first_token", "ttft"], Quantity::Ttft, "TTFT of each record without an error"),
        (
            &["time_to_second_token", "ttst"],
            Quantity::Ttst,
            "second response − first response, per record without an error",
        ),
        (&["request_latency"], Quantity::E2e, "request start → last response, per record without an error"),
        (
            &["inter_chunk_latency"],
            Quantity::EventGap,
            "`inter_chunk_latency` of every record without an error, pooled: one gap per streamed chunk",
        ),
        (
            &["inter_token_latency"],
            Quantity::TimePerOutputToken,
            "(request_latency − TTFT) / (output_sequence_length − 1) per record without an error, reasoning tokens included",
        ),
    ];
    let mut figures = Vec::new();
    for (names, quantity, sample) in distributions {
        let Some((name, entry)) = names
            .iter()
            .find_map(|n| stats.get(*n).and_then(Value::as_object).map(|o| (*n, o)))
        else {
            continue;
        };
        let unit = match entry.get("unit").and_then(Value::as_str).unwrap_or("ms") {
            "ms" => PeerUnit::Ms,
            "s" | "sec" => PeerUnit::S,
            _ => continue,
        };
        for (key, v) in entry {
            let Some(stat) = super::aggregate_stat(key) else {
                continue;
            };
            let Some(value) = super::number(v).filter(|v| v.is_finite()) else {
                continue;
            };
            let words = match stat {
                Stat::Mean => "mean".to_string(),
                Stat::Std { .. } => "std (numpy, ddof 0)".to_string(),
                Stat::Min => "minimum".to_string(),
                Stat::Max => "maximum".to_string(),
                Stat::Percentile { p, .. } => format!(
                    "percentile {} (numpy linear interpolation)",
                    tracelab_core::format::trim_num(p)
                ),
                Stat::Value | Stat::Sum => String::new(),
            };
            figures.push(PeerFigure {
                tool_key: format!("{prefix}{name}.{key}"),
                quantity,
                stat,
                value,
                unit,
                how: format!("{words} of {sample}"),
                empty_as_zero: false,
                reproducibility: Reproducibility::Exact,
                duration: Default::default(),
                error_code: None,
                over: Default::default(),
                missing_as_zero: false,
                sample: None,
            });
        }
    }
    let avg = |name: &str| {
        stats
            .get(name)
            .and_then(Value::as_object)
            .and_then(|o| o.get("avg"))
            .and_then(super::number)
    };
    let values: [(&str, Quantity, PeerUnit, &str); 4] = [
        ("request_count", Quantity::Successes, PeerUnit::Count, "records without an error"),
        ("error_request_count", Quantity::Failures, PeerUnit::Count, "records with an error, cancellations included"),
        (
            "request_throughput",
            Quantity::RequestThroughput,
            PeerUnit::PerSecond,
            "request_count / benchmark_duration (first request → last response, over the records without an error)",
        ),
        (
            "output_token_throughput",
            Quantity::OutputThroughput,
            PeerUnit::TokensPerSecond,
            "total output_sequence_length of records without an error / benchmark_duration",
        ),
    ];
    for (name, quantity, unit, how) in values {
        if let Some(value) = avg(name).filter(|v| v.is_finite()) {
            let mut f =
                PeerFigure::exact_value(format!("{prefix}{name}.avg"), quantity, value, unit, how);
            if matches!(
                quantity,
                Quantity::RequestThroughput | Quantity::OutputThroughput
            ) {
                f.duration = RateSpan::SuccessSpan;
            }
            figures.push(f);
        }
    }
    if avg("error_request_count").is_none() {
        if let Some(list) = map.get("error_summary").and_then(Value::as_array) {
            let total: f64 = list
                .iter()
                .filter_map(|e| e.get("count").and_then(super::number))
                .sum();
            figures.push(PeerFigure::exact_value(
                "error_summary[].count".into(),
                Quantity::Failures,
                total,
                PeerUnit::Count,
                "the error counts of `error_summary`, summed",
            ));
        }
    }
    figures.sort_by_key(PeerFigure::order);
    let mut conditions = Conditions::default();
    if let Some(config) = map.get("input_config").and_then(Value::as_object) {
        conditions.model = config
            .get("endpoint")
            .and_then(|e| e.get("model_names"))
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(loadgen) = config.get("loadgen").and_then(Value::as_object) {
            conditions.concurrency = loadgen
                .get("concurrency")
                .and_then(Value::as_u64)
                .map(|c| c as u32);
            conditions.rate_per_s = loadgen.get("request_rate").and_then(Value::as_f64);
            if conditions.concurrency.is_some() && conditions.rate_per_s.is_none() {
                conditions.arrival = Some("closed".into());
            }
        }
    }
    let attempts = match (avg("request_count"), avg("error_request_count")) {
        (Some(ok), errors) => Some((ok + errors.unwrap_or(0.0)).round() as u64),
        // Every request failed: AIPerf writes no `request_count` when no record is without an error.
        (None, Some(errors)) if all_failed(map) => Some(errors.round() as u64),
        _ => None,
    };
    let duration_s = stats
        .get("benchmark_duration")
        .and_then(Value::as_object)
        .filter(|o| {
            matches!(
                o.get("unit").and_then(Value::as_str),
                Some("sec") | Some("s") | None
            )
        })
        .and_then(|o| o.get("avg"))
        .and_then(super::number);
    Ok(PeerSummary {
        detected,
        figures,
        conditions,
        attempts,
        successes: None,
        duration_s,
    })
}
