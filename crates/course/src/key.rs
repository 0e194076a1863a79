//! The teacher's answer key, apart from the lesson a class sees: every exercise's answer, the
//! numbers computed by the core on the exercise's own sample and the ratio parts taken from the
//! core's labels (as [`answer_key`] and [`ratio_parts`] give them to the checks), never typed in.
//! Also what the lab beside a lesson hides until the learner has answered ([`lab_hidden`]).

use std::collections::BTreeSet;
use std::ops::Deref;

use tracelab_core::format::trim_num;
use tracelab_core::text::{Lang, Text};
use tracelab_core::trace::Trace;

use crate::card::{CardResult, MetricCard};
use crate::course::{Course, Lesson};
use crate::exercise::{Exercise, ExerciseKind};
use crate::feedback::Audience;
use crate::metric::{answer_key, currency_for, AnswerUnit, LessonMetric};
use crate::pick::refuting_rows;
use crate::progress::Progress;
use crate::ratio::{ratio_parts, PartOption};
use crate::{t, CORE_OPTION};

/// One line of the answer key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyEntry {
    pub lesson: u32,
    pub exercise: String,
    pub prompt: Text,
    /// The answer, or why the core could not give it (its sample missing, a figure undefined).
    pub answer: Result<Text, Text>,
    /// The course's explanation (for a free-text exercise, its model answer).
    pub explain: Option<Text>,
}

/// The samples the answer key reads (number and ratio-parts exercises'), each once.
pub fn key_samples(course: &Course) -> BTreeSet<String> {
    course
        .exercises()
        .filter_map(|(_, e)| sample_of(e).map(str::to_string))
        .collect()
}

fn sample_of(e: &Exercise) -> Option<&str> {
    match &e.kind {
        ExerciseKind::Number(n) => Some(&n.sample),
        ExerciseKind::RatioParts(r) => Some(&r.sample),
        ExerciseKind::PickRows(p) => Some(&p.sample),
        _ => None,
    }
}

/// Every exercise's answer in course order. `sample` gives a loaded sample by file name.
pub fn answer_sheet<T: Deref<Target = Trace>>(
    course: &Course,
    sample: impl Fn(&str) -> Option<T>,
) -> Vec<KeyEntry> {
    course
        .exercises()
        .map(|(lesson, e)| {
            let trace = sample_of(e).and_then(&sample);
            KeyEntry {
                lesson: lesson.number,
                exercise: e.id.clone(),
                prompt: e.prompt.clone(),
                answer: key_answer(e, trace.as_deref()),
                explain: e.explain.clone(),
            }
        })
        .collect()
}

