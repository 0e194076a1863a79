//! The course: lessons a teacher edits as files — `lessons/course.json` (lessons, lab steps,
//! exercises, self-check, metric-card help) and one Markdown text per lesson and language — and
//! the checks that keep them honest: no lesson can state a number the metrics do not compute.
//!
//! * [`Course::parse`] reads `course.json`; an error names the field
//!   (`lessons[2].exercises[0].anwser: unknown field …`).
//! * [`Course::validate`] finds what a teacher can break by hand: a `[[step:…]]` or
//!   `[[exercise:…]]` marker that points nowhere, an unknown sample, metric or setting, a choice
//!   without exactly one right answer, a missing translation.
//! * [`Course::verify`] recomputes every stated answer with the core on its sample.
//! * [`answer_key`] and [`check`] give the lab an exercise's key and bilingual feedback;
//!   [`ratio_parts`] the options of a "name the numerator, denominator and unit" exercise, the
//!   right one taken from the core's [`Figure`] labels.
//! * [`MetricCard`] is the card a learner fills (pre-filled from the core); [`Progress`] what the
//!   lab keeps in localStorage and exports as a file.
//!
//! ```
//! use tracelab_core::lessons::{answer_key, check, Answer, Course};
//! use tracelab_core::parse::parse_trace;
//! let course = Course::parse(r#"{"version": 1, "lessons": [{"id": "l", "number": 1,
//!   "title": {"en": "Denominators", "zh": "分母"}, "text": {"en": "l.en.md", "zh": "l.zh.md"},
//!   "exercises": [{"id": "fail", "kind": "number", "prompt": {"en": "Failure rate?", "zh": "失败率？"},
//!     "sample": "t.csv", "metric": "failure_rate", "answer": 50, "unit": "%"}]}]}"#).unwrap();
//! let trace = parse_trace("t.csv", "id,outcome,ttft_s,quality\nR1,success,0.2,pass\nR2,connect_error,,not_evaluated\n").unwrap();
//! let exercise = course.exercise("fail").unwrap();
//! let key = answer_key(exercise, &trace);
//! assert_eq!(key, Some(50.0)); // 1 failure / 2 attempts, in %
//! assert!(check(exercise, &Answer::Number { value: 50.0 }, key).correct);
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::card;
use crate::error::ParseError;
use crate::figure::Figure;
use crate::format::{self, md_cell, trim_num};
use crate::metrics::Metrics;
use crate::settings::{FailureDenominator, Settings, PAIR_KEYS};
use crate::text::{Lang, Text};
use crate::trace::{Header, Trace, GPU_UNSUPPORTED};

/// The version of `course.json` this core reads.
pub const COURSE_VERSION: u32 = 1;
/// The `kind` of an exported [`Progress`] file.
pub const PROGRESS_KIND: &str = "tracelab.progress";
/// The `kind` of a learner's [`MetricCard`] file.
pub const CARD_KIND: &str = "tracelab.learner_card";
/// The option id of the core's own (right) answer in a [`ratio_parts`] exercise.
pub const CORE_OPTION: &str = "core";
/// A progress or card file larger than this is refused (localStorage holds about 5 MB).
pub const MAX_IMPORT_BYTES: usize = 4 * 1024 * 1024;

fn t(en: &str, zh: &str) -> Text {
    Text::new(en, zh)
}

// --- course.json ------------------------------------------------------------------------------

/// `lessons/course.json`: the lessons in order, the self-check and the metric card's help.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Course {
    /// Always [`COURSE_VERSION`].
    pub version: u32,
    pub lessons: Vec<Lesson>,
    /// The acceptance criteria the learner ticks at the end.
    #[serde(default)]
    pub self_check: Vec<SelfCheckItem>,
    /// Help for each field of the learner's [`MetricCard`], one entry per [`MetricCard::FIELDS`].
    #[serde(default)]
    pub card_fields: Vec<CardFieldHelp>,
}

/// One lesson: its title, its Markdown text per language, the lab steps and exercises the text
/// places with `[[step:ID]]` and `[[exercise:ID]]` lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub id: String,
    /// 1, 2, 3, … in course order.
    pub number: u32,
    pub title: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Text>,
    /// The Markdown file of each language, relative to `lessons/`.
    pub text: Text,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub exercises: Vec<Exercise>,
}

/// A lab binding: which sample to load (or which diagram to show), with which settings, and
/// which row to select. The settings are the sample's own (its header) with `settings` on top,
/// so a step always shows the same figures, whatever the learner changed before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub id: String,
    /// The button's words.
    pub label: Text,
    /// A file name under `public/samples/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
    /// A diagram under `public/lessons/` (e.g. `system-path.svg`) to show instead of, or beside,
    /// a sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagram: Option<String>,
    /// Short keys of [`Settings::to_pairs`]: `t`, `cmp`, `pm`, `p`, `fd`, `mt`, `wu`, `w`,
    /// `cost`, `cur`.
    #[serde(default, skip_serializing_if = "Pairs::is_empty")]
    pub settings: Pairs,
    /// The row to select, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<usize>,
    /// A metric key ([`LessonMetric`]) whose figure the lab highlights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

/// One acceptance criterion of the self-check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfCheckItem {
    pub id: String,
    pub text: Text,
}

/// The teacher's help for one field of the learner's metric card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardFieldHelp {
    /// One of [`MetricCard::FIELDS`].
    pub id: String,
    pub help: Text,
}

/// Settings as the short `key: value` pairs of [`Settings::to_pairs`]. In JSON a value may be
/// written as a string (`"0.5"`, `"le"`) or a number (`0.5`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Pairs(pub BTreeMap<String, String>);

impl Pairs {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// These pairs with `over` on top.
    pub fn merged(&self, over: &Pairs) -> Pairs {
        let mut out = self.0.clone();
        out.extend(over.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        Pairs(out)
    }

    /// What is wrong with these pairs: unknown keys and refused values.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (key, value) in self.iter() {
            if !PAIR_KEYS.contains(&key) {
                out.push(format!("unknown setting `{key}` (known: {})", PAIR_KEYS.join(", ")));
            } else if !Settings::default().apply_pairs([(key, value)]).is_empty() {
                out.push(format!("setting `{key}` cannot be `{value}`"));
            }
        }
        out
    }
}

impl<'de> Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Pairs, D::Error> {
        let map = BTreeMap::<String, Value>::deserialize(d)?;
        let mut out = BTreeMap::new();
        for (key, value) in map {
            let text = match value {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(D::Error::custom(format!(
                        "setting `{key}` must be a string or a number, found {}",
                        json_kind(&other)
                    )))
                }
            };
            out.insert(key, text);
        }
        Ok(Pairs(out))
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The settings a step or an exercise asks for on a sample: the sample's own (its header's
/// threshold, window, cost and SLO), then `pairs` on top. An unknown key or a refused value is an
/// error naming it.
pub fn settings_for(header: &Header, pairs: &Pairs) -> Result<Settings, String> {
    let problems = pairs.problems();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let mut settings = Settings::from_header(header);
    settings.apply_pairs(pairs.iter());
    settings.validate().map_err(|e| e.to_string())?;
    Ok(settings)
}

// --- exercises ---------------------------------------------------------------------------------

/// One exercise. In JSON its `kind` says which fields follow (see [`ExerciseKind`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawExercise", into = "RawExercise")]
pub struct Exercise {
    pub id: String,
    /// The question.
    pub prompt: Text,
    /// Shown on a wrong answer that matches no known mistake.
    pub hint: Option<Text>,
    /// Shown once the answer is right (for `free_text`: the model answer, shown after saving).
    pub explain: Option<Text>,
    pub kind: ExerciseKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExerciseKind {
    /// `"kind": "number"` — a figure recomputed by hand, checked against the core.
    Number(NumberExercise),
    /// `"kind": "choice"` — one right option (or, with `multiple`, a set of them).
    Choice(ChoiceExercise),
    /// `"kind": "ratio_parts"` — name a ratio's numerator, denominator and unit.
    RatioParts(RatioPartsExercise),
    /// `"kind": "free_text"` — the learner's text plus ticked checklist items.
    FreeText(FreeTextExercise),
}

impl ExerciseKind {
    pub fn code(&self) -> &'static str {
        match self {
            ExerciseKind::Number(_) => "number",
            ExerciseKind::Choice(_) => "choice",
            ExerciseKind::RatioParts(_) => "ratio_parts",
            ExerciseKind::FreeText(_) => "free_text",
        }
    }
}

/// A number the learner computes from a sample under given settings; the key is the core's.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberExercise {
    /// A file name under `public/samples/`.
    pub sample: String,
    pub settings: Pairs,
    /// A [`LessonMetric`] code, e.g. `ttft_p95_s`.
    pub metric: String,
    /// The answer as the lesson states it, in `unit`; a test checks it against the core.
    pub answer: f64,
    /// How far an answer may be from the key and still be right (in `unit`; default 0).
    pub tolerance: f64,
    /// An [`AnswerUnit`] code: `count`, `%`, `ratio`, `s`, `ms`, `/s`, `money`, `tokens/s`.
    pub unit: String,
    /// Known wrong answers, each explained.
    pub mistakes: Vec<NumberMistake>,
}

/// A wrong answer learners often give. With `settings`, the value is what the core computes under
/// the exercise's settings with these on top (e.g. `{"fd": "successes"}`), and a test checks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberMistake {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Pairs>,
    pub explain: Text,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChoiceExercise {
    pub options: Vec<ChoiceOption>,
    /// Several options may be right; the answer is right when exactly those are chosen.
    pub multiple: bool,
    /// A diagram under `public/lessons/` whose elements carry the options' ids: the learner
    /// marks them on the diagram (the lab should also offer the list, for keyboards and readers).
    pub diagram: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChoiceOption {
    pub id: String,
    pub text: Text,
    #[serde(default)]
    pub correct: bool,
    /// Why this option is right or wrong: the feedback when it is chosen.
    pub explain: Text,
}

/// Name the numerator, denominator and unit of a ratio. The right option of each part is the
/// core's own label for the figure (id [`CORE_OPTION`]); the course gives the wrong ones.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioPartsExercise {
    pub sample: String,
    pub settings: Pairs,
    /// A [`LessonMetric`] code whose figure is a ratio (`failure_rate`, `goodput_per_s`, …).
    pub metric: String,
    pub distractors: RatioDistractors,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioDistractors {
    pub numerator: Vec<Distractor>,
    pub denominator: Vec<Distractor>,
    pub unit: Vec<Distractor>,
}

/// A wrong option, with why it is wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distractor {
    pub id: String,
    pub text: Text,
    pub explain: Text,
}

