//! Replications: several independent runs under one contract, the gold standard for how much a
//! run's figure moves. Each run starts afresh, so its figures are independent of the other
//! runs' whatever the correlation inside it: the between-run interval is Student's t on the
//! runs' mean (R − 1 degrees of freedom), and two sides of replications are compared by Welch's
//! t on the difference of their means. A single run's interval rests on its attempts instead
//! (`uncertainty`, on the effective sample where they are correlated); each says which it is.

use serde::Serialize;

use super::dependence::{mean_var, t975};
use super::diff::{Judgement, Worse};
use super::stats::Bounds;
use crate::figure::{Figure, Unit};
use crate::format::{integer, number_in_unit};
use crate::metrics::Metrics;
use crate::text::{Lang, Text};

/// One figure across the runs of one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replicated {
    pub key: String,
    pub name: Text,
    pub unit: Unit,
    /// Each run's value, in the order given (None where a run has none).
    pub values: Vec<Option<f64>>,
    /// The mean over the runs that have a value.
    pub mean: Option<f64>,
    /// Student's t interval of the mean, between runs (None below two values).
    pub bounds: Option<Bounds>,
    /// Runs with a value.
    pub runs: usize,
}

/// One figure, one side against the other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplicatedRow {
    pub base: Replicated,
    pub new: Replicated,
    /// new − base of the means.
    pub difference: Option<f64>,
    /// Welch's t interval of the difference.
    pub interval: Option<Bounds>,
    pub judgement: Judgement,
    pub worse: Worse,
    pub verdict: Text,
}

/// The figures compared between runs, with which way is worse.
fn figures(m: &Metrics) -> [(&Figure, Worse); 8] {
    [
        (&m.ttft_p50, Worse::Higher),
        (&m.ttft_tail, Worse::Higher),
        (&m.failure_rate, Worse::Higher),
        (&m.quality_pass_rate, Worse::Lower),
        (&m.joint_rate, Worse::Lower),
        (&m.goodput, Worse::Lower),
        (&m.e2e_p50, Worse::Higher),
        (&m.e2e_tail, Worse::Higher),
    ]
}

/// The mean of independent values (one per run) and its Student's t interval; None below two.
pub(crate) fn mean_interval(values: &[f64]) -> Option<(f64, Bounds)> {
    let r = values.len();
    (r >= 2).then(|| {
        let (mean, var) = mean_var(values);
        let half = t975(r as f64 - 1.0) * (var / r as f64).sqrt();
        (mean, Bounds::closed(mean - half, mean + half))
    })
}

/// Every compared figure across `runs`.
pub fn between_runs(runs: &[&Metrics]) -> Vec<Replicated> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    figures(first)
        .iter()
        .enumerate()
        .map(|(i, (f, _))| {
            let values: Vec<Option<f64>> = runs.iter().map(|m| figures(m)[i].0.value).collect();
            let present: Vec<f64> = values.iter().flatten().copied().collect();
            let (mean, bounds) = match mean_interval(&present) {
                Some((mean, b)) => (Some(mean), Some(b)),
                None => (present.first().copied(), None),
            };
            Replicated {
                key: f.key.clone(),
                name: f.name.clone(),
                unit: f.unit.clone(),
                values,
                mean,
                bounds,
                runs: present.len(),
            }
        })
        .collect()
}

/// Each figure's base side against its new side, by Welch's t on the means.
pub fn compare_sides(base: &[&Metrics], new: &[&Metrics]) -> Vec<ReplicatedRow> {
    let worse: Vec<Worse> = base
        .first()
        .map(|m| figures(m).iter().map(|(_, w)| *w).collect())
        .unwrap_or_default();
    between_runs(base)
        .into_iter()
        .zip(between_runs(new))
        .zip(worse)
        .map(|((b, n), worse)| {
            let stats = |r: &Replicated| {
                let v: Vec<f64> = r.values.iter().flatten().copied().collect();
                (v.len() >= 2).then(|| {
                    let (m, var) = mean_var(&v);
                    (m, var / v.len() as f64, v.len() as f64)
                })
            };
            let difference = b.mean.zip(n.mean).map(|(b, n)| n - b);
            let (interval, judgement) = match (stats(&b), stats(&n)) {
                (Some((mb, sb, rb)), Some((mn, sn, rn))) => {
                    let se2 = sb + sn;
                    let df = if se2 > 0.0 {
                        se2 * se2 / (sb * sb / (rb - 1.0) + sn * sn / (rn - 1.0))
                    } else {
                        rb + rn - 2.0
                    };
                    let half = t975(df) * se2.sqrt();
                    let d = mn - mb;
                    let iv = Bounds::closed(d - half, d + half);
                    let j = if d - half > 0.0 {
                        Judgement::Up
                    } else if d + half < 0.0 {
                        Judgement::Down
                    } else {
                        Judgement::NoEvidence
                    };
                    (Some(iv), j)
                }
                _ if difference.is_none() => (None, Judgement::Undefined),
                _ => (None, Judgement::TooFew { needed: 2 }),
            };
            let verdict = verdict(&judgement, worse, b.unit == Unit::Seconds);
            ReplicatedRow {
                base: b,
                new: n,
                difference,
                interval,
                judgement,
                worse,
                verdict,
            }
        })
        .collect()
}

