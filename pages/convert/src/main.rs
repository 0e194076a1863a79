//! The lab's second bundle, loaded only when needed (`convert/convert.js`, built from
//! `pages/convert/index.html`): the peer tools' importers, their figures set beside the lesson's,
//! the download writers, and the run checks beside the figures (client share, client lag, GPU and
//! engine beside the slow attempts, the first-send/repeat split, the five checks), and the canvas
//! views of a big trace (`canvas.rs`, painted with `plotters` by `paint.rs`: the run in time
//! buckets, the latency heat map, the histogram), counted from the same held trace. The lab's
//! first download then carries none of them; it calls these through `src/convert.rs`, by the names in
//! `tracelab_web::bridge::Call`, with strings (JSON) both ways.

use std::cell::RefCell;

use js_sys::JsString;
use tracelab_core::compare::{Intervals, Readings};
use tracelab_core::export::{write_export, ExportKind};
use tracelab_core::handoff::WorkingText;
use tracelab_core::parse::parse_trace;
use tracelab_core::session::Sessions;
use tracelab_core::{Index, Lang, Metrics, ParseError, Population, Settings, Trace};
use tracelab_peers::{handoff, table};
use tracelab_web::bridge::{RunChecksAnswer, NEED_TRACE};
use tracelab_web::js_text;
use wasm_bindgen::prelude::*;

mod canvas;
mod paint;
mod peer_html;
mod session_html;

/// The open trace (with the learner's what-if edits applied) the lab last sent, by the lab's key
/// for it, so a threshold edit sends only the settings; its index for the last population, and
/// what the canvas views counted from it.
struct Held {
    key: String,
    trace: Trace,
    /// With what its series say that no threshold edit changes (read once, kept with it).
    index: Option<(Population, Index, Readings)>,
    /// What the run checks read that no setting changes (found once, not on every edit).
    facts: tracelab_core::card::RunFacts,
    counted: canvas::Counted,
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

fn read<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T, String> {
    serde_json::from_str(json)
        .map_err(|e| format!("the lab's {what} is unreadable ({e}); reload the page"))
}

/// A trace from the lab: `read` from its text with the reader the lab used, the rest of its
/// `WorkingText` set on it (the learner's what-if edits, an importer's warnings, a summary's
/// header), its peer figures checked: the lab does not read them itself (see
/// `tracelab_core::trace::peer::PeerFigures`), so a bad one in an uploaded trace is named here.
fn read_working(working: &WorkingText, read: Result<Trace, ParseError>) -> Result<Trace, String> {
    let trace = working
        .set_on(read.map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    trace.check_peer_figures().map_err(|e| e.to_string())?;
    Ok(trace)
}

/// [`read_working`] from the whole `WorkingText` as JSON, its text in it.
fn read_trace(json: &str) -> Result<Trace, String> {
    let working: WorkingText = read("trace", json)?;
    read_working(
        &working,
        parse_trace(&working.trace.file, &working.trace.text),
    )
}

/// An uploaded file that is not one of our formats, imported (or refused, with what to upload
/// instead); the lab reads the answer with `handoff::receive`.
#[wasm_bindgen]
pub fn import_upload(name: &str, text: &str) -> Result<String, String> {
    handoff::hand_over(name, text).map_err(|e| e.to_string())
}

/// A tool's summary file set beside the open trace (`trace`: its text, `WorkingText` JSON); the
/// answer is the trace's new header line.
#[wasm_bindgen]
pub fn attach_summary(name: &str, text: &str, trace: &str) -> Result<String, String> {
    handoff::attach_handed(name, text, read_trace(trace)?).map_err(|e| e.to_string())
}

/// Keeps the trace (`text`, its text as the JavaScript string the lab keeps it in, read here in
/// pieces so this module's memory never holds it whole, and `rest`, the rest of its
/// `WorkingText` as JSON: `WorkingText::rest_json`) as the held trace of `key`; an empty `rest`
/// means the lab believes the bundle holds it already, and [`NEED_TRACE`] says it does not.
fn hold(key: &str, text: JsString, rest: &str) -> Result<(), String> {
    if !rest.is_empty() {
        let working: WorkingText = read("trace", rest)?;
        let trace = read_working(&working, js_text::read_trace(&working.trace.file, &text))?;
        let facts = tracelab_core::card::RunFacts::of(&trace);
        HELD.with(|h| {
            *h.borrow_mut() = Some(Held {
                key: key.to_string(),
                trace,
                index: None,
                facts,
                counted: canvas::Counted::default(),
            })
        });
        return Ok(());
    }
    match HELD.with(|h| h.borrow().as_ref().map(|h| h.key == key)) {
        Some(true) => Ok(()),
        _ => Err(NEED_TRACE.to_string()),
    }
}

/// [`hold`]s the trace of `key`, then answers with `f` on it: every held-trace call's frame.
fn on_held(
    key: &str,
    text: JsString,
    rest: &str,
    f: impl FnOnce(&mut Held) -> Result<String, String>,
) -> Result<String, String> {
    hold(key, text, rest)?;
    HELD.with(|h| f(h.borrow_mut().as_mut().ok_or(NEED_TRACE)?))
}

/// The peer panel's table of the imported trace known by `key` (sent in `text` and `rest` the
/// first time, both empty after), under `settings`, written in `lang`, as HTML (`peer_html`): the lab
/// puts it in place as it is, so its first download carries neither the table's reader nor
/// its markup.
#[wasm_bindgen]
pub fn peer_table(
    key: &str,
    text: JsString,
    rest: &str,
    settings: &str,
    lang: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        let settings: Settings = read("settings", settings)?;
        let lang: Lang = read("language", lang)?;
        Ok(peer_html::table(
            &table::peer_table(&held.trace, &settings, lang),
            lang,
        ))
    })
}

