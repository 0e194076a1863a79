//! A conversation file as `tracelab record --conversations` holds it once read and checked:
//! its sessions, each turn's input (a user message, AIPerf's synthetic length with its blocks,
//! or a whole message array), the reply length it asks, and its think time or timestamp. The
//! readers (`conversation::read_vllm`, `aiperf_trace::read_aiperf`) fill it; `conversation`
//! plans and sends it.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// One conversation of a file: its turns in order.
#[derive(Debug, Clone, PartialEq)]
pub struct FileConversation {
    pub id: String,
    pub turns: Vec<FileTurn>,
}

/// What one turn of a file sends, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct FileTurn {
    pub input: TurnInput,
    /// The reply length the file asks for (None: --answer-tokens or the default).
    pub answer: Option<AnswerLength>,
    /// AIPerf's `delay`: ms after the previous turn's reply before this turn is sent.
    pub delay_ms: Option<f64>,
    /// AIPerf's `timestamp`: ms on the file's own clock.
    pub timestamp_ms: Option<f64>,
}

/// What a turn sends.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnInput {
    /// A user message appended to the conversation so far, whose earlier replies are the
    /// server's own (vLLM's user messages; AIPerf's `text_input`).
    Text(String),
    /// AIPerf's `input_length` (and `hash_ids`): synthetic user text of that many tokens, built
    /// from 512-token blocks named by `hash_ids` where given (as Mooncake replays are), appended
    /// like a text message.
    Synthetic { tokens: u32, blocks: Vec<u64> },
    /// AIPerf's `messages`: the whole message array, sent as it is; the server's reply is not
    /// carried into the next turn (AIPerf's `message_array_with_responses`).
    Messages(Vec<Value>),
}

/// The reply length a file gives a turn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnswerLength {
    /// The words of the file's answer (vLLM), converted at the calibrated words per token.
    Words(usize),
    /// Tokens (AIPerf's `output_length`).
    Tokens(u32),
}

/// The formats `--conversations` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// vLLM's benchmarks/multi_turn input: a JSON array of `{"id", "messages"}`.
    Vllm,
    /// AIPerf's `mooncake_trace` JSON Lines with `session_id` (`crate::aiperf_trace`).
    Aiperf,
}

/// A conversation file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ConversationFile {
    /// The file's name (no directory).
    pub file: String,
    pub sha256: String,
    pub format: FileFormat,
    pub conversations: Vec<FileConversation>,
}

impl ConversationFile {
    /// The sessions' start times in ms from the first, when every session's first turn has a
    /// timestamp (AIPerf's fixed schedule); else None.
    pub fn starts_ms(&self) -> Option<Vec<f64>> {
        let firsts: Option<Vec<f64>> = self
            .conversations
            .iter()
            .map(|c| c.turns.first().and_then(|t| t.timestamp_ms))
            .collect();
        let firsts = firsts?;
        let min = firsts.iter().copied().fold(f64::INFINITY, f64::min);
        Some(firsts.iter().map(|t| t - min).collect())
    }
}

/// A SHA-256 in lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
