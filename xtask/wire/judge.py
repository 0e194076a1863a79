"""The wire as the judge of a client's clock: `cargo xtask bench-wire` runs this.

A loopback packet capture (tcpdump, nanosecond stamps) is read here, independently of every
client under test: TCP is reassembled per connection, HTTP/1.1 requests and responses are cut
apart (chunked bodies decoded), each response's Server-Sent Events are found, and each event
is stamped with the capture time of the packet that carried its last byte. The scripted server
reports each request's serial number as its usage `prompt_tokens`, so a client's record of a
request (the recorder's `input_tokens`, guidellm's `input_metrics.text_tokens`) pairs with the
wire's exactly.

Per request the judge computes, for each client:
- TTFT error = the client's TTFT − the wire's TTFT (the request's first packet on the wire — its
  connection's SYN when it opened one — to the packet completing the first event with non-empty
  content). Needs no shared clock.
- first-token lateness = the client's first-token stamp − the wire's, on one clock: the client's
  clock is put on the capture's by the smallest difference over its first tokens (so the fastest
  is taken as 0 late; the figures are then a lower bound by that one delivery, ~10 µs).
- send lag = the request's last byte on the wire − the client's start, on that same clock.

Standard library only, so it runs on any Python 3.9+.
"""

import json
import struct
import sys


def read_pcap(path):
    """Yields (time_ns, src_port, dst_port, seq, flags, payload) for every IPv4/IPv6 TCP packet."""
    with open(path, "rb") as f:
        head = f.read(24)
        if len(head) < 24:
            raise SystemExit(f"{path}: not a pcap file (too short)")
        magic = struct.unpack("<I", head[:4])[0]
        if magic == 0xA1B23C4D:
            endian, nano = "<", True
        elif magic == 0xA1B2C3D4:
            endian, nano = "<", False
        elif magic == 0x4D3CB2A1:
            endian, nano = ">", True
        elif magic == 0xD4C3B2A1:
            endian, nano = ">", False
        else:
            raise SystemExit(f"{path}: not a pcap file (magic {magic:#x}); pcapng is not read")
        linktype = struct.unpack(endian + "I", head[20:24])[0]
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, incl, _orig = struct.unpack(endian + "IIII", rec)
            data = f.read(incl)
            t = sec * 1_000_000_000 + (frac if nano else frac * 1000)
            if linktype == 1:  # Ethernet (Linux loopback)
                ethertype = struct.unpack(">H", data[12:14])[0]
                ip = data[14:]
            elif linktype == 113:  # Linux cooked
                ethertype = struct.unpack(">H", data[14:16])[0]
                ip = data[16:]
            elif linktype == 0:  # BSD loopback
                ethertype = 0x0800 if struct.unpack("<I", data[:4])[0] == 2 else 0x86DD
                ip = data[4:]
            else:
                raise SystemExit(f"{path}: link type {linktype} is not read")
            if ethertype == 0x0800:
                ihl = (ip[0] & 0x0F) * 4
                total = struct.unpack(">H", ip[2:4])[0]
                if ip[9] != 6:
                    continue
                tcp = ip[ihl:total]
            elif ethertype == 0x86DD:
                if ip[6] != 6:
                    continue
                total = 40 + struct.unpack(">H", ip[4:6])[0]
                tcp = ip[40:total]
            else:
                continue
            sport, dport, seq = struct.unpack(">HHI", tcp[:8])
            offset = (tcp[12] >> 4) * 4
            flags = tcp[13]
            yield t, sport, dport, seq, flags, tcp[offset:]


class Stream:
    """One direction of one connection: its bytes in order and when each arrived."""

    def __init__(self):
        self.data = bytearray()
        self.ends = []  # (end offset, time) per packet that added bytes
        self.next = None
        self.syn = None  # when this direction's SYN passed (the connect began)

    def add(self, t, seq, flags, payload):
        if flags & 0x02:  # SYN takes one sequence number
            self.next = (seq + 1) & 0xFFFFFFFF
            self.syn = t
            return
        if self.next is None:
            self.next = seq
        if not payload:
            return
        ahead = (seq - self.next) & 0xFFFFFFFF
        if ahead >= 0x80000000:  # starts before what we have: a retransmission
            overlap = (self.next - seq) & 0xFFFFFFFF
            payload = payload[overlap:]
            if not payload:
                return
        elif ahead:
            raise SystemExit("a gap in a TCP stream: the capture lost packets (raise -B)")
        self.data += payload
        self.next = (self.next + len(payload)) & 0xFFFFFFFF
        self.ends.append((len(self.data), t))

    def time_of(self, offset):
        """When the byte at `offset` arrived (the packet that carried it)."""
        lo, hi = 0, len(self.ends)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.ends[mid][0] > offset:
                hi = mid
            else:
                lo = mid + 1
        return self.ends[lo][1]


