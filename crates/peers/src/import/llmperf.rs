//! Ray LLMPerf: `*_individual_responses.json` (one record per request, no timestamps) and the
//! `*_summary.json` aggregate (the tool's own figures).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    classify_failure, detail_text, time_ms, unique_id, Content, Detected, Imported, ImportedTrace,
    PeerFigure, PeerPercentile, PeerSummary, PeerTool, PeerUnit, Quantity, Reproducibility, Stat,
    FAILURE_MAPPING,
};
use tracelab_core::error::ParseError;
use tracelab_core::trace::peer::PeerValue;
use tracelab_core::trace::*;

const WHAT: &str = "LLMPerf individual responses";

pub(super) fn is_record(map: &Map<String, Value>) -> bool {
    map.contains_key("ttft_s")
        && (map.contains_key("end_to_end_latency_s") || map.contains_key("error_code"))
}

pub(super) fn detect_summary(map: &Map<String, Value>) -> Option<Detected> {
    if map.contains_key("results_ttft_s_mean") || map.contains_key("results_num_requests_started") {
        let mut d = Detected::new(
            PeerTool::Llmperf,
            Content::AggregateOnly,
            "llmperf-summary",
            "LLMPerf's summary keys (`results_ttft_s_mean`, `results_num_requests_started`)",
        );
        d.version = map
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_string);
        return Some(d);
    }
    None
}

pub(super) fn refusal(map: &Map<String, Value>) -> String {
    let name = map.get("name").and_then(Value::as_str).unwrap_or("");
    let file = match name.strip_suffix("_summary") {
        Some(stem) if !stem.is_empty() => format!("`{stem}_individual_responses.json`"),
        _ => "the matching `*_individual_responses.json`".to_string(),
    };
    format!(
        "this is LLMPerf's summary (*_summary.json): summary statistics only, no attempts. Upload {file} from the same results \
         folder instead; this summary can then be added beside it as LLMPerf's own figures"
    )
}

fn secs(map: &Map<String, Value>, key: &str, i: usize) -> Result<Option<f64>, ParseError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match super::number(v) {
            Some(x) if x.is_finite() => {
                Ok(Some(time_ms(x * 1000.0, &format!("[{i}].{key}"), WHAT)?))
            }
            _ => Err(ParseError::new(format!(
                "{WHAT}: expected seconds, found {}",
                super::kind_of(v)
            ))
            .field(format!("[{i}].{key}"))),
        },
    }
}

/// The per-request metrics LLMPerf keeps whose values the attempts' times cannot give back,
/// kept in the trace's `source.samples` under these names: its ITL (Σ gaps between chunks with
/// content, TTFT included, / output tokens) needs every chunk's time, its output rate the chunk
/// count. Values in ms for the time, tokens per second for the rate.
pub(super) const KEPT: [(&str, bool); 2] = [
    ("inter_token_latency_s", true),
    ("request_output_throughput_token_per_s", false),
];

