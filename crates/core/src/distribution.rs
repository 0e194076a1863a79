//! The whole distribution at any size, as the lab's big-trace views place it, so a chart never
//! bins or counts for itself: the run chart's time buckets (requests in flight, qualified and
//! failed, intended against actual starts), the latency heat map's cells (run clock × latency on
//! a log scale, failures in a band of their own, never as 0) and the histogram's bins.
//!
//! Built once per working attempts and population; a threshold or `≤`/`<` edit is then a
//! binary search per bucket ([`RunBuckets::at`]), never a pass over the attempts.

use serde::{Deserialize, Serialize};

use crate::settings::{Population, Settings};
use crate::text::Lang;
use crate::trace::{Attempt, Phase, Quality};
use crate::verdict::{effective_e2e_ms, effective_ttft_ms, is_counted, threshold_ms};

/// An attempt's end on the run's clock, from its `start` there: its E2E, else its last event,
/// else its first token (the run chart's bars end there too).
pub fn end_ms(a: &Attempt, start: f64) -> f64 {
    start
        + a.e2e_ms
            .or(a.events.last().map(|e| e.at_ms))
            .or(a.ttft_ms)
            .unwrap_or(0.0)
}

/// How many attempts have a position on the run's clock (a start): what decides whether the run
/// chart can give each its own bar.
pub fn timed_count(attempts: &[Attempt]) -> usize {
    attempts.iter().filter(|a| a.start_ms.is_some()).count()
}

/// The run's clock over the attempts that have a position on it: from the earliest start
/// (actual or intended) to the latest end; `None` when no attempt has a start.
pub fn run_clock(attempts: &[Attempt]) -> Option<(f64, f64)> {
    clock(
        attempts
            .iter()
            .filter_map(|a| a.start_ms.map(|s| (s, a.intended_start_ms, end_ms(a, s)))),
    )
}

/// The attempts as the big views read them, a column per field under one population: what the
/// lab's second bundle builds from the trace it holds, and what every count below is made from.
/// A missing value is NaN.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Columns {
    /// Start on the run's clock (NaN: no position on it).
    pub start_ms: Vec<f64>,
    /// End on the run's clock: its E2E, else its last event, else its first token.
    pub end_ms: Vec<f64>,
    pub intended_ms: Vec<f64>,
    /// A success's TTFT under the population's rules (a missing one as 0 only under that wrong
    /// choice); NaN for a failure, never 0.
    pub ttft_ms: Vec<f64>,
    /// A success's E2E; NaN for a failure.
    pub e2e_ms: Vec<f64>,
    /// [`COUNTED`], [`SUCCESS`], [`PASS`], [`MEASURED`].
    pub flags: Vec<u8>,
}

/// Counted under the population.
pub const COUNTED: u8 = 1;
/// A complete success.
pub const SUCCESS: u8 = 2;
/// Its answer passed quality.
pub const PASS: u8 = 4;
/// In the measured phase (not a warm-up).
pub const MEASURED: u8 = 8;

impl Columns {
    pub fn of(attempts: &[Attempt], population: Population) -> Columns {
        let n = attempts.len();
        let mut c = Columns {
            start_ms: Vec::with_capacity(n),
            end_ms: Vec::with_capacity(n),
            intended_ms: Vec::with_capacity(n),
            ttft_ms: Vec::with_capacity(n),
            e2e_ms: Vec::with_capacity(n),
            flags: Vec::with_capacity(n),
        };
        for a in attempts {
            c.start_ms.push(a.start_ms.unwrap_or(f64::NAN));
            c.end_ms.push(a.start_ms.map_or(f64::NAN, |s| end_ms(a, s)));
            c.intended_ms.push(a.intended_start_ms.unwrap_or(f64::NAN));
            c.ttft_ms
                .push(Measure::Ttft.of(a, &population).unwrap_or(f64::NAN));
            c.e2e_ms
                .push(Measure::E2e.of(a, &population).unwrap_or(f64::NAN));
            let flag = |on: bool, f: u8| if on { f } else { 0 };
            c.flags.push(
                flag(is_counted(a, &population), COUNTED)
                    | flag(a.outcome.is_success(), SUCCESS)
                    | flag(a.quality == Quality::Pass, PASS)
                    | flag(a.phase == Phase::Measure, MEASURED),
            );
        }
        c
    }