def read_head(d, at):
    """The HTTP/1.1 head starting at `at`: (its first line, headers by lower-case name, the
    offset of its body), or None when it has not all arrived."""
    end = d.find(b"\r\n\r\n", at)
    if end < 0:
        return None
    lines = d[at:end].decode("latin-1").split("\r\n")
    headers = {}
    for h in lines[1:]:
        k, _, v = h.partition(":")
        headers[k.strip().lower()] = v.strip()
    return lines[0], headers, end + 4


def cut_requests(s):
    """(first byte offset, last byte offset, path) of each HTTP/1.1 request."""
    out, at, d = [], 0, bytes(s.data)
    while at < len(d):
        head = read_head(d, at)
        if head is None:
            break
        first, headers, body = head
        path = first.split(" ")[1] if " " in first else ""
        last = body + int(headers.get("content-length", "0")) - 1
        out.append((at, min(last, len(d) - 1), path))
        at = last + 1
    return out


def cut_responses(s):
    """Each response's events: [(offset of its last byte, event text)], in order."""
    out, at, d = [], 0, bytes(s.data)
    while at < len(d):
        head = read_head(d, at)
        if head is None:
            break
        _, headers, at = head
        body, where = bytearray(), []  # decoded body, and each decoded byte's wire offset
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while at < len(d):
                line_end = d.find(b"\r\n", at)
                size = int(d[at:line_end].split(b";")[0], 16)
                at = line_end + 2
                if size == 0:
                    at = d.find(b"\r\n", at) + 2
                    break
                body += d[at : at + size]
                where.extend(range(at, at + size))
                at += size + 2
        else:
            n = int(headers.get("content-length", "0"))
            body += d[at : at + n]
            where.extend(range(at, at + n))
            at += n
        # SSE lines may end in CRLF: fold each CRLF to LF, keeping every byte's wire offset
        # (a folded line end is stamped with its LF, the byte that completed it).
        b, offsets, raw, i = bytearray(), [], bytes(body), 0
        while i < len(raw):
            if raw[i : i + 2] == b"\r\n":
                b += b"\n"
                offsets.append(where[i + 1])
                i += 2
            else:
                b.append(raw[i])
                offsets.append(where[i])
                i += 1
        b, where, events, start = bytes(b), offsets, [], 0
        while True:
            sep = b.find(b"\n\n", start)
            if sep < 0:
                break
            events.append((where[sep + 1], b[start:sep].decode("utf-8", "replace")))
            start = sep + 2
        out.append(events)
    return out


def wire_requests(pcap, server_port, key="serial"):
    """serial → (request first byte time, request last byte time, first-token event time).

    With `key="order"` (a real server, whose usage carries no serial) the key is instead the
    request's place among the completions in the order their first packets went out: 0, 1, …"""
    # A client port is reused for a new connection as soon as the server closed the last one
    # (the server then holds TIME_WAIT): each client SYN begins a connection of its own.
    conns, current = [], {}
    for t, sport, dport, seq, flags, payload in read_pcap(pcap):
        if dport == server_port:
            if flags & 0x02 or sport not in current:
                current[sport] = len(conns)
                conns.append((Stream(), Stream()))
            conns[current[sport]][0].add(t, seq, flags, payload)
        elif sport == server_port and dport in current:
            conns[current[dport]][1].add(t, seq, flags, payload)
    found, in_order = {}, []
    for s, back in conns:
        requests = cut_requests(s)
        responses = cut_responses(back)
        for i, ((first, last, path), events) in enumerate(zip(requests, responses)):
            if not path.endswith("/completions"):
                continue
            first_token, serial = None, None
            for end, text in events:
                data = "".join(
                    line[5:].lstrip() for line in text.split("\n") if line.startswith("data:")
                )
                if not data or data == "[DONE]":
                    continue
                chunk = json.loads(data)
                usage = chunk.get("usage")
                if usage and usage.get("prompt_tokens") is not None:
                    serial = usage["prompt_tokens"]
                for choice in chunk.get("choices") or []:
                    content = (choice.get("delta") or {}).get("content")
                    if first_token is None and content:
                        first_token = back.time_of(end)
            if key == "order" and first_token is not None:
                began = s.syn if i == 0 and s.syn is not None else s.time_of(first)
                in_order.append((began, s.time_of(last), first_token))
                continue
            if serial is not None and first_token is not None:
                # A request that opened its connection began on the wire with the SYN: every
                # client's TTFT then holds the connect, and so does the wire's.
                began = s.syn if i == 0 and s.syn is not None else s.time_of(first)
                found[serial] = (began, s.time_of(last), first_token)
    if key == "order":
        return dict(enumerate(sorted(in_order)))
    return found


