//! Counter-evidence picked from a trace: the learner picks the attempts that refute "the GPU is
//! busy, so users are fast" (a `pick_rows` exercise), and the pick is checked against the core's
//! [`gpu_beside`]: a row refutes when the GPU samples inside its interval average at least the
//! exercise's `busy_pct` while the attempt was slow (late, timed out, or among the slowest E2E).
//! The right rows are computed, never listed in the course.

use std::collections::BTreeSet;

use tracelab_core::format::trim_num;
use tracelab_core::gpu_beside::{gpu_beside, AttemptGpu, GpuBeside};
use tracelab_core::text::{Lang, Text};
use tracelab_core::trace::Trace;
use tracelab_core::units::s_from_ms;
use tracelab_core::verdict::verdict;

use crate::course::settings_for;
use crate::exercise::{Exercise, ExerciseKind, PickRowsExercise};
use crate::feedback::{for_audience, Audience, Feedback};
use crate::t;

/// One row the learner can pick, with what the core read for it. Nothing here says whether it
/// refutes the claim: that is the learner's call.
#[derive(Debug, Clone, PartialEq)]
pub struct PickRow {
    pub id: String,
    pub start_s: f64,
    pub e2e_s: f64,
    /// The attempt's outcome code (`success`, `timeout_before_first_token`, …).
    pub outcome: &'static str,
    /// The outcome in words (the trace's own name in brackets in Chinese).
    pub outcome_text: Text,
    /// TTFT in seconds, `None` when no token came.
    pub ttft_s: Option<f64>,
    /// Mean GPU utilisation over the samples inside the attempt's interval (`None`: no sample).
    pub util_pct: Option<f64>,
}

/// What the core says about each measured attempt of the exercise's sample (`None` when the
/// exercise is no `pick_rows`, its settings are refused, or the sample has no GPU telemetry).
fn beside(exercise: &Exercise, trace: &Trace) -> Option<(PickRowsExercise, Vec<AttemptGpu>)> {
    let ExerciseKind::PickRows(p) = &exercise.kind else {
        return None;
    };
    let settings = settings_for(&trace.header, &p.settings).ok()?;
    match gpu_beside(trace, &settings) {
        GpuBeside::Unverified => None,
        GpuBeside::Measured { attempts, .. } => Some((p.clone(), attempts)),
    }
}

/// Whether one attempt refutes the claim: slow while the GPU was busy.
fn refutes(a: &AttemptGpu, busy_pct: f64) -> bool {
    a.slow && a.util_pct.is_some_and(|u| u >= busy_pct)
}

/// The rows the learner picks from, in the sample's order.
pub fn pick_rows(exercise: &Exercise, trace: &Trace) -> Option<Vec<PickRow>> {
    let ExerciseKind::PickRows(p) = &exercise.kind else {
        return None;
    };
    let settings = settings_for(&trace.header, &p.settings).ok()?;
    let (_, attempts) = beside(exercise, trace)?;
    Some(
        attempts
            .iter()
            .map(|a| {
                let at = &trace.attempts[a.index];
                PickRow {
                    id: a.id.clone(),
                    start_s: s_from_ms(a.start_ms),
                    e2e_s: s_from_ms(a.end_ms - a.start_ms),
                    outcome: at.outcome.name(),
                    outcome_text: Text::new(at.outcome.label(Lang::En), at.outcome.label(Lang::Zh)),
                    ttft_s: verdict(at, &settings).ttft_s,
                    util_pct: a.util_pct,
                }
            })
            .collect(),
    )
}

/// The ids of every row that refutes the claim, as the core computes them (the teacher's key).
pub fn refuting_rows(exercise: &Exercise, trace: &Trace) -> Option<BTreeSet<String>> {
    let (p, attempts) = beside(exercise, trace)?;
    Some(
        attempts
            .iter()
            .filter(|a| refutes(a, p.busy_pct))
            .map(|a| a.id.clone())
            .collect(),
    )
}

/// Checks a pick against the core. Right when at least `min_rows` rows are picked and every one
/// refutes; each wrong row is named with why (the learner's own row, never one they left out).
pub fn check_pick(
    exercise: &Exercise,
    picked: &[String],
    trace: &Trace,
    audience: Audience,
) -> Feedback {
    let f = judge_pick(exercise, picked, trace);
    for_audience(exercise, f, audience)
}

fn judge_pick(exercise: &Exercise, picked: &[String], trace: &Trace) -> Feedback {
    let wrong = |message: Text| Feedback {
        correct: false,
        message,
        expected: None,
    };
    let Some((p, attempts)) = beside(exercise, trace) else {
        return wrong(t(
            "This sample has no GPU samples on the run's clock, so nothing can be checked against it.",
            "这个样本在运行时钟上没有 GPU 采样，无法据此核对。",
        ));
    };
    let busy = trim_num(p.busy_pct);
    let picked: BTreeSet<&str> = picked.iter().map(String::as_str).collect();
    let mut lines = Vec::new();
    let mut good = 0usize;
    for id in &picked {
        let Some(a) = attempts.iter().find(|a| a.id == *id) else {
            lines.push(Text::new(
                format!("{id}: no measured attempt of this sample has this id."),
                format!("{id}：这个样本里没有这个编号的测量尝试。"),
            ));
            continue;
        };
        if refutes(a, p.busy_pct) {
            good += 1;
        } else if a.util_pct.is_none() {
            lines.push(Text::new(
                format!("{id}: no GPU sample falls inside this attempt's interval, so it says nothing about the GPU."),
                format!("{id}：这次尝试的时间区间里没有 GPU 采样，它说明不了 GPU 的情况。"),
            ));
        } else if !a.slow {
            lines.push(Text::new(
                format!("{id}: this user was not slow (TTFT within the threshold, no timeout, E2E not among the slowest 5 %)."),
                format!("{id}：这个用户并不慢（TTFT 在门槛以内、没有超时、E2E 也不在最慢的 5% 里）。"),
            ));
        } else {
            lines.push(Text::new(
                format!("{id}: slow, but the GPU averaged under {busy} % during it: this is not a busy GPU."),
                format!("{id}：确实慢，但这段时间 GPU 平均不到 {busy}%：这不是 GPU 很忙。"),
            ));
        }
    }
    let min = p.min_rows;
    if lines.is_empty() && good < min {
        lines.push(Text::new(
            format!("{good} row(s) picked; pick at least {min}, each slow while the GPU averaged {busy} % or more during it."),
            format!("已选 {good} 行；至少选 {min} 行，每一行都要在 GPU 平均利用率不低于 {busy}% 时变慢。"),
        ));
    }
    let correct = lines.is_empty();
    let lead = if correct {
        t("Right.", "正确。")
    } else {
        t("Not yet.", "还不对。")
    };
    let mut all = vec![lead];
    all.extend(lines);
    if correct {
        all.push(exercise.explain.clone().unwrap_or_else(|| t("", "")));
    }
    Feedback {
        correct,
        message: crate::feedback::join(&all),
        expected: None,
    }
}
