//! deploy/kubernetes/ validates offline against the Kubernetes schemas shipped in the PyPI
//! package `kubernetes-validate` (installed by `cargo xtask test` into
//! ~/.cache/tracelab/kubernetes-validate-<version>/), and the Jobs agree with each other.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::temp_dir;

pub const KUBERNETES_VALIDATE_VERSION: &str = "1.37.0";

fn venv_bin(name: &str) -> PathBuf {
    if let Some(p) = std::env::var_os("TRACELAB_KUBERNETES_VALIDATE") {
        return PathBuf::from(p).join(name);
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let dir = PathBuf::from(home).join(format!(
        ".cache/tracelab/kubernetes-validate-{KUBERNETES_VALIDATE_VERSION}/bin"
    ));
    assert!(
        dir.join(name).exists(),
        "kubernetes-validate {KUBERNETES_VALIDATE_VERSION} from PyPI is not installed in {}: `cargo xtask test` installs it",
        dir.display()
    );
    dir.join(name)
}

fn manifests() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// Validation with every proxy pointed at a closed port: it must not need the network.
fn validate(files: &[PathBuf]) -> std::process::Output {
    let mut cmd = Command::new(venv_bin("kubernetes-validate"));
    cmd.args(["--strict", "-k", KUBERNETES_VALIDATE_VERSION])
        .args(files);
    for var in [
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "http_proxy",
        "https_proxy",
        "ALL_PROXY",
    ] {
        cmd.env(var, "http://127.0.0.1:9");
    }
    cmd.output().expect("run kubernetes-validate")
}

#[test]
fn manifests_validate_against_the_kubernetes_schemas_offline() {
    let files = manifests();
    assert!(files.len() >= 5, "{files:?}");
    let output = validate(&files);
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    assert_eq!(
        report.matches(" passed for resource ").count(),
        files.len(),
        "{report}"
    );

    // The check can fail: a misspelt field of a Job is refused under --strict.
    let dir = temp_dir("k8s-broken");
    let job =
        std::fs::read_to_string(files.iter().find(|f| f.ends_with("job.yaml")).unwrap()).unwrap();
    let broken = dir.join("job.yaml");
    std::fs::write(&broken, job.replace("parallelism: 4", "paralelism: 4")).unwrap();
    assert!(
        !validate(&[broken]).status.success(),
        "a misspelt field must fail validation"
    );
}

#[test]
fn the_indexed_job_and_the_merge_agree() {
    let python = venv_bin("python");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/kubernetes");
    let script = r#"
import sys, yaml, re
d = sys.argv[1]
config = yaml.safe_load(open(d + "/configmap.yaml"))["data"]
# The shared-volume pair, and the object-store pair (the recorder and the merge run as init
# containers there, so the upload follows them).
for job_file, merge_file, where in [("job.yaml", "merge-job.yaml", "containers"), ("job-object-store.yaml", "merge-job-object-store.yaml", "initContainers")]:
    job = yaml.safe_load(open(d + "/" + job_file))
    merge = yaml.safe_load(open(d + "/" + merge_file))
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed", spec
    n = spec["completions"]
    assert spec["parallelism"] == n, "all shards must run at once"
    args = spec["template"]["spec"][where][0]["args"]
    assert args[0] == "record", args
    assert f"--shards={n}" in args, args
    assert any(a.startswith("--start-at=") for a in args), args
    assert "--output=/traces/shard-$(JOB_COMPLETION_INDEX).jsonl" in args, args
    # The barrier reaches shard 0 by its pod name under the headless Service, on its port.
    service = yaml.safe_load(open(d + "/barrier-service.yaml"))
    sub = spec["template"]["spec"]["subdomain"]
    assert service["metadata"]["name"] == sub and service["spec"]["clusterIP"] == "None", service
    assert service["spec"]["selector"]["job-name"] == job["metadata"]["name"], service
    port = service["spec"]["ports"][0]["port"]
    assert f"--barrier={job['metadata']['name']}-0.{sub}:{port}" in args, args
    # Progress lines reach the pod's log: the recorder is not told to be quiet.
    assert "--quiet" not in args, job_file
    margs = merge["spec"]["template"]["spec"][where][-1]["args"] if where == "initContainers" else merge["spec"]["template"]["spec"]["containers"][0]["args"]
    assert margs[0] == "merge"
    assert margs[1:1 + n] == [f"/traces/shard-{i}.jsonl" for i in range(n)], margs
    if where == "initContainers":
        export = spec["template"]["spec"]["initContainers"][1]["args"]
        assert export[:2] == ["export", "/traces/shard-$(JOB_COMPLETION_INDEX).jsonl"] and "--format=parquet" in export, export
        upload = spec["template"]["spec"]["containers"][0]["args"]
        assert "$(TRACELAB_RESULTS_URL)/" in upload, upload
        assert "TRACELAB_RESULTS_URL" in config, "the results URL is configured"
print("ok", n)
"#;
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
