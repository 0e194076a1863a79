//! An index built once per trace (and per [`Population`]) so that editing the threshold, the
//! comparison, the window, the cost or the percentile recomputes every figure in O(log n).
//!
//! The trick: a request qualifies when it is a complete success, passed quality and its TTFT is
//! within the threshold. The first two do not depend on the threshold, so the TTFTs of the
//! "candidates" are sorted once and a threshold edit is one binary search.

use crate::percentile::CountedSample;
use crate::settings::{FailureDenominator, Population};
use crate::strtable::StrTable;
use crate::trace::{Attempt, Outcome, Quality};
use crate::verdict::{effective_e2e_ms, effective_ttft_ms, is_counted};
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Index {
    pub(crate) population: Population,
    /// Attempts counted under the population's choices.
    pub(crate) attempts: usize,
    pub(crate) successes: usize,
    pub(crate) failures: usize,
    /// Failures by outcome name (`http_error` kept apart per status).
    pub(crate) failures_by_outcome: Vec<(Outcome, usize)>,
    pub(crate) warmup_excluded: usize,
    pub(crate) failed_deleted: usize,
    pub(crate) quality_pass: usize,
    pub(crate) quality_fail: usize,
    pub(crate) quality_not_evaluated: usize,
    /// The TTFT sample, in ms, ascending: successes only (or everything, missing as 0, under
    /// the wrong choice).
    pub(crate) ttft_ms: Vec<f64>,
    /// Successes that passed quality and have a TTFT to compare, ascending.
    pub(crate) candidate_ttft_ms: Vec<f64>,
    pub(crate) e2e_ms: Vec<f64>,
    /// Gaps between stream events of successes (per event, not per token), as distinct values
    /// with counts: a run has far more gaps than distinct microsecond values.
    pub(crate) itl_ms: CountedSample,
    /// Complete successes that carried no output token (the model ended at once): they have
    /// no TTFT, so the TTFT sample is smaller than the success count by this many.
    pub(crate) successes_without_token: usize,
    pub(crate) usage_successes: usize,
    pub(crate) usage_output_tokens: u64,
    pub(crate) business_requests: usize,
    pub(crate) business_answered: usize,
    /// Counted attempts whose source kept reasoning apart from the answer: where the two
    /// [`crate::FirstToken`] choices can differ.
    pub(crate) reasoning_attempts: usize,
    /// Counted attempts sent after their intended start (an open loop's client behind its
    /// schedule): where the two [`crate::LatencyOrigin`] choices differ.
    pub(crate) late_starts: usize,
    /// Counted attempts without one (a closed loop's, or no actual start to set it against):
    /// measured from their actual start whatever the origin, and said so.
    pub(crate) without_intended_start: usize,
    /// Every counted attempt in start order: the series whose dependence
    /// (`compare::dependence`) says how many independent samples the run is worth.
    pub(crate) series: Vec<Step>,
    /// Whether every counted attempt has a start time, so `series` is in start order.
    pub(crate) series_timed: bool,
}

/// One counted attempt as its run's series sees it: when it started, and what each figure
/// takes from it. `f64::NAN` marks a value the attempt does not contribute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    /// Start (ms from the run's origin; the intended start when the actual one is missing,
    /// else NaN), the order the series is read in.
    pub(crate) start_ms: f64,
    /// Its value in the TTFT sample, or NaN when it is not in it.
    pub(crate) ttft_ms: f64,
    /// Its value in the E2E sample, or NaN.
    pub(crate) e2e_ms: f64,
    pub(crate) flags: u8,
}

impl Step {
    pub(crate) const SUCCESS: u8 = 1;
    /// A success that passed quality (or quality is ignored) and has a TTFT: qualified when
    /// its TTFT is within the threshold.
    pub(crate) const CANDIDATE: u8 = 2;
    pub(crate) const QUALITY_PASS: u8 = 4;

