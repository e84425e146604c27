"""How long `planlint server` takes to answer `initialize`, and from a change to its diagnostics.

A minimal JSON-RPC client over the server's stdio (no client library in the
way). First the start: the time from starting the process to its answer to
`initialize` (what an editor waits on; sent with VS Code's client
capabilities when pytest-lsp, in the test extra, has them), and from there
to the diagnostics of the first document opened (the server loads after it
answers), over several starts. Then, on a small and a 1 MiB plan: open the
plan, then change it N times, each time timing from the didChange
notification to the publishDiagnostics for that version. That figure
includes the server's debounce (planlint.server.DEBOUNCE_SECONDS), which is
also printed on its own.

    python bench/lsp_latency.py [--changes 7] [--starts 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "tests" / "fixtures" / "reference_plan.yaml").read_text(encoding="utf-8")


def big_plan(size: int = 1024 * 1024 - 4096) -> str:
    """The reference plan whose eval split names its tasks: about 1 MiB of task ids."""
    head = REFERENCE.replace("    path: data/retail/eval.jsonl\n", "    tasks:\n", 1)
    lines, total, i = [], len(head.encode()), 0
    while total < size:
        line = f"      - refund-{i:08d}\n"
        lines.append(line)
        total += len(line)
        i += 1
    at = head.index("    tasks:\n") + len("    tasks:\n")
    return head[:at] + "".join(lines) + head[at:]


class Client:
    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-I", "-m", "planlint", "server"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, method: str, params: dict, *, request: bool = False) -> int | None:
        message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            self.next_id += 1
            ident = message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return ident

    def receive(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def wait(self, predicate) -> dict:
        while True:
            message = self.receive()
            if predicate(message):
                return message

    def close(self) -> None:
        ident = self.send("shutdown", {}, request=True)
        self.wait(lambda m: m.get("id") == ident)
        self.send("exit", {})
        self.proc.wait(timeout=30)


def diagnostics(uri: str, version: int):
    return lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri and m["params"].get("version") == version


def client_capabilities() -> dict:
    """VS Code's, as pytest-lsp records them; none without it."""
    try:
        import pytest_lsp
    except ImportError:
        return {}
    recorded = sorted((Path(pytest_lsp.__file__).parent / "clients").glob("visual_studio_code_*.json"))
    return json.loads(recorded[-1].read_text(encoding="utf-8"))["capabilities"] if recorded else {}


def measure_start(text: str, starts: int) -> tuple[list[float], list[float]]:
    """(process start -> initialize answered, initialize answered -> first diagnostics), per start."""
    answered, first = [], []
    capabilities = client_capabilities()
    for _ in range(starts):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / ".git").mkdir()
            plan = root / "plans" / "plan.yaml"
            plan.parent.mkdir()
            plan.write_text(text, encoding="utf-8")
            started = time.perf_counter()
            client = Client(root)
            ident = client.send("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities}, request=True)
            client.wait(lambda m, ident=ident: m.get("id") == ident)
            ready = time.perf_counter()
            answered.append(ready - started)
            client.send("initialized", {})
            uri = plan.as_uri()
            client.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
            client.wait(diagnostics(uri, 1))
            first.append(time.perf_counter() - ready)
            client.close()
    return answered, first


def measure(text: str, changes: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        plan = root / "plans" / "plan.yaml"
        plan.parent.mkdir()
        plan.write_text(text, encoding="utf-8")
        client = Client(root)
        ident = client.send("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}}, request=True)
        client.wait(lambda m: m.get("id") == ident)
        client.send("initialized", {})
        uri = plan.as_uri()
        client.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
        client.wait(diagnostics(uri, 1))
        times = []
        for version in range(2, changes + 2):
            changed = text.replace("max_spend: 250", f"max_spend: {250 + version}", 1)
            started = time.perf_counter()
            client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": changed}]})
            client.wait(diagnostics(uri, version))
            times.append(time.perf_counter() - started)
        client.close()
        return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=7)
    parser.add_argument("--starts", type=int, default=5, help="server starts timed for initialize (default 5)")
    args = parser.parse_args()
    from planlint.server import DEBOUNCE_SECONDS

    answered, first = measure_start(REFERENCE, args.starts)
    print(f"initialize: answered {statistics.median(answered):.3f} s after the process started (median; max {max(answered):.3f} s "
          f"over {len(answered)} starts); the first document's diagnostics {statistics.median(first):.2f} s after that "
          f"(the server loads once it has answered)")
    print(f"debounce: {DEBOUNCE_SECONDS:.2f} s (included below)")
    for label, text in (("reference plan", REFERENCE), ("1 MiB plan", big_plan())):
        times = measure(text, args.changes)
        print(f"{label} ({len(text.encode()) / 1024:,.0f} KiB): change -> diagnostics median {statistics.median(times):.2f} s, "
              f"max {max(times):.2f} s over {len(times)} changes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
