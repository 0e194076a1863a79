//! Writing traces: JSON Lines (format v1) and the classroom CSV. The recorder and the importers
//! write through here, so every trace on disk has the same shape.

use serde_json::{json, Map, Value};

use crate::parse::csv_cell;
use crate::trace::*;
use crate::units::{round_to_microsecond, s_from_ms};

/// Rounds a time to a microsecond so converting from the attempt's start back to the run's
/// origin does not print 200.00000000000003.
fn ms(value: f64) -> Value {
    json!(round_to_microsecond(value))
}

pub fn header_line(header: &Header) -> String {
    Value::Object(header_record(header)).to_string()
}

fn header_record(header: &Header) -> Map<String, Value> {
    let mut value = serde_json::to_value(header).expect("a header always serialises");
    let object = value.as_object_mut().expect("an object");
    let mut ordered = Map::new();
    ordered.insert("kind".into(), json!("header"));
    ordered.append(object);
    ordered
}

/// A header with extra fields after the core's own. The parser ignores fields it does not know,
/// so a writer can keep facts this core has no field for yet; an extra never replaces a core field.
pub fn header_line_with(header: &Header, extra: &Map<String, Value>) -> String {
    let mut record = header_record(header);
    append_new(&mut record, extra);
    Value::Object(record).to_string()
}

pub fn attempt_line(attempt: &Attempt) -> String {
    Value::Object(attempt_record(attempt)).to_string()
}

/// An attempt with extra fields after the core's own (see [`header_line_with`]).
pub fn attempt_line_with(attempt: &Attempt, extra: &Map<String, Value>) -> String {
    let mut record = attempt_record(attempt);
    append_new(&mut record, extra);
    Value::Object(record).to_string()
}

fn append_new(record: &mut Map<String, Value>, extra: &Map<String, Value>) {
    for (key, value) in extra {
        if !record.contains_key(key) {
            record.insert(key.clone(), value.clone());
        }
    }
}

fn attempt_record(attempt: &Attempt) -> Map<String, Value> {
    let origin = attempt.start_ms.unwrap_or(0.0);
    let at = |rel: Option<f64>| rel.map(|r| ms(origin + r));
    let mut m = Map::new();
    m.insert("kind".into(), json!("attempt"));
    m.insert("id".into(), json!(attempt.id));
    m.insert("business_id".into(), json!(attempt.business_id));
    m.insert("attempt".into(), json!(attempt.attempt));
    m.insert("phase".into(), json!(attempt.phase));
    if let Some(v) = attempt.intended_start_ms {
        m.insert("intended_start_ms".into(), ms(v));
    }
    m.insert(
        "start_ms".into(),
        attempt.start_ms.map(ms).unwrap_or(Value::Null),
    );
    if let Some(v) = at(attempt.first_byte_ms) {
        m.insert("first_byte_ms".into(), v);
    }
    if let Some(v) = at(attempt.ttft_ms) {
        m.insert("first_token_ms".into(), v);
    }
    if !attempt.events.is_empty() {
        let events: Vec<Value> = attempt
            .events
            .iter()
            .map(|e| json!([ms(origin + e.at_ms), e.tokens]))
            .collect();
        m.insert("events".into(), Value::Array(events));
    }
    if let Some(v) = at(attempt.last_token_ms) {
        m.insert("last_token_ms".into(), v);
    }
    m.insert("end_ms".into(), at(attempt.e2e_ms).unwrap_or(Value::Null));
    m.insert("outcome".into(), json!(attempt.outcome.name()));
    if let Some(status) = attempt.outcome.http_status() {
        m.insert("http_status".into(), json!(status));
    }
    if let Some(detail) = &attempt.detail {
        m.insert("detail".into(), json!(detail));
    }
    m.insert("quality".into(), json!(attempt.quality.name()));
    if let Some(v) = attempt.input_tokens {
        m.insert("input_tokens".into(), json!(v));
    }
    if let Some(v) = attempt.output_tokens {
        m.insert("output_tokens".into(), json!(v));
    }
    if attempt.input_tokens.is_some() || attempt.output_tokens.is_some() {
        m.insert("tokens_from_usage".into(), json!(attempt.tokens_from_usage));
    }
    if attempt.event_tokens_estimated {
        m.insert("event_tokens_estimated".into(), json!(true));
    }
    if let Some(r) = attempt.reasoning {
        m.insert(
            "first_reasoning_ms".into(),
            ms(origin + r.first_reasoning_ms),
        );
        m.insert(
            "first_content_ms".into(),
            at(r.first_content_ms).unwrap_or(Value::Null),
        );
    }
    if let Some(p) = attempt.prompt {
        m.insert("prompt_index".into(), json!(p.index));
        m.insert("repetition".into(), json!(p.repetition));
        m.insert("prompt_repeat".into(), json!(p.repeat));
        if let Some(c) = p.cached_tokens {
            m.insert("cached_tokens".into(), json!(c));
        }
    }
    if let Some(t) = &attempt.session {
        m.insert("session_id".into(), json!(t.session_id));
        m.insert("turn".into(), json!(t.turn));
        if let Some(h) = t.history_tokens {
            m.insert("history_tokens".into(), json!(h));
        }
        if let (None, Some(c)) = (attempt.prompt, t.cached_tokens) {
            m.insert("cached_tokens".into(), json!(c));
        }
    }
    m
}

