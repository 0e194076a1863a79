//! guidellm `benchmarks.json` (0.5 layout: `benchmarks[].requests.{successful,errored,incomplete}`
//! with `info.timings`; older per-request fields are read when present). One trace per benchmark.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    classify_failure, detail_text, time_ms, unique_id, Content, Detected, ImportedTrace, Imported, PeerFigure,
    PeerPercentile, PeerTool, PeerUnit, Quantity, Reproducibility, Stat, FAILURE_MAPPING,
};
use crate::error::ParseError;
use crate::metrics::trim_num;
use crate::trace::*;

const WHAT: &str = "guidellm benchmarks.json";

pub(super) fn detect(map: &Map<String, Value>) -> Option<Detected> {
    let benchmarks = map.get("benchmarks")?.as_array()?;
    let version = map
        .get("metadata")
        .and_then(|m| m.get("guidellm_version"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let typed = benchmarks.first().and_then(|b| b.get("type_")).and_then(Value::as_str).is_some_and(|t| t.contains("benchmark"));
    let with_requests = benchmarks.first().is_some_and(|b| b.get("requests").is_some());
    if version.is_none() && !typed && !with_requests {
        return None;
    }
    let mut d = Detected::new(
        PeerTool::Guidellm,
        Content::PerRequest,
        "guidellm-benchmarks",
        format!("`benchmarks` ({} benchmark{})", benchmarks.len(), if benchmarks.len() == 1 { "" } else { "s" }),
    );
    d.version = version;
    Some(d)
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(super::number).filter(|x| x.is_finite())
}

fn strategy_label(b: &Map<String, Value>) -> (String, Conditions) {
    let mut c = Conditions::default();
    let strategy = b.get("config").and_then(|c| c.get("strategy")).or_else(|| b.get("args").and_then(|a| a.get("strategy")));
    let Some(strategy) = strategy.and_then(Value::as_object) else {
        return ("unknown strategy".into(), c);
    };
    let kind = strategy.get("type_").and_then(Value::as_str).unwrap_or("unknown");
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

pub(super) fn import(detected: Detected, value: &Value) -> Result<Imported, ParseError> {
    let root = value.as_object().expect("detected as an object");
    let benchmarks = root.get("benchmarks").and_then(Value::as_array).expect("detected");
    if benchmarks.is_empty() {
        return Err(ParseError::new(format!("{WHAT} with an empty `benchmarks` list: no run to import")).field("benchmarks"));
    }
    let model_arg = root.get("args").and_then(|a| a.get("model")).and_then(Value::as_str).map(str::to_string);
    let mut traces = Vec::with_capacity(benchmarks.len());
    for (i, b) in benchmarks.iter().enumerate() {
        let path = format!("benchmarks[{i}]");
        let b = b.as_object().ok_or_else(|| {
            ParseError::new(format!("{WHAT}: each benchmark should be an object, found {}", super::kind_of(b))).field(path.clone())
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
        traces.push(ImportedTrace { label: format!("benchmark {}: {label}", i + 1), trace });
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
                        ParseError::new(format!("{WHAT}: each request should be an object, found {}", super::kind_of(r)))
                            .field(format!("{path}.requests.{status}[{index}]"))
                    })?;
                    raws.push(Raw { status, index, map });
                }
            }
            Some(other) => {
                return Err(ParseError::new(format!("{WHAT}: `{status}` should be a list of requests, found {}", super::kind_of(other)))
                    .field(format!("{path}.requests.{status}")))
            }
        }
    }
    fn timings<'a>(r: &Raw<'a>) -> Option<&'a Map<String, Value>> {
        r.map.get("info").and_then(|i| i.get("timings")).and_then(Value::as_object)
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
    let measure_start = num(scheduler.and_then(|s| s.get("measure_start_time"))).or_else(|| num(b.get("start_time")));
    let measure_end = num(scheduler.and_then(|s| s.get("measure_end_time"))).or_else(|| num(b.get("end_time")));
    let origin = raws
        .iter()
        .filter_map(start_of)
        .chain(measure_start)
        .chain(raws.iter().filter_map(|r| num(timings(r).and_then(|t| t.get("targeted_start")))))
        .fold(f64::INFINITY, f64::min);
    let origin = origin.is_finite().then_some(origin);

    let mut attempts = Vec::with_capacity(raws.len());
    let mut seen = HashMap::new();
    let (mut warmups, mut cooldowns) = (0, 0);
    for r in &raws {
        let here = format!("{path}.requests.{}[{}]", r.status, r.index);
        let offset = |t: Option<f64>, field: &str| -> Result<Option<f64>, ParseError> {
            match (t, origin) {
                (Some(t), Some(o)) => Ok(Some(time_ms((t - o) * 1000.0, &format!("{here}.{field}"), WHAT)?)),
                _ => Ok(None),
            }
        };
        let start_s = start_of(r);
        let end_s = end_of(r);
        let start_ms = offset(start_s, "request_start_time")?;
        let intended_start_ms = offset(num(timings(r).and_then(|t| t.get("targeted_start"))), "info.timings.targeted_start")?;
        let since_start = |t: Option<f64>| match (t, start_s) {
            (Some(t), Some(s)) if t >= s => Some((t - s) * 1000.0),
            _ => None,
        };
        let ttft_ms = num(r.map.get("time_to_first_token_ms"))
            .or_else(|| since_start(num(timings(r).and_then(|t| t.get("first_token_iteration")))))
            .or_else(|| since_start(num(r.map.get("first_token_time"))))
            .map(|v| time_ms(v, &format!("{here}.time_to_first_token_ms"), WHAT))
            .transpose()?;
        let e2e_ms = num(r.map.get("request_latency"))
            .map(|s| s * 1000.0)
            .or_else(|| since_start(end_s))
            .map(|v| time_ms(v, &format!("{here}.request_latency"), WHAT))
            .transpose()?;
        let first_byte_ms = since_start(num(timings(r).and_then(|t| t.get("first_request_iteration"))));
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
        let mut detail = if outcome.is_success() { None } else { detail_text(&error_text) };
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
            _ => Phase::Measure,
        };
        let id = r
            .map
            .get("request_id")
            .or_else(|| r.map.get("info").and_then(|i| i.get("request_id")))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("guidellm-{}-{}", r.status, r.index));
        let count = |k: &str| r.map.get(k).and_then(Value::as_u64).map(|v| v.min(u64::from(u32::MAX)) as u32);
        attempts.push(Attempt {
            id: unique_id(&mut seen, id.clone()),
            business_id: id,
            attempt: 1,
            phase,
            intended_start_ms,
            start_ms,
            first_byte_ms: first_byte_ms.filter(|f| ttft_ms.is_none_or(|t| *f <= t)),
            ttft_ms,
            events: Vec::new(),
            e2e_ms,
            outcome,
            detail,
            quality: Quality::NotEvaluated,
            input_tokens: count("prompt_tokens"),
            output_tokens: count("output_tokens"),
            tokens_from_usage: false,
            event_tokens_estimated: false,
        });
    }
    attempts.sort_by(|a, b| a.start_ms.unwrap_or(f64::INFINITY).total_cmp(&b.start_ms.unwrap_or(f64::INFINITY)));

    let mut warnings = Vec::new();
    if let Some(totals) = b.get("metrics").and_then(|m| m.get("request_totals")).and_then(Value::as_object) {
        for status in ["successful", "errored", "incomplete"] {
            let stored = raws.iter().filter(|r| r.status == status).count() as u64;
            if let Some(total) = totals.get(status).and_then(Value::as_u64) {
                if total > stored {
                    warnings.push(format!(
                        "guidellm kept {stored} of its {total} {status} requests (--sample-requests): the attempts are a sample, \
                         and its figures cover all {total}"
                    ));
                }
            }
        }
    }
    if warmups > 0 {
        warnings.push(format!("{warmups} requests ended before guidellm's measurement window: kept as warm-up"));
    }
    if cooldowns > 0 {
        warnings.push(format!(
            "{cooldowns} requests started after guidellm's measurement window (cool-down): marked warm-up with the detail `cool-down`, \
             so they stay out of the samples"
        ));
    }
    let mut header = Header { conditions, ..Header::default() };
    if let (Some(o), Some(duration)) = (origin, num(b.get("duration"))) {
        if duration > 0.0 {
            let start = measure_start.map(|s| ((s - o) * 1000.0).max(0.0)).unwrap_or(0.0);
            header.window = Some(Window { start_ms: start, length_s: duration });
        }
    }
    let definitions = vec![
        "TTFT (`time_to_first_token_ms`): request start → the first token iteration (first streamed chunk with output).".to_string(),
        "E2E (`request_latency`, s): request start → request end.".to_string(),
        "guidellm keeps no per-chunk times, only the first and last token iterations: the attempts have no stream events, and \
         guidellm's ITL and TPOT (averaged per request, then weighted by output tokens) cannot be recomputed from them."
            .to_string(),
        "Intended start: `info.timings.targeted_start` (when the schedule wanted the request sent).".to_string(),
        "guidellm's figures are per status (successful/errored/incomplete); its percentiles pick the first value whose cumulative \
         share reaches p (duplicates merged) — nearest-rank for equally weighted samples; std ddof 0."
            .to_string(),
        "Requests that ended before guidellm's measurement window are warm-up; those that started after it (cool-down) are also \
         marked warm-up, with the detail `cool-down`, since trace format v1 has a single non-measured phase."
            .to_string(),
        "`incomplete` requests (cancelled after they started) → cancelled; `errored` → failures, as below.".to_string(),
        "Prompts and outputs (`request_args`, `output`) dropped: Trace Lab never keeps response text.".to_string(),
        FAILURE_MAPPING.to_string(),
    ];
    Ok(super::assemble(detected, header, definitions, figures(b), attempts, warnings, true))
}

