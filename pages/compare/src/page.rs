//! The page's state, shared by its parts: the two runs as loaded (a sample or a file each),
//! the learner's choices of how both are judged (the core's permalink pairs), what the core's
//! comparison of them gave, the language, and the last error.

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

/// The core's permalink keys ([`tracelab_core::settings::PAIR_KEYS`]) the page takes: everything
/// that judges an attempt. Window, cost and currency are not among them: they stay each run's
/// own (`compare::judge_alike`).
pub const CHOICE_KEYS: [&str; 10] = ["t", "cmp", "pm", "p", "fd", "mt", "wu", "ft", "qr", "lf"];

#[derive(Clone, Copy)]
pub struct Page {
    pub lang: RwSignal<Lang>,
    /// How both runs are judged, as the learner chose it (or the link said): core permalink
    /// pairs in [`CHOICE_KEYS`] order, put on top of the base's own settings. A key not here
    /// is the base's.
    pub choices: RwSignal<Vec<(String, String)>>,
    /// Why the threshold typed last could not be used (the core's words).
    pub typed_error: RwSignal<Option<tracelab_core::Text>>,
    pub base: RwSignal<Option<Loaded>>,
    pub new: RwSignal<Option<Loaded>>,
    pub error: RwSignal<Option<String>>,
    /// The link's values the core refused (`t=-1`), named once: a later load does not clear it.
    pub link_ignored: RwSignal<Option<String>>,
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
    let text = text
        .as_string()
        .ok_or_else(|| format!("{name}: not text"))?;
    let imported = import::load_any(&name, &text).map_err(|e| e.to_string())?;
    let first = imported
        .traces
        .into_iter()
        .next()
        .ok_or_else(|| format!("{name}: no trace in this file"))?;
    Ok(Loaded {
        name,
        trace: first.trace,
    })
}

impl Page {
    /// Sets the choice `key` (`None`: back to the base's own), keeping [`CHOICE_KEYS`] order.
    pub(crate) fn choose(self, key: &str, value: Option<String>) {
        self.choices.update(|c| {
            c.retain(|(k, _)| k != key);
            if let Some(v) = value {
                c.push((key.to_string(), v));
            }
            c.sort_by_key(|(k, _)| CHOICE_KEYS.iter().position(|x| x == k));
        });
    }

    /// The settings both runs are judged with: the base's own, then the choices.
    pub(crate) fn judged(self, base: &Trace) -> Settings {
        let mut s = Settings::from_header(&base.header);
        self.choices
            .with(|c| s.apply_pairs(c.iter().map(|(k, v)| (k.as_str(), v.as_str()))));
        s
    }

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
