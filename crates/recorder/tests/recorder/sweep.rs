//! `tracelab sweep` against the scripted server made slower with load (each request's TTFT is
//! 30 ms per request in flight when it arrives, itself included): three concurrency steps of a
//! few requests each, a monotone qualification trend, the early stop at the saturated step and
//! sweep.json linking the steps; `tracelab capacity` recomputing under another threshold; bad
//! loads refused before anything is sent.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::server::{Script, ScriptedServer};
use super::{load, run, temp_dir, tracelab};

/// A server whose TTFT grows with the requests in flight (it tracks each one's scripted end).
fn slower_with_load() -> ScriptedServer {
    let ends: Arc<Mutex<Vec<Instant>>> = Arc::default();
    ScriptedServer::start_with_threads(2, move |_| {
        let now = Instant::now();
        let mut ends = ends.lock().unwrap();
        ends.retain(|e| *e > now);
        let ttft = Duration::from_millis(30 * (1 + ends.len() as u64));
        ends.push(now + ttft + Duration::from_millis(2));
        Script::ok(ttft, Duration::from_millis(1), 3)
    })
}

#[test]
fn a_concurrency_sweep_stops_at_saturation_and_gives_the_capacity_answer() {
    let server = slower_with_load();
    let dir = temp_dir("sweep");
    // A rubric every answer meets ("tok tok tok"), so qualification turns on TTFT alone.
    let p = dir.join("prompts.jsonl");
    let rows: String = ["a", "b", "c"]
        .iter()
        .map(|id| {
            format!(
                "{}\n",
                serde_json::json!({"id": id, "prompt": id, "rubric": {"contains_any": ["tok"]}})
            )
        })
        .collect();
    std::fs::write(&p, rows).unwrap();
    let out_dir = dir.join("sweep");
    let out = run(tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--gpu",
            "off",
            "--no-runtime-probe",
        ])
        .args([
            "--prompts".as_ref(),
            p.as_os_str(),
            "--output-dir".as_ref(),
            out_dir.as_os_str(),
        ])
        .args([
            "--concurrencies",
            "1,2,8,16",
            "--repetitions",
            "8",
            "--warmup",
            "1",
            "--threshold",
            "0.1",
            "--comparison",
            "lt",
            "--target",
            "joint_rate>=0.5",
        ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}\n{stderr}");
    assert!(out.status.success(), "{stderr}");
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let steps = sweep["steps"].as_array().unwrap();
    assert_eq!(
        steps.len(),
        3,
        "stopped after the saturated third step, the fourth never sent: {sweep}"
    );
    assert_eq!(sweep["kind"], "concurrency");
    assert_eq!(sweep["stopped"]["step"], 3);
    assert!(
        sweep["stopped"]["why"]
            .as_str()
            .unwrap()
            .contains("fails the target"),
        "{sweep}"
    );
    assert_eq!(sweep["interrupted"], false);
    assert_eq!(sweep["contract_sha256"].as_str().unwrap().len(), 64);
    // The comparison the stop rule judged with is kept, and the answer says it.
    assert_eq!(sweep["comparison"], "lt");
    assert!(
        sweep["simulated"].is_null(),
        "recorded, not simulated: {sweep}"
    );
    assert!(stdout.contains("TTFT < 0.1 s"), "{stdout}");
    assert!(!stdout.contains("Simulated"), "{stdout}");
    // Each step is a full trace with its own warm-up, at its own concurrency.
    let mut joint = Vec::new();
    for (s, c) in steps.iter().zip([1, 2, 8]) {
        let trace = load(&out_dir.join(s["file"].as_str().unwrap()));
        assert_eq!(trace.header.conditions.concurrency, Some(c));
        assert_eq!(
            trace
                .attempts
                .iter()
                .filter(|a| a.phase == tracelab_core::Phase::Warmup)
                .count(),
            3
        );
        let settings = tracelab_core::Settings {
            ttft_threshold_s: 0.1,
            ..tracelab_core::Settings::from_header(&trace.header)
        };
        joint.push(
            tracelab_core::Metrics::of(&trace.attempts, &settings)
                .joint_rate
                .value
                .unwrap(),
        );
    }
    // Concurrency 8 is below both steps under the knee. Between 1 and 2 (both under it) no
    // order is asserted: on a loaded 2-core machine one of 24 attempts at concurrency 1 can
    // stall past 0.1 s, and that is the machine's noise, not the server's trend.
    assert!(
        joint[2] < joint[0].min(joint[1]),
        "the step past the knee qualifies fewer: {joint:?}"
    );
    assert!(
        stdout.contains("capacity lies between concurrency 2 (passes) and concurrency 8 (fails)"),
        "{stdout}"
    );

    // Recomputed under a threshold the slow step meets: the answer moves.
    let out = run(tracelab()
        .args(["capacity".as_ref(), out_dir.as_os_str()])
        .args(["--threshold", "0.5"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("no step failed, so capacity is at least concurrency 8"),
        "{text}"
    );
    assert!(text.contains("The sweep stopped after step 3"), "{text}");
    assert!(
        text.contains("TTFT < 0.5 s"),
        "capacity starts from the sweep's comparison: {text}"
    );
    let out = run(tracelab()
        .args(["capacity".as_ref(), out_dir.as_os_str()])
        .args(["--lang", "zh", "--target", "ttft_p95<=0.1"]));
    let zh = String::from_utf8_lossy(&out.stdout);
    assert!(zh.contains("容量") && zh.contains("并发 8"), "{zh}");
}

#[test]
fn bad_loads_are_refused_before_anything_is_sent() {
    let server = slower_with_load();
    let dir = temp_dir("sweep-bad");
    // A mistake in the loads is a command-line mistake: status 2 (README), in our words.
    for (flag, loads, says) in [
        ("--concurrencies", "4,2", "loads must increase"),
        ("--concurrencies", "1,1", "is not above"),
        ("--concurrencies", "0,1", "above 0"),
        ("--rates", "2,1", "loads must increase"),
        ("--rates", "1,1", "is not above"),
        ("--rates", "0,1", "is not above 0"),
        ("--rates", "inf", "not a finite number"),
        ("--rates", "NaN,1", "not a finite number"),
        ("--rates", "-1,2", "`-1` is not above 0"),
        ("--rates", "one", "not a number"),
    ] {
        let out = tracelab()
            .args([
                "sweep",
                "--base-url",
                &server.base_url(),
                "--model",
                "m",
                "--gpu",
                "off",
                flag,
                loads,
                "--output-dir",
            ])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {loads}: {err}");
        assert!(err.contains(says), "{flag} {loads}: {err}");
        assert!(
            !err.contains("positive number"),
            "inf is positive; the words must say what is wrong: {err}"
        );
    }
    let out = tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--output-dir",
        ])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("give the loads"));
    assert_eq!(server.request_count(), 0, "nothing was sent");
}

