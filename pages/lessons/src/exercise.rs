//! One exercise, by kind: a number checked against the core's own figure on the named sample, a
//! choice answered with each option's explanation, a ratio's parts named against the core's
//! labels, or free text with a checklist. Every check is the course crate's (`tracelab_course::check`).

use std::collections::BTreeSet;

use leptos::prelude::*;
use tracelab_core::format::trim_num;
use tracelab_course::{
    answer_key, check_for, currency_for, parse_number, ratio_parts, Answer, AnswerUnit, Exercise,
    ExerciseKind, Feedback, RatioPartsView,
};

use crate::page::use_page;
use crate::words::w;

#[component]
pub fn ExerciseWidget(id: String) -> impl IntoView {
    let page = use_page();
    let Some(ex) = page
        .course
        .with_untracked(|c| c.as_ref().and_then(|c| c.exercise(&id).cloned()))
    else {
        return view! { <p class="error-panel">{format!("[[exercise:{id}]]?")}</p> }.into_any();
    };
    // Feedback answers the answer it judged: any edit of the answer clears it, so a "✓ Right"
    // never stands beside a different answer.
    let feedback: RwSignal<Option<Feedback>> = RwSignal::new(None);
    // Wrong answers since the page opened: a hint comes first, the core's figure only after a
    // second wrong try or when asked for (never in teacher mode).
    let wrong_tries = RwSignal::new(0u32);
    let asked = RwSignal::new(false);
    let ex_id = ex.id.clone();
    let ex_id2 = ex.id.clone();
    let previous = page
        .progress
        .with_untracked(|p| p.answers.get(&ex.id).map(|r| r.answer.clone()));
    let submit = {
        let ex = ex.clone();
        move |answer: Answer, key: Option<f64>| {
            let f = check_for(&ex, &answer, key, page.audience());
            if !f.correct {
                wrong_tries.update(|n| *n += 1);
            }
            // The core's figure shown after a second wrong try is recorded as shown, so the lab
            // beside shows it too (and a teacher can tell a prediction from a copy).
            let shown = !page.teacher
                && !f.correct
                && f.expected.is_some()
                && wrong_tries.get_untracked() >= 2;
            page.progress.update(|p| {
                p.record(&ex.id, answer, &f);
                if shown {
                    p.reveal(&ex.id);
                }
            });
            page.save_progress();
            feedback.set(Some(f));
        }
    };
    let body = match &ex.kind {
        ExerciseKind::Number(n) => {
            number_widget(&ex, n.sample.clone(), previous, feedback, submit.clone()).into_any()
        }
        ExerciseKind::Choice(c) => {
            let multiple = c.multiple;
            let chosen: RwSignal<BTreeSet<String>> = RwSignal::new(match previous {
                Some(Answer::Choice { chosen }) => chosen.into_iter().collect(),
                _ => BTreeSet::new(),
            });
            let name = format!("choice-{}", ex.id);
            let options = c.options.clone();
            let ids: Vec<String> = options.iter().map(|o| o.id.clone()).collect();
            let diagram = c
                .diagram
                .clone()
                .map(|file| diagram_view(file, ids, multiple, chosen));
            Effect::new(move |_| {
                chosen.track();
                feedback.set(None); // a mark on the drawing changes the answer too
            });
            let submit = submit.clone();
            view! {
                {diagram}
                <fieldset class="choices">
                    {options.into_iter().map(|o| {
                        let oid = o.id.clone();
                        let oid2 = o.id.clone();
                        view! {
                            <label class="choice">
                                <input type=if multiple { "checkbox" } else { "radio" } name=name.clone() value=o.id.clone()
                                    data-testid=format!("option-{}", o.id)
                                    prop:checked=move || chosen.with(|c| c.contains(&oid))
                                    on:change=move |_| { feedback.set(None); chosen.update(|c| {
                                        if multiple {
                                            if !c.remove(&oid2) { c.insert(oid2.clone()); }
                                        } else {
                                            c.clear();
                                            c.insert(oid2.clone());
                                        }
                                    }) } />
                                " "{move || o.text.get(page.lang.get()).to_string()}
                            </label>
                        }
                    }).collect_view()}
                    <button class="check" data-testid="check" on:click=move |_| submit(Answer::Choice { chosen: chosen.get_untracked().into_iter().collect() }, None)>
                        {move || w(page.lang.get(), "check")}
                    </button>
                </fieldset>
            }
            .into_any()
        }
        ExerciseKind::RatioParts(r) => {
            let view_of: RwSignal<Option<RatioPartsView>> = RwSignal::new(None);
            let ex2 = ex.clone();
            page.ensure_sample(r.sample.clone(), move |trace| {
                view_of.set(ratio_parts(&ex2, &trace))
            });
            let parts = [
                RwSignal::new(String::new()),
                RwSignal::new(String::new()),
                RwSignal::new(String::new()),
            ];
            if let Some(Answer::RatioParts {
                numerator,
                denominator,
                unit,
            }) = previous
            {
                parts[0].set(numerator);
                parts[1].set(denominator);
                parts[2].set(unit);
            }
            let submit = submit.clone();
            view! {
                <div class="ratio-parts">
                    {move || view_of.get().map(|v| {
                        let l = page.lang.get();
                        // Options are shown in an order drawn when the page opens, with values that
                        // name only their position: the page's source does not give the answer away.
                        let pick = |label: &'static str, part: &'static str, options: Vec<tracelab_course::PartOption>, sig: RwSignal<String>| {
                            let options = shuffled(options);
                            let ids: Vec<String> = options.iter().map(|o| o.id.clone()).collect();
                            view! {
                                <label>
                                    {w(l, label)}" "
                                    <select data-testid=format!("part-{part}") on:change=move |e| {
                                        feedback.set(None);
                                        let pos = event_target_value(&e).strip_prefix("option-").and_then(|n| n.parse::<usize>().ok());
                                        sig.set(pos.and_then(|n| ids.get(n.wrapping_sub(1)).cloned()).unwrap_or_default());
                                    }>
                                        <option value="" selected=move || sig.get().is_empty()>{w(l, "choose")}</option>
                                        {options.into_iter().enumerate().map(|(k, o)| {
                                            let id = o.id.clone();
                                            view! { <option value=format!("option-{}", k + 1) selected=move || sig.get() == id>{o.text.get(l).to_string()}</option> }
                                        }).collect_view()}
                                    </select>
                                </label>
                            }
                        };
                        view! {
                            <p><strong>{v.figure.get(l).to_string()}</strong></p>
                            {pick("numerator", "numerator", v.numerator.clone(), parts[0])}
                            {pick("denominator", "denominator", v.denominator.clone(), parts[1])}
                            {pick("unit", "unit", v.unit.clone(), parts[2])}
                        }
                    })}
                    <button class="check" data-testid="check" on:click=move |_| submit(
                        Answer::RatioParts { numerator: parts[0].get_untracked(), denominator: parts[1].get_untracked(), unit: parts[2].get_untracked() },
                        None,
                    )>{move || w(page.lang.get(), "check")}</button>
                </div>
            }
            .into_any()
        }
        ExerciseKind::DrawMap(_) => {
            crate::map::map_widget(previous, feedback, submit.clone()).into_any()
        }
        ExerciseKind::PickRows(_) => crate::pick::pick_widget(&ex, previous, feedback).into_any(),
        ExerciseKind::FreeText(f) => {
            let (text0, checked0) = match previous {
                Some(Answer::FreeText { text, checked }) => (text, checked.into_iter().collect()),
                _ => (String::new(), BTreeSet::new()),
            };
            let text = RwSignal::new(text0);
            let checked: RwSignal<BTreeSet<String>> = RwSignal::new(checked0);
            let items = f.checklist.clone();
            let min = f.min_checked;
            let submit = submit.clone();
            view! {
                <div class="free-text">
                    <textarea rows="4" data-testid="free-text" aria-label=move || w(page.lang.get(), "your_answer") prop:value=move || text.get() on:input=move |e| { feedback.set(None); text.set(event_target_value(&e)); }></textarea>
                    <p class="hint">{move || format!("{} {min} {}", w(page.lang.get(), "min_checked"), w(page.lang.get(), "items"))}</p>
                    {items.into_iter().map(|item| {
                        let id = item.id.clone();
                        let id2 = item.id.clone();
                        view! {
                            <label class="choice">
                                <input type="checkbox" data-testid=format!("item-{}", item.id) prop:checked=move || checked.with(|c| c.contains(&id))
                                    on:change=move |_| { feedback.set(None); checked.update(|c| if !c.remove(&id2) { c.insert(id2.clone()); }) } />
                                " "{move || item.text.get(page.lang.get()).to_string()}
                            </label>
                        }
                    }).collect_view()}
                    <button class="check" data-testid="check" on:click=move |_| submit(
                        Answer::FreeText { text: text.get_untracked(), checked: checked.get_untracked().into_iter().collect() },
                        None,
                    )>{move || w(page.lang.get(), "save")}</button>
                </div>
            }
            .into_any()
        }
    };
    view! {
        <section class="exercise" data-testid=format!("exercise-{ex_id}") aria-labelledby=format!("q-{ex_id}")>
            <p class="prompt" id=format!("q-{ex_id}")><strong>"✎ "</strong>{move || ex.prompt.get(page.lang.get()).to_string()}</p>
            {body}
            <div class="feedback" aria-live="polite" data-testid="feedback">
                {move || feedback.get().map(|f| {
                    let l = page.lang.get();
                    let can_reveal = !page.teacher && !f.correct && f.expected.is_some();
                    let reveal = can_reveal && (wrong_tries.get() >= 2 || asked.get());
                    view! {
                        <p class:right=f.correct class:wrong=!f.correct>
                            <strong aria-label=if f.correct { w(l, "right") } else { w(l, "wrong") }>{if f.correct { "✓" } else { "✗" }}</strong>
                            " "{f.message.get(l).to_string()}
                        </p>
                        {reveal.then(|| view! {
                            <p class="expected" data-testid="expected">{format!("{}: {}", w(l, "expected"), trim_num(f.expected.unwrap_or_default()))}</p>
                        })}
                        {(can_reveal && !reveal).then(|| {
                            let id = ex_id2.clone();
                            view! {
                                <button class="link" data-testid="show-answer" on:click=move |_| {
                                    asked.set(true);
                                    page.progress.update(|p| p.reveal(&id));
                                    page.save_progress();
                                }>{w(l, "show_answer")}</button>
                            }
                        })}
                    }
                })}
            </div>
        </section>
    }
    .into_any()
}

