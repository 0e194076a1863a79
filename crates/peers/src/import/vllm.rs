//! vLLM `bench serve` / `benchmark_serving.py` `--save-result` files. With `--save-detailed`
//! they carry per-request arrays (`ttfts`, `itls`, `input_lens`, `output_lens`, `errors`,
//! sometimes `start_times`); without it, aggregates only, which are refused.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{
    classify_failure, detail_text, opt_num, time_ms, unique_id, Content, Detected, Imported,
    ImportedTrace, PeerFigure, PeerPercentile, PeerTool, PeerUnit, Quantity, Reproducibility, Stat,
    FAILURE_MAPPING,
};
use tracelab_core::error::ParseError;
use tracelab_core::trace::*;

const WHAT: &str = "vLLM bench serve result";
const PER_REQUEST: [&str; 5] = ["ttfts", "itls", "input_lens", "output_lens", "errors"];

pub(super) fn detect(map: &Map<String, Value>) -> Option<Detected> {
    let seen: Vec<&str> = PER_REQUEST
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    let layout = if map.contains_key("request_goodput:") {
        "vllm-benchmark-serving-save-result"
    } else {
        "vllm-bench-serve-save-result"
    };
    if !seen.is_empty() {
        let evidence = format!(
            "per-request arrays {}",
            seen.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let mut d = Detected::new(PeerTool::Vllm, Content::PerRequest, layout, evidence);
        d.version = version(map);
        return Some(d);
    }
    let aggregate = ["mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms"]
        .iter()
        .any(|k| map.contains_key(*k));
    let run = ["completed", "num_prompts", "request_throughput", "duration"]
        .iter()
        .any(|k| map.contains_key(*k));
    if aggregate && run {
        let mut d = Detected::new(
            PeerTool::Vllm,
            Content::AggregateOnly,
            &format!("{layout}-aggregates"),
            "vLLM's aggregate keys (`mean_ttft_ms`, `completed`, …) without per-request arrays",
        );
        d.version = version(map);
        return Some(d);
    }
    None
}

fn version(map: &Map<String, Value>) -> Option<String> {
    ["vllm_version", "version"]
        .iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_string))
}

pub(super) fn refusal(map: &Map<String, Value>) -> String {
    let get = |k: &str| map.get(k).and_then(super::number);
    let mut counts = Vec::new();
    if let Some(c) = get("completed") {
        counts.push(format!("completed {c}"));
    }
    if let Some(f) = get("failed") {
        counts.push(format!("failed {f}"));
    }
    let counts = if counts.is_empty() {
        String::new()
    } else {
        format!(" ({})", counts.join(", "))
    };
    let all_failed =
        matches!((get("completed"), get("failed")), (Some(c), Some(f)) if c == 0.0 && f > 0.0);
    let failed_note = if all_failed {
        " Every request of this run failed, and vLLM then writes 0 ms for every latency figure — exactly why the attempts are needed."
    } else {
        ""
    };
    format!(
        "this {WHAT} holds aggregates only{counts}: the per-request arrays `ttfts`, `itls`, `output_lens` and `errors` are missing, \
         so there are no attempts to show. Rerun `vllm bench serve` with `--save-result --save-detailed` and upload that file.{failed_note}"
    )
}

fn array<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a Vec<Value>>, ParseError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(other) => Err(ParseError::new(format!(
            "{WHAT}: `{key}` should be a list with one entry per request, found {}",
            super::kind_of(other)
        ))
        .field(key)),
    }
}

fn required<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    why: &str,
) -> Result<&'a Vec<Value>, ParseError> {
    array(map, key)?.ok_or_else(|| {
        ParseError::new(format!(
            "{WHAT} with per-request arrays, but `{key}` ({why}) is missing: a layout this version does not know, or a file that was edited"
        ))
        .field(key)
    })
}

fn seconds_at(list: &[Value], i: usize, key: &str) -> Result<Option<f64>, ParseError> {
    match &list[i] {
        Value::Null => Ok(None),
        v => match super::number(v) {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(ParseError::new(format!(
                "{WHAT}: expected seconds, found {}",
                super::kind_of(v)
            ))
            .field(format!("{key}[{i}]"))),
        },
    }
}

