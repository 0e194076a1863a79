//! Reading a JSON Lines trace as a stream, for traces too large to hold: line by line through a
//! [`BufRead`], each attempt parsed, checked and handed to its caller in file order, then dropped
//! ([`visit`]). `tracelab export` and `merge` hand each attempt on (and may check the ids
//! themselves, [`Ids::Caller`]); [`crate::streamed::read`] (`tracelab report`, the streamed cards)
//! folds each into the card's facts, a layer up, where the index and the analyses are.
//!
//! Kept here besides the caller's state: the attempt ids for the duplicate check (with
//! [`Ids::Here`]: the id's length, 16 bytes and 8 to 16 of slots each), GPU samples (40 bytes
//! each), engine scrapes and warnings, kept whole as the whole-file reader keeps them. A line may be at most [`MAX_LINE_BYTES`] long;
//! a longer one is refused after reading past it, without holding it.
//!
//! The lines go through the same [`LineReader`] as [`super::parse_jsonl`]'s, so the errors are the
//! same too, including their precedence: the whole-file reader refuses text that is not UTF-8
//! before reading any record, so after a bad record the rest of the stream is still checked for
//! UTF-8.

use std::io::{self, BufRead, Read, Seek, SeekFrom};

use super::jsonl::{too_long, Line, LineReader, MAX_LINE_BYTES};
use crate::error::ParseError;
use crate::trace::{Attempt, Footer, GpuSample, Header};

/// What stopped a streamed read.
#[derive(Debug)]
pub enum StreamError {
    /// Reading the file failed.
    Io(io::Error),
    /// The trace is refused: the error the whole-file reader gives.
    Parse(ParseError),
}

impl From<io::Error> for StreamError {
    fn from(e: io::Error) -> Self {
        StreamError::Io(e)
    }
}

/// How much of the start of a file [`streamable`] looks at, besides its first record.
const HEAD_BYTES: usize = 4096;

/// Whether the file is a Trace Lab JSON Lines trace that [`visit`] reads exactly as the
/// whole-file reader (`tracelab_peers::import::load_any_bytes`) would: its first non-blank line is a complete
/// JSON object with a `kind`, and its start is text. Anything else (a peer tool's file, the
/// classroom CSV, a broken first record, a binary file) is left to the whole-file reader. Reads
/// the start of `reader` and rewinds it.
pub fn streamable<R: Read + Seek>(reader: &mut R) -> io::Result<bool> {
    let mut head = Vec::new();
    let mut chunk = vec![0; 64 * 1024];
    let mut at_eof = false;
    // Enough for the first record (at most one line's worth) and the text checks.
    while head.len() < MAX_LINE_BYTES + HEAD_BYTES {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            at_eof = true;
            break;
        }
        head.extend_from_slice(&chunk[..n]);
        if head.len() >= HEAD_BYTES && first_record(&head, false).is_some() {
            break;
        }
    }
    reader.seek(SeekFrom::Start(0))?;
    Ok(head_is_ours(&head, at_eof))
}

/// The first non-blank line of `head` (BOM stripped), when it is complete in `head`.
fn first_record(head: &[u8], at_eof: bool) -> Option<&[u8]> {
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    let mut rest = head;
    loop {
        let (line, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None if at_eof => (rest, None),
            None => return None,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !std::str::from_utf8(line).map_or(true, |l| l.trim().is_empty()) {
            return Some(line);
        }
        rest = next?;
    }
}

fn head_is_ours(head: &[u8], at_eof: bool) -> bool {
    // `tracelab_peers::import::load_any_bytes` calls a file with a NUL in its first kilobyte binary.
    if head[..head.len().min(1024)].contains(&0) {
        return false;
    }
    let valid = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).expect("valid up to here"),
    };
    let text = valid.strip_prefix('\u{feff}').unwrap_or(valid);
    if super::not_text(text).is_some() {
        return false;
    }
    // The first record must be whole and valid here, so the whole-file reader sniffs the file
    // as ours however far into it the first non-UTF-8 byte (if any) lies.
    let complete_here = at_eof && valid.len() == head.len();
    let Some(line) = first_record(valid.as_bytes(), complete_here) else {
        return false;
    };
    let Ok(line) = std::str::from_utf8(line) else {
        return false;
    };
    matches!(serde_json::from_str::<serde_json::Value>(line), Ok(serde_json::Value::Object(map)) if map.contains_key("kind"))
}

