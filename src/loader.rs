//! Moving bytes into the core: fetching a built-in sample, reading an uploaded file. Parsing is
//! the core's; this module only fetches and reads.

use tracelab_core::handoff::{self, ImportedTrace, Received, TraceText};
use tracelab_core::Trace;
use wasm_bindgen::JsCast;

/// Fetches and parses a sample shipped with the lab (under `samples/`; the list is
/// `tracelab_web::SAMPLES`), with the text it was read from.
pub async fn fetch_sample(name: &str) -> Result<(Trace, TraceText), String> {
    let text = TraceText::new(name, tracelab_web::fetch_text(&format!("samples/{name}")).await?);
    Ok((text.read().map_err(|e| e.to_string())?, text))
}

/// What an upload turned out to be.
pub enum Upload {
    /// One or more traces (a guidellm file holds one per benchmark), each with its text.
    Traces(String, Vec<(ImportedTrace, TraceText)>),
    /// A peer tool's aggregate file (its text), to set beside the trace of the same run.
    Summary(String, String),
}

/// Reads a file the learner chose or dropped: our formats first, then the peers' (detected
/// from the content, never from the name).
pub async fn read_upload(file: web_sys::File) -> Result<Upload, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
    let text = text.as_string().ok_or_else(|| format!("{name}: not text"))?;
    // Our own formats are read here; any other file goes to the importers' bundle, fetched the
    // first time one is needed.
    if handoff::is_ours(&text) {
        let text = TraceText::new(&name, text);
        let trace = text.read().map_err(|e| e.to_string())?;
        return Ok(Upload::Traces(name, vec![(ImportedTrace { label: String::new(), trace }, text)]));
    }
    let handed = crate::convert::call(crate::convert::Call::ImportUpload, &[&name, &text]).await?;
    match handoff::receive(&name, &handed).map_err(|e| e.to_string())? {
        Received::Summary => Ok(Upload::Summary(name, text)),
        Received::Traces(traces) => Ok(Upload::Traces(name, traces)),
    }
}

/// The first file of a file input's selection.
pub fn first_file(input: &web_sys::EventTarget) -> Option<web_sys::File> {
    input.dyn_ref::<web_sys::HtmlInputElement>()?.files()?.get(0)
}
