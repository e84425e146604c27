"""`planlint server`'s start: the editor's `initialize` answered at once, the language server loaded after.

An editor sends `initialize` first and waits for the answer before it sends
anything else; pygls, lsprotocol and planlint's rules take a second or more
to import. So the first message is read here, with nothing of that loaded,
and answered with the capabilities the server has (`CAPABILITIES`: what
pygls computes for the server's features, as tests/test_server_start.py
checks against pygls itself for several editors). Then the server is built
and run on the same stream: it is handed that `initialize` first, to set
itself up as for any client, and its own answer to it is dropped. Messages
the editor sends meanwhile wait in the pipe.

Positions are UTF-16 code units, the protocol's default, which the server
computes (`server.Lines`): the answer says so, and the editor's offer of
other encodings is taken out of what the server is handed, so pygls agrees.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

INSTALL_HINT = "planlint server needs pygls: pip install 'planlint[lsp]'"

# ServerCapabilities: full document sync with open/close and save, hover, quick-fix code
# actions, workspace folders; UTF-16 positions. Kept equal to what pygls builds for
# planlint.server's features (tests/test_server_start.py).
CAPABILITIES: dict[str, Any] = {
    "positionEncoding": "utf-16",
    "textDocumentSync": {"openClose": True, "change": 1, "save": True},
    "hoverProvider": True,
    "codeActionProvider": {"codeActionKinds": ["quickfix"]},
    "executeCommandProvider": {"commands": []},
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
}


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="planlint server", description="Run the planlint language server over stdio.")
    parser.parse_args(argv)
    if not _installed("pygls", "lsprotocol"):
        print(f"planlint: error: {INSTALL_HINT}", file=sys.stderr)
        return 2
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    first = read_message(stdin)
    if first is None:
        return 0  # the editor went away before saying anything
    headers, body = first
    message = _json(body)
    early = isinstance(message, dict) and message.get("method") == "initialize" and "id" in message
    if early:
        _write(stdout, {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result()})
        body = json.dumps(_utf16_only(message)).encode("utf-8")
        headers = b"Content-Length: %d\r\n\r\n" % len(body)
    from planlint.server import build_server  # the language server, its rules and pygls: loaded now

    server = build_server()
    server.start_io(_Replay(headers + body, stdin), _DropAnswer(stdout, message["id"]) if early else stdout)
    return 0


def initialize_result() -> dict[str, Any]:
    from planlint import __version__

    return {"capabilities": CAPABILITIES, "serverInfo": {"name": "planlint", "version": __version__}}


def _installed(*names: str) -> bool:
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in names)
    except (ImportError, ValueError):
        return False


def read_message(stream: BinaryIO) -> tuple[bytes, bytes] | None:
    """(the header bytes, the body) of the next JSON-RPC message, framed as the protocol frames it; None at the end."""
    headers = b""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        headers += line
        if line in (b"\r\n", b"\n"):
            if length is not None:
                break
            headers = b""  # a stray blank line before the headers
            continue
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
    return headers, stream.read(length)


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


def _utf16_only(message: dict) -> dict:
    """`initialize` without the client's offer of position encodings: the server counts UTF-16 units."""
    params = message.get("params")
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    general = capabilities.get("general") if isinstance(capabilities, dict) else None
    if not isinstance(params, dict) or not isinstance(capabilities, dict) or not isinstance(general, dict) or "positionEncodings" not in general:
        return message
    general = {key: value for key, value in general.items() if key != "positionEncodings"}
    return {**message, "params": {**params, "capabilities": {**capabilities, "general": general}}}


def _write(stream: BinaryIO, message: dict) -> None:
    body = json.dumps(message).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


class _Replay:
    """Standard input with the bytes already read put back in front of it."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self._head = head
        self._stream = stream

    def readline(self) -> bytes:
        if self._head:
            end = self._head.find(b"\n") + 1 or len(self._head)
            line, self._head = self._head[:end], self._head[end:]
            return line
        return self._stream.readline()

    def read(self, size: int = -1) -> bytes:
        if not self._head:
            return self._stream.read(size)
        if size < 0:
            data, self._head = self._head, b""
            return data + self._stream.read()
        data, self._head = self._head[:size], self._head[size:]
        return data + (self._stream.read(size - len(data)) if len(data) < size else b"")


class _DropAnswer:
    """Standard output without the server's own answer to the `initialize` already answered."""

    def __init__(self, stream: BinaryIO, ident: Any) -> None:
        self._stream = stream
        self._ident = ident
        self._dropped = False

    def write(self, data: bytes) -> int:
        if not self._dropped:
            _, _, body = data.partition(b"\r\n\r\n")
            message = _json(body)
            if isinstance(message, dict) and "method" not in message and message.get("id") == self._ident:
                self._dropped = True
                return len(data)
        written = self._stream.write(data)
        return len(data) if written is None else written

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()
