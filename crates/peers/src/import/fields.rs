//! What every importer reads the same way: numbers that may be written as strings, times
//! checked against the trace's limits, a tool's error text kept short, failures mapped to
//! outcomes, ids made unique.

use serde_json::{Map, Value};

use tracelab_core::error::ParseError;
use tracelab_core::trace::{Outcome, Trace, MAX_TIME_MS};
/// A number, or a numeric string (LLMPerf writes some minima as `"550"`); `None` for null.
pub(crate) fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
}

/// Reads an optional finite number at `key`; a value of the wrong kind is an error naming `path`.
pub(crate) fn opt_num(
    map: &Map<String, Value>,
    key: &str,
    path: &str,
    what: &str,
) -> Result<Option<f64>, ParseError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match number(v) {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(
                ParseError::new(format!("{what}: expected a number, found {}", kind_of(v)))
                    .field(path.to_string()),
            ),
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
        return Err(
            ParseError::new(format!("{what}: negative time {v} ms")).field(path.to_string())
        );
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
pub(super) fn within_limits(trace: &Trace) -> Result<(), ParseError> {
    tracelab_core::parse::validate_header(&trace.header)?;
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
        message
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or(message)
            .trim()
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
pub(crate) fn classify_failure(
    message: &str,
    http_status: Option<i64>,
    got_token: bool,
) -> Outcome {
    if let Some(status) = http_status {
        if (400..=599).contains(&status) {
            return Outcome::HttpError {
                status: status as u16,
            };
        }
    }
    let trimmed = message.trim();
    let last_line = trimmed
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
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
        return if got_token {
            Outcome::TimeoutAfterFirstToken
        } else {
            Outcome::TimeoutBeforeFirstToken
        };
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
