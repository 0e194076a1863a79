//! The importers' end of the handoff to the lab across its bundle boundary (the lab's end is
//! `tracelab_core::handoff`). The lab's own download carries only our formats' reader; the
//! peers' importers live in a separate bundle (`convert`) loaded the first time a learner opens
//! a peer tool's file. That bundle hands over each trace in trace format v1 ([`hand_over`]),
//! and sets a summary (the tool's own aggregate file) beside the open trace ([`attach_handed`]);
//! the lab receives the trace, or the new header, with [`receive`] and [`received_header`].

use serde_json::json;

use crate::import::{attach_summary, load_upload, Loaded};
use tracelab_core::error::ParseError;
use tracelab_core::trace::Trace;
use tracelab_core::write::{header_line, to_jsonl};

/// The lab's end, here too so that one name holds both ends.
pub use tracelab_core::handoff::{receive, received_header, ImportedTrace, Received};

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

/// Sets the summary in `summary_text` beside `trace` (the open trace, attempts included, as the
/// count check needs them) as [`attach_summary`] does, and writes the trace's new header line.
pub fn attach_handed(
    file: &str,
    summary_text: &str,
    mut trace: Trace,
) -> Result<String, ParseError> {
    match load_upload(file, summary_text)? {
        Loaded::Summary(summary) => {
            attach_summary(&mut trace, &summary).map_err(|e| e.in_file(file))?;
            Ok(header_line(&trace.header))
        }
        Loaded::Traces(_) => Err(ParseError::new("this is not a summary file").in_file(file)),
    }
}