/// The learner writes; nothing is judged automatically beyond "at least `min_checked` checklist
/// items ticked and at least `min_chars` characters written".
#[derive(Debug, Clone, PartialEq)]
pub struct FreeTextExercise {
    pub checklist: Vec<ChecklistItem>,
    pub min_checked: usize,
    pub min_chars: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChecklistItem {
    pub id: String,
    pub text: Text,
}

/// The JSON form of an exercise: every kind's fields, checked against the kind on conversion.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExercise {
    id: String,
    kind: String,
    prompt: Text,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hint: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    explain: Option<Text>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sample: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    settings: Option<Pairs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metric: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tolerance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mistakes: Option<Vec<NumberMistake>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    options: Option<Vec<ChoiceOption>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    multiple: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    diagram: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    distractors: Option<RatioDistractors>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checklist: Option<Vec<ChecklistItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_checked: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_chars: Option<usize>,
}

impl RawExercise {
    /// The kind-specific fields present.
    fn present(&self) -> Vec<&'static str> {
        let fields = [
            ("sample", self.sample.is_some()),
            ("settings", self.settings.is_some()),
            ("metric", self.metric.is_some()),
            ("answer", self.answer.is_some()),
            ("tolerance", self.tolerance.is_some()),
            ("unit", self.unit.is_some()),
            ("mistakes", self.mistakes.is_some()),
            ("options", self.options.is_some()),
            ("multiple", self.multiple.is_some()),
            ("diagram", self.diagram.is_some()),
            ("distractors", self.distractors.is_some()),
            ("checklist", self.checklist.is_some()),
            ("min_checked", self.min_checked.is_some()),
            ("min_chars", self.min_chars.is_some()),
        ];
        fields.into_iter().filter(|(_, p)| *p).map(|(f, _)| f).collect()
    }
}

/// The kinds and the fields each may carry.
const KIND_FIELDS: [(&str, &[&str]); 4] = [
    ("number", &["sample", "settings", "metric", "answer", "tolerance", "unit", "mistakes"]),
    ("choice", &["options", "multiple", "diagram"]),
    ("ratio_parts", &["sample", "settings", "metric", "distractors"]),
    ("free_text", &["checklist", "min_checked", "min_chars"]),
];

impl TryFrom<RawExercise> for Exercise {
    type Error = String;

    fn try_from(r: RawExercise) -> Result<Exercise, String> {
        let Some((_, allowed)) = KIND_FIELDS.iter().find(|(k, _)| *k == r.kind) else {
            let kinds: Vec<&str> = KIND_FIELDS.iter().map(|(k, _)| *k).collect();
            return Err(format!("exercise `{}`: unknown kind `{}` (known: {})", r.id, r.kind, kinds.join(", ")));
        };
        if let Some(stray) = r.present().into_iter().find(|f| !allowed.contains(f)) {
            return Err(format!("exercise `{}`: `{stray}` does not belong to a `{}` exercise", r.id, r.kind));
        }
        let need = |field: &str| format!("exercise `{}`: a `{}` exercise needs `{field}`", r.id, r.kind);
        let kind = match r.kind.as_str() {
            "number" => ExerciseKind::Number(NumberExercise {
                sample: r.sample.clone().ok_or_else(|| need("sample"))?,
                settings: r.settings.clone().unwrap_or_default(),
                metric: r.metric.clone().ok_or_else(|| need("metric"))?,
                answer: r.answer.ok_or_else(|| need("answer"))?,
                tolerance: r.tolerance.unwrap_or(0.0),
                unit: r.unit.clone().ok_or_else(|| need("unit"))?,
                mistakes: r.mistakes.clone().unwrap_or_default(),
            }),
            "choice" => ExerciseKind::Choice(ChoiceExercise {
                options: r.options.clone().ok_or_else(|| need("options"))?,
                multiple: r.multiple.unwrap_or(false),
                diagram: r.diagram.clone(),
            }),
            "ratio_parts" => ExerciseKind::RatioParts(RatioPartsExercise {
                sample: r.sample.clone().ok_or_else(|| need("sample"))?,
                settings: r.settings.clone().unwrap_or_default(),
                metric: r.metric.clone().ok_or_else(|| need("metric"))?,
                distractors: r.distractors.clone().ok_or_else(|| need("distractors"))?,
            }),
            _ => ExerciseKind::FreeText(FreeTextExercise {
                checklist: r.checklist.clone().ok_or_else(|| need("checklist"))?,
                min_checked: r.min_checked.unwrap_or(0),
                min_chars: r.min_chars.unwrap_or(1),
            }),
        };
        Ok(Exercise { id: r.id, prompt: r.prompt, hint: r.hint, explain: r.explain, kind })
    }
}

impl From<Exercise> for RawExercise {
    fn from(e: Exercise) -> RawExercise {
        let mut r = RawExercise {
            id: e.id,
            kind: e.kind.code().to_string(),
            prompt: e.prompt,
            hint: e.hint,
            explain: e.explain,
            ..RawExercise::default()
        };
        match e.kind {
            ExerciseKind::Number(n) => {
                r.sample = Some(n.sample);
                r.settings = (!n.settings.is_empty()).then_some(n.settings);
                r.metric = Some(n.metric);
                r.answer = Some(n.answer);
                r.tolerance = (n.tolerance != 0.0).then_some(n.tolerance);
                r.unit = Some(n.unit);
                r.mistakes = (!n.mistakes.is_empty()).then_some(n.mistakes);
            }
            ExerciseKind::Choice(c) => {
                r.options = Some(c.options);
                r.multiple = c.multiple.then_some(true);
                r.diagram = c.diagram;
            }
            ExerciseKind::RatioParts(p) => {
                r.sample = Some(p.sample);
                r.settings = (!p.settings.is_empty()).then_some(p.settings);
                r.metric = Some(p.metric);
                r.distractors = Some(p.distractors);
            }
            ExerciseKind::FreeText(f) => {
                r.checklist = Some(f.checklist);
                r.min_checked = Some(f.min_checked);
                r.min_chars = Some(f.min_chars);
            }
        }
        r
    }
}

// --- metrics an exercise may ask for ----------------------------------------------------------

/// What a figure is measured in, for checking an exercise's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dimension {
    Count,
    Ratio,
    Seconds,
    PerSecond,
    Money,
    TokensPerSecond,
}

/// The fixed list of figures an exercise or a step may name, by the keys of
/// `tracelab report --json` where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LessonMetric {
    Attempts,
    Successes,
    Failures,
    Qualified,
    TtftSamples,
    FailureRate,
    QualityPassRate,
    JointRate,
    BusinessSuccessRate,
    TtftP50,
    TtftP95,
    /// The tail percentile the settings choose (`p`), P95 by default.
    TtftTail,
    E2eP50,
    E2eTail,
    ItlP50,
    ItlTail,
    GoodputPerS,
    CostPer1000Qualified,
    OutputTokensPerS,
}

impl LessonMetric {
    pub const ALL: [LessonMetric; 19] = [
        LessonMetric::Attempts,
        LessonMetric::Successes,
        LessonMetric::Failures,
        LessonMetric::Qualified,
        LessonMetric::TtftSamples,
        LessonMetric::FailureRate,
        LessonMetric::QualityPassRate,
        LessonMetric::JointRate,
        LessonMetric::BusinessSuccessRate,
        LessonMetric::TtftP50,
        LessonMetric::TtftP95,
        LessonMetric::TtftTail,
        LessonMetric::E2eP50,
        LessonMetric::E2eTail,
        LessonMetric::ItlP50,
        LessonMetric::ItlTail,
        LessonMetric::GoodputPerS,
        LessonMetric::CostPer1000Qualified,
        LessonMetric::OutputTokensPerS,
    ];