    pub fn len(&self) -> usize {
        self.flags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// How many rows have a start on the run's clock.
    pub fn timed(&self) -> usize {
        self.start_ms.iter().filter(|s| !s.is_nan()).count()
    }

    /// [`run_clock`] over the columns.
    pub fn clock(&self) -> Option<(f64, f64)> {
        clock(
            (0..self.len())
                .filter(|i| !self.start_ms[*i].is_nan())
                .map(|i| {
                    (
                        self.start_ms[i],
                        Some(self.intended_ms[i]).filter(|v| !v.is_nan()),
                        self.end_ms[i],
                    )
                }),
        )
    }

    fn value(&self, measure: Measure, i: usize) -> f64 {
        match measure {
            Measure::Ttft => self.ttft_ms[i],
            Measure::E2e => self.e2e_ms[i],
        }
    }
}

fn clock(spans: impl Iterator<Item = (f64, Option<f64>, f64)>) -> Option<(f64, f64)> {
    let mut span: Option<(f64, f64)> = None;
    for (start, intended, last) in spans {
        let first = intended.map_or(start, |i| i.min(start));
        span = Some(match span {
            None => (first, last),
            Some((lo, hi)) => (lo.min(first), hi.max(last)),
        });
    }
    span.map(|(lo, hi)| (lo, if hi > lo { hi } else { lo + 1.0 }))
}

/// One time bucket of the run as built, before a threshold is applied.
#[derive(Debug, Clone, Default, PartialEq)]
struct Base {
    started: u32,
    intended: u32,
    counted: u32,
    failed: u32,
    in_flight_peak: u32,
    lag_max_ms: Option<f64>,
    lag_sum_ms: f64,
    lagged: u32,
    /// The TTFTs (population's rules) of the counted complete successes that passed quality,
    /// sorted: the ones the threshold decides.
    candidates: Vec<f64>,
}

/// The run cut into equal buckets of its clock; [`RunBuckets::at`] judges them under settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RunBuckets {
    pub start_ms: f64,
    pub width_ms: f64,
    base: Vec<Base>,
}

/// One bucket under settings. Attempts belong to the bucket of their actual start; `intended`
/// counts the open-loop schedule's starts in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunBucket {
    pub start_ms: f64,
    pub end_ms: f64,
    /// Attempts that started in the bucket (every phase).
    pub started: u32,
    /// Attempts the schedule meant to start in the bucket (open loop only; 0 otherwise).
    pub intended: u32,
    /// Started attempts counted under the population (the rates' denominator).
    pub counted: u32,
    pub qualified: u32,
    pub failed: u32,
    /// The most requests in flight at any moment of the bucket.
    pub in_flight_peak: u32,
    /// Client lag (actual − intended start) of the measured attempts started in the bucket.
    pub lag_mean_ms: Option<f64>,
    pub lag_max_ms: Option<f64>,
}

impl RunBucket {
    /// Qualified / counted, failures in the denominator; `None` for a bucket with none counted.
    pub fn qualified_rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| f64::from(self.qualified) / f64::from(self.counted))
    }

    /// Failed / counted; `None` for a bucket with none counted.
    pub fn failure_rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| f64::from(self.failed) / f64::from(self.counted))
    }
}

impl RunBuckets {
    /// `buckets` equal buckets over [`run_clock`]; `None` when no attempt has a start.
    pub fn build(
        attempts: &[Attempt],
        population: Population,
        buckets: usize,
    ) -> Option<RunBuckets> {
        RunBuckets::of(&Columns::of(attempts, population), buckets)
    }