fn figures(b: &Map<String, Value>) -> Vec<PeerFigure> {
    let Some(metrics) = b.get("metrics").and_then(Value::as_object) else { return Vec::new() };
    let mut out = Vec::new();
    let specs: [(&str, Quantity, PeerUnit, &str, Reproducibility); 3] = [
        ("time_to_first_token_ms", Quantity::Ttft, PeerUnit::Ms, "TTFT of the successful requests", Reproducibility::Exact),
        ("request_latency", Quantity::E2e, PeerUnit::S, "latency of the successful requests", Reproducibility::Exact),
        (
            "inter_token_latency_ms",
            Quantity::TimePerOutputToken,
            PeerUnit::Ms,
            "(last token − first token) / (output tokens − 1) per successful request, weighted by its output tokens − 1",
            Reproducibility::Not(
                "guidellm keeps only the first and last token times; the attempts carry no last-token time to recompute it".into(),
            ),
        ),
    ];
    for (name, quantity, unit, sample, reproducibility) in specs {
        let Some(summary) = metrics.get(name).and_then(|m| m.get("successful")).and_then(Value::as_object) else { continue };
        let mut push = |key: String, stat: Stat, value: Option<f64>, words: String| {
            if let Some(value) = value {
                out.push(PeerFigure {
                    tool_key: key,
                    quantity,
                    stat,
                    value,
                    unit,
                    how: format!("{words} of {sample}"),
                    empty_as_zero: true,
                    reproducibility: reproducibility.clone(),
                });
            }
        };
        let base = format!("metrics.{name}.successful");
        push(format!("{base}.mean"), Stat::Mean, num(summary.get("mean")), "mean".into());
        push(
            format!("{base}.median"),
            Stat::Percentile { p: 50.0, method: PeerPercentile::CumulativeShare },
            num(summary.get("median")),
            "median (first value whose cumulative share reaches 50 %)".into(),
        );
        if let Some(percentiles) = summary.get("percentiles").and_then(Value::as_object) {
            for (key, p) in [("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9)] {
                push(
                    format!("{base}.percentiles.{key}"),
                    Stat::Percentile { p, method: PeerPercentile::CumulativeShare },
                    num(percentiles.get(key)),
                    format!("percentile {} (first value whose cumulative share reaches p)", trim_num(p)),
                );
            }
        }
        push(format!("{base}.min"), Stat::Min, num(summary.get("min")), "minimum".into());
        push(format!("{base}.max"), Stat::Max, num(summary.get("max")), "maximum".into());
        push(format!("{base}.std_dev"), Stat::Std { ddof: 0 }, num(summary.get("std_dev")), "std (ddof 0)".into());
    }
    if let Some(totals) = metrics.get("request_totals").and_then(Value::as_object) {
        for (key, quantity, how) in [
            ("total", Quantity::Attempts, "requests of the benchmark"),
            ("successful", Quantity::Successes, "requests that completed"),
            ("incomplete", Quantity::Cancelled, "requests cancelled after they started"),
        ] {
            if let Some(v) = num(totals.get(key)) {
                out.push(PeerFigure::exact_value(format!("metrics.request_totals.{key}"), quantity, v, PeerUnit::Count, how));
            }
        }
    }
    out.sort_by_key(super::vllm::order);
    out
}
