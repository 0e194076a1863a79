//! The real fixtures the tests read (peer result files, captured streams, /metrics pages,
//! workload traces), for a clone that has no `../shared/fixtures/` beside it.
//!
//! `fixtures.tsv` (beside this crate's Cargo.toml) holds facts only: each file's folder, name,
//! size, sha256 and where it comes from (repository, commit, path, and how it was derived when
//! it is not the blob itself). The files are never committed. The tests find them through one
//! variable, `TRACELAB_FIXTURES`; [`ensure`] chooses the folder: that variable when set, else
//! `../shared/fixtures/` beside the repository when it is there, else the per-user cache
//! `${XDG_CACHE_HOME:-~/.cache}/tracelab/fixtures/`, filled and checked by hash here.
//!
//! Where a file comes from, in this order: `TRACELAB_FIXTURES_MIRROR` (the base of a copy laid
//! out as `FOLDER/NAME`: `file:///…`, `http://…`), else the upstream base
//! `TRACELAB_FIXTURES_UPSTREAM` (default `https://raw.githubusercontent.com`, laid out as
//! `REPO/COMMIT/PATH`): a blob, a line range of one, the response body of one interaction of a
//! recorded cassette (vcrpy's or govcr's YAML), or a cassette's response headers re-serialised as
//! JSON. Text re-typed from a file index cannot be re-derived, so only a mirror has it; it is
//! listed as such when missing, never skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

/// The manifest, committed beside xtask's Cargo.toml.
pub const MANIFEST: &str = include_str!("../fixtures.tsv");
/// The upstream base when `TRACELAB_FIXTURES_UPSTREAM` is not set.
pub const UPSTREAM: &str = "https://raw.githubusercontent.com";
/// The one command that fetches what is missing.
pub const FETCH_COMMAND: &str = "cargo xtask fixtures";

/// How a fixture was made from its public source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Derive {
    /// The blob at `repo@commit:path`, byte for byte.
    Blob,
    /// Lines `first..=last` (1-based) of that blob, each with its newline.
    Lines(usize, usize),
    /// The response body of interaction N of a recorded cassette (YAML).
    CassetteBody(Cassette, usize),
    /// Interaction N of a vcrpy cassette as `json.dumps(…, sort_keys=True, indent=1)` of its
    /// response headers, status and request method and URI, under a note naming the source.
    CassetteHeaders(usize),
    /// Text re-typed from a file index: not cut from the blob here. The words say how.
    NotDerivable(String),
}

/// Who recorded a cassette, which fixes where an interaction's response body sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cassette {
    /// Python's vcrpy: `interactions[N].response.body.string`.
    Vcrpy,
    /// Go's govcr (v2): `interactions[N].response.body`.
    Govcr,
}

/// One row of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fixture {
    pub folder: String,
    pub name: String,
    pub bytes: u64,
    pub sha256: String,
    pub repo: String,
    pub commit: String,
    pub path: String,
    pub derive: Derive,
    /// The manifest line, for errors.
    pub line: usize,
}

impl Fixture {
    /// `peers/vllm_….json`.
    pub fn relative(&self) -> String {
        format!("{}/{}", self.folder, self.name)
    }
}

