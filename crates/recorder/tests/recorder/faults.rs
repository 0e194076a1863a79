//! Every scripted fault yields its outcome, nothing is lost, and the trace agrees with the core.

use std::time::Duration;

use tracelab_core::{Outcome, Phase, Quality};

use crate::server::{refused_addr, Script, ScriptedServer, Step};
use crate::{by_id, load, prompts, record_once, run, temp_dir, tracelab, Record};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// The scripts, by prompt text.
fn script(key: &str) -> Script {
    let tokens = |n: u32| -> Vec<Step> {
        (0..n)
            .flat_map(|i| {
                if i == 0 {
                    vec![Step::Token("tok ".into())]
                } else {
                    vec![Step::Sleep(ms(10)), Step::Token("tok ".into())]
                }
            })
            .collect()
    };
    let stream = |head: Vec<Step>, n: u32, tail: Vec<Step>| {
        let mut steps = vec![Step::Role, Step::Sleep(ms(40))];
        steps.extend(head);
        steps.extend(tokens(n));
        steps.extend(tail);
        Script::new(steps)
    };
    let end = || {
        vec![
            Step::Finish,
            Step::Usage {
                prompt: 7,
                completion: 4,
            },
            Step::Done,
        ]
    };
    match key {
        "ok" => Script::ok(ms(40), ms(10), 5),
        "multi" => Script::new(vec![
            Step::Sleep(ms(40)),
            Step::Token("a b c".into()),
            Step::Sleep(ms(10)),
            Step::Token("d e f".into()),
            Step::Finish,
            Step::Usage { prompt: 3, completion: 6 },
            Step::Done,
        ]),
        "no-usage" => stream(vec![], 4, vec![Step::Finish, Step::Done]),
        "crlf-split" => {
            let mut s = stream(vec![Step::Comment], 4, vec![Step::Comment, Step::Finish, Step::Usage { prompt: 7, completion: 4 }, Step::Done]);
            s.crlf = true;
            s.split = Some(ms(5));
            s
        }
        "coalesced" => {
            let mut s = Script::new(vec![Step::Role, Step::Sleep(ms(40))]);
            s.steps.extend((0..4).map(|_| Step::Token("tok ".into())));
            s.steps.extend(end());
            s.coalesce = true;
            s
        }
        "reasoning" => Script::new(vec![
            Step::Role,
            Step::Sleep(ms(40)),
            Step::Reasoning("hmm".into()),
            Step::Sleep(ms(10)),
            Step::Reasoning("so".into()),
            Step::Sleep(ms(10)),
            Step::Token("answer".into()),
            Step::Finish,
            Step::Usage { prompt: 7, completion: 3 },
            Step::Done,
        ]),
        "http429" => Script::status(429),
        "http500" => Script::status(500),
        "stall-before" => Script::new(vec![Step::Role, Step::Comment, Step::Hang]),
        "stall-head" => Script { head_delay: ms(5_000), ..Script::ok(ms(1), ms(1), 1) },
        "stall-after" => stream(vec![], 2, vec![Step::Hang]),
        "drop" => stream(vec![], 2, vec![Step::Abort]),
        "malformed" => stream(vec![], 1, vec![Step::Raw("data: {\"choices\": [{\"delta\"\n\n".into())]),
        "error-object" => stream(vec![], 1, vec![Step::Raw("data: {\"error\": {\"message\": \"prompt was ...\", \"type\": \"overloaded_error\"}}\n\n".into())]),
        "eof-no-done" => stream(vec![], 3, vec![]),
        "finish-no-done" => stream(vec![], 3, vec![Step::Finish, Step::Usage { prompt: 7, completion: 3 }]),
        "trickle" => {
            let mut s = vec![Step::Role, Step::Sleep(ms(40))];
            for _ in 0..5 {
                s.extend([Step::Token("t ".into()), Step::Sleep(ms(120))]);
            }
            s.extend(end());
            Script::new(s)
        }
        other => panic!("no script for {other}"),
    }
}

const ALL: [&str; 17] = [
    "ok",
    "multi",
    "no-usage",
    "crlf-split",
    "coalesced",
    "reasoning",
    "http429",
    "http500",
    "stall-before",
    "stall-head",
    "stall-after",
    "drop",
    "malformed",
    "error-object",
    "eof-no-done",
    "finish-no-done",
    "trickle",
];

