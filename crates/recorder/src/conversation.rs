//! `tracelab record --sessions`: conversations instead of independent prompts. Sessions arrive
//! open-loop (Poisson at `--session-rate`); inside one session the turns are a closed loop: turn
//! k + 1 is sent `--think-s` after turn k's reply ended and resends turns 1..k (every user
//! message and the server's own replies) before its new user message, so the server's prefix
//! cache decides how much of its prompt is prefilled again.
//!
//! The conversations are synthetic (`--sessions`: turns, think time, new user tokens per turn,
//! answer length, session arrival rate) or read from vLLM's multi-turn benchmark input
//! (`--conversations`, [`read_vllm`]), whose user messages are sent as they are while the
//! server's own replies replace the file's answers, as vLLM's benchmark does.
//!
//! The replies are held in memory only while their session runs: the trace keeps each turn's
//! token counts, the history it carried (`history_tokens` = the previous turn's prompt and
//! completion tokens as the server counted them) and a SHA-256 of the reply (`answer_sha256`),
//! never its text. A turn that fails leaves no reply to resend, so its session ends there: its
//! later turns are not sent, and the session does not qualify.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use serde_json::{json, Value};

pub use crate::conversation_file::{
    AnswerLength, ConversationFile, FileConversation, FileFormat, FileTurn, TurnInput,
};
use crate::openai::Api;
use crate::prompts::Rubric;
use crate::workload::{words, Lengths, Space};

/// The session workload's flags: the synthetic generator's, or a conversation file's.
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("session_source").args(["sessions", "conversations"]).multiple(true)))]
pub struct SessionArgs {
    /// Send N synthetic conversations instead of the prompt set (with --conversations: only
    /// its first N): each of --turns turns resends the whole conversation so far (user
    /// messages and the server's replies), the next turn starts --think-s after the reply, and
    /// sessions start open-loop at --session-rate. The trace keeps per turn `session_id`,
    /// `turn`, `history_tokens`, the server's cached prompt tokens and a hash of the reply
    /// (never its text); `tracelab report` judges each session by its turns. --warmup then
    /// counts single requests.
    #[arg(long, value_name = "N", conflicts_with_all = ["workload", "rate", "prompts", "duration", "concurrency", "repetitions", "max_tokens"])]
    pub sessions: Option<u32>,
    /// Replay a conversation file as sessions, its format read from its content. vLLM's
    /// multi-turn benchmark input (benchmarks/multi_turn: a JSON array of {"id", "messages":
    /// [{"role": "user" | "assistant", "content"}, …]}, as its convert_sharegpt_to_openai.py
    /// writes): each user message is a turn, sent with the conversation so far in which the
    /// server's own replies replace the file's answers (as vLLM's benchmark does); the file's
    /// answer sets the turn's max_tokens. AIPerf's session trace (mooncake_trace JSON Lines:
    /// lines grouped by `session_id`, each a turn of `text_input`, `input_length` (+ `hash_ids`)
    /// or a whole `messages` array, `output_length` its max_tokens, `delay` ms of think time
    /// after the previous reply, `timestamp` ms on the file's clock). --answer-tokens overrides
    /// the file's lengths. Sessions start at --session-rate, or without it at their first
    /// turn's `timestamp`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workload", "rate", "prompts", "duration", "concurrency", "repetitions", "max_tokens", "user_tokens"])]
    pub conversations: Option<PathBuf>,
    /// Turns per session (with --conversations: at most this many of each conversation).
    #[arg(long, value_name = "K", requires = "session_source")]
    pub turns: Option<u32>,
    /// Sessions started per second, Poisson with --seed.
    #[arg(long, value_name = "R", requires = "session_source")]
    pub session_rate: Option<f64>,
    /// The user's think time in seconds between a reply and the next turn.
    #[arg(
        long,
        value_name = "T",
        default_value_t = 0.0,
        requires = "session_source"
    )]
    pub think_s: f64,
    /// New user tokens per synthetic turn (the server's tokens where it has a tokenize
    /// endpoint, else words).
    #[arg(long, value_name = "N", default_value_t = 64, requires = "sessions")]
    pub user_tokens: u32,
    /// The reply length asked of every turn: its max_tokens, with ignore_eos where the engine
    /// takes it [default: 64; with --conversations, the file's answer].
    #[arg(long, value_name = "N", requires = "session_source")]
    pub answer_tokens: Option<u32>,
    /// The rubric every turn's reply is judged by: at least this many characters, trimmed (a
    /// synthetic message asks nothing more a rubric could check). 0 leaves turns not evaluated,
    /// and under the course's joint rule a turn not evaluated never qualifies.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        requires = "session_source"
    )]
    pub turn_min_chars: usize,
}

