//! `tracelab report FILE`: the lesson's metric card in a terminal, or one JSON object.

use std::path::PathBuf;

use clap::Args;
use tracelab_core::{card, Metrics};

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
}

pub fn run(args: ReportArgs) -> Result<(), String> {
    // Our own formats and every peer tool's file `tracelab import` reads.
    let (name, trace, _) = crate::import::load(&args.file, None, None)?;
    let settings = args.settings.settings(&trace.header)?;
    let metrics = Metrics::of(&trace.attempts, &settings);
    if args.json {
        let mut summary = metrics.summary_json(&settings);
        // What the reader noticed (a cut-off last line, a sampled file, …) travels with the
        // figures, so a script reading only the JSON sees it too.
        summary["warnings"] = serde_json::json!(trace.warnings);
        println!("{}", serde_json::to_string_pretty(&summary).expect("json"));
    } else {
        print!("{}", card::render_text(&name, &trace, &settings, &metrics, args.settings.lang()));
    }
    Ok(())
}
