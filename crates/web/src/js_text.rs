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
        HeldText { rest: TraceText::new(file, String::new()), text: SendWrapper::new(text) }
    }

    /// Moves a text read whole (a sample's, an import's) out of the module's memory.
    pub fn moved(mut text: TraceText) -> HeldText {
        let js = JsString::from(std::mem::take(&mut text.text));
        HeldText { rest: text, text: SendWrapper::new(js) }
    }

    /// The same text with another header line set on it (a tool's summary set beside the trace).
    pub fn with_header(&self, line: String) -> HeldText {
        HeldText { rest: TraceText { header: Some(line), ..self.rest.clone() }, text: self.text.clone() }
    }

    /// The text whole, as the core's `TraceText` (a copy into the module's memory: for the
    /// lessons page and a summary set beside the trace, on demand).
    pub fn whole(&self) -> TraceText {
        TraceText { text: String::from(&*self.text), ..self.rest.clone() }
    }
}

/// The text's pieces with the share of the whole text each is, every piece ending with a line
/// (so a cut never splits a line or a character), copied into the module's memory one at a time.
pub fn pieces(text: &JsString) -> impl Iterator<Item = (String, f64)> + '_ {
    let len = text.length();
    let mut at = 0;
    std::iter::from_fn(move || {
        (at < len).then(|| {
            let end = match text.index_of("\n", (at + PIECE).min(len) as i32) {
                -1 => len,
                i => i as u32 + 1,
            };
            let piece = String::from(text.slice(at, end));
            let share = f64::from(end - at) / f64::from(len);
            at = end;
            (piece, share)
        })
    })
}

/// The trace in `text` (named `file` in errors), read piece by piece: the same trace, errors and
/// warnings as `tracelab_core::parse::parse_trace` on the whole text.
pub fn read_trace(file: &str, text: &JsString) -> Result<Trace, ParseError> {
    let mut reader = TraceReader::new(file);
    let mut pieces = pieces(text);
    if let Some((first, share)) = pieces.next() {
        // Room for every attempt at once, guessed from the first piece.
        reader.reserve_by_sample(&first, share);
        reader.feed(&first)?;
    }
    for (piece, _) in pieces {
        reader.feed(&piece)?;
    }
    reader.finish()
}
