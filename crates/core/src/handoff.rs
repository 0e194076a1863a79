//! The lab's end of the handoff from its second bundle, where the peer tools' importers live
//! (`tracelab_peers::handoff` is the other end). The lab's own download carries only our
//! formats' reader: it decides here whether an upload is one of them ([`is_ours`]); any other
//! file goes to that bundle, which hands each trace back in trace format v1, the format every
//! other reader already takes, so the lab opens an imported file exactly as one converted by
//! `tracelab import`: its times kept to the microsecond (every comparison with the tool's
//! figures allows for that, see [`crate::reproduce::resolution_note`]). A summary (the tool's
//! own aggregate file) is set beside the open trace in that bundle too; the lab receives the new
//! header ([`received_header`]).
//!
//! The lab reads the envelope through `serde_json::Value` by hand: derived readers for it would
//! cost the lab's download more than the importers' whole answer is worth.

use serde_json::Value;

use crate::error::ParseError;
use crate::parse::{not_text, parse_trace};
use crate::trace::{Header, Trace};

/// One trace of an import, with a label to choose it by (guidellm: one per benchmark).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedTrace {
    /// "benchmark 1: concurrent, 4 streams"; empty when the file holds one run.
    pub label: String,
    pub trace: Trace,
}

/// What the lab gets back from the importers' `hand_over` (`tracelab_peers::handoff`).
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    Traces(Vec<ImportedTrace>),
    /// The file is a tool's own aggregate: set it beside the open trace with `attach_handed` (`tracelab_peers::handoff`).
    Summary,
}

/// Reads what the importers' `hand_over` (`tracelab_peers::handoff`) wrote.
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

/// Whether a file is in one of our own formats (trace format v1 or the classroom CSV), read by
/// [`parse_trace`]; anything else goes to the importers. Decides as the importers' own
/// detection does (`tracelab_peers::import::load_upload`; a test holds the two together).
pub fn is_ours(text: &str) -> bool {
    // The same decisions as the importers' `sniff`, in the same order, without reaching any
    // importer: the lab links this, and the importers stay in their own bundle.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() || not_text(text).is_some() {
        return false;
    }
    let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !matches!(first_line.trim_start().chars().next(), Some('{') | Some('[')) {
        return !is_summary_table(first_line);
    }
    match serde_json::from_str::<Value>(first_line) {
        Ok(Value::Object(map)) => map.contains_key("kind"),
        Ok(_) => false,
        Err(_) => first_line.contains("\"kind\"") && first_line.trim_start().starts_with('{'),
    }
}

/// Whether a first line that is not JSON heads AIPerf's `profile_export_aiperf.csv` or
/// GenAI-Perf's `profile_export_genai_perf.csv` (a `Metric,avg,min,max,p…` table of summary
/// statistics) rather than the classroom CSV. The importers refuse such a file with what to
/// upload instead.
pub fn is_summary_table(first_line: &str) -> bool {
    let cells: Vec<&str> = first_line.trim().split(',').map(str::trim).collect();
    cells.first() == Some(&"Metric") && cells.contains(&"avg") && cells.iter().any(|c| c.starts_with('p'))
}

/// Reads the header line the importers' `attach_handed` (`tracelab_peers::handoff`) wrote.
pub fn received_header(file: &str, line: &str) -> Result<Header, ParseError> {
    parse_trace(file, line).map(|t| t.header)
}
