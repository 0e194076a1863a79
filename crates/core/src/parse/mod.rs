//! Reading traces. The format is recognised from the content, never from the file name:
//! a JSON object on the first line is trace format v1 (JSON Lines), anything else the classroom CSV.

mod csv;
mod jsonl;
pub mod stream;

pub use self::csv::{csv_cell, parse_csv, split_csv_line, OPTIONAL_COLUMNS, REQUIRED_COLUMNS};
pub use self::jsonl::{parse_jsonl, validate_header, MAX_LINE_BYTES};

use crate::error::ParseError;
use crate::trace::Trace;

/// The formats the core can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Csv,
}

/// Guesses the format from the first meaningful character.
pub fn detect_format(text: &str) -> Format {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match text.trim_start().chars().next() {
        Some('{') => Format::Jsonl,
        _ => Format::Csv,
    }
}

/// Reads a trace in any supported format. `file` names it in error messages.
pub fn parse_trace(file: &str, text: &str) -> Result<Trace, ParseError> {
    if text.trim().is_empty() {
        return Err(ParseError::new(
            "the file is empty: a trace starts with a header record (JSON Lines) or a header row (CSV)",
        )
        .in_file(file));
    }
    match detect_format(text) {
        Format::Jsonl => parse_jsonl(file, text),
        Format::Csv => parse_csv(file, text),
    }
}

/// Reads a trace from bytes, refusing text that is not UTF-8 with the place it breaks.
pub fn parse_trace_bytes(file: &str, bytes: &[u8]) -> Result<Trace, ParseError> {
    let e = match std::str::from_utf8(bytes) {
        Ok(text) => return parse_trace(file, text),
        Err(e) => e,
    };
    let good = std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid up to here");
    // A JSON Lines trace whose writer was stopped mid-character ends with an incomplete UTF-8
    // sequence: that is the cut-off last line `parse_jsonl` accepts with a warning, so read the
    // valid part rather than refusing the whole file.
    if e.error_len().is_none() && detect_format(good) == Format::Jsonl && !good.ends_with('\n') {
        return parse_trace(file, good);
    }
    let line = good.bytes().filter(|&b| b == b'\n').count() + 1;
    Err(ParseError::new("the file is not UTF-8 text (is it a trace?)").at_line(line).in_file(file))
}

/// A binary file (an image, an archive) renamed to `.jsonl` or `.csv`: NUL bytes near the start,
/// or bytes that are not UTF-8 (a lossy read turns them into U+FFFD) at the very start or
/// several times in the first kilobyte. One stray replacement character in text is not enough.
pub fn not_text(text: &str) -> Option<ParseError> {
    let head: String = text.chars().take(1024).collect();
    let replaced = head.chars().filter(|&c| c == '\u{FFFD}').count();
    (head.contains('\0') || head.starts_with('\u{FFFD}') || replaced >= 4).then(|| binary_error(head.as_bytes()))
}

/// Raw bytes that are not text: NULs in the first kilobyte, or UTF-8 broken at the first byte.
pub fn bytes_not_text(bytes: &[u8], valid_up_to: usize) -> bool {
    valid_up_to == 0 || bytes[..bytes.len().min(1024)].contains(&0)
}

/// The same answer for raw bytes that are not UTF-8 near the start.
pub fn binary_error(head: &[u8]) -> ParseError {
    let kind = if head.starts_with(b"\x89PNG") || head.starts_with("\u{FFFD}PNG".as_bytes()) {
        " (it starts like a PNG image)"
    } else if head.starts_with(b"PK\x03\x04") {
        " (it starts like a ZIP archive: unpack it and upload the result file inside)"
    } else if head.starts_with(b"\x1f\x8b") || head.starts_with("\u{1f}\u{FFFD}".as_bytes()) {
        " (it starts like a gzip file: decompress it first)"
    } else if head.starts_with(b"%PDF") {
        " (it starts like a PDF)"
    } else {
        ""
    };
    ParseError::new(format!(
        "not a text file{kind}: expected a trace (.jsonl, .csv) or a benchmark tool's result file (JSON)"
    ))
}