/// The answer length asked when neither --answer-tokens nor the file says.
const DEFAULT_ANSWER_TOKENS: u32 = 64;

/// A checked session workload.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPlan {
    /// Sessions sent.
    pub sessions: u32,
    /// Turns per session (with a file: the most any of its sessions sends).
    pub turns: u32,
    /// Sessions started per second (with `starts_from_file`: the file's sessions over its span).
    pub rate_per_s: f64,
    /// Sessions start at their first turn's timestamp in the file, not at --session-rate.
    pub starts_from_file: bool,
    pub think_s: f64,
    /// New user tokens per synthetic turn.
    pub user_tokens: u32,
    /// Every turn's max_tokens; None: the file's answer (or [`DEFAULT_ANSWER_TOKENS`]).
    pub answer_tokens: Option<u32>,
    /// Each reply's rubric (`min_chars`); 0: none, turns not evaluated.
    pub min_chars: usize,
    pub seed: u64,
    /// `--conversations`: the file's conversations, in its order.
    pub file: Option<Arc<ConversationFile>>,
    /// At most this many turns of each conversation (`--turns` with a file).
    pub turn_limit: Option<u32>,
}

impl SessionArgs {
    /// The plan, or what to fix; None without --sessions or --conversations.
    pub fn plan(&self, seed: u64, api: Api) -> Result<Option<SessionPlan>, String> {
        if self.sessions.is_none() && self.conversations.is_none() {
            return Ok(None);
        }
        if self.sessions == Some(0) {
            return Err("--sessions must be at least 1".into());
        }
        if api != Api::Chat {
            return Err(
                "sessions resend the conversation as chat messages: use --api chat (the default)"
                    .into(),
            );
        }
        if self.turns == Some(0) {
            return Err("--turns must be at least 1".into());
        }
        if let Some(rate_per_s) = self
            .session_rate
            .filter(|r| !(r.is_finite() && *r > 0.0 && *r <= 1e6))
        {
            return Err(format!(
                "--session-rate must be a positive number of sessions per second, got {rate_per_s}"
            ));
        }
        if !(self.think_s.is_finite() && (0.0..1e6).contains(&self.think_s)) {
            return Err(format!(
                "--think-s must be a number of seconds, 0 or more, got {}",
                self.think_s
            ));
        }
        if self.user_tokens == 0 {
            return Err("--user-tokens must be at least 1".into());
        }
        if self.answer_tokens == Some(0) {
            return Err("--answer-tokens must be at least 1".into());
        }
        let (sessions, turns, file) = match &self.conversations {
            None => (
                self.sessions.unwrap_or(0),
                self.turns
                    .ok_or("--sessions needs --turns K (turns per session)")?,
                None,
            ),
            Some(path) => {
                let bytes = std::fs::read(path)
                    .map_err(|e| format!("cannot read --conversations {}: {e}", path.display()))?;
                let file = read_conversations(&display_name(path), &bytes)
                    .map_err(|e| format!("{e}; nothing was sent"))?;
                let n = file.conversations.len() as u32;
                let sessions = self.sessions.map_or(n, |s| s.min(n));
                let limit = self.turns.unwrap_or(u32::MAX);
                let turns = file.conversations[..sessions as usize]
                    .iter()
                    .map(|c| (c.turns.len() as u32).min(limit))
                    .max()
                    .unwrap_or(0);
                (sessions, turns, Some(Arc::new(file)))
            }
        };
        // Sessions start at --session-rate, or at the file's own first-turn timestamps.
        let (rate_per_s, starts_from_file) = match (self.session_rate, &file) {
            (Some(r), _) => (r, false),
            (None, Some(f)) => match f.starts_ms() {
                Some(starts) => {
                    let span_s = starts[..sessions as usize]
                        .iter()
                        .copied()
                        .fold(0.0, f64::max)
                        / 1000.0;
                    (f64::from(sessions) / span_s.max(1.0), true)
                }
                None => {
                    return Err(match f.format {
                        FileFormat::Aiperf => format!(
                            "{}: not every session's first turn has a `timestamp`, so the file gives no schedule: give --session-rate R (sessions started per second)",
                            f.file
                        ),
                        FileFormat::Vllm => {
                            "sessions need --session-rate R (sessions started per second)".into()
                        }
                    })
                }
            },
            (None, None) => {
                return Err("sessions need --session-rate R (sessions started per second)".into())
            }
        };
        Ok(Some(SessionPlan {
            sessions,
            turns,
            rate_per_s,
            starts_from_file,
            think_s: self.think_s,
            user_tokens: self.user_tokens,
            answer_tokens: self.answer_tokens,
            min_chars: self.turn_min_chars,
            seed,
            turn_limit: file.as_ref().and(self.turns),
            file,
        }))
    }
}

