//! The page's address, storage and language, and the panic hook: what every page reads of the
//! browser before it draws anything.

use tracelab_core::Lang;

/// A panic message in the browser console, not just "unreachable": a learner can report it.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into())
    }));
}

/// The value of `key` in the page's query string (`?key=value`), if it is there and not empty.
pub fn query(key: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    web_sys::UrlSearchParams::new_with_str(&search)
        .ok()?
        .get(key)
        .filter(|v| !v.is_empty())
}

/// Writes `pairs` as the page's query string without adding a history entry (a state change is
/// not a navigation), so a reload or a shared link opens the page as it is now.
pub fn replace_query(pairs: &[(&str, String)]) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(params) = web_sys::UrlSearchParams::new() else {
        return;
    };
    for (k, v) in pairs {
        params.append(k, v);
    }
    let path = window.location().pathname().unwrap_or_default();
    let query: String = params.to_string().into();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}?{query}")),
        );
    }
}

/// Sets `key=value` in the page's query string, keeping its other parameters (`?teacher=1`), without
/// adding a history entry: a reload or a shared link opens the page on the same choice.
pub fn set_query(key: &str, value: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let search = window.location().search().unwrap_or_default();
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return;
    };
    params.set(key, value);
    let path = window.location().pathname().unwrap_or_default();
    let query: String = params.to_string().into();
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(
            &wasm_bindgen::JsValue::NULL,
            "",
            Some(&format!("{path}?{query}")),
        );
    }
}

/// This browser's localStorage, when it has one the page may use.
pub fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The browser's language (zh-* → Chinese, anything else → English).
pub fn browser_lang() -> Lang {
    web_sys::window()
        .and_then(|w| w.navigator().language())
        .map(|tag| Lang::from_tag(&tag))
        .unwrap_or_default()
}

/// The page's language: the link's `?lang=`, else the browser's.
pub fn page_lang() -> Lang {
    query("lang")
        .map(|l| Lang::from_tag(&l))
        .unwrap_or_else(browser_lang)
}
