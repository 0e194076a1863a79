//! `tracelab record --workload`: a real workload file's requests as prompts. Each request gets a
//! synthetic prompt of the file's input length and `max_tokens` = its output length.
//!
//! The recorder has no tokenizer, so lengths are in words, converted once: where the server has
//! a tokenize endpoint (vLLM and SGLang `POST /tokenize`, llama.cpp `POST /tokenize`,
//! llama-cpp-python `POST /extras/tokenize/count`) a sample of the same words is measured there
//! and the header says `tokenizer`; else one word is taken as one token and the header says
//! `approximate`. The chat template's own tokens are not subtracted either way.
//!
//! Mooncake's `hash_ids` are prefix blocks of 512 tokens: a block's text depends on its id only,
//! so two requests sharing a block share that text and the server can reuse its cache for real.

use serde_json::{json, Map, Value};
use tracelab_core::workload::{Planned, MOONCAKE_BLOCK_TOKENS};

/// Short, common English words: with a leading space each is one token in the GPT, Llama and
/// Qwen vocabularies, so the sample measured at the tokenize endpoint speaks for every prompt.
const WORDS: [&str; 64] = [
    "the", "of", "and", "to", "in", "is", "was", "for", "on", "are", "with", "they", "be", "at",
    "one", "have", "this", "from", "by", "hot", "word", "but", "what", "some", "we", "can", "out",
    "other", "were", "all", "there", "when", "up", "use", "your", "how", "said", "an", "each",
    "she", "which", "do", "their", "time", "if", "will", "way", "about", "many", "then", "them",
    "write", "would", "like", "so", "these", "her", "long", "make", "thing", "see", "him", "two",
    "has",
];

/// Whose text a block is: the replay's own blocks, the warm-up's (never shared with the replay,
/// so a warm-up does not warm the replay's cache), and the calibration sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Replay,
    Warmup,
    Calibration,
}

/// SplitMix64: a word stream that depends on the block only.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The first `n` words of block `id`'s text (a shorter block is a prefix of a longer one).
fn block_words(space: Space, id: u64, n: usize, out: &mut String) {
    let seed = mix(id ^ mix(space as u64 + 1));
    for i in 0..n as u64 {
        let w = WORDS[(mix(seed.wrapping_add(i)) % WORDS.len() as u64) as usize];
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
}

/// How prompt lengths in words were matched to the server's tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Lengths {
    /// Words per token, from the server's tokenizer or taken as 1.
    pub words_per_token: f64,
    /// The endpoint that measured it (a path, never a URL); None: approximate.
    pub measured_at: Option<String>,
    /// The endpoints asked and how they answered.
    pub asked: Vec<String>,
}

impl Lengths {
    pub fn approximate(asked: Vec<String>) -> Lengths {
        Lengths {
            words_per_token: 1.0,
            measured_at: None,
            asked,
        }
    }

    fn words(&self, tokens: u32) -> usize {
        ((f64::from(tokens) * self.words_per_token).round() as usize).max(1)
    }

    /// The header's `input_lengths`.
    pub fn record(&self) -> Value {
        json!({
            "method": if self.measured_at.is_some() { "tokenizer" } else { "approximate" },
            "endpoint": self.measured_at,
            "words_per_token": self.words_per_token,
            "asked": self.asked,
            "note": match &self.measured_at {
                Some(path) => format!("prompt lengths set in the server's tokens, measured once at {path}; the chat template's own tokens come on top"),
                None => "no tokenize endpoint answered: one word is taken as one token, so prompt lengths are approximate".into(),
            },
        })
    }
}

/// The prompt of `request`: its blocks' texts in order (Mooncake), or text of its own (Azure).
pub fn prompt(space: Space, request: &Planned, lengths: &Lengths) -> String {
    let mut out = String::new();
    if request.blocks.is_empty() {
        block_words(
            space,
            request.index as u64,
            lengths.words(request.input_tokens),
            &mut out,
        );
        return out;
    }
    let last = request.blocks.len() - 1;
    for (i, &id) in request.blocks.iter().enumerate() {
        let tokens = if i < last {
            MOONCAKE_BLOCK_TOKENS
        } else {
            request.input_tokens - MOONCAKE_BLOCK_TOKENS * last as u32
        };
        block_words(space, id, lengths.words(tokens), &mut out);
    }
    out
}