/// Reads the manifest; an error names the line and the column that is wrong.
pub fn parse(text: &str) -> Result<Vec<Fixture>, String> {
    let mut out: Vec<Fixture> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        if cells.len() != 8 {
            return Err(format!(
                "fixtures.tsv line {n}: expected 8 tab-separated columns, found {}",
                cells.len()
            ));
        }
        let bytes = cells[2].parse::<u64>().map_err(|_| {
            format!(
                "fixtures.tsv line {n}: `bytes` is not a number: {:?}",
                cells[2]
            )
        })?;
        let sha256 = cells[3].to_string();
        if sha256.len() != 64
            || !sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        {
            return Err(format!(
                "fixtures.tsv line {n}: `sha256` should be 64 lower-case hex digits, found {:?}",
                cells[3]
            ));
        }
        if cells[5].len() != 40 || !cells[5].bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "fixtures.tsv line {n}: `commit` should be 40 hex digits, found {:?}",
                cells[5]
            ));
        }
        for (col, name) in [(0, "folder"), (1, "name")] {
            let v = cells[col];
            if v.is_empty() || v.contains('/') || v.contains("..") {
                return Err(format!(
                    "fixtures.tsv line {n}: `{name}` must be one plain path component, found {v:?}"
                ));
            }
        }
        let derive = match cells[7].split_once(' ').unwrap_or((cells[7], "")) {
            ("blob", "") => Derive::Blob,
            ("lines", range) => {
                let (a, b) = range.split_once('-').ok_or_else(|| format!("fixtures.tsv line {n}: `lines` needs a range A-B"))?;
                let (a, b) = (a.parse::<usize>(), b.parse::<usize>());
                match (a, b) {
                    (Ok(a), Ok(b)) if a >= 1 && a <= b => Derive::Lines(a, b),
                    _ => return Err(format!("fixtures.tsv line {n}: `lines {range}` is not a range A-B with 1 ≤ A ≤ B")),
                }
            }
            (kind @ ("vcrpy-body" | "govcr-body" | "vcrpy-headers"), index) => {
                let index = index.parse::<usize>().map_err(|_| {
                    format!("fixtures.tsv line {n}: `{kind}` needs an interaction number, found {index:?}")
                })?;
                match kind {
                    "vcrpy-body" => Derive::CassetteBody(Cassette::Vcrpy, index),
                    "govcr-body" => Derive::CassetteBody(Cassette::Govcr, index),
                    _ => Derive::CassetteHeaders(index),
                }
            }
            ("index", _) => Derive::NotDerivable(cells[7].to_string()),
            _ => return Err(format!("fixtures.tsv line {n}: unknown derivation {:?} (blob, lines A-B, vcrpy-body N, govcr-body N, vcrpy-headers N, index …)", cells[7])),
        };
        let f = Fixture {
            folder: cells[0].into(),
            name: cells[1].into(),
            bytes,
            sha256,
            repo: cells[4].into(),
            commit: cells[5].into(),
            path: cells[6].into(),
            derive,
            line: n,
        };
        if let Some(first) = out.iter().find(|o| o.relative() == f.relative()) {
            return Err(format!(
                "fixtures.tsv line {n}: {} is listed twice (first on line {})",
                f.relative(),
                first.line
            ));
        }
        out.push(f);
    }
    Ok(out)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `dir/FOLDER/NAME` is there with the manifest's size and hash.
fn verified(dir: &Path, f: &Fixture) -> Result<(), String> {
    let path = dir.join(&f.folder).join(&f.name);
    let bytes = std::fs::read(&path).map_err(|e| format!("not there ({e})"))?;
    check(&bytes, f)
}

fn check(bytes: &[u8], f: &Fixture) -> Result<(), String> {
    if bytes.len() as u64 != f.bytes {
        return Err(format!(
            "{} bytes where the manifest says {}",
            bytes.len(),
            f.bytes
        ));
    }
    let got = sha256_hex(bytes);
    if got != f.sha256 {
        return Err(format!("sha256 {got} where the manifest says {}", f.sha256));
    }
    Ok(())
}

/// Where fetches come from (the environment, or the tests' own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sources {
    /// A copy laid out as `FOLDER/NAME`.
    pub mirror: Option<String>,
    /// Laid out as `REPO/COMMIT/PATH`.
    pub upstream: String,
}

impl Sources {
    pub fn from_env() -> Sources {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Sources {
            mirror: var("TRACELAB_FIXTURES_MIRROR"),
            upstream: var("TRACELAB_FIXTURES_UPSTREAM").unwrap_or_else(|| UPSTREAM.into()),
        }
    }
}

