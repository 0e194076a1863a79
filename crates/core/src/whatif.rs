//! What-if edits a learner makes to a loaded trace — change a row's outcome, TTFT or quality,
//! delete rows — kept apart from the trace itself so "reset" is always one step away and the
//! original is never lost.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::metrics::Metrics;
use crate::settings::{Mistake, Settings};
use crate::text::Text;
use crate::trace::{Attempt, Outcome, Quality};
use crate::verdict::{verdict, Reason};

/// A learner's change to one row. `None` keeps the original value.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RowEdit {
    /// An outcome name as written in a trace (`success`, `http_error`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// `Some(None)` removes the TTFT (no token came); `Some(Some(ms))` sets it. Written as
    /// `null` and as a number, absent when kept (`present_or_null`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "present_or_null"
    )]
    pub ttft_ms: Option<Option<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<Quality>,
}

/// A field that may be absent (keep the original), `null` (remove the value) or a value (set it):
/// serde alone reads `null` as absent, which would turn "no token came" into "unchanged".
mod present_or_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Option<f64>>, s: S) -> Result<S::Ok, S::Error> {
        v.flatten().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
        Option::<f64>::deserialize(d).map(Some)
    }
}

/// A wrong choice or a what-if edit in force, with the figures it moves: the lab marks those
/// cards, and only those (a mistake that moves nothing here is named at its control and in the
/// what-if note, not on every card).
#[derive(Debug, Clone, PartialEq)]
pub struct Marked {
    pub setting: &'static str,
    pub label: Text,
    /// The keys of the figures that differ without it ([`Metrics::moved_from`]).
    pub figures: Vec<String>,
}

/// Every wrong choice in `settings` and every mistake of `whatif` on `original`, each with the
/// figures it moves: a wrong choice against the same attempts with that one choice put right
/// ([`Settings::corrected`]); the edits against the attempts as recorded. `now` are the figures
/// shown (the working attempts under `settings`).
pub fn marked(
    original: &[Attempt],
    working: &[Attempt],
    whatif: &WhatIf,
    settings: &Settings,
    now: &Metrics,
) -> Vec<Marked> {
    let mut out: Vec<Marked> = settings
        .mistakes()
        .into_iter()
        .map(|m| {
            let right = Metrics::of(working, &settings.corrected(m.setting));
            Marked {
                setting: m.setting,
                label: m.label,
                figures: now.moved_from(&right),
            }
        })
        .collect();
    if !whatif.is_empty() {
        let edits = whatif
            .mistakes(original)
            .into_iter()
            .chain(whatif.verdict_flips(original, settings))
            .collect::<Vec<_>>();
        if !edits.is_empty() {
            let recorded = Metrics::of(original, settings);
            let figures = now.moved_from(&recorded);
            out.extend(edits.into_iter().map(|m| Marked {
                setting: m.setting,
                label: m.label,
                figures: figures.clone(),
            }));
        }
    }
    out
}

/// All edits to one trace, by row position in the original trace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WhatIf {
    #[serde(default)]
    pub deleted: BTreeSet<usize>,
    #[serde(default)]
    pub edits: BTreeMap<usize, RowEdit>,
}

impl WhatIf {
    pub fn is_empty(&self) -> bool {
        self.deleted.is_empty() && self.edits.is_empty()
    }

    /// The attempts as edited: rows deleted, edits applied, original order kept.
    /// An edit that makes an attempt inconsistent is repaired the way the lesson defines it:
    /// an outcome that received no token loses its TTFT (missing, not 0).
    pub fn apply(&self, original: &[Attempt]) -> Vec<Attempt> {
        original
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.deleted.contains(i))
            .map(|(i, a)| match self.edits.get(&i) {
                None => a.clone(),
                Some(edit) => edited(a, edit),
            })
            .collect()
    }

    /// Positions in the edited list back to positions in the original trace.
    pub fn kept_rows(&self, original_len: usize) -> Vec<usize> {
        (0..original_len)
            .filter(|i| !self.deleted.contains(i))
            .collect()
    }

    /// Deleting failed rows by hand is the same mistake as the "failed rows deleted" choice.
    pub fn mistakes(&self, original: &[Attempt]) -> Vec<Mistake> {
        let failed: Vec<&str> = self
            .deleted
            .iter()
            .filter_map(|&i| original.get(i))
            .filter(|a| !a.outcome.is_success())
            .map(|a| a.id.as_str())
            .collect();
        if failed.is_empty() {
            return Vec::new();
        }
        let ids = failed.join(", ");
        vec![Mistake {
            setting: "deleted_rows",
            label: Text::new(
                format!("Wrong: failed attempts deleted ({ids})"),
                format!("错误：删除了失败的尝试（{ids}）"),
            ),
            false_conclusion: Text::new(
                "Those users waited and got no answer; deleting their rows makes the failure rate and every per-attempt rate look better than what users saw.",
                "这些用户等待后没有得到回答；删掉这些行会让失败率和所有按尝试计算的比率看起来比用户的真实体验更好。",
            ),
        }]
    }
}