/// A file's name as errors and the header give it (never its directory).
fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl SessionPlan {
    /// Turns of session `s` (0-based).
    pub fn turns_of(&self, s: u32) -> u32 {
        match &self.file {
            Some(f) => (f.conversations[s as usize].turns.len() as u32)
                .min(self.turn_limit.unwrap_or(u32::MAX)),
            None => self.turns,
        }
    }

    /// Every turn of every session.
    pub fn total_turns(&self) -> u64 {
        (0..self.sessions)
            .map(|s| u64::from(self.turns_of(s)))
            .sum()
    }

    /// The contract's name for the workload (the header's `prompt_set`).
    pub fn name(&self) -> String {
        match &self.file {
            Some(f) => format!("conversations:{}", f.file),
            None => "sessions:synthetic".into(),
        }
    }

    /// The header's `sessions` record: where the conversations come from and the parameters.
    pub fn record(&self, lengths: &Lengths, ignore_eos: bool) -> Value {
        let mut r = json!({
            "generator": match self.file.as_ref().map(|f| f.format) {
                Some(FileFormat::Vllm) => "vllm-multi-turn",
                Some(FileFormat::Aiperf) => "aiperf-session-trace",
                None => "synthetic",
            },
            "sessions": self.sessions,
            "turns": self.turns,
            "session_rate_per_s": if self.starts_from_file { Value::Null } else { json!(self.rate_per_s) },
            "session_starts": if self.starts_from_file { "the file's first-turn timestamps" } else { "Poisson at session_rate_per_s" },
            "think_s": self.think_s,
            "answer_tokens": match (self.answer_tokens, &self.file) {
                (Some(n), _) => json!(n),
                (None, Some(_)) => json!("the file's answer, its words at input_lengths' words per token"),
                (None, None) => json!(DEFAULT_ANSWER_TOKENS),
            },
            "seed": self.seed,
            "rubric": if self.min_chars > 0 { json!({ "min_chars": self.min_chars }) } else { Value::Null },
            "input_lengths": lengths.record(),
            "ignore_eos": ignore_eos,
            "history": "turn k + 1 resends turns 1..k: every user message and the server's own reply (held in memory only; the trace keeps its token counts and answer_sha256)",
        });
        match &self.file {
            Some(f) => {
                r["file"] = json!(f.file);
                r["sha256"] = json!(f.sha256);
                r["format"] = json!(match f.format {
                    FileFormat::Vllm => "vLLM benchmarks/multi_turn input: [{\"id\", \"messages\": [{\"role\", \"content\"}]}]",
                    FileFormat::Aiperf => "AIPerf mooncake_trace JSON Lines grouped by session_id: text_input | input_length (+ hash_ids) | messages, output_length, delay, timestamp",
                });
                if f.format == FileFormat::Aiperf {
                    r["history"] = json!("text_input and input_length turns: turn k + 1 resends turns 1..k with the server's own replies (AIPerf's deltas_without_responses); messages turns: the file's array sent as it is, the reply not carried (AIPerf's message_array_with_responses); think time: the turn's `delay`, else its `timestamp` offset from the session's first turn (never before the reply), else think_s");
                }
                r["conversations_in_file"] = json!(f.conversations.len());
                r["turn_limit"] = json!(self.turn_limit);
            }
            None => r["user_tokens"] = json!(self.user_tokens),
        }
        r
    }

    /// The contract's fingerprint of the workload: the file's sha256, or the generator's
    /// parameters (no file stands behind them). The seed is left out, as a prompt set's hash
    /// leaves it out: replications (`--runs`) draw new arrivals and text under one contract.
    /// The session rate is left out too: it is the load (`conditions.rate_per_s`), which a
    /// sweep varies step by step under one workload.
    pub fn sha256(&self) -> String {
        if let Some(f) = &self.file {
            return f.sha256.clone();
        }
        answer_sha256(&format!(
            "synthetic-sessions|{}|{}|{}|{}|{:?}|{}",
            self.sessions,
            self.turns,
            self.think_s,
            self.user_tokens,
            self.answer_tokens,
            self.min_chars
        ))
    }

    /// The rubric every turn's reply is judged by, when there is one.
    pub fn rubric(&self) -> Option<Rubric> {
        (self.min_chars > 0).then(|| Rubric {
            min_chars: Some(self.min_chars),
            ..Rubric::default()
        })
    }

    /// The id of session `s` (0-based): the file's conversation id, or `s1`, `s2`, ….
    pub fn session_id(&self, s: u32) -> String {
        match &self.file {
            Some(f) => f.conversations[s as usize].id.clone(),
            None => format!("s{}", s + 1),
        }
    }

    /// The new user message of `turn` (1-based) of session `s`: the file's, or synthetic words
    /// of its own, so no two sessions share a prefix beyond the chat template.
    pub fn user_message(&self, s: u32, turn: u32, lengths: &Lengths) -> String {
        if let Some(f) = &self.file {
            return match &f.conversations[s as usize].turns[turn as usize - 1].input {
                TurnInput::Text(text) => text.clone(),
                TurnInput::Synthetic { tokens, blocks } => {
                    crate::aiperf_trace::synthetic_text(s, turn, *tokens, blocks, lengths)
                }
                TurnInput::Messages(_) => String::new(),
            };
        }
        let id = self
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(u64::from(s) << 20)
            .wrapping_add(u64::from(turn));
        words(Space::Replay, id, self.user_tokens, lengths)
    }

    /// The max_tokens of `turn` of session `s`: --answer-tokens, else the file's answer to that
    /// user message (its words at the calibrated words per token, as vLLM's benchmark asks for
    /// the dataset answer's length), else [`DEFAULT_ANSWER_TOKENS`].
    pub fn max_tokens(&self, s: u32, turn: u32, lengths: &Lengths) -> u32 {
        if let Some(n) = self.answer_tokens {
            return n;
        }
        let answer = self.file.as_ref().and_then(|f| {
            f.conversations[s as usize]
                .turns
                .get(turn as usize - 1)
                .and_then(|t| t.answer)
        });
        match answer {
            Some(AnswerLength::Words(words)) => {
                ((words as f64 / lengths.words_per_token).round() as u32).max(1)
            }
            Some(AnswerLength::Tokens(n)) => n,
            None => DEFAULT_ANSWER_TOKENS,
        }
    }

    /// Puts `turn` (1-based) of session `s` into its conversation: a user message appended
    /// (synthetic, the file's text, or AIPerf's synthetic length), or AIPerf's whole `messages`
    /// array in place of what was there. True when the conversation carries the server's own
    /// replies (so `history_tokens` is the server's count), false for a file's message array.
    pub fn add_turn(
        &self,
        conversation: &mut Conversation,
        s: u32,
        turn: u32,
        lengths: &Lengths,
    ) -> bool {
        if let Some(f) = &self.file {
            if let TurnInput::Messages(m) =
                &f.conversations[s as usize].turns[turn as usize - 1].input
            {
                conversation.messages = m.clone();
                return false;
            }
        }
        conversation.user(self.user_message(s, turn, lengths));
        true
    }

    /// When `turn` (from 2) of session `s` is intended, in ms on the run's clock: the file's
    /// `delay` after the previous reply; else its `timestamp` offset from the session's first
    /// turn, from the session's start (never before the reply); else --think-s after the reply.
    pub fn turn_at_ms(&self, s: u32, turn: u32, start_ms: f64, reply_end_ms: f64) -> f64 {
        if let Some(f) = &self.file {
            let turns = &f.conversations[s as usize].turns;
            let t = &turns[turn as usize - 1];
            if let Some(d) = t.delay_ms {
                return reply_end_ms + d;
            }
            if let (Some(ts), Some(first)) = (t.timestamp_ms, turns[0].timestamp_ms) {
                return reply_end_ms.max(start_ms + (ts - first));
            }
        }
        reply_end_ms + self.think_s * 1000.0
    }

    /// When each session starts, ms from the first: the file's first-turn timestamps, or a
    /// Poisson stream at the rate (seeded).
    pub fn starts_ms(&self) -> Vec<f64> {
        if self.starts_from_file {
            if let Some(starts) = self.file.as_ref().and_then(|f| f.starts_ms()) {
                return starts[..self.sessions as usize].to_vec();
            }
        }
        crate::schedule::Schedule::new(
            crate::schedule::Arrival::Poisson,
            self.rate_per_s,
            1.0,
            self.seed,
        )
        .take(self.sessions as usize)
        .collect()
    }

    /// A warm-up request's max_tokens.
    pub fn warmup_max_tokens(&self) -> u32 {
        self.answer_tokens.unwrap_or(DEFAULT_ANSWER_TOKENS)
    }

    /// A warm-up request: one message in text of its own (never a session's), so it warms the
    /// connections and the engine but not the sessions' prefixes.
    pub fn warmup_message(&self, k: u64, lengths: &Lengths) -> String {
        words(Space::Warmup, k, self.user_tokens, lengths)
    }
}