    pub fn code(self) -> &'static str {
        match self {
            LessonMetric::Attempts => "attempts",
            LessonMetric::Successes => "successes",
            LessonMetric::Failures => "failures",
            LessonMetric::Qualified => "qualified",
            LessonMetric::TtftSamples => "ttft_samples",
            LessonMetric::FailureRate => "failure_rate",
            LessonMetric::QualityPassRate => "quality_pass_rate",
            LessonMetric::JointRate => "joint_rate",
            LessonMetric::BusinessSuccessRate => "business_success_rate",
            LessonMetric::TtftP50 => "ttft_p50_s",
            LessonMetric::TtftP95 => "ttft_p95_s",
            LessonMetric::TtftTail => "ttft_tail_s",
            LessonMetric::E2eP50 => "e2e_p50_s",
            LessonMetric::E2eTail => "e2e_tail_s",
            LessonMetric::ItlP50 => "itl_p50_s",
            LessonMetric::ItlTail => "itl_tail_s",
            LessonMetric::GoodputPerS => "goodput_per_s",
            LessonMetric::CostPer1000Qualified => "cost_per_1000_qualified",
            LessonMetric::OutputTokensPerS => "output_tokens_per_s",
        }
    }

    pub fn from_code(code: &str) -> Option<LessonMetric> {
        Self::ALL.into_iter().find(|m| m.code() == code)
    }

    pub fn dimension(self) -> Dimension {
        use LessonMetric::*;
        match self {
            Attempts | Successes | Failures | Qualified | TtftSamples => Dimension::Count,
            FailureRate | QualityPassRate | JointRate | BusinessSuccessRate => Dimension::Ratio,
            TtftP50 | TtftP95 | TtftTail | E2eP50 | E2eTail | ItlP50 | ItlTail => Dimension::Seconds,
            GoodputPerS => Dimension::PerSecond,
            CostPer1000Qualified => Dimension::Money,
            OutputTokensPerS => Dimension::TokensPerSecond,
        }
    }

    /// The figure behind this metric (counts have none).
    pub fn figure(self, m: &Metrics) -> Option<&Figure> {
        use LessonMetric::*;
        Some(match self {
            Attempts | Successes | Failures | Qualified => return None,
            TtftSamples => &m.ttft_p50,
            FailureRate => &m.failure_rate,
            QualityPassRate => &m.quality_pass_rate,
            JointRate => &m.joint_rate,
            BusinessSuccessRate => &m.business_success_rate,
            TtftP50 => &m.ttft_p50,
            TtftP95 => &m.ttft_p95,
            TtftTail => &m.ttft_tail,
            E2eP50 => &m.e2e_p50,
            E2eTail => &m.e2e_tail,
            ItlP50 => &m.itl_p50,
            ItlTail => &m.itl_tail,
            GoodputPerS => &m.goodput,
            CostPer1000Qualified => &m.cost_per_1000_qualified,
            OutputTokensPerS => &m.output_tokens_per_s,
        })
    }

    /// Whether the figure is a ratio with a numerator and a denominator (for `ratio_parts`).
    pub fn is_ratio(self) -> bool {
        use LessonMetric::*;
        matches!(
            self,
            FailureRate | QualityPassRate | JointRate | BusinessSuccessRate | GoodputPerS | CostPer1000Qualified | OutputTokensPerS
        )
    }

    /// The value in the core's own unit (ratios 0–1, times in seconds); `None` when undefined.
    pub fn value(self, m: &Metrics) -> Option<f64> {
        use LessonMetric::*;
        match self {
            Attempts => Some(m.attempts as f64),
            Successes => Some(m.successes as f64),
            Failures => Some(m.failures as f64),
            Qualified => Some(m.qualified as f64),
            TtftSamples => m.ttft_p50.n.map(|n| n as f64),
            _ => self.figure(m).and_then(|f| f.value),
        }
    }
}

/// The unit an exercise's answer is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerUnit {
    Count,
    Percent,
    Ratio,
    Seconds,
    Milliseconds,
    PerSecond,
    Money,
    TokensPerSecond,
}

impl AnswerUnit {
    pub const ALL: [AnswerUnit; 8] = [
        AnswerUnit::Count,
        AnswerUnit::Percent,
        AnswerUnit::Ratio,
        AnswerUnit::Seconds,
        AnswerUnit::Milliseconds,
        AnswerUnit::PerSecond,
        AnswerUnit::Money,
        AnswerUnit::TokensPerSecond,
    ];

    pub fn code(self) -> &'static str {
        match self {
            AnswerUnit::Count => "count",
            AnswerUnit::Percent => "%",
            AnswerUnit::Ratio => "ratio",
            AnswerUnit::Seconds => "s",
            AnswerUnit::Milliseconds => "ms",
            AnswerUnit::PerSecond => "/s",
            AnswerUnit::Money => "money",
            AnswerUnit::TokensPerSecond => "tokens/s",
        }
    }

    pub fn from_code(code: &str) -> Option<AnswerUnit> {
        Self::ALL.into_iter().find(|u| u.code() == code)
    }

    pub fn dimension(self) -> Dimension {
        match self {
            AnswerUnit::Count => Dimension::Count,
            AnswerUnit::Percent | AnswerUnit::Ratio => Dimension::Ratio,
            AnswerUnit::Seconds | AnswerUnit::Milliseconds => Dimension::Seconds,
            AnswerUnit::PerSecond => Dimension::PerSecond,
            AnswerUnit::Money => Dimension::Money,
            AnswerUnit::TokensPerSecond => Dimension::TokensPerSecond,
        }
    }

    /// From the core's unit to this one.
    pub fn scale(self) -> f64 {
        match self {
            AnswerUnit::Percent => 100.0,
            AnswerUnit::Milliseconds => 1000.0,
            _ => 1.0,
        }
    }

    /// What the lab writes after the answer box ("%", "s", "/s", "CNY").
    pub fn label(self, currency: &str, lang: Lang) -> String {
        match (self, lang) {
            (AnswerUnit::Count, Lang::En) => String::new(),
            (AnswerUnit::Count, Lang::Zh) => "个".into(),
            (AnswerUnit::Ratio, _) => String::new(),
            (AnswerUnit::PerSecond, Lang::Zh) => "次/秒".into(),
            (AnswerUnit::Money, _) => currency.to_string(),
            (u, _) => u.code().to_string(),
        }
    }
}

/// The key of a `number` exercise: the core's figure on `trace` under the exercise's settings, in
/// the exercise's unit. `None` for other kinds, unknown metrics or units, refused settings, or an
/// undefined figure.
pub fn answer_key(exercise: &Exercise, trace: &Trace) -> Option<f64> {
    let ExerciseKind::Number(n) = &exercise.kind else { return None };
    computed(trace, &n.settings, &n.metric, &n.unit)
}

/// `metric` on `trace` under the sample's settings with `pairs` on top, in `unit`.
pub fn computed(trace: &Trace, pairs: &Pairs, metric: &str, unit: &str) -> Option<f64> {
    let metric = LessonMetric::from_code(metric)?;
    let unit = AnswerUnit::from_code(unit)?;
    if metric.dimension() != unit.dimension() {
        return None;
    }
    let metrics = metrics_for(trace, pairs).ok()?;
    metric.value(&metrics).map(|v| v * unit.scale())
}

/// Every figure of `trace` under the sample's settings with `pairs` on top.
pub fn metrics_for(trace: &Trace, pairs: &Pairs) -> Result<Metrics, String> {
    let settings = settings_for(&trace.header, pairs)?;
    Ok(Metrics::of(&trace.attempts, &settings))
}

/// The currency an exercise's money answers are in: the settings' `cur`, else the sample's.
pub fn currency_for(trace: &Trace, pairs: &Pairs) -> String {
    settings_for(&trace.header, pairs).map(|s| s.currency).unwrap_or_default()
}

// --- ratio parts -------------------------------------------------------------------------------

/// One option of a ratio part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartOption {
    /// [`CORE_OPTION`] for the core's label, else the distractor's id.
    pub id: String,
    pub text: Text,
}

/// What the lab shows for a `ratio_parts` exercise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatioPartsView {
    /// The figure's name, e.g. "Failure rate".
    pub figure: Text,
    pub numerator: Vec<PartOption>,
    pub denominator: Vec<PartOption>,
    pub unit: Vec<PartOption>,
}

/// The options of a `ratio_parts` exercise: the core's numerator label, denominator label and unit
/// name for the figure on its sample, each mixed among the course's distractors at a position
/// fixed by the exercise's id (the same on every load, not always first).
pub fn ratio_parts(exercise: &Exercise, trace: &Trace) -> Option<RatioPartsView> {
    let ExerciseKind::RatioParts(p) = &exercise.kind else { return None };
    let metric = LessonMetric::from_code(&p.metric).filter(|m| m.is_ratio())?;
    let metrics = metrics_for(trace, &p.settings).ok()?;
    let figure = metric.figure(&metrics)?;
    let numerator = figure.numerator_label.clone()?;
    let denominator = figure.denominator_label.clone()?;
    let unit = format::unit_name(&figure.unit);
    let mix = |part: &str, core: Text, wrong: &[Distractor]| -> Vec<PartOption> {
        let mut out: Vec<PartOption> =
            wrong.iter().map(|d| PartOption { id: d.id.clone(), text: d.text.clone() }).collect();
        let at = (fnv(&format!("{}/{part}", exercise.id)) % (out.len() as u64 + 1)) as usize;
        out.insert(at, PartOption { id: CORE_OPTION.to_string(), text: core });
        out
    };
    Some(RatioPartsView {
        figure: figure.name.clone(),
        numerator: mix("numerator", numerator, &p.distractors.numerator),
        denominator: mix("denominator", denominator, &p.distractors.denominator),
        unit: mix("unit", unit, &p.distractors.unit),
    })
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

// --- answers and feedback ----------------------------------------------------------------------

/// What a learner answered. In JSON: `{"kind": "number", "value": 4}`,
/// `{"kind": "choice", "chosen": ["all-attempts"]}`,
/// `{"kind": "ratio_parts", "numerator": "core", "denominator": "successes", "unit": "core"}`,
/// `{"kind": "free_text", "text": "…", "checked": ["long-queue"]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAnswer", into = "RawAnswer")]
pub enum Answer {
    Number { value: f64 },
    /// The chosen option ids (one for a single choice).
    Choice { chosen: Vec<String> },
    /// The option ids chosen for each part.
    RatioParts { numerator: String, denominator: String, unit: String },
    /// The text written and the checklist ids ticked.
    FreeText { text: String, checked: Vec<String> },
}

/// The JSON form of an answer: a plain struct, so a bad field is named (`answer.value`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct RawAnswer {
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chosen: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    numerator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    denominator: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checked: Option<Vec<String>>,
}

impl TryFrom<RawAnswer> for Answer {
    type Error = String;

    fn try_from(r: RawAnswer) -> Result<Answer, String> {
        let need = |field: &str| format!("a `{}` answer needs `{field}`", r.kind);
        Ok(match r.kind.as_str() {
            "number" => Answer::Number { value: r.value.ok_or_else(|| need("value"))? },
            "choice" => Answer::Choice { chosen: r.chosen.clone().ok_or_else(|| need("chosen"))? },
            "ratio_parts" => Answer::RatioParts {
                numerator: r.numerator.clone().ok_or_else(|| need("numerator"))?,
                denominator: r.denominator.clone().ok_or_else(|| need("denominator"))?,
                unit: r.unit.clone().ok_or_else(|| need("unit"))?,
            },
            "free_text" => Answer::FreeText {
                text: r.text.clone().ok_or_else(|| need("text"))?,
                checked: r.checked.clone().unwrap_or_default(),
            },
            other => return Err(format!("unknown answer kind `{other}` (known: number, choice, ratio_parts, free_text)")),
        })
    }
}

