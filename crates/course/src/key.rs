//! The teacher's answer key, apart from the lesson a class sees: every exercise's answer, the
//! numbers computed by the core on the exercise's own sample and the ratio parts taken from the
//! core's labels (as [`answer_key`] and [`ratio_parts`] give them to the checks), never typed in.
//! Also what the lab beside a lesson hides until the learner has answered ([`lab_hidden`]).

use std::collections::BTreeSet;
use std::ops::Deref;

use tracelab_core::format::trim_num;
use tracelab_core::text::{Lang, Text};
use tracelab_core::trace::Trace;

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

/// What the lab beside `lesson` must not show yet: the figure cards ([`LessonMetric::lab_figures`])
/// of every number exercise whose figure is not open ([`Progress::figure_open`]); a teacher's page
/// hides them all, always. `row_ttft` when one of them is a TTFT percentile of a one-attempt sample
/// (its row's TTFT is the answer). `attempts` gives a loaded sample's attempt count.
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
        if metric.is_row_ttft() && attempts(&n.sample) == Some(1) {
            out.row_ttft = true;
        }
    }
    out
}

/// See [`lab_hidden`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabHidden {
    pub figures: BTreeSet<&'static str>,
    pub row_ttft: bool,
}

impl LabHidden {
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty() && !self.row_ttft
    }
}
