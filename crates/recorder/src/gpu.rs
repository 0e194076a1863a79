//! GPU telemetry on the run's clock: NVML (loaded at run time, so the recorder starts on machines
//! without an NVIDIA driver) or `nvidia-smi -lms`, else `unsupported` and no samples at all —
//! a GPU figure is never invented or borrowed from elsewhere.
//!
//! Only the GPU's index, utilisation and memory are read; never its name, UUID or serial.
//! GPUs elsewhere (a serving fleet) come from dcgm-exporter: see [`crate::dcgm`].

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use tracelab_core::{trace::GPU_UNSUPPORTED, GpuSample};

use crate::clock::Clock;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuMode {
    /// NVML if it loads, else nvidia-smi if it answers, else unsupported.
    Auto,
    /// The NVIDIA Management Library (libnvidia-ml.so.1), loaded at run time.
    Nvml,
    /// `nvidia-smi --query-gpu=… -lms`, read line by line.
    NvidiaSmi,
    /// No telemetry (the header then says `unsupported`).
    Off,
}

/// `--gpu` of `tracelab record`: a local source, or `dcgm=URL[,URL…]` (one URL per node).
#[derive(Debug, Clone, PartialEq)]
pub enum GpuSource {
    Local(GpuMode),
    Dcgm(Vec<url::Url>),
}

impl From<GpuMode> for GpuSource {
    fn from(mode: GpuMode) -> Self {
        GpuSource::Local(mode)
    }
}

/// clap's parser for `--gpu`: `auto`, `nvml`, `nvidia-smi`, `off` or `dcgm=URL[,URL…]`.
pub fn parse_source(value: &str) -> Result<GpuSource, String> {
    if let Some(list) = value.strip_prefix("dcgm=") {
        return crate::dcgm::parse_nodes(list).map(GpuSource::Dcgm);
    }
    <GpuMode as clap::ValueEnum>::from_str(value, true)
        .map(GpuSource::Local)
        .map_err(|_| "--gpu: expected auto, nvml, nvidia-smi, off or dcgm=URL[,URL…] (one dcgm-exporter URL per node)".into())
}

const QUERY: &str = "--query-gpu=index,utilization.gpu,memory.used,memory.total";
const FORMAT: &str = "--format=csv,noheader,nounits";

/// A telemetry source found to work, or why there is none.
pub enum Telemetry {
    /// Boxed: NVML's table of loaded functions is some 11 KB.
    Nvml {
        nvml: Box<Nvml>,
        gpus: u32,
    },
    NvidiaSmi {
        gpus: u32,
    },
    /// dcgm-exporter endpoints, one per node, with the GPUs each exported when probed.
    Dcgm {
        nodes: Vec<url::Url>,
        gpus: Vec<u32>,
    },
    Unsupported {
        why: String,
    },
}

impl Telemetry {
    /// The header's `gpu_telemetry` value.
    pub fn name(&self) -> &'static str {
        match self {
            Telemetry::Nvml { .. } => "nvml",
            Telemetry::NvidiaSmi { .. } => "nvidia-smi",
            Telemetry::Dcgm { .. } => "dcgm",
            Telemetry::Unsupported { .. } => GPU_UNSUPPORTED,
        }
    }

    /// One line for the terminal.
    pub fn describe(&self) -> String {
        match self {
            Telemetry::Nvml { gpus, .. } => format!("GPU telemetry: NVML, {gpus} GPU(s)"),
            Telemetry::NvidiaSmi { gpus } => format!("GPU telemetry: nvidia-smi, {gpus} GPU(s)"),
            Telemetry::Dcgm { gpus, .. } => {
                let per_node: Vec<String> = gpus
                    .iter()
                    .enumerate()
                    .map(|(i, n)| format!("node {i}: {n}"))
                    .collect();
                format!(
                    "GPU telemetry: dcgm-exporter, {} node(s) ({} GPU(s))",
                    gpus.len(),
                    per_node.join(", ")
                )
            }
            Telemetry::Unsupported { why } => {
                format!("GPU telemetry: unsupported ({why}); no GPU figure is recorded")
            }
        }
    }

    /// How many GPUs were seen, over every node.
    pub fn gpus(&self) -> Option<u32> {
        match self {
            Telemetry::Nvml { gpus, .. } | Telemetry::NvidiaSmi { gpus } => Some(*gpus),
            Telemetry::Dcgm { gpus, .. } => Some(gpus.iter().sum()),
            Telemetry::Unsupported { .. } => None,
        }
    }
}