    /// The same from the columns (what the lab's second bundle holds).
    pub fn of(c: &Columns, buckets: usize) -> Option<RunBuckets> {
        let (t0, t1) = c.clock()?;
        let n = buckets.max(1);
        let width_ms = (t1 - t0) / n as f64;
        let mut base = vec![Base::default(); n];
        let at = |t: f64| (((t - t0) / width_ms).floor().max(0.0) as usize).min(n - 1);
        let mut edges: Vec<(f64, i32)> = Vec::with_capacity(c.len() * 2);
        for i in 0..c.len() {
            let start = c.start_ms[i];
            if start.is_nan() {
                continue;
            }
            let (intended, flags) = (c.intended_ms[i], c.flags[i]);
            base[at(start)].started += 1;
            if !intended.is_nan() {
                base[at(intended)].intended += 1;
            }
            let b = &mut base[at(start)];
            // Client lag as `lag::lag_ms` defines it (measured attempts with both times).
            if flags & MEASURED != 0 && !intended.is_nan() {
                let lag = start - intended;
                b.lag_max_ms = Some(b.lag_max_ms.map_or(lag, |m: f64| m.max(lag)));
                b.lag_sum_ms += lag;
                b.lagged += 1;
            }
            if flags & COUNTED != 0 {
                b.counted += 1;
                if flags & SUCCESS == 0 {
                    b.failed += 1;
                } else if flags & PASS != 0 && !c.ttft_ms[i].is_nan() {
                    b.candidates.push(c.ttft_ms[i]);
                }
            }
            edges.push((start, 1));
            edges.push((c.end_ms[i], -1));
        }
        for b in &mut base {
            b.candidates.sort_by(f64::total_cmp);
        }
        // Requests in flight: ends before starts at the same instant (back to back counts once).
        edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut now: i64 = 0;
        let mut carried = 0u32;
        let mut k = 0;
        for (i, b) in base.iter_mut().enumerate() {
            let bucket_end = t0 + width_ms * (i + 1) as f64;
            let mut peak = carried;
            while k < edges.len() && (edges[k].0 < bucket_end || i == n - 1) {
                now += i64::from(edges[k].1);
                peak = peak.max(now.max(0) as u32);
                k += 1;
            }
            carried = now.max(0) as u32;
            b.in_flight_peak = peak;
        }
        Some(RunBuckets {
            start_ms: t0,
            width_ms,
            base,
        })
    }

    pub fn len(&self) -> usize {
        self.base.len()
    }

    pub fn is_empty(&self) -> bool {
        self.base.is_empty()
    }

    /// Every bucket judged under `settings`: a binary search per bucket for the threshold.
    pub fn at(&self, settings: &Settings) -> Vec<RunBucket> {
        let threshold = threshold_ms(settings);
        self.base
            .iter()
            .enumerate()
            .map(|(i, b)| RunBucket {
                start_ms: self.start_ms + self.width_ms * i as f64,
                end_ms: self.start_ms + self.width_ms * (i + 1) as f64,
                started: b.started,
                intended: b.intended,
                counted: b.counted,
                qualified: b
                    .candidates
                    .partition_point(|t| settings.comparison.holds(*t, threshold))
                    as u32,
                failed: b.failed,
                in_flight_peak: b.in_flight_peak,
                lag_mean_ms: (b.lagged > 0).then(|| b.lag_sum_ms / f64::from(b.lagged)),
                lag_max_ms: b.lag_max_ms,
            })
            .collect()
    }
}

/// Which latency a view shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    #[default]
    Ttft,
    E2e,
}

impl Measure {
    /// The attempt's value under the population's rules: `None` for a failure (never 0) or a
    /// success without one.
    pub fn of(self, a: &Attempt, population: &Population) -> Option<f64> {
        if !a.outcome.is_success() {
            return None;
        }
        match self {
            Measure::Ttft => effective_ttft_ms(a, population),
            Measure::E2e => effective_e2e_ms(a, population),
        }
    }
}

/// A log scale in ms from a power of ten to a power of ten (1, 2, 5 × 10ⁿ ticks between).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LogScale {
    pub lo_ms: f64,
    pub hi_ms: f64,
}

impl LogScale {
    /// From the smallest positive and the largest value; 1 ms … 10 s when there are none.
    pub fn covering(min_ms: Option<f64>, max_ms: Option<f64>) -> LogScale {
        let lo = min_ms
            .filter(|v| *v > 0.0 && v.is_finite())
            .map_or(1.0, |v| 10f64.powf(v.log10().floor()));
        let hi = max_ms
            .filter(|v| v.is_finite())
            .map_or(10_000.0, |v| 10f64.powf(v.log10().ceil()));
        LogScale {
            lo_ms: lo,
            hi_ms: if hi > lo { hi } else { lo * 10.0 },
        }
    }

    /// Where `v` lies, 0 at `lo_ms` and 1 at `hi_ms` (outside for values beyond them).
    pub fn position(&self, v_ms: f64) -> f64 {
        (v_ms.log10() - self.lo_ms.log10()) / (self.hi_ms.log10() - self.lo_ms.log10())
    }