pub(super) fn import(detected: Detected, list: &[Value]) -> Result<Imported, ParseError> {
    let mut attempts = Vec::with_capacity(list.len());
    let mut seen = HashMap::new();
    let mut kept: Vec<Vec<PeerValue>> = vec![Vec::new(); KEPT.len()];
    for (i, record) in list.iter().enumerate() {
        let map = record.as_object().ok_or_else(|| {
            ParseError::new(format!(
                "{WHAT}: every entry should be a record, found {}",
                super::kind_of(record)
            ))
            .field(format!("[{i}]"))
        })?;
        if !is_record(map) {
            return Err(ParseError::new(format!(
                "{WHAT}: record {i} has no `ttft_s`/`end_to_end_latency_s`: a layout this version does not know"
            ))
            .field(format!("[{i}]")));
        }
        let code = map
            .get("error_code")
            .and_then(super::number)
            .filter(|c| c.is_finite() && c.fract() == 0.0)
            .map(|c| c as i64);
        let message = map.get("error_msg").and_then(Value::as_str).unwrap_or("");
        let failed = !matches!(map.get("error_code"), None | Some(Value::Null))
            || !message.trim().is_empty();
        let ttft = secs(map, "ttft_s", i)?;
        let e2e = secs(map, "end_to_end_latency_s", i)?;
        // A failed request's metrics are left at 0: no token came.
        let ttft = ttft.filter(|&t| !failed || t > 0.0);
        let e2e = e2e.filter(|&e| !failed || e > 0.0);
        let outcome = if failed {
            classify_failure(message, code, ttft.is_some())
        } else {
            Outcome::Success
        };
        let ttft = match outcome {
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError => None,
            _ => ttft,
        };
        if outcome == Outcome::Success && e2e.is_none() {
            return Err(ParseError::new(format!(
                "{WHAT}: a request without an error but without `end_to_end_latency_s`"
            ))
            .field(format!("[{i}].end_to_end_latency_s")));
        }
        let e2e = match (e2e, ttft) {
            (Some(e), Some(t)) => Some(e.max(t)),
            (e, _) => e,
        };
        let count = |k: &str| {
            map.get(k)
                .and_then(super::number)
                .filter(|v| *v >= 0.0)
                .map(|v| v.round() as u32)
        };
        let detail = if failed {
            let text = match (code, message.trim()) {
                (Some(c), "") => format!("error_code {c}"),
                (Some(c), m) => format!("error_code {c}: {m}"),
                (None, m) => m.to_string(),
            };
            detail_text(&text)
        } else {
            None
        };
        let id = format!("llmperf-{i}");
        let attempt_id = unique_id(&mut seen, id.clone());
        for ((key, seconds), values) in KEPT.iter().zip(kept.iter_mut()) {
            // pandas drops a missing value (`dropna`); so is a NaN Python wrote.
            match map.get(*key) {
                None | Some(Value::Null) => {}
                Some(v) => match super::number(v) {
                    Some(x) if x.is_finite() => values.push(PeerValue {
                        id: attempt_id.clone(),
                        value: if *seconds { x * 1000.0 } else { x },
                        weight: 1.0,
                    }),
                    Some(x) if x.is_nan() => {}
                    _ => {
                        return Err(ParseError::new(format!(
                            "{WHAT}: expected a number, found {}",
                            super::kind_of(v)
                        ))
                        .field(format!("[{i}].{key}")))
                    }
                },
            }
        }
        attempts.push(Attempt {
            id: attempt_id,
            business_id: id,
            attempt: 1,
            phase: Phase::Measure,
            intended_start_ms: None,
            start_ms: None,
            first_byte_ms: None,
            ttft_ms: ttft,
            events: Vec::new(),
            last_token_ms: None,
            e2e_ms: e2e,
            outcome,
            detail,
            quality: Quality::NotEvaluated,
            input_tokens: count("number_input_tokens"),
            // A failed record's count is a placeholder: LLMPerf tokenizes the empty text, and its
            // Llama tokenizer's encode("") returns the BOS token, so it writes 1.
            output_tokens: count("number_output_tokens")
                .filter(|&o| !failed || (o > 1 && ttft.is_some())),
            tokens_from_usage: false,
            event_tokens_estimated: false,
            reasoning: None,
            prompt: None,
            session: None,
        });
    }
    let header = Header::default();
    let definitions = vec![
        "LLMPerf saves no timestamps per request: the attempts have TTFT and E2E but no place on the run's timeline and no stream \
         events."
            .to_string(),
        "TTFT (`ttft_s`): request start → the first streamed chunk whose `delta.content` is not empty (role-only chunks are \
         skipped). E2E (`end_to_end_latency_s`): request start → end of the stream."
            .to_string(),
        "LLMPerf's per-request ITL (`inter_token_latency_s`: the gaps between chunks with content, TTFT included, summed and \
         divided by the output tokens) and output rate (`request_output_throughput_token_per_s`: chunks with content / E2E) \
         need every chunk's time and count, which the file does not keep; their per-request values are kept as LLMPerf wrote \
         them (`source.samples`), so its summary statistics over them are recomputed from those."
            .to_string(),
        "A failed record's `number_output_tokens` (1: the tokenizer's count of the empty text) is dropped: no output came."
            .to_string(),
        "Output tokens are counted by LLMPerf's tokenizer, not taken from the server's usage.".to_string(),
        "LLMPerf's summary covers requests without an error (pandas: linear quantiles, std ddof 1); its error rate divides by \
         every request started."
            .to_string(),
        "Any generated text in the file is dropped: Trace Lab never keeps response text.".to_string(),
        FAILURE_MAPPING.to_string(),
    ];
    let mut warnings = Vec::new();
    if list.iter().any(|r| r.get("generated_text").is_some()) {
        warnings.push("dropped `generated_text`: response text is never kept".to_string());
    }
    let mut trace = super::assemble(
        &detected,
        header,
        definitions,
        Vec::new(),
        attempts,
        warnings,
        true,
    );
    if let Some(source) = trace.header.source.as_mut() {
        for ((key, _), values) in KEPT.iter().zip(kept) {
            if !values.is_empty() {
                source.samples.insert(key.to_string(), values);
            }
        }
    }
    Ok(Imported {
        detected,
        traces: vec![ImportedTrace {
            label: String::new(),
            trace,
        }],
    })
}

