//! The serving engine's own signals: `--server-metrics URL,URL` against local fake endpoints
//! that serve real engines' /metrics captures (`../shared/fixtures/servers/`, read in place),
//! one test per engine, and the card's line beside the slow attempts.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::server::{refused_addr, Script, ScriptedServer};
use crate::{load, temp_dir, Record};

fn fixture(name: &str) -> String {
    let path = crate::fixtures("servers").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the real /metrics capture {} is missing ({e}); {}",
            path.display(),
            crate::FIXTURES_MISSING
        )
    })
}

/// An engine endpoint, kept alive between scrapes as engines keep them.
fn fake_metrics(body: String) -> (String, Arc<AtomicUsize>) {
    crate::prometheus_endpoint(body, true)
}

fn record(out: &Path, sources: &str) -> std::process::Output {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(60), Duration::from_millis(5), 3)
    });
    Record::new(out)
        .server(&server)
        .args(["--repetitions", "3", "--server-metrics-interval-ms", "50"])
        .args([format!("--server-metrics={sources}")])
        .run()
}

/// Each engine's real capture, scraped as the run goes: the header names the engine and its
/// signals, every sample is on the run's clock, and no label value, host or URL lands.
fn engine_case(file: &str, engine: &str, signals: &[&str], waiting: f64, running: f64) {
    let (url, scrapes) = fake_metrics(fixture(file));
    let dir = temp_dir(&format!(
        "engine-{}",
        file.split('.').next().unwrap_or(engine)
    ));
    let out = dir.join("t.jsonl");
    let output = record(&out, &url);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trace = load(&out);
    let scrape = trace
        .header
        .engine_metrics
        .clone()
        .expect("the header says what was scraped");
    assert_eq!((scrape.sources, scrape.interval_ms), (1, 50.0));
    assert_eq!(scrape.engines, vec![Some(engine.to_string())]);
    assert_eq!(scrape.signals, signals, "{engine}");
    assert!(
        trace.engine.len() >= 3,
        "{engine}: a ~0.6 s run scraped every 50 ms: {}",
        trace.engine.len()
    );
    assert!(
        scrapes.load(Ordering::Relaxed) > trace.engine.len(),
        "one scrape before the run, for the header"
    );
    let end = trace
        .attempts
        .iter()
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    for s in &trace.engine {
        assert_eq!(
            (s.engine.as_str(), s.waiting, s.running),
            (engine, Some(waiting), Some(running))
        );
        assert!(
            s.t_ms >= 0.0 && s.t_ms <= end + 1000.0,
            "on the run's clock: {}",
            s.t_ms
        );
    }
    let text = std::fs::read_to_string(&out).unwrap();
    for secret in [
        "127.0.0.1",
        "/metrics",
        "model_name",
        "opt-125m",
        "Llama-3.1",
        "gpfs",
    ] {
        assert!(
            !text.contains(secret),
            "{engine}: the trace holds `{secret}`"
        );
    }
    let card = crate::run(crate::tracelab().arg("report").arg(&out));
    let card = String::from_utf8_lossy(&card.stdout);
    assert!(
        card.contains(&format!("Engine beside slow attempts ({engine};")),
        "{card}"
    );
    let json = crate::run(crate::tracelab().args(["report", "--json"]).arg(&out));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["engine_beside"]["engine"], engine);
    assert_eq!(json["engine_beside"]["status"], "measured");
}

#[test]
fn vllm_v1_capture() {
    engine_case(
        "vllm_0.25.1_opt125m_tp2_loaded128.metrics.txt",
        "vllm",
        &[
            "waiting",
            "running",
            "kv_cache",
            "preemptions_per_s",
            "queue_time",
            "ttft",
        ],
        64.0,
        64.0,
    );
}

#[test]
fn vllm_v0_capture() {
    engine_case(
        "vllm_fork_0.5.2.dev1210_llama2_7b_startup.metrics.txt",
        "vllm",
        &["waiting", "running", "kv_cache", "preemptions_per_s"],
        0.0,
        0.0,
    );
}

#[test]
fn sglang_capture() {
    engine_case(
        "sglang_docs_llama31_8b_loaded.metrics.txt",
        "sglang",
        &["waiting", "running", "kv_cache", "ttft"],
        2826.0,
        162.0,
    );
}

#[test]
fn tgi_capture() {
    engine_case(
        "tgi_3.x_datadog_fixture.metrics.txt",
        "tgi",
        &["waiting", "running", "queue_time"],
        0.0,
        0.0,
    );
}

#[test]
fn llamacpp_capture() {
    engine_case(
        "llamacpp_b9383_after_tests.metrics.txt",
        "llamacpp",
        &["waiting", "running"],
        0.0,
        0.0,
    );
}

#[test]
fn a_source_that_does_not_answer_is_named_by_position_and_nothing_is_invented() {
    let (vllm, _) = fake_metrics(fixture("vllm_0.25.1_opt125m_tp2_idle.metrics.txt"));
    let (unknown, _) = fake_metrics("# HELP nothing here\nsome_other_metric 1\n".into());
    let dir = temp_dir("engine-down");
    let refused = format!("http://{}/metrics", refused_addr());
    let out = dir.join("t.jsonl");
    let output = record(&out, &format!("{vllm},{refused},{unknown}"));
    assert!(output.status.success());
    let trace = load(&out);
    let scrape = trace.header.engine_metrics.clone().unwrap();
    assert_eq!(scrape.engines, vec![Some("vllm".to_string()), None, None]);
    assert!(
        trace.engine.iter().all(|s| s.source == 0),
        "nothing from the sources that gave nothing"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("source 1 ") && stderr.contains("source 2 serves no metrics"),
        "{stderr}"
    );
    assert!(!stderr.contains("127.0.0.1"), "{stderr}");
    let bad = Record::new(Path::new("x"))
        .base_url("http://h/v1")
        .args(["--server-metrics", "http://a/metrics,secret-host:1"])
        .run();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && stderr.contains("URL number 2") && !stderr.contains("secret"),
        "{stderr}"
    );
}