fn count_at(list: &[Value], i: usize, key: &str) -> Result<Option<u32>, ParseError> {
    match &list[i] {
        Value::Null => Ok(None),
        v => match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n as u32)),
            _ => Err(ParseError::new(format!(
                "{WHAT}: expected a token count, found {}",
                super::kind_of(v)
            ))
            .field(format!("{key}[{i}]"))),
        },
    }
}

/// Also reads SGLang `bench_serving --output-details` results, which share vLLM's per-request
/// lists and figure names (`detected.tool` tells them apart).
pub(super) fn import(detected: Detected, map: &Map<String, Value>) -> Result<Imported, ParseError> {
    let sglang = detected.tool == PeerTool::Sglang;
    import_run(detected, map).map_err(|mut e| {
        if sglang {
            e.message = e.message.replace(WHAT, "SGLang bench_serving result");
        }
        e
    })
}

fn import_run(detected: Detected, map: &Map<String, Value>) -> Result<Imported, ParseError> {
    let tool = detected.tool.name();
    let prefix = if detected.tool == PeerTool::Sglang {
        "sglang"
    } else {
        "vllm"
    };
    let ttfts = required(map, "ttfts", "time to first token per request")?;
    let itls = required(map, "itls", "inter-token gaps per request")?;
    let output_lens = required(map, "output_lens", "output tokens per request")?;
    let errors = required(
        map,
        "errors",
        "the error of each request, empty when it succeeded",
    )?;
    let input_lens = array(map, "input_lens")?;
    let start_times = array(map, "start_times")?;
    let e2els = array(map, "e2els")?;
    let n = ttfts.len();
    let mut lists: Vec<(&str, usize)> = vec![
        ("itls", itls.len()),
        ("output_lens", output_lens.len()),
        ("errors", errors.len()),
    ];
    for (key, list) in [
        ("input_lens", input_lens),
        ("start_times", start_times),
        ("e2els", e2els),
    ] {
        if let Some(l) = list {
            lists.push((key, l.len()));
        }
    }
    for (key, len) in lists {
        if len != n {
            return Err(ParseError::new(format!(
                "{WHAT}: `{key}` has {len} entries but `ttfts` has {n}; each per-request list needs one entry per request"
            ))
            .field(key));
        }
    }
    let origin_s = match start_times {
        Some(list) => {
            let mut min = f64::INFINITY;
            for i in 0..n {
                if let Some(s) = seconds_at(list, i, "start_times")? {
                    min = min.min(s);
                }
            }
            min.is_finite().then_some(min)
        }
        None => None,
    };

    let mut attempts = Vec::with_capacity(n);
    let mut seen = HashMap::new();
    let mut estimated = 0usize;
    let mut zero_token_successes = 0usize;
    for i in 0..n {
        let error = match &errors[i] {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            other => {
                return Err(ParseError::new(format!(
                    "{WHAT}: expected the error text (empty when the request succeeded), found {}",
                    super::kind_of(other)
                ))
                .field(format!("errors[{i}]")))
            }
        };
        let success = error.trim().is_empty();
        let ttft_s = seconds_at(ttfts, i, "ttfts")?;
        let gaps: Vec<f64> = match &itls[i] {
            Value::Null => Vec::new(),
            Value::Array(list) => {
                let mut out = Vec::with_capacity(list.len());
                for (j, g) in list.iter().enumerate() {
                    let path = format!("itls[{i}][{j}]");
                    let g = super::number(g).filter(|x| x.is_finite()).ok_or_else(|| {
                        ParseError::new(format!(
                            "{WHAT}: expected a gap in seconds, found {}",
                            super::kind_of(g)
                        ))
                        .field(path.clone())
                    })?;
                    out.push(time_ms(g * 1000.0, &path, WHAT)?);
                }
                out
            }
            other => {
                return Err(ParseError::new(format!(
                    "{WHAT}: expected the list of inter-token gaps of request {i}, found {}",
                    super::kind_of(other)
                ))
                .field(format!("itls[{i}]")))
            }
        };
        let output_len = count_at(output_lens, i, "output_lens")?;
        let input_len = match input_lens {
            Some(list) => count_at(list, i, "input_lens")?,
            None => None,
        };
        let latency_ms = match e2els {
            Some(list) => seconds_at(list, i, "e2els")?
                .map(|s| time_ms(s * 1000.0, &format!("e2els[{i}]"), WHAT))
                .transpose()?,
            None => None,
        };
        let start_ms = match (start_times, origin_s) {
            (Some(list), Some(origin)) => seconds_at(list, i, "start_times")?
                .map(|s| time_ms((s - origin) * 1000.0, &format!("start_times[{i}]"), WHAT))
                .transpose()?,
            _ => None,
        };
        // vLLM leaves TTFT at its initial 0.0 when no token came, failure or success (a stream
        // that ended normally with 0 output tokens is a success to vLLM): that 0.0 is a missing
        // TTFT, never a first token at 0 ms. vLLM's own TTFT figures include it (see `figures`).
        let ttft_ms = ttft_s
            .map(|s| time_ms(s * 1000.0, &format!("ttfts[{i}]"), WHAT))
            .transpose()?
            .filter(|&t| t > 0.0);
        if success && ttft_ms.is_none() && ttft_s.is_some() {
            zero_token_successes += 1;
        }
        let mut events = Vec::new();
        if let Some(t) = ttft_ms {
            let mut at = t;
            events.push(StreamEvent {
                at_ms: at,
                tokens: 1,
            });
            for g in &gaps {
                at += g;
                events.push(StreamEvent {
                    at_ms: at,
                    tokens: 1,
                });
            }
        }
        let last_event = events.last().map(|e| e.at_ms);
        let e2e_ms = match latency_ms {
            Some(l) => Some(l.max(ttft_ms.unwrap_or(0.0))),
            // Without `e2els` the end is taken at the last stream event; with no event at all it
            // is unknown, not 0.
            None if success => last_event,
            None => None,
        };
        // A success whose end is unknown keeps no place on the timeline either: a trace's
        // attempt with a start has an end (docs/trace-format.md).
        let start_ms = if success && e2e_ms.is_none() {
            None
        } else {
            start_ms
        };
        if let Some(e2e) = e2e_ms {
            for e in &mut events {
                e.at_ms = e.at_ms.min(e2e);
            }
        }
        let outcome = if success {
            Outcome::Success
        } else {
            classify_failure(&error, None, ttft_ms.is_some())
        };
        let ttft_ms = match outcome {
            Outcome::TimeoutBeforeFirstToken | Outcome::ConnectError => None,
            _ => ttft_ms,
        };
        let events_estimated = !events.is_empty() && output_len != Some(events.len() as u32);
        if events_estimated && success {
            estimated += 1;
        }
        attempts.push(Attempt {
            id: unique_id(&mut seen, format!("{prefix}-{i}")),
            business_id: format!("{prefix}-{i}"),
            attempt: 1,
            phase: Phase::Measure,
            intended_start_ms: None,
            start_ms,
            first_byte_ms: None,
            ttft_ms,
            events: if ttft_ms.is_some() {
                events
            } else {
                Vec::new()
            },
            last_token_ms: None,
            e2e_ms,
            outcome,
            detail: if success { None } else { detail_text(&error) },
            quality: Quality::NotEvaluated,
            input_tokens: input_len,
            output_tokens: output_len.filter(|&o| success || o > 0),
            tokens_from_usage: false,
            event_tokens_estimated: events_estimated,
            reasoning: None,
            prompt: None,
            session: None,
        });
    }

    let mut header = Header::default();
    let c = &mut header.conditions;
    c.model = map
        .get("model_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let rate = match map.get("request_rate") {
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("inf") => Some(f64::INFINITY),
        Some(v) => super::number(v),
        None => None,
    };
    let burstiness = opt_num(map, "burstiness", "burstiness", WHAT)?;
    let max_concurrency = map
        .get("max_concurrency")
        .and_then(Value::as_u64)
        .map(|v| v.min(u64::from(u32::MAX)) as u32);
    c.concurrency = max_concurrency;
    c.burstiness = burstiness;
    match rate {
        Some(r) if r.is_finite() && r > 0.0 => {
            c.rate_per_s = Some(r);
            c.arrival = Some(
                if burstiness.unwrap_or(1.0) == 1.0 {
                    "poisson"
                } else {
                    "gamma"
                }
                .to_string(),
            );
        }
        Some(_) if max_concurrency.is_some() => c.arrival = Some("closed".into()),
        // An infinite rate without a concurrency limit sends every request at once.
        Some(r) if r.is_infinite() => c.arrival = Some("burst".into()),
        _ => {}
    }
    if let Some(d) = opt_num(map, "duration", "duration", WHAT)? {
        if d > 0.0 {
            header.window = Some(Window {
                start_ms: 0.0,
                length_s: d,
            });
        }
    }
    let has_latency = e2els.is_some();
    let mut definitions = vec![
        if detected.tool == PeerTool::Sglang {
            "TTFT (`ttfts`, s): from request start to the first streamed chunk SGLang's client counts as output (its OpenAI \
             clients wait for a chunk with text); a failed request keeps 0, read here as missing."
                .to_string()
        } else {
            "TTFT (`ttfts`, s): from request start to the first streamed chunk vLLM's backend counts as output; for the chat backend \
             that can be a role-only chunk with no text, while the lesson's TTFT waits for the first non-empty token."
                .to_string()
        },
        format!(
            "ITL (`itls`, s): {tool} records one gap per SSE event, not per token — an event may carry several tokens. The gaps \
             become this trace's stream events (one token each where the counts are unknown)."
        ),
        if has_latency {
            "E2E from `e2els` (each request's latency).".to_string()
        } else {
            "E2E: this file does not save each request's latency, so E2E is taken at the last stream event (a little before the \
             stream's end); vLLM's TPOT and E2EL figures are then recomputed approximately."
                .to_string()
        },
        format!(
            "{tool}'s figures cover successful requests only (`errors[i]` empty); a metric with no sample at all is written as 0 \
             (`np.mean(ttfts or 0)`). Percentiles: numpy's default linear interpolation; std: numpy's, ddof 0."
        ),
        if start_times.is_some() {
            "Start times from `start_times` (the client's perf_counter), as offsets from the first request.".to_string()
        } else {
            "No `start_times` in this file: the attempts have durations but no place on the run's timeline.".to_string()
        },
        FAILURE_MAPPING.to_string(),
    ];
    let mut warnings = Vec::new();
    if map.contains_key("generated_texts") {
        definitions.push("`generated_texts` dropped: Trace Lab never keeps response text.".into());
        warnings.push("dropped `generated_texts`: response text is never kept".to_string());
    }
    if estimated > 0 {
        warnings.push(format!(
            "{estimated} successful requests have an output token count that differs from their number of stream events: \
             vLLM's gaps are per event, so tokens per event are estimated"
        ));
    }
    if zero_token_successes > 0 {
        warnings.push(format!(
            "{zero_token_successes} successful requests got no output token (`ttfts` 0.0, `output_lens` 0): their TTFT is missing \
             here, not 0 ms; {tool}'s own TTFT figures count them as 0"
        ));
    }
    let figures = figures(map, has_latency, zero_token_successes)?;
    let trace = super::assemble(
        &detected,
        header,
        definitions,
        figures,
        attempts,
        warnings,
        true,
    );
    Ok(Imported {
        detected,
        traces: vec![ImportedTrace {
            label: String::new(),
            trace,
        }],
    })
}

