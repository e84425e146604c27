"""The facts of the plans a run reads but does not lint (PL005's names, PL507's caps), kept per file version."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from planlint.core.atomic import write_atomically
from planlint.core.cache_seal import read_sealed_bytes, seal_bytes
from planlint.engine.cache_dir import MARKERS, file_state


class PlanFacts:
    """What the repository-wide rules read from the plans a run does not lint, per file version.

    A pre-commit hook names only the staged plans, but PL005 compares their
    names with every other plan's under the repository's `plans/`, and PL507
    adds up the caps of every approved and running plan there
    (`engine.plan_names`). Each fact (`name`: `read_name`'s answer; `commit`:
    the plan's (currency, max_spend) or None) is computed exactly as without a
    cache, then kept under the file's path (as walked: relative to the working
    directory, which is part of the run key) and its state (size,
    modification and change time, inode: `file_state`): an unchanged
    repository is not read again. A file changed within RACY_SECONDS of the
    run is not kept (its state may not show a second change yet).

    One file per run key, `<dir>/plan-facts/<run key>.json`, sealed with the
    machine's key over its exact bytes (`cache_seal.seal_bytes`): a forged or
    edited file is ignored as a whole, and a fact is then computed again.
    When most of its entries are of files a run did not see (deleted or
    renamed plans), that run keeps only those it saw.
    `computed` counts the facts computed in this run (tests count work).
    """

    FORMAT = 1
    RACY_SECONDS = 2
    clock = staticmethod(time.time_ns)  # tests move it on, rather than wait

    def __init__(self, root: Path, key: str, seal_key: bytes | None) -> None:
        self.file = root / "plan-facts" / f"{key[:24]}.json"
        self.root = root
        self.key = key
        self.seal_key = seal_key
        self.computed = 0
        self._entries: dict[str, dict] | None = None
        self._seen: set[str] = set()
        self._changed = False
        self._racy_after = self.clock() - self.RACY_SECONDS * 1_000_000_000

    def get(self, path: str, fact: str, compute: Any) -> Any:
        """The fact `fact` of the file at `path`: kept if the file is unchanged, else `compute()` (and kept)."""
        state = file_state(path)
        if state is None or self.seal_key is None:  # not a regular file, or nothing can be trusted
            self.computed += 1
            return compute()
        entries = self._entries if self._entries is not None else self._load()
        self._seen.add(path)
        entry = entries.get(path)
        if entry is not None and entry.get("s") == state:
            kept = entry.get(fact, _ABSENT)
            if kept is not _ABSENT:
                return tuple(kept) if type(kept) is list else kept  # JSON lists back to tuples ((currency, amount))
        self.computed += 1
        value = compute()
        if max(state[1], state[2]) >= self._racy_after:
            return value
        if entry is None or entry.get("s") != state:
            entry = entries[path] = {"s": state}
        entry[fact] = value if not isinstance(value, tuple) else list(value)
        self._changed = True
        return value

    def _load(self) -> dict[str, dict]:
        if self._entries is None:
            self._entries = {}
            try:
                body = read_sealed_bytes(self.file, self.seal_key, "plan-facts", self.key)
                data = json.loads(body) if body is not None else None
                if isinstance(data, dict) and data.get("format") == self.FORMAT and isinstance(data.get("files"), dict):
                    self._entries = {k: v for k, v in data["files"].items() if isinstance(v, dict)}
            except (OSError, ValueError):
                pass  # absent, damaged or forged: compute every fact again
        return self._entries

    def save(self) -> None:
        """Write the facts when this run added any (atomically; a read-only checkout keeps none)."""
        if not self._changed or self.seal_key is None:
            return
        self._changed = False
        entries = self._entries or {}
        if len(entries) > 2 * len(self._seen):  # mostly files this run did not see (deleted, renamed): keep what it saw
            entries = {path: entry for path, entry in entries.items() if path in self._seen}
        body = json.dumps({"format": self.FORMAT, "files": entries}, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            for name, content in MARKERS:
                marker = self.root / name
                if not marker.exists():
                    marker.write_text(content, encoding="utf-8")
            write_atomically(str(self.file), seal_bytes(self.seal_key, "plan-facts", self.key, body))
        except OSError:
            pass  # nothing kept: the next run computes them again


_ABSENT: Any = object()
