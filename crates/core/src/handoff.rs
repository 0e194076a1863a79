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
//!
//! The other way, the lab never writes a trace out: it keeps the text each trace was read from
//! ([`TraceText`]) and sends that, with the learner's what-if edits ([`WorkingText`]), to its
//! second bundle and to the lessons page, which read it with the same reader. The lab's first
//! download then carries no serializer of the trace (about 15 KB gzipped).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ParseError;
use crate::parse::{not_text, parse_trace};
use crate::trace::{Header, Trace};
use crate::whatif::WhatIf;

/// A trace as the text it was read from: a sample's or an upload's file, or the trace format v1
/// an import was handed back in; with what was set on it since (the importer's warnings, a
/// summary's new header). [`TraceText::read`] gives back the trace the lab holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TraceText {
    /// The file name, as errors name it.
    pub file: String,
    /// The file's text (our formats: trace format v1 or the classroom CSV).
    pub text: String,
    /// The importer's warnings, which replace the reader's own (an import's text is ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
    /// A header line that replaces the text's own: a tool's summary set beside the trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<String>,
}

impl TraceText {
    pub fn new(file: &str, text: String) -> TraceText {
        TraceText {
            file: file.to_string(),
            text,
            warnings: None,
            header: None,
        }
    }

    /// The trace, read as the lab read it.
    pub fn read(&self) -> Result<Trace, ParseError> {
        self.set_on(parse_trace(&self.file, &self.text)?)
    }

    /// `trace`, read from this text where it is held elsewhere (by a
    /// [`crate::parse::TraceReader`]; `self.text` is then empty), with what was set on it since.
    pub fn set_on(&self, mut trace: Trace) -> Result<Trace, ParseError> {
        if let Some(line) = &self.header {
            trace.header = received_header(&self.file, line)?;
        }
        if let Some(warnings) = &self.warnings {
            trace.warnings = warnings.clone();
        }
        Ok(trace)
    }
}

/// A trace's text with the learner's what-if edits: the trace as the lab shows it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WorkingText {
    pub trace: TraceText,
    #[serde(default)]
    pub whatif: WhatIf,
}

impl WorkingText {
    /// Everything of a working trace but its text, as JSON: what goes beside the text when the
    /// lab hands a trace to its second bundle, which reads the text in pieces
    /// ([`crate::parse::TraceReader`]) and sets the rest on it ([`WorkingText::set_on`]). The text
    /// itself goes as the JavaScript string the lab keeps it in: at 1,000,000 attempts it is
    /// 225 MB, and escaping it into JSON made two more copies of it.
    pub fn rest_json(trace: &TraceText, whatif: &WhatIf) -> Result<String, serde_json::Error> {
        let rest = TraceText {
            file: trace.file.clone(),
            text: String::new(),
            warnings: trace.warnings.clone(),
            header: trace.header.clone(),
        };
        serde_json::to_string(&WorkingText {
            trace: rest,
            whatif: whatif.clone(),
        })
    }

    /// The trace with the edits applied (its attempts are the lab's working attempts).
    pub fn read(&self) -> Result<Trace, ParseError> {
        self.set_on(parse_trace(&self.trace.file, &self.trace.text)?)
    }

    /// `trace`, read from this text where it is held elsewhere (see [`TraceText::set_on`]), with
    /// what was set on it since and the edits applied.
    pub fn set_on(&self, trace: Trace) -> Result<Trace, ParseError> {
        let mut trace = self.trace.set_on(trace)?;
        if !self.whatif.is_empty() {
            trace.attempts = self.whatif.apply(&trace.attempts);
        }
        Ok(trace)
    }
}

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
    /// Each trace, with the text it was read from (for [`WorkingText`]).
    Traces(Vec<(ImportedTrace, TraceText)>),
    /// The file is a tool's own aggregate: set it beside the open trace with `attach_handed` (`tracelab_peers::handoff`).
    Summary,
}

