//! Server-sent events decoded incrementally, as bytes arrive.
//!
//! Follows the WHATWG event-stream rules the servers rely on: lines end in LF, CRLF or CR (a
//! CRLF may be split across two reads), `:` lines are comments or keep-alives, a blank line
//! dispatches the event, several `data:` lines join with a newline. An event may be split across
//! reads and one read may hold several events; the caller timestamps each read.

/// One dispatched event: its `event:` type (when given) and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Why the byte stream is not an event stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseError {
    NotUtf8,
    /// A single line longer than [`MAX_LINE_BYTES`]: a runaway or non-SSE body.
    LineTooLong,
    /// `data:` lines adding up to more than [`MAX_EVENT_BYTES`] with no blank line to end the
    /// event: memory would otherwise grow for as long as the server keeps sending.
    EventTooLong,
}

impl SseError {
    /// A short, fixed description (kept in the trace's `detail`; never holds response text).
    pub fn class(self) -> &'static str {
        match self {
            SseError::NotUtf8 => "malformed SSE: not UTF-8",
            SseError::LineTooLong => "malformed SSE: a line over 16 MiB",
            SseError::EventTooLong => {
                "malformed SSE: data lines over 16 MiB without a blank line to end the event"
            }
        }
    }
}

/// The longest line accepted; a chat chunk is a few hundred bytes.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most data one event may gather over several `data:` lines before its blank line.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The unfinished line carried over from the previous read.
    line: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    /// The previous read ended in CR: an LF starting this read belongs to it.
    pending_cr: bool,
    started: bool,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Bytes of an event not yet complete are held (a line, or data lines before their blank line).
    pub fn mid_event(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    /// Feeds one read; complete events are appended to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.pending_cr {
            self.pending_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(i) = bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
            let (head, tail) = bytes.split_at(i);
            if self.line.is_empty() {
                self.process_line(head, out)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.process_line(&line, out)?;
                line.clear();
                self.line = line;
            }
            let terminator = tail[0];
            bytes = &tail[1..];
            if terminator == b'\r' {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    None => self.pending_cr = true,
                    Some(_) => {}
                }
            }
        }
        if self.line.len() + bytes.len() > MAX_LINE_BYTES {
            return Err(SseError::LineTooLong);
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// At the end of the body: a last line or event that lacks its final newline is still
    /// delivered, because some servers close right after `data: [DONE]`.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out)?;
        }
        self.dispatch(out);
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > MAX_EVENT_BYTES {
                    return Err(SseError::EventTooLong);
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {} // id, retry and unknown fields change nothing we measure
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the newline after the last data line
        out.push(SseEvent { event, data });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(reads: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for r in reads {
            d.feed(r, &mut out).unwrap();
        }
        d.finish(&mut out).unwrap();
        out
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn several_events_in_one_read() {
        let e = decode(&[b"data: a\n\ndata: b\n\ndata: [DONE]\n\n"]);
        assert_eq!(data(&e), ["a", "b", "[DONE]"]);
    }

    #[test]
    fn an_event_split_across_reads_at_every_byte() {
        let whole = b"data: {\"x\":1}\r\n\r\n: keep-alive\r\n\r\ndata: two\r\n\r\n";
        for cut in 0..whole.len() {
            let e = decode(&[&whole[..cut], &whole[cut..]]);
            assert_eq!(data(&e), ["{\"x\":1}", "two"], "cut at {cut}");
        }
    }

    #[test]
    fn crlf_split_between_reads_is_one_line_end() {
        let e = decode(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(data(&e), ["a", "b"]);
    }

    #[test]
    fn bare_cr_ends_lines() {
        let e = decode(&[b"data: a\r\rdata: b\r\r"]);
        assert_eq!(data(&e), ["a", "b"]);
    }

    #[test]
    fn comments_and_unknown_fields_are_ignored() {
        let e = decode(&[b": ping\n\nid: 7\nretry: 10\ndata: x\n\n:\n\n"]);
        assert_eq!(data(&e), ["x"]);
    }

    #[test]
    fn multi_line_data_joins_with_newline_and_event_type_is_kept() {
        let e = decode(&[b"event: error\ndata: a\ndata:b\n\n"]);
        assert_eq!(
            e,
            [SseEvent {
                event: Some("error".into()),
                data: "a\nb".into()
            }]
        );
    }

    #[test]
    fn last_event_without_blank_line_is_delivered_at_the_end() {
        let e = decode(&[b"data: a\n\ndata: [DONE]"]);
        assert_eq!(data(&e), ["a", "[DONE]"]);
    }

    #[test]
    fn bom_is_stripped_once() {
        let e = decode(&["\u{feff}data: a\n\n".as_bytes()]);
        assert_eq!(data(&e), ["a"]);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut d = SseDecoder::new();
        assert_eq!(
            d.feed(b"data: \xff\xfe\n\n", &mut Vec::new()),
            Err(SseError::NotUtf8)
        );
    }

    #[test]
    fn data_lines_that_never_end_an_event_are_capped() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let line = format!("data: {}\n", "x".repeat(64 * 1024));
        let mut fed = 0;
        let err = loop {
            match d.feed(line.as_bytes(), &mut out) {
                Ok(()) => fed += line.len(),
                Err(e) => break e,
            }
            assert!(fed <= MAX_EVENT_BYTES + line.len(), "never stopped");
        };
        assert_eq!(err, SseError::EventTooLong);
        assert!(out.is_empty());
        assert!(
            d.data.capacity() <= 2 * MAX_EVENT_BYTES,
            "what is held stays bounded"
        );
    }

    #[test]
    fn utf8_split_across_reads_is_fine() {
        let text = "data: 好\n\n".as_bytes();
        let e = decode(&[&text[..7], &text[7..]]);
        assert_eq!(data(&e), ["好"]);
    }
}
