#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""pyroscope.py: a loopback mock of Pyroscope's POST /ingest for the exporter tests.

Usage: pyroscope.py --dir DIR [--host 127.0.0.1] [--port 0] [--port-file FILE]

POST /ingest   answers by the plan (200 when it is empty). Every request is appended to
               DIR/requests.log as "SEQ STATUS QUERY"; a 200 also saves DIR/SEQ.query (the raw
               query string), DIR/SEQ.headers (JSON) and, last, DIR/SEQ.body (the body bytes,
               renamed into place: once it exists the three files are complete).
POST /push.v1.PusherService/Push
               the push API (Connect unary, application/proto): answers by the same plan;
               a 200 decodes the PushRequest and saves DIR/SEQ.headers, then for its Nth
               RawSample (N from 1, across series) DIR/SEQ.N.labels (JSON [[name, value],
               ...] of its series), DIR/SEQ.N.id and, last, DIR/SEQ.N.body (raw_profile),
               SEQ counting requests as for /ingest. A body that does not decode gets HTTP
               400 (Connect's invalid_argument).
POST /control  ?mode=503|429|400|stall|ok&count=N[&retry_after=S][&seconds=S]: the next N
               /ingest requests (count=-1: all, until mode=ok) get HTTP 503, 429 with
               "Retry-After: S", 400, or a stall of S seconds followed by a 503; mode=ok clears
               the plan.
POST /reset    ?dir=DIR: saves into DIR from now on, numbering from 1 again, plan cleared (one
               mock serves many tests).
GET /requests  the number of /ingest requests seen, as text.

The port actually bound (--port 0 picks a free one) is printed on stdout and written to
--port-file (atomically) once the server listens.
"""
import argparse
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse


class State:
    def __init__(self, directory):
        self.dir = directory
        self.lock = threading.Lock()
        self.seq = 0
        self.mode = "ok"
        self.count = 0
        self.retry_after = 1
        self.seconds = 5.0

    def next_action(self):
        """Takes a request number and the planned answer for it."""
        with self.lock:
            self.seq += 1
            mode = "ok"
            if self.mode != "ok" and self.count != 0:
                mode = self.mode
                if self.count > 0:
                    self.count -= 1
            return self.seq, mode, self.retry_after, self.seconds

    def log(self, seq, status, query):
        with self.lock:
            with open(os.path.join(self.dir, "requests.log"), "a") as f:
                f.write(f"{seq} {status} {query}\n")


def pb_fields(buf):
    """The fields of one protobuf message: [(number, value)], value an int (varint) or bytes
    (length-delimited). Raises ValueError on anything else or on a truncated buffer."""
    out, i = [], 0

    def varint():
        nonlocal i
        shift = v = 0
        while True:
            if i >= len(buf) or shift > 63:
                raise ValueError("truncated varint")
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < len(buf):
        key = varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            out.append((num, varint()))
        elif wire == 2:
            n = varint()
            if i + n > len(buf):
                raise ValueError("truncated field")
            out.append((num, buf[i:i + n]))
            i += n
        else:
            raise ValueError(f"wire type {wire}")
    return out


def push_request(body):
    """PushRequest -> [(labels [(name, value)], [(raw_profile, ID)])] (push.proto)."""
    series = []
    for num, s in pb_fields(body):
        if num != 1:
            continue
        labels, samples = [], []
        for n2, v in pb_fields(s):
            if n2 == 1:
                kv = dict(pb_fields(v))
                labels.append((kv.get(1, b"").decode(), kv.get(2, b"").decode()))
            elif n2 == 2:
                kv = dict(pb_fields(v))
                samples.append((kv.get(1, b""), kv.get(2, b"").decode()))
        series.append((labels, samples))
    return series


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, path)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):
        pass

    def answer(self, status, body=b"", headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if "Content-Type" not in (headers or {}):
            self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):
        if self.path == "/requests":
            self.answer(200, str(self.state.seq).encode())
        else:
            self.answer(404, b"not found\n")

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.read_body()
        if url.path == "/control":
            self.control(urllib.parse.parse_qs(url.query))
        elif url.path == "/reset":
            self.reset(urllib.parse.parse_qs(url.query))
        elif url.path == "/ingest":
            self.ingest(url.query, body)
        elif url.path == "/push.v1.PusherService/Push":
            self.ingest(url.path, body, push=True)
        else:
            self.answer(404, b"not found\n")

    def control(self, q):
        st = self.state
        with st.lock:
            st.mode = q.get("mode", ["ok"])[0]
            st.count = int(q.get("count", ["1"])[0])
            st.retry_after = int(q.get("retry_after", ["1"])[0])
            st.seconds = float(q.get("seconds", ["5"])[0])
        self.answer(200, b"ok\n")

    def reset(self, q):
        st = self.state
        with st.lock:
            st.dir = q["dir"][0]
            os.makedirs(st.dir, exist_ok=True)
            st.seq = 0
            st.mode = "ok"
            st.count = 0
        self.answer(200, b"ok\n")

    def ingest(self, query, body, push=False):
        st = self.state
        seq, mode, retry_after, seconds = st.next_action()
        if mode == "503":
            st.log(seq, 503, query)
            self.answer(503, b"unavailable\n")
        elif mode == "429":
            st.log(seq, 429, query)
            self.answer(429, b"slow down\n", {"Retry-After": str(retry_after)})
        elif mode == "400":
            st.log(seq, 400, query)
            self.answer(400, b"invalid name\n")
        elif mode == "stall":
            st.log(seq, "stall", query)
            time.sleep(seconds)
            try:
                self.answer(503, b"stalled\n")
            except OSError:
                pass
        elif push:
            try:
                series = push_request(body)
            except (ValueError, UnicodeDecodeError) as e:
                st.log(seq, 400, query)
                self.answer(400, f"bad PushRequest: {e}\n".encode())
                return
            base = os.path.join(st.dir, str(seq))
            write_atomic(base + ".headers", json.dumps(dict(self.headers.items())).encode())
            n = 0
            for labels, samples in series:
                for raw, ident in samples:
                    n += 1
                    write_atomic(f"{base}.{n}.labels", json.dumps(labels).encode())
                    write_atomic(f"{base}.{n}.id", ident.encode())
                    write_atomic(f"{base}.{n}.body", raw)
            st.log(seq, 200, query)
            self.answer(200, b"", {"Content-Type": "application/proto"})
        else:
            base = os.path.join(st.dir, str(seq))
            write_atomic(base + ".query", query.encode())
            write_atomic(base + ".headers", json.dumps(dict(self.headers.items())).encode())
            write_atomic(base + ".body", body)
            st.log(seq, 200, query)
            self.answer(200, b"")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    Handler.state = State(args.dir)
    srv = Server((args.host, args.port), Handler)
    port = srv.server_address[1]
    if args.port_file:
        write_atomic(args.port_file, f"{port}\n".encode())
    print(port, flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
