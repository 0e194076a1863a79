//! A small blocking WebDriver client for chromedriver on 127.0.0.1: just the commands the lab's
//! end-to-end tests use. Plain HTTP/1.1 over a TcpStream keeps the tests free of an async stack.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const ARROW_RIGHT: char = '\u{E014}';
pub const ARROW_LEFT: char = '\u{E012}';

/// A free port on the loopback interface.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("connect to chromedriver: {e}"))?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    // chromedriver may keep the connection open, so read exactly what the headers announce.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let (head, body_start) = loop {
        let n = stream
            .read(&mut buf)
            .map_err(|e| format!("read from chromedriver: {e}"))?;
        if n == 0 {
            return Err("chromedriver closed the connection before answering".into());
        }
        raw.extend_from_slice(&buf[..n]);
        if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break (
                String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase(),
                split + 4,
            );
        }
    };
    let content_length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    let chunked = head.contains("transfer-encoding: chunked");
    loop {
        let body = &raw[body_start..];
        let complete = match content_length {
            Some(len) => body.len() >= len,
            None if chunked => body.windows(5).any(|w| w == b"0\r\n\r\n"),
            None => false,
        };
        if complete {
            break;
        }
        let n = stream
            .read(&mut buf)
            .map_err(|e| format!("read from chromedriver: {e}"))?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
    }
    let mut payload = raw[body_start..].to_vec();
    if let Some(len) = content_length {
        payload.truncate(len);
    } else if chunked {
        payload = dechunk(&payload);
    }
    let value: Value = serde_json::from_slice(&payload).map_err(|e| {
        format!(
            "chromedriver sent non-JSON ({e}): {}",
            String::from_utf8_lossy(&payload)
        )
    })?;
    if let Some(err) = value.get("value").and_then(|v| v.get("error")) {
        return Err(format!(
            "webdriver {method} {path}: {err}: {}",
            value["value"]["message"]
        ));
    }
    Ok(value["value"].clone())
}

/// The id in a WebDriver element reference (`{"element-6066-…": id}`).
fn element_id(v: &Value) -> Option<String> {
    v.as_object()?.values().next()?.as_str().map(str::to_string)
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = data.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&data[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&data[end + 2..end + 2 + size]);
        data = &data[end + 2 + size + 2..];
    }
    out
}

