//! What a teacher can break by hand, found before a learner does: markers that point nowhere, unknown samples, metrics and settings, choices without exactly one right answer, missing translations ([`Course::validate`]); and every stated answer recomputed by the core ([`Course::verify`]).

use std::collections::{HashMap, HashSet};

use tracelab_core::format::trim_num;
use tracelab_core::text::Text;
use tracelab_core::trace::Trace;

use crate::card::MetricCard;
use crate::course::{settings_for, Course};
use crate::exercise::Pairs;
use crate::exercise::{Exercise, ExerciseKind};
use crate::markdown::markers;
use crate::metric::{answer_key, computed, AnswerUnit, LessonMetric};
use crate::pick::refuting_rows;
use crate::ratio::ratio_parts;
use crate::svg::svg_ids;
use crate::CORE_OPTION;

impl Course {
    /// What is wrong with the course, one sentence each (empty when nothing is).
    ///
    /// `file_of` returns the text of a file the course names: a lesson's Markdown (relative to
    /// `lessons/`) or a diagram (relative to `public/lessons/`). `sample_names` are the files under
    /// `public/samples/`.
    pub fn validate(
        &self,
        file_of: impl Fn(&str) -> Option<String>,
        sample_names: &[&str],
    ) -> Vec<String> {
        let mut out = Vec::new();
        let mut ids: HashMap<String, &str> = HashMap::new();
        let mut claim = |out: &mut Vec<String>, id: &str, what: &'static str| {
            if id.trim().is_empty() {
                out.push(format!("a {what} has an empty id"));
            } else if let Some(prev) = ids.insert(id.to_string(), what) {
                out.push(format!("the id `{id}` is used twice (a {prev} and a {what}); ids must be unique in the course"));
            }
        };
        let text_ok = |out: &mut Vec<String>, place: &str, text: &Text| {
            if text.en.trim().is_empty() {
                out.push(format!("{place}: the English text is missing"));
            }
            if text.zh.trim().is_empty() {
                out.push(format!("{place}: the Chinese text is missing"));
            }
        };
        let pairs_ok = |out: &mut Vec<String>, place: &str, pairs: &Pairs| {
            for p in pairs.problems() {
                out.push(format!("{place}: {p}"));
            }
        };
        let sample_ok = |out: &mut Vec<String>, place: &str, sample: &str| {
            if !sample_names.contains(&sample) {
                out.push(format!(
                    "{place}: unknown sample `{sample}` (known: {})",
                    sample_names.join(", ")
                ));
            }
        };
        if self.lessons.is_empty() {
            out.push("the course has no lessons".into());
        }
        for (i, lesson) in self.lessons.iter().enumerate() {
            let lp = format!("lesson `{}`", lesson.id);
            claim(&mut out, &lesson.id, "lesson");
            if lesson.number as usize != i + 1 {
                out.push(format!(
                    "{lp}: number {} but it is lesson {} in course order",
                    lesson.number,
                    i + 1
                ));
            }
            text_ok(&mut out, &format!("{lp}, title"), &lesson.title);
            if let Some(s) = &lesson.summary {
                text_ok(&mut out, &format!("{lp}, summary"), s);
            }
            text_ok(&mut out, &format!("{lp}, text"), &lesson.text);
            for step in &lesson.steps {
                let sp = format!("{lp}, step `{}`", step.id);
                claim(&mut out, &step.id, "step");
                text_ok(&mut out, &format!("{sp}, label"), &step.label);
                pairs_ok(&mut out, &sp, &step.settings);
                match (&step.sample, &step.diagram) {
                    (None, None) => {
                        out.push(format!("{sp}: a step needs a `sample` or a `diagram`"))
                    }
                    (Some(s), _) => sample_ok(&mut out, &sp, s),
                    _ => {}
                }
                if let Some(d) = &step.diagram {
                    if file_of(d).is_none() {
                        out.push(format!("{sp}: the diagram `{d}` does not exist"));
                    }
                }
                if step.row == Some(0) {
                    out.push(format!("{sp}: rows are counted from 1"));
                }
                if step.row.is_some() && step.sample.is_none() {
                    out.push(format!("{sp}: a `row` needs a `sample`"));
                }
                if let Some(f) = &step.focus {
                    if LessonMetric::from_code(f).is_none() {
                        out.push(format!(
                            "{sp}: unknown metric `{f}` in `focus` (known: {})",
                            metric_codes()
                        ));
                    }
                }
            }
            for e in &lesson.exercises {
                let ep = format!("{lp}, exercise `{}`", e.id);
                claim(&mut out, &e.id, "exercise");
                text_ok(&mut out, &format!("{ep}, prompt"), &e.prompt);
                for (name, text) in [("hint", &e.hint), ("explain", &e.explain)] {
                    if let Some(text) = text {
                        text_ok(&mut out, &format!("{ep}, {name}"), text);
                    }
                }
                validate_kind(&mut out, &ep, e, &file_of, &sample_ok, &pairs_ok, &text_ok);
            }
            // The texts: every marker resolves to this lesson's steps and exercises, and every
            // step and exercise is placed in both languages.
            for (lang, name) in [("English", &lesson.text.en), ("Chinese", &lesson.text.zh)] {
                if name.trim().is_empty() {
                    continue;
                }
                let Some(md) = file_of(name) else {
                    out.push(format!("{lp}: the {lang} text `{name}` does not exist"));
                    continue;
                };
                if md.trim().is_empty() {
                    out.push(format!("{lp}: the {lang} text `{name}` is empty"));
                }
                let (found, bad) = markers(&md);
                for b in bad {
                    out.push(format!("{name}, {b}"));
                }
                let mut placed: HashSet<(&str, String)> = HashSet::new();
                for m in &found {
                    if m.kind == "judge" {
                        sample_ok(
                            &mut out,
                            &format!("{name}, line {}: [[judge:{}]]", m.line, m.id),
                            &m.id,
                        );
                        continue;
                    }
                    if m.kind == "worked" {
                        // Predict, then reveal: each exercise a worked answer waits for is this
                        // lesson's and is placed above it.
                        for id in crate::markdown::worked_exercises(&m.id) {
                            let above = found
                                .iter()
                                .any(|e| e.kind == "exercise" && e.id == id && e.line < m.line);
                            if !lesson.exercises.iter().any(|e| e.id == id) {
                                out.push(format!("{name}, line {}: [[worked:{}]] waits for `{id}`, which is no exercise of lesson `{}`", m.line, m.id, lesson.id));
                            } else if !above {
                                out.push(format!("{name}, line {}: [[worked:{}]] comes before exercise `{id}`: place the exercise first (predict, then reveal)", m.line, m.id));
                            }
                        }
                        continue;
                    }
                    let exists = match m.kind {
                        "step" => lesson.steps.iter().any(|s| s.id == m.id),
                        _ => lesson.exercises.iter().any(|e| e.id == m.id),
                    };
                    if !exists {
                        let elsewhere = match m.kind {
                            "step" => self.step(&m.id).map(|(l, _)| l.id.clone()),
                            _ => self
                                .exercises()
                                .find(|(_, e)| e.id == m.id)
                                .map(|(l, _)| l.id.clone()),
                        };
                        out.push(match elsewhere {
                            Some(other) => format!(
                                "{name}, line {}: [[{}:{}]] belongs to lesson `{other}`, not to `{}`",
                                m.line, m.kind, m.id, lesson.id
                            ),
                            None => format!(
                                "{name}, line {}: [[{}:{}]] points to no {} of lesson `{}`",
                                m.line, m.kind, m.id, m.kind, lesson.id
                            ),
                        });
                    }
                    placed.insert((m.kind, m.id.clone()));
                }
                for s in &lesson.steps {
                    if !placed.contains(&("step", s.id.clone())) {
                        out.push(format!(
                            "{name}: step `{}` is never placed (add a line [[step:{}]])",
                            s.id, s.id
                        ));
                    }
                }
                for e in &lesson.exercises {
                    if !placed.contains(&("exercise", e.id.clone())) {
                        out.push(format!(
                            "{name}: exercise `{}` is never placed (add a line [[exercise:{}]])",
                            e.id, e.id
                        ));
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        for item in &self.self_check {
            if !seen.insert(item.id.as_str()) || item.id.trim().is_empty() {
                out.push(format!(
                    "self-check item `{}`: ids must be unique and not empty",
                    item.id
                ));
            }
            text_ok(
                &mut out,
                &format!("self-check item `{}`", item.id),
                &item.text,
            );
        }
        let mut seen = HashSet::new();
        for field in &self.card_fields {
            if !MetricCard::FIELDS.contains(&field.id.as_str()) {
                out.push(format!(
                    "card field `{}`: not a field of the metric card (known: {})",
                    field.id,
                    MetricCard::FIELDS.join(", ")
                ));
            }
            if !seen.insert(field.id.as_str()) {
                out.push(format!("card field `{}` is listed twice", field.id));
            }
            text_ok(
                &mut out,
                &format!("card field `{}`, help", field.id),
                &field.help,
            );
        }
        if !self.card_fields.is_empty() {
            for f in MetricCard::FIELDS {
                if !seen.contains(f) {
                    out.push(format!("card field `{f}` has no help"));
                }
            }
        }
        out
    }

    /// Recomputes what the course states with the core: every `number` exercise's answer (and
    /// each mistake that names its settings) on its sample, every step's settings and row, every
    /// `ratio_parts` figure. `trace_of` reads a sample by name. Empty when all agree.
    pub fn verify(&self, trace_of: impl Fn(&str) -> Option<Trace>) -> Vec<String> {
        let mut out = Vec::new();
        let mut cache: HashMap<String, Option<Trace>> = HashMap::new();
        let mut trace = |name: &str| {
            cache
                .entry(name.to_string())
                .or_insert_with(|| trace_of(name))
                .clone()
        };
        for lesson in &self.lessons {
            for step in &lesson.steps {
                let Some(sample) = &step.sample else { continue };
                let place = format!("step `{}`", step.id);
                let Some(tr) = trace(sample) else {
                    out.push(format!("{place}: the sample `{sample}` cannot be read"));
                    continue;
                };
                if let Err(e) = settings_for(&tr.header, &step.settings) {
                    out.push(format!("{place}: {e}"));
                }
                if let Some(row) = step.row {
                    if row == 0 || row > tr.attempts.len() {
                        out.push(format!(
                            "{place}: row {row} is outside the sample's {} rows",
                            tr.attempts.len()
                        ));
                    }
                }
            }
            for e in &lesson.exercises {
                let place = format!("exercise `{}`", e.id);
                match &e.kind {
                    ExerciseKind::Number(n) => {
                        let Some(tr) = trace(&n.sample) else {
                            out.push(format!("{place}: the sample `{}` cannot be read", n.sample));
                            continue;
                        };
                        if let Err(err) = settings_for(&tr.header, &n.settings) {
                            out.push(format!("{place}: {err}"));
                            continue;
                        }
                        let close =
                            |a: f64, b: f64| (a - b).abs() <= n.tolerance + 1e-9 * b.abs().max(1.0);
                        let Some(key) = answer_key(e, &tr) else {
                            out.push(format!(
                                "{place}: the core computes no `{}` in `{}` here (undefined)",
                                n.metric, n.unit
                            ));
                            continue;
                        };
                        if !close(n.answer, key) {
                            out.push(format!(
                                "{place}: the lesson says {} {} but the core computes {} on `{}`",
                                trim_num(n.answer),
                                n.unit,
                                trim_num(key),
                                n.sample
                            ));
                        }
                        for m in &n.mistakes {
                            if close(m.value, key) {
                                out.push(format!(
                                    "{place}: the mistake {} is within the tolerance of the right answer {}",
                                    trim_num(m.value),
                                    trim_num(key)
                                ));
                            }
                            if let Some(extra) = &m.settings {
                                match computed(&tr, &n.settings.merged(extra), &n.metric, &n.unit) {
                                    Some(v) if close(m.value, v) => {}
                                    Some(v) => out.push(format!(
                                        "{place}: the mistake says {} but the core computes {} under its settings",
                                        trim_num(m.value),
                                        trim_num(v)
                                    )),
                                    None => out.push(format!("{place}: the mistake {} is undefined under its settings", trim_num(m.value))),
                                }
                            }
                        }
                    }
                    ExerciseKind::RatioParts(p) => {
                        let Some(tr) = trace(&p.sample) else {
                            out.push(format!("{place}: the sample `{}` cannot be read", p.sample));
                            continue;
                        };
                        if ratio_parts(e, &tr).is_none() {
                            out.push(format!(
                                "{place}: the figure `{}` has no numerator and denominator on `{}`",
                                p.metric, p.sample
                            ));
                        }
                    }
                    ExerciseKind::PickRows(p) => {
                        let Some(tr) = trace(&p.sample) else {
                            out.push(format!("{place}: the sample `{}` cannot be read", p.sample));
                            continue;
                        };
                        match refuting_rows(e, &tr) {
                            None => out.push(format!(
                                "{place}: `{}` has no GPU samples on the run's clock to pick rows against",
                                p.sample
                            )),
                            Some(rows) if rows.len() < p.min_rows => out.push(format!(
                                "{place}: the core finds {} refuting rows on `{}`, fewer than `min_rows` {}",
                                rows.len(),
                                p.sample,
                                p.min_rows
                            )),
                            Some(_) => {}
                        }
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

fn metric_codes() -> String {
    LessonMetric::ALL
        .iter()
        .map(|m| m.code())
        .collect::<Vec<_>>()
        .join(", ")
}

#[allow(clippy::too_many_arguments)]
fn validate_kind(
    out: &mut Vec<String>,
    ep: &str,
    e: &Exercise,
    file_of: &impl Fn(&str) -> Option<String>,
    sample_ok: &impl Fn(&mut Vec<String>, &str, &str),
    pairs_ok: &impl Fn(&mut Vec<String>, &str, &Pairs),
    text_ok: &impl Fn(&mut Vec<String>, &str, &Text),
) {
    let unique = |out: &mut Vec<String>, what: &str, ids: Vec<&str>| {
        let mut seen = HashSet::new();
        for id in ids {
            if id.trim().is_empty() {
                out.push(format!("{ep}: a {what} has an empty id"));
            } else if !seen.insert(id) {
                out.push(format!("{ep}: the {what} id `{id}` is used twice"));
            }
        }
    };
    match &e.kind {
        ExerciseKind::Number(n) => {
            sample_ok(out, ep, &n.sample);
            pairs_ok(out, ep, &n.settings);
            let metric = LessonMetric::from_code(&n.metric);
            let unit = AnswerUnit::from_code(&n.unit);
            if metric.is_none() {
                out.push(format!(
                    "{ep}: unknown metric `{}` (known: {})",
                    n.metric,
                    metric_codes()
                ));
            }
            if unit.is_none() {
                let units: Vec<&str> = AnswerUnit::ALL.iter().map(|u| u.code()).collect();
                out.push(format!(
                    "{ep}: unknown unit `{}` (known: {})",
                    n.unit,
                    units.join(", ")
                ));
            }
            if let (Some(m), Some(u)) = (metric, unit) {
                if m.dimension() != u.dimension() {
                    out.push(format!(
                        "{ep}: `{}` cannot be written in `{}`",
                        n.metric, n.unit
                    ));
                }
            }
            if !(n.tolerance.is_finite() && n.tolerance >= 0.0 && n.answer.is_finite()) {
                out.push(format!(
                    "{ep}: `answer` and `tolerance` must be numbers, the tolerance 0 or more"
                ));
            }
            for (i, m) in n.mistakes.iter().enumerate() {
                text_ok(out, &format!("{ep}, mistakes[{i}]"), &m.explain);
                if let Some(p) = &m.settings {
                    pairs_ok(out, &format!("{ep}, mistakes[{i}]"), p);
                }
            }
        }
        ExerciseKind::Choice(c) => {
            unique(
                out,
                "option",
                c.options.iter().map(|o| o.id.as_str()).collect(),
            );
            let right = c.options.iter().filter(|o| o.correct).count();
            if c.options.len() < 2 {
                out.push(format!("{ep}: a choice needs at least two options"));
            }
            if !c.multiple && right != 1 {
                out.push(format!(
                    "{ep}: a choice needs exactly one correct option, found {right}"
                ));
            }
            if c.multiple && right == 0 {
                out.push(format!(
                    "{ep}: a multiple choice needs at least one correct option"
                ));
            }
            for o in &c.options {
                text_ok(out, &format!("{ep}, option `{}`", o.id), &o.text);
                text_ok(
                    out,
                    &format!("{ep}, option `{}`, explain", o.id),
                    &o.explain,
                );
            }
            if let Some(d) = &c.diagram {
                match file_of(d) {
                    None => out.push(format!("{ep}: the diagram `{d}` does not exist")),
                    Some(svg) => {
                        let ids = svg_ids(&svg);
                        for o in &c.options {
                            if !ids.contains(&o.id) {
                                out.push(format!(
                                    "{ep}: option `{}` is no element of the diagram `{d}`",
                                    o.id
                                ));
                            }
                        }
                    }
                }
            }
        }
        ExerciseKind::RatioParts(p) => {
            sample_ok(out, ep, &p.sample);
            pairs_ok(out, ep, &p.settings);
            match LessonMetric::from_code(&p.metric) {
                None => out.push(format!(
                    "{ep}: unknown metric `{}` (known: {})",
                    p.metric,
                    metric_codes()
                )),
                Some(m) if !m.is_ratio() => out.push(format!(
                    "{ep}: `{}` is not a ratio with a numerator and a denominator",
                    p.metric
                )),
                Some(_) => {}
            }
            for (part, list) in [
                ("numerator", &p.distractors.numerator),
                ("denominator", &p.distractors.denominator),
                ("unit", &p.distractors.unit),
            ] {
                if list.is_empty() {
                    out.push(format!("{ep}: the {part} needs at least one wrong option"));
                }
                let ids: Vec<&str> = list.iter().map(|d| d.id.as_str()).collect();
                if ids.contains(&CORE_OPTION) {
                    out.push(format!(
                        "{ep}: `{CORE_OPTION}` is reserved for the core's answer"
                    ));
                }
                unique(out, part, ids);
                for d in list {
                    text_ok(out, &format!("{ep}, {part} `{}`", d.id), &d.text);
                    text_ok(
                        out,
                        &format!("{ep}, {part} `{}`, explain", d.id),
                        &d.explain,
                    );
                }
            }
        }
        ExerciseKind::PickRows(p) => {
            sample_ok(out, ep, &p.sample);
            pairs_ok(out, ep, &p.settings);
            if !(p.busy_pct.is_finite() && p.busy_pct > 0.0 && p.busy_pct <= 100.0) {
                out.push(format!(
                    "{ep}: `busy_pct` must be a percentage above 0 and at most 100"
                ));
            }
            if p.min_rows == 0 {
                out.push(format!("{ep}: `min_rows` must be at least 1"));
            }
        }
        ExerciseKind::DrawMap(d) => {
            if d.min_steps < 2 {
                out.push(format!("{ep}: `min_steps` must be at least 2"));
            }
        }
        ExerciseKind::FreeText(f) => {
            unique(
                out,
                "checklist item",
                f.checklist.iter().map(|i| i.id.as_str()).collect(),
            );
            if f.min_checked > f.checklist.len() {
                out.push(format!(
                    "{ep}: `min_checked` {} is more than the {} checklist items",
                    f.min_checked,
                    f.checklist.len()
                ));
            }
            for i in &f.checklist {
                text_ok(out, &format!("{ep}, checklist item `{}`", i.id), &i.text);
            }
        }
    }
}
