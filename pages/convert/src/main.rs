//! The lab's second bundle, loaded only when needed (`convert/convert.js`, built from
//! `pages/convert/index.html`): the peer tools' importers, their figures set beside the lesson's, and the
//! download writers. The lab's first download then carries none of them; it calls these through
//! `src/convert.rs`, with strings (JSON) both ways.

use std::cell::RefCell;

use tracelab_core::export::ExportRequest;
use tracelab_peers::{handoff, table};
use tracelab_core::{Lang, Settings, Trace};
use wasm_bindgen::prelude::*;

thread_local! {
    /// The open imported trace the peer panel was last asked about, by the lab's key for it:
    /// a threshold edit then sends only the settings.
    static PEER_TRACE: RefCell<Option<(String, Trace)>> = const { RefCell::new(None) };
}

fn read<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T, String> {
    serde_json::from_str(json).map_err(|e| format!("the lab's {what} is unreadable ({e}); reload the page"))
}

/// A trace from the lab, its peer figures checked: the lab does not read them itself (see
/// `tracelab_core::trace::peer::PeerFigures`), so a bad one in an uploaded trace is named here.
fn read_trace(json: &str) -> Result<Trace, String> {
    let trace: Trace = read("trace", json)?;
    trace.check_peer_figures().map_err(|e| e.to_string())?;
    Ok(trace)
}

/// An uploaded file that is not one of our formats, imported (or refused, with what to upload
/// instead); the lab reads the answer with `handoff::receive`.
#[wasm_bindgen]
pub fn import_upload(name: &str, text: &str) -> Result<String, String> {
    handoff::hand_over(name, text).map_err(|e| e.to_string())
}

/// A tool's summary file set beside the open trace (`trace`: JSON, attempts included); the
/// answer is the trace's new header line.
#[wasm_bindgen]
pub fn attach_summary(name: &str, text: &str, trace: &str) -> Result<String, String> {
    handoff::attach_handed(name, text, read_trace(trace)?).map_err(|e| e.to_string())
}

/// The peer panel of the imported trace known by `key` (sent as JSON in `trace` the first time,
/// empty after), under `settings`, written in `lang`.
#[wasm_bindgen]
pub fn peer_table(key: &str, trace: &str, settings: &str, lang: &str) -> Result<String, String> {
    if !trace.is_empty() {
        let trace = read_trace(trace)?;
        PEER_TRACE.with(|p| *p.borrow_mut() = Some((key.to_string(), trace)));
    }
    let settings: Settings = read("settings", settings)?;
    let lang: Lang = read("language", lang)?;
    PEER_TRACE.with(|p| match &*p.borrow() {
        Some((k, trace)) if k == key => serde_json::to_string(&table::peer_table(trace, &settings, lang)).map_err(|e| e.to_string()),
        _ => Err("the peer panel lost its trace; reload the page".to_string()),
    })
}

/// A download's text, from a serialised [`ExportRequest`].
#[wasm_bindgen]
pub fn export_file(request: &str) -> Result<String, String> {
    let request: ExportRequest = read("download request", request)?;
    request.trace.check_peer_figures().map_err(|e| e.to_string())?;
    Ok(request.write())
}

fn main() {
    tracelab_web::install_panic_hook();
}
