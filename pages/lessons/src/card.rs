//! The learner's metric card: written first (every field and its help shown from the start),
//! then checked against the lab or pre-filled from it (saying which settings it used); a
//! classmate's card recomputed from the trace it names; and the self-check, which only the
//! learner ticks. Every comparison is the course crate's ([`MetricCard::check_against_lab`]).

use leptos::prelude::*;
use serde::Deserialize;
use tracelab_core::handoff::WorkingText;
use tracelab_core::parse::parse_trace;
use tracelab_core::settings::{pair_label, pair_value_label, CHOICES, NUMBER_CHOICES};
use tracelab_core::{Lang, Metrics, Settings, Text, Trace};
use tracelab_course::{Agreement, CardReview, CardSnapshot, MetricCard};
use wasm_bindgen::JsCast;

use crate::key::hidden_now;
use crate::page::{use_page, Page};
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
    let frame: web_sys::HtmlIFrameElement = document()
        .get_element_by_id("lab-frame")
        .and_then(|e| e.dyn_into().ok())
        .ok_or_else(not_ready)?;
    let window = frame.content_window().ok_or_else(not_ready)?;
    let f: js_sys::Function = js_sys::Reflect::get(&window, &"tracelabSnapshot".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(not_ready)?;
    let raw = f
        .call0(&window)
        .map_err(|e| format!("{}: {e:?}", not_ready()))?
        .as_string()
        .ok_or_else(not_ready)?;
    let v: serde_json::Value = serde_json::from_str(&raw).map_err(|e| format!("lab state: {e}"))?;
    let source = v["source"].as_str().unwrap_or_default().to_string();
    let working =
        WorkingText::deserialize(&v["trace"]).map_err(|e| format!("lab state: trace: {e}"))?;
    let mut trace = working.read().map_err(|e| e.to_string())?;
    trace
        .check_peer_figures()
        .map_err(|e| e.in_file(source.as_str()).to_string())?;
    if let Some(footer) = trace.footer.as_mut() {
        footer.attempts = trace.attempts.len() as u64; // rows deleted by a what-if edit
    }
    let mut settings = Settings::from_header(&trace.header);
    if let Some(pairs) = v["settings"].as_object() {
        settings.apply_pairs(
            pairs
                .iter()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?))),
        );
    }
    // The edits' summary and the false conclusions they lead to, named by the core from the
    // trace as recorded, as the lab names them.
    let (hypothetical, mistakes) = if working.whatif.is_empty() {
        (None, Vec::new())
    } else {
        let recorded = working.trace.read().map_err(|e| e.to_string())?;
        let mut named = working.whatif.mistakes(&recorded.attempts);
        named.extend(working.whatif.verdict_flips(&recorded.attempts, &settings));
        (
            Some(working.whatif.summary()),
            named
                .into_iter()
                .map(|m| (m.label, m.false_conclusion))
                .collect(),
        )
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

/// The card for what the lab shows (with the state it was read from), or why there is none.
/// The learner's second snapshot, if any, is kept and filled from the core under its own choices.
fn card_from_lab(
    lang: Lang,
    second: Option<CardSnapshot>,
) -> Result<(MetricCard, LabState), String> {
    let zh = lang == Lang::Zh;
    let state = lab_state(lang)?;
    let metrics = Metrics::of(&state.trace.attempts, &state.settings);
    if (metrics.attempts, metrics.qualified) != state.shown {
        let int = |n: usize| tracelab_core::format::integer(n as u64);
        // Never a card whose figures differ from the lab's: say so instead.
        return Err(if zh {
            format!("口径卡重算的结果（{} 次尝试，{} 个合格）与实验室显示的（{} 次，{} 个）不一致，所以没有预填。", int(metrics.attempts), int(metrics.qualified), int(state.shown.0), int(state.shown.1))
        } else {
            format!("The card's recompute ({} attempts, {} qualified) differs from what the lab shows ({}, {}), so the card was not pre-filled.", int(metrics.attempts), int(metrics.qualified), int(state.shown.0), int(state.shown.1))
        });
    }
    let source = match &state.hypothetical {
        Some(h) if zh => format!("{}（假设情形：{}，并非记录下来的数据）", state.source, h.zh),
        Some(h) => format!(
            "{} (hypothetical: {}, not the trace as recorded)",
            state.source, h.en
        ),
        None => state.source.clone(),
    };
    let mut card = MetricCard::prefill(&source, &state.trace, &state.settings, &metrics, lang);
    if let Some(mine) = second {
        let mut other = state.settings.clone();
        other.apply_pairs(mine.choices.iter().map(|(k, v)| (k.as_str(), v.trim())));
        card.second = Some(CardSnapshot::prefill(
            &state.trace,
            &card.choices,
            &other,
            lang,
        ));
    }
    for (label, why) in &state.mistakes {
        if !card.notes.is_empty() {
            card.notes.push('\n');
        }
        card.notes
            .push_str(&format!("⚠ {} {}", label.get(lang), why.get(lang)));
    }
    Ok((card, state))
}

/// The card the form itself wrote last: a change to the saved card that is not this one (a
/// pre-fill, a progress file imported) redraws the form; the form's own edits do not.
#[derive(Clone, Copy)]
struct Written(StoredValue<Option<MetricCard>>);

/// One edit from the form, saved at once.
fn edit_card(page: Page, written: Written, lang: Lang, f: impl FnOnce(&mut MetricCard)) {
    let mut card = page
        .progress
        .with_untracked(|p| p.card.clone())
        .unwrap_or_else(|| MetricCard::blank(lang));
    f(&mut card);
    written.0.set_value(Some(card.clone()));
    page.progress.update(|p| p.card = Some(card));
    page.save_progress();
}

/// The card as the learner has it: theirs, or a blank one to write in.
fn card_now(page: &Page) -> MetricCard {
    let lang = page.lang.get();
    page.progress
        .with(|p| p.card.clone())
        .unwrap_or_else(|| MetricCard::blank(lang))
}

/// What a pre-fill used, said right under the buttons: the trace and every setting, and the
/// wrong ones a lesson step left in force.
#[derive(Clone)]
struct PrefillNote {
    source: String,
    /// What the lab hides, left for the learner to write.
    held: Vec<String>,
    settings: Vec<Text>,
    mistakes: Vec<Text>,
}

#[component]
pub fn CardPanel() -> impl IntoView {
    let page = use_page();
    let copied = RwSignal::new(false);
    let prefill_note = RwSignal::new(None::<PrefillNote>);
    let lab_review = RwSignal::new(None::<CardReview>);
    let written = Written(StoredValue::new(None));
    // Counts the times the saved card was replaced by something other than the form.
    let replaced = Memo::new(move |prev: Option<&u32>| {
        let prev = prev.copied().unwrap_or(0);
        let same = page
            .progress
            .with(|p| written.0.with_value(|w| w.as_ref() == p.card.as_ref()));
        if same {
            prev
        } else {
            prev + 1
        }
    });
    let classmate_card = RwSignal::new(None::<(String, MetricCard)>);
    let classmate_trace = RwSignal::new(None::<(String, Trace)>);
    let prefill = move |_| {
        let lang = page.lang.get_untracked();
        let second = page
            .progress
            .with_untracked(|p| p.card.as_ref().and_then(|c| c.second.clone()));
        match card_from_lab(lang, second) {
            Ok((mut card, state)) => {
                page.error.set(None);
                // What the lab beside hides is not on the card either: the learner writes it.
                let own = page.progress.with_untracked(|p| p.card.clone());
                let held = untrack(|| hidden_now(page)).hold_back(&mut card, own.as_ref());
                prefill_note.set(Some(PrefillNote {
                    source: state.source.clone(),
                    held,
                    settings: state
                        .settings
                        .to_pairs()
                        .iter()
                        .map(|(k, v)| {
                            let (name, value) = (pair_label(k), pair_value_label(k, v));
                            Text::new(
                                format!("{}: {}", name.en, value.en),
                                format!("{}：{}", name.zh, value.zh),
                            )
                        })
                        .collect(),
                    mistakes: state
                        .settings
                        .mistakes()
                        .iter()
                        .map(|m| m.label.clone())
                        .collect(),
                }));
                lab_review.set(None);
                page.progress.update(|p| p.card = Some(card));
                page.save_progress();
            }
            Err(e) => page.error.set(Some(e)),
        }
    };
    let check = move |_| {
        let lang = page.lang.get_untracked();
        match lab_state(lang) {
            Ok(state) => {
                page.error.set(None);
                let card = page
                    .progress
                    .with_untracked(|p| p.card.clone())
                    .unwrap_or_else(|| MetricCard::blank(lang));
                lab_review.set(Some(card.check_against_lab(&state.trace, &state.settings)));
            }
            Err(e) => page.error.set(Some(e)),
        }
    };
    let classmate_review = Memo::new(move |_| {
        let (_, card) = classmate_card.get()?;
        classmate_trace.with(|t| t.as_ref().map(|(file, trace)| card.recompute(trace, file)))
    });
    let markdown = move || {
        page.progress
            .with(|p| p.card.as_ref().map(|c| c.to_markdown(page.lang.get())))
    };
    // The lab answers only after the learner has tried: one figure written by hand.
    let attempted = move || {
        page.progress.with(|p| {
            p.card
                .as_ref()
                .is_some_and(MetricCard::has_a_written_figure)
        })
    };
    view! {
        <section class="card-panel" aria-labelledby="card-h" data-testid="card-panel">
            <h2 id="card-h">{move || w(page.lang.get(), "card")}</h2>
            <p class="hint">{move || w(page.lang.get(), "card_intro")}</p>
            <div class="card-actions">
                <button data-testid="card-check-lab" disabled=move || !attempted() aria-describedby="card-write-first" on:click=check>{move || w(page.lang.get(), "check_card")}</button>
                <button data-testid="prefill" disabled=move || !attempted() aria-describedby="card-write-first" on:click=prefill>{move || w(page.lang.get(), "prefill")}</button>
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
            <p id="card-write-first" class="hint" data-testid="card-write-first" hidden=attempted>{move || w(page.lang.get(), "write_first")}</p>
            {move || prefill_note.get().map(|note| {
                let l = page.lang.get();
                view! {
                    <div class="prefill-note" data-testid="prefill-note" role="note">
                        <p>{w(l, "prefilled_with").replace("{source}", &note.source)}</p>
                        <ul>{note.settings.iter().map(|s| view! { <li>{s.get(l).to_string()}</li> }).collect_view()}</ul>
                        {(!note.held.is_empty()).then(|| view! {
                            <p class="remark" data-testid="prefill-held">{w(l, "prefill_held")}" "{note.held.join(", ")}</p>
                        })}
                        {(!note.mistakes.is_empty()).then(|| view! {
                            <p class="remark" data-testid="prefill-mistakes">"⚠ "{w(l, "prefill_mistakes")}" "
                                {note.mistakes.iter().map(|m| m.get(l).to_string()).collect::<Vec<_>>().join("; ")}</p>
                        })}
                    </div>
                }
            })}
            {move || lab_review.get().map(|r| view! { <ReviewList review=r title="review_lab" testid="card-check" /> })}
            {move || {
                let l = page.lang.get();
                let missing: Vec<String> = card_now(&page).missing().iter().map(|f| MetricCard::label(f).get(l).to_string()).collect();
                (!missing.is_empty()).then(|| view! { <p class="remark" data-testid="card-missing">{format!("{} {}", w(l, "missing_fields"), missing.join(", "))}</p> })
            }}
            // The form is drawn again only when the whole card is replaced (a pre-fill, another
            // language), not on each keystroke's save: focus and the caret stay where they are.
            {move || {
                replaced.get();
                let l = page.lang.get();
                let card = untrack(|| card_now(&page));
                let help = page.course.with(|c| c.as_ref().map(|c| c.card_fields.clone()).unwrap_or_default());
                view! {
                    <div class="card-fields">
                        {MetricCard::FIELDS.iter().filter(|f| **f != "results").map(|field| {
                            let field = *field;
                            let value = card.field(field).cloned().unwrap_or_default();
                            let hint = help.iter().find(|h| h.id == field).map(|h| h.help.get(l).to_string()).unwrap_or_default();
                            let help_id = format!("card-help-{field}");
                            view! {
                                <label class="card-field">
                                    <span>{MetricCard::label(field).get(l).to_string()}</span>
                                    <textarea rows="2" data-testid=format!("card-{field}") aria-describedby=help_id.clone()
                                        prop:value=value
                                        on:change=move |e| {
                                            let v = event_target_value(&e);
                                            edit_card(page, written, l, |c| if let Some(slot) = c.field_mut(field) { *slot = v; });
                                        }></textarea>
                                    <small class="field-help" id=help_id>{hint}</small>
                                </label>
                            }
                        }).collect_view()}
                    </div>
                    <fieldset class="card-choices" data-testid="card-choices">
                        <legend>{w(l, "card_choices")}</legend>
                        <p class="hint">{w(l, "card_choices_help")}</p>
                        {NUMBER_CHOICES.iter().take(2).map(|(key, _, _)| choice_input(page, written, &card, key, l)).collect_view()}
                        {CHOICES.iter().map(|spec| {
                            let key = spec.key;
                            let stated = card.choices.get(key).cloned().unwrap_or_default();
                            view! {
                                <label class="card-choice">
                                    <span>{spec.label().get(l).to_string()}</span>
                                    <select data-testid=format!("card-choice-{key}") on:change=move |e| {
                                        let v = event_target_value(&e);
                                        edit_card(page, written, l, |c| { if v.is_empty() { c.choices.remove(key); } else { c.choices.insert(key.to_string(), v); } });
                                    }>
                                        <option value="" selected=stated.is_empty()>{w(l, "not_stated")}</option>
                                        {spec.options.iter().map(|(code, en, zh)| {
                                            let words = if l == Lang::Zh { *zh } else { *en };
                                            view! { <option value=*code selected=stated == *code>{words}</option> }
                                        }).collect_view()}
                                    </select>
                                </label>
                            }
                        }).collect_view()}
                        {NUMBER_CHOICES.iter().skip(2).map(|(key, _, _)| choice_input(page, written, &card, key, l)).collect_view()}
                    </fieldset>
                    <h3>{MetricCard::label("results").get(l).to_string()}</h3>
                    <div class="card-results">
                        {card.results.iter().enumerate().map(|(i, r)| {
                            let cell = move |part: &'static str, value: String| view! {
                                <label class="card-part">
                                    <span>{w(l, part)}</span>
                                    <input type="text" data-testid=format!("card-{part}-{i}") prop:value=value
                                        on:change=move |e| {
                                            let v = event_target_value(&e);
                                            edit_card(page, written, l, |c| if let Some(r) = c.results.get_mut(i) {
                                                match part {
                                                    "card_value" => r.value = v,
                                                    "card_numerator" => r.numerator = v,
                                                    "card_denominator" => r.denominator = v,
                                                    "card_method" => r.method = v,
                                                    _ => r.interval = v,
                                                }
                                            });
                                        } />
                                </label>
                            };
                            view! {
                                <fieldset class="card-result" data-testid=format!("card-result-{}", r.key)>
                                    <legend>{r.name.clone()}" "<small>{r.unit.clone()}</small></legend>
                                    {cell("card_value", r.value.clone())}
                                    {cell("card_numerator", r.numerator.clone())}
                                    {cell("card_denominator", r.denominator.clone())}
                                    {cell("card_method", r.method.clone())}
                                    {cell("card_interval", r.interval.clone())}
                                </fieldset>
                            }
                        }).collect_view()}
                    </div>
                    {second_snapshot(page, written, &card, l)}
                }
            }}
            <h3>{move || w(page.lang.get(), "results")}</h3>
            <pre class="card-preview" data-testid="card-preview" tabindex="0">{move || card_now(&page).to_markdown(page.lang.get())}</pre>
            <section class="classmate" data-testid="classmate">
                <h3>{move || w(page.lang.get(), "classmate")}</h3>
                <p class="hint">{move || w(page.lang.get(), "classmate_help")}</p>
                <label>{move || w(page.lang.get(), "classmate_card")}" "
                    <input type="file" accept=".json,application/json" data-testid="classmate-card" on:change=move |e| page.read_chosen_file(&e, move |name, text| {
                        match MetricCard::from_json(&text) {
                            Ok(card) => { page.error.set(None); classmate_card.set(Some((name, card))); }
                            Err(e) => { classmate_card.set(None); page.error.set(Some(e.in_file(name).to_string())); }
                        }
                    }) />
                </label>
                <label>{move || w(page.lang.get(), "classmate_trace")}" "
                    <input type="file" accept=".jsonl,.csv,.json" data-testid="classmate-trace" on:change=move |e| page.read_chosen_file(&e, move |name, text| {
                        match parse_trace(&name, &text) {
                            Ok(trace) => { page.error.set(None); classmate_trace.set(Some((name, trace))); }
                            Err(e) => { classmate_trace.set(None); page.error.set(Some(e.to_string())); }
                        }
                    }) />
                </label>
                {move || classmate_review.get().map(|r| view! { <ReviewList review=r title="review_classmate" testid="classmate-check" /> })}
            </section>
        </section>
    }
}

