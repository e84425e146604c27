"""A data store is one class and one registry line (services/split_data/schemes.py).

The store here exists only in this test: fsspec's in-memory filesystem under
a `mem://` scheme, registered by adding one instance to `schemes.SCHEMES`.
Nothing else in planlint is told about it, yet a plan naming `mem://` split
paths is read and checked end to end (PL207, object names in the messages,
the per-object cache keyed by the store's identities) and PL107 asks it how
such a path is pinned.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import pytest

from conftest import REFERENCE_PLAN, write
from planlint.rules.leakage_findings import findings
from planlint.services import split_data
from planlint.services.split_data import schemes
from planlint.services.split_data.schemes import Floating, Scheme

fsspec = pytest.importorskip("fsspec")

OPENED: list[str] = []  # the objects the store's client opened, in order


def check_split_data(*args, **kwargs):
    """The data check as the rules see it: its facts worded as findings and notes."""
    return findings(split_data.check_split_data(*args, **kwargs))


class MemoryStore(Scheme):
    """fsspec's memory filesystem: `mem://BUCKET/KEY`, pinned by a `@N` revision at the end."""

    names = ("mem",)
    extra = "mem"
    modules = (("fsspec", "fsspec"),)
    content_fields = ("created",)  # a rewritten object is created anew

    REVISION = re.compile(r"@(\d+)$")

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        from fsspec.implementations.memory import MemoryFileSystem

        class Counted(MemoryFileSystem):
            def _open(self, path, *args, **kwargs):
                OPENED.append(path)
                return super()._open(path, *args, **kwargs)

        return Counted(skip_instance_cache=True)

    def locate(self, value: str) -> tuple[str, Optional[str]]:
        path = value.split("://", 1)[1]
        match = self.REVISION.search(path)
        return (path[: match.start()], match.group(1)) if match else (path, None)

    def floating(self, value: str) -> Optional[Floating]:
        if self.REVISION.search(value):
            return None
        return Floating("names a memory object without a revision", f"{value}@<revision>", moves=False)


@pytest.fixture
def mem_store(monkeypatch):
    """The one registry line, for this test only; and an empty memory filesystem."""
    from fsspec.implementations.memory import MemoryFileSystem

    monkeypatch.setattr(schemes, "SCHEMES", (*schemes.SCHEMES, MemoryStore()))
    monkeypatch.setenv("PLANLINT_DATA_WORKERS", "1")
    saved = dict(MemoryFileSystem.store)
    MemoryFileSystem.store.clear()
    OPENED.clear()
    yield MemoryFileSystem()
    MemoryFileSystem.store.clear()
    MemoryFileSystem.store.update(saved)


def _rows(prefix: str, customers: list[str]) -> bytes:
    return "".join(json.dumps({"customer_id": c, "created_at": "2026-09-01" if prefix == "eval" else "2026-03-01",
                               "prompt": f"{prefix} question {n}"}) + "\n" for n, c in enumerate(customers)).encode()


def _plan(tmp_path, train: str, eval_: str) -> None:
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    text = text.replace("path: data/retail/train.jsonl", f"path: {train}").replace("path: data/retail/eval.jsonl", f"path: {eval_}")
    write(tmp_path / ".git" / "HEAD", "")
    write(tmp_path / "plans" / "plan.yaml", text)


def test_a_plan_naming_the_store_is_linted_end_to_end(mem_store, tmp_path, planlint):
    mem_store.pipe("/bucket/train.jsonl", _rows("train", ["a", "shared", "c"]))
    mem_store.pipe("/bucket/eval.jsonl", _rows("eval", ["x", "shared"]))
    _plan(tmp_path, "mem://bucket/train.jsonl@1", "mem://bucket/eval.jsonl@1")
    result = planlint("--format", "json", "--no-cache", "plans", cwd=tmp_path)
    findings = [(f["code"], f["line"], f["message"]) for f in result.json["findings"]]
    assert [code for code, _, _ in findings] == ["PL207"], result
    assert findings[0][1] == 29  # splits.eval.path
    assert "'shared' (train row 2, eval row 2)" in findings[0][2]
    # the same objects named without a revision: PL107, as the store says it floats
    _plan(tmp_path, "mem://bucket/train.jsonl", "mem://bucket/eval.jsonl@1")
    result = planlint("--format", "json", "--no-cache", "plans", cwd=tmp_path)
    floating = [f for f in result.json["findings"] if f["code"] == "PL107"]
    assert [(f["line"], f["severity"]) for f in floating] == [(27, "warning")], result
    assert floating[0]["message"] == ("splits.train.path 'mem://bucket/train.jsonl' names a memory object without a revision: "
                                      "pin it, e.g. mem://bucket/train.jsonl@<revision>")


def test_a_store_registered_in_one_line_is_read_and_checked_by_its_own_paths(mem_store, tmp_path):
    """The split paths the store itself resolves (no revision to strip): shard names and the cache."""
    mem_store.pipe("/bucket/train-0.jsonl", _rows("train", ["a", "b", "c"]))
    mem_store.pipe("/bucket/train-1.jsonl", _rows("train", ["d", "shared", "e"]))
    mem_store.pipe("/bucket/eval.jsonl", _rows("eval", ["x", "shared"]))
    options = dict(group_key="customer_id", time_key=None, cutoff=None, input_fields=None,
                   cache_dir=tmp_path / "cache", project_root=tmp_path / "repo")
    issues, notes = check_split_data("mem://bucket/train-*.jsonl", "mem://bucket/eval.jsonl", **options)
    assert notes == [] and [issue.code for issue in issues] == ["PL207"]
    assert "'shared' (train row 2 of train-1.jsonl, eval row 2)" in issues[0].message
    assert sorted(OPENED) == ["/bucket/eval.jsonl", "/bucket/train-0.jsonl", "/bucket/train-1.jsonl"]
    # the eval object is rewritten: only it is read again, the train objects come from their
    # cached index parts, keyed by the identity the store's listing gave them
    mem_store.pipe("/bucket/eval.jsonl", _rows("eval", ["x", "y"]))
    OPENED.clear()
    assert check_split_data("mem://bucket/train-*.jsonl", "mem://bucket/eval.jsonl", **options) == ([], [])
    assert OPENED == ["/bucket/eval.jsonl"]


def test_pl107_asks_the_registered_store(mem_store):
    from planlint.rules.base import WARNING
    from planlint.rules.pinning import split_path_pin

    assert split_path_pin("mem://bucket/train.jsonl@7") is None
    assert split_path_pin("mem://bucket/train.jsonl") == (WARNING, "names a memory object without a revision", "mem://bucket/train.jsonl@<revision>")


def test_an_unregistered_scheme_is_not_read_and_the_registry_says_which_are(tmp_path):
    _, notes = check_split_data("mem://bucket/train.jsonl", "mem://bucket/eval.jsonl", group_key="customer_id", time_key=None,
                                cutoff=None, input_fields=None, cache_dir=None)
    assert notes[0].message == ("mem://bucket/train.jsonl: the scheme mem:// is not read (use s3://, gs://, hf://, https:// "
                                "or a path in the repository); data-aware checks skipped")
