//! `tracelab probe`: the safe capability scan. It writes a header-only trace saying what this
//! machine could measure (GPU telemetry) and, with `--base-url`, whether the endpoint accepts a
//! TCP connection — without sending any HTTP request and without reading any secret.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Map};
use tracelab_core::trace::Capabilities;
use tracelab_core::{write, Header};

use crate::clock::Clock;
use crate::gpu::{self, GpuMode};
use crate::writer::TraceWriter;

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Where to write the header-only trace.
    #[arg(long, short, value_name = "FILE")]
    pub output: PathBuf,
    /// Also check that this endpoint accepts a TCP connection (no HTTP request is sent; the URL is
    /// not written).
    #[arg(
        long,
        env = "TRACELAB_BASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub base_url: Option<String>,
    /// Which GPU telemetry source to try.
    #[arg(long, value_enum, default_value = "auto")]
    pub gpu: GpuMode,
    /// Overwrite --output if it exists.
    #[arg(long)]
    pub force: bool,
    /// Print nothing.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Whether something accepts TCP connections at the URL's host and port.
fn reachable(base_url: &str) -> Result<bool, String> {
    let url = url::Url::parse(base_url.trim()).map_err(|_| {
        "--base-url is not a valid URL; expected something like http://localhost:8000/v1"
            .to_string()
    })?;
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err("--base-url needs a host, e.g. http://localhost:8000/v1".into());
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Ok(addrs) = (host, port).to_socket_addrs() else {
        return Ok(false);
    };
    Ok(addrs
        .into_iter()
        .any(|a| TcpStream::connect_timeout(&a, Duration::from_secs(3)).is_ok()))
}

pub fn run(args: ProbeArgs) -> Result<(), String> {
    let writer = TraceWriter::create(&args.output, args.force)?;
    let clock = Clock::start();
    let telemetry = gpu::detect(args.gpu);
    let gpus = telemetry.gpus();
    let endpoint = args.base_url.as_deref().map(reachable).transpose()?;
    let header = Header {
        wall_clock_anchor_utc: clock.anchor_utc(),
        capabilities: Capabilities {
            workload_executed: false,
            inference_benchmark: false,
            gpu_telemetry: telemetry.name().to_string(),
        },
        ..Header::default()
    };
    // Both keys are always written, as docs/trace-format.md promises: 0 GPUs when telemetry is
    // unsupported, `null` reachability when no --base-url was given.
    let mut probe = Map::new();
    probe.insert("gpus".into(), json!(gpus.unwrap_or(0)));
    probe.insert("endpoint_reachable".into(), json!(endpoint));
    let mut extra = Map::new();
    extra.insert("probe".into(), serde_json::Value::Object(probe));
    writer.header(&write::header_line_with(&header, &extra))?;
    if !args.quiet {
        crate::outln!("{}", telemetry.describe());
        match endpoint {
            Some(true) => crate::outln!("Endpoint: accepts TCP connections (no request was sent)"),
            Some(false) => crate::outln!(
                "Endpoint: not reachable; is the server running, and is --base-url right?"
            ),
            None => {}
        }
        crate::outln!(
            "Wrote the capability scan to {} (no workload was executed)",
            args.output.display()
        );
    }
    Ok(())
}
