//! The learner's metric card (pre-filled by the core from what the lab frame shows, then edited
//! by hand) and the self-check, which only the learner ticks.

use leptos::prelude::*;
use tracelab_core::lessons::{MetricCard, Progress};
use tracelab_core::{Index, Metrics, Settings};
use wasm_bindgen::JsCast;

use crate::app::use_page;
use crate::words::w;

/// The sample and settings the lab frame shows now (its permalink).
fn lab_state() -> Option<(String, Vec<(String, String)>)> {
    let frame: web_sys::HtmlIFrameElement = document().get_element_by_id("lab-frame")?.dyn_into().ok()?;
    let search = frame.content_window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    let sample = params.get("sample").unwrap_or_else(|| "ten-requests.jsonl".into());
    let pairs = ["t", "cmp", "pm", "p", "fd", "mt", "wu", "w", "cost", "cur"]
        .iter()
        .filter_map(|k| params.get(k).map(|v| (k.to_string(), v)))
        .collect();
    Some((sample, pairs))
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
    let prefill = move |_| {
        let (sample, pairs) = lab_state().unwrap_or_else(|| ("ten-requests.jsonl".into(), Vec::new()));
        let name = sample.clone();
        page.ensure_sample(sample, move |trace| {
            let mut settings = Settings::from_header(&trace.header);
            settings.apply_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let metrics = Metrics::compute(&Index::build(&trace.attempts, settings.population), &settings);
            let card = MetricCard::prefill(&name, &trace, &settings, &metrics, page.lang.get_untracked());
            page.progress.update(|p| p.card = Some(card));
            page.save_progress();
        });
    };
    let markdown = move || page.progress.with(|p| p.card.as_ref().map(|c| c.to_markdown(page.lang.get())));
    view! {
        <section class="card-panel" aria-labelledby="card-h" data-testid="card-panel">
            <h2 id="card-h">{move || w(page.lang.get(), "card")}</h2>
            <p class="hint">{move || w(page.lang.get(), "card_intro")}</p>
            <div class="card-actions">
                <button data-testid="prefill" on:click=prefill>{move || w(page.lang.get(), "prefill")}</button>
                <button data-testid="card-md" disabled=move || markdown().is_none() on:click=move |_| {
                    if let Some(md) = markdown() { let _ = crate::download::download("metric-card.md", "text/markdown", &md); }
                }>{move || w(page.lang.get(), "export_md")}</button>
                <button data-testid="card-json" disabled=move || markdown().is_none() on:click=move |_| {
                    if let Some(json) = page.progress.with_untracked(|p| p.card.as_ref().map(|c| c.to_json())) {
                        let _ = crate::download::download("metric-card.json", "application/json", &json);
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
