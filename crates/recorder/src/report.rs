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
use tracelab_core::session::Sessions;
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
            let streamed = match tracelab_core::streamed::read(&name, reader, |header| {
                args.settings.settings(header)
            }) {
                Ok(Ok(streamed)) => streamed,
                Ok(Err(bad_option)) => return Err(bad_option),
                Err(StreamError::Io(e)) => return Err(cannot_read(e)),
                Err(StreamError::Parse(e)) => return Err(e.to_string()),
            };
            let metrics = Metrics::compute(&streamed.index, &streamed.settings);
            print_report(
                &args,
                &name,
                &streamed.settings,
                &metrics,
                &streamed.card_view(),
                streamed.sessions.as_ref(),
            );
            return Ok(());
        }
    }
    // Our own formats and every peer tool's file `tracelab import` reads.
    let (name, trace, _) = crate::import::load(&args.file, None, None)?;
    let settings = args.settings.settings(&trace.header)?;
    let index = tracelab_core::Index::build(&trace.attempts, settings.population);
    let metrics = Metrics::compute(&index, &settings);
    print_report(
        &args,
        &name,
        &settings,
        &metrics,
        &card::CardView::of_trace(&trace, &settings, &index),
        Sessions::of(&trace.attempts, &settings).as_ref(),
    );
    Ok(())
}

/// The card, or the JSON: both from the same view of the run (a whole trace's or a streamed
/// one's), so every check beside the figures is computed once.
fn print_report(
    args: &ReportArgs,
    name: &str,
    settings: &Settings,
    metrics: &Metrics,
    view: &card::CardView,
    sessions: Option<&Sessions>,
) {
    if args.json {
        let mut summary = metrics.summary_json(settings);
        // The recorder's own share and the engine beside the slow attempts, as on the card.
        summary["client_share"] =
            serde_json::to_value(view.header.client.as_ref()).unwrap_or_default();
        summary["engine_beside"] = view.engine.to_json();
        // Every interval the card prints (an open bound null, with why), the reuse split and the
        // five checks before the run counts as a baseline.
        let intervals = tracelab_core::compare::Intervals::compute(view.index, settings, metrics);
        summary["first_token"] =
            serde_json::to_value(settings.population.first_token).unwrap_or_default();
        summary["latency_from"] =
            serde_json::to_value(settings.population.latency_from).unwrap_or_default();
        summary["intervals"] = card::intervals_json_keyed(metrics, &intervals, &|k| {
            tracelab_core::Metrics::summary_key(k, settings)
        });
        summary["autocorrelation"] =
            serde_json::json!(tracelab_core::compare::dependence::autocorrelations(
                view.index,
                tracelab_core::units::ms_from_s(settings.ttft_threshold_s),
                settings.comparison
            ));
        summary["reuse"] = serde_json::to_value(&view.reuse).unwrap_or_default();
        let verdict = card::baseline_alone(
            view.header,
            view.warmup_attempts,
            settings,
            metrics,
            &intervals,
            &view.gpu,
            &view.engine,
        );
        summary["baseline"] = serde_json::to_value(&verdict).unwrap_or_default();
        // The run checks as the card words them, in the card's language.
        summary["run_checks"] = serde_json::json!(card::view_run_checks(
            view,
            settings,
            metrics,
            &intervals,
            args.settings.lang()
        ));
        // What the reader noticed (a cut-off last line, a sampled file, …) travels with the
        // figures, so a script reading only the JSON sees it too.
        summary["warnings"] = serde_json::json!(view.warnings);
        // Conversations judged as users live them: one key per figure, its interval beside it
        // (`…_interval`), and the rows by turn; null for a trace without sessions.
        summary["sessions"] = sessions.map_or(serde_json::Value::Null, Sessions::json);
        tracelab_recorder::outln!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        tracelab_recorder::out!(
            "{}",
            card::render(name, view, settings, metrics, args.settings.lang())
        );
        if let Some(s) = sessions {
            tracelab_recorder::outln!();
            for line in s.lines(args.settings.lang()) {
                tracelab_recorder::outln!("{line}");
            }
        }
    }
}
