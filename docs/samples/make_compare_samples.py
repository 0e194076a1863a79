#!/usr/bin/env python3
"""Writes the three compare samples in public/samples/ (baseline-a, baseline-rerun,
baseline-slower). They are CONSTRUCTED FOR TEACHING, not recorded: TTFTs are drawn from a
log-normal with a fixed seed, so the files are reproducible byte for byte:

    python3 docs/samples/make_compare_samples.py

baseline-a and baseline-rerun share one contract and one TTFT distribution (different draws):
a rerun that agrees. baseline-slower keeps the contract but its TTFTs come from a distribution
about 35 % slower with a heavier tail, and it has more failures: a real change.
"""
import json
import math
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "public" / "samples"
N_MEASURE, N_WARMUP, RATE = 150, 5, 2.5

CONDITIONS = {
    "model": "lesson-demo",
    "api": "chat",
    "max_tokens": 64,
    "prompt_set": "lesson-baseline",
    "prompt_set_sha256": "5d1f0c3e9a7b2468ace0f1357924680b1d3c5e7f9a0b2c4d6e8f1a3b5c7d9e0f",
    "repetitions": 1,
    "warmup": N_WARMUP,
    "arrival": "poisson",
    "rate_per_s": RATE,
    "timeout_s": 30.0,
    "first_token_timeout_s": 5.0,
}


def make(name, seed, median_s, sigma, failures, note):
    rng = random.Random(seed)
    header = {
        "kind": "header",
        "schema": "tracelab.trace",
        "version": 1,
        "tool": {"name": "tracelab-teaching-sample", "version": "1"},
        "note": note,
        "wall_clock_anchor_utc": "2026-11-02T09:00:00Z",
        "conditions": dict(CONDITIONS, seed=seed),
        "capabilities": {"workload_executed": True, "inference_benchmark": True, "gpu_telemetry": "unsupported"},
        "window": {"start_ms": N_WARMUP * 1000, "length_s": N_MEASURE / RATE},
        "window_cost": {"amount": 0.12, "currency": "CNY"},
        "defaults": {"ttft_threshold_s": 1.0, "comparison": "le"},
    }
    lines = [header]
    t = 0.0
    fail_at = set(rng.sample(range(N_MEASURE), len(failures)))
    fail_kinds = iter(failures)
    for i in range(-N_WARMUP, N_MEASURE):
        warm = i < 0
        start = round(t)
        t += rng.expovariate(RATE) * 1000.0 if not warm else 1000.0
        rid = f"W{i + N_WARMUP + 1}" if warm else f"R{i + 1}"
        rec = {"kind": "attempt", "id": rid, "business_id": rid, "attempt": 1,
               "phase": "warmup" if warm else "measure", "intended_start_ms": start, "start_ms": start}
        if not warm and i in fail_at:
            kind = next(fail_kinds)
            if kind == "timeout_before_first_token":
                rec.update(end_ms=start + 5000, outcome=kind, quality="not_evaluated")
            else:
                rec.update(first_byte_ms=start + 40, end_ms=start + 41, outcome="http_error", http_status=503,
                           quality="not_evaluated")
            lines.append(rec)
            continue
        ttft = median_s * math.exp(sigma * rng.gauss(0, 1)) * (3.0 if warm else 1.0)
        ttft_ms = round(ttft * 1000)
        first = start + ttft_ms
        events, at, tokens = [], first, 0
        n_events = rng.randint(12, 24)
        for k in range(n_events):
            if k:
                at += round(rng.uniform(25, 45))
            step = 1 if k == 0 else 3
            events.append([at, step])
            tokens += step
        rec.update(first_byte_ms=first - 30, first_token_ms=first, events=events, end_ms=at + 10,
                   outcome="success", quality="fail" if rng.random() < 0.04 else "pass",
                   input_tokens=48, output_tokens=tokens, tokens_from_usage=True)
        lines.append(rec)
    lines.append({"kind": "footer", "finished_cleanly": True, "attempts": len(lines) - 1, "gpu_samples": 0})
    (OUT / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines))


TEACHING = "Constructed for teaching (docs/samples/make_compare_samples.py), not recorded from a server."
make("baseline-a.jsonl", 101, 0.45, 0.35, ["timeout_before_first_token", "http_error"],
     TEACHING + " The baseline run of the compare exercise.")
make("baseline-rerun.jsonl", 202, 0.45, 0.35, ["http_error", "timeout_before_first_token"],
     TEACHING + " A rerun of baseline-a under the same contract: same distribution, new draws.")
make("baseline-slower.jsonl", 303, 0.60, 0.45,
     ["timeout_before_first_token"] * 4 + ["http_error"] * 3,
     TEACHING + " Same contract as baseline-a, but the server got slower: TTFT about 35 % higher, a heavier tail, more failures.")