fn record_faults(name: &str) -> (ScriptedServer, tracelab_core::Trace) {
    let server = ScriptedServer::start(script);
    let (output, out) = record_once(
        name,
        &server,
        &ALL,
        &[
            "--concurrency",
            "17",
            "--first-token-timeout",
            "0.5",
            "--timeout",
            "1.5",
        ],
    );
    assert!(output.status.success());
    (server, load(&out))
}

#[test]
fn every_fault_yields_its_outcome_and_nothing_is_lost() {
    let (server, trace) = record_faults("faults");
    assert_eq!(
        trace.attempts.len(),
        17,
        "one attempt per request, none lost"
    );
    assert_eq!(server.request_count(), 17);
    assert!(!trace.is_incomplete(), "a finished run has a clean footer");
    assert_eq!(trace.footer.unwrap().attempts, 17);
    assert!(trace.warnings.is_empty(), "{:?}", trace.warnings);

    let ok = by_id(&trace, "ok.r1");
    assert_eq!(ok.outcome, Outcome::Success);
    let ttft = ok.ttft_ms.unwrap();
    assert!(
        (40.0..1000.0).contains(&ttft),
        "TTFT counts from the first token, not the role chunk: {ttft}"
    );
    assert!(
        ok.first_byte_ms.unwrap() < ttft,
        "the role-only chunk is a first byte, not a token"
    );
    assert_eq!(ok.events.len(), 5);
    assert_eq!(ok.events[0].at_ms, ttft);
    // Tokens were sent 10 ms apart; a descheduled client may read two at once, so only the span
    // is checked, generously.
    assert!(
        ok.events[4].at_ms - ok.events[0].at_ms >= 20.0,
        "ITL follows the 10 ms script: {:?}",
        ok.events
    );
    assert_eq!(
        (ok.input_tokens, ok.output_tokens, ok.tokens_from_usage),
        (Some(7), Some(5), true)
    );
    assert!(
        !ok.event_tokens_estimated,
        "5 events and usage 5: one token each, known"
    );
    assert!(ok.e2e_ms.unwrap() >= ok.events[4].at_ms);
    assert_eq!(
        ok.quality,
        Quality::NotEvaluated,
        "no rubric in this prompt set"
    );
    assert!(ok.intended_start_ms.is_some() && ok.start_ms.is_some());

    let multi = by_id(&trace, "multi.r1");
    assert_eq!(multi.outcome, Outcome::Success);
    assert_eq!(multi.events.len(), 2);
    assert_eq!(multi.output_tokens, Some(6));
    assert!(
        multi.event_tokens_estimated,
        "6 tokens in 2 events: per-event counts are an estimate"
    );

    let no_usage = by_id(&trace, "no-usage.r1");
    assert_eq!(no_usage.outcome, Outcome::Success);
    assert_eq!(
        (no_usage.output_tokens, no_usage.tokens_from_usage),
        (Some(4), false),
        "counted, one token a chunk"
    );
    assert!(no_usage.event_tokens_estimated);

    for id in ["crlf-split.r1", "coalesced.r1"] {
        let a = by_id(&trace, id);
        assert_eq!(a.outcome, Outcome::Success, "{id}");
        assert_eq!(a.events.len(), 4, "{id}");
        assert_eq!(a.output_tokens, Some(4), "{id}");
    }
    let coalesced = by_id(&trace, "coalesced.r1");
    assert!(
        coalesced.event_gaps_ms().all(|g| g < 5.0),
        "events read together share their arrival time"
    );

    let reasoning = by_id(&trace, "reasoning.r1");
    assert_eq!(reasoning.outcome, Outcome::Success);
    assert_eq!(reasoning.events.len(), 3);
    assert_eq!(
        reasoning.ttft_ms,
        Some(reasoning.events[0].at_ms),
        "a reasoning token is the first token"
    );

    assert_eq!(
        by_id(&trace, "http429.r1").outcome,
        Outcome::HttpError { status: 429 }
    );
    assert_eq!(
        by_id(&trace, "http500.r1").outcome,
        Outcome::HttpError { status: 500 }
    );
    assert_eq!(by_id(&trace, "http500.r1").ttft_ms, None);

    for id in ["stall-before.r1", "stall-head.r1"] {
        let a = by_id(&trace, id);
        assert_eq!(a.outcome, Outcome::TimeoutBeforeFirstToken, "{id}");
        assert_eq!(a.ttft_ms, None, "{id}: TTFT stays missing");
        assert!(
            a.e2e_ms.unwrap() >= 450.0,
            "{id}: ended at the first-token timeout"
        );
    }
    assert!(by_id(&trace, "stall-before.r1").first_byte_ms.is_some());
    assert!(by_id(&trace, "stall-head.r1").first_byte_ms.is_none());

    let after = by_id(&trace, "stall-after.r1");
    assert_eq!(after.outcome, Outcome::TimeoutAfterFirstToken);
    assert_eq!(after.events.len(), 2);
    assert!(after.ttft_ms.is_some() && after.e2e_ms.unwrap() >= 1400.0);

    for (id, detail) in [
        ("drop.r1", None),
        ("malformed.r1", Some("malformed")),
        (
            "error-object.r1",
            Some("server error object in stream (type overloaded_error)"),
        ),
        ("eof-no-done.r1", Some("stream ended before")),
    ] {
        let a = by_id(&trace, id);
        assert_eq!(a.outcome, Outcome::StreamBroken, "{id}");
        assert!(a.ttft_ms.is_some(), "{id}: tokens came before the break");
        if let Some(detail) = detail {
            assert!(
                a.detail.as_deref().unwrap_or("").contains(detail),
                "{id}: {:?}",
                a.detail
            );
        }
        assert!(
            !a.detail.as_deref().unwrap_or("").contains("prompt was"),
            "no server text in detail"
        );
    }

    let finish = by_id(&trace, "finish-no-done.r1");
    assert_eq!(
        finish.outcome,
        Outcome::Success,
        "finish_reason then a clean end is a proper end"
    );
    assert_eq!(finish.output_tokens, Some(3));

    let trickle = by_id(&trace, "trickle.r1");
    assert_eq!(trickle.outcome, Outcome::Success);
    assert_eq!(trickle.events.len(), 5);
    assert!(trickle.e2e_ms.unwrap() >= 500.0);
}

