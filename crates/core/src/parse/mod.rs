//! Reading traces. The format is recognised from the content, never from the file name:
//! a JSON object on the first line is trace format v1 (JSON Lines), anything else the classroom CSV.

mod csv;
mod jsonl;
pub mod stream;

pub use self::csv::{csv_cell, parse_csv, split_csv_line, OPTIONAL_COLUMNS, REQUIRED_COLUMNS};
pub use self::jsonl::{duplicate_id, parse_jsonl, validate_header, MAX_LINE_BYTES};

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

/// A trace in any supported format read from its text in pieces cut anywhere, for a caller that
/// never holds the whole text at once (the lab keeps a big upload's text outside its
/// WebAssembly memory and copies it in a few megabytes at a time): the same trace, errors and
/// warnings as [`parse_trace`] on the pieces joined. A JSON Lines trace is read line by line as
/// the pieces come, holding only the line a cut falls in; a classroom CSV (a class's rows, small)
/// is joined and read at the end.
pub struct TraceReader {
    file: String,
    reading: Reading,
    /// Room to make for attempts once the text turns out to be JSON Lines.
    reserve: usize,
}

// One per reader, alive for one file: its size is not worth boxing the JSON Lines state.
#[allow(clippy::large_enum_variant)]
enum Reading {
    /// Only blanks (and a byte order mark) so far: the format is not known yet.
    Unknown(String),
    Jsonl(jsonl::JsonlParts),
    Csv(String),
}

impl TraceReader {
    /// `file` names the text in error messages.
    pub fn new(file: &str) -> TraceReader {
        TraceReader {
            file: file.to_string(),
            reading: Reading::Unknown(String::new()),
            reserve: 0,
        }
    }

    /// Makes room for about this many attempts at once (one per line is a good guess) rather
    /// than growing by doubling, which holds the old and the new room together.
    pub fn reserve(&mut self, attempts: usize) {
        self.reserve = attempts;
    }

    /// [`reserve`](TraceReader::reserve)s for the attempts a text holds, guessed from a sample
    /// of it that is `share` of the whole (0 < share ≤ 1): its lines that can be attempt
    /// records, scaled, and a few more (what is left over is given back at the end). Never more
    /// than one per 64 bytes of text: no attempt record with its newline is shorter.
    pub fn reserve_by_sample(&mut self, piece: &str, share: f64) {
        let share = share.clamp(1e-9, 1.0);
        let records = piece
            .split('\n')
            .filter(|line| line.contains("\"attempt\""))
            .count() as f64;
        let guess = (records / share * 1.02 + 16.0).min(piece.len() as f64 / share / 64.0 + 16.0);
        self.reserve(guess as usize);
    }

    /// The next piece of the text.
    pub fn feed(&mut self, piece: &str) -> Result<(), ParseError> {
        match &mut self.reading {
            Reading::Jsonl(parts) => parts.feed(piece).map_err(|e| e.in_file(&self.file)),
            Reading::Csv(text) => {
                text.push_str(piece);
                Ok(())
            }
            Reading::Unknown(start) => {
                start.push_str(piece);
                let head = start.strip_prefix('\u{feff}').unwrap_or(start).trim_start();
                if head.is_empty() {
                    return Ok(());
                }
                let start = std::mem::take(start);
                if detect_format(&start) == Format::Csv {
                    self.reading = Reading::Csv(start);
                    return Ok(());
                }
                let mut parts = jsonl::JsonlParts::default();
                parts.reserve(self.reserve);
                self.reading = Reading::Jsonl(parts);
                self.feed(&start)
            }
        }
    }

    /// After the last piece: the trace, or why it cannot be read.
    pub fn finish(self) -> Result<Trace, ParseError> {
        match self.reading {
            Reading::Jsonl(parts) => parts.finish().map_err(|e| e.in_file(&self.file)),
            Reading::Csv(text) | Reading::Unknown(text) => parse_trace(&self.file, &text),
        }
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
    Err(
        ParseError::new("the file is not UTF-8 text (is it a trace?)")
            .at_line(line)
            .in_file(file),
    )
}

/// A binary file (an image, an archive) renamed to `.jsonl` or `.csv`: NUL bytes near the start,
/// or bytes that are not UTF-8 (a lossy read turns them into U+FFFD) at the very start or
/// several times in the first kilobyte. One stray replacement character in text is not enough.
pub fn not_text(text: &str) -> Option<ParseError> {
    let head: String = text.chars().take(1024).collect();
    let replaced = head.chars().filter(|&c| c == '\u{FFFD}').count();
    (head.contains('\0') || head.starts_with('\u{FFFD}') || replaced >= 4)
        .then(|| binary_error(head.as_bytes()))
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
