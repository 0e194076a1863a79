//! The bridge to the lab's second bundle (`pages/convert`): the peer tools' importers, the
//! download writers and the run checks, fetched the first time the lab needs them, so the first
//! download of the lab carries none of them. Loaded once per page; a failed load is an error the
//! learner sees (the open trace and their work stay), and the next attempt tries again. The
//! bundle's functions are named by `tracelab_web::bridge::Call`.

use std::cell::RefCell;
use std::sync::{Arc, Weak};

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

pub use tracelab_web::bridge::Call;
use tracelab_web::bridge::NEED_TRACE;

use tracelab_core::handoff::WorkingText;
use tracelab_core::whatif::WhatIf;
use tracelab_core::{Attempt, Trace};
use tracelab_web::js_text::HeldText;

/// Where trunk puts the bundle (see `pages/convert/index.html` and `cargo xtask build`), relative to the lab.
const MODULE: &str = "convert/convert.js";

thread_local! {
    /// The bundle as it loads (or has loaded): one promise, so calls made while it loads wait
    /// for the same instance instead of starting a second one.
    static LOADING: RefCell<Option<Promise>> = const { RefCell::new(None) };
    /// The key of the open trace the bundle holds (or is being sent), so the trace is
    /// serialised and sent once per trace and set of what-if edits, not on every edit.
    static HELD: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The lab's key for the open trace with its what-if edits applied (a new trace or a new set of
/// edits is a new key): a generation counted up each time the pair of its header and its working
/// attempts changes. The pair is remembered by weak references, which keep both allocations
/// reserved, so a later trace can never come back at the same addresses and pass for this one
/// (an address alone can be handed out again once the old trace is dropped).
pub fn key(trace: &Arc<Trace>, attempts: &Arc<Vec<Attempt>>) -> String {
    /// The last pair keyed and its generation.
    type Keyed = (Weak<Trace>, Weak<Vec<Attempt>>, u64);
    thread_local! {
        static LAST: RefCell<Option<Keyed>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match last.as_ref() {
            // The weak references hold the allocations, so equal addresses are the same pair.
            Some((t, a, generation))
                if t.as_ptr() == Arc::as_ptr(trace) && a.as_ptr() == Arc::as_ptr(attempts) =>
            {
                format!("trace-{generation}")
            }
            _ => {
                let next = last.as_ref().map_or(1, |(_, _, g)| g + 1);
                *last = Some((Arc::downgrade(trace), Arc::downgrade(attempts), next));
                format!("trace-{next}")
            }
        }
    })
}

/// Calls one of the bundle's held-trace functions ([`Call::on_held_trace`]) on the open trace
/// known by `key` ([`key`]): `(key, text or "", rest or "", args…)`, the trace as its text and
/// the rest of its `WorkingText` (the what-if edits, the importer's warnings: `working`, taken
/// only when sent). The text goes as the JavaScript string the lab keeps it in ([`HeldText`]),
/// without a copy; the bundle reads it in pieces, so neither module's memory ever holds it whole
/// (at 1,000,000 attempts, 225 MB each). The trace is sent only when the bundle is not known to
/// hold it, and again when the bundle says it does not ([`NEED_TRACE`]).
pub async fn call_on_trace(
    function: Call,
    key: String,
    working: impl FnOnce() -> (Arc<HeldText>, WhatIf),
    args: &[&str],
) -> Result<String, String> {
    debug_assert!(
        function.on_held_trace(),
        "{function:?} does not work on the held trace"
    );
    let held = HELD.with(|h| h.borrow().as_deref() == Some(key.as_str()));
    let with = |text: JsValue, rest: &str| -> Vec<JsValue> {
        [JsValue::from_str(&key), text, JsValue::from_str(rest)]
            .into_iter()
            .chain(args.iter().map(|a| JsValue::from_str(a)))
            .collect()
    };
    if held {
        let answer = call_with(function, with(JsValue::from_str(""), "")).await;
        if !matches!(&answer, Err(e) if e == NEED_TRACE) {
            return answer;
        }
    }
    HELD.with(|h| *h.borrow_mut() = Some(key.clone()));
    let (text, whatif) = working();
    let rest = WorkingText::rest_json(&text.rest, &whatif).map_err(|e| e.to_string())?;
    let answer = call_with(function, with(JsValue::from(&*text.text), &rest)).await;
    if answer.is_err() {
        HELD.with(|h| h.borrow_mut().take_if(|k| *k == key));
    }
    answer
}

/// Calls one of the bundle's functions with string arguments; its error (a string) comes back
/// as the error.
pub async fn call(function: Call, args: &[&str]) -> Result<String, String> {
    call_with(
        function,
        args.iter().map(|a| JsValue::from_str(a)).collect(),
    )
    .await
}

async fn call_with(function: Call, args: Vec<JsValue>) -> Result<String, String> {
    let function = function.name();
    let module = module().await?;
    let f: Function = Reflect::get(&module, &function.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| format!("{MODULE} has no function `{function}`: reload the page"))?;
    let args: js_sys::Array = args.into_iter().collect();
    match f.apply(&JsValue::NULL, &args) {
        Ok(v) => v
            .as_string()
            .ok_or_else(|| format!("{MODULE}: `{function}` returned no text")),
        Err(e) => Err(e.as_string().unwrap_or_else(|| format!("{e:?}"))),
    }
}

async fn module() -> Result<JsValue, String> {
    let failed = |e: JsValue| {
        let why = e
            .as_string()
            .or_else(|| js_sys::Error::from(e.clone()).message().as_string())
            .unwrap_or_default();
        format!("could not load the importers and downloads ({MODULE}): {why}. Check the connection and try again. / 无法加载导入与下载模块，请检查网络后重试。")
    };
    let promise = match LOADING.with(|p| p.borrow().clone()) {
        Some(p) => p,
        None => {
            let document = web_sys::window()
                .and_then(|w| w.document())
                .ok_or("no document")?;
            let base = document.base_uri().ok().flatten().unwrap_or_default();
            let url = web_sys::Url::new_with_base(MODULE, &base)
                .map_err(failed)?
                .href();
            // A dynamic `import()`, then wasm-bindgen's default export, which instantiates the
            // module (its .wasm beside the .js): the one way to load a module on demand.
            let load = Function::new_with_args(
                "url",
                "return import(url).then(m => m.default().then(() => m))",
            );
            let p: Promise = load
                .call1(&JsValue::NULL, &url.into())
                .map_err(failed)?
                .unchecked_into();
            LOADING.with(|l| *l.borrow_mut() = Some(p.clone()));
            p
        }
    };
    JsFuture::from(promise).await.map_err(|e| {
        // The next call tries again (a dropped connection is not the end of the session).
        LOADING.with(|l| *l.borrow_mut() = None);
        failed(e)
    })
}