/// Reads a conversation file by its content: a JSON array is vLLM's multi-turn input
/// ([`read_vllm`]), JSON Lines of objects with AIPerf's trace fields are AIPerf's session trace
/// ([`crate::aiperf_trace::read_aiperf`]).
pub fn read_conversations(file: &str, bytes: &[u8]) -> Result<ConversationFile, String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace()).copied();
    if first == Some(b'{') {
        let line = bytes
            .split(|b| *b == b'\n')
            .find(|l| l.iter().any(|b| !b.is_ascii_whitespace()))
            .unwrap_or_default();
        if let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(line) {
            if crate::aiperf_trace::FIELDS
                .iter()
                .any(|k| o.contains_key(*k))
            {
                return crate::aiperf_trace::read_aiperf(file, bytes);
            }
        }
    }
    read_vllm(file, bytes)
}

/// Reads vLLM's multi-turn benchmark input (`benchmarks/multi_turn/benchmark_serving_multi_turn.py
/// --input-file`): a JSON array of `{"id": string, "messages": [{"role", "content"}, …]}`,
/// messages alternating user and assistant from a user message, ids unique, user messages with
/// `role` and `content` only (vLLM's own checks). vLLM's other input, a
/// `"filetype": "generate_conversations"` object, is refused: it needs a tokenizer and text
/// files to become conversations. Errors name the file, the entry's line, and the field.
pub fn read_vllm(file: &str, bytes: &[u8]) -> Result<ConversationFile, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        format!(
            "{file}, line {}, column {}: not valid JSON ({e})",
            e.line(),
            e.column()
        )
    })?;
    let items = match value {
        Value::Array(items) => items,
        Value::Object(o) if o.get("filetype").and_then(Value::as_str) == Some("generate_conversations") => {
            return Err(format!(
                "{file}, line 1, field `filetype`: a vLLM configuration for generating conversations, not conversations \
                 (vLLM turns it into text with a tokenizer and text files); give the conversations themselves, or \
                 use --sessions for Trace Lab's own synthetic sessions"
            ))
        }
        _ => {
            return Err(format!(
                "{file}, line 1: expected a JSON array of conversations ({{\"id\", \"messages\"}}), as vLLM's benchmarks/multi_turn reads, \
                 or AIPerf's session trace (JSON Lines with `session_id` and one of `input_length`, `text_input`, `messages`)"
            ))
        }
    };
    if items.is_empty() {
        return Err(format!("{file}, line 1: the array holds no conversation"));
    }
    let lines = entry_lines(bytes);
    let mut seen = std::collections::HashSet::new();
    let mut conversations = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let line = lines.get(i).copied().unwrap_or(1);
        let at = |field: &str, what: String| {
            format!(
                "{file}, line {line}, field `{field}` (conversation {}): {what}",
                i + 1
            )
        };
        let Some(object) = item.as_object() else {
            return Err(at(
                "(entry)",
                "expected an object {\"id\", \"messages\"}".into(),
            ));
        };
        let id = match object.get("id") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.clone(),
            Some(Value::String(_)) => return Err(at("id", "empty".into())),
            Some(_) => return Err(at("id", "expected a string".into())),
            None => return Err(at("id", "missing".into())),
        };
        if !seen.insert(id.clone()) {
            return Err(at("id", format!("\"{id}\" appears more than once")));
        }
        let messages = match object.get("messages") {
            Some(Value::Array(m)) if !m.is_empty() => m,
            Some(Value::Array(_)) => return Err(at("messages", "no message".into())),
            Some(_) => return Err(at("messages", "expected an array".into())),
            None => return Err(at("messages", "missing".into())),
        };
        let mut turns: Vec<FileTurn> = Vec::new();
        for (j, m) in messages.iter().enumerate() {
            let field = |name: &str| format!("messages[{j}].{name}");
            let Some(m) = m.as_object() else {
                return Err(at(
                    &format!("messages[{j}]"),
                    "expected an object {\"role\", \"content\"}".into(),
                ));
            };
            let want = if j % 2 == 0 { "user" } else { "assistant" };
            match m.get("role") {
                Some(Value::String(r)) if r == want => {}
                Some(Value::String(r)) => {
                    return Err(at(
                        &field("role"),
                        format!("expected \"{want}\" (messages alternate user, assistant, … from a user message), found \"{r}\""),
                    ))
                }
                Some(_) => return Err(at(&field("role"), "expected a string".into())),
                None => return Err(at(&field("role"), "missing".into())),
            }
            let content = match m.get("content") {
                Some(Value::String(c)) => c,
                Some(_) => return Err(at(&field("content"), "expected a string".into())),
                None => return Err(at(&field("content"), "missing".into())),
            };
            if want == "user" {
                if let Some(extra) = m.keys().find(|k| *k != "role" && *k != "content") {
                    return Err(at(
                        &field(extra),
                        "a user message holds role and content only (vLLM's benchmark refuses more)".into(),
                    ));
                }
                if content.trim().is_empty() {
                    return Err(at(&field("content"), "an empty user message".into()));
                }
                turns.push(FileTurn {
                    input: TurnInput::Text(content.clone()),
                    answer: None,
                    delay_ms: None,
                    timestamp_ms: None,
                });
            } else if let Some(last) = turns.last_mut() {
                last.answer = Some(AnswerLength::Words(content.split_whitespace().count()));
            }
        }
        conversations.push(FileConversation { id, turns });
    }
    Ok(ConversationFile {
        file: file.to_string(),
        sha256: answer_sha256_bytes(bytes),
        format: FileFormat::Vllm,
        conversations,
    })
}

