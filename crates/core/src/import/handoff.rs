//! What an upload's import hands to the lab across a bundle boundary. The lab's own download
//! carries only our formats' reader; the peers' importers live in a separate bundle (`convert`)
//! loaded the first time a learner opens a peer tool's file. That bundle imports the file and
//! hands over each trace in trace format v1, the format every other reader already takes, so
//! the lab opens an imported file exactly as it opens one converted by `tracelab import`: its
//! times kept to the microsecond (every comparison with the tool's figures allows for that, see
//! [`super::resolution_note`]). A summary crosses as its fields.

use serde::{Deserialize, Serialize};

use super::{load_upload, Detected, Imported, ImportedTrace, Loaded, PeerSummary};
use crate::error::ParseError;
use crate::parse::parse_trace;
use crate::write::to_jsonl;

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Handoff {
    Traces { detected: Detected, traces: Vec<HandoffTrace> },
    Summary { summary: Box<PeerSummary> },
}


#[derive(Serialize, Deserialize)]
struct HandoffTrace {
    label: String,
    /// The trace in format v1. The importer's warnings travel beside it: the format keeps none.
    jsonl: String,
    warnings: Vec<String>,
}

/// Imports an upload (as [`load_upload`] does) and writes what it found for [`receive`].
/// An unreadable file is an error with the file, line and field, as from [`load_upload`].
pub fn hand_over(file: &str, text: &str) -> Result<String, ParseError> {
    let handoff = match load_upload(file, text)? {
        Loaded::Summary(summary) => Handoff::Summary { summary },
        Loaded::Traces(imported) => Handoff::Traces {
            detected: imported.detected,
            traces: imported
                .traces
                .into_iter()
                .map(|t| HandoffTrace { label: t.label, jsonl: to_jsonl(&t.trace), warnings: t.trace.warnings })
                .collect(),
        },
    };
    serde_json::to_string(&handoff).map_err(|e| ParseError::new(format!("could not hand the import over: {e}")).in_file(file))
}

/// Reads what [`hand_over`] wrote back into what [`load_upload`] would have returned.
pub fn receive(file: &str, handed: &str) -> Result<Loaded, ParseError> {
    // Through a `Value`, as the header is read: the deserializers of the header's types are
    // then linked once in the lab.
    let handoff = serde_json::from_str::<serde_json::Value>(handed)
        .and_then(|v| Handoff::deserialize(&v))
        .map_err(|e| ParseError::new(format!("the importer's answer is unreadable ({e}); reload the page")).in_file(file))?;
    Ok(match handoff {
        Handoff::Summary { summary } => Loaded::Summary(summary),
        Handoff::Traces { detected, traces } => Loaded::Traces(Imported {
            detected,
            traces: traces
                .into_iter()
                .map(|t| {
                    let mut trace = parse_trace(file, &t.jsonl)?;
                    trace.warnings = t.warnings;
                    Ok(ImportedTrace { label: t.label, trace })
                })
                .collect::<Result<_, ParseError>>()?,
        }),
    })
}