fn number_widget(
    ex: &Exercise,
    sample: String,
    previous: Option<Answer>,
    feedback: RwSignal<Option<Feedback>>,
    submit: impl Fn(Answer, Option<f64>) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let page = use_page();
    let ExerciseKind::Number(n) = &ex.kind else {
        unreachable!("a number exercise")
    };
    let value = RwSignal::new(match previous {
        Some(Answer::Number { value }) => trim_num(value),
        _ => String::new(),
    });
    let unit_label = RwSignal::new(String::new());
    let invalid = RwSignal::new(false);
    let unit = AnswerUnit::from_code(&n.unit);
    let pairs = n.settings.clone();
    page.ensure_sample(sample.clone(), move |trace| {
        let currency = currency_for(&trace, &pairs);
        if let Some(u) = unit {
            unit_label.set(u.label(&currency, page.lang.get_untracked()));
        }
    });
    let ex = ex.clone();
    view! {
        <div class="number">
            <label>
                <span class="visually-hidden">{move || w(page.lang.get(), "your_answer")}</span>
                <input type="text" inputmode="decimal" data-testid="answer" aria-invalid=move || invalid.get().to_string()
                    prop:value=move || value.get() on:input=move |e| { feedback.set(None); invalid.set(false); value.set(event_target_value(&e)); } />
            </label>
            " "<span class="unit">{move || unit_label.get()}</span>" "
            <button class="check" data-testid="check" on:click=move |_| {
                let Some(v) = parse_number(&value.get_untracked()) else {
                    feedback.set(None);
                    invalid.set(true);
                    return;
                };
                invalid.set(false);
                let ex = ex.clone();
                let submit = submit.clone();
                page.ensure_sample(sample.clone(), move |trace| submit(Answer::Number { value: v }, answer_key(&ex, &trace)));
            }>{move || w(page.lang.get(), "check")}</button>
            {move || invalid.get().then(|| view! { <p class="field-error" role="alert" data-testid="not-a-number">{w(page.lang.get(), "not_a_number")}</p> })}
        </div>
    }
}