#[test]
fn reasoning_events_are_marked_in_the_trace() {
    let server = ScriptedServer::start(script);
    let (output, out) = record_once("reasoning", &server, &["reasoning"], &["--quiet"]);
    assert!(output.status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let attempt: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(
        attempt["reasoning_events"],
        serde_json::json!([[0, 2]]),
        "{attempt}"
    );
    assert!(
        output.stdout.is_empty() && output.stderr.is_empty(),
        "--quiet prints nothing"
    );
}

#[test]
fn connection_refused_is_a_connect_error() {
    let dir = temp_dir("refused");
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .base_url(format!("http://{}/v1", refused_addr()))
        .run();
    assert_eq!(
        output.status.code(),
        Some(3),
        "every measured attempt failed: exit 3, the trace written all the same"
    );
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 3, "the three baseline prompts");
    for a in &trace.attempts {
        assert_eq!(a.outcome, Outcome::ConnectError);
        assert_eq!(a.detail.as_deref(), Some("connection refused"));
        assert_eq!(a.ttft_ms, None);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is the server running"), "{stderr}");
    assert!(
        stderr.contains("every measured attempt failed (exit status 3)"),
        "{stderr}"
    );
    // No server answered: the summary must not blame the server's usage report.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(!stdout.contains("reported no usage"), "{stdout}");
    assert!(stdout.contains("no complete successes"), "{stdout}");
    let card = run(tracelab().arg("report").arg(&out));
    assert!(!String::from_utf8_lossy(&card.stdout).contains("reported no usage"));
}

#[test]
fn http2_and_the_completions_api() {
    let server = ScriptedServer::start(script);
    let (record, out) = Record::fresh("h2", &["ok", "drop", "multi"]);
    let output = record
        .server(&server)
        .args(["--repetitions", "2", "--concurrency", "3"])
        .args(["--http2-prior-knowledge", "--api", "completions"])
        .run();
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(trace.header.conditions.api.as_deref(), Some("completions"));
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    assert!(requests
        .iter()
        .all(|r| r.version == hyper::Version::HTTP_2 && r.path == "/v1/completions"));
    for rep in 1..=2 {
        assert_eq!(
            by_id(&trace, &format!("ok.r{rep}")).outcome,
            Outcome::Success
        );
        assert_eq!(by_id(&trace, &format!("ok.r{rep}")).events.len(), 5);
        assert_eq!(
            by_id(&trace, &format!("drop.r{rep}")).outcome,
            Outcome::StreamBroken,
            "an h2 reset mid-stream"
        );
        assert_eq!(
            by_id(&trace, &format!("multi.r{rep}")).output_tokens,
            Some(6)
        );
    }
}

#[test]
fn open_loop_sends_on_schedule_without_waiting_for_replies() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1000), Duration::from_millis(5), 2)
    });
    let (record, out) = Record::fresh("open", &["slow"]);
    let output = record
        .server(&server)
        .args(["--repetitions", "10"])
        .args(["--rate", "20", "--arrival", "constant"])
        .run();
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(trace.header.conditions.arrival.as_deref(), Some("constant"));
    assert_eq!(trace.header.conditions.rate_per_s, Some(20.0));
    assert_eq!(trace.header.conditions.concurrency, None);
    let mut attempts = trace.attempts.clone();
    attempts.sort_by(|a, b| {
        a.intended_start_ms
            .partial_cmp(&b.intended_start_ms)
            .unwrap()
    });
    assert_eq!(attempts.len(), 10);
    let origin = attempts[0].intended_start_ms.unwrap();
    for (k, a) in attempts.iter().enumerate() {
        let intended = a.intended_start_ms.unwrap();
        assert!(
            (intended - origin - 50.0 * k as f64).abs() < 0.01,
            "a constant 50 ms schedule"
        );
        // Sent at or after its time. The bound is loose on purpose: a CI machine running other
        // tests beside this one can hold a send back by tens of milliseconds, and the property
        // under test (no waiting for replies) is checked on its own below.
        let lag = a.start_ms.unwrap() - intended;
        assert!(
            (0.0..250.0).contains(&lag),
            "attempt {k} started {lag} ms late"
        );
        assert_eq!(a.outcome, Outcome::Success);
    }
    // Each reply takes ≥ 1 s and the ten go out within 450 ms (700 ms with the lag allowed
    // above), so all ten are in flight when the last one starts. A loop that waited for replies
    // would have one in flight; a sender capped at k, k.
    let span =
        |a: &tracelab_core::Attempt| (a.start_ms.unwrap(), a.start_ms.unwrap() + a.e2e_ms.unwrap());
    let most_in_flight = attempts
        .iter()
        .map(|a| {
            let start = span(a).0;
            attempts
                .iter()
                .filter(|b| span(b).0 <= start && start < span(b).1)
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(most_in_flight, 10, "the open loop never waits for a reply");
}

#[test]
fn warm_up_is_recorded_apart_and_report_agrees_with_the_core() {
    let server = ScriptedServer::start(|key| match key {
        "b" => Script::status(503),
        _ => Script::ok(Duration::from_millis(20), Duration::from_millis(5), 3),
    });
    let dir = temp_dir("agree");
    let prompts = prompts(&dir, &["a", "b", "c"]);
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .prompts(&prompts)
        .args(["--repetitions", "3", "--warmup", "1", "--concurrency", "2"])
        .run();
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(trace.attempts.len(), 12);
    assert_eq!(trace.warmup_count(), 3);
    assert!(trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Warmup)
        .all(|a| a.id.ends_with(".w1")));
    let header = &trace.header;
    assert_eq!(header.conditions.repetitions, Some(3));
    assert_eq!(header.conditions.warmup, Some(1));
    assert_eq!(header.conditions.arrival.as_deref(), Some("closed"));
    assert_eq!(header.conditions.concurrency, Some(2));
    assert_eq!(
        header.conditions.prompt_set.as_deref(),
        Some("prompts.jsonl")
    );
    assert_eq!(
        header
            .conditions
            .prompt_set_sha256
            .as_ref()
            .map(String::len),
        Some(64)
    );
    let window = header.window.expect("the measured span becomes the window");
    let first_measured = trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Measure)
        .map(|a| a.intended_start_ms.unwrap())
        .fold(f64::MAX, f64::min);
    // Ordering, not timing (a loaded machine may delay the first measured send by a few ms): the
    // window opens after the last warm-up attempt ended and no later than the first measured one.
    let last_warmup_end = trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Warmup)
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    assert!(
        window.start_ms <= first_measured + 0.001,
        "the window opens before the first measured attempt"
    );
    assert!(
        window.start_ms >= last_warmup_end - 0.001,
        "the window starts after the warm-up"
    );
    let last_end = trace
        .attempts
        .iter()
        .filter(|a| a.phase == Phase::Measure)
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    assert!((window.start_ms + window.length_s * 1000.0 - last_end).abs() < 0.01);

    // The core, `tracelab report --json` and the recorder's summary give the same numbers.
    let settings = tracelab_core::Settings::from_header(&trace.header);
    let index = tracelab_core::Index::build(&trace.attempts, settings.population);
    let metrics = tracelab_core::Metrics::compute(&index, &settings);
    assert_eq!(metrics.attempts, 9);
    assert_eq!(metrics.failures, 3);
    assert!(
        metrics.output_tokens_per_s.value.is_some(),
        "usage was streamed, so tokens/s is known"
    );
    let report = run(tracelab().arg("report").arg("--json").arg(&out));
    assert!(report.status.success());
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(json["attempts"], 9);
    assert_eq!(json["warmup_excluded"], 3);
    // serde_json's default float parsing may land one ulp off; the figures are the same.
    let same = |key: &str, figure: &tracelab_core::Figure| {
        let (a, b) = (json[key].as_f64().unwrap(), figure.value.unwrap());
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{key}: report {a}, core {b}"
        );
    };
    same("failure_rate", &metrics.failure_rate);
    same("ttft_p50_s", &metrics.ttft_p50);
    same("ttft_p95_s", &metrics.ttft_p95);
    same("e2e_p50_s", &metrics.e2e_p50);
    same("output_tokens_per_s", &metrics.output_tokens_per_s);
    let summary = String::from_utf8_lossy(&output.stdout);
    let value =
        |f: &tracelab_core::Figure| tracelab_core::format::value(f, tracelab_core::Lang::En);
    assert!(
        summary.contains(&format!(
            "P50 {:<10} P95 {:<10}",
            value(&metrics.ttft_p50),
            value(&metrics.ttft_p95)
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("Failure rate {}", value(&metrics.failure_rate))),
        "{summary}"
    );
    assert!(
        summary.contains(&value(&metrics.output_tokens_per_s)),
        "{summary}"
    );
    assert!(summary.contains("http_error 503 3"), "{summary}");
}