    /// `n + 1` edges of `n` equal steps on the log scale.
    pub fn edges(&self, n: usize) -> Vec<f64> {
        let (a, b) = (self.lo_ms.log10(), self.hi_ms.log10());
        (0..=n)
            .map(|k| 10f64.powf(a + (b - a) * k as f64 / n as f64))
            .collect()
    }

    /// Which of `n` steps holds `v` (values at or below `lo_ms` in the first, beyond `hi_ms` in the last).
    pub fn step_of(&self, v_ms: f64, n: usize) -> usize {
        ((self.position(v_ms) * n as f64).floor().max(0.0) as usize).min(n - 1)
    }

    /// Tick values: every power of ten, with 2 and 5 × 10ⁿ when the scale spans three decades or fewer.
    pub fn ticks(&self) -> Vec<f64> {
        let decades = (self.hi_ms / self.lo_ms).log10().round() as i32;
        let mults: &[f64] = if decades <= 3 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut out = Vec::new();
        let mut p = self.lo_ms;
        while p <= self.hi_ms * 1.000001 {
            for m in mults {
                let v = crate::format::round_to(p * m, 6)
                    .parse::<f64>()
                    .unwrap_or(p * m);
                if v <= self.hi_ms * 1.000001 {
                    out.push(v);
                }
            }
            p *= 10.0;
        }
        out
    }
}

/// The latency heat map: columns of the run's clock × rows of the latency's log scale, each
/// cell the count of counted complete successes that started in that column with that value.
/// Failures are counted per column in a band of their own, never as a latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeatMap {
    pub measure: Measure,
    pub start_ms: f64,
    pub width_ms: f64,
    pub columns: usize,
    pub rows: usize,
    pub scale: LogScale,
    /// Row-major from the lowest latency: `counts[row * columns + column]`.
    pub counts: Vec<u32>,
    /// Counted failures per column.
    pub failures: Vec<u32>,
    /// Values of 0 per column (a missing TTFT counted as 0: no place on a log scale).
    pub zeros: Vec<u32>,
    pub max_count: u32,
    pub max_failures: u32,
    pub plotted: u64,
    pub failed: u64,
    pub zero: u64,
}

impl HeatMap {
    /// `None` when no attempt has a start on the run's clock.
    pub fn build(
        attempts: &[Attempt],
        population: Population,
        measure: Measure,
        columns: usize,
        rows: usize,
    ) -> Option<HeatMap> {
        HeatMap::of(&Columns::of(attempts, population), measure, columns, rows)
    }

    /// The same from the columns (what the lab's second bundle holds).
    pub fn of(c: &Columns, measure: Measure, columns: usize, rows: usize) -> Option<HeatMap> {
        let (t0, t1) = c.clock()?;
        let (columns, rows) = (columns.max(1), rows.max(1));
        let width_ms = (t1 - t0) / columns as f64;
        let mut values: Vec<(usize, f64)> = Vec::new();
        let mut failures = vec![0u32; columns];
        let mut zeros = vec![0u32; columns];
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..c.len() {
            let start = c.start_ms[i];
            if start.is_nan() || c.flags[i] & COUNTED == 0 {
                continue;
            }
            let col = (((start - t0) / width_ms).floor().max(0.0) as usize).min(columns - 1);
            if c.flags[i] & SUCCESS == 0 {
                failures[col] += 1;
                continue;
            }
            let v = c.value(measure, i);
            if v > 0.0 {
                lo = lo.min(v);
                hi = hi.max(v);
                values.push((col, v));
            } else if v == 0.0 {
                zeros[col] += 1;
            }
        }
        let scale = LogScale::covering(lo.is_finite().then_some(lo), hi.is_finite().then_some(hi));
        let mut counts = vec![0u32; columns * rows];
        for (col, v) in &values {
            counts[scale.step_of(*v, rows) * columns + col] += 1;
        }
        Some(HeatMap {
            measure,
            start_ms: t0,
            width_ms,
            columns,
            rows,
            scale,
            max_count: counts.iter().copied().max().unwrap_or(0),
            max_failures: failures.iter().copied().max().unwrap_or(0),
            plotted: values.len() as u64,
            failed: failures.iter().map(|n| u64::from(*n)).sum(),
            zero: zeros.iter().map(|n| u64::from(*n)).sum(),
            counts,
            failures,
            zeros,
        })
    }

    pub fn count(&self, column: usize, row: usize) -> u32 {
        self.counts[row * self.columns + column]
    }