/// Percent-encodes a path for a URL, keeping `/`.
fn url_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The bytes at `url`: a `file://` URL is read here, anything else through curl.
fn get(url: &str) -> Result<Vec<u8>, String> {
    if let Some(path) = url.strip_prefix("file://") {
        let path = percent_decode(path);
        return std::fs::read(&path).map_err(|e| format!("{url}: {e}"));
    }
    let out = Command::new("curl")
        .args([
            "--fail",
            "--silent",
            "--show-error",
            "--location",
            "--connect-timeout",
            "10",
            "--max-time",
            "120",
            url,
        ])
        .output()
        .map_err(|e| format!("could not run curl for {url}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{url}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

fn join(base: &str, rest: &str) -> String {
    format!("{}/{}", base.trim_end_matches('/'), rest)
}

/// Lines `a..=b` of `text`, each with its newline; an error when the file is shorter.
fn cut_lines(bytes: &[u8], a: usize, b: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut n = 1;
    for piece in bytes.split_inclusive(|&c| c == b'\n') {
        if n >= a && n <= b {
            out.extend_from_slice(piece);
        }
        n += 1;
    }
    if n <= b {
        return Err(format!("the source has {} lines, fewer than {b}", n - 1));
    }
    Ok(out)
}

/// Interaction `n` of a cassette's YAML.
fn interaction(yaml: &[u8], n: usize) -> Result<serde_yaml::Value, String> {
    let doc: serde_yaml::Value =
        serde_yaml::from_slice(yaml).map_err(|e| format!("the cassette is not YAML: {e}"))?;
    let all = doc
        .get("interactions")
        .and_then(|v| v.as_sequence())
        .ok_or("the cassette has no `interactions` list")?;
    all.get(n).cloned().ok_or_else(|| {
        format!(
            "the cassette has {} interactions, none numbered {n}",
            all.len()
        )
    })
}

/// The response body of interaction `n`, as the recorder stored it (a string in both formats).
fn cassette_body(yaml: &[u8], cassette: Cassette, n: usize) -> Result<Vec<u8>, String> {
    let step = interaction(yaml, n)?;
    let body = step.get("response").and_then(|r| r.get("body"));
    let text = match cassette {
        Cassette::Vcrpy => body.and_then(|b| b.get("string")),
        Cassette::Govcr => body,
    };
    text.and_then(|t| t.as_str())
        .map(|t| t.as_bytes().to_vec())
        .ok_or_else(|| format!("interaction {n} has no response body string"))
}

/// Interaction `n`'s response headers, status and request line, re-serialised as the fixture
/// was made: Python's `json.dumps(…, sort_keys=True, indent=1)` plus a newline, under a note
/// naming the cassette and commit. Non-ASCII is escaped as Python's default `ensure_ascii` does.
fn cassette_headers(yaml: &[u8], n: usize, f: &Fixture) -> Result<Vec<u8>, String> {
    let step = interaction(yaml, n)?;
    let yaml_to_json = |v: Option<&serde_yaml::Value>, what: &str| {
        v.ok_or_else(|| format!("interaction {n} has no {what}"))
            .and_then(|v| serde_json::to_value(v).map_err(|e| format!("{what}: {e}")))
    };
    let response = step.get("response");
    let request = step.get("request");
    let note = format!(
        "Re-serialized (json.dumps, sort_keys, indent=1) from the vcrpy cassette: \
         interactions[{n}].response.headers (+ status) of {} @ {}. Values unchanged; header \
         order/case as recorded; not raw bytes.",
        f.path, f.commit
    );
    let value = serde_json::json!({
        "_note": note,
        "headers": yaml_to_json(response.and_then(|r| r.get("headers")), "response headers")?,
        "request": {
            "method": yaml_to_json(request.and_then(|r| r.get("method")), "request method")?,
            "uri": yaml_to_json(request.and_then(|r| r.get("uri")), "request URI")?,
        },
        "status": yaml_to_json(response.and_then(|r| r.get("status")), "response status")?,
    });
    let value = sort_keys(value);
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut out,
        serde_json::ser::PrettyFormatter::with_indent(b" "),
    );
    serde::Serialize::serialize(&value, &mut ser).map_err(|e| e.to_string())?;
    let mut text = String::with_capacity(out.len() + 1);
    for c in String::from_utf8(out).map_err(|e| e.to_string())?.chars() {
        if c.is_ascii() {
            text.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                text.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    text.push('\n');
    Ok(text.into_bytes())
}

/// Every object's keys in sorted order, as `sort_keys=True` writes them, whatever order the map
/// type keeps (serde_json keeps insertion order when any crate asks for `preserve_order`).
fn sort_keys(v: serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        serde_json::Value::Array(items) => {
            serde_json::Value::Array(items.into_iter().map(sort_keys).collect())
        }
        other => other,
    }
}

/// One fixture's bytes from the sources, checked against the manifest.
fn fetch_one(f: &Fixture, sources: &Sources) -> Result<Vec<u8>, String> {
    let mut tried = Vec::new();
    if let Some(mirror) = &sources.mirror {
        let url = join(mirror, &url_path(&f.relative()));
        match get(&url).and_then(|b| check(&b, f).map(|()| b)) {
            Ok(b) => return Ok(b),
            Err(e) => tried.push(format!("mirror: {e}")),
        }
    }
    let upstream = join(
        &sources.upstream,
        &url_path(&format!("{}/{}/{}", f.repo, f.commit, f.path)),
    );
    let from_upstream = match &f.derive {
        Derive::Blob => get(&upstream),
        Derive::Lines(a, b) => get(&upstream).and_then(|bytes| cut_lines(&bytes, *a, *b)),
        Derive::CassetteBody(cassette, n) => {
            get(&upstream).and_then(|bytes| cassette_body(&bytes, *cassette, *n))
        }
        Derive::CassetteHeaders(n) => {
            get(&upstream).and_then(|bytes| cassette_headers(&bytes, *n, f))
        }
        Derive::NotDerivable(why) => Err(format!(
            "cannot be re-derived from its public source ({}@{} {}): {why}; only a mirror (TRACELAB_FIXTURES_MIRROR) has it",
            f.repo,
            &f.commit[..12],
            f.path
        )),
    };
    match from_upstream.and_then(|b| check(&b, f).map(|()| b)) {
        Ok(b) => Ok(b),
        Err(e) => {
            tried.push(e);
            Err(tried.join("; "))
        }
    }
}

/// Fills `dir` with every fixture of the manifest that is missing or wrong there, each checked
/// by hash and written whole (a temporary name, then renamed). Returns the files it fetched; an
/// error lists every file still missing, why, and the command to run.
pub fn fill(dir: &Path, manifest: &[Fixture], sources: &Sources) -> Result<Vec<String>, String> {
    let mut fetched = Vec::new();
    let mut missing = BTreeMap::new();
    for f in manifest {
        if verified(dir, f).is_ok() {
            continue;
        }
        match fetch_one(f, sources) {
            Ok(bytes) => {
                // Written beside, then renamed: the tests list these folders, so a half-written
                // file never sits in one.
                let folder = dir.join(&f.folder);
                let partial = dir.join(".partial");
                for d in [&folder, &partial] {
                    std::fs::create_dir_all(d)
                        .map_err(|e| format!("cannot create {}: {e}", d.display()))?;
                }
                let tmp = partial.join(format!("{}-{}", f.folder, f.name));
                let path = folder.join(&f.name);
                std::fs::write(&tmp, &bytes)
                    .and_then(|()| std::fs::rename(&tmp, &path))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                fetched.push(f.relative());
            }
            Err(why) => {
                missing.insert(f.relative(), why);
            }
        }
    }
    if missing.is_empty() {
        return Ok(fetched);
    }
    let list: Vec<String> = missing
        .iter()
        .map(|(name, why)| format!("  - {name}: {why}"))
        .collect();
    Err(format!(
        "{} of the {} real fixtures the tests read are missing from {} and could not be fetched:\n{}\n\
         Fetch them with `{FETCH_COMMAND}` where raw.githubusercontent.com is reachable, or point TRACELAB_FIXTURES_MIRROR at a copy \
         laid out as FOLDER/NAME (file:///… or http://…) and run `{FETCH_COMMAND}` again; or set TRACELAB_FIXTURES to a folder that \
         holds them (as ../shared/fixtures beside the repository does).",
        missing.len(),
        manifest.len(),
        dir.display(),
        list.join("\n")
    ))
}

/// Lists the fixtures absent from `dir` (a folder given by TRACELAB_FIXTURES or ../shared).
fn absent(dir: &Path, manifest: &[Fixture]) -> Vec<String> {
    manifest
        .iter()
        .filter(|f| !dir.join(&f.folder).join(&f.name).is_file())
        .map(Fixture::relative)
        .collect()
}

/// The folder the tests read the fixtures from, filled when it is the cache; see the module docs.
/// The folder every test reads the real fixtures from (passed on as `TRACELAB_FIXTURES`).
pub fn folder() -> Result<PathBuf, String> {
    ensure(&crate::process::root(), &crate::process::cache_dir())
}

pub fn ensure(root: &Path, cache: &Path) -> Result<PathBuf, String> {
    let manifest = parse(MANIFEST)?;
    let given = std::env::var_os("TRACELAB_FIXTURES")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let shared = root.join("../shared/fixtures");
    let (dir, whose) = match given {
        Some(dir) => (dir, "TRACELAB_FIXTURES"),
        None if shared.is_dir() => (shared, "../shared/fixtures beside the repository"),
        None => {
            let dir = cache.join("fixtures");
            let fetched = fill(&dir, &manifest, &Sources::from_env())?;
            if !fetched.is_empty() {
                eprintln!(
                    "xtask: fetched {} real fixtures into {} (each checked by sha256)",
                    fetched.len(),
                    dir.display()
                );
            }
            return Ok(dir);
        }
    };
    let gone = absent(&dir, &manifest);
    if !gone.is_empty() {
        return Err(format!(
            "{} ({whose}) lacks {} of the real fixtures the tests read: {}. Unset TRACELAB_FIXTURES or move that folder away, and \
             `{FETCH_COMMAND}` fetches them into the cache",
            dir.display(),
            gone.len(),
            gone.join(", ")
        ));
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("xtask-fixtures-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn url(dir: &Path) -> String {
        format!("file://{}", dir.display())
    }

    #[test]
    fn the_committed_manifest_reads_and_matches_shared_fixtures_when_they_are_here() {
        let manifest = parse(MANIFEST).expect("fixtures.tsv reads");
        assert!(manifest.len() >= 40, "{} rows", manifest.len());
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures");
        if !shared.is_dir() {
            return; // a plain clone: the fetch tests below stand for it
        }
        let mut bad = Vec::new();
        for f in &manifest {
            if let Err(e) = verified(&shared, f) {
                bad.push(format!("{}: {e}", f.relative()));
            }
        }
        // And every file there (but the SOURCES.md notes) is in the manifest.
        for folder in std::fs::read_dir(&shared)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_dir())
        {
            for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
                let rel = format!(
                    "{}/{}",
                    folder.file_name().to_string_lossy(),
                    file.file_name().to_string_lossy()
                );
                if !rel.ends_with("/SOURCES.md") && !manifest.iter().any(|f| f.relative() == rel) {
                    bad.push(format!("{rel}: not in fixtures.tsv"));
                }
            }
        }
        assert!(
            bad.is_empty(),
            "fixtures.tsv disagrees with {}:\n{}",
            shared.display(),
            bad.join("\n")
        );
    }

    #[test]
    fn bad_manifest_lines_are_named() {
        let row = |derive: &str| {
            format!(
                "peers\ta.json\t2\t{}\to/r\t{}\tp/a.json\t{derive}\n",
                "0".repeat(64),
                "a".repeat(40)
            )
        };
        assert!(parse(&row("blob")).is_ok());
        let err = parse(&format!("# c\n{}", row("lines 3-1"))).unwrap_err();
        assert!(err.contains("line 2") && err.contains("lines 3-1"), "{err}");
        let err = parse(&row("copy")).unwrap_err();
        assert!(err.contains("unknown derivation"), "{err}");
        let err = parse(&format!("{}{}", row("blob"), row("blob"))).unwrap_err();
        assert!(err.contains("listed twice (first on line 1)"), "{err}");
        let err = parse("peers\ta\t1\n").unwrap_err();
        assert!(err.contains("8 tab-separated columns"), "{err}");
    }

    /// A manifest of constructed files: one blob, one line range, one that only a mirror has.
    /// Constructed sources (not public files): a blob, a Markdown file cut by lines, a vcrpy
    /// and a govcr cassette, and one re-typed file no source can give.
    fn constructed(upstream: &Path) -> (Vec<Fixture>, Vec<(String, Vec<u8>)>) {
        let commit = "0123456789abcdef0123456789abcdef01234567";
        let blob = b"{\"constructed\": true}\n".to_vec();
        let markdown = b"# doc\n```\nmetric_a 1\nmetric_b 2\n```\n".to_vec();
        let cut = b"metric_a 1\nmetric_b 2\n".to_vec();
        // vcrpy keeps a stream body as a literal block (`|+` keeps its blank lines).
        let vcrpy = "interactions:\n- request:\n    method: POST\n    uri: https://example.invalid/v1/chat/completions\n  response:\n    body:\n      string: ''\n    headers: {}\n    status: {code: 500, message: Oops}\n- request:\n    method: POST\n    uri: https://example.invalid/v1/chat/completions\n  response:\n    body:\n      string: |+\n        data: {\"x\":\"é\"}\n\n        data: [DONE]\n\n    headers:\n      X-B:\n      - '2'\n      Content-Type:\n      - text/event-stream\n    status:\n      code: 200\n      message: OK\nversion: 1\n";
        let stream = "data: {\"x\":\"é\"}\n\ndata: [DONE]\n\n"
            .as_bytes()
            .to_vec();
        // govcr (v2) keeps the body as one scalar.
        let govcr = "---\nversion: 2\ninteractions:\n    - id: 0\n      response:\n        body: '{\"version\":\"b1\"}'\n        code: 200\n";
        let version = b"{\"version\":\"b1\"}".to_vec();
        let headers = format!(
            "{{\n \"_note\": \"Re-serialized (json.dumps, sort_keys, indent=1) from the vcrpy cassette: interactions[1].response.headers (+ status) of chat.yaml @ {commit}. Values unchanged; header order/case as recorded; not raw bytes.\",\n \"headers\": {{\n  \"Content-Type\": [\n   \"text/event-stream\"\n  ],\n  \"X-B\": [\n   \"2\"\n  ]\n }},\n \"request\": {{\n  \"method\": \"POST\",\n  \"uri\": \"https://example.invalid/v1/chat/completions\"\n }},\n \"status\": {{\n  \"code\": 200,\n  \"message\": \"OK\"\n }}\n}}\n"
        ).into_bytes();
        let retyped = b"re-typed\n".to_vec();
        let write = |rel: &str, bytes: &[u8]| {
            let p = upstream.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        };
        write(&format!("owner/repo/{commit}/dir/a b.json"), &blob);
        write(&format!("owner/repo/{commit}/doc.md"), &markdown);
        write(&format!("owner/repo/{commit}/chat.yaml"), vcrpy.as_bytes());
        write(&format!("owner/repo/{commit}/go.yaml"), govcr.as_bytes());
        let files = vec![
            ("peers/one.json".to_string(), blob, "dir/a b.json", "blob"),
            ("dcgm/two.txt".into(), cut, "doc.md", "lines 3-4"),
            (
                "streams/three.sse".into(),
                stream,
                "chat.yaml",
                "vcrpy-body 1",
            ),
            (
                "servers/four.json".into(),
                version,
                "go.yaml",
                "govcr-body 0",
            ),
            (
                "servers/five.json".into(),
                headers,
                "chat.yaml",
                "vcrpy-headers 1",
            ),
            (
                "servers/six.txt".into(),
                retyped,
                "index.md",
                "index (re-typed)",
            ),
        ];
        let mut text = String::from("# constructed\n");
        for (rel, bytes, path, derive) in &files {
            let (folder, name) = rel.split_once('/').unwrap();
            text.push_str(&format!(
                "{folder}\t{name}\t{}\t{}\towner/repo\t{commit}\t{path}\t{derive}\n",
                bytes.len(),
                sha256_hex(bytes)
            ));
        }
        let files = files
            .into_iter()
            .map(|(rel, bytes, _, _)| (rel, bytes))
            .collect();
        (parse(&text).unwrap(), files)
    }

    #[test]
    fn upstream_blobs_and_line_ranges_are_fetched_and_checked_and_the_rest_is_listed() {
        let root = scratch("upstream");
        let (upstream, cache) = (root.join("upstream"), root.join("cache"));
        let (manifest, files) = constructed(&upstream);
        let sources = Sources {
            mirror: None,
            upstream: url(&upstream),
        };
        let err = fill(&cache, &manifest, &sources).unwrap_err();
        // The blob, the line range, both cassettes' bodies and the re-serialised headers came,
        // byte for byte; the re-typed file is listed, with the command.
        for (rel, bytes) in &files[..5] {
            assert_eq!(&std::fs::read(cache.join(rel)).unwrap(), bytes, "{rel}");
            assert!(!err.contains(rel.as_str()), "{rel}: {err}");
        }
        assert!(err.starts_with("1 of the 6 real fixtures"), "{err}");
        assert!(
            err.contains("servers/six.txt: cannot be re-derived from its public source")
                && err.contains(FETCH_COMMAND),
            "{err}"
        );
        // A file changed upstream (or on disk) fails its hash and is not kept.
        std::fs::write(cache.join("peers/one.json"), b"edited").unwrap();
        std::fs::write(
            upstream.join("owner/repo/0123456789abcdef0123456789abcdef01234567/dir/a b.json"),
            b"{\"other\": 1}\n",
        )
        .unwrap();
        let err = fill(&cache, &manifest, &sources).unwrap_err();
        assert!(
            err.contains("peers/one.json") && err.contains("where the manifest says"),
            "{err}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_mirror_fills_everything_and_without_one_the_message_lists_each_file() {
        let root = scratch("mirror");
        let (mirror, cache) = (root.join("mirror"), root.join("cache"));
        let (manifest, files) = constructed(&root.join("unused-upstream"));
        // Nothing reachable: one message, every file named once, and the command.
        let nowhere = Sources {
            mirror: None,
            upstream: url(&root.join("nowhere")),
        };
        let err = fill(&cache, &manifest, &nowhere).unwrap_err();
        assert!(err.starts_with("6 of the 6 real fixtures"), "{err}");
        for (rel, _) in &files {
            assert_eq!(err.matches(rel.as_str()).count(), 1, "{rel} in {err}");
        }
        assert!(
            err.contains("`cargo xtask fixtures`") && err.contains("TRACELAB_FIXTURES_MIRROR"),
            "{err}"
        );
        // A mirror laid out as FOLDER/NAME has them all, the re-typed file included.
        for (rel, bytes) in &files {
            let p = mirror.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let with_mirror = Sources {
            mirror: Some(url(&mirror)),
            upstream: nowhere.upstream.clone(),
        };
        let fetched = fill(&cache, &manifest, &with_mirror).unwrap();
        assert_eq!(fetched.len(), 6);
        // Once there and verified, nothing is fetched again, even with no source at all.
        assert_eq!(
            fill(&cache, &manifest, &nowhere).unwrap(),
            Vec::<String>::new()
        );
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn urls_are_percent_encoded_and_file_urls_decoded() {
        assert_eq!(
            url_path("github-data/issues/467 - Bug_ x[1].md"),
            "github-data/issues/467%20-%20Bug_%20x%5B1%5D.md"
        );
        assert_eq!(percent_decode("/tmp/a%20b%5B1%5D"), "/tmp/a b[1]");
        assert_eq!(cut_lines(b"a\nb\nc", 2, 3).unwrap(), b"b\nc");
        assert!(cut_lines(b"a\n", 1, 2).is_err());
    }
}
