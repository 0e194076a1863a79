//! The browser plumbing every page shares (the lab, the lessons, compare, load-model, convert and
//! bench pages), written once: the page's address and storage (`page.rs`: the query string,
//! localStorage, the reader's language, the panic hook), fetching a file beside the page
//! (`fetch.rs`), a page's word table (`words.rs`), the samples shipped with the lab
//! (`samples.rs`), round chart ticks (`ticks.rs`), handing a file to the browser as a download (`download.rs`), the names of
//! the lab's calls into its second bundle (`bridge.rs`) and a trace's text kept outside the
//! WebAssembly memory, read into the core in pieces (`js_text.rs`). It computes nothing: figures are the core's.

pub mod bridge;
mod download;
mod fetch;
pub mod js_text;
mod page;
mod samples;
mod ticks;
mod words;

pub use download::download;
pub use fetch::fetch_text;
pub use page::{
    browser_lang, install_panic_hook, page_lang, query, replace_query, set_query, storage,
};
pub use samples::{compare_order, is_sample, Sample, SAMPLES};
pub use ticks::ticks;
pub use words::{lookup, Words};
