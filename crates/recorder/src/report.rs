//! `tracelab report FILE`: the lesson's metric card in a terminal, or one JSON object.
//!
//! A Trace Lab JSON Lines trace is read as a stream (`tracelab_core::parse::stream`): memory
//! grows with a few dozen bytes per attempt, not with the file, so a 10 GB trace reports on a
//! laptop. Every other file (the classroom CSV, a peer tool's result file) is read whole, as
//! `tracelab import` reads it. Both give the same card, warnings and errors.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use clap::Args;
use tracelab_core::parse::stream::{self, StreamError};
use tracelab_core::{card, Metrics, Settings};

use crate::settings_args::SettingsArgs;

#[derive(Args)]
pub struct ReportArgs {
    /// The trace to report on (or a peer tool's result file that `tracelab import` reads).
    pub file: PathBuf,
    #[command(flatten)]
    pub settings: SettingsArgs,
    /// Print one JSON object instead of the card.
    #[arg(long)]
    pub json: bool,
    /// Read a JSON Lines trace whole into memory, as the lab does, instead of as a stream
    /// (the same card; for checking one reader against the other).
    #[arg(long)]
    pub in_memory: bool,
}

pub fn run(args: ReportArgs) -> Result<(), String> {
    let name = args.file.display().to_string();
    let cannot_read = |e: std::io::Error| format!("cannot read {name}: {e}");
    if !args.in_memory {
        let mut file = File::open(&args.file).map_err(cannot_read)?;
        if stream::streamable(&mut file).map_err(cannot_read)? {
            let reader = BufReader::with_capacity(1 << 20, file);
            let streamed = match stream::read(&name, reader, |header| args.settings.settings(header)) {
                Ok(Ok(streamed)) => streamed,
                Ok(Err(bad_option)) => return Err(bad_option),
                Err(StreamError::Io(e)) => return Err(cannot_read(e)),
                Err(StreamError::Parse(e)) => return Err(e.to_string()),
            };
            let metrics = Metrics::compute(&streamed.index, &streamed.settings);
            let beside = Beside {
                header: &streamed.header,
                client: streamed.header.client.as_ref(),
                engine: &streamed.engine_summary,
                gpu: streamed.gpu_summary,
                index: &streamed.index,
                reuse: streamed.reuse.clone(),
                warmup_attempts: streamed.warmup_attempts,
                view: streamed.card_view(),
            };
            print_report(&args, &streamed.settings, &metrics, &streamed.warnings, &beside, || {
                card::render(&name, &streamed.card_view(), &streamed.settings, &metrics, args.settings.lang())
            });
            return Ok(());
        }
    }
    // Our own formats and every peer tool's file `tracelab import` reads.
    let (name, trace, _) = crate::import::load(&args.file, None, None)?;
    let settings = args.settings.settings(&trace.header)?;
    let index = tracelab_core::Index::build(&trace.attempts, settings.population);
    let metrics = Metrics::compute(&index, &settings);
    let engine = tracelab_core::engine_beside::engine_beside(&trace, &settings);
    let beside = Beside {
        header: &trace.header,
        client: trace.header.client.as_ref(),
        engine: &engine,
        gpu: tracelab_core::gpu_beside::gpu_beside(&trace, &settings).summary(),
        index: &index,
        reuse: tracelab_core::reuse::reuse_split(&trace.attempts, &settings),
        warmup_attempts: trace.warmup_count(),
        view: card::CardView::of_trace(&trace, &settings, &index),
    };
    print_report(&args, &settings, &metrics, &trace.warnings, &beside, || {
        card::render_text(&name, &trace, &settings, &metrics, args.settings.lang())
    });
    Ok(())
}

/// What the card sets beside the figures that the JSON carries too.
struct Beside<'a> {
    header: &'a tracelab_core::Header,
    client: Option<&'a tracelab_core::trace::ClientShare>,
    engine: &'a tracelab_core::engine_beside::EngineSummary,
    gpu: tracelab_core::gpu_beside::GpuSummary,
    index: &'a tracelab_core::Index,
    reuse: Option<tracelab_core::reuse::ReuseSplit>,
    warmup_attempts: usize,
    view: card::CardView<'a>,
}

fn print_report(
    args: &ReportArgs,
    settings: &Settings,
    metrics: &Metrics,
    warnings: &[String],
    beside: &Beside,
    card: impl FnOnce() -> String,
) {
    if args.json {
        let mut summary = metrics.summary_json(settings);
        // The recorder's own share and the engine beside the slow attempts, as on the card.
        summary["client_share"] = serde_json::to_value(beside.client).unwrap_or_default();
        summary["engine_beside"] = beside.engine.to_json();
        // Every interval the card prints (an open bound null, with why), the reuse split and the
        // five checks before the run counts as a baseline.
        let intervals = tracelab_core::compare::Intervals::compute(beside.index, settings, metrics);
        summary["first_token"] = serde_json::to_value(settings.population.first_token).unwrap_or_default();
        summary["intervals"] = card::intervals_json(metrics, &intervals);
        summary["reuse"] = serde_json::to_value(&beside.reuse).unwrap_or_default();
        let verdict = card::baseline_alone(beside.header, beside.warmup_attempts, settings, metrics, &intervals, &beside.gpu, beside.engine);
        summary["baseline"] = serde_json::to_value(&verdict).unwrap_or_default();
        // The run checks as the card words them, in the card's language.
        summary["run_checks"] = serde_json::json!(card::view_run_checks(&beside.view, settings, metrics, &intervals, args.settings.lang()));
        // What the reader noticed (a cut-off last line, a sampled file, …) travels with the
        // figures, so a script reading only the JSON sees it too.
        summary["warnings"] = serde_json::json!(warnings);
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        tracelab_recorder::out!("{}", card());
    }
}
