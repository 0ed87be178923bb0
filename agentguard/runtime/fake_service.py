"""A small order service on 127.0.0.1 for replay-safety evals, the incident and the fault campaign.

It does what real services do in the incident: it commits the order as soon as the request
arrives, and may answer only after the client gave up. It does **not** deduplicate by key (unless
``--honour-keys``), so any duplicate the client sends becomes a second order. Lookups may lag
behind commits (``--visibility-lag``), like a read replica.

    python -m agentguard.runtime.fake_service --port 0      # prints "LISTENING <port>"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class OrderStore:
    def __init__(self, honour_keys: bool, visibility_lag_s: float) -> None:
        self.honour_keys = honour_keys
        self.visibility_lag_s = visibility_lag_s
        self.orders: list[dict[str, Any]] = []
        self.faults: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def next_fault(self) -> dict[str, Any]:
        with self.lock:
            return self.faults.pop(0) if self.faults else {}

    def create(self, cart_id: str, key: str | None) -> dict[str, Any]:
        with self.lock:
            if self.honour_keys and key:
                for order in self.orders:
                    if order["idempotency_key"] == key:
                        return order
            order = {
                "order_id": f"ord_{len(self.orders) + 1}",
                "cart_id": cart_id,
                "idempotency_key": key,
                "created_at": time.time(),
            }
            self.orders.append(order)
            return order

    def find(self, key: str | None, cart_id: str | None) -> list[dict[str, Any]]:
        visible_before = time.time() - self.visibility_lag_s
        with self.lock:
            return [
                order
                for order in self.orders
                if order["created_at"] <= visible_before
                and (key is None or order["idempotency_key"] == key)
                and (cart_id is None or order["cart_id"] == cart_id)
            ]


def _handler(store: OrderStore) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            payload = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up; the order (if any) is committed regardless

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length) or b"{}") if length else {}

        def do_GET(self) -> None:
            url = urllib.parse.urlparse(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path == "/orders":
                if "all" in query:
                    with store.lock:
                        self._reply(200, list(store.orders))
                    return
                key = query.get("idempotency_key", [None])[0]
                cart_id = query.get("cart_id", [None])[0]
                self._reply(200, store.find(key, cart_id))
                return
            self._reply(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = self._body()
            if self.path == "/faults":
                with store.lock:
                    store.faults.extend(body.get("faults", []))
                self._reply(200, {"queued": len(store.faults)})
                return
            if self.path == "/reset":
                with store.lock:
                    store.orders.clear()
                    store.faults.clear()
                self._reply(200, {})
                return
            if self.path != "/orders":
                self._reply(404, {"error": "not found"})
                return
            fault = store.next_fault()
            header_fault = self.headers.get("X-Fault")
            if header_fault:
                fault = json.loads(header_fault)
            if fault.get("reject_status"):
                # refused before anything was committed, with an explicit "come back later"
                self._reply(
                    int(fault["reject_status"]), {"error": "unavailable"}, {"Retry-After": "0"}
                )
                return
            key = self.headers.get("Idempotency-Key") or body.get("idempotency_key")
            order = store.create(str(body.get("cart_id")), key)
            delay = float(fault.get("delay_after_commit_s", 0))
            if delay:
                time.sleep(delay)
            self._reply(201, order)

    return Handler


def serve(port: int, honour_keys: bool, visibility_lag_s: float) -> None:
    store = OrderStore(honour_keys, visibility_lag_s)
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(store))
    server.daemon_threads = True
    print(f"LISTENING {server.server_address[1]}", flush=True)
    server.serve_forever()


class OrderService:
    """Runs the service in a subprocess: ``with OrderService() as service: service.url``."""

    def __init__(self, *, honour_keys: bool = False, visibility_lag_s: float = 0.0) -> None:
        self.honour_keys = honour_keys
        self.visibility_lag_s = visibility_lag_s
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def start(self) -> OrderService:
        command = [sys.executable, "-m", "agentguard.runtime.fake_service", "--port", "0"]
        command += ["--visibility-lag", str(self.visibility_lag_s)]
        if self.honour_keys:
            command.append("--honour-keys")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("LISTENING"):
            self.stop()
            raise RuntimeError(f"order service did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(5)
            self.process = None

    def __enter__(self) -> OrderService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def orders(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/orders?all=1"))

    def queue_faults(self, *faults: dict[str, Any]) -> None:
        self._request("POST", "/faults", {"faults": list(faults)})

    def reset(self) -> None:
        self._request("POST", "/reset", {})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--honour-keys", action="store_true")
    parser.add_argument("--visibility-lag", type=float, default=0.0)
    options = parser.parse_args(argv)
    serve(options.port, options.honour_keys, options.visibility_lag)


if __name__ == "__main__":
    main()