/// The 1-based line where each top-level array entry starts (a scan outside strings), so an
/// error can point into the file.
fn entry_lines(bytes: &[u8]) -> Vec<usize> {
    let (mut depth, mut line, mut in_string, mut escaped) = (0usize, 1usize, false, false);
    let mut expecting = false;
    let mut out = Vec::new();
    for &b in bytes {
        if b == b'\n' {
            line += 1;
        }
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if expecting && !b.is_ascii_whitespace() && b != b']' {
            out.push(line);
            expecting = false;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                expecting = depth == 1 && b == b'[';
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expecting = true,
            _ => {}
        }
    }
    out
}

/// One conversation's messages so far, for the next turn's request body.
#[derive(Debug, Default, Clone)]
pub struct Conversation {
    pub(crate) messages: Vec<Value>,
}

impl Conversation {
    pub fn user(&mut self, text: String) {
        self.messages
            .push(json!({ "role": "user", "content": text }));
    }

    /// The server's reply, resent as it came (never written anywhere).
    pub fn assistant(&mut self, text: String) {
        self.messages
            .push(json!({ "role": "assistant", "content": text }));
    }

    /// The chat request body carrying the whole conversation.
    pub fn body(&self, model: &str, max_tokens: u32, ignore_eos: bool) -> Vec<u8> {
        let mut body = json!({
            "model": model,
            "max_tokens": max_tokens,
            "stream": true,
            "stream_options": { "include_usage": true },
            "messages": self.messages,
        });
        if ignore_eos {
            body["ignore_eos"] = Value::Bool(true);
        }
        serde_json::to_vec(&body).expect("a body always serialises")
    }
}

