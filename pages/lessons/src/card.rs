//! The learner's metric card (pre-filled by the core from what the lab frame shows, asked of the
//! lab itself, then edited by hand) and the self-check, which only the learner ticks.

use leptos::prelude::*;
use tracelab_course::{MetricCard, Progress};
use serde::Deserialize;
use tracelab_core::handoff::WorkingText;
use tracelab_core::{Lang, Metrics, Settings, Text, Trace};
use wasm_bindgen::JsCast;

use crate::page::use_page;
use crate::words::w;

/// What the lab in the frame shows now, asked of the lab itself (`window.tracelabSnapshot()`,
/// same origin): its trace as the learner has it (an upload, what-if edits applied), the
/// settings in force and the headline figures on screen. `Err` says why it could not be read.
pub struct LabState {
    pub source: String,
    pub trace: Trace,
    pub settings: Settings,
    /// "1 row edited" when what-if edits are in force: the figures are hypothetical.
    pub hypothetical: Option<Text>,
    /// The false conclusions the lab names for those edits.
    pub mistakes: Vec<(Text, Text)>,
    /// What the lab shows: (attempts, qualified), checked against the card's own recompute.
    pub shown: (usize, usize),
}

pub fn lab_state(lang: Lang) -> Result<LabState, String> {
    let zh = lang == Lang::Zh;
    let not_ready = || {
        if zh { "实验室框架尚未加载完成（或已离开实验室页面），所以没有预填口径卡。" } else { "The lab in the frame has not finished loading (or shows another page), so the card was not pre-filled." }.to_string()
    };
    let frame: web_sys::HtmlIFrameElement =
        document().get_element_by_id("lab-frame").and_then(|e| e.dyn_into().ok()).ok_or_else(not_ready)?;
    let window = frame.content_window().ok_or_else(not_ready)?;
    let f: js_sys::Function = js_sys::Reflect::get(&window, &"tracelabSnapshot".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(not_ready)?;
    let raw = f.call0(&window).map_err(|e| format!("{}: {e:?}", not_ready()))?.as_string().ok_or_else(not_ready)?;
    let v: serde_json::Value = serde_json::from_str(&raw).map_err(|e| format!("lab state: {e}"))?;
    let source = v["source"].as_str().unwrap_or_default().to_string();
    let working = WorkingText::deserialize(&v["trace"]).map_err(|e| format!("lab state: trace: {e}"))?;
    let mut trace = working.read().map_err(|e| e.to_string())?;
    trace.check_peer_figures().map_err(|e| e.in_file(source.as_str()).to_string())?;
    if let Some(footer) = trace.footer.as_mut() {
        footer.attempts = trace.attempts.len() as u64; // rows deleted by a what-if edit
    }
    let mut settings = Settings::from_header(&trace.header);
    if let Some(pairs) = v["settings"].as_object() {
        settings.apply_pairs(pairs.iter().filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))));
    }
    // The edits' summary and the false conclusions they lead to, named by the core from the
    // trace as recorded, as the lab names them.
    let (hypothetical, mistakes) = if working.whatif.is_empty() {
        (None, Vec::new())
    } else {
        let recorded = working.trace.read().map_err(|e| e.to_string())?;
        let mut named = working.whatif.mistakes(&recorded.attempts);
        named.extend(working.whatif.verdict_flips(&recorded.attempts, &settings));
        (Some(working.whatif.summary()), named.into_iter().map(|m| (m.label, m.false_conclusion)).collect())
    };
    let count = |k: &str| v["shown"][k].as_u64().unwrap_or(u64::MAX) as usize;
    Ok(LabState {
        source,
        trace,
        settings,
        hypothetical,
        mistakes,
        shown: (count("attempts"), count("qualified")),
    })
}

/// The card for what the lab shows, or why there is none.
fn card_from_lab(lang: Lang) -> Result<MetricCard, String> {
    let zh = lang == Lang::Zh;
    let state = lab_state(lang)?;
    let metrics = Metrics::of(&state.trace.attempts, &state.settings);
    if (metrics.attempts, metrics.qualified) != state.shown {
        // Never a card whose figures differ from the lab's: say so instead.
        return Err(if zh {
            format!("口径卡重算的结果（{} 次尝试，{} 个合格）与实验室显示的（{} 次，{} 个）不一致，所以没有预填。", metrics.attempts, metrics.qualified, state.shown.0, state.shown.1)
        } else {
            format!("The card's recompute ({} attempts, {} qualified) differs from what the lab shows ({}, {}), so the card was not pre-filled.", metrics.attempts, metrics.qualified, state.shown.0, state.shown.1)
        });
    }
    let source = match &state.hypothetical {
        Some(h) if zh => format!("{}（假设情形：{}，并非记录下来的数据）", state.source, h.zh),
        Some(h) => format!("{} (hypothetical: {}, not the trace as recorded)", state.source, h.en),
        None => state.source.clone(),
    };
    let mut card = MetricCard::prefill(&source, &state.trace, &state.settings, &metrics, lang);
    for (label, why) in &state.mistakes {
        if !card.notes.is_empty() {
            card.notes.push('\n');
        }
        card.notes.push_str(&format!("⚠ {} {}", label.get(lang), why.get(lang)));
    }
    Ok(card)
}