impl From<Answer> for RawAnswer {
    fn from(a: Answer) -> RawAnswer {
        match a {
            Answer::Number { value } => RawAnswer { kind: "number".into(), value: Some(value), ..RawAnswer::default() },
            Answer::Choice { chosen } => RawAnswer { kind: "choice".into(), chosen: Some(chosen), ..RawAnswer::default() },
            Answer::RatioParts { numerator, denominator, unit } => RawAnswer {
                kind: "ratio_parts".into(),
                numerator: Some(numerator),
                denominator: Some(denominator),
                unit: Some(unit),
                ..RawAnswer::default()
            },
            Answer::FreeText { text, checked } => {
                RawAnswer { kind: "free_text".into(), text: Some(text), checked: Some(checked), ..RawAnswer::default() }
            }
        }
    }
}

/// The verdict on an answer, with an explanation in both languages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feedback {
    pub correct: bool,
    pub message: Text,
    /// The key of a number exercise, for the lab to reveal when it chooses (after a second try,
    /// say); never part of `message` on a wrong answer.
    pub expected: Option<f64>,
}

fn join(parts: &[Text]) -> Text {
    let en: Vec<&str> = parts.iter().map(|p| p.en.as_str()).filter(|s| !s.is_empty()).collect();
    let zh: Vec<&str> = parts.iter().map(|p| p.zh.as_str()).filter(|s| !s.is_empty()).collect();
    Text::new(en.join("\n"), zh.join("\n"))
}

/// Reads a typed answer to a number exercise: "20", "20 %", "0,5", "0.5 s", "４". `None` when it
/// is not a number.
pub fn parse_number(text: &str) -> Option<f64> {
    let mut s: String = text
        .trim()
        .chars()
        .map(|c| match c {
            '０'..='９' => char::from(b'0' + (c as u32 - '０' as u32) as u8),
            '．' | '。' => '.',
            '，' => ',',
            '－' | '−' => '-',
            _ => c,
        })
        .collect();
    let end = s.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | 'e' | 'E'))).unwrap_or(s.len());
    let rest = s[end..].trim().to_string();
    if !rest.is_empty() && rest.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    s.truncate(end);
    let s = s.trim();
    let s = if s.contains(',') && !s.contains('.') { s.replacen(',', ".", 1) } else { s.replace(',', "") };
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Judges an answer. `key` is [`answer_key`]'s value for a number exercise (the stated answer is
/// used when it is `None`); other kinds ignore it.
pub fn check(exercise: &Exercise, answer: &Answer, key: Option<f64>) -> Feedback {
    let right = t("Right.", "正确。");
    let not_yet = t("Not yet.", "还不对。");
    let explain = exercise.explain.clone().unwrap_or_else(|| t("", ""));
    let hint = exercise.hint.clone().unwrap_or_else(|| t("", ""));
    let mismatch = Feedback {
        correct: false,
        message: t("This answer does not fit this exercise.", "这个答案与本题的题型不符。"),
        expected: None,
    };
    match (&exercise.kind, answer) {
        (ExerciseKind::Number(n), Answer::Number { value }) => {
            let target = key.unwrap_or(n.answer);
            let close = |a: f64, b: f64| (a - b).abs() <= n.tolerance + 1e-9 * b.abs().max(1.0);
            if !value.is_finite() {
                return Feedback { correct: false, message: t("Write a number.", "请填写一个数字。"), expected: Some(target) };
            }
            if close(*value, target) {
                return Feedback { correct: true, message: join(&[right, explain]), expected: Some(target) };
            }
            let message = match n.mistakes.iter().find(|m| close(*value, m.value)) {
                Some(m) => join(&[not_yet, m.explain.clone()]),
                None if !hint.en.is_empty() => join(&[not_yet, hint]),
                None => join(&[
                    not_yet,
                    t(
                        "Recompute it step by step: which attempts are counted, what is divided by what, and in which unit.",
                        "一步一步重算：哪些尝试被计入，谁除以谁，单位是什么。",
                    ),
                ]),
            };
            Feedback { correct: false, message, expected: Some(target) }
        }
        (ExerciseKind::Choice(c), Answer::Choice { chosen }) => {
            let unknown: Vec<&String> = chosen.iter().filter(|id| !c.options.iter().any(|o| &o.id == *id)).collect();
            if !unknown.is_empty() || chosen.is_empty() {
                return Feedback {
                    correct: false,
                    message: t("Choose one of the options shown.", "请从给出的选项中选择。"),
                    expected: None,
                };
            }
            if !c.multiple {
                if chosen.len() != 1 {
                    return Feedback { correct: false, message: t("Choose exactly one option.", "只能选一个选项。"), expected: None };
                }
                let o = c.options.iter().find(|o| o.id == chosen[0]).expect("checked above");
                let lead = if o.correct { right } else { not_yet };
                let mut parts = vec![lead, o.explain.clone()];
                if o.correct {
                    parts.push(explain);
                }
                return Feedback { correct: o.correct, message: join(&parts), expected: None };
            }
            let chosen: BTreeSet<&str> = chosen.iter().map(String::as_str).collect();
            let mut parts = Vec::new();
            let mut correct = true;
            for o in &c.options {
                let picked = chosen.contains(o.id.as_str());
                if picked != o.correct {
                    correct = false;
                    let lead = if picked {
                        t("Marked but should not be", "不该标记却标记了")
                    } else {
                        t("Missed", "漏掉了")
                    };
                    parts.push(Text::new(
                        format!("{}: {} — {}", lead.en, o.text.en, o.explain.en),
                        format!("{}：{} —— {}", lead.zh, o.text.zh, o.explain.zh),
                    ));
                }
            }
            let mut all = vec![if correct { right } else { not_yet }];
            all.extend(parts);
            if correct {
                all.push(explain);
            }
            Feedback { correct, message: join(&all), expected: None }
        }
        (ExerciseKind::RatioParts(p), Answer::RatioParts { numerator, denominator, unit }) => {
            let parts = [
                (t("Numerator", "分子"), numerator, &p.distractors.numerator),
                (t("Denominator", "分母"), denominator, &p.distractors.denominator),
                (t("Unit", "单位"), unit, &p.distractors.unit),
            ];
            let mut correct = true;
            let mut lines = Vec::new();
            for (name, id, wrong) in parts {
                if id == CORE_OPTION {
                    lines.push(Text::new(format!("{}: right.", name.en), format!("{}：正确。", name.zh)));
                } else {
                    correct = false;
                    let why = wrong
                        .iter()
                        .find(|d| &d.id == id)
                        .map(|d| d.explain.clone())
                        .unwrap_or_else(|| t("choose one of the options shown.", "请从给出的选项中选择。"));
                    lines.push(Text::new(format!("{}: {}", name.en, why.en), format!("{}：{}", name.zh, why.zh)));
                }
            }
            let mut all = vec![if correct { right } else { not_yet }];
            all.extend(lines);
            if correct {
                all.push(explain);
            }
            Feedback { correct, message: join(&all), expected: None }
        }
        (ExerciseKind::FreeText(f), Answer::FreeText { text, checked }) => {
            let ticked = f.checklist.iter().filter(|i| checked.contains(&i.id)).count();
            let chars = text.trim().chars().count();
            let enough = ticked >= f.min_checked && chars >= f.min_chars;
            let status = Text::new(
                format!(
                    "Saved. You ticked {ticked} of {} checklist items (at least {} expected) and wrote {chars} characters. \
                     Nothing else is judged automatically: compare your text with the model answer and with a classmate.",
                    f.checklist.len(),
                    f.min_checked
                ),
                format!(
                    "已保存。你勾选了 {} 项中的 {ticked} 项（至少应勾选 {} 项），写了 {chars} 个字符。\
                     其余部分不会自动判分：请把你的文字与参考答案、与同学的答案对照。",
                    f.checklist.len(),
                    f.min_checked
                ),
            );
            let mut all = vec![status];
            if !enough && chars < f.min_chars {
                all.push(t("Write your counter-example in a few sentences first.", "请先用几句话写出你的反例。"));
            }
            all.push(explain);
            Feedback { correct: enough, message: join(&all), expected: None }
        }
        _ => mismatch,
    }
}

// --- Markdown markers --------------------------------------------------------------------------

/// A piece of a lesson's Markdown: text to render, or a marker line the lab turns into a step
/// button or an exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    Markdown(&'a str),
    Step(&'a str),
    Exercise(&'a str),
}

/// A marker found in a lesson's Markdown, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub kind: &'static str,
    pub id: String,
    pub line: usize,
}

fn marker_of(line: &str) -> Option<(&'static str, &str)> {
    let inner = line.trim().strip_prefix("[[")?.strip_suffix("]]")?;
    let (kind, id) = inner.split_once(':')?;
    let kind = match kind {
        "step" => "step",
        "exercise" => "exercise",
        _ => return None,
    };
    let id = id.trim();
    let ok = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some((kind, id))
}

/// Tracks fenced code blocks (```` ``` ```` or `~~~`) line by line: markers inside code are text.
#[derive(Default)]
struct Fence(Option<&'static str>);

impl Fence {
    /// Whether `line` is a fence line or inside a fenced block.
    fn in_code(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if let Some(f) = self.0 {
            if trimmed.starts_with(f) {
                self.0 = None;
            }
            return true;
        }
        self.0 = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f));
        self.0.is_some()
    }
}

/// Splits a lesson's Markdown at its marker lines (`[[step:ID]]` or `[[exercise:ID]]`, each alone
/// on its line, outside code blocks). Blank stretches between markers are dropped.
pub fn segments(markdown: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    let mut fence = Fence::default();
    for line in markdown.split_inclusive('\n') {
        let here = offset;
        offset += line.len();
        if fence.in_code(line) {
            continue;
        }
        if let Some((kind, id)) = marker_of(line) {
            let before = &markdown[start..here];
            if !before.trim().is_empty() {
                out.push(Segment::Markdown(before));
            }
            out.push(if kind == "step" { Segment::Step(id) } else { Segment::Exercise(id) });
            start = offset;
        }
    }
    let rest = &markdown[start..];
    if !rest.trim().is_empty() {
        out.push(Segment::Markdown(rest));
    }
    out
}