/// The card's second snapshot: the same trace under a second TTFT threshold (the lesson's
/// 0.5 s), its threshold and each figure written by the learner, checked with the card.
fn second_snapshot(page: Page, written: Written, card: &MetricCard, l: Lang) -> impl IntoView {
    let zh = l == Lang::Zh;
    let Some(second) = card.second.clone() else {
        return view! {
            <div class="card-second" data-testid="card-second">
                <button data-testid="card-add-second" on:click=move |_| {
                    edit_card(page, written, l, |c| c.second = Some(CardSnapshot::blank(l)));
                    // Not the form's own edit: the form is redrawn with the snapshot's fields.
                    written.0.set_value(None);
                    page.progress.update(|_| {});
                }>{if zh { "添加第二个门槛（同一份记录，例如 0.5 秒）" } else { "Add a second threshold (the same trace, e.g. 0.5 s)" }}</button>
            </div>
        }
        .into_any();
    };
    let stated = second.choices.get("t").cloned().unwrap_or_default();
    view! {
        <fieldset class="card-second" data-testid="card-second">
            <legend>{if zh { "第二组设置：同一份记录，另一个 TTFT 门槛" } else { "Second snapshot: the same trace, another TTFT threshold" }}</legend>
            <label class="card-choice">
                <span>{pair_label("t").get(l).to_string()}</span>
                <input type="text" inputmode="decimal" data-testid="card-second-t" placeholder=w(l, "not_stated") prop:value=stated
                    on:change=move |e| {
                        let v = event_target_value(&e).trim().to_string();
                        edit_card(page, written, l, |c| if let Some(s) = c.second.as_mut() {
                            if v.is_empty() { s.choices.remove("t"); } else { s.choices.insert("t".into(), v); }
                        });
                    } />
            </label>
            {second.results.iter().enumerate().map(|(i, r)| view! {
                <label class="card-part">
                    <span>{r.name.clone()}" "<small>{r.unit.clone()}</small></span>
                    <input type="text" data-testid=format!("card-second-value-{i}") prop:value=r.value.clone()
                        on:change=move |e| {
                            let v = event_target_value(&e);
                            edit_card(page, written, l, |c| if let Some(r) = c.second.as_mut().and_then(|s| s.results.get_mut(i)) { r.value = v; });
                        } />
                </label>
            }).collect_view()}
        </fieldset>
    }
    .into_any()
}

