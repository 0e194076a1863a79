//! "Name the numerator, denominator and unit": the options, the right one taken from the core's figure labels.

use serde::Serialize;

use tracelab_core::format::{self};
use tracelab_core::text::Text;
use tracelab_core::trace::Trace;

use crate::exercise::{Distractor, Exercise, ExerciseKind};
use crate::metric::{metrics_for, LessonMetric};
use crate::CORE_OPTION;

/// One option of a ratio part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartOption {
    /// [`CORE_OPTION`](crate::CORE_OPTION) for the core's label, else the distractor's id.
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
    let ExerciseKind::RatioParts(p) = &exercise.kind else {
        return None;
    };
    let metric = LessonMetric::from_code(&p.metric).filter(|m| m.is_ratio())?;
    let metrics = metrics_for(trace, &p.settings).ok()?;
    let figure = metric.figure(&metrics)?;
    let numerator = figure.numerator_label.clone()?;
    let denominator = figure.denominator_label.clone()?;
    let unit = format::unit_name(&figure.unit);
    let mix = |part: &str, core: Text, wrong: &[Distractor]| -> Vec<PartOption> {
        let mut out: Vec<PartOption> = wrong
            .iter()
            .map(|d| PartOption {
                id: d.id.clone(),
                text: d.text.clone(),
            })
            .collect();
        let at = (fnv(&format!("{}/{part}", exercise.id)) % (out.len() as u64 + 1)) as usize;
        out.insert(
            at,
            PartOption {
                id: CORE_OPTION.to_string(),
                text: core,
            },
        );
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
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