/// Every marker of a lesson's Markdown, and the lines that look like a marker but are not one
/// (a marker must stand alone on its line).
pub fn markers(markdown: &str) -> (Vec<Marker>, Vec<String>) {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    let mut fence = Fence::default();
    for (i, line) in markdown.lines().enumerate() {
        if fence.in_code(line) {
            continue;
        }
        match marker_of(line) {
            Some((kind, id)) => found.push(Marker { kind, id: id.to_string(), line: i + 1 }),
            None if line.contains("[[step:") || line.contains("[[exercise:") => bad.push(format!(
                "line {}: a `[[step:ID]]` or `[[exercise:ID]]` marker must stand alone on its line (ids: letters, digits, `-`, `_`, `.`)",
                i + 1
            )),
            None => {}
        }
    }
    (found, bad)
}

/// The `id`s of a hand-written SVG's elements.
pub fn svg_ids(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("id=\"") {
        let before = rest[..i].chars().last();
        let after = &rest[i + 4..];
        if before.is_some_and(char::is_whitespace) {
            if let Some(end) = after.find('"') {
                out.push(after[..end].to_string());
            }
        }
        rest = after;
    }
    out
}

// --- the course: parse, look up, validate, verify ---------------------------------------------

impl Course {
    /// Reads `course.json`. Errors name the field (`lessons[0].exercises[2].options[1].correct`)
    /// and never panic.
    pub fn parse(text: &str) -> Result<Course, ParseError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|e| json_error(&e, "course.json"))?;
        let course: Course = from_value(value, locate::course, "course.json")?;
        if course.version != COURSE_VERSION {
            return Err(ParseError::new(format!(
                "this course is version {}; this Trace Lab reads version {COURSE_VERSION}",
                course.version
            ))
            .field("version")
            .in_file("course.json"));
        }
        Ok(course)
    }

    pub fn lesson(&self, id: &str) -> Option<&Lesson> {
        self.lessons.iter().find(|l| l.id == id)
    }

    /// A step and the lesson it belongs to.
    pub fn step(&self, id: &str) -> Option<(&Lesson, &Step)> {
        self.lessons.iter().find_map(|l| l.steps.iter().find(|s| s.id == id).map(|s| (l, s)))
    }

    pub fn exercise(&self, id: &str) -> Option<&Exercise> {
        self.exercises().map(|(_, e)| e).find(|e| e.id == id)
    }

    /// Every exercise with its lesson, in course order.
    pub fn exercises(&self) -> impl Iterator<Item = (&Lesson, &Exercise)> {
        self.lessons.iter().flat_map(|l| l.exercises.iter().map(move |e| (l, e)))
    }

    /// What is wrong with the course, one sentence each (empty when nothing is).
    ///
    /// `file_of` returns the text of a file the course names: a lesson's Markdown (relative to
    /// `lessons/`) or a diagram (relative to `public/lessons/`). `sample_names` are the files under
    /// `public/samples/`.
    pub fn validate(&self, file_of: impl Fn(&str) -> Option<String>, sample_names: &[&str]) -> Vec<String> {
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
                out.push(format!("{place}: unknown sample `{sample}` (known: {})", sample_names.join(", ")));
            }
        };
        if self.lessons.is_empty() {
            out.push("the course has no lessons".into());
        }
        for (i, lesson) in self.lessons.iter().enumerate() {
            let lp = format!("lesson `{}`", lesson.id);
            claim(&mut out, &lesson.id, "lesson");
            if lesson.number as usize != i + 1 {
                out.push(format!("{lp}: number {} but it is lesson {} in course order", lesson.number, i + 1));
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
                    (None, None) => out.push(format!("{sp}: a step needs a `sample` or a `diagram`")),
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
                        out.push(format!("{sp}: unknown metric `{f}` in `focus` (known: {})", metric_codes()));
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
                    let exists = match m.kind {
                        "step" => lesson.steps.iter().any(|s| s.id == m.id),
                        _ => lesson.exercises.iter().any(|e| e.id == m.id),
                    };
                    if !exists {
                        let elsewhere = match m.kind {
                            "step" => self.step(&m.id).map(|(l, _)| l.id.clone()),
                            _ => self.exercises().find(|(_, e)| e.id == m.id).map(|(l, _)| l.id.clone()),
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
                        out.push(format!("{name}: step `{}` is never placed (add a line [[step:{}]])", s.id, s.id));
                    }
                }
                for e in &lesson.exercises {
                    if !placed.contains(&("exercise", e.id.clone())) {
                        out.push(format!("{name}: exercise `{}` is never placed (add a line [[exercise:{}]])", e.id, e.id));
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        for item in &self.self_check {
            if !seen.insert(item.id.as_str()) || item.id.trim().is_empty() {
                out.push(format!("self-check item `{}`: ids must be unique and not empty", item.id));
            }
            text_ok(&mut out, &format!("self-check item `{}`", item.id), &item.text);
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
            text_ok(&mut out, &format!("card field `{}`, help", field.id), &field.help);
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
        let mut trace = |name: &str| cache.entry(name.to_string()).or_insert_with(|| trace_of(name)).clone();
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
                        out.push(format!("{place}: row {row} is outside the sample's {} rows", tr.attempts.len()));
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
                        let close = |a: f64, b: f64| (a - b).abs() <= n.tolerance + 1e-9 * b.abs().max(1.0);
                        let Some(key) = answer_key(e, &tr) else {
                            out.push(format!("{place}: the core computes no `{}` in `{}` here (undefined)", n.metric, n.unit));
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
                            out.push(format!("{place}: the figure `{}` has no numerator and denominator on `{}`", p.metric, p.sample));
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
    LessonMetric::ALL.iter().map(|m| m.code()).collect::<Vec<_>>().join(", ")
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
                out.push(format!("{ep}: unknown metric `{}` (known: {})", n.metric, metric_codes()));
            }
            if unit.is_none() {
                let units: Vec<&str> = AnswerUnit::ALL.iter().map(|u| u.code()).collect();
                out.push(format!("{ep}: unknown unit `{}` (known: {})", n.unit, units.join(", ")));
            }
            if let (Some(m), Some(u)) = (metric, unit) {
                if m.dimension() != u.dimension() {
                    out.push(format!("{ep}: `{}` cannot be written in `{}`", n.metric, n.unit));
                }
            }
            if !(n.tolerance.is_finite() && n.tolerance >= 0.0 && n.answer.is_finite()) {
                out.push(format!("{ep}: `answer` and `tolerance` must be numbers, the tolerance 0 or more"));
            }
            for (i, m) in n.mistakes.iter().enumerate() {
                text_ok(out, &format!("{ep}, mistakes[{i}]"), &m.explain);
                if let Some(p) = &m.settings {
                    pairs_ok(out, &format!("{ep}, mistakes[{i}]"), p);
                }
            }
        }
        ExerciseKind::Choice(c) => {
            unique(out, "option", c.options.iter().map(|o| o.id.as_str()).collect());
            let right = c.options.iter().filter(|o| o.correct).count();
            if c.options.len() < 2 {
                out.push(format!("{ep}: a choice needs at least two options"));
            }
            if !c.multiple && right != 1 {
                out.push(format!("{ep}: a choice needs exactly one correct option, found {right}"));
            }
            if c.multiple && right == 0 {
                out.push(format!("{ep}: a multiple choice needs at least one correct option"));
            }
            for o in &c.options {
                text_ok(out, &format!("{ep}, option `{}`", o.id), &o.text);
                text_ok(out, &format!("{ep}, option `{}`, explain", o.id), &o.explain);
            }
            if let Some(d) = &c.diagram {
                match file_of(d) {
                    None => out.push(format!("{ep}: the diagram `{d}` does not exist")),
                    Some(svg) => {
                        let ids = svg_ids(&svg);
                        for o in &c.options {
                            if !ids.contains(&o.id) {
                                out.push(format!("{ep}: option `{}` is no element of the diagram `{d}`", o.id));
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
                None => out.push(format!("{ep}: unknown metric `{}` (known: {})", p.metric, metric_codes())),
                Some(m) if !m.is_ratio() => out.push(format!("{ep}: `{}` is not a ratio with a numerator and a denominator", p.metric)),
                Some(_) => {}
            }
            for (part, list) in
                [("numerator", &p.distractors.numerator), ("denominator", &p.distractors.denominator), ("unit", &p.distractors.unit)]
            {
                if list.is_empty() {
                    out.push(format!("{ep}: the {part} needs at least one wrong option"));
                }
                let ids: Vec<&str> = list.iter().map(|d| d.id.as_str()).collect();
                if ids.contains(&CORE_OPTION) {
                    out.push(format!("{ep}: `{CORE_OPTION}` is reserved for the core's answer"));
                }
                unique(out, part, ids);
                for d in list {
                    text_ok(out, &format!("{ep}, {part} `{}`", d.id), &d.text);
                    text_ok(out, &format!("{ep}, {part} `{}`, explain", d.id), &d.explain);
                }
            }
        }
        ExerciseKind::FreeText(f) => {
            unique(out, "checklist item", f.checklist.iter().map(|i| i.id.as_str()).collect());
            if f.min_checked > f.checklist.len() {
                out.push(format!("{ep}: `min_checked` {} is more than the {} checklist items", f.min_checked, f.checklist.len()));
            }
            for i in &f.checklist {
                text_ok(out, &format!("{ep}, checklist item `{}`", i.id), &i.text);
            }
        }
    }
}

/// A JSON syntax error, with its line and column.
fn json_error(e: &serde_json::Error, file: &str) -> ParseError {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    };
    let error = ParseError::new(format!("not valid JSON at column {}: {message}", e.column())).in_file(file);
    if e.line() > 0 {
        error.at_line(e.line())
    } else {
        error
    }
}

/// Deserialises `value`; on failure, `locate` names the field at fault (see [`locate`]).
fn from_value<T: for<'de> Deserialize<'de>>(value: Value, locate: locate::Locate, file: &str) -> Result<T, ParseError> {
    // From an owned value, as `parse/jsonl.rs` does, so the browser's download holds one kind of
    // deserializer for these types.
    match serde_json::from_value::<T>(value.clone()) {
        Ok(t) => Ok(t),
        Err(e) => {
            let (path, message) = locate(&value, "").unwrap_or_else(|| (String::new(), locate::clean(&e)));
            let error = ParseError::new(message).in_file(file);
            Err(if path.is_empty() { error } else { error.field(path) })
        }
    }
}

/// Naming the field that stops a file from being read, without a path-tracking deserializer (which
/// would put a second copy of every deserializer in the browser's download; see
/// `parse/jsonl.rs`): the JSON value is walked with the schema's field names and each part is
/// tried with its own type, so the first part that fails on its own is the culprit.
mod locate {
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    use super::*;

    /// Where a value fails: its path (`lessons[2].exercises[0].answer`) and why.
    pub(super) type Found = Option<(String, String)>;
    pub(super) type Locate = fn(&Value, &str) -> Found;

    /// serde's message without serde_json's position.
    pub(super) fn clean(e: &serde_json::Error) -> String {
        let message = e.to_string();
        match message.rfind(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        }
    }

    fn join(path: &str, key: &str) -> String {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    }

    /// A part read with its own type.
    fn leaf<T: DeserializeOwned>(v: &Value, path: &str) -> Found {
        serde_json::from_value::<T>(v.clone()).err().map(|e| (path.to_string(), clean(&e)))
    }

    fn list(v: &Value, path: &str, item: Locate) -> Found {
        match v {
            Value::Array(items) => items.iter().enumerate().find_map(|(i, x)| item(x, &format!("{path}[{i}]"))),
            _ => leaf::<Vec<Value>>(v, path),
        }
    }

    fn map(v: &Value, path: &str, item: Locate) -> Found {
        match v {
            Value::Object(entries) => entries.iter().find_map(|(k, x)| item(x, &join(path, k))),
            _ => leaf::<std::collections::BTreeMap<String, Value>>(v, path),
        }
    }

    fn optional(v: &Value, path: &str, inner: Locate) -> Found {
        if v.is_null() {
            None
        } else {
            inner(v, path)
        }
    }

    /// An object with these fields (name, required, how to read it); `strict` refuses others.
    fn object(v: &Value, path: &str, fields: &[(&str, bool, Locate)], strict: bool) -> Found {
        let Value::Object(o) = v else {
            return Some((path.to_string(), format!("expected an object, found {}", super::json_kind(v))));
        };
        if strict {
            if let Some(k) = o.keys().find(|k| !fields.iter().any(|(name, _, _)| name == k)) {
                let names: Vec<String> = fields.iter().map(|(n, _, _)| format!("`{n}`")).collect();
                return Some((join(path, k), format!("unknown field `{k}`, expected one of {}", names.join(", "))));
            }
        }
        fields.iter().find_map(|(name, required, read)| match o.get(*name) {
            None if *required => Some((join(path, name), format!("missing field `{name}`"))),
            None => None,
            Some(x) => read(x, &join(path, name)),
        })
    }

    fn string(v: &Value, p: &str) -> Found {
        leaf::<String>(v, p)
    }
    fn opt_string(v: &Value, p: &str) -> Found {
        leaf::<Option<String>>(v, p)
    }
    fn text(v: &Value, p: &str) -> Found {
        object(v, p, &[("en", true, string), ("zh", true, string)], false)
    }
    fn opt_text(v: &Value, p: &str) -> Found {
        optional(v, p, text)
    }
    fn pairs(v: &Value, p: &str) -> Found {
        map(v, p, |x, p| match x {
            Value::String(_) | Value::Number(_) => None,
            other => Some((p.to_string(), format!("a setting must be a string or a number, found {}", super::json_kind(other)))),
        })
    }
    fn opt_pairs(v: &Value, p: &str) -> Found {
        optional(v, p, pairs)
    }
    fn strings(v: &Value, p: &str) -> Found {
        list(v, p, string)
    }

    pub(super) fn course(v: &Value, p: &str) -> Found {
        object(
            v,
            p,
            &[
                ("version", true, leaf::<u32>),
                ("lessons", true, |v, p| list(v, p, lesson)),
                ("self_check", false, |v, p| list(v, p, |v, p| object(v, p, &[("id", true, string), ("text", true, text)], true))),
                ("card_fields", false, |v, p| list(v, p, |v, p| object(v, p, &[("id", true, string), ("help", true, text)], true))),
            ],
            true,
        )
    }

    fn lesson(v: &Value, p: &str) -> Found {
        object(
            v,
            p,
            &[
                ("id", true, string),
                ("number", true, leaf::<u32>),
                ("title", true, text),
                ("summary", false, opt_text),
                ("text", true, text),
                ("steps", false, |v, p| list(v, p, step)),
                ("exercises", false, |v, p| list(v, p, exercise)),
            ],
            true,
        )
    }

    fn step(v: &Value, p: &str) -> Found {
        object(
            v,
            p,
            &[
                ("id", true, string),
                ("label", true, text),
                ("sample", false, opt_string),
                ("diagram", false, opt_string),
                ("settings", false, pairs),
                ("row", false, leaf::<Option<usize>>),
                ("focus", false, opt_string),
            ],
            true,
        )
    }

    fn explained(v: &Value, p: &str) -> Found {
        object(v, p, &[("id", true, string), ("text", true, text), ("explain", true, text)], true)
    }

    fn exercise(v: &Value, p: &str) -> Found {
        let fields: [(&str, bool, Locate); 19] = [
            ("id", true, string),
            ("kind", true, string),
            ("prompt", true, text),
            ("hint", false, opt_text),
            ("explain", false, opt_text),
            ("sample", false, opt_string),
            ("settings", false, opt_pairs),
            ("metric", false, opt_string),
            ("answer", false, leaf::<Option<f64>>),
            ("tolerance", false, leaf::<Option<f64>>),
            ("unit", false, opt_string),
            (
                "mistakes",
                false,
                |v, p| {
                    optional(v, p, |v, p| {
                        list(v, p, |v, p| object(v, p, &[("value", true, leaf::<f64>), ("settings", false, opt_pairs), ("explain", true, text)], true))
                    })
                },
            ),
            (
                "options",
                false,
                |v, p| {
                    optional(v, p, |v, p| {
                        list(v, p, |v, p| {
                            object(
                                v,
                                p,
                                &[("id", true, string), ("text", true, text), ("correct", false, leaf::<bool>), ("explain", true, text)],
                                true,
                            )
                        })
                    })
                },
            ),
            ("multiple", false, leaf::<Option<bool>>),
            ("diagram", false, opt_string),
            (
                "distractors",
                false,
                |v, p| {
                    optional(v, p, |v, p| {
                        object(
                            v,
                            p,
                            &[
                                ("numerator", true, |v, p| list(v, p, explained)),
                                ("denominator", true, |v, p| list(v, p, explained)),
                                ("unit", true, |v, p| list(v, p, explained)),
                            ],
                            true,
                        )
                    })
                },
            ),
            (
                "checklist",
                false,
                |v, p| optional(v, p, |v, p| list(v, p, |v, p| object(v, p, &[("id", true, string), ("text", true, text)], true))),
            ),
            ("min_checked", false, leaf::<Option<usize>>),
            ("min_chars", false, leaf::<Option<usize>>),
        ];
        // The parts first; then the whole, whose own checks (a field that does not belong to the
        // kind, a field the kind needs) are reported at the exercise.
        object(v, p, &fields, true).or_else(|| leaf::<Exercise>(v, p))
    }

    fn answer(v: &Value, p: &str) -> Found {
        let fields: [(&str, bool, Locate); 8] = [
            ("kind", true, string),
            ("value", false, leaf::<Option<f64>>),
            ("chosen", false, |v, p| optional(v, p, strings)),
            ("numerator", false, opt_string),
            ("denominator", false, opt_string),
            ("unit", false, opt_string),
            ("text", false, opt_string),
            ("checked", false, |v, p| optional(v, p, strings)),
        ];
        object(v, p, &fields, false).or_else(|| leaf::<Answer>(v, p))
    }

    pub(super) fn progress(v: &Value, p: &str) -> Found {
        object(
            v,
            p,
            &[
                ("lesson", false, opt_string),
                ("notes", false, |v, p| map(v, p, string)),
                (
                    "answers",
                    false,
                    |v, p| {
                        map(v, p, |v, p| {
                            object(v, p, &[("answer", true, answer), ("correct", true, leaf::<bool>), ("tries", false, leaf::<u32>)], false)
                        })
                    },
                ),
                ("self_check", false, strings),
                ("card", false, |v, p| optional(v, p, card)),
            ],
            false,
        )
    }

    fn card_result(v: &Value, p: &str) -> Found {
        let fields: Vec<(&str, bool, Locate)> = ["key", "name", "value", "numerator", "denominator", "unit", "method"]
            .into_iter()
            .map(|f| (f, false, string as Locate))
            .collect();
        object(v, p, &fields, false)
    }

    pub(super) fn card(v: &Value, p: &str) -> Found {
        let mut fields: Vec<(&str, bool, Locate)> =
            vec![("lang", false, leaf::<Lang>), ("results", false, |v, p| list(v, p, card_result))];
        fields.extend(MetricCard::FIELDS.iter().filter(|f| **f != "results").map(|f| (*f, false, string as Locate)));
        object(v, p, &fields, false)
    }
}

/// Reads a JSON file the lab exported (progress, card): size, emptiness and `kind` checked, then
/// deserialised with the failing field named.
fn read_export<T: for<'de> Deserialize<'de>>(text: &str, kind: &str, file: &str) -> Result<T, ParseError> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(ParseError::new(format!("the file is larger than {} MiB", MAX_IMPORT_BYTES / (1024 * 1024))).in_file(file));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(ParseError::new("the file is empty").in_file(file));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| json_error(&e, file))?;
    let Some(object) = value.as_object() else {
        return Err(ParseError::new(format!("expected a JSON object, found {}", json_kind(&value))).in_file(file));
    };
    match object.get("kind") {
        Some(Value::String(k)) if k == kind => {}
        Some(other) => {
            return Err(ParseError::new(format!("expected `{kind}`, found {other}")).field("kind").in_file(file));
        }
        None => return Err(ParseError::new(format!("missing: this is not a `{kind}` file")).field("kind").in_file(file)),
    }
    match object.get("version") {
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => {
            return Err(ParseError::new(format!("this Trace Lab reads version 1, found {v}")).field("version").in_file(file));
        }
        None => return Err(ParseError::new("missing").field("version").in_file(file)),
    }
    let locate: locate::Locate = if kind == PROGRESS_KIND { locate::progress } else { locate::card };
    from_value(value, locate, file)
}

// --- the learner's metric card -----------------------------------------------------------------

/// One figure on the learner's card, written out so someone else can recompute it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CardResult {
    /// The figure's key (`failure_rate`, `goodput`, …); empty for a figure the learner added.
    pub key: String,
    pub name: String,
    pub value: String,
    pub numerator: String,
    pub denominator: String,
    pub unit: String,
    /// How a percentile was picked, or empty.
    pub method: String,
}

/// The metric card a learner fills: every definition behind the figures they report. The lab
/// pre-fills it from the core ([`MetricCard::prefill`]); the learner edits any field.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct MetricCard {
    /// The language the card is written in.
    pub lang: Lang,
    /// Which trace (file name, and the tool it was imported from).
    pub source: String,
    /// Where the clock was read.
    pub observation_point: String,
    /// What a rerun must hold fixed: model, prompts and lengths, arrival process, timeouts.
    pub conditions: String,
    pub window: String,
    pub percentile_method: String,
    /// How many samples each distribution rests on.
    pub sample_count: String,
    /// Attempts counted, successes, failures by outcome, warm-up excluded.
    pub attempts: String,
    /// What counts as a success and as jointly qualified.
    pub success_condition: String,
    pub failure_denominator: String,
    pub thresholds: String,
    /// GPU telemetry: how it was read, or "not verified".
    pub telemetry: String,
    pub results: Vec<CardResult>,
    pub notes: String,
}

#[derive(Serialize)]
struct CardFile<'a> {
    kind: &'static str,
    version: u32,
    #[serde(flatten)]
    card: &'a MetricCard,
}