/// What a streamed read keeps besides what its caller folded: the header, footer, GPU and engine
/// samples (a few per second, kept whole as the whole-file reader keeps them) and the warnings.
pub struct Rest {
    pub header: Header,
    pub footer: Option<Footer>,
    pub gpu: Vec<GpuSample>,
    pub engine: Vec<crate::trace::engine::EngineSample>,
    pub warnings: Vec<String>,
}

/// Who checks that no attempt id is used twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ids {
    /// The reader, keeping every id (~40 bytes per attempt).
    Here,
    /// The caller, with each attempt's line (`tracelab export` and `merge` sort the ids on disk,
    /// so their memory does not grow with the trace); its error is [`super::duplicate_id`].
    Caller,
}

/// The one streamed reader under [`crate::streamed::read`] and `tracelab export`/`merge`: each attempt, checked
/// as the whole-file reader checks it (its id too, with [`Ids::Here`]), is handed to `each` with
/// its line number in file order and dropped here.
/// `start` is asked once, with the header, before any attempt, for the caller's state; its error
/// is returned only when the whole file reads (so a bad option comes after a bad file's error).
/// An error of `each` (a full disk) stops the read at once. Besides the caller's state, memory
/// holds the attempt ids (the duplicate check), the GPU and engine samples and the warnings.
pub fn visit<R: BufRead, S, E>(
    file: &str,
    reader: R,
    ids: Ids,
    start: impl FnOnce(&Header) -> Result<S, E>,
    mut each: impl FnMut(&mut S, Attempt, usize) -> Result<(), E>,
) -> Result<Result<(S, Rest), E>, StreamError> {
    let mut lines = Lines::new(reader);
    let mut reader = match ids {
        Ids::Here => LineReader::default(),
        Ids::Caller => LineReader::ids_elsewhere(),
    };
    let mut start = Some(start);
    let mut state: Option<Result<S, E>> = None;
    let mut gpu = Vec::new();
    let mut engine = Vec::new();
    let failed = loop {
        let Some(raw) = lines.next()? else { break None };
        let line_no = raw.line_no;
        if let Some(e) = raw.utf8_error(&lines.buf) {
            return Err(StreamError::Parse(e.in_file(file)));
        }
        let text = match raw.text(&lines.buf) {
            Ok(text) => text,
            Err(e) => break Some(e),
        };
        let line = match reader.line(line_no, text, raw.by_eof) {
            Ok(line) => line,
            Err(e) => break Some(e),
        };
        if state.is_none() {
            if let (Some(header), Some(f)) = (reader.header(), start.take()) {
                state = Some(f(header));
            }
        }
        match line {
            Line::Attempt(a) => {
                if let Some(Ok(s)) = &mut state {
                    if let Err(e) = each(s, *a, line_no) {
                        return Ok(Err(e));
                    }
                }
            }
            Line::Gpu(sample) => gpu.push(sample),
            Line::Engine(sample) => engine.push(*sample),
            Line::CutOff => break None,
            Line::Other => {}
        }
    };
    if let Some(error) = failed {
        // The whole-file reader would have refused non-UTF-8 text before reading this record.
        let error = match lines.first_non_utf8()? {
            Some(utf8) => utf8,
            None => error,
        };
        return Err(StreamError::Parse(error.in_file(file)));
    }
    let read = reader
        .finish()
        .map_err(|e| StreamError::Parse(e.in_file(file)))?;
    let state = match state {
        Some(Ok(state)) => state,
        Some(Err(e)) => return Ok(Err(e)),
        None => unreachable!("a trace that reads has a header, and the caller was asked with it"),
    };
    Ok(Ok((
        state,
        Rest {
            header: read.header,
            footer: read.footer,
            gpu,
            engine,
            warnings: read.warnings,
        },
    )))
}

/// One line as read: its bytes are `Lines::buf` when it fit, else only its length is known.
struct RawLine {
    line_no: usize,
    by_eof: bool,
    /// The line's length without its `\n`, however much of it was kept.
    len: usize,
    /// It was longer than what is kept, so it is only measured and checked for UTF-8.
    overflow: Option<Utf8Check>,
}

impl RawLine {
    /// The error the whole-file reader gives first when this line breaks UTF-8 (it checks the
    /// whole text before reading any record).
    fn utf8_error(&self, buf: &[u8]) -> Option<ParseError> {
        let broken = match &self.overflow {
            Some(check) => match check.state() {
                Utf8State::Invalid => true,
                Utf8State::Incomplete(_) => !self.by_eof,
                Utf8State::Complete => false,
            },
            None => match std::str::from_utf8(buf) {
                Ok(_) => false,
                // The writer stopped in the middle of a character of the last line: the
                // whole-file reader keeps the text before it (a cut-off line), unless nothing of
                // the line is left.
                Err(e) => !(e.error_len().is_none() && self.by_eof && e.valid_up_to() > 0),
            },
        };
        broken.then(|| not_utf8(self.line_no))
    }