    pub(crate) fn is(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

fn sort(values: &mut [f64]) {
    values.sort_unstable_by(f64::total_cmp);
}

/// Builds an [`Index`] one attempt at a time, so a trace read as a stream
/// ([`crate::streamed`]) is indexed without holding its attempts: what stays per attempt
/// is its TTFT (twice when it is a candidate) and E2E as `f64`, its business id in a
/// [`StrTable`], and its stream gaps as counts of distinct values.
pub struct IndexBuilder {
    ix: Index,
    failures: HashMap<Outcome, usize>,
    /// Business id → answered (a complete success among its counted attempts).
    business: StrTable<bool>,
    /// Gap (its `f64` bits, so equal values meet exactly) → how many times it occurred.
    gaps: HashMap<u64, u64>,
}

impl IndexBuilder {
    pub fn new(population: Population) -> IndexBuilder {
        IndexBuilder {
            ix: Index {
                population,
                ..Index::default()
            },
            failures: HashMap::new(),
            business: StrTable::default(),
            gaps: HashMap::new(),
        }
    }

    /// Adds one attempt, in trace order.
    pub fn push(&mut self, a: &Attempt) {
        let population = self.ix.population;
        let ix = &mut self.ix;
        if !is_counted(a, &population) {
            if a.phase == crate::trace::Phase::Warmup
                && population.warmup == crate::settings::WarmupPolicy::Exclude
            {
                ix.warmup_excluded += 1;
            } else {
                ix.failed_deleted += 1;
            }
            return;
        }
        ix.attempts += 1;
        if a.reasoning.is_some() {
            ix.reasoning_attempts += 1;
        }
        match a.origin_lead_ms(crate::trace::LatencyOrigin::Intended) {
            Some(lead) if lead > 0.0 => ix.late_starts += 1,
            Some(_) => {}
            None => ix.without_intended_start += 1,
        }
        let success = a.outcome.is_success();
        // More than 4·10⁹ distinct business ids would not fit the table's slots; such a trace
        // (terabytes) is beyond what a trace may hold, and its business figure is then counted
        // over the ids that fit.
        if let Ok(answered) = self.business.entry(&a.business_id, || false) {
            *answered |= success;
        }
        if success {
            ix.successes += 1;
            match a.quality {
                Quality::Pass => ix.quality_pass += 1,
                Quality::Fail => ix.quality_fail += 1,
                Quality::NotEvaluated => ix.quality_not_evaluated += 1,
            }
            if let Some(e2e) = effective_e2e_ms(a, &population) {
                ix.e2e_ms.push(e2e);
            }
            for gap in a.event_gaps_ms() {
                *self.gaps.entry(gap.to_bits()).or_insert(0) += 1;
            }
            if a.ttft_under(population.first_token).is_none() {
                ix.successes_without_token += 1;
            }
            if a.tokens_from_usage {
                if let Some(out) = a.output_tokens {
                    ix.usage_successes += 1;
                    ix.usage_output_tokens += u64::from(out);
                }
            }
        } else {
            ix.failures += 1;
            *self.failures.entry(a.outcome).or_insert(0) += 1;
        }
        let ttft = effective_ttft_ms(a, &population);
        let in_sample = match population.missing_ttft {
            crate::settings::MissingTtft::KeepMissing => success,
            crate::settings::MissingTtft::TreatAsZero => true,
        };
        let mut step = Step {
            // NaN: no start time, so the order along the run is unknown (a classroom CSV, a peer
            // file without timestamps); the file's order stands in, and is not read as time.
            start_ms: a.start_ms.or(a.intended_start_ms).unwrap_or(f64::NAN),
            ttft_ms: f64::NAN,
            e2e_ms: f64::NAN,
            flags: 0,
        };
        if let (true, Some(t)) = (in_sample, ttft) {
            ix.ttft_ms.push(t);
            step.ttft_ms = t;
        }
        if success {
            step.flags |= Step::SUCCESS;
            step.e2e_ms = effective_e2e_ms(a, &population).unwrap_or(f64::NAN);
            if a.quality == Quality::Pass {
                step.flags |= Step::QUALITY_PASS;
            }
        }
        if success
            && (a.quality == Quality::Pass
                || population.quality == crate::settings::QualityRule::Ignored)
        {
            if let Some(t) = ttft {
                ix.candidate_ttft_ms.push(t);
                step.flags |= Step::CANDIDATE;
                step.ttft_ms = t;
            }
        }
        ix.series.push(step);
    }

    /// Sorts the samples: O(n log n).
    pub fn finish(self) -> Index {
        let mut ix = self.ix;
        ix.business_requests = self.business.len();
        ix.business_answered = self.business.values().iter().filter(|&&v| v).count();
        let mut by_outcome: Vec<(Outcome, usize)> = self.failures.into_iter().collect();
        by_outcome.sort_by_key(|(o, n)| (std::cmp::Reverse(*n), o.name(), o.http_status()));
        ix.failures_by_outcome = by_outcome;
        sort(&mut ix.ttft_ms);
        sort(&mut ix.candidate_ttft_ms);
        sort(&mut ix.e2e_ms);
        // Stable: attempts that started at the same time keep their order in the file. Without
        // every start time the file's order is kept, and the series is not called timed.
        ix.series_timed = !ix.series.is_empty() && ix.series.iter().all(|s| !s.start_ms.is_nan());
        if ix.series_timed {
            ix.series.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
        }
        ix.itl_ms = CountedSample::from_counts(
            self.gaps
                .into_iter()
                .map(|(bits, n)| (f64::from_bits(bits), n))
                .collect(),
        );
        ix
    }
}

impl Index {
    /// Builds the index in O(n log n).
    pub fn build(attempts: &[Attempt], population: Population) -> Index {
        let mut builder = IndexBuilder::new(population);
        for a in attempts {
            builder.push(a);
        }
        builder.finish()
    }

    pub fn population(&self) -> Population {
        self.population
    }

    /// Counted attempts whose source kept reasoning apart from the answer.
    pub fn reasoning_attempts(&self) -> usize {
        self.reasoning_attempts
    }

    /// Counted attempts sent after their intended start.
    pub fn late_starts(&self) -> usize {
        self.late_starts
    }

    /// Counted attempts measured from their actual start although the origin is the intended
    /// start (they have none): 0 when the origin is the actual start.
    pub fn origin_fallbacks(&self) -> usize {
        match self.population.latency_from {
            crate::trace::LatencyOrigin::Actual => 0,
            crate::trace::LatencyOrigin::Intended => self.without_intended_start,
        }
    }

    /// The TTFT sample in ms, ascending (for charts).
    pub fn ttft_sample_ms(&self) -> &[f64] {
        &self.ttft_ms
    }

    /// Whether the failure denominator choice deletes failed rows (they are then not counted).
    pub fn deletes_failures(&self) -> bool {
        self.population.failure_denominator == FailureDenominator::FailedRowsDeleted
    }

    /// How many candidates are within `threshold_ms` under `comparison` — one binary search.
    pub(crate) fn qualified(&self, threshold_ms: f64, comparison: crate::Comparison) -> usize {
        match comparison {
            crate::Comparison::Le => self
                .candidate_ttft_ms
                .partition_point(|&t| t <= threshold_ms),
            crate::Comparison::Lt => self
                .candidate_ttft_ms
                .partition_point(|&t| t < threshold_ms),
        }
    }
}
