//! `tracelab record --workload`: short, sped-up windows of the REAL Azure and Mooncake files
//! (read in place from the fixtures) replayed against the scripted server, which counts one
//! token per word at `/tokenize`. The sends follow the file's times (the intended starts to the
//! microsecond, the server's receipts within the client lag the card reports), each prompt has
//! the file's input length, `max_tokens` its output length, and Mooncake's shared blocks are
//! shared text. A bad file is refused with its file, line and field, and nothing is sent.

use std::time::Duration;

use serde_json::Value;
use tracelab_core::workload::{self, blocks_seen_before, Replay};

use super::server::{Script, ScriptedServer};
use super::{fixtures, load, temp_dir, Record, FIXTURES_MISSING};

/// P50, P99 and max of `v` (nearest rank), for the report.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (at(0.5), at(0.99), *v.last().unwrap())
}

fn replay_against_the_scripted_server(name: &str, replay: Replay) {
    let path = fixtures("workloads").join(name);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{} ({e}): {FIXTURES_MISSING}", path.display()));
    let w = workload::read(name, &bytes).unwrap();
    let planned = w.replay(&replay).unwrap();
    assert!(
        planned.requests.len() >= 20,
        "{name}: a window worth checking ({} requests)",
        planned.requests.len()
    );

    let server = ScriptedServer::start_with_threads(2, |_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 3)
    });
    server.tokenize_words();
    let dir = temp_dir(&format!("workload-{name}"));
    let out = dir.join("replay.jsonl");
    let mut args: Vec<String> = vec![
        "--workload".into(),
        path.display().to_string(),
        "--speedup".into(),
        replay.speedup.to_string(),
    ];
    args.extend(["--from".into(), replay.from_s.to_string()]);
    if let Some(f) = replay.for_s {
        args.extend(["--for".into(), f.to_string()]);
    }
    if let Some(m) = replay.max_idle_s {
        args.extend(["--max-idle".into(), m.to_string()]);
    }
    let output = Record::new(&out)
        .server(&server)
        .args(&args)
        .args(["--warmup", "2"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // The header: the file by name and hash, the replay's parameters, lengths measured.
    let text = std::fs::read_to_string(&out).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let record = &header["workload"];
    assert_eq!(record["file"], name);
    assert_eq!(record["sha256"], w.sha256.as_str());
    assert_eq!(record["requests"], planned.requests.len());
    assert_eq!(record["speedup"], replay.speedup);
    assert_eq!(record["input_lengths"]["method"], "tokenizer");
    assert_eq!(record["input_lengths"]["words_per_token"], 1.0);
    assert!(
        !record
            .to_string()
            .contains(&*fixtures("workloads").display().to_string()),
        "never a local path"
    );
    assert_eq!(header["conditions"]["arrival"], "workload");

    // Intended starts are the file's times, to the microsecond; actual starts lag by what the
    // card reports as the client lag.
    let trace = load(&out);
    let mut measured: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.phase == tracelab_core::Phase::Measure)
        .collect();
    measured.sort_by(|a, b| {
        a.intended_start_ms
            .unwrap()
            .total_cmp(&b.intended_start_ms.unwrap())
    });
    assert_eq!(measured.len(), planned.requests.len());
    assert_eq!(
        trace.attempts.len() - measured.len(),
        2,
        "two warm-up requests"
    );
    let origin = measured[0].intended_start_ms.unwrap();
    for (a, p) in measured.iter().zip(&planned.requests) {
        assert!(
            (a.intended_start_ms.unwrap() - origin - p.at_ms).abs() <= 0.0015,
            "{}: intended {} vs file {}",
            a.id,
            a.intended_start_ms.unwrap() - origin,
            p.at_ms
        );
        assert!(a.outcome.is_success(), "{}: {:?}", a.id, a.detail);
    }
    let lag = tracelab_core::lag::client_lag(&trace)
        .expect("a replay is an open loop: the card reports its client lag");
    let start_err: Vec<f64> = measured
        .iter()
        .zip(&planned.requests)
        .map(|(a, p)| a.start_ms.unwrap() - origin - p.at_ms)
        .collect();
    assert!(start_err
        .iter()
        .all(|e| *e >= -0.0015 && *e <= lag.max_ms + 0.0015));
    // The server's own receipts, on its clock, against the file's gaps (first receipt = 0).
    let completions = server.completions();
    let received: Vec<_> = completions
        .iter()
        .filter(|r| r.key.split(' ').count() > 0)
        .collect();
    let measured_receipts: Vec<_> = received[received.len() - planned.requests.len()..].to_vec();
    let first = measured_receipts[0].received;
    let server_err: Vec<f64> = measured_receipts
        .iter()
        .zip(&planned.requests)
        .map(|(r, p)| (r.received.duration_since(first).as_secs_f64() * 1000.0 - p.at_ms).abs())
        .collect();
    let (s50, s99, smax) = spread(start_err);
    let (r50, r99, rmax) = spread(server_err);
    eprintln!(
        "{name}: {} requests over {:.1} s; client start error P50 {s50:.3} P99 {s99:.3} max {smax:.3} ms (card: lag P95 {:.3}, max {:.3} ms); \
         server receipt error P50 {r50:.3} P99 {r99:.3} max {rmax:.3} ms",
        planned.requests.len(),
        planned.requests.last().unwrap().at_ms / 1000.0,
        lag.p95_ms,
        lag.max_ms
    );
    // Loopback adds the connect and the body's transfer, and on a shared CPU the server's own
    // runtime can be late too: a loose bound, the client-side check above is the exact one.
    assert!(
        rmax <= lag.max_ms + 250.0,
        "the server saw the sends within the card's client lag and 250 ms of loopback: {rmax} ms"
    );

    // Lengths as asked: one word per token at this server, so the prompt's words are the file's
    // input tokens; max_tokens is its output tokens (compared as sorted lists: receipt order
    // may differ from send order by a few µs).
    let mut words: Vec<u32> = measured_receipts
        .iter()
        .map(|r| r.key.split(' ').count() as u32)
        .collect();
    let mut asked_in: Vec<u32> = planned.requests.iter().map(|p| p.input_tokens).collect();
    words.sort_unstable();
    asked_in.sort_unstable();
    assert_eq!(words, asked_in);
    let mut max_tokens: Vec<u64> = measured_receipts
        .iter()
        .map(|r| r.max_tokens.unwrap())
        .collect();
    let mut asked_out: Vec<u64> = planned
        .requests
        .iter()
        .map(|p| u64::from(p.output_tokens))
        .collect();
    max_tokens.sort_unstable();
    asked_out.sort_unstable();
    assert_eq!(max_tokens, asked_out);
    // Each attempt keeps the file's lengths beside what the server served.
    for line in text.lines().filter(|l| l.contains("\"phase\":\"measure\"")) {
        let v: Value = serde_json::from_str(line).unwrap();
        let p = &planned.requests[planned
            .requests
            .iter()
            .position(|p| format!("req-{}", p.index) == v["id"])
            .unwrap()];
        assert_eq!(v["intended_input_tokens"], p.input_tokens);
        assert_eq!(v["intended_output_tokens"], p.output_tokens);
        assert_eq!(v["prompt_index"], p.index);
    }

    // Prefix reuse is real: a repeat is a request with a block sent before, and requests that
    // share their first block share its text.
    let seen = blocks_seen_before(&planned.requests);
    let repeats = measured
        .iter()
        .filter(|a| a.prompt.as_ref().is_some_and(|p| p.repeat))
        .count();
    assert_eq!(repeats, seen.iter().filter(|&&b| b > 0).count());
    if !planned.requests[0].blocks.is_empty() {
        assert!(repeats > 0, "{name}: the window shares blocks");
        let first_block = |r: &&&super::server::RequestLog| {
            r.key.split(' ').take(512).collect::<Vec<_>>().join(" ")
        };
        let distinct_texts: std::collections::HashSet<String> =
            measured_receipts.iter().map(|r| first_block(&r)).collect();
        let distinct_ids: std::collections::HashSet<u64> =
            planned.requests.iter().map(|p| p.blocks[0]).collect();
        assert_eq!(distinct_texts.len(), distinct_ids.len());
    }
}

