//! NVIDIA GenAI-Perf's per-request `profile_export.json` (perf_analyzer's layout):
//! `experiments[]` → `requests[]`, each with its `timestamp` (ns), `response_timestamps` (ns)
//! and `response_outputs`. One trace per experiment. The responses are read only to tell chunks
//! with output from empty ones (role-only, `[DONE]`); their text is never kept.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    time_ms, unique_id, Content, Detected, Imported, ImportedTrace, PeerFigure, PeerSummary,
    PeerTool, PeerUnit, Quantity, RateSpan, Stat, FAILURE_MAPPING,
};
use tracelab_core::error::ParseError;
use tracelab_core::format::trim_num;
use tracelab_core::trace::*;

const WHAT: &str = "GenAI-Perf profile_export.json";

pub(super) fn detect(map: &Map<String, Value>) -> Option<Detected> {
    let experiments = map.get("experiments")?.as_array()?;
    let first = experiments
        .first()?
        .get("requests")?
        .as_array()?
        .first()?
        .as_object()?;
    if !first.contains_key("timestamp") || !first.contains_key("response_timestamps") {
        return None;
    }
    Some(Detected::new(
        PeerTool::GenaiPerf,
        Content::PerRequest,
        "genai-perf-profile-export",
        format!(
            "`experiments` ({}) with per-request `timestamp` and `response_timestamps` (GenAI-Perf / perf_analyzer profile_export.json)",
            experiments.len()
        ),
    ))
}

/// What one response carried, read as GenAI-Perf reads it (`llm_profile_data_parser.py`,
/// `_extract_openai_chat_text_output` / `_extract_openai_completion_text_output` and
/// `_is_empty_response`): the answer text of a chat chunk (`delta.content`), a completion (`text`)
/// or a Triton `text_output`. `[DONE]`, role-only chunks, `reasoning_content` and usage-only
/// chunks carry none: GenAI-Perf drops such responses before it measures anything.
enum Response {
    Content,
    Empty,
    /// An SSE error event or an `error` object (GenAI-Perf stops with "Detected an error event").
    Error(String),
}

fn read_response(response: &Value) -> Response {
    let Some(map) = response.as_object() else {
        return Response::Empty;
    };
    if let Some(t) = map.get("text_output").and_then(Value::as_str) {
        return if t.is_empty() {
            Response::Empty
        } else {
            Response::Content
        };
    }
    let Some(body) = map.get("response").and_then(Value::as_str) else {
        // A layout we do not know: count it, rather than lose a token.
        return if map.is_empty() {
            Response::Empty
        } else {
            Response::Content
        };
    };
    let mut found = Response::Empty;
    for event in body.split("\n\n") {
        if event
            .lines()
            .any(|l| l.trim() == "event: error" || l.trim() == "event:error")
        {
            return Response::Error(event.trim().chars().take(300).collect());
        }
        for data in event
            .lines()
            .filter_map(|l| l.trim().strip_prefix("data:"))
            .map(str::trim)
        {
            if data == "[DONE]" || data.is_empty() {
                continue;
            }
            let Ok(chunk) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            if let Some(error) = chunk.get("error") {
                let text = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| error.to_string());
                return Response::Error(text.chars().take(300).collect());
            }
            let choice = &chunk["choices"][0];
            let text = match chunk.get("object").and_then(Value::as_str) {
                Some("chat.completion.chunk") => choice["delta"]["content"].as_str(),
                Some("chat.completion") => choice["message"]["content"].as_str(),
                _ => choice["text"].as_str(),
            };
            if text.is_some_and(|t| !t.is_empty()) {
                found = Response::Content;
            }
        }
    }
    found
}

fn ns(v: &Value, path: &str) -> Result<u64, ParseError> {
    v.as_u64()
        .or_else(|| {
            v.as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| x as u64)
        })
        .ok_or_else(|| {
            ParseError::new(format!(
                "{WHAT}: expected a timestamp in ns, found {}",
                super::kind_of(v)
            ))
            .field(path.to_string())
        })
}