    /// The line as text (for a line that passed [`RawLine::utf8_error`]), or the error for a
    /// line too long to keep.
    fn text<'b>(&self, buf: &'b [u8]) -> Result<&'b str, ParseError> {
        if let Some(check) = &self.overflow {
            // Cut off in the middle of a character by the end of the file, the whole-file reader
            // reads the text before it (still too long).
            let (len, last) = match check.state() {
                Utf8State::Incomplete(n) => (self.len - n, check.byte_before_carry),
                _ => (self.len, check.last),
            };
            return Err(too_long(len - (last == Some(b'\r')) as usize).at_line(self.line_no));
        }
        Ok(match std::str::from_utf8(buf) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&buf[..e.valid_up_to()]).expect("valid up to here"),
        })
    }
}

/// The message of the error for text that is not UTF-8, which the whole-file reader gives before
/// any other (a caller that checks the ids itself lets it win over a repeated id).
pub const NOT_UTF8: &str = "the file is not UTF-8 text (is it a trace?)";

fn not_utf8(line: usize) -> ParseError {
    ParseError::new(NOT_UTF8).at_line(line)
}

/// Lines of a [`BufRead`], each kept up to [`MAX_LINE_BYTES`] + 1 (a `\r` may follow).
struct Lines<R> {
    reader: R,
    buf: Vec<u8>,
    line_no: usize,
    done: bool,
}

const KEEP: usize = MAX_LINE_BYTES + 1;

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            line_no: 0,
            done: false,
        }
    }

    /// The next line, or `None` after the last. As `str::split('\n')`: a text ending with a
    /// newline ends with an empty line, which carries nothing and is not returned.
    fn next(&mut self) -> io::Result<Option<RawLine>> {
        if self.done {
            return Ok(None);
        }
        self.buf.clear();
        let mut len = 0;
        let mut overflow: Option<Utf8Check> = None;
        let by_eof = loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break true;
            }
            let (part, newline) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], true),
                None => (available, false),
            };
            let used = part.len() + newline as usize;
            len += part.len();
            match &mut overflow {
                Some(check) => check.feed(part),
                None if self.buf.len() + part.len() <= KEEP => self.buf.extend_from_slice(part),
                None => {
                    let mut check = Utf8Check::default();
                    check.feed(&self.buf);
                    check.feed(part);
                    self.buf.clear();
                    overflow = Some(check);
                }
            }
            self.reader.consume(used);
            if newline {
                break false;
            }
        };
        if by_eof {
            self.done = true;
            if len == 0 {
                return Ok(None);
            }
        }
        self.line_no += 1;
        Ok(Some(RawLine {
            line_no: self.line_no,
            by_eof,
            len,
            overflow,
        }))
    }

    /// After a refused record: the first later line that is not UTF-8, as the whole-file reader
    /// would have reported it first.
    fn first_non_utf8(&mut self) -> io::Result<Option<ParseError>> {
        while let Some(raw) = self.next()? {
            if let Some(e) = raw.utf8_error(&self.buf) {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }
}

/// UTF-8 checked across chunks, for a line too long to keep.
#[derive(Default)]
struct Utf8Check {
    carry: Vec<u8>,
    invalid: bool,
    last: Option<u8>,
    /// The byte before the incomplete character at the end, if any.
    byte_before_carry: Option<u8>,
}

enum Utf8State {
    Complete,
    Invalid,
    /// Ends inside a character of this many bytes so far.
    Incomplete(usize),
}

impl Utf8Check {
    fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.invalid {
            return;
        }
        let before_all = self.last;
        let had_carry = !self.carry.is_empty();
        self.last = bytes.last().copied();
        let mut joined;
        let data: &[u8] = if !had_carry {
            bytes
        } else {
            joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            &joined
        };
        match std::str::from_utf8(data) {
            Ok(_) => self.carry.clear(),
            Err(e) if e.error_len().is_none() => {
                let at = e.valid_up_to();
                if at > 0 {
                    self.byte_before_carry = Some(data[at - 1]);
                } else if !had_carry {
                    self.byte_before_carry = before_all;
                }
                self.carry = data[at..].to_vec();
            }
            Err(_) => self.invalid = true,
        }
    }

    fn state(&self) -> Utf8State {
        if self.invalid {
            Utf8State::Invalid
        } else if self.carry.is_empty() {
            Utf8State::Complete
        } else {
            Utf8State::Incomplete(self.carry.len())
        }
    }
}