def recorder_records(path):
    """serial → (start ns, first token ns) on the recorder's clock (ns from its origin)."""
    out = {}
    with open(path) as f:
        for line in f:
            a = json.loads(line)
            if a.get("kind") != "attempt" or a.get("phase") != "measure":
                continue
            if a.get("first_token_ms") is None or a.get("input_tokens") is None:
                continue
            out[a["input_tokens"]] = (a["start_ms"] * 1e6, a["first_token_ms"] * 1e6)
    return out


def recorder_in_order(path, wire):
    """A trace paired with `wire_requests(…, key="order")`: its attempts by start, warm-up
    included (they went out on the wire too), then the measured ones kept."""
    attempts = []
    with open(path) as f:
        for line in f:
            a = json.loads(line)
            if a.get("kind") == "attempt" and a.get("start_ms") is not None:
                attempts.append(a)
    attempts.sort(key=lambda a: a["start_ms"])
    if len(attempts) != len(wire):
        raise SystemExit(
            f"{path}: {len(attempts)} attempts but {len(wire)} completions on the wire "
            "(a failed attempt without a first token cannot be paired in order)"
        )
    return {
        i: (a["start_ms"] * 1e6, a["first_token_ms"] * 1e6)
        for i, a in enumerate(attempts)
        if a["phase"] == "measure" and a.get("first_token_ms") is not None
    }


def recorder_stated(path):
    with open(path) as f:
        header = json.loads(f.readline())
    timing = (header.get("client") or {}).get("timing") or {}
    first = timing.get("first_token") or {}
    return first.get("p99_bound_ms"), first.get("p99_ms")


def guidellm_records(path):
    """serial → (start ns, first token ns), epoch, from guidellm's JSON output."""
    out = {}
    with open(path) as f:
        report = json.load(f)
    for bench in report["benchmarks"]:
        for r in bench["requests"]["successful"]:
            timings = r["info"]["timings"]
            serial = (r.get("input_metrics") or {}).get("text_tokens")
            first = timings.get("first_token_iteration")
            if serial is None or first is None:
                continue
            out[serial] = (timings["request_start"] * 1e9, first * 1e9)
    return out


def quantile(values, q):
    """Linear interpolation between closest ranks (NumPy's default)."""
    v = sorted(values)
    if not v:
        return float("nan")
    h = (len(v) - 1) * q
    lo = int(h)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (h - lo)


def judge(wire, records, window=None):
    """`window` (start, end), ns on the capture's clock: only requests that went out while
    this client ran pair with its records (a client that counted a prompt itself, without the
    usage, would otherwise pair with another client's request of that serial)."""
    if window is not None:
        wire = {k: w for k, w in wire.items() if window[0] <= w[0] <= window[1]}
    pairs = [(records[k], wire[k]) for k in records if k in wire]
    if not pairs:
        raise SystemExit("no request of the client's record was found on the wire")
    # The client's clock onto the capture's: the smallest first-token difference is taken as 0.
    offset = min(ft - w[2] for (_, ft), w in pairs)
    ttft_err = [((ft - st) - (w[2] - w[0])) / 1e6 for (st, ft), w in pairs]
    late = [(ft - offset - w[2]) / 1e6 for (_, ft), w in pairs]
    send = [(w[1] - (st - offset)) / 1e6 for (st, _), w in pairs]
    return {
        "paired": len(pairs),
        "unpaired": len(records) - len(pairs),
        "ttft_err_p50": quantile(ttft_err, 0.5),
        "ttft_err_p99": quantile(ttft_err, 0.99),
        "late_p50": quantile(late, 0.5),
        "late_p99": quantile(late, 0.99),
        "late_max": max(late),
        "send_p50": quantile(send, 0.5),
        "send_p99": quantile(send, 0.99),
        "late": late,
    }


def main(argv):
    if len(argv) < 5 or (len(argv) - 3) % 2:
        raise SystemExit(
            "usage: judge.py CAPTURE SERVER_PORT (recorder TRACE | guidellm JSON)…\n"
            "       judge.py CAPTURE SERVER_PORT recorder-ordered TRACE   (a real server: "
            "requests paired in the order they went out)"
        )
    tools = argv[3::2]
    wire = wire_requests(argv[1], int(argv[2]), "order" if "recorder-ordered" in tools else "serial")
    results = {}
    for tool, path in zip(tools, argv[4::2]):
        if tool in ("recorder", "recorder-ordered"):
            records = (
                recorder_records(path) if tool == "recorder" else recorder_in_order(path, wire)
            )
            result = judge(wire, records)
            bound, p99 = recorder_stated(path)
            result["stated_bound_ms"] = bound
            result["stated_p99_ms"] = p99
            if bound is not None:
                result["covered"] = sum(x <= bound for x in result["late"]) / len(result["late"])
        elif tool == "guidellm":
            result = judge(wire, guidellm_records(path))
        else:
            raise SystemExit(f"{tool}: expected recorder, recorder-ordered or guidellm")
        del result["late"]
        results[tool] = result
    results["wire_requests"] = len(wire)
    json.dump(results, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv)
