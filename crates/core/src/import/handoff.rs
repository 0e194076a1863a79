//! What an upload's import hands to the lab across a bundle boundary. The lab's own download
//! carries only our formats' reader; the peers' importers live in a separate bundle (`convert`)
//! loaded the first time a learner opens a peer tool's file. That bundle hands over each trace
//! in trace format v1, the format every other reader already takes, so the lab opens an
//! imported file exactly as one converted by `tracelab import`: its times kept to the
//! microsecond (every comparison with the tool's figures allows for that, see
//! [`crate::reproduce::resolution_note`]). A summary (the tool's own aggregate file) is set
//! beside the open trace in that bundle too ([`attach_handed`]); the lab receives the new header.
//!
//! The lab reads the envelope through `serde_json::Value` by hand: derived readers for it would
//! cost the lab's download more than the importers' whole answer is worth.

use serde_json::{json, Value};

use super::{attach_summary, load_upload, ImportedTrace, Loaded};
use crate::error::ParseError;
use crate::parse::parse_trace;
use crate::trace::{Header, Trace};
use crate::write::{header_line, to_jsonl};

/// What the lab gets back from [`hand_over`].
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    Traces(Vec<ImportedTrace>),
    /// The file is a tool's own aggregate: set it beside the open trace with [`attach_handed`].
    Summary,
}

/// Imports an upload (as [`load_upload`] does) and writes what it found for [`receive`].
/// An unreadable file is an error with the file, line and field, as from [`load_upload`].
pub fn hand_over(file: &str, text: &str) -> Result<String, ParseError> {
    Ok(match load_upload(file, text)? {
        Loaded::Summary(_) => json!({ "summary": true }),
        Loaded::Traces(imported) => json!({
            "traces": imported.traces.iter().map(|t| json!({
                "label": t.label,
                "jsonl": to_jsonl(&t.trace),
                // The format keeps no warnings of its own: they travel beside it.
                "warnings": t.trace.warnings,
            })).collect::<Vec<_>>(),
        }),
    }
    .to_string())
}

/// Reads what [`hand_over`] wrote.
pub fn receive(file: &str, handed: &str) -> Result<Received, ParseError> {
    let unreadable = |why: &str| ParseError::new(format!("the importer's answer is unreadable ({why}); reload the page")).in_file(file);
    let value: Value = serde_json::from_str(handed).map_err(|e| unreadable(&e.to_string()))?;
    if value.get("summary").and_then(Value::as_bool) == Some(true) {
        return Ok(Received::Summary);
    }
    let traces = value.get("traces").and_then(Value::as_array).ok_or_else(|| unreadable("no `traces`"))?;
    let mut out = Vec::with_capacity(traces.len());
    for t in traces {
        let jsonl = t.get("jsonl").and_then(Value::as_str).ok_or_else(|| unreadable("a trace without `jsonl`"))?;
        let mut trace = parse_trace(file, jsonl)?;
        trace.warnings =
            t.get("warnings").and_then(Value::as_array).into_iter().flatten().filter_map(|w| w.as_str().map(String::from)).collect();
        let label = t.get("label").and_then(Value::as_str).unwrap_or_default().to_string();
        out.push(ImportedTrace { label, trace });
    }
    if out.is_empty() {
        return Err(unreadable("no trace"));
    }
    Ok(Received::Traces(out))
}

/// Sets the summary in `summary_text` beside `trace` (the open trace, attempts included, as the
/// count check needs them) as [`attach_summary`] does, and writes the trace's new header line.
pub fn attach_handed(file: &str, summary_text: &str, mut trace: Trace) -> Result<String, ParseError> {
    match load_upload(file, summary_text)? {
        Loaded::Summary(summary) => {
            attach_summary(&mut trace, &summary).map_err(|e| e.in_file(file))?;
            Ok(header_line(&trace.header))
        }
        Loaded::Traces(_) => Err(ParseError::new("this is not a summary file").in_file(file)),
    }
}

/// Reads the header line [`attach_handed`] wrote.
pub fn received_header(file: &str, line: &str) -> Result<Header, ParseError> {
    parse_trace(file, line).map(|t| t.header)
}