#[test]
fn baseline_rubrics_are_judged_and_only_pass_fail_is_kept() {
    let server = ScriptedServer::start(|key| {
        let answer = if key.contains("metal spoon") {
            "Metal is a good conductor, so heat moves by conduction from the soup into the handle far faster than through wood."
        } else {
            "no"
        };
        Script::new(vec![
            Step::Sleep(Duration::from_millis(5)),
            Step::Token(answer.into()),
            Step::Finish,
            Step::Done,
        ])
    });
    let dir = temp_dir("rubric");
    let out = dir.join("t.jsonl");
    let output = Record::new(&out).server(&server).args(["--quiet"]).run();
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(
        trace.header.conditions.prompt_set.as_deref(),
        Some("baseline")
    );
    assert_eq!(by_id(&trace, "explain-spoon.r1").quality, Quality::Pass);
    assert_eq!(by_id(&trace, "summary-library.r1").quality, Quality::Fail);
    assert_eq!(
        by_id(&trace, "compare-latency-throughput.r1").quality,
        Quality::Fail
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("conductor") && !text.contains("metal spoon"),
        "neither answer nor prompt text is kept"
    );
}

#[test]
fn duration_runs_cycle_the_prompts_until_time_is_up() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(10), Duration::from_millis(2), 2)
    });
    let dir = temp_dir("duration");
    let prompts = prompts(&dir, &["a", "b"]);
    for (name, pacing) in [
        ("closed", &["--concurrency", "2"][..]),
        ("open", &["--rate", "100", "--seed", "9"][..]),
    ] {
        let out = dir.join(format!("{name}.jsonl"));
        let output = Record::new(&out)
            .server(&server)
            .prompts(&prompts)
            .args(["--duration", "0.4"])
            .args(pacing)
            .run();
        assert!(output.status.success());
        let trace = load(&out);
        let c = &trace.header.conditions;
        assert_eq!(
            c.repetitions, None,
            "{name}: a timed run has no repetition count"
        );
        assert!(
            trace.attempts.len() >= 6,
            "{name}: {} attempts in 0.4 s",
            trace.attempts.len()
        );
        assert!(
            trace.attempts.iter().all(|a| a.outcome == Outcome::Success),
            "{name}"
        );
        assert!(
            trace.attempts.iter().any(|a| a.id == "a.r3")
                && trace.attempts.iter().any(|a| a.id == "b.r3"),
            "{name}: cycles"
        );
        let origin = trace.header.window.unwrap().start_ms;
        assert!(
            trace
                .attempts
                .iter()
                .all(|a| a.intended_start_ms.unwrap() < origin + 400.0),
            "{name}: nothing sent after the duration"
        );
        if name == "open" {
            assert_eq!(
                (c.arrival.as_deref(), c.seed, c.burstiness),
                (Some("poisson"), Some(9), Some(1.0))
            );
        }
    }
}
