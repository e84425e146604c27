"""A real HTTP registry on 127.0.0.1 for the tests, speaking planlint's registry contract.

    GET /v1/datasets/{name}/releases/{release}   200 if published, else 404
    GET /v1/graders/{name}/versions/{version}    200 if published, else 404
    GET /v1/datasets/{name}/releases             {"releases": [...]} if listed, else 404

Tests script odd behaviour per path (`script`) or for every request
(`default`): a status, headers, a delay before answering. Every request is
recorded with its raw path and Authorization header.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote


@dataclass
class Reply:
    status: int = 200
    headers: dict = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0


@dataclass(frozen=True)
class Seen:
    path: str
    authorization: str | None
    at: float


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request, client_address):  # a client that gave up: not our problem
        pass


class RegistryServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.published: set[tuple[str, str, str]] = set()
        self.listings: dict[tuple[str, str], list[str]] = {}
        self.script: dict[str, list[Reply]] = defaultdict(list)
        self.default: Reply | None = None
        self.requests: list[Seen] = []
        self._release = threading.Event()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802 - http.server's naming
                with owner._lock:
                    owner.requests.append(Seen(self.path, self.headers.get("Authorization"), time.monotonic()))
                    queue = owner.script.get(self.path)
                    reply = queue.pop(0) if queue else owner.default or owner._route(self.path)
                if reply.delay:
                    owner._release.wait(reply.delay)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args):
                pass

        self._server = _Server((host, 0), Handler)
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def _route(self, path: str) -> Reply:
        parts = [unquote(p) for p in path.split("?")[0].split("/")]
        if len(parts) == 6 and parts[1] == "v1" and parts[2] in ("datasets", "graders"):
            return Reply(200 if (parts[2], parts[3], parts[5]) in self.published else 404)
        if len(parts) == 5 and parts[1] == "v1" and parts[2] in ("datasets", "graders"):
            listed = self.listings.get((parts[2], parts[3]))
            if listed is not None:
                key = "releases" if parts[2] == "datasets" else "versions"
                return Reply(200, {"Content-Type": "application/json"}, json.dumps({key: listed}).encode())
        return Reply(404)

    def start(self) -> "RegistryServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]