/// One exercise's answer as the key writes it.
pub fn key_answer(e: &Exercise, trace: Option<&Trace>) -> Result<Text, Text> {
    let need = |name: &str| {
        Text::new(
            format!("the sample `{name}` is not loaded, so the core cannot compute this answer"),
            format!("样本 `{name}` 未加载，核心无法计算这个答案"),
        )
    };
    match &e.kind {
        ExerciseKind::Number(n) => {
            let trace = trace.ok_or_else(|| need(&n.sample))?;
            let value = answer_key(e, trace).ok_or_else(|| {
                t("the core gives no figure for it on its sample (undefined)", "核心在它的样本上算不出这个指标（无定义）")
            })?;
            let currency = currency_for(trace, &n.settings);
            let unit = |lang: Lang| AnswerUnit::from_code(&n.unit).map(|u| u.label(&currency, lang)).unwrap_or_default();
            let with = |lang: Lang| {
                let u = unit(lang);
                if u.is_empty() { trim_num(value) } else { format!("{} {u}", trim_num(value)) }
            };
            Ok(Text::new(with(Lang::En), with(Lang::Zh)))
        }
        ExerciseKind::Choice(c) => {
            let right: Vec<&Text> = c.options.iter().filter(|o| o.correct).map(|o| &o.text).collect();
            Ok(Text::new(
                right.iter().map(|o| o.en.as_str()).collect::<Vec<_>>().join("; "),
                right.iter().map(|o| o.zh.as_str()).collect::<Vec<_>>().join("；"),
            ))
        }
        ExerciseKind::RatioParts(r) => {
            let trace = trace.ok_or_else(|| need(&r.sample))?;
            let view = ratio_parts(e, trace).ok_or_else(|| t("the core has no labels for this figure", "核心没有这个指标的标签"))?;
            let core = |options: &[PartOption]| options.iter().find(|o| o.id == CORE_OPTION).map(|o| o.text.clone()).unwrap_or_else(|| t("?", "？"));
            let (num, den, unit) = (core(&view.numerator), core(&view.denominator), core(&view.unit));
            Ok(Text::new(
                format!("numerator: {}; denominator: {}; unit: {}", num.en, den.en, unit.en),
                format!("分子：{}；分母：{}；单位：{}", num.zh, den.zh, unit.zh),
            ))
        }
        ExerciseKind::PickRows(p) => {
            let trace = trace.ok_or_else(|| need(&p.sample))?;
            let rows = refuting_rows(e, trace).ok_or_else(|| t("the sample has no GPU samples to check against", "样本没有可供核对的 GPU 采样"))?;
            let ids = rows.into_iter().collect::<Vec<_>>().join(", ");
            Ok(Text::new(
                format!("at least {} of these rows (slow while the GPU averaged {} % or more): {ids}", p.min_rows, trim_num(p.busy_pct)),
                format!("这些行中至少 {} 行（GPU 平均利用率不低于 {}% 时变慢）：{ids}", p.min_rows, trim_num(p.busy_pct)),
            ))
        }
        ExerciseKind::DrawMap(d) => Ok(Text::new(
            format!("the learner's own map, checked for its required parts: at least {} steps with data, device and output in order, a failure point and how it fails, a sample point on the client's clock, a training variant with data, device and checkpoint", d.min_steps),
            format!("学习者自己画的图，按要求的部分检查：至少 {} 个步骤，数据、设备、输出依次出现；一个失败点及其失败方式；一个在客户端时钟上的采样点；一条包括数据、设备和检查点的训练路径", d.min_steps),
        )),
        ExerciseKind::FreeText(f) => Ok(Text::new(
            format!("judged by the teacher: at least {} checklist items and {} characters; the model answer below", f.min_checked, f.min_chars),
            format!("由教师评判：至少勾选 {} 项、写 {} 个字符；参考答案见下", f.min_checked, f.min_chars),
        )),
    }
}

/// What the lab beside `lesson` must not show yet, for every number exercise whose figure is not
/// open ([`Progress::figure_open`]); a teacher's page hides them all, always. Every place the lab
/// shows the asked figure, not only its card:
/// * the figure cards and the strip ([`LessonMetric::lab_figures`]; on a sample of one attempt
///   also the percentiles equal to the asked one, [`LessonMetric::single_attempt_figures`]);
/// * the row's own TTFT, E2E or gaps, when the sample has one attempt (its time is the answer);
/// * every percentile the charts label (the TTFT chart's tail line, the histogram's markers, the
///   run checks), when a TTFT or E2E percentile is hidden;
/// * the running figures so far, when one of theirs (joint rate, failure rate, TTFT P50, tail)
///   is hidden;
/// * every verdict (the table's column and reasons, the row colours in the table and the charts,
///   the tally), when an exercise asks how many qualify or what share does;
/// * the failure counts the charts print, when an exercise asks how many failed.
///
/// `attempts` gives a loaded sample's attempt count.
pub fn lab_hidden(
    lesson: &Lesson,
    progress: &Progress,
    audience: Audience,
    attempts: impl Fn(&str) -> Option<usize>,
) -> LabHidden {
    let mut out = LabHidden::default();
    for e in &lesson.exercises {
        let ExerciseKind::Number(n) = &e.kind else {
            continue;
        };
        if audience == Audience::Learner && progress.figure_open(&e.id) {
            continue;
        }
        let Some(metric) = LessonMetric::from_code(&n.metric) else {
            continue;
        };
        out.figures.extend(metric.lab_figures().iter().copied());
        if attempts(&n.sample) == Some(1) {
            out.figures
                .extend(metric.single_attempt_figures().iter().copied());
            out.row_ttft |= metric.is_row_ttft();
            out.row_e2e |= metric.is_row_e2e();
            out.row_gaps |= metric.is_row_gap();
        }
        out.verdicts |= metric.counts_verdicts();
        out.failures |= metric.counts_failures();
    }
    let any = |keys: &[&str]| keys.iter().any(|k| out.figures.contains(k));
    out.percentiles = any(&["ttft_p50", "ttft_p95", "ttft_tail", "e2e_p50", "e2e_tail"]);
    out.running = any(&[
        "joint_rate",
        "failure_rate",
        "ttft_p50",
        "ttft_p95",
        "ttft_tail",
    ]);
    out
}

