//! `tracelab compare` on two real recorder runs against the scripted server: the same contract,
//! the second run with 150 ms of injected server queueing before each response. Both outputs are
//! kept in the test's temp dir (compare-delay/compare.txt) so they can be read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::server::{Script, ScriptedServer};
use super::{prompts, run, temp_dir, tracelab, Record};

/// Records 80 requests; each TTFT is 20–48 ms by a fixed pattern, plus `delay` before the head.
fn record(dir: &std::path::Path, name: &str, delay: Duration) -> std::path::PathBuf {
    let counter = Arc::new(AtomicUsize::new(0));
    let server = ScriptedServer::start(move |_| {
        let k = counter.fetch_add(1, Ordering::SeqCst);
        let mut s = Script::ok(
            Duration::from_millis(20 + (k as u64 * 7) % 29),
            Duration::from_millis(2),
            4,
        );
        s.head_delay = delay;
        s
    });
    let ids: Vec<String> = (0..80).map(|i| format!("p{i}")).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let prompts = prompts(dir, &ids);
    let out = dir.join(name);
    let output = Record::new(&out)
        .server(&server)
        .prompts(&prompts)
        .args(["--model", "scripted", "--warmup", "2", "--quiet"])
        .args(["--concurrency", "4", "--timeout", "10"])
        .run();
    assert!(output.status.success(), "record {name}");
    out
}

#[test]
fn compare_tells_an_injected_delay_from_noise_on_real_recordings() {
    let dir = temp_dir("compare-delay");
    let base = record(&dir, "base.jsonl", Duration::ZERO);
    let delayed = record(&dir, "delayed.jsonl", Duration::from_millis(150));
    let text = run(tracelab().arg("compare").arg(&base).arg(&delayed));
    let json = run(tracelab()
        .arg("compare")
        .arg(&base)
        .arg(&delayed)
        .arg("--json"));
    let stdout = String::from_utf8(text.stdout).unwrap();
    std::fs::write(dir.join("compare.txt"), &stdout).unwrap();
    std::fs::write(dir.join("compare.json"), &json.stdout).unwrap();
    assert_eq!(text.status.code(), Some(0), "the contract holds:\n{stdout}");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["pairs"][0]["contract"]["status"], "holds", "{stdout}");
    let row = |key: &str| {
        v["pairs"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == key)
            .unwrap()
            .clone()
    };
    for key in ["ttft_p50", "ttft_tail"] {
        let r = row(key);
        assert_eq!(
            r["verdict"]["en"], "slower beyond noise",
            "{key}:\n{stdout}"
        );
        assert_eq!(r["n_base"], 80);
        // The difference is the injected 150 ms, give or take the machine's scheduling (a loaded
        // CI machine adds more to one run than the other, so the upper bound is loose).
        let d = r["difference"].as_f64().unwrap();
        assert!((0.08..1.0).contains(&d), "{key} moved by {d} s:\n{stdout}");
    }
    assert_eq!(
        row("failure_rate")["verdict"]["en"],
        "no evidence of a change"
    );
}
