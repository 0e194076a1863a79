//! Scraping a Prometheus text endpoint during a run, written once for the DCGM exporter
//! (`--gpu dcgm=`) and the serving engine (`--server-metrics`): a list of URLs named only by
//! position, one bounded GET on the recorder's own transport, and the loop that repeats it on
//! the run's clock until told to stop. URLs and hostnames are never written or printed.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

use crate::transport::{body_error_class, Body, ConnWatch, Options, Protocol, Transport};

/// How long one scrape may take before it is abandoned (that tick then has no sample).
pub const SCRAPE_TIMEOUT: Duration = Duration::from_secs(5);
/// Caps what one scrape may read: a real exposition is tens of KiB (vLLM's ~50 KiB).
const MAX_EXPOSITION_BYTES: usize = 16 << 20;

/// `URL[,URL…]` → the URLs, in order; a bare `host:port/` means `/metrics`. `flag` names the
/// option in errors (`--gpu dcgm=…`), `hint` how to list them, `example` a good URL. Errors
/// never echo a URL (it names a host).
pub fn parse_urls(
    list: &str,
    flag: &str,
    hint: &str,
    example: &str,
) -> Result<Vec<url::Url>, String> {
    let mut urls = Vec::new();
    for (i, raw) in list.split(',').enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(format!("{flag}: URL number {} is empty; {hint}", i + 1));
        }
        let mut url = url::Url::parse(raw).map_err(|_| {
            format!(
                "{flag}: URL number {} is not a valid URL; expected e.g. {example}",
                i + 1
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(format!(
                "{flag}: URL number {} must be http:// or https:// with a host",
                i + 1
            ));
        }
        if url.path() == "/" {
            url.set_path("/metrics");
        }
        urls.push(url);
    }
    Ok(urls)
}

/// The scrape client: the recorder's own transport (no proxy, bundled TLS roots), so a scrape
/// shares its connection policy and its error phrases, which never name the URL.
pub fn client(what: &str) -> Result<Transport, String> {
    let options = Options {
        protocol: Protocol::Negotiated,
        connect_timeout: Some(SCRAPE_TIMEOUT),
        ca_cert: None,
        https: true,
    };
    Transport::new(&options).map_err(|e| format!("cannot build the {what} scrape client: {e}"))
}

/// A runtime of its own, off any async runtime the caller is in.
pub fn runtime(what: &str) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the {what} scraper: {e}"))
}

/// The transport's fixed phrases, as a scrape's failure reads ("… refused or unreachable").
fn describe(class: &str) -> String {
    match class {
        "connection refused"
        | "could not connect"
        | "DNS lookup failed"
        | "address not available" => "refused or unreachable".into(),
        "connect timed out" | "timed out" => {
            format!("did not answer within {} s", SCRAPE_TIMEOUT.as_secs())
        }
        other => format!("failed: {other}"),
    }
}

/// One GET of `url` as UTF-8 text, within [`SCRAPE_TIMEOUT`] and a size cap; the error is a
/// phrase that continues "… source 1 " / "… node 1 ".
pub async fn fetch(client: &Transport, url: &url::Url) -> Result<String, String> {
    let uri: hyper::Uri = url
        .as_str()
        .parse()
        .map_err(|_| "has a URL the HTTP client cannot use".to_string())?;
    let make = || {
        let mut request = hyper::Request::new(Full::new(Bytes::new()));
        *request.uri_mut() = uri.clone();
        let headers = request.headers_mut();
        headers.insert(
            hyper::header::USER_AGENT,
            hyper::header::HeaderValue::from_static(concat!(
                "tracelab/",
                env!("CARGO_PKG_VERSION")
            )),
        );
        headers.insert(
            hyper::header::ACCEPT,
            hyper::header::HeaderValue::from_static("text/plain"),
        );
        headers.insert(
            hyper::header::ACCEPT_ENCODING,
            hyper::header::HeaderValue::from_static("identity"),
        );
        request
    };
    let get = async {
        let watch = ConnWatch::default();
        let sent = client
            .send(make, &watch)
            .await
            .map_err(|e| describe(e.class))?;
        let lease = sent.lease;
        let status = sent.response.status();
        if !status.is_success() {
            return Err(format!("answered HTTP {}", status.as_u16()));
        }
        let mut body = Body(sent.response.into_body());
        let mut bytes = Vec::new();
        while let Some(chunk) = body
            .chunk()
            .await
            .map_err(|e| format!("failed: {}", body_error_class(&e)))?
        {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > MAX_EXPOSITION_BYTES {
                return Err(format!("sent more than {} MiB", MAX_EXPOSITION_BYTES >> 20));
            }
        }
        lease.give_back().await;
        String::from_utf8(bytes).map_err(|_| "sent a page that is not UTF-8 text".to_string())
    };
    tokio::time::timeout(SCRAPE_TIMEOUT, get)
        .await
        .map_err(|_| format!("did not answer within {} s", SCRAPE_TIMEOUT.as_secs()))?
}

/// Calls `tick` now and every `interval` after, until `stopped` closes (a sender dropped).
pub fn every(interval: Duration, stopped: &std::sync::mpsc::Receiver<()>, mut tick: impl FnMut()) {
    let mut next = std::time::Instant::now();
    loop {
        tick();
        next += interval;
        let wait = next.saturating_duration_since(std::time::Instant::now());
        if !matches!(
            stopped.recv_timeout(wait),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        ) {
            break;
        }
    }
}