#[test]
fn azure_conversation_window_replayed_at_ten_times() {
    replay_against_the_scripted_server(
        "AzureLLMInferenceTrace_conv.csv",
        Replay {
            speedup: 10.0,
            from_s: 60.0,
            for_s: Some(20.0),
            max_idle_s: Some(0.5),
        },
    );
}

#[test]
fn mooncake_conversation_window_replayed_at_five_times() {
    replay_against_the_scripted_server(
        "mooncake_conversation_trace.jsonl",
        Replay {
            speedup: 5.0,
            from_s: 0.0,
            for_s: Some(10.0),
            max_idle_s: None,
        },
    );
}

#[test]
fn a_bad_workload_names_file_line_and_field_and_sends_nothing() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("workload-bad");
    for (name, text, says) in [
        ("decreasing.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.68,10,5\r\n2023-11-16 18:15:40.00,10,5", "decreasing.csv, line 3, field `TIMESTAMP`"),
        ("zero.jsonl", "{\"timestamp\": 0, \"input_length\": 0, \"output_length\": 3}\n", "zero.jsonl, line 1, field `input_length`"),
        ("negative.jsonl", "{\"timestamp\": -5, \"input_length\": 4, \"output_length\": 3}\n", "negative.jsonl, line 1, field `timestamp`"),
        ("unknown.csv", "time,prompt,answer\n1,2,3\n", "unknown.csv, line 1, field `layout`"),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let output = Record::new(&dir.join("out.jsonl")).server(&server).args([std::ffi::OsStr::new("--workload"), file.as_os_str()]).command().output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(says) && stderr.contains("nothing was sent"), "{name}: {stderr}");
        assert!(!stderr.contains(&*dir.display().to_string()), "the error names the file, not its directory: {stderr}");
    }
    assert_eq!(server.request_count(), 0, "nothing was sent");
    assert!(!dir.join("out.jsonl").exists());
}

