//! The bridge to the lab's lazily loaded bundles: `pages/convert` (the peer tools' importers and
//! the download writers) and `pages/charts` (the canvas views' painter), each fetched the first
//! time a learner needs it, so the first download of the lab carries neither. Each is loaded once
//! per page; a failed load is an error the learner sees (the open trace and their work stay), and
//! the next attempt tries again.

use std::cell::RefCell;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// A bundle the lab loads on demand: where trunk puts it (see `pages/NAME/index.html` and
/// `cargo xtask build`), relative to the lab, and what it holds, for the error if it cannot load.
pub struct Bundle {
    pub module: &'static str,
    pub what_en: &'static str,
    pub what_zh: &'static str,
}

/// The importers and download writers.
const CONVERT: Bundle = Bundle { module: "convert/convert.js", what_en: "the importers and downloads", what_zh: "导入与下载模块" };

thread_local! {
    /// Each bundle as it loads (or has loaded): one promise per bundle, so calls made while it
    /// loads wait for the same instance instead of starting a second one.
    static LOADING: RefCell<Vec<(&'static str, Promise)>> = const { RefCell::new(Vec::new()) };
}

/// Calls one of the importers' bundle's functions with string arguments; its error (a string)
/// comes back as the error.
pub async fn call(function: &str, args: &[&str]) -> Result<String, String> {
    let args: Vec<JsValue> = args.iter().map(|a| JsValue::from_str(a)).collect();
    call_in(&CONVERT, function, &args).await
}

/// Calls one of `bundle`'s functions (strings, numbers, typed arrays); its answer is text.
pub async fn call_in(bundle: &Bundle, function: &str, args: &[JsValue]) -> Result<String, String> {
    let module = module(bundle).await?;
    let name = bundle.module;
    let f: Function = Reflect::get(&module, &function.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| format!("{name} has no function `{function}`: reload the page"))?;
    let args: js_sys::Array = args.iter().collect();
    match f.apply(&JsValue::NULL, &args) {
        Ok(v) => v.as_string().ok_or_else(|| format!("{name}: `{function}` returned no text")),
        Err(e) => Err(e.as_string().unwrap_or_else(|| format!("{e:?}"))),
    }
}

async fn module(bundle: &Bundle) -> Result<JsValue, String> {
    let Bundle { module, what_en, what_zh } = *bundle;
    let failed = |e: JsValue| {
        let why = e.as_string().or_else(|| js_sys::Error::from(e.clone()).message().as_string()).unwrap_or_default();
        format!("could not load {what_en} ({module}): {why}. Check the connection and try again. / 无法加载{what_zh}，请检查网络后重试。")
    };
    let promise = match LOADING.with(|p| p.borrow().iter().find(|(m, _)| *m == module).map(|(_, p)| p.clone())) {
        Some(p) => p,
        None => {
            let document = web_sys::window().and_then(|w| w.document()).ok_or("no document")?;
            let base = document.base_uri().ok().flatten().unwrap_or_default();
            let url = web_sys::Url::new_with_base(module, &base).map_err(failed)?.href();
            // A dynamic `import()`, then wasm-bindgen's default export, which instantiates the
            // module (its .wasm beside the .js): the one way to load a module on demand.
            let load = Function::new_with_args("url", "return import(url).then(m => m.default().then(() => m))");
            let p: Promise = load.call1(&JsValue::NULL, &url.into()).map_err(failed)?.unchecked_into();
            LOADING.with(|l| l.borrow_mut().push((module, p.clone())));
            p
        }
    };
    JsFuture::from(promise).await.map_err(|e| {
        // The next call tries again (a dropped connection is not the end of the session).
        LOADING.with(|l| l.borrow_mut().retain(|(m, _)| *m != module));
        failed(e)
    })
}
