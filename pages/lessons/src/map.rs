//! A `draw_map` exercise: the learner's own system map, written as ordered steps with roles, a
//! failure point, a sample point and its clock, and the training variant; exported and imported
//! as a JSON file like the card, and checked by the course crate for the parts the seed asks for
//! (`SystemMap::problems`, through `tracelab_course::check`).

use leptos::prelude::*;
use tracelab_core::text::Text;
use tracelab_core::Lang;
use tracelab_course::{Answer, Feedback, MapStep, SystemMap, MAP_CLOCKS, MAP_ROLES};

use crate::page::use_page;
use crate::words::w;

fn tx(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}

/// Which list of steps an editor edits.
#[derive(Clone, Copy, PartialEq)]
enum Path {
    Serving,
    Training,
}

fn steps_mut(m: &mut SystemMap, path: Path) -> &mut Vec<MapStep> {
    match path {
        Path::Serving => &mut m.steps,
        Path::Training => &mut m.training,
    }
}

fn steps_of(m: &SystemMap, path: Path) -> &Vec<MapStep> {
    match path {
        Path::Serving => &m.steps,
        Path::Training => &m.training,
    }
}

/// One edit of a list of steps.
type StepsEdit = Box<dyn FnOnce(&mut Vec<MapStep>)>;

/// One ordered list of steps: a name and a role each, removable, and a button to add one. The
/// rows are drawn again only when their number changes, so typing keeps its focus.
fn steps_editor(
    map: RwSignal<SystemMap>,
    feedback: RwSignal<Option<Feedback>>,
    path: Path,
    id: &'static str,
) -> impl IntoView {
    let page = use_page();
    let count = Memo::new(move |_| map.with(|m| steps_of(m, path).len()));
    let edit = move |f: StepsEdit| {
        feedback.set(None);
        map.update(|m| f(steps_mut(m, path)));
    };
    view! {
        <ol class="map-steps" data-testid=format!("map-{id}")>
            {move || {
                let l = page.lang.get();
                (0..count.get()).map(|i| {
                    let (name, role) = untrack(|| map.with(|m| steps_of(m, path).get(i).map(|s| (s.name.clone(), s.role.clone())).unwrap_or_default()));
                    view! {
                        <li class="map-step">
                            <input type="text" data-testid=format!("map-{id}-name-{i}") aria-label=format!("{} {}", tx("Step", "步骤").get(l), i + 1)
                                prop:value=name
                                on:change=move |e| { let v = event_target_value(&e); edit(Box::new(move |s| if let Some(s) = s.get_mut(i) { s.name = v; })); } />
                            <select data-testid=format!("map-{id}-role-{i}") aria-label=format!("{} {}", tx("Role of step", "步骤角色").get(l), i + 1)
                                on:change=move |e| { let v = event_target_value(&e); edit(Box::new(move |s| if let Some(s) = s.get_mut(i) { s.role = v; })); }>
                                <option value="" selected=role.is_empty()>{w(l, "choose")}</option>
                                {MAP_ROLES.iter().map(|(code, en, zh)| view! {
                                    <option value=*code selected=role == *code>{if l == Lang::Zh { *zh } else { *en }}</option>
                                }).collect_view()}
                            </select>
                            <button class="link" data-testid=format!("map-{id}-remove-{i}")
                                on:click=move |_| edit(Box::new(move |s| { if i < s.len() { s.remove(i); } }))>
                                {tx("Remove", "删除").get(l).to_string()}
                            </button>
                        </li>
                    }
                }).collect_view()
            }}
        </ol>
        <button data-testid=format!("map-{id}-add") on:click=move |_| edit(Box::new(|s| s.push(MapStep::default())))>
            {move || tx("Add a step", "添加一个步骤").get(page.lang.get()).to_string()}
        </button>
    }
}

