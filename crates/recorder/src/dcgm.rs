//! Fleet GPU telemetry: scraping NVIDIA dcgm-exporter's Prometheus endpoint (`--gpu dcgm=URL,…`)
//! on the run's clock, for GPUs that are not on the recorder's host.
//!
//! Each URL is a node, named only by its position in the list (0, 1, …). Of every series only the
//! `gpu` label (the GPU's index on its node) and the value are read: the exporter's `UUID`,
//! `Hostname`, `modelName`, `pci_bus_id`, pod and driver labels are dropped as they are parsed,
//! and the URLs themselves are never written or printed.

use std::collections::BTreeMap;
use std::time::Duration;

use tracelab_core::GpuSample;

use crate::clock::Clock;
use crate::transport::Transport;

/// The series read: utilisation (%), framebuffer used / free / reserved (MiB).
const UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
const FB_USED: &str = "DCGM_FI_DEV_FB_USED";
const FB_FREE: &str = "DCGM_FI_DEV_FB_FREE";
const FB_RESERVED: &str = "DCGM_FI_DEV_FB_RESERVED";

/// `dcgm=URL[,URL…]` → the node URLs, in order. Errors never echo a URL (it names a host).
pub fn parse_nodes(list: &str) -> Result<Vec<url::Url>, String> {
    crate::scrape::parse_urls(
        list,
        "--gpu dcgm=…",
        "list the exporters as dcgm=URL,URL",
        "http://10.0.0.5:9400/metrics",
    )
}

/// One GPU's reading from one scrape: (gpu index, util %, used MiB, total MiB).
pub type Reading = (u32, f64, f64, f64);

/// Reads the GPUs out of one exposition (Prometheus text format 0.0.4). A GPU is reported only
/// when its utilisation, used and free framebuffer are all present and sane; total memory is
/// used + free + reserved (reserved when exported), as `nvidia-smi`'s memory.total counts it.
/// Series of a MIG instance (a non-empty `GPU_I_ID` label) are not split out and are skipped.
pub fn parse_exposition(text: &str) -> Vec<Reading> {
    #[derive(Default)]
    struct Gpu {
        util: Option<f64>,
        used: Option<f64>,
        free: Option<f64>,
        reserved: Option<f64>,
        /// A series seen twice (e.g. MIG without instance labels): ambiguous, so not reported.
        ambiguous: bool,
    }
    let mut gpus: BTreeMap<u32, Gpu> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(series) = parse_series(line) else {
            continue;
        };
        if !matches!(series.name, UTIL | FB_USED | FB_FREE | FB_RESERVED) || series.mig_instance {
            continue;
        }
        let Some(gpu) = series.gpu else { continue };
        let entry = gpus.entry(gpu).or_default();
        let slot = match series.name {
            UTIL => &mut entry.util,
            FB_USED => &mut entry.used,
            FB_FREE => &mut entry.free,
            _ => &mut entry.reserved,
        };
        if slot.replace(series.value).is_some() {
            entry.ambiguous = true;
        }
    }
    gpus.into_iter()
        .filter_map(|(gpu, g)| {
            let (util, used, free) = (g.util?, g.used?, g.free?);
            let reserved = g.reserved.unwrap_or(0.0);
            let sane =
                (0.0..=100.0).contains(&util) && used >= 0.0 && free >= 0.0 && reserved >= 0.0;
            (sane && !g.ambiguous).then_some((gpu, util, used, used + free + reserved))
        })
        .collect()
}

struct Series<'a> {
    name: &'a str,
    gpu: Option<u32>,
    mig_instance: bool,
    value: f64,
}

/// `NAME{label="v",…} VALUE [TIMESTAMP]`; only the `gpu` and `GPU_I_ID` labels are kept (the
/// exporter's `UUID`, `Hostname`, `modelName`, … are dropped as they are read).
fn parse_series(line: &str) -> Option<Series<'_>> {
    let s = crate::prom::parse_line(line, &["gpu", "GPU_I_ID"])?;
    if !s.value.is_finite() {
        return None;
    }
    let gpu = s.label("gpu").and_then(|g| g.parse().ok());
    let mig_instance = s.label("GPU_I_ID").is_some_and(|v| !v.is_empty());
    Some(Series {
        name: s.name,
        gpu,
        mig_instance,
        value: s.value,
    })
}

async fn scrape(client: &Transport, url: &url::Url) -> Result<Vec<Reading>, String> {
    let text = crate::scrape::fetch(client, url).await?;
    let readings = parse_exposition(&text);
    if readings.is_empty() {
        return Err(format!(
            "exports no GPU with {UTIL}, {FB_USED} and {FB_FREE}"
        ));
    }
    Ok(readings)
}