    /// The column's span on the run's clock, in ms.
    pub fn column_span(&self, column: usize) -> (f64, f64) {
        (
            self.start_ms + self.width_ms * column as f64,
            self.start_ms + self.width_ms * (column + 1) as f64,
        )
    }

    /// The row's latency span, in ms.
    pub fn row_span(&self, row: usize) -> (f64, f64) {
        let e = |k: usize| {
            10f64.powf(
                self.scale.lo_ms.log10()
                    + (self.scale.hi_ms / self.scale.lo_ms).log10() * k as f64 / self.rows as f64,
            )
        };
        (e(row), e(row + 1))
    }

    /// The cell of an attempt (its start, its value), when it has one.
    pub fn cell_of(&self, a: &Attempt, population: &Population) -> Option<(usize, usize)> {
        let start = a.start_ms?;
        let v = self.measure.of(a, population).filter(|v| *v > 0.0)?;
        let col = (((start - self.start_ms) / self.width_ms).floor().max(0.0) as usize)
            .min(self.columns - 1);
        Some((col, self.scale.step_of(v, self.rows)))
    }

    /// Where the selected attempt is marked: its cell, or its column alone when it is a counted
    /// failure (marked in the failures band); `None` when the map does not show it.
    pub fn selected(&self, a: &Attempt, population: &Population) -> Option<(usize, Option<usize>)> {
        if let Some((c, r)) = self.cell_of(a, population) {
            return Some((c, Some(r)));
        }
        let start = a
            .start_ms
            .filter(|_| is_counted(a, population) && !a.outcome.is_success())?;
        Some((
            (((start - self.start_ms) / self.width_ms).floor().max(0.0) as usize)
                .min(self.columns - 1),
            None,
        ))
    }

    /// [`HeatMap::selected`] for row `i` of the columns the map was built from.
    pub fn selected_row(&self, c: &Columns, i: usize) -> Option<(usize, Option<usize>)> {
        let start = *c.start_ms.get(i).filter(|s| !s.is_nan())?;
        let col = (((start - self.start_ms) / self.width_ms).floor().max(0.0) as usize)
            .min(self.columns - 1);
        let v = c.value(self.measure, i);
        if v > 0.0 {
            Some((col, Some(self.scale.step_of(v, self.rows))))
        } else {
            (c.flags[i] & COUNTED != 0 && c.flags[i] & SUCCESS == 0).then_some((col, None))
        }
    }

    /// The cells that hold anything, as (column, row, count), by column then row: the text
    /// alternative's rows.
    pub fn filled(&self) -> Vec<(usize, usize, u32)> {
        let mut out = Vec::new();
        for column in 0..self.columns {
            for row in 0..self.rows {
                let n = self.count(column, row);
                if n > 0 {
                    out.push((column, row, n));
                }
            }
        }
        out
    }
}

/// The chosen latency of the counted complete successes, sorted (the TTFT one is the
/// [`crate::Index`]'s sample; this gives E2E the same way).
pub fn sample(attempts: &[Attempt], population: Population, measure: Measure) -> Vec<f64> {
    sample_of(&Columns::of(attempts, population), measure)
}

/// The same from the columns.
pub fn sample_of(c: &Columns, measure: Measure) -> Vec<f64> {
    let mut out: Vec<f64> = (0..c.len())
        .filter(|i| c.flags[*i] & COUNTED != 0)
        .map(|i| c.value(measure, i))
        .filter(|v| !v.is_nan())
        .collect();
    out.sort_by(f64::total_cmp);
    out
}

/// A histogram of a sorted sample on a log scale; zeros kept apart (no place on a log scale).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub scale: LogScale,
    pub counts: Vec<u32>,
    pub zeros: u64,
    pub n: u64,
    pub max_count: u32,
}

impl Histogram {
    /// `bins` equal steps of the log scale over the sample; `sorted_ms` ascending.
    pub fn build(sorted_ms: &[f64], bins: usize) -> Histogram {
        let bins = bins.max(1);
        let zeros = sorted_ms.partition_point(|v| *v <= 0.0);
        let positive = &sorted_ms[zeros..];
        let scale = LogScale::covering(positive.first().copied(), positive.last().copied());
        let edges = scale.edges(bins);
        // The sample is sorted: each bin's count is the gap between two binary searches.
        let mut counts = Vec::with_capacity(bins);
        let mut from = 0usize;
        for (k, edge) in edges.iter().enumerate().skip(1) {
            let to = if k == bins {
                positive.len()
            } else {
                positive.partition_point(|v| v < edge)
            };
            counts.push((to - from) as u32);
            from = to;
        }
        Histogram {
            scale,
            max_count: counts.iter().copied().max().unwrap_or(0),
            counts,
            zeros: zeros as u64,
            n: sorted_ms.len() as u64,
        }
    }