fn edit_card(progress: &mut Progress, f: impl FnOnce(&mut MetricCard)) {
    if let Some(card) = progress.card.as_mut() {
        f(card);
    }
}

#[component]
pub fn CardPanel() -> impl IntoView {
    let page = use_page();
    let copied = RwSignal::new(false);
    let prefill = move |_| match card_from_lab(page.lang.get_untracked()) {
        Ok(card) => {
            page.error.set(None);
            page.progress.update(|p| p.card = Some(card));
            page.save_progress();
        }
        Err(e) => page.error.set(Some(e)),
    };
    let markdown = move || page.progress.with(|p| p.card.as_ref().map(|c| c.to_markdown(page.lang.get())));
    view! {
        <section class="card-panel" aria-labelledby="card-h" data-testid="card-panel">
            <h2 id="card-h">{move || w(page.lang.get(), "card")}</h2>
            <p class="hint">{move || w(page.lang.get(), "card_intro")}</p>
            <div class="card-actions">
                <button data-testid="prefill" on:click=prefill>{move || w(page.lang.get(), "prefill")}</button>
                <button data-testid="card-md" disabled=move || markdown().is_none() on:click=move |_| {
                    if let Some(md) = markdown() { let _ = tracelab_web::download("metric-card.md", "text/markdown", &md); }
                }>{move || w(page.lang.get(), "export_md")}</button>
                <button data-testid="card-json" disabled=move || markdown().is_none() on:click=move |_| {
                    if let Some(json) = page.progress.with_untracked(|p| p.card.as_ref().map(|c| c.to_json())) {
                        let _ = tracelab_web::download("metric-card.json", "application/json", &json);
                    }
                }>{move || w(page.lang.get(), "export_json")}</button>
                <button data-testid="card-copy" disabled=move || markdown().is_none() on:click=move |_| {
                    if let (Some(md), Some(win)) = (markdown(), web_sys::window()) {
                        let _ = win.navigator().clipboard().write_text(&md);
                        copied.set(true);
                    }
                }>{move || if copied.get() { w(page.lang.get(), "copied") } else { w(page.lang.get(), "copy") }}</button>
            </div>
            {move || {
                let l = page.lang.get();
                page.progress.with(|p| p.card.clone()).map(|card| {
                    let missing: Vec<String> = card.missing().iter().map(|f| MetricCard::label(f).get(l).to_string()).collect();
                    let help = page.course.with(|c| c.as_ref().map(|c| c.card_fields.clone()).unwrap_or_default());
                    view! {
                        {(!missing.is_empty()).then(|| view! { <p class="remark" data-testid="card-missing">{format!("{} {}", w(l, "missing_fields"), missing.join(", "))}</p> })}
                        <div class="card-fields">
                            {MetricCard::FIELDS.iter().filter(|f| **f != "results").map(|field| {
                                let field = *field;
                                let mut c = card.clone();
                                let value = c.field_mut(field).map(|v| v.clone()).unwrap_or_default();
                                let hint = help.iter().find(|h| h.id == field).map(|h| h.help.get(l).to_string()).unwrap_or_default();
                                view! {
                                    <label class="card-field">
                                        <span>{MetricCard::label(field).get(l).to_string()}</span>
                                        <textarea rows="2" data-testid=format!("card-{field}") title=hint
                                            prop:value=value
                                            on:change=move |e| {
                                                let v = event_target_value(&e);
                                                page.progress.update(|p| edit_card(p, |c| if let Some(slot) = c.field_mut(field) { *slot = v; }));
                                                page.save_progress();
                                            }></textarea>
                                    </label>
                                }
                            }).collect_view()}
                        </div>
                        <h3>{w(l, "results")}</h3>
                        <pre class="card-preview" data-testid="card-preview">{card.to_markdown(l)}</pre>
                    }
                })
            }}
        </section>
    }
}

#[component]
pub fn SelfCheck() -> impl IntoView {
    let page = use_page();
    view! {
        <section class="self-check" aria-labelledby="self-check-h" data-testid="self-check">
            <h2 id="self-check-h">{move || w(page.lang.get(), "self_check")}</h2>
            <p class="hint">{move || w(page.lang.get(), "self_check_intro")}</p>
            {move || {
                let l = page.lang.get();
                page.course.get().map(|c| c.self_check.iter().map(|item| {
                    let id = item.id.clone();
                    let id2 = item.id.clone();
                    view! {
                        <label class="choice">
                            <input type="checkbox" data-testid=format!("self-{}", item.id)
                                prop:checked=move || page.progress.with(|p| p.self_check.contains(&id))
                                on:change=move |_| {
                                    page.progress.update(|p| if !p.self_check.remove(&id2) { p.self_check.insert(id2.clone()); });
                                    page.save_progress();
                                } />
                            " "{item.text.get(l).to_string()}
                        </label>
                    }
                }).collect_view())
            }}
        </section>
    }
}
