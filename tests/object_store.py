"""Object storage on 127.0.0.1 for the remote split tests (and the remote bench case).

* `MotoS3`: moto's S3 in server mode (`ThreadedMotoServer`), a real S3 API,
  behind `RecordingProxy`, a small HTTP proxy that records every request
  (method, path, query, Range header, body bytes sent) and can answer 403 for
  chosen keys or stall a response: clients are pointed at the proxy through
  `AWS_ENDPOINT_URL`, exactly as they would be at any S3-compatible endpoint.
* `RangeHTTPServer`: a static file server that honours `Range` and sends an
  `ETag`, as object stores and CDNs do (`http.server` alone does not).

`LocalServer` is what every imitation here and in hub_server.py and gcs_server.py
shares: a free port on 127.0.0.1, a daemon thread, `release` at stop.

Everything listens on 127.0.0.1 only, and nothing is mocked: the clients
(s3fs/aiobotocore, fsspec's HTTP filesystem) speak HTTP to these servers.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

#: The fake credentials the tests give the S3 client: the secret must never be shown.
ACCESS_KEY_ID = "AKIAPLANLINTTESTKEY01"
SECRET_ACCESS_KEY = "planlint-test-secret-Zq9vX2mW7pL4"

_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers", "transfer-encoding", "upgrade"}


class QuietServer(ThreadingHTTPServer):
    """A threading server whose handler threads do not keep the process alive, and for which a
    client that hangs up (one that gave up on a stalled answer) is not an error."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class LocalServer:
    """An HTTP server on 127.0.0.1 (a free port) served from a daemon thread once started;
    `release` (set at stop) ends the answers a subclass holds back to play a stalled server."""

    release: threading.Event

    def _listen(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = QuietServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self):
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Request:
    method: str
    path: str  # /bucket/key
    query: str
    range: str | None
    sent: int = 0  # body bytes sent back
    status: int = 0


@dataclass
class Faults:
    deny: set = field(default_factory=set)  # paths answered 403
    stall: set = field(default_factory=set)  # paths whose GET never sends its body


class RecordingProxy(LocalServer):
    """Forwards every request to `upstream` (host, port), recording it; see Faults."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.requests: list[Request] = []
        self.faults = Faults()
        self.release = threading.Event()  # set at stop: stalled responses end
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _forward(self) -> None:
                parts = urlsplit(self.path)
                record = Request(self.command, parts.path, parts.query, self.headers.get("Range"))
                with proxy._lock:
                    proxy.requests.append(record)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if parts.path in proxy.faults.deny:
                    payload = (b"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>AccessDenied</Code>"
                               b"<Message>Access Denied</Message></Error>")
                    record.status = 403
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(payload) if self.command != "HEAD" else 0))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                    return
                connection = http.client.HTTPConnection(*proxy.upstream, timeout=60)
                try:
                    headers = {key: value for key, value in self.headers.items() if key.lower() not in _HOP}
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    record.status = response.status
                    self.send_response(response.status)
                    for key, value in response.getheaders():
                        if key.lower() not in _HOP:
                            self.send_header(key, value)
                    self.end_headers()
                    if self.command == "GET" and parts.path in proxy.faults.stall:
                        proxy.release.wait(120)  # the client's read timeout or budget must end this
                        return
                    while True:
                        chunk = response.read(1 << 16)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                        record.sent += len(chunk)
                finally:
                    connection.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

        self._listen(Handler)

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def body_gets(self, bucket: str) -> list[Request]:
        """GETs of object bodies in `bucket` (not listings: those have no key)."""
        prefix = f"/{bucket}/"
        return [r for r in self.requests if r.method == "GET" and r.path.startswith(prefix) and len(r.path) > len(prefix)]


class MotoS3:
    """moto's S3 server on 127.0.0.1, behind a RecordingProxy; `env()` points clients at the proxy."""

    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
        self.moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.moto.start()
        host, port = self.moto.get_host_and_port()
        self.proxy = RecordingProxy((host, port)).start()
        self._buckets = 0

    def env(self) -> dict:
        return {
            "AWS_ENDPOINT_URL": self.proxy.url,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET_ACCESS_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",  # never ask an instance metadata service
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        }

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.proxy.url, aws_access_key_id=ACCESS_KEY_ID,
                            aws_secret_access_key=SECRET_ACCESS_KEY, region_name="us-east-1")

    def bucket(self, versioned: bool = False) -> str:
        self._buckets += 1
        name = f"planlint-test-{self._buckets}"
        client = self.client()
        client.create_bucket(Bucket=name)
        if versioned:
            client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        return name

    def put(self, bucket: str, key: str, body: bytes) -> dict:
        return self.client().put_object(Bucket=bucket, Key=key, Body=body)

    def stop(self) -> None:
        self.proxy.stop()
        self.moto.stop()


def stop_client_threads(timeout: float = 10.0) -> list[str]:
    """End the threads the clients started in this process (fsspec's IO loop and its executor),
    so that later tests may fork (the data checks fork workers only in a process without threads).
    Returns the names of the threads still alive besides the main one."""
    import gc

    gc.collect()  # s3fs/fsspec close their client sessions from finalizers, on the IO loop
    try:
        import fsspec.asyn as asyn
    except ImportError:
        asyn = None
    if asyn is not None and asyn.loop[0] is not None:
        loop, thread = asyn.loop[0], asyn.iothread[0]
        try:
            asyn.sync(loop, loop.shutdown_default_executor, timeout=timeout)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout)
        if not loop.is_running():
            loop.close()
        asyn.loop[0] = None
        asyn.iothread[0] = None
    deadline = timeout
    for thread in threading.enumerate():
        if thread is not threading.main_thread():
            thread.join(deadline)
    return [thread.name for thread in threading.enumerate() if thread is not threading.main_thread()]


class RangeHTTPServer(LocalServer):
    """Serves `root` on 127.0.0.1 with Range, ETag and Content-Length; records requests like RecordingProxy."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.requests: list[Request] = []
        self.stall: set = set()  # paths never answered (a server that stalls), until `release`
        self.release = threading.Event()  # set at stop: stalled responses end
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                self._serve(body=False)

            def do_GET(self) -> None:
                self._serve(body=True)

            def _serve(self, body: bool) -> None:
                parts = urlsplit(self.path)
                record = Request(self.command, parts.path, parts.query, self.headers.get("Range"))
                server.requests.append(record)
                if parts.path in server.stall:
                    server.release.wait(120)  # the client's timeout or the budget must end this
                    return
                target = (server.root / parts.path.lstrip("/")).resolve()
                if not target.is_file() or server.root.resolve() not in target.parents:
                    record.status = 404
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                data = target.read_bytes()
                etag = '"' + hashlib.md5(data).hexdigest() + '"'
                start, end = 0, len(data)
                match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
                status = 200
                if match:
                    start = int(match.group(1))
                    end = min(len(data), int(match.group(2)) + 1) if match.group(2) else len(data)
                    status = 206
                piece = data[start:end]
                record.status = status
                self.send_response(status)
                self.send_header("Content-Length", str(len(piece)))
                self.send_header("Accept-Ranges", "bytes")
                self.send_header("ETag", etag)
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(data)}")
                self.end_headers()
                if body:
                    self.wfile.write(piece)
                    record.sent = len(piece)

        self._listen(Handler)