/// Reads what the importers' `hand_over` (`tracelab_peers::handoff`) wrote.
pub fn receive(file: &str, handed: &str) -> Result<Received, ParseError> {
    let unreadable = |why: &str| {
        ParseError::new(format!(
            "the importer's answer is unreadable ({why}); reload the page"
        ))
        .in_file(file)
    };
    let value: Value = serde_json::from_str(handed).map_err(|e| unreadable(&e.to_string()))?;
    if value.get("summary").and_then(Value::as_bool) == Some(true) {
        return Ok(Received::Summary);
    }
    let traces = value
        .get("traces")
        .and_then(Value::as_array)
        .ok_or_else(|| unreadable("no `traces`"))?;
    let mut out = Vec::with_capacity(traces.len());
    for t in traces {
        let jsonl = t
            .get("jsonl")
            .and_then(Value::as_str)
            .ok_or_else(|| unreadable("a trace without `jsonl`"))?;
        let warnings = t
            .get("warnings")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(String::from))
            .collect();
        let text = TraceText {
            warnings: Some(warnings),
            ..TraceText::new(file, jsonl.to_string())
        };
        let trace = text.read()?;
        let label = t
            .get("label")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        out.push((ImportedTrace { label, trace }, text));
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
    if !matches!(
        first_line.trim_start().chars().next(),
        Some('{') | Some('[')
    ) {
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
    cells.first() == Some(&"Metric")
        && cells.contains(&"avg")
        && cells.iter().any(|c| c.starts_with('p'))
}

/// Reads the header line the importers' `attach_handed` (`tracelab_peers::handoff`) wrote.
pub fn received_header(file: &str, line: &str) -> Result<Header, ParseError> {
    parse_trace(file, line).map(|t| t.header)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::whatif::RowEdit;

    const TEN: &str = include_str!("../../../public/samples/ten-requests.jsonl");

    #[test]
    fn a_trace_text_reads_back_to_the_trace_the_lab_holds_with_its_edits() {
        let text = TraceText::new("ten-requests.jsonl", TEN.to_string());
        let plain = text.read().unwrap();
        assert_eq!(plain, parse_trace("ten-requests.jsonl", TEN).unwrap());
        // What-if edits are applied as the lab applies them: row 2 deleted, row 0 loses its TTFT.
        let mut whatif = WhatIf::default();
        whatif.deleted.insert(2);
        whatif.edits.insert(
            0,
            RowEdit {
                ttft_ms: Some(None),
                ..Default::default()
            },
        );
        let working = WorkingText {
            trace: text.clone(),
            whatif: whatif.clone(),
        };
        let edited = working.read().unwrap();
        assert_eq!(edited.attempts, whatif.apply(&plain.attempts));
        assert_eq!(edited.attempts.len(), plain.attempts.len() - 1);
        // Through JSON, as it crosses between the lab's bundles.
        let back: WorkingText =
            serde_json::from_str(&serde_json::to_string(&working).unwrap()).unwrap();
        assert_eq!(back.read().unwrap(), edited);
        // A summary's new header line and an importer's warnings are kept beside the text.
        let mut header = plain.header.clone();
        header.conditions.model = Some("another-model".into());
        let line = crate::write::header_line(&header);
        let set = TraceText {
            header: Some(line),
            warnings: Some(vec!["w".into()]),
            ..text
        };
        let read = set.read().unwrap();
        assert_eq!(read.header, header);
        assert_eq!(read.warnings, ["w"]);
        assert_eq!(read.attempts, plain.attempts);
        // Handed over as the text and the rest (the lab's second bundle): the same working trace,
        // and the rest carries no copy of the text.
        let working = WorkingText { trace: set, whatif };
        let rest = WorkingText::rest_json(&working.trace, &working.whatif).unwrap();
        assert!(
            rest.len() < working.trace.text.len() / 4,
            "the rest holds the text: {rest}"
        );
        let rest: WorkingText = serde_json::from_str(&rest).unwrap();
        assert_eq!(rest.trace.text, "");
        assert_eq!(
            rest,
            WorkingText {
                trace: TraceText {
                    text: String::new(),
                    ..working.trace.clone()
                },
                whatif: working.whatif.clone()
            }
        );
        // The text read in pieces of 7 characters, the rest set on it.
        let mut reader = crate::parse::TraceReader::new(&rest.trace.file);
        let chars: Vec<char> = working.trace.text.chars().collect();
        for piece in chars.chunks(7) {
            reader.feed(&piece.iter().collect::<String>()).unwrap();
        }
        assert_eq!(
            rest.set_on(reader.finish().unwrap()).unwrap(),
            working.read().unwrap()
        );
    }

    #[test]
    fn a_damaged_trace_text_is_refused_naming_its_file_and_line() {
        let broken = TEN.replacen("\"outcome\"", "\"outcome_\"", 1);
        let e = TraceText::new("ten-requests.jsonl", broken)
            .read()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ten-requests.jsonl") && e.contains("line"),
            "{e}"
        );
    }
}