pub(super) fn import(detected: Detected, experiments: &[Value]) -> Result<Imported, ParseError> {
    let mut traces = Vec::with_capacity(experiments.len());
    for (e, experiment) in experiments.iter().enumerate() {
        let path = format!("experiments[{e}]");
        let requests = experiment["requests"].as_array().ok_or_else(|| {
            ParseError::new(format!("{WHAT}: this experiment has no `requests` list"))
                .field(format!("{path}.requests"))
        })?;
        let mode = experiment["experiment"]["mode"].as_str().unwrap_or("");
        let level = experiment["experiment"]["value"].as_f64();
        let mut conditions = Conditions::default();
        let label = match (mode, level) {
            ("concurrency", Some(c)) => {
                conditions.arrival = Some("closed".into());
                conditions.concurrency = Some(c as u32);
                format!("concurrency {}", trim_num(c))
            }
            ("request_rate", Some(r)) => {
                conditions.arrival = Some("constant".into());
                conditions.rate_per_s = Some(r);
                format!("request rate {} /s", trim_num(r))
            }
            (m, _) if !m.is_empty() => m.to_string(),
            _ => "the run".to_string(),
        };
        let mut starts = Vec::with_capacity(requests.len());
        for (i, r) in requests.iter().enumerate() {
            starts.push(ns(
                &r["timestamp"],
                &format!("{path}.requests[{i}].timestamp"),
            )?);
        }
        let origin = starts.iter().copied().min().unwrap_or(0);
        let mut attempts = Vec::with_capacity(requests.len());
        let mut seen = HashMap::new();
        let (mut without_response, mut without_content, mut with_error) = (0, 0, 0);
        for (i, r) in requests.iter().enumerate() {
            let here = format!("{path}.requests[{i}]");
            let start = starts[i];
            let stamps = r["response_timestamps"].as_array().ok_or_else(|| {
                ParseError::new(format!("{WHAT}: `response_timestamps` should be a list"))
                    .field(format!("{here}.response_timestamps"))
            })?;
            let outputs = r["response_outputs"].as_array();
            let mut events = Vec::new();
            let mut last_ms = None;
            let mut error = None;
            for (j, t) in stamps.iter().enumerate() {
                let t = ns(t, &format!("{here}.response_timestamps[{j}]"))?;
                let at = time_ms(
                    t.saturating_sub(start) as f64 / 1e6,
                    &format!("{here}.response_timestamps[{j}]"),
                    WHAT,
                )?;
                if t < start {
                    return Err(
                        ParseError::new(format!("{WHAT}: a response before its request"))
                            .field(format!("{here}.response_timestamps[{j}]")),
                    );
                }
                // The client stamps responses as they arrive, so the list is in order; one that
                // goes back in time is a damaged file, not a stream (found by fuzzing).
                if last_ms.is_some_and(|prev| at < prev) {
                    return Err(ParseError::new(format!(
                        "{WHAT}: response timestamps go back in time"
                    ))
                    .field(format!("{here}.response_timestamps[{j}]")));
                }
                last_ms = Some(at);
                match outputs
                    .and_then(|o| o.get(j))
                    .map_or(Response::Content, read_response)
                {
                    Response::Content => events.push(StreamEvent {
                        at_ms: at,
                        tokens: 1,
                    }),
                    Response::Empty => {}
                    Response::Error(message) => {
                        error.get_or_insert(message);
                    }
                }
            }
            let (outcome, detail) = if let Some(message) = error {
                with_error += 1;
                let outcome = super::classify_failure(&message, None, !events.is_empty());
                (
                    outcome,
                    super::detail_text(&format!("error event in the stream: {message}")),
                )
            } else if stamps.is_empty() {
                without_response += 1;
                (
                    Outcome::StreamBroken,
                    Some("no response recorded".to_string()),
                )
            } else if events.is_empty() {
                without_content += 1;
                (
                    Outcome::StreamBroken,
                    Some(
                        "no response carried answer content (role-only, reasoning-only or empty chunks): GenAI-Perf drops this \
                         request from every statistic but request_throughput"
                            .to_string(),
                    ),
                )
            } else {
                (Outcome::Success, None)
            };
            let id = format!("genai-perf-{}-{i}", e + 1);
            let ttft_ms = events.first().map(|e| e.at_ms);
            attempts.push(Attempt {
                business_id: id.clone(),
                start_ms: Some((start - origin) as f64 / 1e6),
                events,
                e2e_ms: last_ms,
                detail,
                event_tokens_estimated: true,
                reasoning: None,
                prompt: None,
                session: None,
                ..Attempt::new(
                    unique_id(&mut seen, id),
                    outcome,
                    ttft_ms,
                    Quality::NotEvaluated,
                )
            });
        }
        let mut header = Header {
            conditions,
            ..Header::default()
        };
        let (first, last) = attempts
            .iter()
            .filter_map(|a| Some((a.start_ms?, a.start_ms? + a.e2e_ms.unwrap_or(0.0))))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(f, l), (s, e)| {
                (f.min(s), l.max(e))
            });
        if last > first {
            header.window = Some(Window {
                start_ms: first,
                length_s: (last - first) / 1000.0,
            });
        }
        let mut warnings = Vec::new();
        if without_response > 0 {
            warnings.push(format!("{without_response} requests have no response at all: kept as failures (stream_broken)"));
        }
        if without_content > 0 {
            warnings.push(format!(
                "{without_content} requests got responses but none with answer content: kept as failures (stream_broken); \
                 GenAI-Perf leaves them out of every figure except request_throughput, whose numerator counts them"
            ));
        }
        if with_error > 0 {
            warnings.push(format!(
                "{with_error} requests carry an error event in their stream: kept as failures; GenAI-Perf itself stops on such a \
                 file (\"Detected an error event in the SSE response\") and writes no aggregate"
            ));
        }
        let definitions = vec![
            "TTFT: request `timestamp` → the first response with answer content (`delta.content`, `text` or `text_output`): \
             GenAI-Perf drops role-only, reasoning-only and usage-only chunks and `[DONE]` before measuring, and so does this \
             import."
                .to_string(),
            "Stream events: each response with answer content, one event each (tokens per event unknown: GenAI-Perf counts \
             tokens with the model's tokenizer, which the file does not carry). E2E: request → its last response, `[DONE]` \
             included; GenAI-Perf's request_latency stops at the last response with content (the last stream event)."
                .to_string(),
            "A request with no response carrying content is a failure here (stream_broken); GenAI-Perf skips it in every \
             per-request statistic and in its duration, yet counts it in request_throughput (len(requests) / duration). \
             perf_analyzer never writes a request that failed at the HTTP level: it stops the run."
                .to_string(),
            "Without token counts, GenAI-Perf's inter_token_latency, output_token_throughput_per_user, sequence lengths and \
             output_token_throughput cannot be recomputed from this file."
                .to_string(),
            "Response text (`response_outputs`) and prompts (`request_inputs`) are read only to tell empty chunks apart, never kept."
                .to_string(),
            FAILURE_MAPPING.to_string(),
        ];
        let trace = super::assemble(
            &detected,
            header,
            definitions,
            Vec::new(),
            attempts,
            warnings,
            true,
        );
        traces.push(ImportedTrace {
            label: format!("experiment {}: {label}", e + 1),
            trace,
        });
    }
    Ok(Imported { detected, traces })
}

