//! The lab's peer panel of an imported trace, written out: the rows of
//! [`peer_rows`](tracelab_core::export::peer_rows) the panel shows, each in the reader's language.
//! Computed in the lab's second bundle (with the importers) and shown by the lab as it is
//! ([`PeerTable`] is the core's, so the lab reads it without linking this crate).

use tracelab_core::export::{peer_rows, peer_value, PeerTable, PeerTableRow};
use tracelab_core::reproduce::ReproSummary;
use tracelab_core::trace::peer::Reproducibility;
use tracelab_core::{Lang, Settings, Trace};

/// [`peer_rows`](tracelab_core::export::peer_rows) for the panel: the headline rows, written in `lang`.
pub fn peer_table(trace: &Trace, settings: &Settings, lang: Lang) -> PeerTable {
    let all = peer_rows(trace, settings);
    let summary = ReproSummary::of(&all);
    let (matched, reproducible) = (summary.matching, summary.recomputed);
    let rows = all
        .into_iter()
        .filter(|r| r.headline)
        .map(|r| {
            let approx = matches!(r.reproducibility, Reproducibility::Approximate(_));
            let (symbol, mark) = match (r.matches, approx) {
                (Some(true), _) => (" ✓", "match"),
                (Some(false), true) => (" ≈", "approx"),
                (Some(false), false) => (" ✗", "mismatch"),
                (None, _) => ("", ""),
            };
            let why = r
                .note
                .as_ref()
                .map(|n| n.get(lang).to_string())
                .unwrap_or_else(|| r.how_lesson.get(lang).to_string());
            let why = match &r.reproducibility {
                Reproducibility::Approximate(reason) | Reproducibility::Not(reason) => {
                    format!("{why} ({reason})")
                }
                Reproducibility::Exact => why,
            };
            PeerTableRow {
                key: r.key.clone(),
                label: r.label.get(lang).to_string(),
                tool_key: r.tool_key.clone(),
                said: peer_value(r.tool_said, r.unit),
                ours: r
                    .tool_method
                    .map(|v| format!("{}{symbol}", peer_value(v, r.unit)))
                    .unwrap_or_else(|| "—".into()),
                lesson: r
                    .lesson
                    .map(|v| peer_value(v, r.unit))
                    .unwrap_or_else(|| "—".into()),
                why,
                mark: mark.to_string(),
            }
        })
        .collect();
    PeerTable {
        matched,
        reproducible,
        rows,
    }
}
