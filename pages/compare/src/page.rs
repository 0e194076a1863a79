//! The page's state, shared by its parts: the two runs as loaded (a sample or a file each),
//! what the core's comparison of them gave, the language, and the last error.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::compare::Report;
use tracelab_core::{parse::parse_trace, Lang, Settings, Trace};
use tracelab_peers::import;
use tracelab_web::{fetch_text, is_sample};

/// One loaded trace and where it came from.
#[derive(Clone, PartialEq)]
pub struct Loaded {
    pub name: String,
    pub trace: Trace,
}

/// Everything the views show, computed once per pair of traces by the core.
#[derive(Clone, PartialEq)]
pub struct Compared {
    pub report: Report,
    /// Each run's five checks before it counts as a baseline (the core's).
    pub baselines: Vec<tracelab_core::baseline::RunBaseline>,
    /// Each run's TTFT by first send and repeat (when its attempts say which they were).
    pub reuse: Vec<Option<tracelab_core::reuse::ReuseSplit>>,
    pub base_ttft_ms: Vec<f64>,
    pub new_ttft_ms: Vec<f64>,
    pub settings: Settings,
}

#[derive(Clone, Copy)]
pub struct Page {
    pub lang: RwSignal<Lang>,
    /// Which token ends TTFT in both runs (the course's first answer token by default).
    pub first_token: RwSignal<tracelab_core::FirstToken>,
    pub base: RwSignal<Option<Loaded>>,
    pub new: RwSignal<Option<Loaded>>,
    pub error: RwSignal<Option<String>>,
}

async fn fetch_sample(name: &str) -> Result<Trace, String> {
    if !is_sample(name) {
        return Err(format!("{name}: not one of the lab's samples"));
    }
    let text = fetch_text(&format!("../samples/{name}")).await?;
    parse_trace(name, &text).map_err(|e| e.to_string())
}

async fn read_file(file: web_sys::File) -> Result<Loaded, String> {
    let name = file.name();
    let text = wasm_bindgen_futures::JsFuture::from(file.text())
        .await
        .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
    let text = text.as_string().ok_or_else(|| format!("{name}: not text"))?;
    let imported = import::load_any(&name, &text).map_err(|e| e.to_string())?;
    let first = imported.traces.into_iter().next().ok_or_else(|| format!("{name}: no trace in this file"))?;
    Ok(Loaded { name, trace: first.trace })
}

impl Page {
    pub(crate) fn load_sample(self, slot: RwSignal<Option<Loaded>>, name: String) {
        spawn_local(async move {
            match fetch_sample(&name).await {
                Ok(trace) => {
                    self.error.set(None);
                    slot.set(Some(Loaded { name, trace }));
                }
                // A bad load leaves what was loaded before.
                Err(e) => self.error.set(Some(e)),
            }
        });
    }

    pub(crate) fn load_file(self, slot: RwSignal<Option<Loaded>>, file: web_sys::File) {
        spawn_local(async move {
            match read_file(file).await {
                Ok(loaded) => {
                    self.error.set(None);
                    slot.set(Some(loaded));
                }
                Err(e) => self.error.set(Some(e)),
            }
        });
    }
}
