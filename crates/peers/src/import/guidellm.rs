//! guidellm `benchmarks.json` (0.5 layout: `benchmarks[].requests.{successful,errored,incomplete}`
//! with `info.timings`; older per-request fields are read when present). One trace per benchmark.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    classify_failure, detail_text, time_ms, unique_id, Content, Detected, Imported, ImportedTrace,
    Over, PeerFigure, PeerPercentile, PeerTool, PeerUnit, Quantity, RateSpan, Reproducibility,
    Stat, FAILURE_MAPPING,
};
use tracelab_core::error::ParseError;
use tracelab_core::format::trim_num;
use tracelab_core::trace::peer::PeerValue;
use tracelab_core::trace::*;

const WHAT: &str = "guidellm benchmarks.json";

pub(super) fn detect(map: &Map<String, Value>) -> Option<Detected> {
    let benchmarks = map.get("benchmarks")?.as_array()?;
    let version = map
        .get("metadata")
        .and_then(|m| m.get("guidellm_version"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let typed = benchmarks
        .first()
        .and_then(|b| b.get("type_"))
        .and_then(Value::as_str)
        .is_some_and(|t| t.contains("benchmark"));
    let with_requests = benchmarks
        .first()
        .is_some_and(|b| b.get("requests").is_some());
    if version.is_none() && !typed && !with_requests {
        return None;
    }
    let mut d = Detected::new(
        PeerTool::Guidellm,
        Content::PerRequest,
        "guidellm-benchmarks",
        format!(
            "`benchmarks` ({} benchmark{})",
            benchmarks.len(),
            if benchmarks.len() == 1 { "" } else { "s" }
        ),
    );
    d.version = version;
    Some(d)
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(super::number).filter(|x| x.is_finite())
}

fn strategy_label(b: &Map<String, Value>) -> (String, Conditions) {
    let mut c = Conditions::default();
    let strategy = b
        .get("config")
        .and_then(|c| c.get("strategy"))
        .or_else(|| b.get("args").and_then(|a| a.get("strategy")));
    let Some(strategy) = strategy.and_then(Value::as_object) else {
        return ("unknown strategy".into(), c);
    };
    let kind = strategy
        .get("type_")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let streams = strategy
        .get("streams")
        .or_else(|| strategy.get("max_concurrency"))
        .and_then(Value::as_u64)
        .map(|v| v as u32);
    let rate = num(strategy.get("rate"));
    let label = match kind {
        "synchronous" => {
            c.arrival = Some("closed".into());
            c.concurrency = Some(1);
            "synchronous".to_string()
        }
        "concurrent" => {
            c.arrival = Some("closed".into());
            c.concurrency = streams;
            match streams {
                Some(s) => format!("concurrent, {s} streams"),
                None => "concurrent".into(),
            }
        }
        "constant" | "poisson" => {
            c.arrival = Some(kind.to_string());
            c.rate_per_s = rate;
            match rate {
                Some(r) => format!("{kind}, {} req/s", trim_num(r)),
                None => kind.to_string(),
            }
        }
        "throughput" => {
            c.concurrency = streams;
            "throughput (all at once)".to_string()
        }
        other => other.to_string(),
    };
    (label, c)
}

pub(super) fn import(
    detected: Detected,
    root: &Map<String, Value>,
    benchmarks: &[Value],
) -> Result<Imported, ParseError> {
    if benchmarks.is_empty() {
        return Err(ParseError::new(format!(
            "{WHAT} with an empty `benchmarks` list: no run to import"
        ))
        .field("benchmarks"));
    }
    let model_arg = root
        .get("args")
        .and_then(|a| a.get("model"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut traces = Vec::with_capacity(benchmarks.len());
    for (i, b) in benchmarks.iter().enumerate() {
        let path = format!("benchmarks[{i}]");
        let b = b.as_object().ok_or_else(|| {
            ParseError::new(format!(
                "{WHAT}: each benchmark should be an object, found {}",
                super::kind_of(b)
            ))
            .field(path.clone())
        })?;
        let (label, mut conditions) = strategy_label(b);
        conditions.model = b
            .get("config")
            .and_then(|c| c.get("backend"))
            .and_then(|c| c.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| model_arg.clone());
        let trace = import_benchmark(&detected, b, &path, conditions)?;
        traces.push(ImportedTrace {
            label: format!("benchmark {}: {label}", i + 1),
            trace,
        });
    }
    Ok(Imported { detected, traces })
}

struct Raw<'a> {
    status: &'static str,
    index: usize,
    map: &'a Map<String, Value>,
}

fn import_benchmark(
    detected: &Detected,
    b: &Map<String, Value>,
    path: &str,
    conditions: Conditions,
) -> Result<Trace, ParseError> {
    let requests = b.get("requests").and_then(Value::as_object).ok_or_else(|| {
        ParseError::new(format!(
            "{WHAT}: this benchmark has no `requests` (successful/errored/incomplete lists): per-request data is missing"
        ))
        .field(format!("{path}.requests"))
    })?;
    let mut raws = Vec::new();
    for status in ["successful", "errored", "incomplete"] {
        match requests.get(status) {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for (index, r) in list.iter().enumerate() {
                    let map = r.as_object().ok_or_else(|| {
                        ParseError::new(format!(
                            "{WHAT}: each request should be an object, found {}",
                            super::kind_of(r)
                        ))
                        .field(format!("{path}.requests.{status}[{index}]"))
                    })?;
                    raws.push(Raw { status, index, map });
                }
            }
            Some(other) => {
                return Err(ParseError::new(format!(
                    "{WHAT}: `{status}` should be a list of requests, found {}",
                    super::kind_of(other)
                ))
                .field(format!("{path}.requests.{status}")))
            }
        }
    }
    fn timings<'a>(r: &Raw<'a>) -> Option<&'a Map<String, Value>> {
        r.map
            .get("info")
            .and_then(|i| i.get("timings"))
            .and_then(Value::as_object)
    }
    let start_of = |r: &Raw| -> Option<f64> {
        num(r.map.get("request_start_time"))
            .or_else(|| num(timings(r).and_then(|t| t.get("request_start"))))
            .or_else(|| num(r.map.get("info").and_then(|i| i.get("started_at"))))
            .or_else(|| num(r.map.get("start_time")))
    };
    let end_of = |r: &Raw| -> Option<f64> {
        num(r.map.get("request_end_time"))
            .or_else(|| num(timings(r).and_then(|t| t.get("request_end"))))
            .or_else(|| num(r.map.get("info").and_then(|i| i.get("completed_at"))))
            .or_else(|| num(r.map.get("end_time")))
    };
    let scheduler = b.get("scheduler_metrics").and_then(Value::as_object);
    let measure_start = num(scheduler.and_then(|s| s.get("measure_start_time")))
        .or_else(|| num(b.get("start_time")));
    let measure_end =
        num(scheduler.and_then(|s| s.get("measure_end_time"))).or_else(|| num(b.get("end_time")));
    let origin = raws
        .iter()
        .filter_map(start_of)
        .chain(measure_start)
        .chain(
            raws.iter()
                .filter_map(|r| num(timings(r).and_then(|t| t.get("targeted_start")))),
        )
        .fold(f64::INFINITY, f64::min);
    let origin = origin.is_finite().then_some(origin);

    let mut attempts = Vec::with_capacity(raws.len());
    let mut phases = Vec::with_capacity(raws.len());
    let mut seen = HashMap::new();
    let (mut warmups, mut cooldowns, mut straddling, mut zeros_as_missing) = (0, 0, 0, 0);
    let timings_layout = raws.iter().any(|r| timings(r).is_some());
    // The older layouts (≤ 0.3, no `info.timings`) keep each request's ITL and TPOT as guidellm
    // computed them: kept as they are (`source.samples`), with guidellm's `or 0.0` and weights
    // (output tokens − 1 for ITL, output tokens for TPOT), since their first/last token times
    // are defined differently across those versions.
    let mut kept: Vec<Vec<PeerValue>> = vec![Vec::new(); PER_REQUEST.len()];
    for r in &raws {
        let here = format!("{path}.requests.{}[{}]", r.status, r.index);
        let offset = |t: Option<f64>, field: &str| -> Result<Option<f64>, ParseError> {
            match (t, origin) {
                (Some(t), Some(o)) => Ok(Some(time_ms(
                    (t - o) * 1000.0,
                    &format!("{here}.{field}"),
                    WHAT,
                )?)),
                _ => Ok(None),
            }
        };
        let start_s = start_of(r);
        let end_s = end_of(r);
        let start_ms = offset(start_s, "request_start_time")?;
        let intended_start_ms = offset(
            num(timings(r).and_then(|t| t.get("targeted_start"))),
            "info.timings.targeted_start",
        )?;
        let since_start = |t: Option<f64>| match (t, start_s) {
            (Some(t), Some(s)) if t >= s => Some((t - s) * 1000.0),
            _ => None,
        };
        let first_token_s = num(timings(r).and_then(|t| t.get("first_token_iteration")))
            .or_else(|| num(r.map.get("first_token_time")));
        let last_token_s = num(timings(r).and_then(|t| t.get("last_token_iteration")))
            .or_else(|| num(r.map.get("last_token_time")));
        // guidellm writes 0.0 for the TTFT, ITL and TPOT of a request that got no token (its
        // `or 0.0`): without a first-token time that 0 means missing, never an instant token.
        let zero_without_token = first_token_s.is_none()
            && [
                "time_to_first_token_ms",
                "inter_token_latency_ms",
                "time_per_output_token_ms",
            ]
            .iter()
            .any(|k| num(r.map.get(*k)) == Some(0.0));
        if zero_without_token {
            zeros_as_missing += 1;
        }
        let ttft_field = num(r.map.get("time_to_first_token_ms"))
            .filter(|v| !(*v == 0.0 && first_token_s.is_none()));
        let ttft_ms = ttft_field
            .or_else(|| since_start(first_token_s))
            .map(|v| time_ms(v, &format!("{here}.time_to_first_token_ms"), WHAT))
            .transpose()?;
        let e2e_ms = num(r.map.get("request_latency"))
            .map(|s| s * 1000.0)
            .or_else(|| since_start(end_s))
            .map(|v| time_ms(v, &format!("{here}.request_latency"), WHAT))
            .transpose()?;
        let first_byte_ms = since_start(num(
            timings(r).and_then(|t| t.get("first_request_iteration"))
        ));
        let error_text = r
            .map
            .get("info")
            .and_then(|i| i.get("error"))
            .or_else(|| r.map.get("error"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let outcome = match r.status {
            "successful" => Outcome::Success,
            "incomplete" => Outcome::Cancelled,
            _ => classify_failure(&error_text, None, ttft_ms.is_some()),
        };
        if outcome == Outcome::Success && e2e_ms.is_none() {
            return Err(ParseError::new(format!(
                "{WHAT}: a successful request without `request_latency` or start/end times: its end is unknown"
            ))
            .field(format!("{here}.request_latency")));
        }
        let ttft_ms = match outcome {
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError => None,
            _ => ttft_ms,
        };
        let e2e_ms = match (e2e_ms, ttft_ms) {
            (Some(e), Some(t)) => Some(e.max(t)),
            (e, _) => e,
        };
        let last_token_ms = match (ttft_ms, since_start(last_token_s)) {
            (Some(t), Some(l)) => Some(e2e_ms.map_or(l.max(t), |e| l.max(t).min(e))),
            _ => None,
        };
        let mut detail = if outcome.is_success() {
            None
        } else {
            detail_text(&error_text)
        };
        let phase = match (measure_start, measure_end, start_s, end_s) {
            (Some(ms), _, _, Some(end)) if end < ms => {
                warmups += 1;
                Phase::Warmup
            }
            (_, Some(me), Some(start), _) if start > me => {
                cooldowns += 1;
                detail = Some(match detail {
                    Some(d) => format!("cool-down (after guidellm's measurement window); {d}"),
                    None => "cool-down (after guidellm's measurement window)".to_string(),
                });
                Phase::Warmup
            }
            _ => {
                // guidellm counts every request that overlaps its window (ends after its start,
                // starts before its end), so one straddling an edge is measured here too.
                let before = matches!((measure_start, start_s), (Some(ms), Some(s)) if s < ms);
                let after = matches!((measure_end, end_s), (Some(me), Some(e)) if e > me);
                if before || after {
                    straddling += 1;
                }
                Phase::Measure
            }
        };
        let id = r
            .map
            .get("request_id")
            .or_else(|| r.map.get("info").and_then(|i| i.get("request_id")))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("guidellm-{}-{}", r.status, r.index));
        let count = |k: &str| {
            r.map
                .get(k)
                .and_then(Value::as_u64)
                .map(|v| v.min(u64::from(u32::MAX)) as u32)
        };
        let attempt_id = unique_id(&mut seen, id.clone());
        if !timings_layout {
            let out = num(r.map.get("output_tokens"));
            for ((key, weight), values) in PER_REQUEST.iter().zip(kept.iter_mut()) {
                if !r.map.contains_key(*key) {
                    continue;
                }
                let value = num(r.map.get(*key)).unwrap_or(0.0);
                values.push(PeerValue {
                    id: attempt_id.clone(),
                    value,
                    weight: weight(out),
                });
            }
        }
        phases.push(phase);
        attempts.push(Attempt {
            id: attempt_id,
            business_id: id,
            attempt: 1,
            phase,
            intended_start_ms,
            start_ms,
            // guidellm can stamp its first iteration after a failed request's end: a first byte
            // that is not before the first token and the end is not a first byte (found by
            // the `exports` fuzz target).
            first_byte_ms: first_byte_ms
                .filter(|f| ttft_ms.is_none_or(|t| *f <= t) && e2e_ms.is_none_or(|e| *f <= e)),
            ttft_ms,
            events: Vec::new(),
            last_token_ms,
            e2e_ms,
            outcome,
            detail,
            quality: Quality::NotEvaluated,
            input_tokens: count("prompt_tokens"),
            output_tokens: count("output_tokens"),
            tokens_from_usage: false,
            event_tokens_estimated: false,
            reasoning: None,
            prompt: None,
            session: None,
        });
    }
    attempts.sort_by(|a, b| {
        a.start_ms
            .unwrap_or(f64::INFINITY)
            .total_cmp(&b.start_ms.unwrap_or(f64::INFINITY))
    });

    let mut warnings = Vec::new();
    let measured = |status: &str| {
        raws.iter()
            .zip(&phases)
            .filter(|(r, phase)| r.status == status && **phase == Phase::Measure)
            .count() as u64
    };
    let mut sampled = Vec::new();
    if let Some((totals, _)) = request_totals(b) {
        for status in ["successful", "errored", "incomplete"] {
            let kept = measured(status);
            if let Some(total) = totals.get(status).and_then(Value::as_u64) {
                if total > kept {
                    sampled.push((status, kept, total));
                    warnings.push(format!(
                        "guidellm kept {kept} of its {total} {status} requests (its request sampling): the attempts are a sample, \
                         and its figures over them are not reproducible"
                    ));
                }
            }
        }
    }
    if zeros_as_missing > 0 {
        warnings.push(format!(
            "{zeros_as_missing} requests without a first token carry 0.0 for TTFT/ITL/TPOT in the file (guidellm's `or 0.0`): \
             read as missing, not as an instant token"
        ));
    }
    if straddling > 0 {
        warnings.push(format!(
            "{straddling} requests straddle an edge of guidellm's measurement window (started before it or ended after it): \
             guidellm counts them, so they are measured here too"
        ));
    }
    if warmups > 0 {
        warnings.push(format!(
            "{warmups} requests ended before guidellm's measurement window: kept as warm-up"
        ));
    }
    if cooldowns > 0 {
        warnings.push(format!(
            "{cooldowns} requests started after guidellm's measurement window (cool-down): marked warm-up with the detail `cool-down`, \
             so they stay out of the samples"
        ));
    }
    let mut header = Header {
        conditions,
        ..Header::default()
    };
    if let (Some(o), Some(duration)) = (origin, num(b.get("duration"))) {
        if duration > 0.0 {
            let start = measure_start
                .map(|s| ((s - o) * 1000.0).max(0.0))
                .unwrap_or(0.0);
            header.window = Some(Window {
                start_ms: start,
                length_s: duration,
            });
        }
    }
    let definitions = vec![
        "TTFT (`time_to_first_token_ms`): request start → the first token iteration (first streamed chunk with output).".to_string(),
        "E2E (`request_latency`, s): request start → request end.".to_string(),
        "guidellm keeps no per-chunk times, only the first and last token iterations: the attempts have no stream events \
         (so no per-event ITL), only their last-token time. guidellm's ITL = (last token − first token) / (output tokens − 1) \
         and TPOT = (last token − request start) / output tokens, per request; its mean and percentiles weight each request \
         by output tokens − 1 and output tokens, and count a missing value as 0."
            .to_string(),
        "A request counts when it overlaps guidellm's measurement window (ends after its start, starts before its end), as \
         guidellm counts: one straddling an edge is measured."
            .to_string(),
        "Where no token came, guidellm writes 0.0 for TTFT, ITL and TPOT: read as missing (TTFT is missing, not 0)."
            .to_string(),
        if timings_layout {
            "Intended start: `info.timings.targeted_start` (when the schedule wanted the request sent).".to_string()
        } else {
            "This older layout (≤ 0.3) keeps no intended start: only each request's start and end, first and last token times."
                .to_string()
        },
        "guidellm's figures are per status (successful/errored/incomplete); its percentiles pick the first value whose running \
         sum of shares (one sample at a time) reaches p — nearest-rank for equally weighted samples; std ddof 0."
            .to_string(),
        "Requests that ended before guidellm's measurement window are warm-up; those that started after it (cool-down) are also \
         marked warm-up, with the detail `cool-down`, since trace format v1 has a single non-measured phase."
            .to_string(),
        "`incomplete` requests (cancelled after they started) → cancelled; `errored` → failures, as below.".to_string(),
        "Prompts and outputs (`request_args`, `output`) dropped: Trace Lab never keeps response text.".to_string(),
        FAILURE_MAPPING.to_string(),
    ];
    let samples: Vec<(&str, Vec<PeerValue>)> = PER_REQUEST
        .iter()
        .zip(kept)
        .filter(|(_, v)| !v.is_empty())
        .map(|((k, _), v)| (*k, v))
        .collect();
    let names: Vec<&str> = samples.iter().map(|(k, _)| *k).collect();
    let mut trace = super::assemble(
        detected,
        header,
        definitions,
        figures(b, &sampled, timings_layout, &names),
        attempts,
        warnings,
        true,
    );
    if let Some(source) = trace.header.source.as_mut() {
        for (key, values) in samples {
            source.samples.insert(key.to_string(), values);
        }
    }
    Ok(trace)
}

/// The request counts guidellm computed its figures over: `metrics.request_totals` (0.5),
/// `request_totals` beside the metrics (0.3 and before), or `total_count` (0.2), with its path.
fn request_totals(b: &Map<String, Value>) -> Option<(&Map<String, Value>, &'static str)> {
    [
        (
            b.get("metrics").and_then(|m| m.get("request_totals")),
            "metrics.request_totals",
        ),
        (b.get("request_totals"), "request_totals"),
        (b.get("total_count"), "total_count"),
    ]
    .into_iter()
    .find_map(|(v, path)| v.and_then(Value::as_object).map(|o| (o, path)))
}

/// `sampled`: the statuses whose request lists keep only a sample, `(status, kept, total)`.
/// `timings_layout`: the 0.5 per-request layout (`info.timings`), whose ITL and TPOT
/// definitions and weights were read in guidellm's source.
/// A request's weight from its output tokens.
type Weight = fn(Option<f64>) -> f64;

/// guidellm's per-request ITL and TPOT, with the weight each gets from the output tokens
/// (`(output_tokens or 1) − 1` and `output_tokens or 0`).
const PER_REQUEST: [(&str, Weight); 2] = [
    ("inter_token_latency_ms", |out| out.unwrap_or(1.0) - 1.0),
    ("time_per_output_token_ms", |out| out.unwrap_or(0.0)),
];

/// `kept`: the per-request samples of the older layout this benchmark keeps (by name).
fn figures(
    b: &Map<String, Value>,
    sampled: &[(&str, u64, u64)],
    timings_layout: bool,
    kept: &[&str],
) -> Vec<PeerFigure> {
    let Some(metrics) = b.get("metrics").and_then(Value::as_object) else {
        return Vec::new();
    };
    let keeps = |statuses: &[&str]| -> Option<Reproducibility> {
        let (kept, total) = sampled
            .iter()
            .filter(|(s, _, _)| statuses.contains(s))
            .fold((0, 0), |(k, t), (_, kept, total)| (k + kept, t + total));
        (total > 0).then(|| {
            Reproducibility::Not(format!(
                "not reproducible: the file keeps {kept} of {total} requests (guidellm stored a sample), and the figure covers all of them"
            ))
        })
    };
    // The older layout without per-request ITL/TPOT values: its first/last token times are
    // defined differently across versions, so nothing here recomputes them.
    let older = |name: &str| {
        if kept.contains(&name) {
            Reproducibility::Exact
        } else {
            Reproducibility::Not(format!(
                "this older guidellm layout keeps neither `info.timings` nor each request's `{name}`: its first/last token times \
                 are defined differently across versions"
            ))
        }
    };
    let mut out = Vec::new();
    // guidellm compiles every metric per status: successful, errored, incomplete, and total (all
    // three together), each request's value `or 0.0` (`GenerativeMetrics.compile`).
    let statuses: [(&str, Over, &[&str]); 4] = [
        ("successful", Over::Successes, &["successful"]),
        ("errored", Over::Errored, &["errored"]),
        ("incomplete", Over::Cancelled, &["incomplete"]),
        ("total", Over::All, &["successful", "errored", "incomplete"]),
    ];
    let specs: [(&str, Quantity, PeerUnit, &str, Reproducibility); 7] = [
        ("time_to_first_token_ms", Quantity::Ttft, PeerUnit::Ms, "TTFT", Reproducibility::Exact),
        ("request_latency", Quantity::E2e, PeerUnit::S, "latency", Reproducibility::Exact),
        (
            "inter_token_latency_ms",
            Quantity::ItlPerRequestTokenWeighted,
            PeerUnit::Ms,
            "(last token − first token) / (output tokens − 1) per request, weighted by its output tokens − 1",
            if timings_layout { Reproducibility::Exact } else { older("inter_token_latency_ms") },
        ),
        (
            "time_per_output_token_ms",
            Quantity::TpotFromStartTokenWeighted,
            PeerUnit::Ms,
            "(last token − request start) / output tokens per request, weighted by its output tokens",
            if timings_layout { Reproducibility::Exact } else { older("time_per_output_token_ms") },
        ),
        ("prompt_token_count", Quantity::InputTokens, PeerUnit::Count, "prompt tokens (the server's usage)", Reproducibility::Exact),
        ("output_token_count", Quantity::OutputTokens, PeerUnit::Count, "output tokens (the server's usage)", Reproducibility::Exact),
        ("total_token_count", Quantity::TotalTokens, PeerUnit::Count, "prompt + output tokens", Reproducibility::Exact),
    ];
    for (status, over, covers) in statuses {
        let status_sampled = keeps(covers);
        let of = match over {
            Over::Successes => "the successful requests",
            Over::Errored => "the errored requests",
            Over::Cancelled => "the incomplete (cancelled) requests",
            Over::All => "all requests (successful, errored, incomplete)",
        };
        for (name, quantity, unit, sample, reproducibility) in &specs {
            let reproducibility = status_sampled
                .clone()
                .unwrap_or_else(|| reproducibility.clone());
            let Some(summary) = metrics
                .get(*name)
                .and_then(|m| m.get(status))
                .and_then(Value::as_object)
            else {
                continue;
            };
            // The older layout's ITL/TPOT: over each request's own value, as guidellm kept it.
            let kept_sample = (!timings_layout && kept.contains(name)).then(|| name.to_string());
            let (sample, kept_words) = match &kept_sample {
                Some(_) => (
                    *name,
                    " (each request's value as guidellm wrote it, weighted as guidellm weights it)",
                ),
                None => (*sample, ""),
            };
            let mut push = |key: String, stat: Stat, value: Option<f64>, words: String| {
                if let Some(value) = value {
                    out.push(PeerFigure {
                        tool_key: key,
                        quantity: *quantity,
                        stat,
                        value,
                        unit: *unit,
                        how: format!("{words} of {sample}{kept_words}, over {of} (a missing value counts as 0)"),
                        empty_as_zero: true,
                        reproducibility: reproducibility.clone(),
                        duration: Default::default(),
                        error_code: None,
                        over,
                        missing_as_zero: true,
                        sample: kept_sample.clone(),
                    });
                }
            };
            let base = format!("metrics.{name}.{status}");
            push(
                format!("{base}.mean"),
                Stat::Mean,
                num(summary.get("mean")),
                "mean".into(),
            );
            push(
                format!("{base}.median"),
                Stat::Percentile {
                    p: 50.0,
                    method: PeerPercentile::CumulativeShare,
                },
                num(summary.get("median")),
                "median (first value whose cumulative share reaches 50 %)".into(),
            );
            if let Some(percentiles) = summary.get("percentiles").and_then(Value::as_object) {
                for (key, p) in [("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9)] {
                    push(
                        format!("{base}.percentiles.{key}"),
                        Stat::Percentile {
                            p,
                            method: PeerPercentile::CumulativeShare,
                        },
                        num(percentiles.get(key)),
                        format!(
                            "percentile {} (first value whose cumulative share reaches p)",
                            trim_num(p)
                        ),
                    );
                }
            }
            push(
                format!("{base}.min"),
                Stat::Min,
                num(summary.get("min")),
                "minimum".into(),
            );
            push(
                format!("{base}.max"),
                Stat::Max,
                num(summary.get("max")),
                "maximum".into(),
            );
            push(
                format!("{base}.std_dev"),
                Stat::Std { ddof: 0 },
                num(summary.get("std_dev")),
                "std (ddof 0)".into(),
            );
        }
        // Its rates and concurrency are distributions over time: each event weighted by the span
        // around it, so the mean of requests_per_second is the requests ending in the window / the
        // window, and the mean of request_concurrency each request's time inside the window,
        // summed, / the window.
        let mean = |name: &str| {
            metrics
                .get(name)
                .and_then(|m| m.get(status))
                .and_then(|s| num(s.get("mean")))
        };
        if let Some(v) = mean("requests_per_second") {
            let mut f = PeerFigure::exact_value(
                format!("metrics.requests_per_second.{status}.mean"),
                Quantity::RequestThroughput,
                v,
                PeerUnit::PerSecond,
                format!(
                    "mean of guidellm's rate distribution over its measured window (each request end weighted by the time around \
                     it): {of} that end inside the window / the window's length; one that ends after it is not counted"
                ),
            );
            f.duration = RateSpan::EndsInWindow;
            f.over = over;
            if let Some(not) = status_sampled.clone() {
                f.reproducibility = not;
            }
            out.push(f);
        }
        if let Some(v) = mean("request_concurrency") {
            let mut f = PeerFigure::exact_value(
                format!("metrics.request_concurrency.{status}.mean"),
                Quantity::MeanConcurrency,
                v,
                PeerUnit::Count,
                format!(
                    "mean of guidellm's concurrency distribution over its measured window: the time each of {of} spends inside \
                     the window (start → end, clipped to it), summed, / the window's length"
                ),
            );
            f.duration = RateSpan::OverlapWithWindow;
            f.over = over;
            if let Some(not) = status_sampled.clone() {
                f.reproducibility = not;
            }
            out.push(f);
        }
        for (name, quantity, why) in [
            (
                "output_tokens_per_second",
                Quantity::OutputThroughput,
                "guidellm spreads each request's tokens evenly over its token iterations (which the file does not time) and \
                 merges events closer than 0.1 ms; all output tokens / (last token − first token) comes close, not exactly",
            ),
            (
                "tokens_per_second",
                Quantity::TotalTokenThroughput,
                "guidellm spreads each request's output tokens over its token iterations (which the file does not time) and adds \
                 its prompt tokens at the first token, in a rate distribution without a window; not recomputed",
            ),
            (
                "prompt_tokens_per_second",
                Quantity::InputThroughput,
                "a rate distribution over each request's prompt tokens at its first token, without a window: its mean depends \
                 on guidellm's binning of the events (not ported); not recomputed",
            ),
        ] {
            if let Some(v) = mean(name) {
                let mut f = PeerFigure::exact_value(
                    format!("metrics.{name}.{status}.mean"),
                    quantity,
                    v,
                    PeerUnit::TokensPerSecond,
                    format!("mean of guidellm's token-rate distribution over {of}"),
                );
                f.over = over;
                f.reproducibility = Reproducibility::Not(why.into());
                out.push(f);
            }
        }
    }
    if let Some((totals, path)) = request_totals(b) {
        for (key, quantity, how, statuses) in [
            (
                "total",
                Quantity::Attempts,
                "requests of the benchmark",
                &["successful", "errored", "incomplete"][..],
            ),
            (
                "successful",
                Quantity::Successes,
                "requests that completed",
                &["successful"][..],
            ),
            (
                "errored",
                Quantity::Errored,
                "requests that ended in an error",
                &["errored"][..],
            ),
            (
                "incomplete",
                Quantity::Cancelled,
                "requests cancelled after they started",
                &["incomplete"][..],
            ),
        ] {
            if let Some(v) = num(totals.get(key)) {
                let mut f = PeerFigure::exact_value(
                    format!("{path}.{key}"),
                    quantity,
                    v,
                    PeerUnit::Count,
                    how,
                );
                if let Some(not) = keeps(statuses) {
                    f.reproducibility = not;
                }
                out.push(f);
            }
        }
    }
    out.sort_by_key(PeerFigure::order);
    out
}