/// GenAI-Perf's aggregate entries that are not figures about the requests.
const NOT_FIGURES: [&str; 2] = ["input_config", "telemetry_stats"];

/// The figures of `profile_export_genai_perf.json` (GenAI-Perf's `Statistics` of one experiment:
/// `avg`, `p1`…`p99`, `min`, `max`, `std` per metric; numpy's mean, linear `percentile` and `std`
/// with ddof 0, `metrics/statistics.py`), each with how GenAI-Perf computes it from
/// profile_export.json (`llm_profile_data_parser.py`, `_parse_requests`). GPU telemetry
/// (`telemetry_stats`) is not a request figure and is not read.
pub(super) fn summary(
    detected: Detected,
    map: &Map<String, Value>,
) -> Result<PeerSummary, ParseError> {
    const KEPT: &str =
        "requests with at least one response carrying answer content (GenAI-Perf skips the others)";
    const TOKENIZER: &str = "needs each request's token count from the model's tokenizer (GenAI-Perf tokenizes the response and \
                             prompt text); the per-request file keeps the text, not the counts, and Trace Lab never keeps text";
    struct Spec {
        quantity: Quantity,
        how: &'static str,
        not: Option<&'static str>,
    }
    let spec = |name: &str| -> Option<Spec> {
        let s = |quantity, how, not| Some(Spec { quantity, how, not });
        match name {
            "time_to_first_token" => s(Quantity::Ttft, "first response with content − request timestamp, per kept request", None),
            "time_to_second_token" => s(
                Quantity::Ttst,
                "second response with content − first, per kept request with more than one such response",
                None,
            ),
            "request_latency" => s(Quantity::ToLastToken, "last response with content − request timestamp, per kept request", None),
            "inter_token_latency" => s(
                Quantity::TimePerOutputToken,
                "round((request_latency − TTFT) / (output tokens − 1)) ns per kept request with more than one token",
                Some(TOKENIZER),
            ),
            "output_token_throughput_per_user" => s(
                Quantity::RequestOutputRate,
                "1 / inter_token_latency per kept request with more than one response and token",
                Some(TOKENIZER),
            ),
            "output_sequence_length" => s(Quantity::OutputTokens, "tokenizer count of the response text, per kept request", Some(TOKENIZER)),
            "input_sequence_length" => s(Quantity::InputTokens, "tokenizer count of the prompt text, per kept request", Some(TOKENIZER)),
            "output_token_throughput" => s(
                Quantity::OutputThroughput,
                "Σ output tokens of the kept requests / benchmark duration (first request → last response with content, over the \
                 kept requests)",
                Some(TOKENIZER),
            ),
            "request_throughput" => s(
                Quantity::AttemptThroughput,
                "len(requests) — every request of the experiment, the skipped ones included — / benchmark duration (first request \
                 → last response with content, over the kept requests)",
                None,
            ),
            "request_count" => s(Quantity::Successes, KEPT, None),
            "request_goodput" => s(
                Quantity::Goodput,
                "kept requests meeting every --goodput constraint / benchmark duration",
                Some("its constraints include token-based metrics (inter_token_latency, output_token_throughput_per_user), which need \
                      the tokenizer's counts; not recomputed"),
            ),
            _ => None,
        }
    };
    let mut figures = Vec::new();
    for (name, entry) in map {
        if NOT_FIGURES.contains(&name.as_str()) {
            continue;
        }
        let Some(entry) = entry.as_object() else {
            continue;
        };
        let unit_text = entry.get("unit").and_then(Value::as_str).unwrap_or("");
        let known = spec(name);
        let unit = match (unit_text, known.as_ref().map(|s| s.quantity)) {
            ("ms", _) => PeerUnit::Ms,
            ("s" | "sec", _) => PeerUnit::S,
            (_, Some(Quantity::AttemptThroughput)) => PeerUnit::PerSecond,
            (_, Some(Quantity::OutputThroughput | Quantity::RequestOutputRate)) => {
                PeerUnit::TokensPerSecond
            }
            (_, Some(Quantity::Goodput)) => PeerUnit::PerSecond,
            _ => PeerUnit::Count,
        };
        let single = entry.len() <= 2 && entry.contains_key("avg");
        for (key, v) in entry {
            let Some(value) = super::number(v).filter(|v| v.is_finite()) else {
                continue;
            };
            let stat = match super::aggregate_stat(key) {
                Some(Stat::Mean) if single => Stat::Value,
                Some(stat) => stat,
                None => continue,
            };
            let words = match stat {
                Stat::Value => String::new(),
                Stat::Mean => "mean (numpy) of ".into(),
                Stat::Std { .. } => "std (numpy, ddof 0) of ".into(),
                Stat::Min => "minimum of ".into(),
                Stat::Max => "maximum of ".into(),
                Stat::Percentile { p, .. } => format!(
                    "percentile {} (numpy linear interpolation) of ",
                    trim_num(p)
                ),
                Stat::Sum => String::new(),
            };
            let tool_key = format!("{name}.{key}");
            let f = match &known {
                Some(spec) => {
                    let how = format!("{words}{}", spec.how);
                    let mut f = match spec.not {
                        None => PeerFigure::exact_value(tool_key, spec.quantity, value, unit, how),
                        Some(why) => PeerFigure::not_reproducible(tool_key, spec.quantity, stat, value, unit, how, why),
                    };
                    f.stat = stat;
                    if spec.quantity == Quantity::AttemptThroughput {
                        f.duration = RateSpan::SuccessSpanToLastToken;
                    }
                    f
                }
                None => PeerFigure::not_reproducible(
                    tool_key,
                    Quantity::RunDuration,
                    stat,
                    value,
                    unit,
                    format!("{words}GenAI-Perf's `{name}`"),
                    format!("a GenAI-Perf metric this version does not know (`{name}`, unit `{unit_text}`): not recomputed"),
                ),
            };
            figures.push(f);
        }
    }
    figures.sort_by_key(PeerFigure::order);
    let mut conditions = Conditions::default();
    let config = map.get("input_config").and_then(Value::as_object);
    conditions.model = config
        .and_then(|c| c.get("model_names").or_else(|| c.get("model")))
        .and_then(|m| m.as_array().and_then(|a| a.first()).or(Some(m)))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(stimulus) = config
        .and_then(|c| c.get("perf_analyzer"))
        .and_then(|p| p.get("stimulus"))
    {
        if let Some(c) = stimulus.get("concurrency").and_then(Value::as_u64) {
            conditions.concurrency = Some(c as u32);
            conditions.arrival = Some("closed".into());
        }
        if let Some(r) = stimulus.get("request_rate").and_then(Value::as_f64) {
            conditions.rate_per_s = Some(r);
            conditions.arrival = Some("constant".into());
        }
    }
    let successes = map
        .get("request_count")
        .and_then(|c| c.get("avg"))
        .and_then(super::number)
        .map(|n| n.round() as u64);
    Ok(PeerSummary {
        detected,
        figures,
        conditions,
        attempts: None,
        successes,
        duration_s: None,
    })
}
