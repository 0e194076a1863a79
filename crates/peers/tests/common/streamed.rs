//! The streamed reader (`streamed::read` over `parse::stream`, what `tracelab report` uses for JSON Lines) against the
//! whole-file reader (`import::load_any_bytes`, what the lab and `tracelab import` use), on the
//! same bytes: the same card in both languages, the same JSON with its warnings, or the same
//! error.

use std::io::{BufReader, Cursor};

use tracelab_core::parse::stream::{self, StreamError};
use tracelab_core::{card, Lang, Metrics, Settings};
use tracelab_peers::import;

/// What a reader made of a file.
#[derive(Debug, PartialEq)]
pub enum Report {
    Card {
        en: String,
        zh: String,
        json: String,
    },
    Refused(String),
}

fn card_of(
    render: impl Fn(Lang) -> String,
    metrics: &Metrics,
    settings: &Settings,
    warnings: &[String],
) -> Report {
    let mut json = metrics.summary_json(settings);
    json["warnings"] = serde_json::json!(warnings);
    Report::Card {
        en: render(Lang::En),
        zh: render(Lang::Zh),
        json: serde_json::to_string_pretty(&json).unwrap(),
    }
}

fn settings(header: &tracelab_core::Header, tweak: fn(&mut Settings)) -> Result<Settings, String> {
    let mut s = Settings::from_header(header);
    tweak(&mut s);
    s.validate().map(|()| s).map_err(|e| e.to_string())
}

/// The whole-file reader's report.
pub fn whole(name: &str, bytes: &[u8], tweak: fn(&mut Settings)) -> Report {
    let imported = match import::load_any_bytes(name, bytes) {
        Ok(imported) => imported,
        Err(e) => return Report::Refused(e.to_string()),
    };
    assert_eq!(imported.traces.len(), 1, "{name}: one trace");
    let trace = &imported.traces[0].trace;
    let s = match settings(&trace.header, tweak) {
        Ok(s) => s,
        Err(e) => return Report::Refused(e),
    };
    let m = Metrics::of(&trace.attempts, &s);
    card_of(
        |lang| card::render_text(name, trace, &s, &m, lang),
        &m,
        &s,
        &trace.warnings,
    )
}

/// The streamed reader's report through a buffer of `capacity` bytes, or `None` when the file
/// is left to the whole-file reader.
pub fn streamed(
    name: &str,
    bytes: &[u8],
    tweak: fn(&mut Settings),
    capacity: usize,
) -> Option<Report> {
    let mut cursor = Cursor::new(bytes);
    if !stream::streamable(&mut cursor).unwrap() {
        return None;
    }
    let reader = BufReader::with_capacity(capacity, cursor);
    Some(
        match tracelab_core::streamed::read(name, reader, |h| settings(h, tweak)) {
            Ok(Ok(st)) => {
                let m = Metrics::compute(&st.index, &st.settings);
                card_of(
                    |lang| card::render(name, &st.card_view(), &st.settings, &m, lang),
                    &m,
                    &st.settings,
                    &st.warnings,
                )
            }
            Ok(Err(e)) => Report::Refused(e),
            Err(StreamError::Parse(e)) => Report::Refused(e.to_string()),
            Err(StreamError::Io(e)) => panic!("{name}: reading memory failed: {e}"),
        },
    )
}

/// Both readers on `bytes` through a small and a large buffer; returns whether it was streamed.
#[track_caller]
pub fn agree(name: &str, bytes: &[u8], tweak: fn(&mut Settings)) -> bool {
    let whole = whole(name, bytes, tweak);
    let mut was_streamed = false;
    for capacity in [7, 64 * 1024] {
        if let Some(streamed) = streamed(name, bytes, tweak, capacity) {
            was_streamed = true;
            if streamed != whole {
                panic!(
                    "{name} (buffer {capacity} bytes): the streamed report differs from the whole-file one\nstreamed: {streamed:#?}\nwhole: {whole:#?}\nfile: {:?}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(2000)])
                );
            }
        }
    }
    was_streamed
}