    /// The bin's span in ms.
    pub fn bin_span(&self, bin: usize) -> (f64, f64) {
        let e = |k: usize| {
            10f64.powf(
                self.scale.lo_ms.log10()
                    + (self.scale.hi_ms / self.scale.lo_ms).log10() * k as f64
                        / self.counts.len() as f64,
            )
        };
        (e(bin), e(bin + 1))
    }
}

/// How dark a cell of `count` is among cells up to `max`, 0 (empty) to 1, on a log scale so a
/// cell of one attempt still shows beside one of thousands: ln(1 + count) / ln(1 + max).
pub fn heat_level(count: u32, max: u32) -> f64 {
    if count == 0 || max == 0 {
        0.0
    } else {
        (f64::from(count).ln_1p() / f64::from(max).ln_1p()).min(1.0)
    }
}

/// A line drawn across a view at a value, with its interval when it has one (P50, P95).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub label: String,
    pub value_ms: f64,
    pub lo_ms: Option<f64>,
    pub hi_ms: Option<f64>,
}

/// What the heat map's painter is given: the cells and where the lines go; the words are the
/// page's, in the reader's language. The painter computes nothing but pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeatMapPaint {
    pub map: HeatMap,
    /// The TTFT threshold, in ms (only on a TTFT map).
    pub threshold_ms: Option<f64>,
    /// The selected attempt's cell, or its column when it failed (then marked in the band).
    pub selected: Option<(usize, Option<usize>)>,
    /// The failures band's label ("failed").
    pub band: String,
}

/// What the histogram's painter is given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistogramPaint {
    pub histogram: Histogram,
    pub threshold_ms: Option<f64>,
    pub markers: Vec<Marker>,
}

/// What the lab asks the lab's second bundle to show of the whole distribution (the bundle holds the
/// trace's [`Columns`] and counts the cells and bins itself), in the reader's language.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistributionRequest {
    pub lang: Lang,
    pub measure: Measure,
    pub settings: Settings,
    /// The heat map's columns (from the box's width).
    pub columns: usize,
    /// The box's width in CSS pixels, as the lab measured it (so the bundle forces no layout of
    /// the page to read it again).
    pub width_px: u32,
    /// The selected attempt's row.
    pub selected: Option<usize>,
    /// P50 and the tail, from the metrics and their intervals.
    pub markers: Vec<Marker>,
    pub failures: u64,
}

/// What the lab asks the lab's second bundle to show of the run in buckets, on the lab's run chart's
/// horizontal scale (`left_px`..`right_px` of a `width_px` box for `start_ms`..+`span_ms`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    pub lang: Lang,
    pub settings: Settings,
    pub buckets: usize,
    pub width_px: u32,
    pub left_px: f64,
    pub right_px: f64,
    pub start_ms: f64,
    pub span_ms: f64,
}

