//! Fetching a trace and turning it into what the view needs: the parsed trace and its index.
//! Parsing and indexing are the core's; this only moves bytes.

use std::sync::Arc;

use tracelab_core::{parse::parse_trace, Index, Population, Trace};

/// A trace ready for the view: parsed once, indexed once per population.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub name: String,
    pub trace: Arc<Trace>,
    pub index: Arc<Index>,
}

impl PartialEq for Loaded {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.trace, &other.trace) && Arc::ptr_eq(&self.index, &other.index)
    }
}

impl Loaded {
    pub fn new(name: String, trace: Trace, population: Population) -> Loaded {
        let index = Index::build(&trace.attempts, population);
        Loaded { name, trace: Arc::new(trace), index: Arc::new(index) }
    }
}

/// Fetches and parses a trace shipped with the lab (under `samples/`).
pub async fn fetch_sample(path: &str, population: Population) -> Result<Loaded, String> {
    let response = gloo_net::http::Request::get(path)
        .send()
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    if !response.ok() {
        return Err(format!("{path}: HTTP {} {}", response.status(), response.status_text()));
    }
    let text = response.text().await.map_err(|e| format!("{path}: {e}"))?;
    let name = path.rsplit('/').next().unwrap_or(path).to_string();
    let trace = parse_trace(&name, &text).map_err(|e| e.to_string())?;
    Ok(Loaded::new(name, trace, population))
}
