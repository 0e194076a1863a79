//! Serves the built lab (`dist/`) on 127.0.0.1 for the end-to-end tests, like any static host.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// Starts a static file server on a free loopback port; returns its base URL.
pub fn serve(dist: PathBuf) -> String {
    serve_with(dist, Vec::new())
}

/// Like [`serve`], with extra files held in memory (`("/bench.jsonl", bytes)`).
pub fn serve_with(dist: PathBuf, extra: Vec<(String, Vec<u8>)>) -> String {
    let extra = std::sync::Arc::new(extra);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let dist = dist.clone();
            let extra = extra.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                if reader.read_line(&mut request_line).is_err() {
                    return;
                }
                // Drain the headers.
                let mut line = String::new();
                while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
                    line.clear();
                }
                let path = request_line.split_whitespace().nth(1).unwrap_or("/");
                let path = path.split(['?', '#']).next().unwrap_or("/");
                let in_memory = extra
                    .iter()
                    .find(|(p, _)| p == path)
                    .map(|(_, bytes)| bytes.clone());
                let (status, body, mime) = if let Some(bytes) = in_memory {
                    ("200 OK", bytes, "text/plain; charset=utf-8")
                } else {
                    match resolve(&dist, path) {
                        Some(file) => match std::fs::read(&file) {
                            Ok(bytes) => ("200 OK", bytes, mime_of(&file)),
                            Err(_) => ("404 Not Found", b"not found".to_vec(), "text/plain"),
                        },
                        None => ("404 Not Found", b"not found".to_vec(), "text/plain"),
                    }
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}

fn resolve(dist: &Path, path: &str) -> Option<PathBuf> {
    let rel = path.trim_start_matches('/');
    if rel.split('/').any(|part| part == "..") {
        return None;
    }
    let file = if rel.is_empty() {
        dist.join("index.html")
    } else {
        dist.join(rel)
    };
    if file.is_dir() && file.join("index.html").is_file() {
        // A folder's own page (the lessons live at /lessons/).
        Some(file.join("index.html"))
    } else if file.is_file() {
        Some(file)
    } else if !rel.contains('.') {
        // A single-page app: unknown routes get the page.
        Some(dist.join("index.html"))
    } else {
        None
    }
}

fn mime_of(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "text/plain; charset=utf-8",
    }
}