/// LLMPerf's `results_error_code_frequency`: `str()` of a pandas `value_counts()` dict, so
/// `"{429.0: 130}"`, `"{-100.0: 49, 500.0: 2}"`, `"{}"` (numpy 2 may wrap the numbers as
/// `np.float64(429.0)`); a JSON object of the same is taken too. Codes and counts, in file order.
fn error_code_frequency(v: &Value) -> Result<Vec<(i64, f64)>, ParseError> {
    let bad = |what: &str| {
        ParseError::new(format!(
            "LLMPerf summary: {what}; expected a mapping like \"{{429.0: 130}}\""
        ))
    };
    let whole = |x: f64| (x.is_finite() && x.fract() == 0.0).then_some(x);
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Object(map) => map
            .iter()
            .map(|(k, n)| {
                let code = k
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .and_then(whole)
                    .ok_or_else(|| bad(&format!("the code `{k}` is not a number")))?;
                let count = super::number(n)
                    .and_then(whole)
                    .ok_or_else(|| bad(&format!("the count of `{k}` is not a whole number")))?;
                Ok((code as i64, count))
            })
            .collect(),
        Value::String(s) => {
            let inner = s.trim();
            let inner = inner
                .strip_prefix('{')
                .and_then(|r| r.strip_suffix('}'))
                .ok_or_else(|| bad(&format!("found \"{s}\"")))?;
            let strip = |t: &str| -> String {
                let t = t.trim();
                // `np.float64(429.0)` → `429.0`
                match (t.find('('), t.strip_suffix(')')) {
                    (Some(open), Some(body)) => body[open + 1..].trim().to_string(),
                    _ => t.to_string(),
                }
            };
            let mut out = Vec::new();
            for pair in inner.split(',').filter(|p| !p.trim().is_empty()) {
                let (k, n) = pair
                    .split_once(':')
                    .ok_or_else(|| bad(&format!("found \"{s}\"")))?;
                let (k, n) = (strip(k), strip(n));
                let code = k
                    .parse::<f64>()
                    .ok()
                    .and_then(whole)
                    .ok_or_else(|| bad(&format!("the code `{k}` is not a number")))?;
                let count = n
                    .parse::<f64>()
                    .ok()
                    .and_then(whole)
                    .ok_or_else(|| bad(&format!("the count `{n}` is not a whole number")))?;
                out.push((code as i64, count));
            }
            Ok(out)
        }
        other => Err(bad(&format!("found {}", super::kind_of(other)))),
    }
}

