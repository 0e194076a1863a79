//! A trace's text kept as a JavaScript string, outside the WebAssembly memory, and read into the
//! core a few megabytes at a time. At 1,000,000 attempts the text is 225 MB: held as a Rust
//! `String` it stayed in a module's memory for good (a WebAssembly memory only grows), once in
//! the lab and once more in its second bundle. Held here, one string serves both (a JavaScript
//! value crosses between modules without a copy) and each module holds only the attempts.

use js_sys::JsString;
use send_wrapper::SendWrapper;
use tracelab_core::handoff::TraceText;
use tracelab_core::parse::TraceReader;
use tracelab_core::{ParseError, Trace};

/// About how many UTF-16 units one piece copies into the module's memory.
const PIECE: u32 = 4 << 20;
/// How many UTF-16 units each of the three samples that size the attempts' room holds.
const SAMPLE: u32 = 1 << 20;

/// A trace's text as the lab keeps it: the JavaScript string, handed to the second bundle as it
/// is; beside it the rest of its [`TraceText`] (file name, the importer's warnings, a summary's
/// header), whose `text` stays empty.
#[derive(Clone, Debug)]
pub struct HeldText {
    pub rest: TraceText,
    /// Wrapped so a signal can hold it (a signal's value must be `Send`; the page has one thread).
    pub text: SendWrapper<JsString>,
}

impl HeldText {
    /// Keeps `text` (an upload's text, read in pieces from this very string) under the file's name.
    pub fn uploaded(file: &str, text: JsString) -> HeldText {
        HeldText {
            rest: TraceText::new(file, String::new()),
            text: SendWrapper::new(text),
        }
    }

    /// Moves a text read whole (a sample's, an import's) out of the module's memory.
    pub fn moved(mut text: TraceText) -> HeldText {
        let js = JsString::from(std::mem::take(&mut text.text));
        HeldText {
            rest: text,
            text: SendWrapper::new(js),
        }
    }

    /// The same text with another header line set on it (a tool's summary set beside the trace).
    pub fn with_header(&self, line: String) -> HeldText {
        HeldText {
            rest: TraceText {
                header: Some(line),
                ..self.rest.clone()
            },
            text: self.text.clone(),
        }
    }

    /// The text whole, as the core's `TraceText` (a copy into the module's memory: for the
    /// lessons page and a summary set beside the trace, on demand).
    pub fn whole(&self) -> TraceText {
        TraceText {
            text: String::from(&*self.text),
            ..self.rest.clone()
        }
    }
}

/// The text's pieces, copied into the module's memory one at a time. Each ends with a line,
/// unless a line is longer than two pieces (it is then no record, and refused): that one is cut
/// on a character's boundary, so no piece holds much more than `PIECE`.
pub fn pieces(text: &JsString) -> impl Iterator<Item = String> + '_ {
    let len = text.length();
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < len).then(|| {
            let mut end = match text.index_of("\n", (at + PIECE).min(len) as i32) {
                -1 => len,
                i => i as u32 + 1,
            };
            if end - at > 2 * PIECE {
                end = at + PIECE;
                // Not between the two halves of a surrogate pair.
                if (0xD800..0xDC00).contains(&(text.char_code_at(end - 1) as u32)) {
                    end -= 1;
                }
            }
            let piece = String::from(text.slice(at, end));
            at = end;
            piece
        })
    })
}

/// The trace in `text` (named `file` in errors), read piece by piece: the same trace, errors and
/// warnings as `tracelab_core::parse::parse_trace` on the whole text.
pub fn read_trace(file: &str, text: &JsString) -> Result<Trace, ParseError> {
    let mut reader = TraceReader::new(file);
    // Room for every attempt at once, guessed from samples at the start, the middle and the end
    // (a run's first records can be shorter than its later ones), or from the whole of a short text.
    let len = text.length();
    let (sample, share) = if len > 3 * SAMPLE {
        let at = |from: u32| String::from(text.slice(from, from + SAMPLE));
        (
            [at(0), at(len / 2), at(len - SAMPLE)].join("\n"),
            f64::from(3 * SAMPLE) / f64::from(len),
        )
    } else {
        (String::from(text), 1.0)
    };
    reader.reserve_by_sample(&sample, share);
    drop(sample);
    for piece in pieces(text) {
        reader.feed(&piece)?;
    }
    reader.finish()
}
