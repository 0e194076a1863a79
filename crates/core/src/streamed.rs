//! A trace read as a stream and folded into what the metric card shows, for traces too large to
//! hold: [`read`] takes each attempt from [`crate::parse::stream::visit`] (the one streamed
//! reader), folds it into an [`IndexBuilder`], the lag, the GPU spans, the reuse split and the
//! session figures, and drops it. `tracelab report` and the streamed card exports use it.
//!
//! Kept per attempt (bytes), besides what the reader keeps for the duplicate check: TTFT and E2E
//! as `f64` (8 + 8, and 8 more for a success that passed quality), its lag (8, open-loop runs
//! only) and its [`Span`] (24, runs with GPU or engine telemetry only). An attempt of a session
//! also keeps about 32 bytes for the session figures ([`crate::session::SessionsBuilder`], its
//! session's id once) and, for the check that no turn is sent twice, its session id, turn and
//! business id (about 100 bytes with their lengths). Stream gaps (ITL) are counted per distinct
//! value, so they cost memory per distinct gap, not per event.
//!
//! The figures are those of [`crate::parse::parse_jsonl`] + [`Index::build`]: the same
//! [`IndexBuilder`], the lag and the GPU groups through the same functions.

use std::io::BufRead;

use crate::card::CardView;
use crate::gpu_beside::{self, GpuSummary, Span};
use crate::index::{Index, IndexBuilder};
use crate::lag::{self, ClientLag};
use crate::parse::stream::{visit, Ids, StreamError};
use crate::settings::Settings;
use crate::trace::{Attempt, Completeness, Footer, GpuSample, Header};

/// A trace read as a stream: everything the metric card shows, without the attempts.
pub struct Streamed {
    pub header: Header,
    pub footer: Option<Footer>,
    pub gpu: Vec<GpuSample>,
    /// The engine's scrapes (a few per second at most: kept whole).
    pub engine: Vec<crate::trace::engine::EngineSample>,
    pub warnings: Vec<String>,
    /// Attempt records read.
    pub attempts: u64,
    /// The settings `settings_for` gave, and the index under their population.
    pub settings: Settings,
    pub index: Index,
    pub lag: Option<ClientLag>,
    pub gpu_summary: GpuSummary,
    pub engine_summary: crate::engine_beside::EngineSummary,
    /// TTFT by a prompt's first send and its repeats (when the attempts say which).
    pub reuse: Option<crate::reuse::ReuseSplit>,
    pub warmup_attempts: usize,
    /// The session figures, when the attempts name sessions (about 32 bytes kept per turn).
    pub sessions: Option<crate::session::Sessions>,
}

impl Streamed {
    pub fn completeness(&self) -> Completeness {
        Completeness::of(&self.header, self.footer)
    }

    /// What [`crate::card::render`] needs besides the figures.
    pub fn card_view(&self) -> CardView<'_> {
        CardView {
            header: &self.header,
            completeness: self.completeness(),
            lag: self.lag.clone(),
            gpu: self.gpu_summary,
            engine: self.engine_summary.clone(),
            index: &self.index,
            warnings: &self.warnings,
            reuse: self.reuse.clone(),
            warmup_attempts: self.warmup_attempts,
        }
    }
}
/// Reads a trace that [`crate::parse::stream::streamable`] accepted. `settings_for` is asked once, with the header,
/// for the settings the figures are computed under; its error is returned only when the whole
/// file reads (as `tracelab report` reports a bad option only after a good file).
pub fn read<R: BufRead, E>(
    file: &str,
    reader: R,
    settings_for: impl FnOnce(&Header) -> Result<Settings, E>,
) -> Result<Result<Streamed, E>, StreamError> {
    let visited = visit(
        file,
        reader,
        Ids::Here,
        |header| settings_for(header).map(|settings| Fold::new(header, settings)),
        |fold, a, _| {
            fold.push(&a);
            Ok(())
        },
    )?;
    let (fold, rest) = match visited {
        Ok(both) => both,
        Err(e) => return Ok(Err(e)),
    };
    let lag = lag::client_lag_of(&rest.header, fold.lags);
    let gpu_summary = gpu_beside::summarise(&rest.header, &fold.spans, &rest.gpu);
    let engine_summary = crate::engine_beside::summarise(&rest.header, &fold.spans, &rest.engine);
    let reuse = fold.reuse.finish(&fold.settings);
    let sessions = fold.sessions.finish();
    Ok(Ok(Streamed {
        header: rest.header,
        footer: rest.footer,
        gpu: rest.gpu,
        engine: rest.engine,
        warnings: rest.warnings,
        attempts: fold.attempts,
        settings: fold.settings,
        index: fold.index.finish(),
        lag,
        gpu_summary,
        engine_summary,
        reuse,
        warmup_attempts: fold.warmup_attempts,
        sessions,
    }))
}

/// The per-attempt state a streamed read keeps.
struct Fold {
    settings: Settings,
    index: IndexBuilder,
    attempts: u64,
    /// Client lags, open-loop runs only.
    lags: Vec<f64>,
    keep_lags: bool,
    /// Attempts on the clock, runs with GPU telemetry only.
    spans: Vec<Span>,
    keep_spans: bool,
    reuse: crate::reuse::ReuseBuilder,
    warmup_attempts: usize,
    sessions: crate::session::SessionsBuilder,
}

impl Fold {
    fn new(header: &Header, settings: Settings) -> Fold {
        Fold {
            index: IndexBuilder::new(settings.population),
            sessions: crate::session::SessionsBuilder::new(&settings),
            settings,
            attempts: 0,
            lags: Vec::new(),
            keep_lags: lag::is_open_loop(header),
            spans: Vec::new(),
            keep_spans: gpu_beside::has_telemetry(header)
                || crate::engine_beside::has_engine(header),
            reuse: crate::reuse::ReuseBuilder::default(),
            warmup_attempts: 0,
        }
    }

    fn push(&mut self, a: &Attempt) {
        self.attempts += 1;
        self.index.push(a);
        if self.keep_lags {
            self.lags.extend(lag::lag_ms(a));
        }
        if self.keep_spans {
            self.spans.extend(Span::of(a, &self.settings));
        }
        self.reuse.push(a, &self.settings);
        self.sessions.push(a);
        if a.phase == crate::trace::Phase::Warmup {
            self.warmup_attempts += 1;
        }
    }
}