/// The figures of `*_summary.json`.
pub(super) fn summary(
    detected: Detected,
    map: &Map<String, Value>,
) -> Result<PeerSummary, ParseError> {
    let mut figures = Vec::new();
    let distributions: [(&str, Quantity, PeerUnit, &str, Reproducibility); 6] = [
        ("ttft_s", Quantity::Ttft, PeerUnit::S, "`ttft_s` of the requests without an error", Reproducibility::Exact),
        (
            "end_to_end_latency_s",
            Quantity::E2e,
            PeerUnit::S,
            "`end_to_end_latency_s` of the requests without an error",
            Reproducibility::Exact,
        ),
        (
            "inter_token_latency_s",
            Quantity::TimePerOutputToken,
            PeerUnit::S,
            "`inter_token_latency_s` (Σ chunk gaps incl. TTFT / output tokens, as LLMPerf kept it per request) of the requests \
             without an error",
            Reproducibility::Exact,
        ),
        (
            "number_input_tokens",
            Quantity::InputTokens,
            PeerUnit::Count,
            "`number_input_tokens` of the requests without an error",
            Reproducibility::Exact,
        ),
        (
            "number_output_tokens",
            Quantity::OutputTokens,
            PeerUnit::Count,
            "`number_output_tokens` (its tokenizer's count of the generated text) of the requests without an error",
            Reproducibility::Exact,
        ),
        (
            "request_output_throughput_token_per_s",
            Quantity::RequestOutputRate,
            PeerUnit::TokensPerSecond,
            "`request_output_throughput_token_per_s` (streamed chunks with content / E2E, as LLMPerf kept it per request) of the \
             requests without an error",
            Reproducibility::Exact,
        ),
    ];
    for (metric, quantity, unit, sample, reproducibility) in distributions {
        let prefix = format!("results_{metric}_");
        for (key, v) in map {
            let Some(rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            let stat = match rest {
                "mean" => Stat::Mean,
                "min" => Stat::Min,
                "max" => Stat::Max,
                "stddev" => Stat::Std { ddof: 1 },
                q => match q
                    .strip_prefix("quantiles_p")
                    .and_then(|p| p.parse::<f64>().ok())
                {
                    Some(p) if p > 0.0 && p <= 100.0 => Stat::Percentile {
                        p,
                        method: PeerPercentile::Linear,
                    },
                    _ => continue,
                },
            };
            let Some(value) = super::number(v).filter(|v| v.is_finite()) else {
                continue;
            };
            let words = match stat {
                Stat::Mean => "mean".to_string(),
                Stat::Min => "minimum".to_string(),
                Stat::Max => "maximum".to_string(),
                Stat::Std { .. } => "std (pandas, ddof 1)".to_string(),
                Stat::Percentile { p, .. } => format!(
                    "quantile {} (pandas, linear interpolation)",
                    tracelab_core::format::trim_num(p / 100.0)
                ),
                Stat::Value | Stat::Sum => String::new(),
            };
            figures.push(PeerFigure {
                tool_key: key.clone(),
                quantity,
                stat,
                value,
                unit,
                how: format!("{words} of {sample}"),
                empty_as_zero: false,
                reproducibility: reproducibility.clone(),
                duration: Default::default(),
                error_code: None,
                over: Default::default(),
                missing_as_zero: false,
                // Over the per-request values the individual responses keep.
                sample: KEPT
                    .iter()
                    .any(|(k, _)| *k == metric)
                    .then(|| metric.to_string()),
            });
        }
    }
    let values: [(&str, Quantity, PeerUnit, &str); 4] = [
        (
            "results_num_requests_started",
            Quantity::Attempts,
            PeerUnit::Count,
            "requests started",
        ),
        (
            "results_num_completed_requests",
            Quantity::Successes,
            PeerUnit::Count,
            "requests without an error",
        ),
        (
            "results_number_errors",
            Quantity::Failures,
            PeerUnit::Count,
            "requests with an error",
        ),
        (
            "results_error_rate",
            Quantity::ErrorRate,
            PeerUnit::Ratio,
            "errors / requests started",
        ),
    ];
    for (key, quantity, unit, how) in values {
        if let Some(value) = map
            .get(key)
            .and_then(super::number)
            .filter(|v| v.is_finite())
        {
            figures.push(PeerFigure::exact_value(
                key.to_string(),
                quantity,
                value,
                unit,
                how,
            ));
        }
    }
    if let Some(v) = map.get("results_error_code_frequency") {
        for (code, count) in
            error_code_frequency(v).map_err(|e| e.field("results_error_code_frequency"))?
        {
            let mut f = PeerFigure::exact_value(
                format!("results_error_code_frequency[{code}]"),
                Quantity::FailuresWithCode,
                count,
                PeerUnit::Count,
                format!("requests with error code {code}"),
            );
            f.error_code = Some(code);
            figures.push(f);
        }
    }
    const RUN_TIME: &str = "LLMPerf divides by its run's wall-clock time (`end_time − start_time` around every request), which it \
         does not save; the individual responses carry no timestamps";
    let rates: [(&str, Quantity, PeerUnit, &str); 2] = [
        (
            "results_mean_output_throughput_token_per_s",
            Quantity::OutputThroughput,
            PeerUnit::TokensPerSecond,
            "Σ `number_output_tokens` of the requests without an error / the run's wall-clock time",
        ),
        (
            "results_num_completed_requests_per_min",
            Quantity::RequestThroughput,
            PeerUnit::PerMinute,
            "requests without an error / the run's wall-clock time × 60",
        ),
    ];
    for (key, quantity, unit, how) in rates {
        if let Some(value) = map
            .get(key)
            .and_then(super::number)
            .filter(|v| v.is_finite())
        {
            figures.push(PeerFigure::not_reproducible(
                key.to_string(),
                quantity,
                Stat::Value,
                value,
                unit,
                how,
                RUN_TIME,
            ));
        }
    }
    figures.sort_by_key(PeerFigure::order);
    let concurrency = map
        .get("num_concurrent_requests")
        .and_then(Value::as_u64)
        .map(|v| v as u32);
    let conditions = Conditions {
        model: map.get("model").and_then(Value::as_str).map(str::to_string),
        concurrency,
        arrival: concurrency.map(|_| "closed".to_string()),
        ..Conditions::default()
    };
    let attempts = map
        .get("results_num_requests_started")
        .and_then(Value::as_u64);
    Ok(PeerSummary {
        detected,
        figures,
        conditions,
        attempts,
        successes: None,
        duration_s: None,
    })
}
