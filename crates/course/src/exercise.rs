//! Exercises as `course.json` writes them: the kinds (number, choice, ratio parts, free text, picked rows, a drawn map) and their fields, each kind checked for the fields it may have.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use tracelab_core::settings::{Settings, PAIR_KEYS};
use tracelab_core::text::Text;

use crate::json::json_kind;

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
    /// `"kind": "pick_rows"` — pick the attempts of a sample that refute "the GPU is busy, so
    /// users are fast", checked against the core ([`check_pick`](crate::check_pick)).
    PickRows(PickRowsExercise),
    /// `"kind": "draw_map"` — the learner draws their own system map ([`SystemMap`](crate::SystemMap)),
    /// checked for the seed's parts.
    DrawMap(DrawMapExercise),
}

impl ExerciseKind {
    pub fn code(&self) -> &'static str {
        match self {
            ExerciseKind::Number(_) => "number",
            ExerciseKind::Choice(_) => "choice",
            ExerciseKind::RatioParts(_) => "ratio_parts",
            ExerciseKind::FreeText(_) => "free_text",
            ExerciseKind::PickRows(_) => "pick_rows",
            ExerciseKind::DrawMap(_) => "draw_map",
        }
    }
}

/// A number the learner computes from a sample under given settings; the key is the core's.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberExercise {
    /// A file name under `public/samples/`.
    pub sample: String,
    pub settings: Pairs,
    /// A [`LessonMetric`](crate::LessonMetric) code, e.g. `ttft_p95_s`.
    pub metric: String,
    /// The answer as the lesson states it, in `unit`; a test checks it against the core.
    pub answer: f64,
    /// How far an answer may be from the key and still be right (in `unit`; default 0).
    pub tolerance: f64,
    /// An [`AnswerUnit`](crate::AnswerUnit) code: `count`, `%`, `ratio`, `s`, `ms`, `/s`, `money`, `tokens/s`.
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
/// core's own label for the figure (id [`CORE_OPTION`](crate::CORE_OPTION)); the course gives the wrong ones.
#[derive(Debug, Clone, PartialEq)]
pub struct RatioPartsExercise {
    pub sample: String,
    pub settings: Pairs,
    /// A [`LessonMetric`](crate::LessonMetric) code whose figure is a ratio (`failure_rate`, `goodput_per_s`, …).
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

/// Pick rows of a sample with GPU telemetry as counter-evidence: right when at least `min_rows`
/// are picked and each was slow while the GPU samples inside it averaged `busy_pct` or more.
#[derive(Debug, Clone, PartialEq)]
pub struct PickRowsExercise {
    /// A file name under `public/samples/`, with GPU samples on the run's clock.
    pub sample: String,
    pub settings: Pairs,
    /// What counts as a busy GPU: mean utilisation in % over the attempt's interval.
    pub busy_pct: f64,
    pub min_rows: usize,
}

/// Draw a system map: right when it has every part the seed asks for
/// ([`SystemMap::problems`](crate::SystemMap::problems)).
#[derive(Debug, Clone, PartialEq)]
pub struct DrawMapExercise {
    /// The fewest named steps the serving path may have.
    pub min_steps: usize,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    busy_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_rows: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    min_steps: Option<usize>,
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
            ("busy_pct", self.busy_pct.is_some()),
            ("min_rows", self.min_rows.is_some()),
            ("min_steps", self.min_steps.is_some()),
        ];
        fields
            .into_iter()
            .filter(|(_, p)| *p)
            .map(|(f, _)| f)
            .collect()
    }
}

/// The kinds and the fields each may carry.
const KIND_FIELDS: [(&str, &[&str]); 6] = [
    (
        "number",
        &[
            "sample",
            "settings",
            "metric",
            "answer",
            "tolerance",
            "unit",
            "mistakes",
        ],
    ),
    ("choice", &["options", "multiple", "diagram"]),
    (
        "ratio_parts",
        &["sample", "settings", "metric", "distractors"],
    ),
    ("free_text", &["checklist", "min_checked", "min_chars"]),
    ("pick_rows", &["sample", "settings", "busy_pct", "min_rows"]),
    ("draw_map", &["min_steps"]),
];

impl TryFrom<RawExercise> for Exercise {
    type Error = String;

    fn try_from(r: RawExercise) -> Result<Exercise, String> {
        let Some((_, allowed)) = KIND_FIELDS.iter().find(|(k, _)| *k == r.kind) else {
            let kinds: Vec<&str> = KIND_FIELDS.iter().map(|(k, _)| *k).collect();
            return Err(format!(
                "exercise `{}`: unknown kind `{}` (known: {})",
                r.id,
                r.kind,
                kinds.join(", ")
            ));
        };
        if let Some(stray) = r.present().into_iter().find(|f| !allowed.contains(f)) {
            return Err(format!(
                "exercise `{}`: `{stray}` does not belong to a `{}` exercise",
                r.id, r.kind
            ));
        }
        let need = |field: &str| {
            format!(
                "exercise `{}`: a `{}` exercise needs `{field}`",
                r.id, r.kind
            )
        };
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
            "pick_rows" => ExerciseKind::PickRows(PickRowsExercise {
                sample: r.sample.clone().ok_or_else(|| need("sample"))?,
                settings: r.settings.clone().unwrap_or_default(),
                busy_pct: r.busy_pct.ok_or_else(|| need("busy_pct"))?,
                min_rows: r.min_rows.ok_or_else(|| need("min_rows"))?,
            }),
            "draw_map" => ExerciseKind::DrawMap(DrawMapExercise {
                min_steps: r.min_steps.unwrap_or(4),
            }),
            _ => ExerciseKind::FreeText(FreeTextExercise {
                checklist: r.checklist.clone().ok_or_else(|| need("checklist"))?,
                min_checked: r.min_checked.unwrap_or(0),
                min_chars: r.min_chars.unwrap_or(1),
            }),
        };
        Ok(Exercise {
            id: r.id,
            prompt: r.prompt,
            hint: r.hint,
            explain: r.explain,
            kind,
        })
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
            ExerciseKind::PickRows(p) => {
                r.sample = Some(p.sample);
                r.settings = (!p.settings.is_empty()).then_some(p.settings);
                r.busy_pct = Some(p.busy_pct);
                r.min_rows = Some(p.min_rows);
            }
            ExerciseKind::DrawMap(d) => {
                r.min_steps = Some(d.min_steps);
            }
        }
        r
    }
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
                out.push(format!(
                    "unknown setting `{key}` (known: {})",
                    PAIR_KEYS.join(", ")
                ));
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