/// Ctrl-C between two steps: SIGINT the moment the sweep announces step 2, while that step is
/// still setting up (asking the server what it is) and before any of its requests is measured.
/// Before the sweep listened for the whole process, this signal was swallowed by the handler
/// step 1 had installed and the sweep ran on to the end. Now: step 1 kept whole, step 2 stopped
/// before it measured anything, step 3 never begun, sweep.json interrupted, exit 130.
#[test]
fn ctrl_c_between_steps_stops_the_sweep_and_keeps_finished_steps() {
    use std::io::{BufRead, BufReader};
    let server = slower_with_load();
    let dir = temp_dir("sweep-sigint");
    let p = super::prompts(&dir, &["a", "b"]);
    let out_dir = dir.join("sweep");
    let mut child = tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--gpu",
            "off",
            "--prompts",
        ])
        .arg(&p)
        .arg("--output-dir")
        .arg(&out_dir)
        .args([
            "--concurrencies",
            "1,2,4",
            "--repetitions",
            "4",
            "--warmup",
            "1",
            "--threshold",
            "10",
            "--target",
            "joint_rate>=0.1",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the sweep ended before step 2:\n{seen}"
        );
        seen.push_str(&line);
        if line.contains("step 2 of 3") {
            // SAFETY: kill(2) on the pid of a child this test spawned and has not reaped.
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
            break;
        }
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    seen.push_str(&rest);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stopped by Ctrl-C:\n{seen}");
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep["interrupted"], true, "{sweep}");
    assert!(
        sweep["stopped"]["why"].as_str().unwrap().contains("Ctrl-C"),
        "{sweep}"
    );
    let steps = sweep["steps"].as_array().unwrap();
    assert!(!steps.is_empty() && steps.len() <= 2, "{sweep}");
    assert_eq!(
        (steps[0]["load"].as_f64(), steps[0]["interrupted"].as_bool()),
        (Some(1.0), Some(false)),
        "step 1 kept whole: {sweep}"
    );
    let first = load(&out_dir.join(steps[0]["file"].as_str().unwrap()));
    assert_eq!(
        first
            .attempts
            .iter()
            .filter(|a| a.phase == tracelab_core::Phase::Measure && a.outcome.is_success())
            .count(),
        8
    );
    if let Some(second) = steps.get(1) {
        assert_eq!(
            second["interrupted"], true,
            "step 2 was stopped, not run to its end: {sweep}"
        );
        let trace = load(&out_dir.join(second["file"].as_str().unwrap()));
        let measured = trace
            .attempts
            .iter()
            .filter(|a| a.phase == tracelab_core::Phase::Measure && a.outcome.is_success())
            .count();
        assert!(
            measured < 8,
            "step 2 stopped before it measured its 8 requests ({measured})"
        );
    }
    assert!(
        !out_dir.join("step-03-concurrency-4.jsonl").exists(),
        "step 3 never begun"
    );
    assert!(seen.contains("Ctrl-C"), "{seen}");
}

