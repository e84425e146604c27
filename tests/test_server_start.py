"""`planlint server` answers `initialize` at once, and loads the language server after (planlint.serve).

The answer is written before pygls (or any of the server's rules) is even
imported: a test holds pygls' import until the answer is in, then lets it
go and uses the server. The capabilities answered are the ones pygls
computes for the server's features, for the editors pytest-lsp records
(VS Code, Neovim, Emacs), with positions in UTF-16 whatever the editor offers.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, write
from plan_overlay import REFERENCE

CLIENTS = Path(__import__("pytest_lsp").__file__).resolve().parent / "clients"
HOLD = """
import importlib.abc, importlib.machinery, os, sys, time

class _Hold(importlib.abc.MetaPathFinder):
    # pygls loads only once the file $PLANLINT_TEST_RELEASE exists (found, not loaded, meanwhile)
    def find_spec(self, name, path=None, target=None):
        if name != "pygls":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            real = spec.loader.exec_module
            def exec_module(module):
                while not os.path.exists(os.environ["PLANLINT_TEST_RELEASE"]):
                    time.sleep(0.01)
                real(module)
            spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Hold())
"""


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        assert line, "the server closed its output"
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))


def _read_until(stream, *predicates, seconds: float = 120) -> list[dict]:
    """The first message matching each predicate, in the predicates' order, whatever order they come in."""
    found: list[dict | None] = [None] * len(predicates)
    deadline = time.monotonic() + seconds
    while None in found and time.monotonic() < deadline:
        message = _read(stream)
        for index, predicate in enumerate(predicates):
            if found[index] is None and predicate(message):
                found[index] = message
                break
    assert None not in found, "no such message"
    return found  # type: ignore[return-value]


def test_initialize_is_answered_before_the_server_is_loaded(tmp_path):
    hold = write(tmp_path / "hold" / "sitecustomize.py", HOLD)
    release = tmp_path / "release"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    plan = write(repo / "plans" / "plan.yaml", REFERENCE.replace('release: "2026.11.03"', "release: latest", 1))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(hold.parent), str(ROOT / "src")]), PLANLINT_TEST_RELEASE=str(release))
    proc = subprocess.Popen([sys.executable, "-m", "planlint", "server"], cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        capabilities = {"general": {"positionEncodings": ["utf-8", "utf-16"]}}
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "rootUri": repo.as_uri(), "capabilities": capabilities}}))
        proc.stdin.flush()
        # pygls cannot have loaded: its import waits for `release`. (A server that loads it first never answers.)
        readable, _, _ = select.select([proc.stdout], [], [], 60)
        assert readable, "no answer to initialize while the language server could not load"
        answer = _read(proc.stdout)
        assert answer["id"] == 1 and answer["result"]["capabilities"]["positionEncoding"] == "utf-16"
        assert answer["result"]["serverInfo"]["name"] == "planlint"
        assert not release.exists()
        release.touch()
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        text = plan.read_text(encoding="utf-8")
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": plan.as_uri(), "languageId": "yaml", "version": 1, "text": text}}}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {
            "textDocument": {"uri": plan.as_uri()}, "position": {"line": 0, "character": 0}}}))
        proc.stdin.flush()
        published, hover = _read_until(proc.stdout, lambda m: m.get("method") == "textDocument/publishDiagnostics", lambda m: m.get("id") == 2)
        assert [d["code"] for d in published["params"]["diagnostics"]] == ["PL102"]
        assert "error" not in hover  # the server set itself up with the `initialize` it was handed
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None}))
        proc.stdin.flush()
        [stopped] = _read_until(proc.stdout, lambda m: m.get("id") == 3)
        assert stopped["result"] is None
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit", "params": None}))
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _pygls_answer(capabilities: dict) -> dict:
    """What pygls itself answers for planlint's server and a client with these capabilities."""
    from lsprotocol import types
    from pygls.capabilities import ServerCapabilitiesBuilder

    from planlint.server import build_server

    server = build_server()
    protocol = server.protocol
    client = protocol._converter.structure(capabilities, types.ClientCapabilities)
    features = set({**protocol.fm.features, **protocol.fm.builtin_features})
    built = ServerCapabilitiesBuilder(
        client, features, protocol.fm.feature_options, list(protocol.fm.commands), server._text_document_sync_kind,
        server._notebook_document_sync, ServerCapabilitiesBuilder.choose_position_encoding(client),
    ).build()
    return protocol._converter.unstructure(types.InitializeResult(capabilities=built, server_info=protocol.server_info))


@pytest.mark.parametrize("client", sorted(p.name for p in CLIENTS.glob("*.json")) + ["none"])
def test_the_early_answer_is_what_pygls_would_answer(client):
    from planlint.serve import _utf16_only, initialize_result

    capabilities = json.loads((CLIENTS / client).read_text(encoding="utf-8"))["capabilities"] if client != "none" else {}
    handed = _utf16_only({"params": {"capabilities": capabilities}})["params"]["capabilities"]  # what the server is given
    expected = _pygls_answer(handed)
    sync = expected["capabilities"]["textDocumentSync"]
    for absent_is_false in ("willSave", "willSaveWaitUntil"):  # pygls spells out false for clients that mention them
        if sync.get(absent_is_false) is False:
            del sync[absent_is_false]
    assert initialize_result() == expected
