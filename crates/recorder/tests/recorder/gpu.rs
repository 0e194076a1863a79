//! GPU telemetry: a fake `nvidia-smi` printing recorded CSV, and `unsupported` when there is
//! no source. NVML is loaded at run time; without libnvidia-ml it falls back gracefully.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tracelab_recorder::gpu::{detect, GpuMode};

use crate::server::{refused_addr, Script, ScriptedServer};
use crate::{load, run, temp_dir, tracelab, Record};

/// A directory holding a fake `nvidia-smi` that prints recorded CSV (once, or every 20 ms under
/// `-lms`) and logs its arguments and environment beside itself.
pub fn fake_nvidia_smi(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = r#"#!/bin/sh
here=$(dirname "$0")
echo "$@" >> "$here/nvidia-smi.args"
env >> "$here/nvidia-smi.env"
sample() {
  echo "0, 37, 2048, 81559"
  echo "1, [N/A], 1024, 81559"
  echo "1, 5, 1024, 81559"
}
case "$*" in
  *-lms*) while true; do sample || exit 0; sleep 0.02; done ;;
  *) sample ;;
esac
"#;
    let path = bin.join("nvidia-smi");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// PATH with `dir` first.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn record(server: &ScriptedServer, out: &Path, gpu: &str, path: &str) -> std::process::Output {
    Record::new(out)
        .server(server)
        .args([
            "--repetitions",
            "2",
            "--gpu",
            gpu,
            "--gpu-interval-ms",
            "20",
        ])
        .env("PATH", path)
        .run()
}

#[test]
fn fake_nvidia_smi_samples_are_recorded_on_the_run_clock() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(60), Duration::from_millis(5), 3)
    });
    let dir = temp_dir("smi");
    let smi = fake_nvidia_smi(&dir);
    let out = dir.join("t.jsonl");
    let output = record(&server, &out, "nvidia-smi", &path_with(&smi));
    assert!(output.status.success());
    let trace = load(&out);
    assert_eq!(trace.header.capabilities.gpu_telemetry, "nvidia-smi");
    assert!(
        trace.gpu.len() >= 4,
        "a ~0.5 s run sampled every 20 ms: {} samples",
        trace.gpu.len()
    );
    assert_eq!(trace.footer.unwrap().gpu_samples, trace.gpu.len() as u64);
    let end = trace
        .attempts
        .iter()
        .map(|a| a.start_ms.unwrap() + a.e2e_ms.unwrap())
        .fold(0.0, f64::max);
    for s in &trace.gpu {
        match s.gpu {
            0 => assert_eq!(
                (s.util_pct, s.mem_used_mib, s.mem_total_mib),
                (37.0, 2048.0, 81559.0)
            ),
            1 => assert_eq!(
                (s.util_pct, s.mem_used_mib),
                (5.0, 1024.0),
                "the [N/A] line is skipped, not guessed"
            ),
            other => panic!("no GPU {other}"),
        }
        assert!(
            s.t_ms >= 0.0 && s.t_ms <= end + 1000.0,
            "on the run's clock: {}",
            s.t_ms
        );
    }
    let args = std::fs::read_to_string(smi.join("nvidia-smi.args")).unwrap();
    assert!(
        args.contains("--query-gpu=index,utilization.gpu,memory.used,memory.total")
            && args.contains("-lms 20"),
        "{args}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("GPU telemetry: nvidia-smi"));
}

#[test]
fn without_a_source_the_header_says_unsupported() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("no-gpu");
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let nvml_present = detect(GpuMode::Nvml).name() == "nvml";
    let mut modes = vec!["nvidia-smi", "off"];
    if !nvml_present {
        modes.extend(["nvml", "auto"]);
    }
    for mode in modes {
        let out = dir.join(format!("{mode}.jsonl"));
        let output = record(&server, &out, mode, &empty.display().to_string());
        assert!(output.status.success(), "{mode}");
        let trace = load(&out);
        assert_eq!(
            trace.header.capabilities.gpu_telemetry, "unsupported",
            "{mode}"
        );
        assert!(trace.gpu.is_empty(), "{mode}: no GPU figure is invented");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("GPU telemetry: unsupported"),
            "{mode}: {stderr}"
        );
    }
}

#[test]
fn probe_writes_a_header_only_scan_without_requests_or_secrets() {
    let server = ScriptedServer::start(|_| {
        Script::ok(Duration::from_millis(5), Duration::from_millis(1), 2)
    });
    let dir = temp_dir("probe");
    let smi = fake_nvidia_smi(&dir);
    let out = dir.join("probe.jsonl");
    let output = run(tracelab()
        .args(["probe", "--gpu", "nvidia-smi", "--output"])
        .arg(&out)
        .arg("--base-url")
        .arg(server.base_url())
        .env("OPENAI_API_KEY", "sk-probe-canary")
        .env("PATH", path_with(&smi)));
    assert!(output.status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1, "header only");
    assert!(!text.contains("sk-probe-canary") && !text.contains("127.0.0.1"));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("sk-probe-canary"));
    let trace = load(&out);
    let caps = &trace.header.capabilities;
    assert!(!caps.workload_executed && !caps.inference_benchmark);
    assert_eq!(caps.gpu_telemetry, "nvidia-smi");
    assert!(trace.attempts.is_empty());
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["probe"]["gpus"], 2);
    assert_eq!(header["probe"]["endpoint_reachable"], true);
    assert_eq!(server.request_count(), 0, "no request of any kind was sent");

    let refused = dir.join("refused.jsonl");
    let output = run(tracelab()
        .args(["probe", "--gpu", "off", "--output"])
        .arg(&refused)
        .arg("--base-url")
        .arg(format!("http://{}/v1", refused_addr())));
    assert!(output.status.success());
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&refused).unwrap()).unwrap();
    assert_eq!(header["probe"]["endpoint_reachable"], false);
    assert_eq!(header["capabilities"]["gpu_telemetry"], "unsupported");
    assert_eq!(
        header["probe"]["gpus"], 0,
        "no telemetry: 0 GPUs, as the format doc promises"
    );

    // Without --base-url reachability is unknown: null, never left out.
    let bare = dir.join("bare.jsonl");
    let output = run(tracelab()
        .args(["probe", "--gpu", "off", "--quiet", "--output"])
        .arg(&bare));
    assert!(output.status.success());
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&bare).unwrap()).unwrap();
    assert_eq!(
        header["probe"],
        serde_json::json!({"gpus": 0, "endpoint_reachable": null})
    );

    // Its metric card says no request was sent, never that "the server reported no usage".
    let report = run(tracelab().arg("report").arg(&bare));
    assert!(report.status.success());
    let card = String::from_utf8_lossy(&report.stdout);
    assert!(!card.contains("reported no usage"), "{card}");
}