#[test]
fn a_rate_sweep_takes_arrival_and_burstiness() {
    // main refused both with "required: --rate": record's flags asked for the one rate a sweep
    // never takes.
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("sweep-arrival");
    let p = super::prompts(&dir, &["a", "b"]);
    for (name, shape) in [
        ("constant", &["--arrival", "constant"][..]),
        (
            "bursty",
            &["--arrival", "poisson", "--burstiness", "0.5"][..],
        ),
    ] {
        let out_dir = dir.join(name);
        let out = run(tracelab()
            .args([
                "sweep",
                "--base-url",
                &server.base_url(),
                "--model",
                "m",
                "--gpu",
                "off",
                "--no-runtime-probe",
                "--keep-going",
            ])
            .args([
                "--prompts".as_ref(),
                p.as_os_str(),
                "--output-dir".as_ref(),
                out_dir.as_os_str(),
            ])
            .args(["--rates", "20,40", "--repetitions", "2", "--warmup", "0"])
            .args(shape));
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let sweep: Value =
            serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
                .unwrap();
        let steps = sweep["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2, "{name}: {sweep}");
        for step in steps {
            let trace = load(&out_dir.join(step["file"].as_str().unwrap()));
            let arrival = format!("{:?}", trace.header.conditions.arrival).to_lowercase();
            let wanted = if name == "constant" {
                "constant"
            } else {
                "poisson"
            };
            assert!(arrival.contains(wanted), "{name}: {arrival}");
        }
    }
}

#[test]
fn a_sweep_whose_prompts_have_no_rubrics_says_why_it_stops() {
    // Without rubrics every success is "quality not evaluated", so the joint rate is 0 % at
    // any load: main stopped "saturated" at step 1 and named no cause.
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(2), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("sweep-no-rubric");
    let p = super::prompts(&dir, &["a", "b"]);
    let out_dir = dir.join("sweep");
    let out = run(tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--gpu",
            "off",
            "--no-runtime-probe",
        ])
        .args([
            "--prompts".as_ref(),
            p.as_os_str(),
            "--output-dir".as_ref(),
            out_dir.as_os_str(),
        ])
        .args([
            "--concurrencies",
            "1,2",
            "--repetitions",
            "20",
            "--warmup",
            "0",
        ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    let why = sweep["stopped"]["why"].as_str().unwrap_or_default();
    assert!(
        why.contains("no rubrics") && why.contains("ttft_p95"),
        "the stop names the cause and what to do: {sweep}"
    );
    assert!(!why.contains("saturated"), "it is not the load: {why}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("no rubrics"), "{said}");
}

/// A session sweep on the real recorder path: `--sessions` with `--rates` as sessions started
/// per second. Against the server slowed by load, three session rates of 6 sessions × 3 turns:
/// every step is a session run at its own rate under one contract (the rate is the load, not
/// the workload), sweep.json's kind is `session_rate`, and the capacity answer judges the
/// sessions (the session as the unit) with `session_share>=X`; `tracelab capacity` recomputes it.
#[test]
fn a_session_sweep_varies_sessions_per_second_and_judges_sessions() {
    let server = slower_with_load();
    server.tokenize_words();
    let dir = temp_dir("sweep-sessions");
    let out_dir = dir.join("sweep");
    let out = run(tracelab()
        .args([
            "sweep",
            "--base-url",
            &server.base_url(),
            "--model",
            "m",
            "--gpu",
            "off",
            "--no-runtime-probe",
            "--keep-going",
            "--warmup",
            "0",
        ])
        .args([
            "--sessions",
            "6",
            "--turns",
            "3",
            "--user-tokens",
            "8",
            "--answer-tokens",
            "3",
            "--think-s",
            "0.02",
            "--seed",
            "5",
        ])
        .args(["--rates", "2,20,200", "--threshold", "0.5"])
        .args(["--target", "session_share>=0.5"])
        .arg("--output-dir")
        .arg(&out_dir));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep["kind"], "session_rate");
    assert!(sweep["contract_sha256"].is_string());
    let steps = sweep["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "{sweep}");
    assert!(
        sweep["stopped"].is_null(),
        "one contract across the rates: {sweep}"
    );
    for (step, rate) in steps.iter().zip([2.0, 20.0, 200.0]) {
        let name = step["file"].as_str().unwrap();
        assert!(name.contains("session_rate"), "{name}");
        let trace = load(&out_dir.join(name));
        assert_eq!(trace.header.conditions.rate_per_s, Some(rate));
        assert_eq!(trace.attempts.len(), 18, "6 sessions × 3 turns");
        assert!(trace.attempts.iter().all(|a| a.session.is_some()));
    }
    assert!(stdout.contains("Step 1 session rate 2 /s"), "{stdout}");
    assert!(
        stdout.contains("sessions 6, qualified sessions"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Target: sessions qualified (every turn qualified) ≥ 50 %"),
        "{stdout}"
    );
    let cap = run(tracelab()
        .args(["capacity", "--json"])
        .arg(&out_dir)
        .args(["--target", "session_share>=0.9"]));
    let json: Value = serde_json::from_slice(&cap.stdout).unwrap();
    assert_eq!(json["kind"], "session_rate");
    assert_eq!(json["target"]["measure"], "session_share");
    assert_eq!(json["steps"][0]["sessions"]["sessions"], 6);

    // Session sweeps vary the session rate only.
    let refused = tracelab()
        .args(["sweep", "--base-url", &server.base_url(), "--model", "m"])
        .args(["--sessions", "2", "--turns", "2", "--concurrencies", "1,2"])
        .arg("--output-dir")
        .arg(dir.join("refused"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("give --rates"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
