#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""kube_api.py: a loopback mock of the Kubernetes API server's pod list and watch (test_kube.c).

Serves, on 127.0.0.1 (port 0: a free one, printed alone on the first line of stdout):
  GET /api/v1/pods?fieldSelector=spec.nodeName=NODE[&resourceVersion=0]
      a PodList of the node's pods at resourceVersion 100: web-0 (namespace shop: init
      container setup, nginx, sidecar; containerd) and db-0 (namespace data: postgres on
      cri-o, and a container not started yet). A pod of another node is filtered out.
  GET ...&watch=1&resourceVersion=RV
      1st watch (RV 100): waits for POST /mock/release, then MODIFIED web-0 (nginx restarted:
      a new container id, rv 101), DELETED db-0 (rv 102), BOOKMARK (rv 105), and ends.
      2nd watch (RV 105): with --gone http, HTTP 410; with --gone event, an ERROR event with
      a 410 Status; either way pod api-0 (docker) appears meanwhile, seen only by a relist
      (resourceVersion 110). With --gone none, held open like the later ones.
      Later watches: held open, no events, until the client goes.
  GET /mock/stats     {"lists", "list_rvs", "watch_rvs", "unauthorized", "bad_requests"}
  POST /mock/release  lets the first watch send its events.
Requests without "Authorization: Bearer TOKEN" get 401; --fail-lists N answers the first N
lists with 500. --tls DIR serves HTTPS with a self-signed certificate for 127.0.0.1 made with
the openssl command, written to DIR/ca.crt (the client's CA file) and DIR/tls.key. Watch streams are chunked, one JSON event per line, as the API server sends
them (Kubernetes API concepts, "Efficient detection of changes").
"""
import argparse
import json
import os
import select
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

UID_WEB = "5d1c7a0e-3b2f-4c8e-9a61-0f2b7c4d8e11"
UID_DB = "8f0e4a52-6c1d-4b7a-b3e9-2a5c6d7e8f22"
UID_API = "c3a9e1f4-7b2d-4e6a-8c5f-1d0b9a8e7f33"
UID_OTHER = "e7b2c4d6-1a3f-4e5b-9c7d-8f0a2b4c6d44"


def cid(pair):
    """A 64-hex container id: pair repeated 32 times."""
    return pair * 32


def pod(name, namespace, uid, node, statuses, init=(), labels=None, rv="100"):
    """A v1 Pod with the fields bpfprof reads, plus some it must skip."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid,
            "resourceVersion": rv,
            "labels": labels or {},
            "managedFields": [{
                "manager": "kubelet",
                "operation": "Update",
                "subresource": "status",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {"f:conditions": {
                    'k:{"type":"Ready"}': {".": {}, "f:status": {}, "f:type": {}}}}},
            }],
        },
        "spec": {"nodeName": node, "containers": [{"name": s[0]} for s in statuses]},
        "status": {
            "phase": "Running",
            "initContainerStatuses": [
                {"name": n, "containerID": c, "ready": False, "restartCount": 0}
                for n, c in init],
            "containerStatuses": [
                dict({"name": n, "ready": bool(c), "restartCount": 0},
                     **({"containerID": c} if c else {"state": {"waiting": {}}}))
                for n, c in statuses],
        },
    }


def web_pod(nginx, rv):
    return pod("web-0", "shop", UID_WEB, "node-1",
               [("nginx", "containerd://" + nginx), ("sidecar", "containerd://" + cid("2a"))],
               init=[("setup", "containerd://" + cid("0a"))],
               labels={"app.kubernetes.io/name": "web", "app": "not-this"}, rv=rv)


def status_410(rv):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "too old resource version: %s (110)" % rv, "reason": "Expired",
            "code": 410}