/// See [`lab_hidden`]: each field is one kind of place in the lab.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabHidden {
    /// The figure cards (and the strip's figures) by key.
    pub figures: BTreeSet<&'static str>,
    /// The one row's TTFT (table, "why" panel, the request's timeline label).
    pub row_ttft: bool,
    /// The one row's E2E (the request's timeline label).
    pub row_e2e: bool,
    /// The one row's gaps between events (the request's timeline labels).
    pub row_gaps: bool,
    /// The percentiles the charts label and the run checks repeat.
    pub percentiles: bool,
    /// The running figures over the rows so far.
    pub running: bool,
    /// Every verdict: which rows qualify, by word or by colour.
    pub verdicts: bool,
    /// The failure counts the charts print.
    pub failures: bool,
}

impl LabHidden {
    pub fn is_empty(&self) -> bool {
        *self == LabHidden::default()
    }

    /// Whether a line of a card's check against the lab ([`crate::CardLine::id`]) would show
    /// what the lab hides: a hidden figure, the TTFT sample size while a TTFT percentile is
    /// hidden (n is its rank's base), or the attempts line (its successes and failures) while
    /// the failure count, the failure rate or a TTFT percentile is.
    pub fn holds_line(&self, id: &str) -> bool {
        match id.split_once(':') {
            Some(("figure", key)) => self.figures.contains(key),
            Some(("field", "sample_count")) => self.figures.contains("ttft_p50"),
            Some(("field", "attempts")) => {
                self.failures
                    || self.figures.contains("failure_rate")
                    || self.figures.contains("ttft_p50")
            }
            _ => false,
        }
    }

    /// A card pre-filled from the lab, with what the lab hides left for the learner to write:
    /// each hidden figure's value, parts, method and interval, and the count fields that give
    /// one away ([`LabHidden::holds_line`]) keep what the learner's own card (`own`) says there,
    /// or stay empty. Returns the names of what was held back.
    pub fn hold_back(&self, card: &mut MetricCard, own: Option<&MetricCard>) -> Vec<String> {
        let mut held = self.hold_results(&mut card.results, own.map(|c| &c.results[..]));
        // The second snapshot (another threshold) is figures of the same lab: held alike, so a
        // pre-fill cannot give an open exercise's figure away under the other threshold.
        if let Some(second) = card.second.as_mut() {
            let mine = own.and_then(|c| c.second.as_ref()).map(|s| &s.results[..]);
            let label = second_label(card.lang);
            held.extend(
                self.hold_results(&mut second.results, mine)
                    .into_iter()
                    .map(|name| format!("{name} ({label})")),
            );
        }
        for field in ["sample_count", "attempts"] {
            if self.holds_line(&format!("field:{field}")) {
                let mine = own
                    .and_then(|c| c.field(field))
                    .cloned()
                    .unwrap_or_default();
                if let Some(slot) = card.field_mut(field) {
                    *slot = mine;
                    held.push(MetricCard::label(field).get(card.lang).to_string());
                }
            }
        }
        held
    }

    /// Each hidden figure among `results` keeps what the learner's own rows (`own`) say for
    /// it — value, parts, method, interval — or is emptied. Returns the names held back.
    fn hold_results(&self, results: &mut [CardResult], own: Option<&[CardResult]>) -> Vec<String> {
        let mut held = Vec::new();
        for r in results {
            if self.holds_line(&format!("figure:{}", r.key)) {
                let mine = own
                    .and_then(|rows| rows.iter().find(|o| o.key == r.key))
                    .cloned()
                    .unwrap_or_default();
                r.value = mine.value;
                r.numerator = mine.numerator;
                r.denominator = mine.denominator;
                r.method = mine.method;
                r.interval = mine.interval;
                held.push(r.name.clone());
            }
        }
        held
    }
}

/// How a held figure of the card's second snapshot is named in the pre-fill's note.
fn second_label(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "second threshold",
        Lang::Zh => "第二个门槛",
    }
}