fn verdict(j: &Judgement, worse: Worse, latency: bool) -> Text {
    let worse_word = |up: bool| {
        if (up && worse == Worse::Higher) || (!up && worse == Worse::Lower) {
            ("worse", "变差")
        } else {
            ("better", "变好")
        }
    };
    match j {
        Judgement::Up if latency => Text::new(
            "slower beyond the runs' spread",
            "超出各次运行间的波动：变慢",
        ),
        Judgement::Down if latency => Text::new(
            "faster beyond the runs' spread",
            "超出各次运行间的波动：变快",
        ),
        Judgement::Up | Judgement::Down => {
            let up = *j == Judgement::Up;
            let (en, zh) = worse_word(up);
            let (dir_en, dir_zh) = if up {
                ("higher", "升高")
            } else {
                ("lower", "降低")
            };
            Text::new(
                format!("{dir_en} beyond the runs' spread ({en})"),
                format!("超出各次运行间的波动：{dir_zh}（{zh}）"),
            )
        }
        Judgement::NoEvidence => Text::new(
            "no evidence of a change between the runs",
            "各次运行之间没有证据表明有变化",
        ),
        Judgement::TooFew { .. } => Text::new(
            "too few runs to tell (needs 2 or more per side)",
            "运行次数太少，无法判断（每边至少 2 次）",
        ),
        Judgement::Undefined => Text::new(
            "cannot compare: a side has no value",
            "无法比较：有一方没有数值",
        ),
    }
}

/// The comparison of two sides of replications for a terminal.
pub fn render_text(
    rows: &[ReplicatedRow],
    base_names: &[String],
    new_names: &[String],
    lang: Lang,
) -> String {
    let zh = lang == Lang::Zh;
    let mut out = String::new();
    let (rb, rn) = (
        integer(base_names.len() as u64),
        integer(new_names.len() as u64),
    );
    out.push_str(&if zh {
        format!(
            "重复运行的比较：基线 {rb} 次（{}）→ 新 {rn} 次（{}）\n",
            base_names.join("、"),
            new_names.join("、")
        )
    } else {
        format!(
            "Replications compared: base {rb} runs ({}) → new {rn} runs ({})\n",
            base_names.join(", "),
            new_names.join(", ")
        )
    });
    out.push_str(if zh {
        "每个区间来自各次运行之间（每次运行一个数值，Student t），不是来自一次运行内部的尝试；差值用 Welch t。\n\n"
    } else {
        "Each interval comes from between the runs (one value per run, Student's t), not from the attempts inside one run; the difference by Welch's t.\n\n"
    });
    let cell = |v: Option<f64>, unit: &Unit| {
        v.map(|v| number_in_unit(v, unit, lang))
            .unwrap_or_else(|| "—".into())
    };
    let bounds = |b: &Option<Bounds>, unit: &Unit| match b {
        Some(b) => format!("{} … {}", cell(b.lo, unit), cell(b.hi, unit)),
        None => "—".into(),
    };
    let signed = |v: f64, unit: &Unit| {
        format!(
            "{}{}",
            if v < 0.0 { "−" } else { "+" },
            number_in_unit(v.abs(), unit, lang)
        )
    };
    for r in rows {
        let unit = &r.base.unit;
        out.push_str(&format!(
            "  {}: {} [{}] → {} [{}]; {} {} [{}]: {}\n",
            r.base.name.get(lang),
            cell(r.base.mean, unit),
            bounds(&r.base.bounds, unit),
            cell(r.new.mean, unit),
            bounds(&r.new.bounds, unit),
            if zh { "差值" } else { "difference" },
            r.difference
                .map(|d| signed(d, unit))
                .unwrap_or_else(|| "—".into()),
            match &r.interval {
                Some(Bounds {
                    lo: Some(lo),
                    hi: Some(hi),
                }) => format!("{} … {}", signed(*lo, unit), signed(*hi, unit)),
                _ => "—".into(),
            },
            r.verdict.get(lang)
        ));
    }
    out
}
