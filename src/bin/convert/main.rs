//! The lab's second bundle, loaded only when needed (`convert/convert.js`, built from
//! `convert.html`): the peer tools' importers and the download writers. The lab's first
//! download then carries neither; it calls these through `src/convert.rs`.

use tracelab_core::export::ExportRequest;
use tracelab_core::import::handoff;
use wasm_bindgen::prelude::*;

/// An uploaded file that is not one of our formats, imported (or refused, with what to upload
/// instead); the result is read back by `handoff::receive`.
#[wasm_bindgen]
pub fn import_upload(name: &str, text: &str) -> Result<String, String> {
    handoff::hand_over(name, text).map_err(|e| e.to_string())
}

/// A download's text, from a serialised [`ExportRequest`].
#[wasm_bindgen]
pub fn export_file(request: &str) -> Result<String, String> {
    let request: ExportRequest =
        serde_json::from_str(request).map_err(|e| format!("the download request is unreadable ({e}); reload the page"))?;
    Ok(request.write())
}

fn main() {
    std::panic::set_hook(Box::new(|info| web_sys::console::error_1(&info.to_string().into())));
}