/// `tracelab simulate --workload`: the same real windows through the simulator. Every arrival is
/// the file's (scaled) time to the microsecond, the header names the file by name and hash and
/// says it was simulated, each attempt keeps the file's lengths, and the same seed writes the
/// same bytes.
#[test]
fn simulated_replay_of_the_real_files_arrives_at_their_times() {
    for (name, replay) in [
        (
            "AzureLLMInferenceTrace_code.csv",
            Replay {
                speedup: 10.0,
                from_s: 30.0,
                for_s: Some(120.0),
                max_idle_s: Some(0.5),
            },
        ),
        (
            "mooncake_synthetic_trace.jsonl",
            Replay {
                speedup: 4.0,
                from_s: 0.0,
                for_s: Some(30.0),
                max_idle_s: None,
            },
        ),
    ] {
        let path = fixtures("workloads").join(name);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{} ({e}): {FIXTURES_MISSING}", path.display()));
        let w = workload::read(name, &bytes).unwrap();
        let planned = w.replay(&replay).unwrap();
        assert!(
            planned.requests.len() >= 20,
            "{name}: a window worth checking ({} requests)",
            planned.requests.len()
        );
        let dir = temp_dir(&format!("simulate-workload-{name}"));
        let simulate = |out: &std::path::Path, seed: &str| {
            let mut cmd = super::tracelab();
            cmd.args([
                "simulate",
                "--slots",
                "2",
                "--service",
                "exponential:0.4",
                "--seed",
                seed,
                "--workload",
            ])
            .arg(&path);
            cmd.args([
                "--speedup",
                &replay.speedup.to_string(),
                "--from",
                &replay.from_s.to_string(),
                "--for",
                &replay.for_s.unwrap().to_string(),
            ]);
            if let Some(m) = replay.max_idle_s {
                cmd.args(["--max-idle", &m.to_string()]);
            }
            let output = cmd.arg("--output").arg(out).output().unwrap();
            assert!(
                output.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            std::fs::read_to_string(out).unwrap()
        };
        let text = simulate(&dir.join("a.jsonl"), "5");
        assert_eq!(
            text,
            simulate(&dir.join("b.jsonl"), "5"),
            "{name}: the same seed writes the same trace"
        );
        assert_ne!(
            text,
            simulate(&dir.join("c.jsonl"), "6"),
            "{name}: the seed draws the service times"
        );

        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let record = &header["workload"];
        assert_eq!(
            (record["file"].as_str(), record["sha256"].as_str()),
            (Some(name), Some(w.sha256.as_str()))
        );
        assert_eq!(record["simulated"], true);
        assert_eq!(record["requests"], planned.requests.len());
        assert!(
            !text.contains(&*fixtures("workloads").display().to_string()),
            "never a local path"
        );
        assert_eq!(header["simulation"]["load"]["kind"], "workload");
        assert_eq!(header["simulation"]["requests"], planned.requests.len());
        assert_eq!(header["conditions"]["arrival"], "workload");
        assert_eq!(header["capabilities"]["inference_benchmark"], false);

        let trace = load(&dir.join("a.jsonl"));
        assert_eq!(trace.attempts.len(), planned.requests.len());
        let worst = trace
            .attempts
            .iter()
            .zip(&planned.requests)
            .map(|(a, p)| (a.intended_start_ms.unwrap() - p.at_ms).abs())
            .fold(0.0, f64::max);
        eprintln!(
            "{name}: simulated {} arrivals over {:.3} s; worst |intended start − file time| {worst:.6} ms",
            planned.requests.len(),
            planned.requests.last().unwrap().at_ms / 1000.0
        );
        assert!(
            worst <= 0.0005,
            "{name}: to the microsecond, worst {worst} ms"
        );
        for (line, p) in text
            .lines()
            .filter(|l| l.contains("\"kind\":\"attempt\""))
            .zip(&planned.requests)
        {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(
                (
                    v["intended_input_tokens"].as_u64(),
                    v["intended_output_tokens"].as_u64()
                ),
                (Some(p.input_tokens.into()), Some(p.output_tokens.into()))
            );
        }
    }

    // A bad file names its file, line and field, and nothing is written; --requests is the window's.
    let dir = temp_dir("simulate-workload-bad");
    let bad = dir.join("decreasing.csv");
    std::fs::write(&bad, "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.68,10,5\r\n2023-11-16 18:15:40.00,10,5").unwrap();
    let out = dir.join("out.jsonl");
    let run = |extra: &[&str]| {
        let mut cmd = super::tracelab();
        cmd.args([
            "simulate",
            "--slots",
            "1",
            "--service",
            "fixed:1",
            "--seed",
            "1",
            "--workload",
        ])
        .arg(&bad)
        .args(extra)
        .arg("--output")
        .arg(&out);
        cmd.output().unwrap()
    };
    let output = run(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("decreasing.csv, line 3, field `TIMESTAMP`")
            && stderr.contains("nothing was simulated"),
        "{stderr}"
    );
    assert!(!stderr.contains(&*dir.display().to_string()), "{stderr}");
    assert!(!out.exists());
    let output = run(&["--requests", "5"]);
    assert!(
        !output.status.success() && String::from_utf8_lossy(&output.stderr).contains("--requests")
    );
    assert!(!out.exists());
}

/// `tracelab simulate --workload --service-per-output-token`: the service follows the REAL
/// file's output lengths. On the Azure conversation window (more slots than ever in flight, so
/// nothing queues) every attempt's time in system is exactly 0.05 s + 0.01 s × the output tokens
/// the file gives it (to the microsecond), its TTFT the base's share; without the flag the
/// service is 0.05 s for all (so the lengths made the difference). The header says what was
/// used (`simulation.tokens`, `workload.service`), and so does the card. A per-token cost on a
/// trace's measured service, or without a workload, is refused.
#[test]
fn simulated_service_follows_the_files_output_tokens() {
    let name = "AzureLLMInferenceTrace_conv.csv";
    let path = fixtures("workloads").join(name);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{} ({e}): {FIXTURES_MISSING}", path.display()));
    let w = workload::read(name, &bytes).unwrap();
    let replay = Replay {
        speedup: 10.0,
        from_s: 0.0,
        for_s: Some(120.0),
        max_idle_s: None,
    };
    let planned = w.replay(&replay).unwrap();
    let dir = temp_dir("simulate-per-token");
    let simulate = |out: &std::path::Path, extra: &[&str]| {
        let mut cmd = super::tracelab();
        cmd.args([
            "simulate",
            "--slots",
            "10000",
            "--service",
            "fixed:0.05",
            "--seed",
            "3",
            "--speedup",
            "10",
            "--for",
            "120",
            "--workload",
        ])
        .arg(&path);
        let output = cmd.args(extra).arg("--output").arg(out).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read_to_string(out).unwrap()
    };
    let text = simulate(
        &dir.join("tokens.jsonl"),
        &["--service-per-output-token", "0.01"],
    );
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        header["simulation"]["tokens"],
        serde_json::json!({"per_input_token_s": 0.0, "per_output_token_s": 0.01})
    );
    let said = header["workload"]["service"].as_str().unwrap();
    assert!(said.contains("+ 0.01 s × its output tokens"), "{said}");
    let trace = load(&dir.join("tokens.jsonl"));
    assert_eq!(trace.attempts.len(), planned.requests.len());
    let worst = trace
        .attempts
        .iter()
        .zip(&planned.requests)
        .map(|(a, p)| {
            (a.e2e_ms.unwrap() - (50.0 + 10.0 * p.output_tokens as f64))
                .abs()
                .max((a.ttft_ms.unwrap() - 10.0).abs())
        })
        .fold(0.0, f64::max);
    let (lo, hi) = (
        planned
            .requests
            .iter()
            .map(|p| p.output_tokens)
            .min()
            .unwrap(),
        planned
            .requests
            .iter()
            .map(|p| p.output_tokens)
            .max()
            .unwrap(),
    );
    eprintln!("{name}: {} simulated requests, output tokens {lo}–{hi}; worst |e2e − (0.05 s + 0.01 s × output)| {worst:.6} ms", planned.requests.len());
    assert!(worst <= 0.001, "{worst} ms");
    assert!(hi > lo, "the window's lengths differ");
    let card = String::from_utf8(
        super::tracelab()
            .arg("report")
            .arg(dir.join("tokens.jsonl"))
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        card.contains("fixed 0.05 s + 0.01 s per output token"),
        "{card}"
    );

    // Without it: every request 0.05 s, whatever its length.
    simulate(&dir.join("base.jsonl"), &[]);
    let base = load(&dir.join("base.jsonl"));
    assert!(base
        .attempts
        .iter()
        .all(|a| (a.e2e_ms.unwrap() - 50.0).abs() < 0.001));
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(dir.join("base.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(header["workload"]["service"]
        .as_str()
        .unwrap()
        .contains("do not drive them"));

    // Refused: on a trace's measured service; without a workload.
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../public/samples/ten-requests.jsonl");
    let out = dir.join("refused.jsonl");
    let output = super::tracelab()
        .args([
            "simulate",
            "--slots",
            "2",
            "--seed",
            "1",
            "--service-per-output-token",
            "0.01",
            "--workload",
        ])
        .arg(&path)
        .arg("--service")
        .arg(format!("trace:{}", sample.display()))
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("already hold their own lengths"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = super::tracelab()
        .args([
            "simulate",
            "--slots",
            "2",
            "--seed",
            "1",
            "--service",
            "fixed:1",
            "--rate",
            "1",
            "--requests",
            "3",
            "--service-per-output-token",
            "0.01",
            "--output",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        !output.status.success() && String::from_utf8_lossy(&output.stderr).contains("--workload"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!out.exists());
}

/// `tracelab simulate-sweep --workload FILE --speedups` on the REAL Mooncake file with a
/// per-token service: one step per speed-up, each step's header naming the file by hash at its
/// own speed-up, the lengths kept on each attempt, sweep.json marked simulated with the
/// workload's hash; `tracelab capacity` reads the folder.
#[test]
fn a_simulated_workload_sweep_at_several_speedups() {
    let name = "mooncake_conversation_trace.jsonl";
    let path = fixtures("workloads").join(name);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{} ({e}): {FIXTURES_MISSING}", path.display()));
    let w = workload::read(name, &bytes).unwrap();
    let dir = temp_dir("simulate-workload-sweep");
    let out_dir = dir.join("sweep");
    let output = super::tracelab()
        .args([
            "simulate-sweep",
            "--slots",
            "8",
            "--service",
            "exponential:0.2",
            "--service-per-output-token",
            "0.002",
            "--seed",
            "9",
            "--for",
            "300",
        ])
        .args([
            "--speedups",
            "1,4,16",
            "--threshold",
            "2",
            "--target",
            "joint_rate>=0.8",
            "--keep-going",
            "--workload",
        ])
        .arg(&path)
        .arg("--output-dir")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{stdout}");
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep["kind"], "speedup");
    assert_eq!(
        sweep["simulated"]["load"]["sha256"].as_str(),
        Some(w.sha256.as_str())
    );
    assert_eq!(sweep["simulated"]["tokens"]["per_output_token_s"], 0.002);
    let steps = sweep["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "--keep-going: {sweep}");
    for (s, speedup) in steps.iter().zip([1.0, 4.0, 16.0]) {
        let text = std::fs::read_to_string(out_dir.join(s["file"].as_str().unwrap())).unwrap();
        let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(header["workload"]["speedup"].as_f64(), Some(speedup));
        assert_eq!(
            header["workload"]["sha256"].as_str(),
            Some(w.sha256.as_str())
        );
        assert_eq!(header["simulation"]["tokens"]["per_output_token_s"], 0.002);
        let planned = w
            .replay(&Replay {
                speedup,
                from_s: 0.0,
                for_s: Some(300.0),
                max_idle_s: None,
            })
            .unwrap();
        assert_eq!(header["workload"]["requests"], planned.requests.len());
        let first: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(
            first["intended_output_tokens"].as_u64(),
            Some(planned.requests[0].output_tokens.into())
        );
    }
    assert!(stdout.starts_with("Simulated, not measured"), "{stdout}");
    assert!(stdout.contains("speed-up 16×"), "{stdout}");
    let cap = super::tracelab()
        .arg("capacity")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(cap.status.success() && String::from_utf8_lossy(&cap.stdout).contains("Capacity:"));
}

/// A CONSTRUCTED file in vLLM's multi-turn benchmark input format (benchmarks/multi_turn:
/// `[{"id", "messages": [{"role", "content"}]}]`, the shape its convert_sharegpt_to_openai.py
/// writes); the text is made up here, no public file of conversations is pinned.
const CONVERSATIONS: &str = r#"[
  {"id": "conv-a", "messages": [
    {"role": "user", "content": "alpha one two"},
    {"role": "assistant", "content": "five words in this answer"},
    {"role": "user", "content": "alpha again"},
    {"role": "assistant", "content": "two words"},
    {"role": "user", "content": "alpha last"}
  ]},
  {"id": "conv-b", "messages": [
    {"role": "user", "content": "beta only"},
    {"role": "assistant", "content": "three word answer"}
  ]}
]"#;

#[test]
fn vllm_conversations_are_sent_as_sessions_with_the_files_answer_lengths() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 3)
    });
    server.tokenize_words();
    let dir = temp_dir("conversations-vllm");
    let file = dir.join("conversations.json");
    std::fs::write(&file, CONVERSATIONS).unwrap();
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .args(["--session-rate", "20", "--think-s", "0.05", "--seed", "3"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The server's log: one request per user message, keyed by the conversation's first
    // message, in turn order, each asking the file's answer length (one token a word here).
    let sent = server.completions();
    let asked = |first: &str| -> Vec<Option<u64>> {
        sent.iter()
            .filter(|r| r.key == first)
            .map(|r| r.max_tokens)
            .collect()
    };
    assert_eq!(sent.len(), 4, "3 + 1 user messages");
    assert_eq!(asked("alpha one two"), [Some(5), Some(2), Some(64)]);
    assert_eq!(asked("beta only"), [Some(3)]);
    let trace = load(&out);
    let mut turns: Vec<(String, u32, bool)> = trace
        .attempts
        .iter()
        .map(|a| {
            let s = a.session.as_ref().expect("a turn");
            (s.session_id.clone(), s.turn, a.outcome.is_success())
        })
        .collect();
    turns.sort();
    assert_eq!(
        turns,
        [
            ("conv-a".into(), 1, true),
            ("conv-a".into(), 2, true),
            ("conv-a".into(), 3, true),
            ("conv-b".into(), 1, true),
        ]
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let sessions = &header["sessions"];
    assert_eq!(sessions["generator"], "vllm-multi-turn");
    assert_eq!(sessions["file"], "conversations.json", "by name, not path");
    assert_eq!(
        header["conditions"]["prompt_set"],
        "conversations:conversations.json"
    );
    assert_eq!(
        header["conditions"]["prompt_set_sha256"],
        sessions["sha256"].clone()
    );
    // The file's messages are sent, never written: no user message and no file answer in the trace.
    for phrase in ["alpha one two", "five words in this answer", "beta only"] {
        assert!(!text.contains(phrase), "{phrase} is in the trace");
    }
    assert_eq!(text.matches("\"answer_sha256\"").count(), 4);
}

#[test]
fn a_bad_conversation_file_names_file_line_and_field_and_sends_nothing() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("conversations-bad");
    for (name, text, says) in [
        (
            "roles.json",
            "[\n  {\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]},\n  {\"id\": \"b\", \"messages\": [{\"role\": \"assistant\", \"content\": \"x\"}]}\n]",
            "roles.json, line 3, field `messages[0].role` (conversation 2)",
        ),
        (
            "config.json",
            "{\"filetype\": \"generate_conversations\", \"num_conversations\": 24}",
            "config.json, line 1, field `filetype`",
        ),
        (
            "broken.json",
            "[\n{\"id\": \"a\",\n\"messages\": [}\n]",
            "broken.json, line 3, column",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let output = Record::new(&dir.join("out.jsonl"))
            .server(&server)
            .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
            .args(["--session-rate", "1"])
            .command()
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("nothing was sent"),
            "{name}: {stderr}"
        );
        assert!(
            !stderr.contains(&*dir.display().to_string()),
            "the error names the file, not its directory: {stderr}"
        );
    }
    assert_eq!(server.request_count(), 0, "nothing was sent");
    assert!(!dir.join("out.jsonl").exists());
}

#[test]
fn a_failed_turn_ends_its_session_and_the_session_does_not_qualify() {
    // conv-b's first turn gets a 500: there is no reply to resend, so its later turn is never
    // sent; conv-a goes on. The report judges conv-b unserved by its one failed turn.
    let server = ScriptedServer::start(|first| {
        if first == "beta only" {
            Script::status(500)
        } else {
            Script::ok(Duration::from_millis(2), Duration::from_millis(1), 3)
        }
    });
    server.tokenize_words();
    let dir = temp_dir("conversations-failed-turn");
    let file = dir.join("conversations.json");
    let text = CONVERSATIONS.replace(
        r#"{"role": "assistant", "content": "three word answer"}"#,
        r#"{"role": "assistant", "content": "three word answer"},
    {"role": "user", "content": "beta again"}"#,
    );
    std::fs::write(&file, text).unwrap();
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .args(["--session-rate", "20"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sent = server.completions();
    assert_eq!(sent.iter().filter(|r| r.key == "beta only").count(), 1);
    assert_eq!(sent.iter().filter(|r| r.key == "alpha one two").count(), 3);
    let trace = load(&out);
    let b: Vec<_> = trace
        .attempts
        .iter()
        .filter(|a| a.session.as_ref().unwrap().session_id == "conv-b")
        .collect();
    assert_eq!(b.len(), 1, "turn 2 of conv-b was never sent");
    assert!(!b[0].outcome.is_success());
    let report = super::run(super::tracelab().args(["report", "--json"]).arg(&out));
    let card: Value = serde_json::from_slice(&report.stdout).unwrap();
    let s = &card["sessions"];
    assert_eq!(s["sessions"], 2.0, "{s}");
    assert_eq!(s["session_qualified_share"], 0.5, "{s}");
}

/// A CONSTRUCTED file in AIPerf's session-trace format (its `mooncake_trace` JSON Lines, fields
/// as `MooncakeTrace` in aiperf's src/aiperf/dataset/loader/models.py reads them); the text and
/// numbers are made up here. Session "sa" mixes `text_input` and `input_length` turns (deltas:
/// the server's replies are carried), "sc" sends whole `messages` arrays (sent as they are),
/// "sb" is one synthetic turn.
const AIPERF_TRACE: &str = r#"{"session_id": "sa", "text_input": "gamma first", "output_length": 3}
{"session_id": "sb", "input_length": 4, "output_length": 2}
{"session_id": "sa", "delay": 80, "text_input": "gamma second", "output_length": 4}
{"session_id": "sc", "messages": [{"role": "system", "content": "delta system"}, {"role": "user", "content": "delta one"}], "output_length": 2}

{"session_id": "sa", "delay": 40, "input_length": 5}
{"session_id": "sc", "delay": 10, "messages": [{"role": "system", "content": "delta system"}, {"role": "user", "content": "delta one"}, {"role": "assistant", "content": "zeta file reply"}, {"role": "user", "content": "delta two"}]}
"#;

/// The chat messages of one request as (role, content) pairs.
fn roles_and_contents(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn aiperf_session_traces_grow_their_history_on_the_wire() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 3)
    });
    server.tokenize_words();
    let dir = temp_dir("conversations-aiperf");
    let file = dir.join("aiperf_sessions.jsonl");
    std::fs::write(&file, AIPERF_TRACE).unwrap();
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .args(["--session-rate", "20", "--seed", "3"])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sent = server.completions();
    assert_eq!(sent.len(), 6, "3 + 1 + 2 turns");
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let turn_line = |session: &str, turn: u64| -> &Value {
        lines
            .iter()
            .find(|l| l["session_id"] == session && l["turn"] == turn)
            .unwrap_or_else(|| panic!("{session} turn {turn} in {text}"))
    };

    // Session sa on the wire: each turn resends the one before, the server's own reply
    // (matched by the trace's hash) in between, then the new user message.
    let sa: Vec<_> = sent.iter().filter(|r| r.key == "gamma first").collect();
    assert_eq!(sa.len(), 3);
    let m: Vec<Vec<(String, String)>> =
        sa.iter().map(|r| roles_and_contents(&r.messages)).collect();
    assert_eq!(m[0], [("user".to_string(), "gamma first".to_string())]);
    assert_eq!(m[1].len(), 3);
    assert_eq!(m[2].len(), 5);
    assert_eq!(m[1][..1], m[0][..], "turn 2 starts with turn 1");
    assert_eq!(m[2][..3], m[1][..], "turn 3 starts with turn 2");
    assert_eq!(m[1][2], ("user".into(), "gamma second".into()));
    for (k, turn) in [(1usize, 1u64), (3, 2)] {
        assert_eq!(m[2][k].0, "assistant");
        assert_eq!(
            tracelab_recorder::conversation::answer_sha256(&m[2][k].1),
            turn_line("sa", turn)["answer_sha256"].as_str().unwrap(),
            "the reply resent is the server's own reply to turn {turn}"
        );
    }
    // input_length 5: five words at one token a word (the server's /tokenize counts words).
    assert_eq!(m[2][4].1.split_whitespace().count(), 5);
    assert_eq!(
        sa.iter().map(|r| r.max_tokens).collect::<Vec<_>>(),
        [Some(3), Some(4), Some(64)],
        "output_length, else the default"
    );
    // delay: ms after the previous reply ended.
    let trace = load(&out);
    let attempt = |turn: u32| {
        trace
            .attempts
            .iter()
            .find(|a| {
                a.session
                    .as_ref()
                    .is_some_and(|s| s.session_id == "sa" && s.turn == turn)
            })
            .unwrap()
    };
    for (turn, delay) in [(2u32, 80.0), (3, 40.0)] {
        let prev = attempt(turn - 1);
        let ended = prev.start_ms.unwrap() + prev.e2e_ms.unwrap();
        let intended = attempt(turn).intended_start_ms.unwrap();
        assert!(
            (intended - ended - delay).abs() < 0.01,
            "turn {turn}: intended {intended}, reply ended {ended}, delay {delay}"
        );
    }
    // The history carried is the server's count of the previous prompt and reply.
    let t1 = turn_line("sa", 1);
    assert_eq!(
        turn_line("sa", 2)["history_tokens"].as_u64(),
        Some(t1["input_tokens"].as_u64().unwrap() + t1["output_tokens"].as_u64().unwrap())
    );

    // Session sc: the file's whole message arrays, sent as they are; no reply carried.
    let sc: Vec<_> = sent.iter().filter(|r| r.key == "delta system").collect();
    assert_eq!(sc.len(), 2);
    assert_eq!(
        roles_and_contents(&sc[1].messages),
        [
            ("system".to_string(), "delta system".to_string()),
            ("user".into(), "delta one".into()),
            ("assistant".into(), "zeta file reply".into()),
            ("user".into(), "delta two".into()),
        ]
    );
    assert_eq!(sc[0].max_tokens, Some(2));
    assert!(
        turn_line("sc", 2)["history_tokens"].is_null(),
        "the file's history, not counted"
    );

    // Session sb: one synthetic turn of four words.
    let sb: Vec<_> = sent
        .iter()
        .filter(|r| r.key != "gamma first" && r.key != "delta system")
        .collect();
    assert_eq!(sb.len(), 1);
    assert_eq!(sb[0].key.split_whitespace().count(), 4);
    assert_eq!(sb[0].max_tokens, Some(2));

    let header = &lines[0];
    assert_eq!(header["sessions"]["generator"], "aiperf-session-trace");
    assert_eq!(header["sessions"]["file"], "aiperf_sessions.jsonl");
    assert_eq!(header["conditions"]["arrival"], "poisson");
    for phrase in ["gamma first", "delta one", "zeta file reply"] {
        assert!(!text.contains(phrase), "{phrase} is in the trace");
    }
}