/// A number choice of the card (threshold, p, window, cost, currency): empty is "not stated".
fn choice_input(
    page: Page,
    written: Written,
    card: &MetricCard,
    key: &'static str,
    l: Lang,
) -> impl IntoView {
    let value = card.choices.get(key).cloned().unwrap_or_default();
    view! {
        <label class="card-choice">
            <span>{pair_label(key).get(l).to_string()}</span>
            <input type="text" inputmode=if key == "cur" { "text" } else { "decimal" } data-testid=format!("card-choice-{key}")
                placeholder=w(l, "not_stated") prop:value=value
                on:change=move |e| {
                    let v = event_target_value(&e).trim().to_string();
                    edit_card(page, written, l, |c| { if v.is_empty() { c.choices.remove(key); } else { c.choices.insert(key.to_string(), v); } });
                } />
        </label>
    }
}

/// A review, one line per choice, count and figure: mark, what the card says, what the core
/// computes and why. In teacher mode only the marks: the core's figures are answers. A line
/// whose figure the lab beside hides (the lesson still asks for it) shows its mark and what the
/// card says, not the core's figure.
#[component]
fn ReviewList(review: CardReview, title: &'static str, testid: &'static str) -> impl IntoView {
    let page = use_page();
    let teacher = page.teacher;
    move || {
        let l = page.lang.get();
        let hidden = hidden_now(page);
        let colon = if l == Lang::Zh { "：" } else { ": " };
        let count = |a| review.count(a).to_string();
        let counts = w(l, "review_counts")
            .replace("{a}", &count(Agreement::Agrees))
            .replace("{d}", &count(Agreement::Differs))
            .replace("{n}", &count(Agreement::NotWritten))
            .replace("{r}", &count(Agreement::ForAReader));
        view! {
            <div class="card-review" data-testid=testid>
                <h3>{w(l, title)}</h3>
                <p class="hint" data-testid=format!("{testid}-counts")>{counts}</p>
                {teacher.then(|| view! { <p class="hint">{w(l, "teacher_review")}</p> })}
                <ul>
                    {review.lines.iter().map(|line| {
                        let held = hidden.holds_line(&line.id);
                        view! {
                        <li class=format!("review-line {}", line.agreement.code()) data-id=line.id.clone() data-agreement=line.agreement.code()>
                            <span class="mark" aria-hidden="true">{line.agreement.mark()}</span>" "
                            <strong>{line.label.get(l).to_string()}</strong>
                            {(!line.card_says.en.is_empty()).then(|| view! { " · "{w(l, "card_says")}{colon}<q>{line.card_says.get(l).to_string()}</q> })}
                            {(!teacher && !held).then(|| view! {
                                " · "{w(l, "core_says")}{colon}<q>{line.core.get(l).to_string()}</q>
                                <br /><small>{line.why.get(l).to_string()}</small>
                            })}
                            {(!teacher && held).then(|| view! { " · "<small data-testid="review-held">{w(l, "lab_hidden")}</small> })}
                        </li>
                    }}).collect_view()}
                </ul>
            </div>
        }
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