/// Where a painter put things, in the canvas's pixels, for the page (and its tests) to find:
/// the plot area, the threshold line's row, and a cell's (or bin's) centre by index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Painted {
    pub plot: (i32, i32, i32, i32),
    pub threshold_px: Option<i32>,
    /// The most filled cell (heat map) or bin (histogram): its indices and its centre.
    pub fullest: Option<(usize, usize, i32, i32)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::MissingTtft;
    use crate::trace::{Comparison, Outcome};

    fn at(start: f64, ttft: Option<f64>, e2e: f64, outcome: Outcome, quality: Quality) -> Attempt {
        let mut a = Attempt::new(format!("a{start}"), outcome, ttft, quality);
        a.start_ms = Some(start);
        a.e2e_ms = Some(e2e);
        a
    }

    fn ok(start: f64, ttft: f64) -> Attempt {
        at(
            start,
            Some(ttft),
            ttft + 100.0,
            Outcome::Success,
            Quality::Pass,
        )
    }

    fn fail(start: f64) -> Attempt {
        at(
            start,
            None,
            50.0,
            Outcome::ConnectError,
            Quality::NotEvaluated,
        )
    }

    #[test]
    fn buckets_count_rates_and_follow_the_threshold_without_a_rebuild() {
        // Bucket 0 (0–500 ms): two successes (200, 800 ms TTFT) and a failure; bucket 1: one
        // success of 300 ms whose quality failed.
        let attempts = vec![
            ok(0.0, 200.0),
            ok(100.0, 800.0),
            fail(200.0),
            at(600.0, Some(300.0), 400.0, Outcome::Success, Quality::Fail),
        ];
        let b = RunBuckets::build(&attempts, Population::default(), 2).unwrap();
        assert_eq!((b.start_ms, b.width_ms), (0.0, 500.0));
        let mut s = Settings {
            ttft_threshold_s: 0.5,
            ..Settings::default()
        };
        let at_half = b.at(&s);
        assert_eq!(
            (
                at_half[0].started,
                at_half[0].counted,
                at_half[0].qualified,
                at_half[0].failed
            ),
            (3, 3, 1, 1)
        );
        assert_eq!(at_half[0].qualified_rate(), Some(1.0 / 3.0));
        assert_eq!(at_half[0].failure_rate(), Some(1.0 / 3.0));
        assert_eq!(
            (at_half[1].started, at_half[1].qualified),
            (1, 0),
            "quality failed: never qualified"
        );
        s.ttft_threshold_s = 0.8;
        assert_eq!(b.at(&s)[0].qualified, 2, "≤ 0.8 s takes the 800 ms one");
        s.comparison = Comparison::Lt;
        assert_eq!(b.at(&s)[0].qualified, 1, "< 0.8 s does not");
        // In flight: 0–300, 100–1000, 200–250 overlap three at once in bucket 0; bucket 1
        // carries the one still running and the one that starts at 600.
        assert_eq!(
            (at_half[0].in_flight_peak, at_half[1].in_flight_peak),
            (3, 2)
        );
        // The independent check: the qualified count over all buckets equals the verdicts'.
        let total: u32 = b.at(&s).iter().map(|x| x.qualified).sum();
        assert_eq!(
            total as usize,
            attempts
                .iter()
                .filter(|a| crate::verdict::verdict(a, &s).qualified)
                .count()
        );
    }

    #[test]
    fn buckets_place_intended_starts_and_client_lag() {
        let mut late = ok(700.0, 100.0);
        late.intended_start_ms = Some(100.0);
        let mut on_time = ok(0.0, 100.0);
        on_time.intended_start_ms = Some(0.0);
        let b = RunBuckets::build(&[on_time, late], Population::default(), 2)
            .unwrap()
            .at(&Settings::default());
        assert_eq!(
            (b[0].intended, b[0].started, b[1].intended, b[1].started),
            (2, 1, 0, 1)
        );
        assert_eq!(
            (b[1].lag_mean_ms, b[1].lag_max_ms),
            (Some(600.0), Some(600.0))
        );
        assert_eq!(b[0].lag_max_ms, Some(0.0));
    }

    #[test]
    fn no_clock_no_buckets_nor_heat_map() {
        let a = Attempt::new("x", Outcome::Success, Some(1.0), Quality::Pass);
        assert_eq!(timed_count(std::slice::from_ref(&a)), 0);
        assert!(RunBuckets::build(std::slice::from_ref(&a), Population::default(), 4).is_none());
        assert!(HeatMap::build(&[a], Population::default(), Measure::Ttft, 4, 4).is_none());
    }

    #[test]
    fn the_heat_map_keeps_failures_apart_and_places_each_value_once() {
        // The run's clock is 0–2600 ms (the last success ends at 1500 + 1100): two columns of 1300 ms.
        let attempts = vec![
            ok(0.0, 10.0),
            ok(10.0, 99.0),
            ok(1500.0, 1000.0),
            fail(500.0),
            fail(2000.0),
        ];
        let h = HeatMap::build(&attempts, Population::default(), Measure::Ttft, 2, 4).unwrap();
        assert_eq!(
            h.scale,
            LogScale {
                lo_ms: 10.0,
                hi_ms: 1000.0
            }
        );
        // Two decades in four rows: 10–31.6, 31.6–100, 100–316, 316–1000.
        assert_eq!((h.count(0, 0), h.count(0, 1), h.count(1, 3)), (1, 1, 1));
        assert_eq!(
            h.failures,
            vec![1, 1],
            "failures counted in their band, by start"
        );
        assert_eq!(h.column_span(1), (1300.0, 2600.0));
        assert_eq!((h.plotted, h.failed, h.zero, h.max_count), (3, 2, 0, 1));
        assert_eq!(h.filled(), vec![(0, 0, 1), (0, 1, 1), (1, 3, 1)]);
        assert_eq!(
            h.cell_of(&attempts[1], &Population::default()),
            Some((0, 1))
        );
        assert_eq!(
            h.cell_of(&attempts[3], &Population::default()),
            None,
            "a failure has no cell"
        );
        assert_eq!(
            h.selected(&attempts[1], &Population::default()),
            Some((0, Some(1)))
        );
        assert_eq!(
            h.selected(&attempts[4], &Population::default()),
            Some((1, None)),
            "a failure is marked in its band"
        );
        let c = Columns::of(&attempts, Population::default());
        assert_eq!(
            (h.selected_row(&c, 1), h.selected_row(&c, 4), c.timed()),
            (Some((0, Some(1))), Some((1, None)), 5)
        );
        assert_eq!(sample_of(&c, Measure::Ttft), vec![10.0, 99.0, 1000.0]);
        let (lo, hi) = h.row_span(1);
        assert!((lo - 31.6227766).abs() < 1e-6 && (hi - 100.0).abs() < 1e-9);
        // Missing TTFTs counted as 0 (the wrong choice): a failure still stays a failure; a
        // success without a token becomes a zero, kept apart.
        let p = Population {
            missing_ttft: MissingTtft::TreatAsZero,
            ..Population::default()
        };
        let no_token = at(20.0, None, 30.0, Outcome::Success, Quality::Pass);
        let h = HeatMap::build(
            &[ok(0.0, 10.0), no_token, fail(30.0)],
            p,
            Measure::Ttft,
            1,
            2,
        )
        .unwrap();
        assert_eq!((h.plotted, h.zero, h.failed), (1, 1, 1));
        // E2E is the other latency.
        let h = HeatMap::build(&attempts, Population::default(), Measure::E2e, 1, 1).unwrap();
        assert_eq!(
            h.scale,
            LogScale {
                lo_ms: 100.0,
                hi_ms: 10_000.0
            }
        );
    }

    #[test]
    fn the_histogram_bins_a_sorted_sample_on_a_log_scale() {
        let sample = [0.0, 10.0, 20.0, 50.0, 99.0, 100.0, 999.0];
        let h = Histogram::build(&sample, 2);
        assert_eq!(
            h.scale,
            LogScale {
                lo_ms: 10.0,
                hi_ms: 1000.0
            }
        );
        assert_eq!(
            (h.counts.clone(), h.zeros, h.n, h.max_count),
            (vec![4, 2], 1, 7, 4)
        );
        assert_eq!(h.bin_span(1), (100.0, 1000.0));
        assert_eq!(
            h.counts.iter().map(|c| u64::from(*c)).sum::<u64>() + h.zeros,
            h.n,
            "every value in exactly one bin"
        );
        let empty = Histogram::build(&[], 3);
        assert_eq!(
            (empty.n, empty.counts, empty.scale.lo_ms),
            (0, vec![0, 0, 0], 1.0)
        );
    }

    #[test]
    fn heat_levels_grow_with_the_count_on_a_log_scale() {
        assert_eq!(
            (heat_level(0, 10), heat_level(5, 0), heat_level(10, 10)),
            (0.0, 0.0, 1.0)
        );
        assert!(
            heat_level(1, 1000) > 0.09,
            "one attempt still shows beside a thousand"
        );
        assert!(heat_level(10, 1000) < heat_level(100, 1000));
    }

    #[test]
    fn log_ticks_and_the_sample() {
        assert_eq!(
            LogScale {
                lo_ms: 10.0,
                hi_ms: 1000.0
            }
            .ticks(),
            vec![10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(
            LogScale {
                lo_ms: 1.0,
                hi_ms: 10_000.0
            }
            .ticks(),
            vec![1.0, 10.0, 100.0, 1000.0, 10_000.0]
        );
        let attempts = vec![ok(0.0, 30.0), ok(1.0, 10.0), fail(2.0)];
        assert_eq!(
            sample(&attempts, Population::default(), Measure::Ttft),
            vec![10.0, 30.0]
        );
        assert_eq!(
            sample(&attempts, Population::default(), Measure::E2e),
            vec![110.0, 130.0]
        );
    }
}
