//! `tracelab import IN --output OUT.jsonl`: a peer benchmark tool's result file as a trace in
//! format v1 (the same importers the lab's upload uses).

use std::path::{Path, PathBuf};

use clap::Args;
use tracelab_core::{format, parse::parse_jsonl, write, Outcome, Phase, Trace};
use tracelab_peers::import::{self, Imported};

const AFTER_HELP: &str = "\
Recognised from the content, not the file name:
  vLLM bench serve      --save-result --save-detailed JSON (per-request ttfts, itls, errors, …)
  NVIDIA AIPerf         profile_export.jsonl (one record per request)
  guidellm              benchmarks.json (0.5 layout; one trace per benchmark)
  Ray LLMPerf           *_individual_responses.json (no timestamps: TTFT and E2E only)
  Trace Lab             a trace (.jsonl or classroom .csv) is rewritten as JSON Lines

Aggregate-only files (vLLM without --save-detailed, AIPerf profile_export_aiperf.json,
GenAI-Perf profile_export_genai_perf.json, LLMPerf *_summary.json) are refused with the name
of the per-request file to use; AIPerf's and LLMPerf's can be given with --summary instead, so
the trace keeps the tool's own figures and `tracelab export --format card-md` can set them
beside ours.

A guidellm file with several benchmarks needs --benchmark N (the error lists them).
Response text is never kept. OUTPUT is never overwritten without --force, and is left
untouched when the import fails.";

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportArgs {
    /// The result file to import.
    pub input: PathBuf,
    /// Where to write the trace (JSON Lines, trace format v1).
    #[arg(long, short, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// Which benchmark of a guidellm file to import (1-based); required when it holds several.
    #[arg(long, value_name = "N")]
    pub benchmark: Option<usize>,
    /// The tool's own summary of the same run (AIPerf profile_export_aiperf.json, LLMPerf
    /// *_summary.json), kept in the header as the tool's figures.
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Overwrite OUTPUT if it exists.
    #[arg(long)]
    pub force: bool,
}

fn read(path: &Path) -> Result<(String, Vec<u8>), String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    Ok((name, bytes))
}

/// Reads any supported file as one trace: the chosen benchmark of a guidellm file, with a
/// summary's figures attached when one is given. Shared by `import`, `export` and `report`.
pub fn load(
    path: &Path,
    benchmark: Option<usize>,
    summary: Option<&Path>,
) -> Result<(String, Trace, Imported), String> {
    let (name, bytes) = read(path)?;
    let imported = import::load_any_bytes(&name, &bytes).map_err(|e| e.to_string())?;
    let count = imported.traces.len();
    let chosen = match (count, benchmark) {
        (1, None) | (1, Some(1)) => imported.traces[0].trace.clone(),
        (_, Some(n)) => imported.clone().pick(&name, n).map_err(|e| e.to_string())?.trace,
        (_, None) => {
            return Err(format!(
                "{name} holds {count} benchmarks; choose one with --benchmark N (`tracelab import` and `tracelab export` take it):\n  {}",
                imported.labels().join("\n  ")
            ))
        }
    };
    let mut trace = chosen;
    if let Some(summary) = summary {
        let (summary_name, bytes) = read(summary)?;
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{summary_name}: not UTF-8 text"))?;
        let figures =
            import::peer_figures_from_aggregate(&summary_name, &text).map_err(|e| e.to_string())?;
        import::attach_summary(&mut trace, &figures).map_err(|e| format!("{summary_name}: {e}"))?;
    }
    Ok((name, trace, imported))
}

pub fn run(args: ImportArgs) -> Result<(), String> {
    let out = args.output.display().to_string();
    tracelab_recorder::writer::refuse_overwrite(&args.output, args.force, "")?;
    let (name, trace, imported) = load(&args.input, args.benchmark, args.summary.as_deref())?;
    let text = write::to_jsonl(&trace);
    // The written file must read back: never leave a trace the lab would refuse.
    parse_jsonl(&out, &text).map_err(|e| {
        format!("the converted trace does not read back ({e}); nothing was written")
    })?;
    let tmp = args
        .output
        .with_extension(format!("jsonl.tmp-{}", std::process::id()));
    std::fs::write(&tmp, &text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &args.output).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {out}: {e}")
    })?;

    let measured = trace.attempts.iter().filter(|a| a.phase == Phase::Measure);
    let successes = measured.clone().filter(|a| a.outcome.is_success()).count();
    let failures = measured.clone().filter(|a| !a.outcome.is_success()).count();
    let cancelled = measured.filter(|a| a.outcome == Outcome::Cancelled).count();
    let warmup = trace.warmup_count();
    let d = &imported.detected;
    let version = d
        .version
        .as_deref()
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    tracelab_recorder::outln!(
        "imported {} from {name} ({}{version}, {}): {}, {} ({cancelled} cancelled), {warmup} warm-up → {out}",
        format::count(trace.attempts.len(), "attempt", "attempts"),
        d.tool.name(),
        d.layout,
        format::count(successes, "complete success", "complete successes"),
        format::count(failures, "failure", "failures"),
    );
    let figures = import::figures(&trace).len();
    if figures > 0 {
        tracelab_recorder::outln!(
            "kept {figures} of the tool's own figures: `tracelab export {out} --format card-md` sets them beside ours"
        );
    }
    for w in &trace.warnings {
        eprintln!("note: {w}");
    }
    Ok(())
}
