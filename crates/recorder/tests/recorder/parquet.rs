//! `tracelab export --format parquet` read back by DuckDB (PyPI `duckdb`, installed by
//! `cargo xtask test` into ~/.cache/tracelab/duckdb-<version>/): counts, failure rate and the
//! quantiles over successes equal ours. DuckDB's `quantile_disc` takes the element at index
//! max(1, ⌈n·q⌉) − 1 of the sorted values (its `Interpolator<true>::Index`: n − ⌊n − n·q⌋), which
//! is our nearest-rank; `quantile_cont` interpolates at (n − 1)·q, which is our linear.
//! The traces are real peer result files (`../shared/fixtures/peers/`) imported by tracelab.

use std::path::{Path, PathBuf};
use std::process::Command;

use tracelab_core::{Index, Metrics, PercentileMethod, Settings};

use crate::{load, run, temp_dir, tracelab};

pub const DUCKDB_VERSION: &str = "2.0.0";

fn duckdb_python() -> PathBuf {
    if let Some(p) = std::env::var_os("TRACELAB_DUCKDB_PYTHON") {
        return p.into();
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let python = PathBuf::from(home).join(format!(
        ".cache/tracelab/duckdb-{DUCKDB_VERSION}/bin/python"
    ));
    assert!(
        python.exists(),
        "DuckDB {DUCKDB_VERSION} from PyPI is not installed at {}: `cargo xtask test` installs it \
         (or: python3 -m venv ~/.cache/tracelab/duckdb-{DUCKDB_VERSION} && that venv's pip install duckdb=={DUCKDB_VERSION})",
        python.display()
    );
    python
}

const QUERY: &str = r#"
import duckdb, json, sys
f = sys.argv[1]
con = duckdb.connect()
ok = "phase = 'measure' AND outcome = 'success' AND ttft_ms IS NOT NULL"
row = con.execute(f"""
SELECT count(*) FILTER (WHERE phase = 'measure'),
       count(*) FILTER (WHERE phase = 'measure' AND outcome = 'success'),
       count(*) FILTER (WHERE phase = 'measure' AND outcome <> 'success'),
       quantile_disc(ttft_ms, 0.5) FILTER (WHERE {ok}),
       quantile_disc(ttft_ms, 0.95) FILTER (WHERE {ok}),
       quantile_cont(ttft_ms, 0.5) FILTER (WHERE {ok}),
       quantile_cont(ttft_ms, 0.95) FILTER (WHERE {ok}),
       quantile_disc(e2e_ms, 0.5) FILTER (WHERE phase = 'measure' AND outcome = 'success'),
       quantile_cont(e2e_ms, 0.5) FILTER (WHERE phase = 'measure' AND outcome = 'success'),
       sum(len(events)),
       count(ttft_ms) FILTER (WHERE {ok})
FROM read_parquet(?)""", [f]).fetchone()
meta = {k.decode(): v.decode() for _, k, v in con.execute("SELECT file_name, key, value FROM parquet_kv_metadata(?)", [f]).fetchall()}
print(json.dumps({"row": list(row), "header": meta.get("tracelab.header"), "version": duckdb.__version__}))
"#;

#[test]
fn duckdb_reads_the_parquet_export_with_our_figures() {
    let python = duckdb_python();
    let dir = temp_dir("parquet");
    let peers = crate::fixtures("peers");
    for peer in [
        "aiperf_gptoss20b_c100_cancel_profile_export.jsonl",
        "llmperf_yi34b_vllm_c8_individual_responses.json",
        "vllm_bench_serving_llama33_70b_tp8_qps04.json",
    ] {
        let source = peers.join(peer).display().to_string();
        assert!(
            std::path::Path::new(&source).exists(),
            "the real peer file {source} is missing; {}",
            crate::FIXTURES_MISSING
        );
        let trace_path = dir.join(format!("{peer}.trace.jsonl"));
        assert!(
            run(tracelab()
                .arg("import")
                .arg(&source)
                .arg("--output")
                .arg(&trace_path)
                .arg("--force"))
            .status
            .success(),
            "{peer}"
        );
        let out = dir.join(format!("{peer}.parquet"));
        let _ = std::fs::remove_file(&out);
        assert!(run(tracelab()
            .args(["export", "--format", "parquet"])
            .arg(&trace_path)
            .arg("--output")
            .arg(&out))
        .status
        .success());

        let trace = load(&trace_path);
        let figures = |method: PercentileMethod| {
            let mut settings = Settings::from_header(&trace.header);
            settings.percentile = method;
            Metrics::compute(
                &Index::build(&trace.attempts, settings.population),
                &settings,
            )
        };
        let (rank, linear) = (
            figures(PercentileMethod::NearestRank),
            figures(PercentileMethod::Linear),
        );

        let output = Command::new(&python)
            .arg("-c")
            .arg(QUERY)
            .arg(&out)
            .output()
            .expect("run DuckDB's python");
        assert!(
            output.status.success(),
            "DuckDB failed on {peer}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let row: Vec<Option<f64>> = answer["row"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64())
            .collect();
        let label = format!("{peer} (DuckDB {})", answer["version"]);
        assert_eq!(row[0], Some(rank.attempts as f64), "{label}: attempts");
        assert_eq!(row[1], Some(rank.successes as f64), "{label}: successes");
        assert_eq!(row[2], Some(rank.failures as f64), "{label}: failures");
        let duck_rate = row[2].unwrap() / row[0].unwrap();
        assert!(
            (duck_rate - rank.failure_rate.value.unwrap()).abs() < 1e-12,
            "{label}: failure rate"
        );
        assert_eq!(
            row[10],
            rank.ttft_p50.n.map(|n| n as f64),
            "{label}: TTFT n"
        );
        for (name, duck, ours) in [
            (
                "quantile_disc TTFT 0.5 = nearest-rank P50",
                row[3],
                rank.ttft_p50.value,
            ),
            (
                "quantile_disc TTFT 0.95 = nearest-rank P95",
                row[4],
                rank.ttft_p95.value,
            ),
            (
                "quantile_cont TTFT 0.5 = linear P50",
                row[5],
                linear.ttft_p50.value,
            ),
            (
                "quantile_cont TTFT 0.95 = linear P95",
                row[6],
                linear.ttft_p95.value,
            ),
            (
                "quantile_disc E2E 0.5 = nearest-rank P50",
                row[7],
                rank.e2e_p50.value,
            ),
            (
                "quantile_cont E2E 0.5 = linear P50",
                row[8],
                linear.e2e_p50.value,
            ),
        ] {
            // The Parquet columns are ms like the trace; the core's latency figures are seconds.
            let (d, o) = (duck.unwrap_or(f64::NAN) / 1000.0, ours.unwrap_or(f64::NAN));
            assert!(
                (d - o).abs() <= 1e-9 * o.abs().max(1.0),
                "{label}: {name}: DuckDB {d} vs ours {o}"
            );
        }
        let events: usize = trace.attempts.iter().map(|a| a.events.len()).sum();
        assert_eq!(
            row[9].unwrap_or(0.0),
            events as f64,
            "{label}: every stream event in the list column"
        );
        let header: serde_json::Value =
            serde_json::from_str(answer["header"].as_str().expect("tracelab.header metadata"))
                .unwrap();
        assert_eq!(
            header["conditions"],
            serde_json::to_value(&trace.header.conditions).unwrap(),
            "{label}: conditions as metadata"
        );
    }
}

#[test]
fn parquet_needs_a_file() {
    let dir = temp_dir("parquet-stdout");
    let trace = dir.join("t.jsonl");
    std::fs::write(&trace, "{\"kind\":\"header\",\"schema\":\"tracelab.trace\",\"version\":1,\"tool\":{\"name\":\"t\",\"version\":\"1\"}}\n").unwrap();
    let output = tracelab()
        .args(["export", "--format", "parquet"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(
        !output.status.success() && String::from_utf8_lossy(&output.stderr).contains("--output")
    );
}

/// The query docs/parquet.md gives for a sharded run: its one SQL block after the marker.
fn documented_shard_query() -> String {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/parquet.md"),
    )
    .unwrap();
    let after = doc
        .split("<!-- the query the test runs")
        .nth(1)
        .expect("docs/parquet.md marks the shards' query");
    let block = after
        .split("```sql\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("an sql block after the marker");
    assert!(
        block.contains("'shards/*.parquet'"),
        "the documented query reads 'shards/*.parquet'"
    );
    block.to_string()
}

/// One Parquet file per shard, read together by DuckDB with no merge step: the documented query
/// gives `tracelab report --json` on the merged trace figure for figure, and `clock_offset_ms`
/// puts every shard's rows on the merged timeline.
#[test]
fn duckdb_on_per_shard_parquet_equals_report_on_the_merge() {
    let python = duckdb_python();
    let dir = temp_dir("parquet-shards");
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../public/samples/baseline-a.jsonl");
    let shards = crate::shards::shards_of_sample(&dir, &sample, 3);
    let parquet_dir = dir.join("shards");
    std::fs::create_dir_all(&parquet_dir).unwrap();
    for shard in &shards {
        let out = parquet_dir.join(shard.with_extension("parquet").file_name().unwrap());
        assert!(run(tracelab()
            .args(["export", "--format", "parquet"])
            .arg(shard)
            .arg("--output")
            .arg(&out))
        .status
        .success());
    }
    let merged = dir.join("merged.jsonl");
    assert!(run(tracelab()
        .arg("merge")
        .args(&shards)
        .arg("--output")
        .arg(&merged))
    .status
    .success());
    let merged_parquet = dir.join("merged.parquet");
    assert!(run(tracelab()
        .args(["export", "--format", "parquet"])
        .arg(&merged)
        .arg("--output")
        .arg(&merged_parquet))
    .status
    .success());
    let report: serde_json::Value =
        serde_json::from_slice(&run(tracelab().arg("report").arg(&merged).arg("--json")).stdout)
            .unwrap();

    let query = documented_shard_query().replace("'shards/*.parquet'", "?");
    let script = format!(
        r#"
import duckdb, json, sys
con = duckdb.connect()
cur = con.execute("""{query}""", [sys.argv[1]])
names = [d[0] for d in cur.description]
row = dict(zip(names, cur.fetchone()))
drift = con.execute("""
SELECT max(abs((s.start_ms + s.clock_offset_ms) - (m.start_ms + m.clock_offset_ms))), count(*)
FROM read_parquet(?) s JOIN read_parquet(?) m USING (id)""", [sys.argv[1], sys.argv[2]]).fetchone()
print(json.dumps({{"row": row, "drift_ms": drift[0], "joined": drift[1]}}))
"#
    );
    let glob = parquet_dir.join("*.parquet");
    let output = Command::new(&python)
        .arg("-c")
        .arg(&script)
        .arg(&glob)
        .arg(&merged_parquet)
        .output()
        .expect("run DuckDB's python");
    assert!(
        output.status.success(),
        "DuckDB failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let row = &answer["row"];
    assert_eq!(row["shards"], 3, "{row}");
    for figure in [
        "attempts",
        "successes",
        "failures",
        "failure_rate",
        "warmup_excluded",
        "quality_pass_rate",
        "qualified",
        "joint_rate",
        "ttft_p50_s",
        "ttft_p95_s",
        "ttft_samples",
        "e2e_p50_s",
        "e2e_p95_s",
    ] {
        let (duck, ours) = (row[figure].as_f64(), report[figure].as_f64());
        let (Some(duck), Some(ours)) = (duck, ours) else {
            panic!(
                "{figure}: DuckDB {} vs report {}",
                row[figure], report[figure]
            )
        };
        assert!(
            (duck - ours).abs() <= 1e-9 * ours.abs().max(1.0),
            "{figure}: DuckDB on the shards {duck} vs report on the merge {ours}"
        );
    }
    assert!(
        report["failures"].as_u64() > Some(0) && report["warmup_excluded"].as_u64() > Some(0),
        "the sample has failures and warm-up: {report}"
    );
    assert_eq!(
        answer["joined"].as_u64(),
        report["attempts"]
            .as_u64()
            .map(|n| n + report["warmup_excluded"].as_u64().unwrap())
    );
    assert!(
        answer["drift_ms"].as_f64().unwrap() <= 0.001,
        "one timeline: {}",
        answer["drift_ms"]
    );
}