/// Finds a working source for `--gpu`; a dcgm node that does not answer makes it unsupported,
/// saying which node (never its URL).
pub fn detect_source(source: &GpuSource) -> Telemetry {
    match source {
        GpuSource::Local(mode) => detect(*mode),
        GpuSource::Dcgm(nodes) => match crate::dcgm::detect(nodes) {
            Ok(gpus) => Telemetry::Dcgm {
                nodes: nodes.clone(),
                gpus,
            },
            Err(why) => Telemetry::Unsupported { why },
        },
    }
}

/// Finds a working source.
pub fn detect(mode: GpuMode) -> Telemetry {
    match mode {
        GpuMode::Off => Telemetry::Unsupported {
            why: "turned off with --gpu off".into(),
        },
        GpuMode::Nvml => detect_nvml().unwrap_or_else(|why| Telemetry::Unsupported { why }),
        GpuMode::NvidiaSmi => detect_smi().unwrap_or_else(|why| Telemetry::Unsupported { why }),
        GpuMode::Auto => match detect_nvml() {
            Ok(t) => t,
            Err(nvml) => match detect_smi() {
                Ok(t) => t,
                Err(smi) => Telemetry::Unsupported {
                    why: format!("{nvml}; {smi}"),
                },
            },
        },
    }
}

fn detect_nvml() -> Result<Telemetry, String> {
    let nvml = Nvml::init().map_err(|e| match e {
        nvml_wrapper::error::NvmlError::LibloadingError(_) => {
            "NVML not found (libnvidia-ml.so.1 is not installed)".to_string()
        }
        other => format!("NVML did not start: {other}"),
    })?;
    let gpus = nvml
        .device_count()
        .map_err(|e| format!("NVML cannot count GPUs: {e}"))?;
    if gpus == 0 {
        return Err("NVML sees no GPU".into());
    }
    Ok(Telemetry::Nvml {
        nvml: Box::new(nvml),
        gpus,
    })
}

/// nvidia-smi gets an empty environment but for where to find itself and its library, so no
/// secret of ours (the API key) ever reaches a child process. On its own process group, a
/// Ctrl-C in the terminal reaches only the recorder, which keeps sampling through the grace
/// period and then stops the child itself.
fn smi_command() -> Command {
    let mut cmd = Command::new("nvidia-smi");
    cmd.stdin(Stdio::null()).stderr(Stdio::null()).env_clear();
    for keep in ["PATH", "LD_LIBRARY_PATH"] {
        if let Some(value) = std::env::var_os(keep) {
            cmd.env(keep, value);
        }
    }
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

/// One query, with a deadline: a wedged driver can make nvidia-smi hang.
fn detect_smi() -> Result<Telemetry, String> {
    let mut child = smi_command()
        .args([QUERY, FORMAT])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|_| "nvidia-smi not found on PATH".to_string())?;
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let lines: Vec<String> = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect();
        let _ = tx.send(lines);
    });
    let lines = match rx.recv_timeout(Duration::from_secs(5)) {
        Ok(lines) => lines,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err("nvidia-smi did not answer within 5 s".into());
        }
    };
    let status = child.wait().map_err(|e| format!("nvidia-smi: {e}"))?;
    let gpus = lines.iter().filter(|l| parse_smi_line(l).is_some()).count() as u32;
    if !status.success() || gpus == 0 {
        return Err("nvidia-smi found no GPU it could read".into());
    }
    Ok(Telemetry::NvidiaSmi { gpus })
}

/// `0, 35, 1234, 81559` → (gpu, util %, used MiB, total MiB); `[N/A]` and the like → None.
pub fn parse_smi_line(line: &str) -> Option<(u32, f64, f64, f64)> {
    let mut cells = line.split(',').map(str::trim);
    let gpu = cells.next()?.parse().ok()?;
    let util: f64 = cells.next()?.parse().ok()?;
    let used: f64 = cells.next()?.parse().ok()?;
    let total: f64 = cells.next()?.parse().ok()?;
    let sane = util.is_finite() && (0.0..=100.0).contains(&util) && used >= 0.0 && total >= 0.0;
    sane.then_some((gpu, util, used, total))
}

