"""Captures byte-exact SSE bodies from a running llama.cpp server (llama_cpp.server) for the
conformance corpus in ../data/streams/.

Usage: python capture_streams.py HOST PORT OUT_DIR

For each case it writes NAME.sse (the response body exactly as received, chunked transfer
coding removed) and NAME.times (one line per body read: milliseconds since the request was
written, then the number of bytes), so a replay can keep the original timing.

Cases: `llamacpp_stop` (a stop sequence ends the answer: finish_reason "stop"),
`llamacpp_length` (max_tokens reached: "length"), `llamacpp_interrupted` (a second request
arrives while the first streams; with --interrupt_requests on, the first is cut) and
`llamacpp_interrupter` (that second request, complete).
"""

import json
import os
import socket
import sys
import threading
import time


def request(host, port, body):
    data = json.dumps(body).encode()
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode()
    s.sendall(head + data)
    return s, time.monotonic()


def capture(sock, t0, on_bytes=None):
    """Reads the whole response; returns (head, body, [(ms, n)]) with chunked coding removed."""
    raw = b""
    reads = []
    while True:
        b = sock.recv(65536)
        if not b:
            break
        reads.append((time.monotonic(), len(raw), len(b)))
        raw += b
        if on_bytes:
            on_bytes(raw)
    sock.close()
    head_end = raw.index(b"\r\n\r\n") + 4
    head = raw[:head_end].decode("latin-1")
    chunked = "transfer-encoding: chunked" in head.lower()
    body = b""
    times = []
    pos = head_end

    def arrival(offset):
        for t, start, n in reads:
            if start <= offset < start + n:
                return (t - t0) * 1000.0
        return (reads[-1][0] - t0) * 1000.0

    if chunked:
        while pos < len(raw):
            line_end = raw.index(b"\r\n", pos)
            size = int(raw[pos:line_end].split(b";")[0], 16)
            if size == 0:
                break
            start = line_end + 2
            body += raw[start : start + size]
            times.append((arrival(start + size - 1), size))
            pos = start + size + 2
    else:
        body = raw[head_end:]
        times.append((arrival(len(raw) - 1), len(body)))
    return head, body, times


def save(out_dir, name, head, body, times):
    with open(os.path.join(out_dir, name + ".sse"), "wb") as f:
        f.write(body)
    with open(os.path.join(out_dir, name + ".times"), "w") as f:
        for ms, n in times:
            f.write(f"{ms:.3f} {n}\n")
    status = head.split("\r\n")[0]
    print(f"{name}: {status}, {len(body)} bytes in {len(times)} chunks")


def chat(prompt, **extra):
    body = {"model": "tiny", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    body.update(extra)
    return body


def main():
    host, port, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)

    s, t0 = request(host, port, chat("hello there", max_tokens=200, stop=[" a", " e", " i", " o"], seed=1))
    save(out_dir, "llamacpp_stop", *capture(s, t0))

    s, t0 = request(host, port, chat("count to ten", max_tokens=8, seed=2))
    save(out_dir, "llamacpp_length", *capture(s, t0))

    # The second request goes out once the first has streamed a few events.
    second = {}
    sent = threading.Event()

    def interrupt(raw):
        if not sent.is_set() and raw.count(b"data: ") >= 4:
            sent.set()
            s2, t2 = request(host, port, chat("name a colour", max_tokens=8, seed=4))
            reader = threading.Thread(target=lambda: second.update(result=capture(s2, t2)))
            reader.start()
            second["reader"] = reader

    s, t0 = request(host, port, chat("tell a story", max_tokens=4000, seed=3))
    save(out_dir, "llamacpp_interrupted", *capture(s, t0, interrupt))
    if "reader" in second:
        second["reader"].join()
        save(out_dir, "llamacpp_interrupter", *second["result"])
    else:
        print("the first stream ended before it could be interrupted", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
