//! The outside world of the lab's state: the permalink (URL query) a teacher shares, and the
//! learner's own settings and notes in localStorage ("saved only in this browser").
//!
//! Reading is forgiving by design: a corrupt stored value or a mangled link never stops the page
//! from loading; it is skipped and the learner is told.

use tracelab_core::settings::PAIR_KEYS;
use tracelab_core::Lang;
use tracelab_web::storage;
use web_sys::UrlSearchParams;

/// Storage key; the version lets a future format ignore old values instead of misreading them.
pub const STORAGE_KEY: &str = "tracelab.v1.state";
/// The key of the lab inside the lessons page's frame: lesson steps set its threshold and
/// denominators, and must never overwrite the settings the learner saved in the lab itself.
pub const FRAME_STORAGE_KEY: &str = "tracelab.v1.lesson-frame";

/// Whether this lab runs inside another page's frame (the lessons page).
pub fn in_frame() -> bool {
    web_sys::window()
        .and_then(|w| w.frame_element().ok().flatten())
        .is_some()
}

fn storage_key() -> &'static str {
    if in_frame() {
        FRAME_STORAGE_KEY
    } else {
        STORAGE_KEY
    }
}

/// What a permalink or the stored state asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Requested {
    pub sample: Option<String>,
    /// The link was made with an uploaded file of this name (its data is not in the link).
    pub uploaded: Option<String>,
    pub row: Option<usize>,
    pub lang: Option<Lang>,
    pub settings: Vec<(String, String)>,
    pub notes: Option<String>,
    /// `key=value` pairs of a link that could not be read, to tell the learner.
    pub ignored: Vec<String>,
}

fn from_params(params: &UrlSearchParams) -> Requested {
    let get = |k: &str| params.get(k).filter(|v| !v.is_empty());
    let mut ignored = Vec::new();
    let sample = get("sample");
    if let Some(bad) = sample.as_ref().filter(|s| !is_sample_name(s)) {
        ignored.push(format!("sample={bad}"));
    }
    let row = get("row");
    let row_number = row
        .as_ref()
        .and_then(|r| r.parse::<usize>().ok().filter(|r| *r >= 1));
    if let (Some(bad), None) = (&row, row_number) {
        ignored.push(format!("row={bad}"));
    }
    Requested {
        ignored,
        sample: sample.filter(|s| is_sample_name(s)),
        uploaded: get("uploaded"),
        row: row_number.map(|r| r - 1),
        lang: get("lang").map(|l| Lang::from_tag(&l)),
        settings: PAIR_KEYS
            .iter()
            .filter_map(|k| get(k).map(|v| (k.to_string(), v)))
            .collect(),
        notes: None,
    }
}

/// Only the lab's own sample files may be fetched from a link.
pub fn is_sample_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 80
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        && !name.starts_with('.')
}

/// The state in the page's URL, if any.
pub fn read_url() -> Requested {
    parse_query(
        &web_sys::window()
            .and_then(|w| w.location().search().ok())
            .unwrap_or_default(),
    )
}

/// The state a permalink's query (`?sample=…&t=0.5`) asks for.
pub fn parse_query(search: &str) -> Requested {
    match UrlSearchParams::new_with_str(search) {
        Ok(params) => from_params(&params),
        Err(_) => Requested::default(),
    }
}

/// Writes the state into the URL without adding a history entry per keystroke.
pub fn write_url(
    origin_sample: Option<&str>,
    uploaded: Option<&str>,
    row: usize,
    lang: Lang,
    settings: &[(&'static str, String)],
) {
    let Ok(params) = UrlSearchParams::new() else {
        return;
    };
    if let Some(s) = origin_sample {
        params.append("sample", s);
    }
    if let Some(u) = uploaded {
        params.append("uploaded", u);
    }
    for (k, v) in settings {
        params.append(k, v);
    }
    params.append("row", &(row + 1).to_string());
    params.append("lang", lang.code());
    let query: String = params.to_string().into();
    if let Some(window) = web_sys::window() {
        if let Ok(history) = window.history() {
            let path = window.location().pathname().unwrap_or_else(|_| "/".into());
            let _ = history.replace_state_with_url(
                &wasm_bindgen::JsValue::NULL,
                "",
                Some(&format!("{path}?{query}")),
            );
        }
    }
}

/// What this browser saved last time. `Err` carries a message when the value was unreadable
/// (it is then removed so it cannot break the next visit either).
pub fn read_stored() -> Result<Option<Requested>, String> {
    let Some(store) = storage() else {
        return Ok(None);
    };
    let Ok(Some(raw)) = store.get_item(storage_key()) else {
        return Ok(None);
    };
    match parse_stored(&raw) {
        Some(r) => Ok(Some(r)),
        None => {
            let _ = store.remove_item(storage_key());
            Err(format!(
                "The settings saved in this browser could not be read and were reset ({} bytes).",
                raw.len()
            ))
        }
    }
}

fn parse_stored(raw: &str) -> Option<Requested> {
    let v: serde_json::Value = serde_json::from_str(raw).ok()?;
    let obj = v.as_object()?;
    let settings = obj
        .get("settings")?
        .as_object()?
        .iter()
        .filter(|(k, _)| PAIR_KEYS.contains(&k.as_str()))
        .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect();
    Some(Requested {
        sample: obj
            .get("sample")
            .and_then(|s| s.as_str())
            .filter(|s| is_sample_name(s))
            .map(str::to_string),
        uploaded: None,
        row: None,
        lang: obj.get("lang").and_then(|s| s.as_str()).map(Lang::from_tag),
        settings,
        notes: obj
            .get("notes")
            .and_then(|s| s.as_str())
            .map(str::to_string),
        ignored: Vec::new(),
    })
}

/// What this browser keeps (`parse_stored` reads it back).
#[derive(serde::Serialize)]
struct Stored<'a> {
    sample: Option<&'a str>,
    lang: &'a str,
    settings: std::collections::BTreeMap<&'static str, &'a str>,
    notes: &'a str,
}

/// Saves the learner's choices in this browser only.
pub fn write_stored(
    sample: Option<&str>,
    lang: Lang,
    settings: &[(&'static str, String)],
    notes: &str,
) {
    let Some(store) = storage() else { return };
    let stored = Stored {
        sample,
        lang: lang.code(),
        settings: settings.iter().map(|(k, v)| (*k, v.as_str())).collect(),
        notes,
    };
    if let Ok(text) = serde_json::to_string(&stored) {
        let _ = store.set_item(storage_key(), &text);
    }
}