fn figures(
    map: &Map<String, Value>,
    has_latency: bool,
    zero_token_successes: usize,
) -> Result<Vec<PeerFigure>, ParseError> {
    let approx = |what: &str| {
        if has_latency {
            Reproducibility::Exact
        } else {
            Reproducibility::Approximate(format!(
                "this file saves no per-request latency: {what} uses E2E taken at the last stream event, a little before the stream's end"
            ))
        }
    };
    let mut out = Vec::new();
    for (key, value) in map {
        let Some(stem) = key.strip_suffix("_ms") else {
            continue;
        };
        let Some((stat, metric)) = stem.split_once('_') else {
            continue;
        };
        let (quantity, sample, reproducibility) = match metric {
            "ttft" => (Quantity::Ttft, "`ttfts` of the successful requests", Reproducibility::Exact),
            "itl" => (
                Quantity::EventGap,
                "every gap in `itls` of the successful requests, pooled (one per SSE event)",
                Reproducibility::Exact,
            ),
            "tpot" => (
                Quantity::TimePerOutputToken,
                "(latency − TTFT) / (output tokens − 1) of each successful request with more than one output token",
                approx("TPOT"),
            ),
            // SGLang spells it `e2e_latency`.
            "e2el" | "e2e_latency" => (Quantity::E2e, "the latency of each successful request", approx("E2EL")),
            _ => continue,
        };
        let stat = match stat {
            "mean" => Stat::Mean,
            "median" => Stat::Percentile {
                p: 50.0,
                method: PeerPercentile::Linear,
            },
            "std" => Stat::Std { ddof: 0 },
            p if p.starts_with('p') => match p[1..].parse::<f64>() {
                Ok(p) if p > 0.0 && p <= 100.0 => Stat::Percentile {
                    p,
                    method: PeerPercentile::Linear,
                },
                _ => continue,
            },
            _ => continue,
        };
        let Some(value) = value_of(value, key)? else {
            continue;
        };
        let stat_words = match stat {
            Stat::Mean => "numpy mean".to_string(),
            Stat::Std { .. } => "numpy std (ddof 0)".to_string(),
            Stat::Percentile { p, .. } => format!(
                "numpy percentile {} (linear interpolation)",
                tracelab_core::format::trim_num(p)
            ),
            _ => String::new(),
        };
        // vLLM's `ttfts` keep 0.0 for a success that got no token; the trace has no TTFT there,
        // so the tool's method counts it back as 0, and says so.
        let zero_ttft = quantity == Quantity::Ttft && zero_token_successes > 0;
        let zero_note = if zero_ttft {
            format!(
                "; includes the 0.0 vLLM keeps for the {zero_token_successes} successful requests that got no token (missing TTFTs \
                 here, counted as 0 to reproduce it)"
            )
        } else {
            String::new()
        };
        out.push(PeerFigure {
            tool_key: key.clone(),
            quantity,
            stat,
            value,
            unit: PeerUnit::Ms,
            how: format!("{stat_words} of {sample}, in ms; 0 when no request succeeded{zero_note}"),
            empty_as_zero: true,
            reproducibility,
            duration: Default::default(),
            error_code: None,
            over: Default::default(),
            missing_as_zero: zero_ttft,
            sample: None,
        });
    }
    let counts: [(&str, Quantity, PeerUnit, &str); 5] = [
        (
            "num_prompts",
            Quantity::Attempts,
            PeerUnit::Count,
            "prompts sent",
        ),
        (
            "completed",
            Quantity::Successes,
            PeerUnit::Count,
            "requests that succeeded",
        ),
        (
            "failed",
            Quantity::Failures,
            PeerUnit::Count,
            "requests that failed",
        ),
        (
            "request_throughput",
            Quantity::RequestThroughput,
            PeerUnit::PerSecond,
            "completed / duration",
        ),
        (
            "output_throughput",
            Quantity::OutputThroughput,
            PeerUnit::TokensPerSecond,
            "output tokens of the successful requests (`output_lens`) / duration",
        ),
    ];
    for (key, quantity, unit, how) in counts {
        if let Some(value) = map
            .get(key)
            .map(|v| value_of(v, key))
            .transpose()?
            .flatten()
        {
            out.push(PeerFigure::exact_value(
                key.to_string(),
                quantity,
                value,
                unit,
                how,
            ));
        }
    }
    let sums: [(&str, Quantity, &str); 2] = [
        (
            "total_input_tokens",
            Quantity::InputTokens,
            "Σ prompt tokens (`input_lens`) of the successful requests",
        ),
        (
            "total_output_tokens",
            Quantity::OutputTokens,
            "Σ output tokens (`output_lens`) of the successful requests",
        ),
    ];
    for (key, quantity, how) in sums {
        if let Some(value) = map
            .get(key)
            .map(|v| value_of(v, key))
            .transpose()?
            .flatten()
        {
            let mut f =
                PeerFigure::exact_value(key.to_string(), quantity, value, PeerUnit::Count, how);
            f.stat = Stat::Sum;
            f.empty_as_zero = true;
            out.push(f);
        }
    }
    let rates: [(&str, Quantity, PeerUnit, &str, Reproducibility); 3] = [
        (
            "total_token_throughput",
            Quantity::TotalTokenThroughput,
            PeerUnit::TokensPerSecond,
            "(Σ input + Σ output tokens of the successful requests) / duration",
            Reproducibility::Exact,
        ),
        (
            "input_throughput",
            Quantity::InputThroughput,
            PeerUnit::TokensPerSecond,
            "Σ input tokens of the successful requests / duration",
            Reproducibility::Exact,
        ),
        (
            "concurrency",
            Quantity::MeanConcurrency,
            PeerUnit::Count,
            "Σ latency of the successful requests / duration",
            approx("concurrency"),
        ),
    ];
    for (key, quantity, unit, how, reproducibility) in rates {
        if let Some(value) = map
            .get(key)
            .map(|v| value_of(v, key))
            .transpose()?
            .flatten()
        {
            let mut f = PeerFigure::exact_value(key.to_string(), quantity, value, unit, how);
            f.reproducibility = reproducibility;
            out.push(f);
        }
    }
    let not: [(&str, Quantity, PeerUnit, &str, &str); 4] = [
        (
            "duration",
            Quantity::RunDuration,
            PeerUnit::S,
            "the benchmark's own clock, from before the first request is sent to after the last one ends",
            "the tool times the run itself; this is the duration every rate above divides by (the trace's window), not \
             something the per-request data gives",
        ),
        (
            "max_output_tokens_per_s",
            Quantity::OutputThroughput,
            PeerUnit::TokensPerSecond,
            "the most output tokens finished in any one second of the run",
            "it needs the wall-clock time of every token, which the file does not keep",
        ),
        (
            "max_concurrent_requests",
            Quantity::MeanConcurrency,
            PeerUnit::Count,
            "the most requests in flight in any one second of the run",
            "it needs each request's start and end on the run's clock, which the file does not keep",
        ),
        (
            "total_output_tokens_retokenized",
            Quantity::OutputTokens,
            PeerUnit::Count,
            "Σ tokens of the generated texts, tokenized again by the benchmark",
            "it tokenizes the generated text, which Trace Lab never keeps",
        ),
    ];
    for (key, quantity, unit, how, why) in not {
        if let Some(value) = map
            .get(key)
            .map(|v| value_of(v, key))
            .transpose()?
            .flatten()
        {
            let stat = if key.starts_with("max_") {
                Stat::Max
            } else if key.starts_with("total_") {
                Stat::Sum
            } else {
                Stat::Value
            };
            out.push(PeerFigure::not_reproducible(
                key.to_string(),
                quantity,
                stat,
                value,
                unit,
                how,
                why,
            ));
        }
    }
    // Older versions wrote the key with a stray colon.
    for key in ["request_goodput", "request_goodput:"] {
        if let Some(value) = map
            .get(key)
            .map(|v| value_of(v, key))
            .transpose()?
            .flatten()
        {
            out.push(PeerFigure {
                tool_key: key.to_string(),
                quantity: Quantity::Goodput,
                stat: Stat::Value,
                value,
                unit: PeerUnit::PerSecond,
                how: "requests meeting every SLO given to --goodput, per second of the run".into(),
                empty_as_zero: false,
                reproducibility: Reproducibility::Not(
                    "the SLOs given to --goodput are not saved in the file".into(),
                ),
                duration: Default::default(),
                error_code: None,
                over: Default::default(),
                missing_as_zero: false,
                sample: None,
            });
        }
    }
    out.sort_by_key(PeerFigure::order);
    Ok(out)
}

fn value_of(value: &Value, key: &str) -> Result<Option<f64>, ParseError> {
    match value {
        Value::Null => Ok(None),
        // Python's json.dumps token for a figure with no finite value (read as a string, see
        // `import::python_tokens`): there is nothing to compare, and the trace's warning says so.
        Value::String(s) if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") => Ok(None),
        v => match super::number(v) {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(ParseError::new(format!(
                "{WHAT}: expected a number, found {}",
                super::kind_of(v)
            ))
            .field(key)),
        },
    }
}