/// Text of `tokens` tokens (at the calibrated words per token) whose words depend on
/// (`space`, `id`) only: a session's user messages.
pub fn words(space: Space, id: u64, tokens: u32, lengths: &Lengths) -> String {
    let mut out = String::new();
    block_words(space, id, lengths.words(tokens), &mut out);
    out
}

/// The words of the calibration sample.
pub const SAMPLE_WORDS: usize = 2048;

/// The sample the tokenize endpoint measures.
pub fn sample() -> String {
    let mut out = String::new();
    block_words(Space::Calibration, 0, SAMPLE_WORDS, &mut out);
    out
}

/// The token count in a tokenize endpoint's answer: `count` (vLLM, SGLang, llama-cpp-python)
/// or the length of `tokens` (llama.cpp).
pub fn count_in(answer: &Value) -> Option<u64> {
    answer.get("count").and_then(Value::as_u64).or_else(|| {
        answer
            .get("tokens")
            .and_then(Value::as_array)
            .map(|t| t.len() as u64)
    })
}

/// The tokenize endpoints, in the order asked, with the body each takes.
pub fn tokenize_requests(model: &str, text: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "/tokenize",
            json!({"model": model, "prompt": text, "add_special_tokens": false}),
        ),
        ("/tokenize", json!({"content": text})),
        (
            "/extras/tokenize/count",
            json!({"model": model, "input": text}),
        ),
    ]
}

/// The request body: the prompt, `max_tokens` = the file's output length, and `ignore_eos` where
/// the engine is known to take it (vLLM, SGLang, llama.cpp), so the output is as long as asked.
pub fn body(
    api: crate::openai::Api,
    model: &str,
    prompt: &str,
    output_tokens: u32,
    ignore_eos: bool,
) -> Vec<u8> {
    let plain = crate::openai::request_body(api, model, prompt, output_tokens);
    if !ignore_eos {
        return plain;
    }
    let mut v: Map<String, Value> =
        serde_json::from_slice(&plain).expect("our own body is a JSON object");
    v.insert("ignore_eos".into(), Value::Bool(true));
    serde_json::to_vec(&v).expect("a body always serialises")
}

/// Engines whose OpenAI endpoint takes `ignore_eos` (a stricter server may refuse unknown keys).
pub fn takes_ignore_eos(engine: Option<&str>) -> bool {
    matches!(engine, Some("vllm" | "sglang" | "llama.cpp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(index: usize, input: u32, blocks: &[u64]) -> Planned {
        Planned {
            index,
            at_ms: 0.0,
            input_tokens: input,
            output_tokens: 1,
            blocks: blocks.to_vec(),
        }
    }

    #[test]
    fn shared_blocks_share_text_and_lengths_follow_the_tokens() {
        let one = Lengths::approximate(vec![]);
        let a = prompt(Space::Replay, &planned(0, 1100, &[0, 1, 2]), &one);
        let b = prompt(Space::Replay, &planned(1, 600, &[0, 9]), &one);
        assert_eq!(a.split(' ').count(), 1100);
        assert_eq!(b.split(' ').count(), 600);
        let prefix: Vec<&str> = a.split(' ').take(512).collect();
        assert_eq!(
            prefix,
            b.split(' ').take(512).collect::<Vec<_>>(),
            "block 0 is the same text in both"
        );
        assert_ne!(
            a.split(' ').skip(512).take(88).collect::<Vec<_>>(),
            b.split(' ').skip(512).take(88).collect::<Vec<_>>()
        );
        // The warm-up's text never equals the replay's.
        let w = prompt(Space::Warmup, &planned(0, 600, &[0, 9]), &one);
        assert_ne!(w.split(' ').take(512).collect::<Vec<_>>(), prefix);
        // Two words per token doubles the words.
        let two = Lengths {
            words_per_token: 2.0,
            measured_at: Some("/tokenize".into()),
            asked: vec![],
        };
        assert_eq!(
            prompt(Space::Replay, &planned(3, 10, &[]), &two)
                .split(' ')
                .count(),
            20
        );
    }

    #[test]
    fn token_counts_from_each_engine() {
        assert_eq!(
            count_in(&json!({"count": 7, "max_model_len": 4096})),
            Some(7)
        );
        assert_eq!(count_in(&json!({"tokens": [1, 2, 3]})), Some(3));
        assert_eq!(count_in(&json!({"error": "no"})), None);
    }
}
