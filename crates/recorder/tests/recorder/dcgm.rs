//! Fleet GPU telemetry: `--gpu dcgm=URL,URL` against local fake exporters that serve real
//! dcgm-exporter output (`../shared/fixtures/dcgm/`, read in place) over HTTP, one per node.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::server::{refused_addr, Script, ScriptedServer};
use crate::{load, temp_dir, Record};

fn fixture(name: &str) -> String {
    let path = crate::fixtures("dcgm").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the real dcgm-exporter capture {} is missing ({e}); {}",
            path.display(),
            crate::FIXTURES_MISSING
        )
    })
}

/// A minimal exporter, closing after each answer as dcgm-exporter is set up here.
fn fake_exporter(body: String) -> (String, Arc<AtomicUsize>) {
    crate::prometheus_endpoint(body, false)
}

fn record(server: &ScriptedServer, out: &Path, gpu: &str) -> std::process::Output {
    Record::new(out)
        .server(server)
        .args(["--repetitions", "3", "--gpu-interval-ms", "20"])
        .args([format!("--gpu={gpu}")])
        .run()
}

#[test]
fn two_nodes_are_scraped_on_the_run_clock_and_named_by_position_only() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(60), Duration::from_millis(5), 3)
    });
    let (l4, l4_scrapes) = fake_exporter(fixture("dcgm_exporter_l4_kops_metrics.txt"));
    let (l40s, l40s_scrapes) = fake_exporter(fixture("dcgm_exporter_l40s_upcloud_metrics.txt"));
    let dir = temp_dir("dcgm");
    let out = dir.join("t.jsonl");
    let output = record(&server, &out, &format!("dcgm={l4},{l40s}"));
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(trace.header.capabilities.gpu_telemetry, "dcgm");
    let end = trace
        .attempts
        .iter()
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    let (mut node0, mut node1) = (0, 0);
    for s in &trace.gpu {
        match s.node {
            // FB free 22563 + used 0 + reserved 470 MiB.
            Some(0) => {
                node0 += 1;
                assert_eq!(
                    (s.gpu, s.util_pct, s.mem_used_mib, s.mem_total_mib),
                    (0, 0.0, 0.0, 23033.0)
                );
            }
            Some(1) => {
                node1 += 1;
                assert_eq!(
                    (s.gpu, s.util_pct, s.mem_used_mib, s.mem_total_mib),
                    (0, 0.0, 0.0, 46067.0)
                );
            }
            other => panic!("a sample of node {other:?}"),
        }
        assert!(
            s.t_ms >= 0.0 && s.t_ms <= end + 1000.0,
            "on the run's clock: {}",
            s.t_ms
        );
    }
    assert!(
        node0 >= 3 && node1 >= 3,
        "a ~0.6 s run scraped every 20 ms: {node0} + {node1} samples"
    );
    assert!(
        l4_scrapes.load(Ordering::Relaxed) >= node0
            && l40s_scrapes.load(Ordering::Relaxed) >= node1
    );
    assert_eq!(trace.footer.unwrap().gpu_samples, trace.gpu.len() as u64);

    // The exporter's labels (UUID, Hostname, model, PCI bus, driver) and the URLs never land.
    let text = std::fs::read_to_string(&out).unwrap();
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    for secret in [
        "GPU-",
        "i-030791dc5a37cd257",
        "NVIDIA L4",
        "00000000:31:00.0",
        "580.105",
        "127.0.0.1",
        "/metrics",
    ] {
        assert!(!text.contains(secret), "the trace holds `{secret}`");
        assert!(
            !printed.contains(secret),
            "the terminal shows `{secret}`: {printed}"
        );
    }
    assert!(printed.contains("dcgm-exporter, 2 node(s)"), "{printed}");
}

#[test]
fn a_node_that_does_not_answer_is_named_by_position_and_nothing_is_invented() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 2)
    });
    let (l4, _) = fake_exporter(fixture("dcgm_exporter_l4_kops_metrics.txt"));
    let (empty, _) = fake_exporter("# HELP nothing here\n".into());
    let dir = temp_dir("dcgm-down");
    for (name, second, why) in [
        (
            "refused",
            format!("http://{}/metrics", refused_addr()),
            "node 1 refused or unreachable",
        ),
        ("empty", empty, "node 1 exports no GPU"),
    ] {
        let out = dir.join(format!("{name}.jsonl"));
        let output = record(&server, &out, &format!("dcgm={l4},{second}"));
        assert!(output.status.success(), "{name}");
        let trace = load(&out);
        assert_eq!(
            trace.header.capabilities.gpu_telemetry, "unsupported",
            "{name}"
        );
        assert!(trace.gpu.is_empty(), "{name}: no GPU figure is invented");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(why) && !stderr.contains("127.0.0.1"),
            "{name}: {stderr}"
        );
    }
    let output = Record::new(Path::new("x"))
        .base_url("http://h/v1")
        .args(["--gpu", "dcgm=ftp://secret"])
        .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && stderr.contains("URL number 1") && !stderr.contains("secret"),
        "{stderr}"
    );
}