/// The reply's fingerprint kept in the trace instead of its text.
pub fn answer_sha256(text: &str) -> String {
    answer_sha256_bytes(text.as_bytes())
}

fn answer_sha256_bytes(bytes: &[u8]) -> String {
    crate::conversation_file::sha256_hex(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> SessionArgs {
        SessionArgs {
            sessions: Some(3),
            conversations: None,
            turns: Some(2),
            session_rate: Some(1.0),
            think_s: 0.5,
            user_tokens: 10,
            answer_tokens: Some(8),
            turn_min_chars: 1,
        }
    }

    #[test]
    fn bad_flags_say_what_to_fix() {
        let err = |a: SessionArgs, api| a.plan(0, api).unwrap_err();
        assert!(err(
            SessionArgs {
                turns: None,
                ..args()
            },
            Api::Chat
        )
        .contains("--turns"));
        assert!(err(
            SessionArgs {
                session_rate: None,
                ..args()
            },
            Api::Chat
        )
        .contains("--session-rate"));
        assert!(err(
            SessionArgs {
                session_rate: Some(0.0),
                ..args()
            },
            Api::Chat
        )
        .contains("positive"));
        assert!(err(
            SessionArgs {
                think_s: -1.0,
                ..args()
            },
            Api::Chat
        )
        .contains("--think-s"));
        assert!(err(
            SessionArgs {
                answer_tokens: Some(0),
                ..args()
            },
            Api::Chat
        )
        .contains("--answer-tokens"));
        assert!(err(args(), Api::Completions).contains("--api chat"));
        assert_eq!(
            SessionArgs {
                sessions: None,
                ..args()
            }
            .plan(0, Api::Chat),
            Ok(None)
        );
        assert_eq!(args().plan(7, Api::Chat).unwrap().unwrap().total_turns(), 6);
    }

    #[test]
    fn a_turn_resends_the_conversation_and_sessions_do_not_share_text() {
        let plan = args().plan(1, Api::Chat).unwrap().unwrap();
        let one = Lengths::approximate(vec![]);
        let a1 = plan.user_message(0, 1, &one);
        assert_eq!(a1.split(' ').count(), 10);
        assert_ne!(a1, plan.user_message(1, 1, &one), "sessions differ");
        assert_ne!(a1, plan.user_message(0, 2, &one), "turns differ");
        assert_ne!(a1, plan.warmup_message(0, &one));
        assert_eq!(
            (plan.session_id(0), plan.max_tokens(0, 1, &one)),
            ("s1".into(), 8)
        );
        let mut c = Conversation::default();
        c.user(a1.clone());
        c.assistant("reply one".into());
        c.user(plan.user_message(0, 2, &one));
        let body: Value = serde_json::from_slice(&c.body("m", 8, true)).unwrap();
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(body["messages"][0]["content"], a1.as_str());
        assert_eq!(body["ignore_eos"], true);
        assert_eq!(body["max_tokens"], 8);
        assert_eq!(
            answer_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// A constructed file in vLLM's multi-turn input format (the shape its
    /// convert_sharegpt_to_openai.py writes; the text is made up here).
    const CONSTRUCTED: &str = r#"[
  {
    "id": "conv-a",
    "messages": [
      {"role": "user", "content": "What is a prefix cache?"},
      {"role": "assistant", "content": "It keeps the keys and values of a prompt's first tokens."},
      {"role": "user", "content": "And when is it evicted?"}
    ]
  },
  {
    "id": "conv-b",
    "messages": [
      {"role": "user", "content": "Name three colours."},
      {"role": "assistant", "content": "Red, green, blue."}
    ]
  }
]
"#;

    #[test]
    fn vllm_conversations_become_sessions_with_the_files_answer_lengths() {
        let f = read_vllm("conv.json", CONSTRUCTED.as_bytes()).unwrap();
        assert_eq!(f.conversations.len(), 2);
        let a = &f.conversations[0];
        assert_eq!(a.id, "conv-a");
        let texts: Vec<&TurnInput> = a.turns.iter().map(|t| &t.input).collect();
        assert_eq!(
            texts,
            [
                &TurnInput::Text("What is a prefix cache?".into()),
                &TurnInput::Text("And when is it evicted?".into())
            ]
        );
        // The last user message has no answer in the file.
        let answers: Vec<Option<AnswerLength>> = a.turns.iter().map(|t| t.answer).collect();
        assert_eq!(answers, [Some(AnswerLength::Words(11)), None]);
        assert_eq!(
            f.conversations[1].turns[0].answer,
            Some(AnswerLength::Words(3))
        );
        assert_eq!(f.format, FileFormat::Vllm);
        assert_eq!(f.sha256, answer_sha256(CONSTRUCTED));
        let plan = SessionPlan {
            sessions: 2,
            turns: 2,
            rate_per_s: 1.0,
            starts_from_file: false,
            think_s: 0.0,
            user_tokens: 64,
            answer_tokens: None,
            min_chars: 1,
            seed: 0,
            file: Some(Arc::new(f)),
            turn_limit: None,
        };
        let half = Lengths {
            words_per_token: 0.5,
            measured_at: Some("/tokenize".into()),
            asked: vec![],
        };
        assert_eq!(plan.total_turns(), 3);
        assert_eq!(plan.session_id(1), "conv-b");
        assert_eq!(plan.user_message(0, 2, &half), "And when is it evicted?");
        assert_eq!(
            plan.max_tokens(0, 1, &half),
            22,
            "11 words at 0.5 words a token"
        );
        assert_eq!(plan.max_tokens(0, 2, &half), DEFAULT_ANSWER_TOKENS);
        assert_eq!(plan.name(), "conversations:conv.json");
        let limited = SessionPlan {
            turn_limit: Some(1),
            ..plan.clone()
        };
        assert_eq!(limited.total_turns(), 2);
        let r = plan.record(&half, false);
        assert_eq!(r["generator"], "vllm-multi-turn");
        assert_eq!(r["conversations_in_file"], 2);
    }

    #[test]
    fn a_conversation_file_is_told_by_its_content() {
        let aiperf = read_conversations(
            "t.jsonl",
            b"\n{\"session_id\": \"a\", \"text_input\": \"x\"}\n",
        )
        .unwrap();
        assert_eq!(aiperf.format, FileFormat::Aiperf);
        let vllm = read_conversations("c.json", CONSTRUCTED.as_bytes()).unwrap();
        assert_eq!(vllm.format, FileFormat::Vllm);
        // An object with neither format's fields is vLLM's error, naming both formats.
        let e = read_conversations("x.json", br#"{"id": "a"}"#).unwrap_err();
        assert!(e.contains("or AIPerf's session trace"), "{e}");
    }

    #[test]
    fn bad_vllm_files_name_the_line_the_conversation_and_the_field() {
        let err = |text: &str| read_vllm("bad.json", text.as_bytes()).unwrap_err();
        let e = err("[\n {\"id\": \"a\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]},\n {\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"y\"}]}\n]");
        assert!(
            e.starts_with("bad.json, line 4, field `id` (conversation 2):"),
            "{e}"
        );
        assert!(e.contains("more than once"), "{e}");
        let e =
            err("[{\"id\": \"a\", \"messages\": [{\"role\": \"assistant\", \"content\": \"x\"}]}]");
        assert!(
            e.contains("line 1, field `messages[0].role` (conversation 1): expected \"user\""),
            "{e}"
        );
        let e = err("[{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"user\", \"content\": \"y\"}]}]");
        assert!(
            e.contains("`messages[1].role` (conversation 1): expected \"assistant\""),
            "{e}"
        );
        let e = err("[{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": 3}]}]");
        assert!(
            e.contains("`messages[0].content` (conversation 1): expected a string"),
            "{e}"
        );
        let e = err("[{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"x\", \"name\": \"n\"}]}]");
        assert!(
            e.contains(
                "`messages[0].name` (conversation 1): a user message holds role and content only"
            ),
            "{e}"
        );
        let e = err("[{\"messages\": []}]");
        assert!(e.contains("field `id` (conversation 1): missing"), "{e}");
        let e = err("[{\"id\": \"a\", \"messages\": []}]");
        assert!(
            e.contains("field `messages` (conversation 1): no message"),
            "{e}"
        );
        let e = err("[]");
        assert!(e.contains("no conversation"), "{e}");
        let e = err("[{\"id\": \"a\",\n\n \"messages\": [}]");
        assert!(e.starts_with("bad.json, line 3, column"), "{e}");
        // vLLM's other input: a generation config, which needs a tokenizer and text files.
        let e = err(r#"{"filetype": "generate_conversations", "num_conversations": 24}"#);
        assert!(
            e.contains("field `filetype`: a vLLM configuration for generating conversations"),
            "{e}"
        );
        let e = err(r#"{"id": "a"}"#);
        assert!(e.contains("expected a JSON array of conversations"), "{e}");
    }
}