impl WhatIf {
    /// How many rows are edited and deleted, in words: the figures are then hypothetical,
    /// computed on a trace that was not recorded.
    pub fn summary(&self) -> Text {
        let (e, d) = (self.edits.len(), self.deleted.len());
        let en = match (e, d) {
            (e, 0) => format!("{e} row{} edited", if e == 1 { "" } else { "s" }),
            (0, d) => format!("{d} row{} deleted", if d == 1 { "" } else { "s" }),
            (e, d) => format!(
                "{e} row{} edited, {d} deleted",
                if e == 1 { "" } else { "s" }
            ),
        };
        let zh = match (e, d) {
            (e, 0) => format!("修改了 {e} 行"),
            (0, d) => format!("删除了 {d} 行"),
            (e, d) => format!("修改了 {e} 行，删除了 {d} 行"),
        };
        Text::new(en, zh)
    }

    /// Edits that turn a row the trace judged not qualified into a qualified one, under
    /// `settings`: each names the false conclusion, as a wrong setting does. Counting R5 (a
    /// quality fail) as qualified is one of the lesson's named mistakes.
    pub fn verdict_flips(&self, original: &[Attempt], settings: &Settings) -> Vec<Mistake> {
        self.edits
            .iter()
            .filter(|(i, _)| !self.deleted.contains(i))
            .filter_map(|(&i, edit)| {
                let a = original.get(i)?;
                let was = verdict(a, settings).reason?;
                if verdict(&edited(a, edit), settings).reason == Some(was) {
                    return None;
                }
                let id = a.id.as_str();
                let (en, zh) = match was {
                    Reason::Failure => (
                        format!("{id} failed in the trace: counting it as served hides a user who waited and got no complete answer, and lowers the failure rate below what users saw."),
                        format!("{id} 在记录中是失败的：把它算作已服务，会藏起一个等待后没有得到完整回答的用户，并让失败率低于用户的真实体验。"),
                    ),
                    Reason::Quality => (
                        format!("{id}'s answer failed the quality check: counting it as qualified reports a wrong answer as a served user, so qualified, goodput and cost per 1,000 qualified all look better than the run was."),
                        format!("{id} 的回答没有通过质量检查：把它算作合格，就是把错误的回答当作已服务的用户，合格数、goodput 和每千合格成本都会比实际运行更好看。"),
                    ),
                    Reason::Latency => (
                        format!("{id}'s first token came too late (or never): changing its TTFT reports a wait the user did not have, so the run looks faster than it was."),
                        format!("{id} 的首 token 来得太晚（或没有来）：修改它的 TTFT 等于报告一个用户并没有经历的等待时间，运行看起来比实际更快。"),
                    ),
                };
                Some(Mistake {
                    setting: "row_edit",
                    label: Text::new(
                        format!("Hypothetical: {id} edited from “not qualified — {}”", was.text().en),
                        format!("假设情形：{id} 原本“不合格 — {}”，已被修改", was.text().zh),
                    ),
                    false_conclusion: Text::new(en, zh),
                })
            })
            .collect()
    }
}

fn edited(original: &Attempt, edit: &RowEdit) -> Attempt {
    let mut a = original.clone();
    if let Some(name) = &edit.outcome {
        // An HTTP error edited in without a status is a generic server error.
        if let Ok(o) = Outcome::from_name(name, edit.http_status.or(Some(500))) {
            a.outcome = o;
        }
    }
    if let Some(ttft) = edit.ttft_ms {
        a.ttft_ms = ttft.filter(|t| t.is_finite() && *t >= 0.0);
    }
    if let Some(q) = edit.quality {
        a.quality = q;
    }
    if matches!(
        a.outcome,
        Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError
    ) {
        a.ttft_ms = None;
    }
    if let (Some(t), Some(e)) = (a.ttft_ms, a.e2e_ms) {
        if t > e {
            a.e2e_ms = Some(t);
        }
    }
    a
}
