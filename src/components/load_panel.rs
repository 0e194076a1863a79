//! Choosing a trace: a built-in sample, a file button, or a file dropped on the panel. A bad
//! file shows an error and leaves the current trace and the learner's work untouched.

use leptos::prelude::*;
use leptos::task::spawn_local;
use tracelab_core::Lang;

use crate::i18n::tr;
use crate::loader::{fetch_sample, first_file, read_upload, SAMPLES};
use crate::state::{use_lab, Loaded, Origin};

#[component]
pub fn LoadPanel() -> impl IntoView {
    let lab = use_lab();
    let lang = lab.lang;
    let dragging = RwSignal::new(false);

    let load_file = move |file: web_sys::File| {
        spawn_local(async move {
            match read_upload(file).await {
                Ok((name, trace)) => lab.load(Loaded::new(Origin::Uploaded(name), trace), &[]),
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
                Ok(trace) => lab.load(Loaded::new(Origin::Sample(name), trace), &[]),
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
                }
            />
            <p class="hint">{move || tr(lang.get(), "drop_hint")}</p>
        </section>
    }
}