class Mock:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.stopping = threading.Event()
        self.rv = 100
        self.pods = {
            UID_WEB: web_pod(cid("1a"), "100"),
            UID_DB: pod("db-0", "data", UID_DB, "node-1",
                        [("postgres", "cri-o://" + cid("4b")), ("backup", None)],
                        labels={"app": "db"}),
            UID_OTHER: pod("elsewhere", "shop", UID_OTHER, "node-2",
                           [("x", "containerd://" + cid("6d"))]),
        }
        self.stats = {"lists": 0, "list_rvs": [], "watch_rvs": [], "unauthorized": 0,
                      "bad_requests": 0}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mock = None

    def log_message(self, fmt, *args):
        if self.mock.args.verbose:
            sys.stderr.write("kube_api: " + fmt % args + "\n")

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, code, message, counter=None):
        if counter:
            with self.mock.lock:
                self.mock.stats[counter] += 1
        self.send_json(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                              "message": message, "code": code})

    def do_POST(self):
        if self.path == "/mock/release":
            self.mock.release.set()
            self.send_json(200, {})
        else:
            self.fail(404, "no such path")

    def do_GET(self):
        m = self.mock
        url = urlsplit(self.path)
        if url.path == "/mock/stats":
            with m.lock:
                self.send_json(200, m.stats)
            return
        if url.path != "/api/v1/pods":
            self.fail(404, "no such path", "bad_requests")
            return
        if self.headers.get("Authorization") != "Bearer " + m.args.token:
            self.fail(401, "Unauthorized", "unauthorized")
            return
        q = {k: v[-1] for k, v in parse_qs(url.query).items()}
        sel = q.get("fieldSelector", "")
        if not sel.startswith("spec.nodeName="):
            self.fail(400, "want fieldSelector=spec.nodeName=NODE, got '%s'" % sel,
                      "bad_requests")
            return
        node = sel[len("spec.nodeName="):]
        if q.get("watch") in ("1", "true"):
            self.watch(node, q)
        else:
            self.list(node, q)

    def list(self, node, q):
        m = self.mock
        with m.lock:
            m.stats["lists"] += 1
            m.stats["list_rvs"].append(q.get("resourceVersion", ""))
            failing = m.stats["lists"] <= m.args.fail_lists
            items = [p for p in m.pods.values() if p["spec"]["nodeName"] == node]
            rv = str(m.rv)
        if failing:
            self.fail(500, "etcdserver: request timed out")
            return
        self.send_json(200, {"kind": "PodList", "apiVersion": "v1",
                             "metadata": {"resourceVersion": rv}, "items": items})

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send_event(self, etype, obj):
        data = (json.dumps({"type": etype, "object": obj}) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def hold(self):
        """Keeps the stream open, sending nothing, until the client or the mock goes."""
        while not self.mock.stopping.is_set():
            r, _, _ = select.select([self.connection], [], [], 0.2)
            if r and not self.connection.recv(1):
                break
        self.close_connection = True

    def watch(self, node, q):
        m = self.mock
        rv = q.get("resourceVersion", "")
        with m.lock:
            m.stats["watch_rvs"].append(rv)
            nth = len(m.stats["watch_rvs"])
        if nth == 1:
            self.start_stream()
            if not m.release.wait(30):
                self.end_stream()
                return
            with m.lock:
                web = web_pod(cid("3a"), "101")
                m.pods[UID_WEB] = web
                db = dict(m.pods.pop(UID_DB))
                db["metadata"] = dict(db["metadata"], resourceVersion="102")
                m.rv = 105
            self.send_event("MODIFIED", web)
            self.send_event("DELETED", db)
            self.send_event("BOOKMARK", {"kind": "Pod", "apiVersion": "v1",
                                         "metadata": {"resourceVersion": "105"}})
            self.end_stream()
            return
        if nth == 2 and m.args.gone != "none":
            with m.lock:
                m.pods[UID_API] = pod("api-0", "shop", UID_API, "node-1",
                                      [("api", "docker://" + cid("5c"))], rv="110",
                                      labels={"app": "api"})
                m.rv = 110
            if m.args.gone == "http":
                self.send_json(410, status_410(rv))
            else:
                self.start_stream()
                self.send_event("ERROR", status_410(rv))
                self.end_stream()
            return
        self.start_stream()
        self.hold()


def exit_with_parent(server, ppid):
    """Stops serving when the test that started the mock is gone (killed, crashed)."""
    while os.getppid() == ppid:
        time.sleep(0.5)
    server.shutdown()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--token", required=True, help="the bearer token to accept")
    ap.add_argument("--gone", choices=("http", "event", "none"), default="http",
                    help="how the 2nd watch answers (410 as HTTP status, as ERROR event)")
    ap.add_argument("--fail-lists", type=int, default=0, help="answer the first N lists 500")
    ap.add_argument("--tls", metavar="DIR", help="HTTPS; the certificate in DIR/ca.crt")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    Handler.mock = Mock(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.tls:
        cert, key = os.path.join(args.tls, "ca.crt"), os.path.join(args.tls, "tls.key")
        # Made now, valid from now: a committed one could be "not yet valid" on a skewed clock.
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-days", "2", "-nodes", "-subj",
                        "/CN=kube-api-mock", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=exit_with_parent, args=(server, os.getppid()), daemon=True).start()
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        Handler.mock.stopping.set()
        server.server_close()


if __name__ == "__main__":
    main()