/// A running sampler; [`Sampler::stop`] ends it.
pub struct Sampler {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    child: Option<Child>,
    /// One scraper per dcgm node, each stopped by dropping its sender.
    nodes: Vec<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Sampler {
    /// Starts sampling every `interval`, handing each sample to `sink`.
    pub fn start(
        telemetry: Telemetry,
        interval: Duration,
        clock: Clock,
        sink: impl Fn(GpuSample) + Send + Sync + 'static,
    ) -> Result<Sampler, String> {
        match telemetry {
            Telemetry::Dcgm { nodes, .. } => {
                let sink: std::sync::Arc<dyn Fn(GpuSample) + Send + Sync> =
                    std::sync::Arc::new(sink);
                let mut threads = Vec::new();
                for (i, url) in nodes.into_iter().enumerate() {
                    let (stop, stopped) = mpsc::channel::<()>();
                    let sink = sink.clone();
                    let thread = std::thread::Builder::new()
                        .name(format!("tracelab-dcgm-{i}"))
                        .spawn(move || {
                            crate::dcgm::sample_node(i as u32, url, interval, clock, stopped, sink)
                        })
                        .map_err(|e| format!("cannot start the DCGM scraper: {e}"))?;
                    threads.push((stop, thread));
                }
                Ok(Sampler {
                    stop: None,
                    thread: None,
                    child: None,
                    nodes: threads,
                })
            }
            Telemetry::Unsupported { .. } => Ok(Sampler {
                stop: None,
                thread: None,
                child: None,
                nodes: Vec::new(),
            }),
            Telemetry::Nvml { nvml, gpus } => {
                let (stop, stopped) = mpsc::channel::<()>();
                let thread = std::thread::Builder::new()
                    .name("tracelab-nvml".into())
                    .spawn(move || {
                        let devices: Vec<_> = (0..gpus)
                            .filter_map(|i| nvml.device_by_index(i).ok().map(|d| (i, d)))
                            .collect();
                        let mut next = Instant::now();
                        loop {
                            for (i, device) in &devices {
                                let t_ms = clock.now_ms();
                                if let (Ok(util), Ok(mem)) =
                                    (device.utilization_rates(), device.memory_info())
                                {
                                    sink(GpuSample {
                                        t_ms,
                                        node: None,
                                        gpu: *i,
                                        util_pct: f64::from(util.gpu.min(100)),
                                        mem_used_mib: mem.used as f64 / 1_048_576.0,
                                        mem_total_mib: mem.total as f64 / 1_048_576.0,
                                    });
                                }
                            }
                            next += interval;
                            let wait = next.saturating_duration_since(Instant::now());
                            if !matches!(
                                stopped.recv_timeout(wait),
                                Err(mpsc::RecvTimeoutError::Timeout)
                            ) {
                                break;
                            }
                        }
                    })
                    .map_err(|e| format!("cannot start the NVML sampler: {e}"))?;
                Ok(Sampler {
                    stop: Some(stop),
                    thread: Some(thread),
                    child: None,
                    nodes: Vec::new(),
                })
            }
            Telemetry::NvidiaSmi { .. } => {
                let mut child = smi_command()
                    .args([
                        QUERY,
                        FORMAT,
                        "-lms",
                        &interval.as_millis().max(1).to_string(),
                    ])
                    .stdout(Stdio::piped())
                    .spawn()
                    .map_err(|e| format!("cannot start nvidia-smi: {e}"))?;
                let stdout = child.stdout.take().expect("piped");
                // The reader is not joined: it ends when the child's pipe closes, and the writer
                // drops any sample that arrives after the footer.
                std::thread::Builder::new()
                    .name("tracelab-nvidia-smi".into())
                    .spawn(move || {
                        for line in BufReader::new(stdout).lines() {
                            let Ok(line) = line else { break };
                            let t_ms = clock.now_ms();
                            if let Some((gpu, util_pct, mem_used_mib, mem_total_mib)) =
                                parse_smi_line(&line)
                            {
                                sink(GpuSample {
                                    t_ms,
                                    node: None,
                                    gpu,
                                    util_pct,
                                    mem_used_mib,
                                    mem_total_mib,
                                });
                            }
                        }
                    })
                    .map_err(|e| format!("cannot start the nvidia-smi reader: {e}"))?;
                Ok(Sampler {
                    stop: None,
                    thread: None,
                    child: Some(child),
                    nodes: Vec::new(),
                })
            }
        }
    }

    pub fn stop(mut self) {
        self.stop.take();
        for (stop, thread) in self.nodes.drain(..) {
            drop(stop);
            let _ = thread.join();
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smi_lines() {
        assert_eq!(
            parse_smi_line("0, 35, 1234, 81559"),
            Some((0, 35.0, 1234.0, 81559.0))
        );
        assert_eq!(parse_smi_line("1,0,0,16384"), Some((1, 0.0, 0.0, 16384.0)));
        assert_eq!(parse_smi_line("0, [N/A], 1234, 81559"), None);
        assert_eq!(parse_smi_line("0, 135, 1, 2"), None);
        assert_eq!(parse_smi_line("NVIDIA-SMI has failed"), None);
        assert_eq!(parse_smi_line(""), None);
    }

    #[test]
    fn off_is_unsupported() {
        let t = detect(GpuMode::Off);
        assert_eq!(t.name(), "unsupported");
    }
}