/// The options in an order drawn at random when the page opens (the core's order is fixed).
fn shuffled<T>(mut v: Vec<T>) -> Vec<T> {
    for i in (1..v.len()).rev() {
        let j = (js_sys::Math::random() * (i + 1) as f64) as usize;
        v.swap(i, j.min(i));
    }
    v
}

/// A diagram exercise: the SVG inline, its parts clickable (and reachable by Tab, Enter and
/// Space) to mark them; the list below stays for keyboards and screen readers.
fn diagram_view(
    file: String,
    ids: Vec<String>,
    multiple: bool,
    chosen: RwSignal<BTreeSet<String>>,
) -> impl IntoView {
    use wasm_bindgen::JsCast;
    let svg = RwSignal::new(String::new());
    let holder = NodeRef::<leptos::html::Div>::new();
    let href = format!("content/{file}");
    leptos::task::spawn_local(async move {
        if let Ok(text) = tracelab_web::fetch_text(&format!("content/{file}")).await {
            svg.set(text);
        }
    });
    // Mirror the marks on the drawing (aria-pressed, and a class the style colours).
    Effect::new(move |_| {
        let marked = chosen.get();
        svg.track();
        let Some(root) = holder.get() else { return };
        let root: &web_sys::Element = root.as_ref();
        for id in &ids {
            if let Ok(Some(el)) = root.query_selector(&format!("[id='{id}']")) {
                let on = marked.contains(id);
                let _ = el.set_attribute("aria-pressed", if on { "true" } else { "false" });
                let _ = el.class_list().toggle_with_force("marked", on);
            }
        }
    });
    let toggle = move |target: Option<web_sys::EventTarget>| {
        let Some(el) = target.and_then(|t| t.dyn_into::<web_sys::Element>().ok()) else {
            return;
        };
        let Ok(Some(part)) =
            el.closest("[data-kind=sample-point], [data-kind=failure-point], [data-kind=node]")
        else {
            return;
        };
        let id = part.id();
        chosen.update(|c| {
            if multiple {
                if !c.remove(&id) {
                    c.insert(id);
                }
            } else {
                c.clear();
                c.insert(id);
            }
        });
    };
    let page = use_page();
    // At its own size (its smallest text is 12 px), scrolling sideways in a column narrower
    // than the drawing; the file alone can be zoomed.
    view! {
        <div class="diagram" node_ref=holder data-testid="diagram" inner_html=move || svg.get()
            on:click=move |e| toggle(e.target())
            on:keydown=move |e: web_sys::KeyboardEvent| {
                if e.key() == "Enter" || e.key() == " " {
                    e.prevent_default();
                    toggle(e.target());
                }
            }></div>
        <p class="diagram-hint">
            {move || w(page.lang.get(), "diagram_scroll")}" "
            <a href=href target="_blank" rel="noopener">{move || w(page.lang.get(), "diagram_open")}</a>
        </p>
    }
}
