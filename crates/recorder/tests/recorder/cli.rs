//! The command line refuses what it cannot honour and says what to do instead.

use std::path::Path;

use crate::server::refused_addr;
use crate::{temp_dir, Record};

fn record(out: &Path, args: &[&str]) -> (i32, String) {
    let output = Record::new(out)
        .base_url(format!("http://{}/v1", refused_addr()))
        .args(args)
        .run();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn refuses_to_overwrite_without_force() {
    let dir = temp_dir("overwrite");
    let out = dir.join("t.jsonl");
    std::fs::write(&out, "keep me\n").unwrap();
    let (code, stderr) = record(&out, &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("already exists") && stderr.contains("--force"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me\n");
    let (code, _) = record(&out, &["--force", "--quiet"]);
    assert_eq!(
        code, 3,
        "nothing listens there: every attempt failed, and --force did overwrite"
    );
    assert!(crate::load(&out).attempts.len() == 3);
}

#[test]
fn every_command_that_writes_a_file_guards_it_with_the_same_words() {
    let dir = temp_dir("overwrite-all");
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples/ten-requests.jsonl");
    let out = dir.join("taken.out");
    let guard = format!(
        "{} already exists; pass --force to overwrite it, or choose another output file",
        out.display()
    );
    let o = out.to_str().unwrap();
    let s = sample.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["export", s, "--format", "csv", "--output", o],
        &["import", s, "--output", o],
        &["merge", s, "--output", o],
        &[
            "simulate",
            "--slots",
            "1",
            "--service",
            "fixed:0.1",
            "--seed",
            "1",
            "--rate",
            "1",
            "--requests",
            "5",
            "--output",
            o,
        ],
    ];
    for args in commands {
        std::fs::write(&out, "keep me\n").unwrap();
        let output = crate::tracelab().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(&guard), "{args:?}: {stderr}");
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "keep me\n",
            "{args:?}"
        );
    }
    let (_, stderr) = record(&out, &[]);
    assert!(stderr.contains(&guard), "record: {stderr}");
}

#[test]
fn contradictory_or_invalid_options_say_what_to_fix() {
    let dir = temp_dir("options");
    let out = dir.join("t.jsonl");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--rate", "5", "--concurrency", "4"],
            "cannot be used with",
        ),
        (&["--window-cost", "3"], "--window"),
        (
            &[
                "--rate",
                "5",
                "--arrival",
                "constant",
                "--burstiness",
                "0.5",
            ],
            "--arrival poisson",
        ),
        (&["--burstiness", "2"], "--rate"),
        (
            &["--timeout", "1", "--first-token-timeout", "2"],
            "cannot be longer than --timeout",
        ),
        (&["--timeout=-1"], "positive number of seconds"),
        (&["--duration", "0"], "positive number of seconds"),
        (&["--rate", "0"], "--rate must be a positive"),
        (&["--concurrency", "0"], "--concurrency must be at least 1"),
        (
            &["--prompts", "/no/such/prompts.jsonl"],
            "cannot read the prompt file",
        ),
    ];
    for (args, expected) in cases {
        let (code, stderr) = record(&out, args);
        assert_ne!(code, 0, "{args:?} should be refused");
        assert!(
            stderr.contains(expected),
            "{args:?}: expected `{expected}` in\n{stderr}"
        );
        assert!(!out.exists(), "{args:?}: nothing written");
    }
    let bad = dir.join("bad.jsonl");
    std::fs::write(&bad, "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"b\"}\n").unwrap();
    let (_, stderr) = record(&out, &["--prompts", &bad.display().to_string()]);
    assert!(
        stderr.contains("bad.jsonl line 2") && stderr.contains("prompt"),
        "{stderr}"
    );
}
