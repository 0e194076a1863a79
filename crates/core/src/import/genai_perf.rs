//! NVIDIA GenAI-Perf's per-request `profile_export.json` (perf_analyzer's layout):
//! `experiments[]` → `requests[]`, each with its `timestamp` (ns), `response_timestamps` (ns)
//! and `response_outputs`. One trace per experiment. The responses are read only to tell chunks
//! with output from empty ones (role-only, `[DONE]`); their text is never kept.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{time_ms, unique_id, Content, Detected, ImportedTrace, Imported, PeerTool, FAILURE_MAPPING};
use crate::error::ParseError;
use crate::format::trim_num;
use crate::trace::*;

const WHAT: &str = "GenAI-Perf profile_export.json";

pub(super) fn detect(map: &Map<String, Value>) -> Option<Detected> {
    let experiments = map.get("experiments")?.as_array()?;
    let first = experiments.first()?.get("requests")?.as_array()?.first()?.as_object()?;
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

/// Whether one response carries output: an OpenAI chunk with non-empty `delta.content`,
/// `delta.reasoning_content` or `text`, or a Triton `text_output`. `[DONE]` and role-only chunks
/// carry none, as GenAI-Perf drops them.
fn has_output(response: &Value) -> bool {
    let Some(map) = response.as_object() else { return false };
    if let Some(t) = map.get("text_output").and_then(Value::as_str) {
        return !t.is_empty();
    }
    let Some(body) = map.get("response").and_then(Value::as_str) else {
        // A layout we do not know: count it, rather than lose a token.
        return !map.is_empty();
    };
    body.lines().filter_map(|l| l.trim().strip_prefix("data:")).map(str::trim).any(|data| {
        if data == "[DONE]" {
            return false;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else { return false };
        let choice = &chunk["choices"][0];
        ["content", "reasoning_content"]
            .iter()
            .any(|k| choice["delta"][k].as_str().is_some_and(|s| !s.is_empty()))
            || choice["text"].as_str().is_some_and(|s| !s.is_empty())
    })
}

fn ns(v: &Value, path: &str) -> Result<u64, ParseError> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|x| x.is_finite() && *x >= 0.0).map(|x| x as u64))
        .ok_or_else(|| ParseError::new(format!("{WHAT}: expected a timestamp in ns, found {}", super::kind_of(v))).field(path.to_string()))
}

pub(super) fn import(detected: Detected, experiments: &[Value]) -> Result<Imported, ParseError> {
    let mut traces = Vec::with_capacity(experiments.len());
    for (e, experiment) in experiments.iter().enumerate() {
        let path = format!("experiments[{e}]");
        let requests = experiment["requests"].as_array().ok_or_else(|| {
            ParseError::new(format!("{WHAT}: this experiment has no `requests` list")).field(format!("{path}.requests"))
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
            starts.push(ns(&r["timestamp"], &format!("{path}.requests[{i}].timestamp"))?);
        }
        let origin = starts.iter().copied().min().unwrap_or(0);
        let mut attempts = Vec::with_capacity(requests.len());
        let mut seen = HashMap::new();
        let mut without_response = 0;
        for (i, r) in requests.iter().enumerate() {
            let here = format!("{path}.requests[{i}]");
            let start = starts[i];
            let stamps = r["response_timestamps"].as_array().ok_or_else(|| {
                ParseError::new(format!("{WHAT}: `response_timestamps` should be a list")).field(format!("{here}.response_timestamps"))
            })?;
            let outputs = r["response_outputs"].as_array();
            let mut events = Vec::new();
            let mut last_ms = None;
            for (j, t) in stamps.iter().enumerate() {
                let t = ns(t, &format!("{here}.response_timestamps[{j}]"))?;
                let at = time_ms(t.saturating_sub(start) as f64 / 1e6, &format!("{here}.response_timestamps[{j}]"), WHAT)?;
                if t < start {
                    return Err(ParseError::new(format!("{WHAT}: a response before its request")).field(format!("{here}.response_timestamps[{j}]")));
                }
                // The client stamps responses as they arrive, so the list is in order; one that
                // goes back in time is a damaged file, not a stream (found by fuzzing).
                if last_ms.is_some_and(|prev| at < prev) {
                    return Err(ParseError::new(format!("{WHAT}: response timestamps go back in time"))
                        .field(format!("{here}.response_timestamps[{j}]")));
                }
                last_ms = Some(at);
                let output = outputs.and_then(|o| o.get(j)).map_or(true, has_output);
                if output {
                    events.push(StreamEvent { at_ms: at, tokens: 1 });
                }
            }
            let outcome = if stamps.is_empty() {
                without_response += 1;
                Outcome::StreamBroken
            } else {
                Outcome::Success
            };
            let id = format!("genai-perf-{}-{i}", e + 1);
            let ttft_ms = events.first().map(|e| e.at_ms);
            attempts.push(Attempt {
                business_id: id.clone(),
                start_ms: Some((start - origin) as f64 / 1e6),
                events,
                e2e_ms: last_ms,
                detail: stamps.is_empty().then(|| "no response recorded".to_string()),
                event_tokens_estimated: true,
                ..Attempt::new(unique_id(&mut seen, id), outcome, ttft_ms, Quality::NotEvaluated)
            });
        }
        let mut header = Header { conditions, ..Header::default() };
        let (first, last) = attempts
            .iter()
            .filter_map(|a| Some((a.start_ms?, a.start_ms? + a.e2e_ms.unwrap_or(0.0))))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(f, l), (s, e)| (f.min(s), l.max(e)));
        if last > first {
            header.window = Some(Window { start_ms: first, length_s: (last - first) / 1000.0 });
        }
        let mut warnings = Vec::new();
        if without_response > 0 {
            warnings.push(format!("{without_response} requests have no response at all: kept as failures (stream_broken)"));
        }
        let definitions = vec![
            "TTFT: request `timestamp` → the first response with output (GenAI-Perf drops role-only chunks and `[DONE]`, and so \
             does this import)."
                .to_string(),
            "Stream events: each response with output, one event each (tokens per event unknown: GenAI-Perf counts tokens with \
             its tokenizer, which the file does not carry). E2E: request → its last response, `[DONE]` included; GenAI-Perf's \
             request_latency stops at the last response with output."
                .to_string(),
            "Without token counts, GenAI-Perf's inter_token_latency, output sequence lengths and token throughputs cannot be \
             recomputed from this file; its aggregate profile_export_genai_perf.json is not attached."
                .to_string(),
            "Response text (`response_outputs`) and prompts (`request_inputs`) are read only to tell empty chunks apart, never kept."
                .to_string(),
            FAILURE_MAPPING.to_string(),
        ];
        let trace = super::assemble(&detected, header, definitions, Vec::new(), attempts, warnings, true);
        traces.push(ImportedTrace { label: format!("experiment {}: {label}", e + 1), trace });
    }
    Ok(Imported { detected, traces })
}
