//! `tracelab simulate` run as a process with the flags; its output read back by
//! `report` and `export`, and every bad flag refused before anything is written.

use std::path::PathBuf;
use std::process::Output;

fn repo(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

fn tracelab(args: &[&str]) -> Output {
    tracelab_testkit::run(env!("CARGO_BIN_EXE_tracelab"), args)
}

fn temp(name: &str) -> PathBuf {
    tracelab_testkit::scratch("simulate", name)
}

fn ok(args: &[&str]) -> Output {
    let out = tracelab(args);
    assert!(
        out.status.success(),
        "tracelab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn open_and_closed_runs_load_in_report_and_export() {
    let dir = temp("loads");
    let open = dir.join("open.jsonl").display().to_string();
    let closed = dir.join("closed.jsonl").display().to_string();
    let common = [
        "--slots",
        "8",
        "--service",
        "exponential:1",
        "--requests",
        "1000",
        "--seed",
        "11",
        "--stall",
        "60:20",
    ];
    let mut args = vec![
        "simulate",
        "--rate",
        "3.2",
        "--arrival",
        "poisson",
        "--burstiness",
        "1",
        "--output",
        &open,
    ];
    args.extend_from_slice(&common);
    ok(&args);
    let mut args = vec![
        "simulate", "--closed", "16", "--think", "4", "--output", &closed,
    ];
    args.extend_from_slice(&common);
    ok(&args);

    let card = String::from_utf8(ok(&["report", &open]).stdout).unwrap();
    assert!(card.contains("Attempts: 1,000 counted"), "{card}");
    assert!(
        card.contains("Simulated, not measured: 8 slots · service exponential, mean 1 s · open loop, poisson 3.2/s, burstiness 1 · 1,000 requests · seed 11; stall at 60 s for 20 s"),
        "{card}"
    );
    let zh = String::from_utf8(ok(&["report", &closed, "--lang", "zh"]).stdout).unwrap();
    assert!(
        zh.contains("模拟结果，不是测量") && zh.contains("闭环 16 个客户端"),
        "{zh}"
    );

    // The stall shows in the open loop's tail and hides in the closed loop's.
    let e2e_p95 = |file: &str| -> f64 {
        let json: serde_json::Value =
            serde_json::from_slice(&ok(&["report", file, "--json"]).stdout).unwrap();
        json["e2e_p95_s"]
            .as_f64()
            .unwrap_or_else(|| panic!("no e2e_p95_s in {json}"))
    };
    let (open_p95, closed_p95) = (e2e_p95(&open), e2e_p95(&closed));
    assert!(
        open_p95 > 10.0 && closed_p95 < 5.0,
        "open {open_p95} s, closed {closed_p95} s"
    );

    let csv = String::from_utf8(ok(&["export", &open, "--format", "csv"]).stdout).unwrap();
    assert_eq!(csv.lines().filter(|l| l.starts_with("sim-")).count(), 1000);
}

#[test]
fn the_same_flags_write_the_same_file() {
    let dir = temp("seed");
    let a = dir.join("a.jsonl").display().to_string();
    let b = dir.join("b.jsonl").display().to_string();
    let c = dir.join("c.jsonl").display().to_string();
    let base = [
        "simulate",
        "--slots",
        "2",
        "--service",
        "fixed:0.5",
        "--rate",
        "3",
        "--requests",
        "50",
    ];
    for (out, seed) in [(&a, "1"), (&b, "1"), (&c, "2")] {
        let mut args = base.to_vec();
        args.extend_from_slice(&["--seed", seed, "--output", out]);
        ok(&args);
    }
    let read = |p: &str| std::fs::read_to_string(p).unwrap();
    assert_eq!(read(&a), read(&b));
    assert_ne!(read(&a), read(&c));
    let header: serde_json::Value = serde_json::from_str(read(&a).lines().next().unwrap()).unwrap();
    assert_eq!(header["simulation"]["seed"], 1);
    assert_eq!(
        header["simulation"]["service"],
        serde_json::json!({"kind": "fixed", "s": 0.5})
    );
    assert_eq!(header["simulation"]["load"]["arrival"], "poisson");
}

#[test]
fn service_from_a_trace_draws_its_successes() {
    let dir = temp("trace");
    let out = dir.join("sim.jsonl").display().to_string();
    let sample = repo("public/samples/ten-requests.jsonl")
        .display()
        .to_string();
    let service = format!("trace:{sample}");
    ok(&[
        "simulate",
        "--slots",
        "4",
        "--service",
        &service,
        "--closed",
        "4",
        "--requests",
        "40",
        "--seed",
        "3",
        "--output",
        &out,
    ]);
    let text = std::fs::read_to_string(&out).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["simulation"]["service"]["kind"], "trace");
    assert_eq!(header["simulation"]["service"]["successes"], 8);
    // The sample's own threshold comes with it.
    assert_eq!(header["defaults"]["ttft_threshold_s"], 1.0);
    let card = String::from_utf8(ok(&["report", &out]).stdout).unwrap();
    assert!(card.contains("drawn from 8 successes of"), "{card}");
}

#[test]
fn bad_flags_are_refused_and_nothing_is_written() {
    let dir = temp("bad");
    let out = dir.join("sim.jsonl");
    let path = out.display().to_string();
    let missing = dir.join("missing.jsonl").display().to_string();
    let missing_service = format!("trace:{missing}");
    let base = [
        "simulate",
        "--slots",
        "2",
        "--requests",
        "10",
        "--seed",
        "1",
        "--output",
        path.as_str(),
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--service", "fixed:1"], "--closed"),
        (
            vec!["--service", "fixed:1", "--closed", "2", "--rate", "1"],
            "cannot be used with",
        ),
        (
            vec!["--service", "fixed:1", "--rate", "1", "--think", "2"],
            "--closed",
        ),
        (
            vec![
                "--service",
                "fixed:1",
                "--closed",
                "2",
                "--arrival",
                "poisson",
            ],
            "--rate",
        ),
        (
            vec![
                "--service",
                "fixed:1",
                "--rate",
                "1",
                "--arrival",
                "constant",
                "--burstiness",
                "2",
            ],
            "--arrival poisson",
        ),
        (
            vec!["--service", "normal:1", "--rate", "1"],
            "--service: unknown service `normal`",
        ),
        (vec!["--service", "fixed:0", "--rate", "1"], "--service"),
        (
            vec!["--service", "fixed:1", "--rate", "0"],
            "--rate: the arrival rate must be above 0",
        ),
        (
            vec!["--service", "fixed:1", "--rate", "1", "--burstiness", "0"],
            "--burstiness",
        ),
        (
            vec!["--service", "fixed:1", "--closed", "0"],
            "--closed: a closed loop needs at least 1 client",
        ),
        (
            vec!["--service", "fixed:1", "--closed", "1", "--stall", "5"],
            "--stall: `5` is not AT_S:FOR_S",
        ),
        (
            vec![
                "--service",
                "fixed:1",
                "--closed",
                "1",
                "--first-token-share",
                "2",
            ],
            "--first-token-share",
        ),
        (
            vec!["--service", missing_service.as_str(), "--closed", "1"],
            "missing.jsonl",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let o = tracelab(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} should be refused");
        assert!(
            stderr.contains(expected),
            "{extra:?}: expected `{expected}` in\n{stderr}"
        );
        assert!(!out.exists(), "{extra:?}: nothing written");
    }
    // Slots 0 too.
    let o = tracelab(&[
        "simulate",
        "--slots",
        "0",
        "--service",
        "fixed:1",
        "--closed",
        "1",
        "--requests",
        "1",
        "--seed",
        "1",
        "--output",
        &path,
    ]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--slots: the server needs at least 1 slot")
    );
    // An existing file is kept without --force.
    std::fs::write(&out, "keep me\n").unwrap();
    let mut args = base.to_vec();
    args.extend_from_slice(&["--service", "fixed:1", "--closed", "1"]);
    let o = tracelab(&args);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    args.push("--force");
    ok(&args);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 12);
}

fn json_file(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

/// The M/M/4 load (μ = 1/s) at which P(wait > t) = `share`, from Erlang C: P(W > t) =
/// C(4, λ)·e^{−(4 − λ)t}, by bisection.
fn erlang_c_crossing(t: f64, share: f64) -> f64 {
    use tracelab_core::simulate::theory::erlang_c;
    let p_late =
        |lambda: f64| erlang_c(4, lambda, 1.0).map_or(1.0, |pc| pc * (-(4.0 - lambda) * t).exp());
    let (mut lo, mut hi) = (0.01, 3.99);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if p_late(mid) > share {
            hi = mid
        } else {
            lo = mid
        }
    }
    lo
}

/// `tracelab simulate-sweep` on M/M/4 (exponential service, mean 1 s, the first-token share at
/// 0 so TTFT is the wait in the queue): the capacity answer brackets Erlang C's crossing load
/// for "P95 TTFT ≤ 0.5 s" (λ* ≈ 1.875 /s) and for "joint rate ≥ 90 % with TTFT ≤ 0.5 s"; the
/// sweep stops at the first failing step and says why; every step and sweep.json are marked
/// simulated; `tracelab capacity` reads the folder to the same answer; the same flags write the
/// same bytes.
#[test]
fn a_simulated_sweep_brackets_erlang_c() {
    let rates = [1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5];
    let rates_arg = rates.map(|r| r.to_string()).join(",");
    for (target, share, seed) in [
        ("ttft_p95<=0.5", 0.05, "11"),
        ("joint_rate>=0.9", 0.10, "21"),
    ] {
        let theory = erlang_c_crossing(0.5, share);
        let dir = temp(&format!("sweep-{share}"));
        let run = |out: &str| {
            ok(&[
                "simulate-sweep",
                "--slots",
                "4",
                "--service",
                "exponential:1",
                "--first-token-share",
                "0",
                "--rates",
                &rates_arg,
                "--requests",
                "20000",
                "--seed",
                seed,
                "--target",
                target,
                "--threshold",
                "0.5",
                "--output-dir",
                out,
            ])
        };
        let a = dir.join("a").display().to_string();
        let out = run(&a);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let sweep = json_file(&dir.join("a/sweep.json"));
        let steps = sweep["steps"].as_array().unwrap();
        // The last step written is the first failing one: the sweep stopped there.
        let fail = steps.last().unwrap()["load"].as_f64().unwrap();
        assert!(
            sweep["stopped"]["why"]
                .as_str()
                .unwrap()
                .contains("fails the target"),
            "{sweep}"
        );
        assert_eq!(sweep["stopped"]["step"], steps.len());
        assert!(steps.len() < rates.len(), "stopped early: {sweep}");
        assert!(stderr.contains("the sweep stopped after step"), "{stderr}");
        // The answer: the capacity interval, and the same from `tracelab capacity --json`.
        let cap: serde_json::Value =
            serde_json::from_slice(&ok(&["capacity", &a, "--json"]).stdout).unwrap();
        let pass = cap["answer"]["last_pass"].as_f64().unwrap();
        assert_eq!(cap["answer"]["first_fail"].as_f64(), Some(fail));
        println!(
            "simulate-sweep M/M/4 μ=1, {target} (TTFT ≤ 0.5 s), 20,000 requests a step, seed {seed}: Erlang C λ* = {theory:.4} /s; passes at {pass} /s, fails at {fail} /s, inconclusive {}",
            cap["answer"]["inconclusive"]
        );
        for s in cap["steps"].as_array().unwrap() {
            println!(
                "  λ = {}: joint {} {}, P95 TTFT {} {} — {}",
                s["load"],
                s["joint_rate"]["value"],
                s["joint_rate"]["interval"],
                s["ttft_p95"]["value"],
                s["ttft_p95"]["interval"],
                s["verdict"]
            );
        }
        assert!(
            pass <= theory && theory < fail,
            "{target}: Erlang C λ* = {theory} outside [{pass}, {fail})"
        );
        let inconclusive = cap["answer"]["inconclusive"].as_array().unwrap().len() as f64;
        assert!(
            fail - pass <= 0.25 * (1.0 + inconclusive) + 1e-9,
            "{target}: one grid step apart (or across the inconclusive ones)"
        );
        assert!(
            stdout.contains(&format!(
                "capacity lies between rate {pass} /s (passes) and rate {fail} /s (fails)"
            )),
            "{stdout}"
        );
        // Simulated, never passable as measured: sweep.json, every step's header, the answer.
        assert_eq!(sweep["simulated"]["measured"], false);
        assert_eq!(
            sweep["simulated"]["service"],
            serde_json::json!({"kind": "exponential", "mean_s": 1.0})
        );
        assert_eq!(sweep["comparison"], "le");
        for (i, s) in steps.iter().enumerate() {
            let text =
                std::fs::read_to_string(dir.join("a").join(s["file"].as_str().unwrap())).unwrap();
            let header: serde_json::Value =
                serde_json::from_str(text.lines().next().unwrap()).unwrap();
            assert_eq!(
                header["simulation"]["seed"].as_u64(),
                Some(seed.parse::<u64>().unwrap() + i as u64)
            );
            assert_eq!(header["conditions"]["rate_per_s"].as_f64(), Some(rates[i]));
        }
        assert_eq!(cap["simulated"].as_array().unwrap().len(), steps.len());
        let card = String::from_utf8(ok(&["capacity", &a]).stdout).unwrap();
        assert!(card.starts_with("Simulated, not measured"), "{card}");
        assert!(stdout.starts_with("Simulated, not measured"), "{stdout}");
        let zh = String::from_utf8(ok(&["capacity", &a, "--lang", "zh"]).stdout).unwrap();
        assert!(zh.starts_with("模拟结果，不是测量"), "{zh}");
        // The same flags, the same files.
        let b = dir.join("b").display().to_string();
        run(&b);
        for s in steps {
            let f = s["file"].as_str().unwrap();
            assert!(
                std::fs::read(dir.join("a").join(f)).unwrap()
                    == std::fs::read(dir.join("b").join(f)).unwrap(),
                "{f}: the same seed, the same bytes"
            );
        }
        assert_eq!(
            std::fs::read(dir.join("a/sweep.json")).unwrap(),
            std::fs::read(dir.join("b/sweep.json")).unwrap()
        );
    }
}

/// `--comparison` in both sweeps' stop rule and answer: a server whose every TTFT is exactly
/// 0.5 s (fixed 1 s service, half of it before the first token, never a queue: as many slots as
/// clients) against a 0.5 s threshold. With ≤ every request qualifies and the sweep runs every
/// load; with < none does, so the first step fails and the sweep stops there. sweep.json keeps
/// the comparison, and `tracelab capacity` starts from it (`--comparison` overrides it).
#[test]
fn le_and_lt_differ_in_the_sweeps_stop_rule_and_answer() {
    let dir = temp("cmp");
    let sweep = |cmp: &str| {
        let out = dir.join(cmp).display().to_string();
        let o = ok(&[
            "simulate-sweep",
            "--slots",
            "4",
            "--service",
            "fixed:1",
            "--first-token-share",
            "0.5",
            "--concurrencies",
            "1,2,4",
            "--requests",
            "60",
            "--seed",
            "1",
            "--threshold",
            "0.5",
            "--comparison",
            cmp,
            "--target",
            "joint_rate>=0.9",
            "--output-dir",
            &out,
        ]);
        (out, String::from_utf8(o.stdout).unwrap())
    };
    let (le, le_out) = sweep("le");
    let (lt, lt_out) = sweep("lt");
    let le_json = json_file(&std::path::Path::new(&le).join("sweep.json"));
    let lt_json = json_file(&std::path::Path::new(&lt).join("sweep.json"));
    assert_eq!(
        (
            le_json["comparison"].as_str(),
            lt_json["comparison"].as_str()
        ),
        (Some("le"), Some("lt"))
    );
    assert_eq!(
        le_json["steps"].as_array().unwrap().len(),
        3,
        "≤: every step passes, none stops the sweep: {le_json}"
    );
    assert!(le_json["stopped"].is_null(), "{le_json}");
    assert_eq!(
        lt_json["steps"].as_array().unwrap().len(),
        1,
        "<: the first step fails and stops the sweep: {lt_json}"
    );
    assert!(
        lt_json["stopped"]["why"]
            .as_str()
            .unwrap()
            .contains("fails the target"),
        "{lt_json}"
    );
    assert!(
        le_out.contains("TTFT ≤ 0.5 s")
            && le_out.contains("no step failed, so capacity is at least concurrency 4"),
        "{le_out}"
    );
    assert!(
        lt_out.contains("TTFT < 0.5 s")
            && lt_out.contains("no step passes; concurrency 1 already fails"),
        "{lt_out}"
    );
    // `tracelab capacity` reads the sweep's comparison, and recomputes under the other one.
    let again = String::from_utf8(ok(&["capacity", &lt]).stdout).unwrap();
    assert!(
        again.contains("TTFT < 0.5 s") && again.contains("no step passes"),
        "{again}"
    );
    let relaxed = String::from_utf8(ok(&["capacity", &lt, "--comparison", "le"]).stdout).unwrap();
    assert!(
        relaxed.contains("TTFT ≤ 0.5 s") && relaxed.contains("capacity is at least concurrency 1"),
        "{relaxed}"
    );
}

/// A simulated sweep's bad flags are refused before anything is written.
#[test]
fn a_simulated_sweeps_bad_flags_write_nothing() {
    let dir = temp("sweep-bad");
    let out = dir.join("out");
    let path = out.display().to_string();
    let base = [
        "simulate-sweep",
        "--slots",
        "2",
        "--service",
        "fixed:1",
        "--seed",
        "1",
        "--output-dir",
        path.as_str(),
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--requests", "10"], "give the loads"),
        (
            vec!["--requests", "10", "--rates", "2,1"],
            "loads must increase",
        ),
        (
            vec!["--requests", "10", "--rates", "1,2", "--think", "1"],
            "--concurrencies",
        ),
        (
            vec![
                "--requests",
                "10",
                "--concurrencies",
                "1,2",
                "--burstiness",
                "2",
            ],
            "--rates",
        ),
        (
            vec![
                "--requests",
                "10",
                "--rates",
                "1",
                "--comparison",
                "lt",
                "--threshold",
                "-1",
            ],
            "--threshold",
        ),
        (
            vec!["--requests", "10", "--rates", "1", "--target", "p99<=1"],
            "target `p99<=1`",
        ),
        (vec!["--requests", "0", "--rates", "1"], "--requests"),
        (
            vec![
                "--requests",
                "10",
                "--rates",
                "1",
                "--service-per-output-token",
                "0.1",
            ],
            "--workload",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = base.to_vec();
        args.extend_from_slice(&extra);
        let o = tracelab(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{extra:?} should be refused");
        assert!(
            stderr.contains(expected),
            "{extra:?}: expected `{expected}` in\n{stderr}"
        );
        assert!(!out.exists(), "{extra:?}: nothing written");
    }
}

/// The simulated sweep the capacity page's browser test uploads (`tests/data/sweep-simulated/`,
/// its README gives the command) is what `tracelab simulate-sweep` writes, byte for byte
/// (`TRACELAB_BLESS=1` rewrites it), and `tracelab capacity` gives it the answer that test expects.
#[test]
fn the_committed_simulated_sweep_is_what_the_command_writes() {
    let committed = repo("tests/data/sweep-simulated");
    let dir = temp("committed");
    let out = dir.join("sweep").display().to_string();
    ok(&[
        "simulate-sweep",
        "--slots",
        "4",
        "--service",
        "exponential:1",
        "--concurrencies",
        "1,2,4,8,16",
        "--requests",
        "150",
        "--seed",
        "3",
        "--target",
        "ttft_p95<=1",
        "--threshold",
        "1",
        "--output-dir",
        &out,
    ]);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names.len(),
        5,
        "sweep.json and four steps (stopped at concurrency 8): {names:?}"
    );
    for name in &names {
        let written = std::fs::read(dir.join("sweep").join(name)).unwrap();
        if std::env::var_os("TRACELAB_BLESS").is_some() {
            std::fs::write(committed.join(name), &written).unwrap();
        }
        let on_disk = std::fs::read(committed.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e} (TRACELAB_BLESS=1 writes it)"));
        assert!(on_disk == written, "{name} differs from what simulate-sweep writes; rerun with TRACELAB_BLESS=1 and review the diff");
    }
    let text =
        String::from_utf8(ok(&["capacity", &committed.display().to_string()]).stdout).unwrap();
    assert!(text.starts_with("Simulated, not measured"), "{text}");
    assert!(text.contains("Capacity: the highest load that passes is concurrency 4; capacity lies between concurrency 4 (passes) and concurrency 8 (fails)"), "{text}");
}
