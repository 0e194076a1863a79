//! Moving bytes into the core: fetching a built-in sample, reading an uploaded file. Parsing is
//! the core's; this module only fetches and reads.

use tracelab_core::handoff::{self, ImportedTrace, Received, TraceText};
use tracelab_core::Trace;
use wasm_bindgen::JsCast;

use tracelab_web::js_text::HeldText;

/// Fetches and parses a sample shipped with the lab (under `samples/`; the list is
/// `tracelab_web::SAMPLES`), with the text it was read from.
pub async fn fetch_sample(name: &str) -> Result<(Trace, HeldText), String> {
    let text = TraceText::new(
        name,
        tracelab_web::fetch_text(&format!("samples/{name}")).await?,
    );
    Ok((
        text.read().map_err(|e| e.to_string())?,
        HeldText::moved(text),
    ))
}

/// What an upload turned out to be.
pub enum Upload {
    /// One or more traces (a guidellm file holds one per benchmark), each with its text.
    Traces(String, Vec<(ImportedTrace, HeldText)>),
    /// A peer tool's aggregate file (its text), to set beside the trace of the same run.
    Summary(String, String),
}

/// How much of a file's start, at least, decides whether it is one of our formats: its first
/// line (a trace's header, a CSV's column names) and the first kilobyte's bytes are in it.
const HEAD_UNITS: u32 = 1 << 20;

/// Reads a file the learner chose or dropped: our formats first, then the peers' (detected
/// from the content, never from the name). A trace of ours stays the JavaScript string the
/// browser read it into and is parsed from there in pieces ([`HeldText`]).
pub async fn read_upload(file: web_sys::File) -> Result<Upload, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
    let text: js_sys::JsString = text.dyn_into().map_err(|_| format!("{name}: not text"))?;
    // The whole first line, however long (one peer tool writes its whole file on one line), and
    // up to HEAD_UNITS.
    let first_line_end = match text.index_of("\n", 0) {
        -1 => text.length(),
        i => i as u32 + 1,
    };
    let head = String::from(text.slice(0, text.length().min(HEAD_UNITS).max(first_line_end)));
    // Our own formats are read here; any other file goes to the importers' bundle, fetched the
    // first time one is needed.
    if handoff::is_ours(&head) {
        drop(head);
        let trace = tracelab_web::js_text::read_trace(&name, &text).map_err(|e| e.to_string())?;
        return Ok(Upload::Traces(
            name.clone(),
            vec![(
                ImportedTrace {
                    label: String::new(),
                    trace,
                },
                HeldText::uploaded(&name, text),
            )],
        ));
    }
    let text = String::from(text);
    let handed = crate::convert::call(crate::convert::Call::ImportUpload, &[&name, &text]).await?;
    match handoff::receive(&name, &handed).map_err(|e| e.to_string())? {
        Received::Summary => Ok(Upload::Summary(name, text)),
        Received::Traces(traces) => Ok(Upload::Traces(
            name,
            traces
                .into_iter()
                .map(|(t, text)| (t, HeldText::moved(text)))
                .collect(),
        )),
    }
}

/// The first file of a file input's selection.
pub fn first_file(input: &web_sys::EventTarget) -> Option<web_sys::File> {
    input
        .dyn_ref::<web_sys::HtmlInputElement>()?
        .files()?
        .get(0)
}