impl MetricCard {
    /// The fields, in card order (the ids of `course.json`'s `card_fields`).
    pub const FIELDS: [&'static str; 13] = [
        "source",
        "observation_point",
        "conditions",
        "window",
        "percentile_method",
        "sample_count",
        "attempts",
        "success_condition",
        "failure_denominator",
        "thresholds",
        "telemetry",
        "results",
        "notes",
    ];

    /// A field's name on the card.
    pub fn label(field: &str) -> Text {
        match field {
            "source" => t("Trace", "记录"),
            "observation_point" => t("Observation point", "观测点"),
            "conditions" => t("Conditions held fixed", "固定的条件"),
            "window" => t("Window", "窗口"),
            "percentile_method" => t("Percentile method", "分位数方法"),
            "sample_count" => t("Sample count", "样本数"),
            "attempts" => t("Attempts", "尝试"),
            "success_condition" => t("Success condition", "成功条件"),
            "failure_denominator" => t("Failure denominator", "失败率分母"),
            "thresholds" => t("Thresholds", "门槛"),
            "telemetry" => t("GPU telemetry", "GPU 遥测"),
            "results" => t("Results", "结果"),
            "notes" => t("Notes", "备注"),
            other => Text::new(other, other),
        }
    }

    fn text_fields(&self) -> [(&'static str, &String); 12] {
        [
            ("source", &self.source),
            ("observation_point", &self.observation_point),
            ("conditions", &self.conditions),
            ("window", &self.window),
            ("percentile_method", &self.percentile_method),
            ("sample_count", &self.sample_count),
            ("attempts", &self.attempts),
            ("success_condition", &self.success_condition),
            ("failure_denominator", &self.failure_denominator),
            ("thresholds", &self.thresholds),
            ("telemetry", &self.telemetry),
            ("notes", &self.notes),
        ]
    }

    /// The card as the core would fill it for `trace` under `settings`, in `lang`. Every line
    /// comes from the core's own words ([`card::head`], the figures' labels, [`crate::format`]).
    pub fn prefill(source: &str, trace: &Trace, settings: &Settings, metrics: &Metrics, lang: Lang) -> MetricCard {
        let zh = lang == Lang::Zh;
        let head = card::head(source, trace, settings, metrics, lang);
        let source_line = match &trace.header.source {
            Some(s) => {
                let version = s.version.as_deref().unwrap_or(if zh { "版本未知" } else { "version unknown" });
                if zh {
                    format!("{source}（导入自 {}，{version}）", s.tool)
                } else {
                    format!("{source} (imported from {}, {version})", s.tool)
                }
            }
            None => source.to_string(),
        };
        let window = match settings.window_s {
            Some(w) => {
                let start = trace.header.window.map(|w| trim_num(w.start_ms)).unwrap_or_else(|| "0".into());
                let cost = settings
                    .window_cost
                    .map(|c| format!("{} {}", trim_num(c), settings.currency).trim_end().to_string());
                match (zh, cost) {
                    (false, Some(c)) => format!("{} s from {start} ms on the run's clock; it cost {c}", trim_num(w)),
                    (false, None) => format!("{} s from {start} ms on the run's clock; cost not given", trim_num(w)),
                    (true, Some(c)) => format!("从运行时钟 {start} 毫秒起的 {} 秒；花费 {c}", trim_num(w)),
                    (true, None) => format!("从运行时钟 {start} 毫秒起的 {} 秒；未给出成本", trim_num(w)),
                }
            }
            None => (if zh { "未设置窗口：goodput 与成本无定义" } else { "no window: goodput and cost are undefined" }).to_string(),
        };
        let percentile_method = metrics.ttft_tail.method.clone().unwrap_or_else(|| settings.percentile.code().to_string());
        let n = |f: &Figure| f.n.unwrap_or(0);
        let sample_count = if zh {
            format!(
                "TTFT：{} 个（完整成功）；E2E：{} 个；ITL：{} 个事件间隔（按事件，不按 token）",
                n(&metrics.ttft_p50),
                n(&metrics.e2e_p50),
                n(&metrics.itl_p50)
            )
        } else {
            format!(
                "TTFT: {} (complete successes); E2E: {}; ITL: {} gaps between stream events (per event, not per token)",
                n(&metrics.ttft_p50),
                n(&metrics.e2e_p50),
                n(&metrics.itl_p50)
            )
        };
        let success_condition = match metrics.joint_rate.numerator_label.as_ref() {
            Some(label) if zh => format!("完整成功 = HTTP 成功且流正常读到结束；{}，逐个请求判定", label.zh),
            Some(label) => format!(
                "complete success = HTTP success and the stream read to its proper end; {}, judged request by request",
                label.en
            ),
            None => String::new(),
        };
        let failure_denominator = match (&metrics.failure_rate.denominator_label, metrics.failure_rate.denominator) {
            (Some(label), Some(d)) => format!("{} = {}", label.get(lang), trim_num(d)),
            _ => String::new(),
        };
        let slo = settings.slo_comparison.symbol();
        let thresholds = if zh {
            format!(
                "TTFT {} {} 秒（SLO 写作 {slo}）",
                settings.comparison.symbol(),
                trim_num(settings.ttft_threshold_s)
            )
        } else {
            format!(
                "TTFT {} {} s (the SLO is written with {slo})",
                settings.comparison.symbol(),
                trim_num(settings.ttft_threshold_s)
            )
        };
        let telemetry = if trace.header.capabilities.gpu_telemetry == GPU_UNSUPPORTED {
            (if zh { "不支持 — 未验证：不报告任何 GPU 数字" } else { "unsupported — not verified: no GPU figure is reported" })
                .to_string()
        } else if zh {
            format!("{}，{} 个样本，与请求同一时钟", trace.header.capabilities.gpu_telemetry, trace.gpu.len())
        } else {
            format!("{}, {} samples, on the same clock as the requests", trace.header.capabilities.gpu_telemetry, trace.gpu.len())
        };
        let results = metrics
            .card_figures()
            .into_iter()
            .map(|f| {
                let part = |label: &Option<Text>, v: Option<f64>| match (label, v) {
                    (Some(l), Some(v)) => format!("{} = {}", l.get(lang), trim_num(v)),
                    _ => String::new(),
                };
                CardResult {
                    key: f.key.clone(),
                    name: f.name.get(lang).to_string(),
                    value: format::value(f, lang),
                    numerator: part(&f.numerator_label, f.numerator),
                    denominator: part(&f.denominator_label, f.denominator),
                    unit: format::unit_name(&f.unit).get(lang).to_string(),
                    method: match (&f.method, f.n) {
                        (Some(m), Some(n)) => format!("{m}, n = {n}"),
                        _ => String::new(),
                    },
                }
            })
            .collect();
        let mut notes: Vec<String> = settings
            .mistakes()
            .iter()
            .map(|m| format!("⚠ {} — {}", m.label.get(lang), m.false_conclusion.get(lang)))
            .collect();
        notes.extend(trace.warnings.iter().cloned());
        if settings.population.failure_denominator == FailureDenominator::FailedRowsDeleted {
            notes.push(
                (if zh { "失败行被删除：这张卡不能作为基线。" } else { "Failed rows were deleted: this card cannot serve as a baseline." })
                    .to_string(),
            );
        }
        MetricCard {
            lang,
            source: source_line,
            observation_point: after_label(&head.observation),
            conditions: conditions_line(trace, lang),
            window,
            percentile_method,
            sample_count,
            attempts: after_label(&head.attempts),
            success_condition,
            failure_denominator,
            thresholds,
            telemetry,
            results,
            notes: notes.join("\n"),
        }
    }

    /// A text field by its name in [`MetricCard::FIELDS`], for a form to edit.
    pub fn field_mut(&mut self, key: &str) -> Option<&mut String> {
        Some(match key {
            "source" => &mut self.source,
            "observation_point" => &mut self.observation_point,
            "conditions" => &mut self.conditions,
            "window" => &mut self.window,
            "percentile_method" => &mut self.percentile_method,
            "sample_count" => &mut self.sample_count,
            "attempts" => &mut self.attempts,
            "success_condition" => &mut self.success_condition,
            "failure_denominator" => &mut self.failure_denominator,
            "thresholds" => &mut self.thresholds,
            "telemetry" => &mut self.telemetry,
            "notes" => &mut self.notes,
            _ => return None,
        })
    }

    /// The fields still empty (a card someone else can recompute from has none but `notes`).
    pub fn missing(&self) -> Vec<&'static str> {
        let mut out: Vec<&'static str> =
            self.text_fields().into_iter().filter(|(k, v)| *k != "notes" && v.trim().is_empty()).map(|(k, _)| k).collect();
        let incomplete = self.results.is_empty()
            || self
                .results
                .iter()
                .any(|r| r.name.trim().is_empty() || r.value.trim().is_empty() || r.unit.trim().is_empty());
        if incomplete {
            out.push("results");
        }
        out
    }