/// A choice of one step of the serving path (by its place), for the failure and sample points.
fn step_choice(
    map: RwSignal<SystemMap>,
    feedback: RwSignal<Option<Feedback>>,
    label: Text,
    id: &'static str,
    get: fn(&SystemMap) -> Option<usize>,
    set: fn(&mut SystemMap, Option<usize>),
) -> impl IntoView {
    let page = use_page();
    view! {
        <label class="card-choice">
            <span>{move || label.get(page.lang.get()).to_string()}</span>
            {move || {
                let l = page.lang.get();
                let (steps, chosen) = map.with(|m| (m.steps.clone(), get(m)));
                view! {
                    <select data-testid=format!("map-{id}") on:change=move |e| {
                        feedback.set(None);
                        let v = event_target_value(&e).parse::<usize>().ok();
                        map.update(|m| set(m, v));
                    }>
                        <option value="" selected=chosen.is_none()>{w(l, "choose")}</option>
                        {steps.into_iter().enumerate().map(|(i, s)| view! {
                            <option value=i.to_string() selected=chosen == Some(i)>{format!("{}. {}", i + 1, s.name)}</option>
                        }).collect_view()}
                    </select>
                }
            }}
        </label>
    }
}

pub fn map_widget(
    previous: Option<Answer>,
    feedback: RwSignal<Option<Feedback>>,
    submit: impl Fn(Answer, Option<f64>) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    let page = use_page();
    let start = match previous {
        Some(Answer::Map { map }) => map,
        _ => SystemMap {
            steps: vec![MapStep::default(); 4],
            training: vec![MapStep::default(); 3],
            ..SystemMap::default()
        },
    };
    let map = RwSignal::new(start);
    // Bumped when a file replaces the whole map, so every field is drawn again from it.
    let loaded = RwSignal::new(0u32);
    let note = tx("How it fails there", "它在那里怎样失败");
    view! {
        <div class="map-editor" data-testid="map-editor">
            {move || {
                loaded.get();
                let l = page.lang.get();
                let failure_note = untrack(|| map.with(|m| m.failure_note.clone()));
                let clock = untrack(|| map.with(|m| m.clock.clone()));
                view! {
                    <h4>{tx("The serving path, in order", "服务路径（按顺序）").get(l).to_string()}</h4>
                    {steps_editor(map, feedback, Path::Serving, "steps")}
                    {step_choice(map, feedback, tx("Failure point", "失败点"), "failure", |m| m.failure, |m, v| m.failure = v)}
                    <label class="card-choice">
                        <span>{note.get(l).to_string()}</span>
                        <input type="text" data-testid="map-failure-note" prop:value=failure_note
                            on:change=move |e| { feedback.set(None); let v = event_target_value(&e); map.update(|m| m.failure_note = v); } />
                    </label>
                    {step_choice(map, feedback, tx("Where you sample", "在哪里采样"), "sample", |m| m.sample, |m, v| m.sample = v)}
                    <label class="card-choice">
                        <span>{tx("On which clock", "读哪个时钟").get(l).to_string()}</span>
                        <select data-testid="map-clock" on:change=move |e| { feedback.set(None); let v = event_target_value(&e); map.update(|m| m.clock = v); }>
                            <option value="" selected=clock.is_empty()>{w(l, "choose")}</option>
                            {MAP_CLOCKS.iter().map(|(code, en, zh)| view! {
                                <option value=*code selected=clock == *code>{if l == Lang::Zh { *zh } else { *en }}</option>
                            }).collect_view()}
                        </select>
                    </label>
                    <h4>{tx("The training variant, in order", "训练时的路径（按顺序）").get(l).to_string()}</h4>
                    {steps_editor(map, feedback, Path::Training, "training")}
                }
            }}
            <div class="card-actions">
                <button class="check" data-testid="check" on:click=move |_| submit(Answer::Map { map: map.get_untracked() }, None)>
                    {move || w(page.lang.get(), "check")}
                </button>
                <button data-testid="map-json" on:click=move |_| {
                    let json = map.with_untracked(SystemMap::to_json);
                    let _ = tracelab_web::download("system-map.json", "application/json", &json);
                }>{move || tx("Export my map (JSON)", "导出我的系统图（JSON）").get(page.lang.get()).to_string()}</button>
            </div>
            <label style="display: block; margin: .3rem 0">{move || tx("Import a map from a file", "从文件导入系统图").get(page.lang.get()).to_string()}<br />
                <input type="file" style="max-width: 100%" accept=".json,application/json" data-testid="map-import" on:change=move |e| page.read_chosen_file(&e, move |name, text| {
                    match SystemMap::from_json(&text) {
                        Ok(m) => { page.error.set(None); feedback.set(None); map.set(m); loaded.update(|n| *n += 1); }
                        Err(e) => page.error.set(Some(e.in_file(name).to_string())),
                    }
                }) />
            </label>
        </div>
    }
}
