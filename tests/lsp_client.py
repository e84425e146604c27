"""A minimal Language Server Protocol client over stdio (JSON-RPC with Content-Length framing).

Enough to drive yaml-language-server as an editor does: initialize, answer
the server's configuration requests, open a document, and ask for
diagnostics, completion and hover. Every wait has a deadline.
"""

from __future__ import annotations

import json
import queue
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable


class LspClient:
    def __init__(self, argv: list[str], *, settings: dict, cwd: str | None = None) -> None:
        self.settings = settings
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, cwd=cwd)
        self._next_id = 0
        self._responses: dict[int, Any] = {}
        self.notifications: "queue.Queue[dict]" = queue.Queue()
        self._lock = threading.Condition()
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ------------------------------------------------------------------ wire
    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read_message(self) -> dict | None:
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value.strip())
        return json.loads(self.proc.stdout.read(length)) if length is not None else None

    def _read_loop(self) -> None:
        while True:
            message = self._read_message()
            if message is None:
                with self._lock:
                    self._lock.notify_all()
                return
            if "id" in message and "method" in message:  # a request from the server
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message)})
            elif "id" in message:
                with self._lock:
                    self._responses[message["id"]] = message
                    self._lock.notify_all()
            else:
                self.notifications.put(message)

    def _answer(self, request: dict) -> Any:
        if request["method"] == "workspace/configuration":
            return [self.settings.get(item.get("section", ""), None) for item in request["params"]["items"]]
        return None  # client/registerCapability, window/workDoneProgress/create, ...

    # ------------------------------------------------------------------ API
    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self._next_id += 1
        rid = self._next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        with self._lock:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"no answer to {method}: {self.stderr_tail()}")
                self._lock.wait(left)
        response = self._responses.pop(rid)
        if "error" in response:
            raise RuntimeError(f"{method}: {response['error']}")
        return response.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching notification: {self.stderr_tail()}")
            try:
                message = self.notifications.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if predicate(message):
                return message

    def stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-500:]

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.request("shutdown", None, timeout=10)
                self.notify("exit", None)
                self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001 - closing a server that misbehaved
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            self._stderr.close()