pub fn gpu_line(sample: &GpuSample) -> String {
    let mut line = json!({
        "kind": "gpu",
        "t_ms": ms(sample.t_ms),
        "gpu": sample.gpu,
        "util_pct": sample.util_pct,
        "mem_used_mib": sample.mem_used_mib,
        "mem_total_mib": sample.mem_total_mib,
    });
    if let Some(node) = sample.node {
        line["node"] = json!(node);
    }
    line.to_string()
}

/// One scrape of the serving engine (record kind `engine`).
pub fn engine_line(sample: &engine::EngineSample) -> String {
    let mut line = serde_json::to_value(sample).unwrap_or_else(|_| json!({}));
    if let Value::Object(m) = &mut line {
        m.insert("t_ms".into(), ms(sample.t_ms));
        let mut with_kind = Map::new();
        with_kind.insert("kind".into(), json!("engine"));
        with_kind.extend(std::mem::take(m));
        *m = with_kind;
    }
    line.to_string()
}

pub fn footer_line(footer: &Footer) -> String {
    json!({
        "kind": "footer",
        "finished_cleanly": footer.finished_cleanly,
        "attempts": footer.attempts,
        "gpu_samples": footer.gpu_samples,
    })
    .to_string()
}

/// The whole trace as JSON Lines, ending with a newline.
pub fn to_jsonl(trace: &Trace) -> String {
    let mut out = String::new();
    out.push_str(&header_line(&trace.header));
    out.push('\n');
    for attempt in &trace.attempts {
        out.push_str(&attempt_line(attempt));
        out.push('\n');
    }
    for sample in &trace.gpu {
        out.push_str(&gpu_line(sample));
        out.push('\n');
    }
    if let Some(footer) = &trace.footer {
        out.push_str(&footer_line(footer));
        out.push('\n');
    }
    out
}

pub(crate) fn seconds(ms: Option<f64>) -> String {
    ms.map(|v| format!("{}", s_from_ms(v))).unwrap_or_default()
}

/// The classroom CSV's columns as [`to_csv`] writes them (the export adds verdict columns).
pub const CLASSROOM_COLUMNS: [&str; 13] = [
    "id",
    "business_id",
    "attempt",
    "phase",
    "outcome",
    "http_status",
    "start_s",
    "first_byte_s",
    "ttft_s",
    "e2e_s",
    "quality",
    "input_tokens",
    "output_tokens",
];

/// One attempt's cells under [`CLASSROOM_COLUMNS`] (times in seconds, a missing one empty).
pub(crate) fn classroom_cells(a: &Attempt) -> Vec<String> {
    let count = |n: Option<u32>| n.map(|v| v.to_string()).unwrap_or_default();
    vec![
        csv_cell(&a.id),
        csv_cell(&a.business_id),
        a.attempt.to_string(),
        match a.phase {
            Phase::Warmup => "warmup".into(),
            Phase::Measure => "measure".into(),
        },
        a.outcome.name().to_string(),
        a.outcome
            .http_status()
            .map(|s| s.to_string())
            .unwrap_or_default(),
        seconds(a.start_ms),
        seconds(a.first_byte_ms),
        seconds(a.ttft_ms),
        seconds(a.e2e_ms),
        a.quality.name().to_string(),
        count(a.input_tokens),
        count(a.output_tokens),
    ]
}

/// The trace in the classroom CSV form (window, cost and defaults as `#` lines).
pub fn to_csv(trace: &Trace) -> String {
    let mut out = String::new();
    let h = &trace.header;
    if let Some(w) = h.window {
        out.push_str(&format!("# window_s: {}\n", w.length_s));
    }
    if let Some(c) = &h.window_cost {
        out.push_str(&format!(
            "# window_cost: {}\n# currency: {}\n",
            c.amount, c.currency
        ));
    }
    if let Some(d) = &h.defaults {
        if let Some(t) = d.ttft_threshold_s {
            out.push_str(&format!("# ttft_threshold_s: {t}\n"));
        }
        if let Some(c) = d.comparison {
            out.push_str(&format!("# comparison: {}\n", c.code()));
        }
    }
    out.push_str(&CLASSROOM_COLUMNS.join(","));
    out.push('\n');
    for a in &trace.attempts {
        out.push_str(&classroom_cells(a).join(","));
        out.push('\n');
    }
    out
}
