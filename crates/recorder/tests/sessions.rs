//! `tracelab simulate --sessions` and `tracelab report` on conversations, run as processes: the
//! trace names each turn's session, the report prints the per-session and per-turn section in
//! both languages and carries every figure with its interval in `--json` (the same figures
//! streamed and in memory, and the core's on the same file), a trace without sessions has no
//! section, and bad session fields or flags are refused.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;
use tracelab_core::session::Sessions;
use tracelab_core::Settings;

fn tracelab(args: &[&str]) -> Output {
    tracelab_testkit::run(env!("CARGO_BIN_EXE_tracelab"), args)
}

fn temp(name: &str) -> PathBuf {
    tracelab_testkit::scratch("sessions", name)
}

fn ok(args: &[&str]) -> String {
    let out = tracelab(args);
    assert!(
        out.status.success(),
        "tracelab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn simulate(path: &str, extra: &[&str]) {
    let mut args = vec![
        "simulate",
        "--sessions",
        "120",
        "--turns",
        "5",
        "--think-s",
        "2",
        "--session-rate",
        "1",
        "--slots",
        "16",
        "--service",
        "exponential:0.1",
        "--new-tokens",
        "100",
        "--output-tokens",
        "50",
        "--per-uncached-token-s",
        "0.001",
        "--per-output-token-s",
        "0.002",
        "--cache-tokens",
        "20000",
        "--seed",
        "5",
        "--output",
        path,
    ];
    args.extend_from_slice(extra);
    let out = tracelab(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("every simulated answer counts as passing quality"),
        "{said}"
    );
}

#[test]
fn a_simulated_conversation_is_reported_per_turn_and_per_session() {
    let dir = temp("report");
    let file = dir.join("s.jsonl").display().to_string();
    simulate(&file, &[]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(r#""session_id":"s001""#) && text.contains(r#""turn":5"#));
    assert!(text.contains(r#""quality_assumed_pass":true"#));

    let en = ok(&["report", &file, "--threshold", "0.4"]);
    assert!(
        en.contains("Sessions (a session qualifies only when every one of its turns does)"),
        "{en}"
    );
    assert!(en.contains("Sessions: 120"), "{en}");
    assert!(en.contains("By turn: turn | attempts"), "{en}");
    let zh = ok(&["report", &file, "--threshold", "0.4", "--lang", "zh"]);
    assert!(
        zh.contains("会话（一个会话只有在每一轮都合格时才合格）"),
        "{zh}"
    );
    assert!(zh.contains("合格会话占比（每一轮都合格）"), "{zh}");

    let json: Value =
        serde_json::from_str(&ok(&["report", &file, "--threshold", "0.4", "--json"])).unwrap();
    let s = &json["sessions"];
    for key in [
        "session_qualified_share",
        "turn_qualified_rate",
        "session_goodput",
    ] {
        assert!(s[key].is_number(), "{key}: {s}");
        assert!(s[format!("{key}_interval")]["lo"].is_number(), "{key}: {s}");
    }
    assert!(s["session_share_if_turns_independent"].is_number(), "{s}");
    assert_eq!(s["sessions"], 120.0);
    assert_eq!(s["by_turn"].as_array().unwrap().len(), 5);
    // The first turn has no history, so nothing of it is cached; later turns find theirs.
    assert_eq!(s["by_turn"][0]["cached_share"], 0.0);
    assert!(
        s["by_turn"][4]["cached_share"].as_f64().unwrap() > 0.5,
        "{s}"
    );

    // In memory, and the core on the same file under the same settings: the same figures.
    let whole: Value = serde_json::from_str(&ok(&[
        "report",
        &file,
        "--threshold",
        "0.4",
        "--json",
        "--in-memory",
    ]))
    .unwrap();
    assert_eq!(whole["sessions"], *s);
    let trace = tracelab_core::parse::parse_trace("s.jsonl", &text).unwrap();
    let mut settings = Settings::from_header(&trace.header);
    settings.ttft_threshold_s = 0.4;
    let core = Sessions::of(&trace.attempts, &settings).unwrap();
    assert_eq!(
        s["session_qualified_share"],
        core.session_share.figure.value.unwrap()
    );

    // The card exports carry the same section, streamed and in memory alike: card-json one
    // key per figure as report --json, card-md the section report prints.
    for memory in [&[][..], &["--in-memory"][..]] {
        let args = |format: &'static str| {
            let mut a = vec![
                "export",
                file.as_str(),
                "--format",
                format,
                "--threshold",
                "0.4",
            ];
            a.extend_from_slice(memory);
            a
        };
        let card: Value = serde_json::from_str(&ok(&args("card-json"))).unwrap();
        assert_eq!(card["sessions"], *s, "{memory:?}");
        let md = ok(&args("card-md"));
        assert!(
            md.contains(
                "\n## Sessions (a session qualifies only when every one of its turns does)\n"
            ) && md.contains("- Sessions: 120\n")
                && md.contains("- Sessions qualified (every turn qualified): "),
            "{memory:?}: {md}"
        );
    }

    // A trace of independent requests has no session section.
    let plain = dir.join("plain.jsonl").display().to_string();
    ok(&[
        "simulate",
        "--rate",
        "2",
        "--slots",
        "2",
        "--service",
        "fixed:0.1",
        "--requests",
        "20",
        "--seed",
        "1",
        "--output",
        &plain,
    ]);
    let json: Value = serde_json::from_str(&ok(&["report", &plain, "--json"])).unwrap();
    assert!(json["sessions"].is_null());
    assert!(!ok(&["report", &plain]).contains("a session qualifies only"));
    let card: Value =
        serde_json::from_str(&ok(&["export", &plain, "--format", "card-json"])).unwrap();
    assert!(card["sessions"].is_null());
    assert!(!ok(&["export", &plain, "--format", "card-md"]).contains("Sessions"));
}

#[test]
fn bad_session_fields_and_flags_are_refused() {
    let dir = temp("bad");
    let file = dir.join("bad.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"kind":"header","schema":"tracelab.trace","version":1,"tool":{"name":"hand","version":"1"}}"#,
            "\n",
            r#"{"kind":"attempt","id":"a","phase":"measure","start_ms":0,"first_token_ms":100,"end_ms":200,"outcome":"success","quality":"pass","session_id":"s1","turn":0}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = tracelab(&["report", &file.display().to_string()]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("bad.jsonl") && said.contains("line 2") && said.contains("turn"),
        "{said}"
    );

    let out_file = dir.join("x.jsonl").display().to_string();
    let refused = |args: &[&str], says: &str| {
        let out = tracelab(args);
        assert!(!out.status.success(), "{args:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(says), "{args:?}: {said}");
        assert!(!std::path::Path::new(&out_file).exists());
    };
    let base = [
        "simulate",
        "--sessions",
        "3",
        "--slots",
        "2",
        "--seed",
        "1",
        "--output",
        &out_file,
    ];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    refused(
        &with(&["--service", "fixed:0.1", "--session-rate", "1"]),
        "--turns",
    );
    refused(
        &with(&["--service", "fixed:0.1", "--turns", "2"]),
        "--session-rate",
    );
    refused(
        &with(&[
            "--service",
            "trace:x.jsonl",
            "--turns",
            "2",
            "--session-rate",
            "1",
        ]),
        "not a trace",
    );
    refused(
        &with(&[
            "--service",
            "fixed:0.1",
            "--turns",
            "0",
            "--session-rate",
            "1",
        ]),
        "turns",
    );
    refused(
        &with(&[
            "--service",
            "fixed:0.1",
            "--turns",
            "2",
            "--session-rate",
            "1",
            "--requests",
            "5",
        ]),
        "cannot be used with",
    );
}

/// `tracelab simulate-sweep --sessions … --rates`: the session simulator at each session rate,
/// one step per rate (step i seeded seed + i − 1), sweep.json of kind `session_rate` marked
/// simulated with the conversation's parameters; the capacity answer judges sessions, and
/// `tracelab capacity` reads the folder back to the same answer.
#[test]
fn a_simulated_session_sweep_finds_where_sessions_stop_qualifying() {
    let dir = temp("simulate-sweep");
    let out_dir = dir.join("sweep");
    let out_s = out_dir.to_str().unwrap();
    let text = ok(&[
        "simulate-sweep",
        "--sessions",
        "200",
        "--turns",
        "5",
        "--think-s",
        "2",
        "--slots",
        "4",
        "--service",
        "exponential:0.05",
        "--per-uncached-token-s",
        "0.0002",
        "--per-output-token-s",
        "0.005",
        "--cache-tokens",
        "200000",
        "--rates",
        "0.5,1,2",
        "--seed",
        "1",
        "--threshold",
        "0.5",
        "--target",
        "session_share>=0.9",
        "--output-dir",
        out_s,
    ]);
    let sweep: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("sweep.json")).unwrap())
            .unwrap();
    assert_eq!(sweep["kind"], "session_rate");
    assert_eq!(sweep["simulated"]["load"]["kind"], "sessions");
    assert_eq!(sweep["simulated"]["load"]["turns"], 5);
    // Step 2 (73 % of sessions, but 200 sessions of a loaded server are worth far fewer
    // independent ones) is inconclusive; step 3 fails with its whole interval: the sweep stops.
    assert_eq!(sweep["steps"].as_array().unwrap().len(), 3, "{sweep}");
    let step2 =
        std::fs::read_to_string(out_dir.join(sweep["steps"][1]["file"].as_str().unwrap())).unwrap();
    let header: Value = serde_json::from_str(step2.lines().next().unwrap()).unwrap();
    assert_eq!(header["simulation"]["load"]["rate_per_s"], 1.0);
    assert_eq!(header["simulation"]["seed"], 2);
    assert!(text.contains("Capacity: the highest load that passes is session rate 0.5 /s; capacity lies between session rate 0.5 /s (passes) and session rate 2 /s (fails); inconclusive: session rate 1 /s"), "{text}");
    assert!(
        text.contains(
            "sessions qualified (every turn qualified): 73 % (95 % interval 36.21 % … 92.79 %)"
        ),
        "{text}"
    );
    assert!(text.contains("Knee: session rate 0.5 /s"), "{text}");
    assert!(
        text.contains("sessions qualified (every turn qualified): 96.5 %"),
        "{text}"
    );
    let again = ok(&["capacity", out_s]);
    assert!(
        again.contains(
            "capacity lies between session rate 0.5 /s (passes) and session rate 2 /s (fails)"
        ),
        "{again}"
    );
    // --session-rate is the sweep's to set.
    let refused = tracelab(&[
        "simulate-sweep",
        "--sessions",
        "5",
        "--turns",
        "2",
        "--session-rate",
        "1",
        "--slots",
        "1",
        "--service",
        "fixed:0.1",
        "--rates",
        "1,2",
        "--seed",
        "1",
        "--output-dir",
        dir.join("refused").to_str().unwrap(),
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("drop --session-rate"));
}

/// `tracelab compare` on two session runs prints the sessions compared, in both languages and
/// in --json: the share of sessions qualified, the per-turn rate and session goodput, each
/// difference judged with the session as the unit. Two seeds of a loaded server (its sessions
/// correlated along the run) are not called different; the prefix cache switched off is.
#[test]
fn compare_judges_session_figures_with_the_session_as_the_unit() {
    let dir = temp("compare");
    let run = |name: &str, seed: &str, rate: &str, cache: &str| {
        let path = dir.join(name);
        ok(&[
            "simulate",
            "--sessions",
            "300",
            "--turns",
            "5",
            "--think-s",
            "2",
            "--session-rate",
            rate,
            "--slots",
            "4",
            "--service",
            "exponential:0.05",
            "--per-uncached-token-s",
            "0.0002",
            "--per-output-token-s",
            "0.005",
            "--cache-tokens",
            cache,
            "--seed",
            seed,
            "--force",
            "--output",
            path.to_str().unwrap(),
        ]);
        path.to_str().unwrap().to_string()
    };
    let (a, b) = (
        run("a.jsonl", "1", "1", "200000"),
        run("b.jsonl", "2", "1", "200000"),
    );
    let text = ok(&["compare", &a, &b, "--threshold", "0.5"]);
    assert!(text.contains("Sessions compared (a session qualifies only when every one of its turns does; every interval takes the session as its unit)"), "{text}");
    // 63.33 % against 82 %: sessions that overlap a busy stretch fail together, so 300
    // sessions are worth about 14 independent ones and the difference is within noise.
    assert!(text.contains("Sessions qualified (every turn qualified): base 63.33 % (300 sessions), new 82 % (300 sessions), difference +18.67 pp"), "{text}");
    assert!(!text.contains("beyond noise"), "{text}");
    let zh = ok(&["compare", &a, &b, "--threshold", "0.5", "--lang", "zh"]);
    assert!(
        zh.contains("会话对比") && zh.contains("没有变化的证据（区间包含 0）"),
        "{zh}"
    );
    let json: Value =
        serde_json::from_str(&ok(&["compare", &a, &b, "--threshold", "0.5", "--json"])).unwrap();
    let rows = json["sessions"][0]["rows"].as_array().unwrap();
    let keys: Vec<&str> = rows.iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "session_qualified_share",
            "turn_qualified_rate",
            "session_goodput"
        ]
    );
    assert!(rows.iter().all(|r| r["direction"] == 0), "{rows:?}");

    let (c, d) = (
        run("c.jsonl", "3", "0.5", "200000"),
        run("d.jsonl", "4", "0.5", "0"),
    );
    let text = ok(&["compare", &c, &d, "--threshold", "0.5"]);
    assert_eq!(
        text.matches("new lower, beyond noise (worse)").count(),
        3,
        "{text}"
    );
    // A run without sessions has no session section.
    let plain = dir.join("plain.jsonl");
    ok(&[
        "simulate",
        "--slots",
        "4",
        "--service",
        "exponential:0.1",
        "--rate",
        "2",
        "--requests",
        "100",
        "--seed",
        "1",
        "--force",
        "--output",
        plain.to_str().unwrap(),
    ]);
    let text = ok(&["compare", plain.to_str().unwrap(), plain.to_str().unwrap()]);
    assert!(!text.contains("Sessions compared"), "{text}");
}
