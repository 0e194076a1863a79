//! Fetching a file beside the page (a sample, a lesson, the course), as text; an error names the
//! path and what went wrong.

/// The text of `path` (relative to the page); `Err` names the path and the HTTP status or the
/// network's error.
pub async fn fetch_text(path: &str) -> Result<String, String> {
    let response = gloo_net::http::Request::get(path)
        .send()
        .await
        .map_err(|e| format!("{path}: {e}"))?;
    if !response.ok() {
        return Err(format!("{path}: HTTP {}", response.status()));
    }
    response.text().await.map_err(|e| format!("{path}: {e}"))
}
