//! # tracelab-recorder
//!
//! The native half of Trace Lab: `tracelab record` measures a real OpenAI-compatible endpoint
//! (vLLM, llama.cpp, Ollama, SGLang, a hosted API) into a trace, `tracelab probe` scans what a
//! machine can measure. Every record is written through `tracelab_core::write` and every figure
//! is computed by `tracelab_core::Metrics`, so the recorder, `tracelab report` and the lab agree.
//!
//! Never stored or printed: response text, prompt text (only prompt ids), the endpoint URL,
//! request headers, the API key, host or user names, GPU UUIDs or serials.

pub mod aiperf_trace;
pub mod attempt;
pub mod clock;
pub mod conversation;
pub mod conversation_file;
pub mod dcgm;
pub mod engine;
pub mod engine_metrics;
pub mod exit;
pub mod export_stream;
pub mod gpu;
pub mod merge;
pub mod openai;
pub mod out;
pub mod parquet_export;
pub mod probe;
pub mod prom;
pub mod prompts;
pub mod record;
pub mod runtime;
pub mod schedule;
pub mod scrape;
pub mod shard;
pub mod share;
pub mod spill;
pub mod sse;
pub mod transport;
pub mod workload;
pub mod writer;