/// The card's lines about the run itself (`tracelab_core::card::run_checks`) for the trace known
/// by `key` (as for [`peer_table`]), under `settings`, in `lang`, and its figures by session
/// (`tracelab_core::session`): a `RunChecksAnswer` as JSON. The
/// figures they weigh against are the core's, recomputed here from the same attempts and
/// settings as the lab's (the index kept while the population stays).
#[wasm_bindgen]
pub fn run_checks(
    key: &str,
    text: JsString,
    rest: &str,
    settings: &str,
    lang: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        let settings: Settings = read("settings", settings)?;
        let lang: Lang = read("language", lang)?;
        let population = settings.population;
        if held.index.as_ref().is_none_or(|(p, _, _)| *p != population) {
            held.index = Some((
                population,
                Index::build(&held.trace.attempts, population),
                Readings::for_edits(),
            ));
        }
        let Some((_, index, readings)) = held.index.as_ref() else {
            return Err(NEED_TRACE.to_string());
        };
        let metrics = Metrics::compute(index, &settings);
        let intervals = Intervals::compute_kept(index, readings, &settings, &metrics);
        let checks = tracelab_core::card::run_checks_held(
            &held.trace,
            &held.facts,
            &settings,
            Some((&metrics, &intervals)),
            lang,
        );
        // A session qualifies only when every turn does, so the lines follow every edit.
        let sessions = held
            .facts
            .says_sessions
            .then(|| Sessions::of(&held.trace.attempts, &settings))
            .flatten()
            .map(|s| s.lines(lang))
            .unwrap_or_default();
        serde_json::to_string(&RunChecksAnswer { checks, sessions }).map_err(|e| e.to_string())
    })
}

/// The lab's session table (`session_html`) for the trace known by `key` (as for [`peer_table`]),
/// under `settings`, in `lang`, the sessions named in `open` (a JSON array of ids) drawn open: the
/// sessions as rows (`session::session_rows`, each turn's `data-row` its position in the held
/// attempts, which are the lab's working attempts) and the per-turn rate, the share of sessions
/// qualified and the product of per-turn rates side by side, as HTML; empty when no attempt names
/// a session.
#[wasm_bindgen]
pub fn sessions(
    key: &str,
    text: JsString,
    rest: &str,
    settings: &str,
    lang: &str,
    open: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        let settings: Settings = read("settings", settings)?;
        let lang: Lang = read("language", lang)?;
        let open: Vec<String> = read("open sessions", open)?;
        Ok(if held.facts.says_sessions {
            session_html::table(&held.trace.attempts, &settings, lang, &open)
        } else {
            String::new()
        })
    })
}

/// A download's text (`kind`, JSON: `"csv"`, `"card_md"`, …) for the trace known by `key` (as for
/// [`peer_table`]), under `settings`, in `lang`; `source` is the name the card gives the trace.
#[wasm_bindgen]
pub fn export_file(
    key: &str,
    text: JsString,
    rest: &str,
    settings: &str,
    lang: &str,
    kind: &str,
    source: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        let settings: Settings = read("settings", settings)?;
        let lang: Lang = read("language", lang)?;
        let kind: ExportKind = read("download kind", kind)?;
        Ok(write_export(kind, source, &held.trace, &settings, lang))
    })
}

/// The run of the trace known by `key` (as for [`peer_table`]) in time buckets, painted into the
/// box `container` (`request`: the core's `RunRequest`, JSON). Answers "ok".
#[wasm_bindgen]
pub fn show_run(
    key: &str,
    text: JsString,
    rest: &str,
    container: &str,
    request: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        canvas::show_run(&held.trace.attempts, &mut held.counted, container, request)
    })
}

/// The whole distribution (heat map, histogram, their legends and tables) of the trace known by
/// `key` (as for [`peer_table`]), painted into the box `container` (`request`: the core's
/// `DistributionRequest`, JSON). Answers "ok".
#[wasm_bindgen]
pub fn show_distribution(
    key: &str,
    text: JsString,
    rest: &str,
    container: &str,
    request: &str,
) -> Result<String, String> {
    on_held(key, text, rest, |held| {
        canvas::show_distribution(&held.trace.attempts, &mut held.counted, container, request)
    })
}

fn main() {
    tracelab_web::install_panic_hook();
}
