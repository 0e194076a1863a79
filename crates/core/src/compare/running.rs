//! Confidence that grows as a class steps through a trace: the headline figures over the rows
//! seen so far, each with its 95 % interval ([`Intervals`]: Wilson for the rates, order
//! statistics for the percentiles). With few rows the intervals are wide and a tail percentile
//! has no upper bound at all (the interval says from which n it has one), so "n = 8 cannot
//! support a tail claim" is seen on the screen, not told.

use serde::Serialize;

use super::uncertainty::{FigureInterval, Intervals, Readings};
use crate::figure::Figure;
use crate::format;
use crate::index::Index;
use crate::metrics::Metrics;
use crate::settings::{Population, Settings};
use crate::text::{Lang, Text};
use crate::trace::Attempt;

/// One figure over the rows seen so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunningFigure {
    pub figure: Figure,
    /// `None` while the figure is undefined (no TTFT yet, say).
    pub interval: Option<FigureInterval>,
}

/// The figures after row `upto`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Running {
    /// Rows seen (`upto + 1`, at most the trace's).
    pub rows: usize,
    /// The joint rate, the failure rate, P50 and the tail percentile of TTFT, in that order.
    pub figures: Vec<RunningFigure>,
}

/// The running figures after row `upto` (0-based, inclusive): the rows `0..=upto` indexed and
/// measured as a trace of their own, under the same settings. O(k log k) for k rows.
pub fn running(attempts: &[Attempt], settings: &Settings, upto: usize) -> Running {
    let (rows, ix) = prefix_index(attempts, settings.population, upto);
    running_over(&ix, &Readings::default(), rows, settings)
}

/// The index of the rows `0..=upto` under `population`, and how many rows that is: what
/// [`running_over`] measures. It depends on the population alone, so a page keeps it while the
/// threshold or the comparison changes (at 1,000,000 rows it takes about a second to build).
pub fn prefix_index(attempts: &[Attempt], population: Population, upto: usize) -> (usize, Index) {
    let rows = &attempts[..attempts.len().min(upto.saturating_add(1))];
    (rows.len(), Index::build(rows, population))
}

/// The running figures over `rows` rows, from their index ([`prefix_index`]) and the readings
/// kept beside it (see [`Readings`]: a threshold edit then reads one series again, not all).
pub fn running_over(ix: &Index, readings: &Readings, rows: usize, settings: &Settings) -> Running {
    let m = Metrics::compute(ix, settings);
    let iv = Intervals::compute_kept(ix, readings, settings, &m);
    let figures = [&m.joint_rate, &m.failure_rate, &m.ttft_p50, &m.ttft_tail]
        .into_iter()
        .map(|f| RunningFigure {
            figure: f.clone(),
            interval: iv.get(&f.key).filter(|_| f.value.is_some()).cloned(),
        })
        .collect();
    Running { rows, figures }
}

impl RunningFigure {
    /// "P95 TTFT 2 s (n = 8) · 95 % interval 1.2 s … no upper bound (…) — no upper bound exists: …".
    pub fn line(&self, lang: Lang) -> String {
        let f = &self.figure;
        let n =
            f.n.map(|n| format!(" (n = {})", format::integer(n as u64)))
                .unwrap_or_default();
        let mut out = format!("{} {}{n}", f.name.get(lang), format::value(f, lang));
        if let Some(iv) = &self.interval {
            out.push_str(" · ");
            out.push_str(&iv.describe(&f.unit, lang));
            if let Some(note) = &iv.note {
                out.push_str(if lang == Lang::Zh {
                    " —— "
                } else {
                    " — "
                });
                out.push_str(note.get(lang));
            }
        }
        out
    }
}

impl Running {
    /// The heading and one line per figure, a line each ([`Running::heading`], [`RunningFigure::line`]).
    pub fn text(&self, lang: Lang) -> String {
        let mut out = self.heading().get(lang).to_string();
        for f in &self.figures {
            out.push('\n');
            out.push_str(&f.line(lang));
        }
        out
    }

    /// The heading of the list: "After 8 rows, 95 % intervals:".
    pub fn heading(&self) -> Text {
        Text::new(
            format!(
                "After {}, with 95 % intervals:",
                format::count(self.rows, "row", "rows")
            ),
            format!(
                "前 {} 行，附 95 % 区间：",
                format::integer(self.rows as u64)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::test_data::ten;

    #[test]
    fn the_intervals_narrow_as_rows_are_added_and_the_tail_bound_waits_for_enough_rows() {
        let a = ten();
        let s = Settings::default();
        let width = |r: &Running, i: usize| {
            let b = &r.figures[i].interval.as_ref().unwrap().bounds;
            b.hi.unwrap() - b.lo.unwrap()
        };
        let early = running(&a, &s, 2);
        let late = running(&a, &s, 9);
        assert_eq!((early.rows, late.rows), (3, 10));
        assert!(
            width(&late, 0) < width(&early, 0),
            "the joint rate's interval narrows"
        );
        // The P95 of 8 TTFTs: the value exists, its upper bound does not, and it says why.
        let p95 = &late.figures[3];
        assert_eq!(p95.figure.value, Some(2.0));
        let iv = p95.interval.as_ref().unwrap();
        assert!(iv.bounds.hi.is_none() && iv.bounds.lo.is_some(), "{iv:?}");
        let line = p95.line(Lang::En);
        assert!(
            line.contains("no upper bound") && line.contains("n ≥ 72"),
            "{line}"
        );
        assert!(
            p95.line(Lang::Zh).contains("无上界"),
            "{}",
            p95.line(Lang::Zh)
        );
        // Past the end, the whole trace; row 0 alone has one TTFT and no failure yet.
        assert_eq!(running(&a, &s, 99).rows, 10);
        let first = running(&a, &s, 0);
        assert_eq!(first.figures[1].figure.value, Some(0.0));
        assert_eq!(first.heading().en, "After 1 row, with 95 % intervals:");
        assert_eq!(late.text(Lang::En).lines().count(), 5);
    }

    #[test]
    fn failures_over_successes_gets_no_wilson_interval_even_below_one() {
        let a = ten();
        let mut s = Settings::default();
        let ix = |s: &Settings| Index::build(&a, s.population);
        let right = Intervals::compute(&ix(&s), &s, &Metrics::compute(&ix(&s), &s));
        assert!(
            right.get("failure_rate").is_some(),
            "2 of 10 is a proportion"
        );
        // 2 failures ÷ 8 successes = 25 %: below 1, yet no share of the successes.
        s.population.failure_denominator = crate::settings::FailureDenominator::Successes;
        let m = Metrics::compute(&ix(&s), &s);
        assert_eq!(m.failure_rate.value, Some(0.25));
        let iv = Intervals::compute(&ix(&s), &s, &m);
        assert!(
            iv.get("failure_rate").is_none(),
            "{:?}",
            iv.get("failure_rate")
        );
        assert!(
            iv.get("joint_rate").is_some(),
            "the other rates keep theirs"
        );
        // The running tally prints none either, and the figure's note says why.
        let line = running(&a, &s, 9).figures[1].line(Lang::En);
        assert!(
            line.starts_with("Failure rate 25 %")
                && !line.contains("interval")
                && !line.contains("Wilson"),
            "{line}"
        );
        assert!(m
            .failure_rate
            .note
            .as_ref()
            .is_some_and(|n| n.en.contains("not a proportion")));
    }
}
