//! Choosing a trace: a built-in sample, a file button, or a file dropped on the panel. A bad
//! file shows an error and leaves the current trace and the learner's work untouched.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::Lang;
use tracelab_web::SAMPLES;

use crate::i18n::tr;
use crate::loader::{fetch_sample, first_file, read_upload, Upload};
use crate::state::{use_lab, Loaded, Origin};

#[component]
pub fn LoadPanel() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let dragging = RwSignal::new(false);

    let load_file = move |file: web_sys::File| {
        spawn_local(async move {
            match read_upload(file).await {
                Ok(Upload::Traces(name, mut traces)) => {
                    let (first, text) = traces.remove(0);
                    let origin = Origin::Uploaded(name);
                    lab.choices.set(
                        traces
                            .into_iter()
                            .map(|(t, text)| (t.label, Loaded::new(origin.clone(), t.trace, text)))
                            .collect(),
                    );
                    lab.choice_label.set(first.label.clone());
                    lab.load(Loaded::new(origin, first.trace, text), &[]);
                }
                Ok(Upload::Summary(name, text)) => lab.attach_summary(&name, &text).await,
                Err(e) => lab.load_error.set(Some(e)),
            }
        });
    };
    let pick_sample = move |name: String| {
        if name.is_empty() {
            return;
        }
        spawn_local(async move {
            match fetch_sample(&name).await {
                Ok((trace, text)) => {
                    lab.load(Loaded::new(Origin::Sample(name), trace, text), &[]);
                }
                Err(e) => lab.load_error.set(Some(e)),
            }
        });
    };
    let current_sample = move || {
        lab.loaded.with(|l| match l.as_ref().map(|l| &l.origin) {
            Some(Origin::Sample(s)) => s.clone(),
            _ => String::new(),
        })
    };

    view! {
        <section
            class="load-panel"
            class:dragging=move || dragging.get()
            aria-labelledby="load-h"
            data-testid="drop-zone"
            on:dragover=move |e: web_sys::DragEvent| { e.prevent_default(); dragging.set(true); }
            on:dragleave=move |_| dragging.set(false)
            on:drop=move |e: web_sys::DragEvent| {
                e.prevent_default();
                dragging.set(false);
                if let Some(file) = e.data_transfer().and_then(|d| d.files()).and_then(|f| f.get(0)) {
                    load_file(file);
                }
            }
        >
            <h2 id="load-h">{move || tr(lang.get(), "load")}</h2>
            <label for="sample-picker">{move || tr(lang.get(), "sample")}</label>
            <select
                id="sample-picker"
                data-testid="sample-picker"
                on:change=move |e| pick_sample(event_target_value(&e))
            >
                {move || {
                    let current = current_sample();
                    let l = lang.get();
                    let uploaded = current.is_empty().then(|| view! {
                        <option value="" selected=true>{tr(l, "uploaded_option")}</option>
                    });
                    view! {
                        {uploaded}
                        {SAMPLES.iter().map(|(file, en, zh)| {
                            let label = if l == Lang::Zh { *zh } else { *en };
                            view! { <option value=*file selected=current == *file>{label}</option> }
                        }).collect_view()}
                    }
                }}
            </select>
            <label for="upload">{move || tr(lang.get(), "upload")}</label>
            <input
                id="upload"
                data-testid="upload"
                type="file"
                accept=".jsonl,.csv,.json,.txt,text/csv,application/json"
                on:change=move |e| {
                    if let Some(file) = e.target().as_ref().and_then(first_file) {
                        load_file(file);
                    }
                    // So choosing the same file again (after fixing it) is a change too.
                    if let Some(input) = e.target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlInputElement>(t).ok()) {
                        input.set_value("");
                    }
                }
            />
            <p class="hint">{move || tr(lang.get(), "drop_hint")}</p>
            // The compare view is its own page and bundle (/compare/), so the lab stays small.
            <a class="compare-link" data-testid="compare-link" href=move || format!("compare/?base={}&lang={}", current_sample(), lang.get().code())>{move || tr(lang.get(), "compare_with")}</a>
            // The load model (closed vs open loop, a stall) is its own page too (/load-model/).
            <a class="compare-link" data-testid="load-model-link" href=move || format!("load-model/?lang={}", lang.get().code())>{move || tr(lang.get(), "load_model_link")}</a>
            <a class="compare-link" data-testid="capacity-link" href=move || format!("capacity/?sweep=sweep-demo&lang={}", lang.get().code())>{move || tr(lang.get(), "capacity_link")}</a>
            <BenchmarkPicker />
        </section>
    }
}

/// A peer file with several benchmarks (guidellm) loads the first; the others are one click away.
#[component]
fn BenchmarkPicker() -> impl IntoView {
    let lab = use_lab();
    view! {
        {move || (!lab.choices.with(|c| c.is_empty())).then(|| {
            let l = lab.lang.get();
            let current = lab.choice_label.get();
            let choices = lab.choices.get();
            view! {
                <label for="benchmark-picker">{tr(l, "benchmark")}</label>
                <select id="benchmark-picker" data-testid="benchmark-picker" on:change=move |e| {
                    let pick = event_target_value(&e);
                    let found = lab.choices.with_untracked(|c| c.iter().find(|(label, _)| *label == pick).cloned());
                    if let Some((label, picked)) = found {
                        // Put the current one back among the choices, then load the picked one.
                        if let Some(old) = lab.loaded.get_untracked() {
                            let old_label = lab.choice_label.get_untracked();
                            lab.choices.update(|c| { c.retain(|(l, _)| *l != label); c.push((old_label, old)); c.sort_by(|a, b| a.0.cmp(&b.0)); });
                        }
                        lab.choice_label.set(label);
                        lab.load(picked, &[]);
                    }
                }>
                    <option value=current.clone() selected=true>{current.clone()}</option>
                    {choices.into_iter().map(|(label, _)| view! { <option value=label.clone()>{label.clone()}</option> }).collect_view()}
                </select>
            }
        })}
    }
}