    /// The card as Markdown, with the field names in `lang`.
    pub fn to_markdown(&self, lang: Lang) -> String {
        let zh = lang == Lang::Zh;
        let mut out = format!("# {}\n\n", if zh { "指标口径卡" } else { "Metric card" });
        out.push_str(if zh { "| 项目 | 内容 |\n|---|---|\n" } else { "| Field | Value |\n|---|---|\n" });
        for (key, value) in self.text_fields() {
            if key == "notes" {
                continue;
            }
            let v = if value.trim().is_empty() { "—".to_string() } else { md_cell(value) };
            out.push_str(&format!("| {} | {v} |\n", Self::label(key).get(lang)));
        }
        out.push_str(&format!("\n## {}\n\n", Self::label("results").get(lang)));
        out.push_str(if zh {
            "| 指标 | 值 | 分子 | 分母 | 单位 | 方法 |\n|---|---|---|---|---|---|\n"
        } else {
            "| Figure | Value | Numerator | Denominator | Unit | Method |\n|---|---|---|---|---|---|\n"
        });
        for r in &self.results {
            let cell = |s: &str| if s.trim().is_empty() { "—".to_string() } else { md_cell(s) };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                cell(&r.name),
                cell(&r.value),
                cell(&r.numerator),
                cell(&r.denominator),
                cell(&r.unit),
                cell(&r.method)
            ));
        }
        if !self.notes.trim().is_empty() {
            out.push_str(&format!("\n## {}\n\n", Self::label("notes").get(lang)));
            for line in self.notes.lines().filter(|l| !l.trim().is_empty()) {
                out.push_str(&format!("- {}\n", line.trim()));
            }
        }
        out
    }

    /// The card as a JSON file (`kind` [`CARD_KIND`], version 1), pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&CardFile { kind: CARD_KIND, version: 1, card: self }).expect("a card serialises");
        s.push('\n');
        s
    }

    /// Reads [`MetricCard::to_json`]'s file. Missing fields are empty; a wrong type is an error
    /// naming the field; nothing panics.
    pub fn from_json(text: &str) -> Result<MetricCard, ParseError> {
        read_export(text, CARD_KIND, "metric card")
    }
}