#[test]
fn aiperf_timestamps_schedule_the_sessions_without_a_rate() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("conversations-aiperf-timestamps");
    let file = dir.join("timed.jsonl");
    // CONSTRUCTED: two sessions 300 ms apart on the file's clock; sb's second turn is stamped
    // 500 ms after its first, so it waits for that offset rather than going on the reply.
    std::fs::write(
        &file,
        "{\"session_id\": \"sb\", \"timestamp\": 1300, \"text_input\": \"later one\"}\n\
         {\"session_id\": \"sa\", \"timestamp\": 1000, \"text_input\": \"early one\"}\n\
         {\"session_id\": \"sb\", \"timestamp\": 1800, \"text_input\": \"later two\"}\n",
    )
    .unwrap();
    let out = dir.join("t.jsonl");
    let output = Record::new(&out)
        .server(&server)
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .run();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    let at = |id: &str, turn: u32| {
        trace
            .attempts
            .iter()
            .find(|a| {
                a.session
                    .as_ref()
                    .is_some_and(|s| s.session_id == id && s.turn == turn)
            })
            .and_then(|a| a.intended_start_ms)
            .unwrap()
    };
    assert!((at("sb", 1) - at("sa", 1) - 300.0).abs() < 0.01);
    assert!((at("sb", 2) - at("sb", 1) - 500.0).abs() < 0.01);
    assert_eq!(trace.header.conditions.arrival.as_deref(), Some("workload"));
    assert_eq!(trace.header.conditions.rate_per_s, None);

    // Without timestamps on every first turn, a rate is needed, and nothing is sent.
    std::fs::write(&file, "{\"session_id\": \"sa\", \"text_input\": \"x\"}\n").unwrap();
    let output = Record::new(&dir.join("none.jsonl"))
        .server(&server)
        .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
        .command()
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("timed.jsonl: not every session's first turn has a `timestamp`")
            && stderr.contains("--session-rate"),
        "{stderr}"
    );
}