/// One scrape of every node, off any async runtime the caller is in. Ok: GPUs per node.
pub fn detect(nodes: &[url::Url]) -> Result<Vec<u32>, String> {
    let nodes = nodes.to_vec();
    std::thread::spawn(move || -> Result<Vec<u32>, String> {
        let rt = crate::scrape::runtime("DCGM")?;
        let client = crate::scrape::client("DCGM")?;
        nodes
            .iter()
            .enumerate()
            .map(|(i, url)| {
                rt.block_on(scrape(&client, url))
                    .map(|r| r.len() as u32)
                    .map_err(|why| format!("DCGM exporter of node {i} {why}"))
            })
            .collect()
    })
    .join()
    .map_err(|_| "the DCGM probe stopped unexpectedly".to_string())?
}

/// Scrapes `url` every `interval` until `stopped` closes, handing each GPU's reading to `sink`
/// stamped with the run's clock when the response had arrived, and with `node`.
pub fn sample_node(
    node: u32,
    url: url::Url,
    interval: Duration,
    clock: Clock,
    stopped: std::sync::mpsc::Receiver<()>,
    sink: std::sync::Arc<dyn Fn(GpuSample) + Send + Sync>,
) {
    let (Ok(rt), Ok(client)) = (
        crate::scrape::runtime("DCGM"),
        crate::scrape::client("DCGM"),
    ) else {
        return;
    };
    crate::scrape::every(interval, &stopped, || {
        // A failed scrape leaves a gap: nothing is carried over or interpolated.
        if let Ok(readings) = rt.block_on(scrape(&client, &url)) {
            let t_ms = clock.now_ms();
            for (gpu, util_pct, mem_used_mib, mem_total_mib) in readings {
                sink(GpuSample {
                    t_ms,
                    node: Some(node),
                    gpu,
                    util_pct,
                    mem_used_mib,
                    mem_total_mib,
                });
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_keep_only_gpu_and_value() {
        let line = r#"DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-x",Hostname="a\"b,}c",modelName="NVIDIA L4"} 1234 1700000000000"#;
        let s = parse_series(line).unwrap();
        assert_eq!(
            (s.name, s.gpu, s.mig_instance, s.value),
            ("DCGM_FI_DEV_FB_USED", Some(1), false, 1234.0)
        );
        assert_eq!(parse_series("DCGM_FI_DEV_GPU_UTIL 7").unwrap().gpu, None);
        assert!(parse_series(r#"X{gpu="0"} NaN"#).is_none());
        assert!(parse_series(r#"X{gpu="0" 1"#).is_none());
    }

    #[test]
    fn a_gpu_needs_all_three_series() {
        let text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 10\nDCGM_FI_DEV_FB_FREE{gpu=\"0\"} 90\n\
                    DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 50\nDCGM_FI_DEV_FB_USED{gpu=\"1\"} 10\n";
        assert_eq!(parse_exposition(text), vec![(0, 50.0, 10.0, 100.0)]);
        let mig = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",GPU_I_ID=\"1\"} 5\nDCGM_FI_DEV_FB_USED{gpu=\"0\",GPU_I_ID=\"1\"} 1\n\
                   DCGM_FI_DEV_FB_FREE{gpu=\"0\",GPU_I_ID=\"1\"} 2\n";
        assert!(
            parse_exposition(mig).is_empty(),
            "MIG instances are not folded into their GPU"
        );
        let twice = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 6\nDCGM_FI_DEV_FB_USED{gpu=\"0\"} 1\nDCGM_FI_DEV_FB_FREE{gpu=\"0\"} 2\n";
        assert!(
            parse_exposition(twice).is_empty(),
            "two values for one GPU: not guessed"
        );
    }

    #[test]
    fn real_exporter_output() {
        // Read in place through the test kit.
        let read = |name: &str| tracelab_testkit::read_fixture_text(&format!("dcgm/{name}"));
        // L4: free 22563, used 0, reserved 470 MiB (23033 MiB, what nvidia-smi calls total).
        assert_eq!(
            parse_exposition(&read("dcgm_exporter_l4_kops_metrics.txt")),
            vec![(0, 0.0, 0.0, 23033.0)]
        );
        assert_eq!(
            parse_exposition(&read("dcgm_exporter_l40s_upcloud_metrics.txt")),
            vec![(0, 0.0, 0.0, 45459.0 + 608.0)]
        );
        // A vGPU (GRID A100-10C): its 10 GiB profile less 1 MiB.
        assert_eq!(
            parse_exposition(&read("dcgm_exporter_grid_a100_vgpu_vks_metrics.txt")),
            vec![(0, 0.0, 0.0, 9323.0 + 916.0)]
        );
    }

    #[test]
    fn node_urls() {
        let nodes = parse_nodes("http://a:9400, http://b:9400/metrics").unwrap();
        assert_eq!(
            nodes.iter().map(|u| u.path()).collect::<Vec<_>>(),
            ["/metrics", "/metrics"]
        );
        let err = parse_nodes("http://a:9400,secret-host:9400").unwrap_err();
        assert!(err.contains("number 2") && !err.contains("secret"), "{err}");
        assert!(parse_nodes("http://a:9400,,http://b")
            .unwrap_err()
            .contains("empty"));
    }
}