/// A headless Chromium driven through chromedriver. Dropping it ends the session and the driver.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: TempDir,
}

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Browser {
    /// Starts chromedriver and a fresh headless Chromium profile, window `width`×`height`.
    pub fn start(width: u32, height: u32, lang: &str) -> Browser {
        let chromedriver =
            std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
        let chrome = std::env::var("CHROME").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let port = free_port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {chromedriver}: {e} (run the tests through `cargo xtask test`)"
                )
            });
        let deadline = Instant::now() + Duration::from_secs(20);
        while http(port, "GET", "/status", None)
            .map(|v| v["ready"] != json!(true))
            .unwrap_or(true)
        {
            assert!(
                Instant::now() < deadline,
                "chromedriver did not become ready on port {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let profile =
            std::env::temp_dir().join(format!("tracelab-e2e-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&profile).unwrap();
        let mut caps = json!({
            "capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chrome,
                    "args": [
                        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--disable-dev-shm-usage", format!("--lang={lang}"),
                        format!("--window-size={width},{height}"),
                        format!("--user-data-dir={}", profile.display()),
                    ],
                    "prefs": {
                        "intl.accept_languages": lang,
                        "download.default_directory": profile.join("downloads").display().to_string(),
                        "download.prompt_for_download": false,
                    },
                }
            }}
        });
        if width <= 480 {
            // Below Chromium's smallest window: emulate a phone (and a HiDPI screen) instead.
            caps["capabilities"]["alwaysMatch"]["goog:chromeOptions"]["mobileEmulation"] =
                json!({"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2.0}});
        }
        let session = http(port, "POST", "/session", Some(&caps)).expect("new WebDriver session");
        let session = session["sessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        Browser {
            driver,
            port,
            session,
            _profile: TempDir(profile),
        }
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
        http(
            self.port,
            method,
            &format!("/session/{}{path}", self.session),
            body.as_ref(),
        )
    }

    /// Renders the page for `media` ("print", or "" for the screen again), through Chromium's
    /// DevTools (chromedriver's `goog/cdp/execute`): what a printed worksheet would show.
    pub fn emulate_media(&self, media: &str) {
        self.cmd(
            "POST",
            "/goog/cdp/execute",
            Some(json!({"cmd": "Emulation.setEmulatedMedia", "params": {"media": media}})),
        )
        .expect("emulate a media type");
    }

    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({"url": url})))
            .expect("navigate");
    }

    pub fn find(&self, css: &str) -> Result<String, String> {
        let v = self.cmd(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        )?;
        element_id(&v).ok_or_else(|| format!("no element id for {css} in {v}"))
    }

    /// The first element matching `css`, `None` only when WebDriver says there is no such
    /// element: any other driver failure fails the test, so "nothing shown" cannot pass by error.
    pub fn try_find(&self, css: &str) -> Option<String> {
        match self.find(css) {
            Ok(e) => Some(e),
            Err(e) if e.contains("no such element") => None,
            Err(e) => panic!("finding {css}: {e}"),
        }
    }

    /// Every element matching `css` (possibly none); a driver error fails the test.
    pub fn find_all(&self, css: &str) -> Vec<String> {
        let v = self
            .cmd(
                "POST",
                "/elements",
                Some(json!({"using": "css selector", "value": css})),
            )
            .unwrap_or_else(|e| panic!("finding all {css}: {e}"));
        let list = v
            .as_array()
            .unwrap_or_else(|| panic!("finding all {css}: not a list: {v}"));
        list.iter()
            .map(|o| {
                element_id(o).unwrap_or_else(|| panic!("finding all {css}: no element id in {o}"))
            })
            .collect()
    }

    /// An element's rendered text; a driver error (a stale element included) fails the test.
    pub fn text(&self, element: &str) -> String {
        self.try_text(element).unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_text(&self, element: &str) -> Result<String, String> {
        let v = self.cmd("GET", &format!("/element/{element}/text"), None)?;
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("element text is not a string: {v}"))
    }

    /// The text of the first element matching `css`; empty only when there is no such element.
    /// An element replaced while being read (the page re-rendered) is looked up again.
    pub fn text_of(&self, css: &str) -> String {
        let mut last = String::new();
        for _ in 0..20 {
            let Some(e) = self.try_find(css) else {
                return String::new();
            };
            match self.try_text(&e) {
                Ok(t) => return t,
                Err(err) if err.contains("stale element") => last = err,
                Err(err) => panic!("reading the text of {css}: {err}"),
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("reading the text of {css}: still stale after 20 tries: {last}")
    }

    /// Waits until the text of `css` satisfies `ok`, returning it; panics with what it saw.
    pub fn wait_text(&self, css: &str, ok: impl Fn(&str) -> bool) -> String {
        self.wait_text_for(css, Duration::from_secs(20), ok)
    }

    /// [`Browser::wait_text`] with a longer patience, for big files.
    pub fn wait_text_for(
        &self,
        css: &str,
        patience: Duration,
        ok: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + patience;
        loop {
            let t = self.text_of(css);
            if ok(&t) {
                return t;
            }
            if Instant::now() > deadline {
                panic!(
                    "timed out waiting on `{css}`; last text: {t:?}\npage: {}",
                    self.text_of("body")
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn click(&self, css: &str) {
        let e = self.find(css).unwrap_or_else(|e| panic!("{e}"));
        self.cmd("POST", &format!("/element/{e}/click"), Some(json!({})))
            .expect("click");
    }

    /// Types into an element as a user would (keyboard events, one per character).
    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.find(css).unwrap_or_else(|e| panic!("{e}"));
        self.cmd(
            "POST",
            &format!("/element/{e}/value"),
            Some(json!({"text": text})),
        )
        .expect("send keys");
    }

    /// Empties an input (WebDriver "clear") and types `text` into it.
    pub fn replace_text(&self, css: &str, text: &str) {
        let e = self.find(css).unwrap_or_else(|e| panic!("{e}"));
        self.cmd("POST", &format!("/element/{e}/clear"), Some(json!({})))
            .expect("clear");
        self.type_into(css, text);
    }

    /// Presses keys on whatever has focus (WebDriver actions), as a user at the keyboard.
    pub fn press(&self, keys: &str) {
        let mut actions = Vec::new();
        for c in keys.chars() {
            actions.push(json!({"type": "keyDown", "value": c.to_string()}));
            actions.push(json!({"type": "keyUp", "value": c.to_string()}));
        }
        let body = json!({"actions": [{"type": "key", "id": "keyboard", "actions": actions}]});
        self.cmd("POST", "/actions", Some(body))
            .expect("key actions");
        let _ = self.cmd("DELETE", "/actions", None);
    }

    /// Chooses an option of a `<select>` by value, as picking it with the mouse does.
    pub fn select(&self, css: &str, value: &str) {
        let found = self.execute(
            "const s = document.querySelector(arguments[0]); if (!s) return false; s.value = arguments[1]; s.dispatchEvent(new Event('change', {bubbles: true})); return s.value === arguments[1];",
            json!([css, value]),
        );
        assert_eq!(found, json!(true), "no option {value:?} in {css}");
    }

    /// Waits for a file the page downloaded (into this browser's own profile) and returns it.
    pub fn downloaded(&self, name: &str) -> String {
        let path = self._profile.0.join("downloads").join(name);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(text) = std::fs::read_to_string(&path) {
                if !text.is_empty() {
                    return text;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no download {name} in {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends every later command into the frame `css` (WebDriver "switch to frame").
    pub fn enter_frame(&self, css: &str) {
        let e = self.find(css).unwrap_or_else(|e| panic!("{e}"));
        let reference = json!({"element-6066-11e4-a52e-4f735466cecf": e});
        self.cmd("POST", "/frame", Some(json!({"id": reference})))
            .unwrap_or_else(|e| panic!("entering {css}: {e}"));
    }

    /// Back to the top-level page.
    pub fn leave_frame(&self) {
        self.cmd("POST", "/frame", Some(json!({"id": null})))
            .unwrap_or_else(|e| panic!("leaving the frame: {e}"));
    }

    /// The page's current address.
    pub fn url(&self) -> String {
        let v = self
            .cmd("GET", "/url", None)
            .unwrap_or_else(|e| panic!("the page's address: {e}"));
        v.as_str()
            .unwrap_or_else(|| panic!("the page's address is not a string: {v}"))
            .to_string()
    }

    pub fn execute(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
        .expect("execute script")
    }

    /// Saves a PNG screenshot of the viewport.
    pub fn screenshot(&self, path: &Path) {
        let v = self.cmd("GET", "/screenshot", None).expect("screenshot");
        let png = base64_decode(v.as_str().expect("base64 png"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = http(
            self.port,
            "DELETE",
            &format!("/session/{}", self.session),
            None,
        );
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let table = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let Some(v) = table(c) else { continue };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}