/// A line of [`card::head`] without its leading label ("Attempts: 10 counted…" → "10 counted…"),
/// since the card shows the label beside it.
fn after_label(line: &str) -> String {
    let en = line.split_once(": ").map(|(_, rest)| rest);
    let zh = line.split_once('：').map(|(_, rest)| rest);
    let rest = match (en, zh) {
        (Some(a), Some(b)) => {
            if a.len() > b.len() {
                a
            } else {
                b
            }
        }
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => line,
    };
    rest.to_string()
}

/// The run's conditions in one line: what a rerun must hold fixed.
fn conditions_line(trace: &Trace, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let c = &trace.header.conditions;
    let mut parts = Vec::new();
    let unknown = if zh { "未记录" } else { "not recorded" };
    let model = c.model.as_deref().unwrap_or(unknown);
    parts.push(if zh { format!("模型 {model}") } else { format!("model {model}") });
    if let Some(api) = &c.api {
        parts.push(format!("api {api}"));
    }
    if let Some(p) = &c.prompt_set {
        let sha = c.prompt_set_sha256.as_deref().map(|s| format!(" (sha256 {}…)", s.chars().take(12).collect::<String>())).unwrap_or_default();
        parts.push(if zh { format!("提示集 {p}{sha}") } else { format!("prompt set {p}{sha}") });
    }
    if let Some(m) = c.max_tokens {
        parts.push(format!("max_tokens {m}"));
    }
    match (c.arrival.as_deref(), c.rate_per_s, c.concurrency) {
        (Some(a), Some(r), _) => parts.push(if zh {
            format!("到达 {a}（开放，{} 次/秒）", trim_num(r))
        } else {
            format!("arrival {a} (open loop, {} /s)", trim_num(r))
        }),
        (Some(a), None, Some(n)) => parts.push(if zh {
            format!("到达 {a}（闭环，并发 {n}）")
        } else {
            format!("arrival {a} (closed loop, {n} in flight)")
        }),
        (Some(a), _, _) => parts.push(if zh { format!("到达 {a}") } else { format!("arrival {a}") }),
        (None, _, _) => parts.push(if zh { format!("到达过程{unknown}") } else { format!("arrival {unknown}") }),
    }
    if let Some(s) = c.seed {
        parts.push(format!("seed {s}"));
    }
    if let Some(r) = c.repetitions {
        parts.push(match (zh, r) {
            (true, _) => format!("重复 {r} 轮"),
            (false, 1) => "1 repetition".to_string(),
            (false, _) => format!("{r} repetitions"),
        });
    }
    if let Some(w) = c.warmup {
        parts.push(if zh { format!("预热 {w}") } else { format!("warm-up {w}") });
    }
    match (c.timeout_s, c.first_token_timeout_s) {
        (None, None) => {}
        (t, f) => {
            let s = |v: Option<f64>| v.map(|v| format!("{} s", trim_num(v))).unwrap_or_else(|| "—".into());
            parts.push(if zh {
                format!("超时：整体 {}，首 token {}", s(t), s(f))
            } else {
                format!("timeouts: whole request {}, first token {}", s(t), s(f))
            });
        }
    }
    parts.join(" · ")
}

// --- progress ----------------------------------------------------------------------------------

/// The learner's last answer to one exercise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRecord {
    pub answer: Answer,
    pub correct: bool,
    /// How many times an answer was checked.
    #[serde(default)]
    pub tries: u32,
}

/// What the lab remembers for a learner: notes per lesson, answers, self-check ticks and the
/// metric card. Stored in localStorage and exported as a file ([`Progress::to_json`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Progress {
    /// The lesson open last.
    pub lesson: Option<String>,
    /// Lesson id → the learner's notes.
    pub notes: BTreeMap<String, String>,
    /// Exercise id → the last answer.
    pub answers: BTreeMap<String, AnswerRecord>,
    /// Self-check item ids ticked.
    pub self_check: BTreeSet<String>,
    pub card: Option<MetricCard>,
}

#[derive(Serialize)]
struct ProgressFile<'a> {
    kind: &'static str,
    version: u32,
    #[serde(flatten)]
    progress: &'a Progress,
}

impl Progress {
    /// Records a checked answer (a non-finite number is not kept).
    pub fn record(&mut self, exercise: &str, answer: Answer, feedback: &Feedback) {
        if matches!(answer, Answer::Number { value } if !value.is_finite()) {
            return;
        }
        let tries = self.answers.get(exercise).map_or(0, |r| r.tries).saturating_add(1);
        self.answers.insert(exercise.to_string(), AnswerRecord { answer, correct: feedback.correct, tries });
    }

    /// The exercises answered correctly.
    pub fn solved(&self) -> usize {
        self.answers.values().filter(|r| r.correct).count()
    }

    /// Drops what refers to lessons, exercises or self-check items the course no longer has
    /// (after a teacher's edit); returns what was dropped.
    pub fn retain_known(&mut self, course: &Course) -> Vec<String> {
        let mut dropped = Vec::new();
        self.notes.retain(|id, _| {
            let keep = course.lesson(id).is_some();
            if !keep {
                dropped.push(format!("notes of lesson `{id}`"));
            }
            keep
        });
        self.answers.retain(|id, _| {
            let keep = course.exercise(id).is_some();
            if !keep {
                dropped.push(format!("answer to exercise `{id}`"));
            }
            keep
        });
        self.self_check.retain(|id| {
            let keep = course.self_check.iter().any(|i| &i.id == id);
            if !keep {
                dropped.push(format!("self-check tick `{id}`"));
            }
            keep
        });
        if self.lesson.as_deref().is_some_and(|l| course.lesson(l).is_none()) {
            self.lesson = None;
        }
        dropped
    }

    /// The progress as a JSON file (`kind` [`PROGRESS_KIND`], version 1), pretty-printed.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&ProgressFile { kind: PROGRESS_KIND, version: 1, progress: self })
            .expect("progress serialises");
        s.push('\n');
        s
    }

    /// Reads [`Progress::to_json`]'s file. Missing fields are empty; unknown ones are ignored; a
    /// corrupt file is an error naming the field (`answers.t1-p95.answer.value`); nothing panics.
    pub fn from_json(text: &str) -> Result<Progress, ParseError> {
        read_export(text, PROGRESS_KIND, "progress")
    }
}