#[test]
fn a_bad_aiperf_trace_names_file_line_and_field_and_sends_nothing() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(1), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("conversations-aiperf-bad");
    for (name, text, says) in [
        (
            "modes.jsonl",
            "{\"session_id\": \"a\", \"text_input\": \"x\"}\n{\"session_id\": \"a\", \"text_input\": \"y\", \"input_length\": 3}\n",
            "modes.jsonl, line 2, field `text_input`",
        ),
        (
            "payload.jsonl",
            "{\"session_id\": \"a\", \"payload\": {\"prompt\": \"x\"}}\n",
            "payload.jsonl, line 1, field `payload`: not supported",
        ),
        (
            "delay.jsonl",
            "{\"session_id\": \"a\", \"text_input\": \"x\"}\n\n{\"session_id\": \"a\", \"text_input\": \"y\", \"delay\": \"soon\"}\n",
            "delay.jsonl, line 3, field `delay`",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        let output = Record::new(&dir.join("out.jsonl"))
            .server(&server)
            .args([std::ffi::OsStr::new("--conversations"), file.as_os_str()])
            .args(["--session-rate", "1"])
            .command()
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{name}: {stderr}");
        assert!(
            stderr.contains(says) && stderr.contains("nothing was sent"),
            "{name}: {stderr}"
        );
    }
    assert_eq!(server.request_count(), 0, "nothing was sent");
    assert!(!dir.join("out.jsonl").exists());
}
