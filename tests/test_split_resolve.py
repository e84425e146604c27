"""A plan's split paths resolved once (services/split_data/resolve.py), for the check and the cache.

Each path becomes one typed value that keeps every local path looked at, in
order; rules/leakage resolves a plan's two paths once per plan context, and the
data check, the engine's cache inputs (`inputs`) and `remote_or_glob` all read
that one resolution.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import write
from planlint.rules import leakage
from planlint.rules.base import PlanContext
from planlint.services.split_data.resolve import Absent, LocalFile, LocalGlob, Lookup, Remote, Unlisted, inside_checkout, resolve_split


@pytest.fixture
def project(tmp_path, monkeypatch):
    """cwd: the project root; plans/plan.yaml; data files under data/ and plans/data/."""
    write(tmp_path / ".git" / "HEAD", "")
    write(tmp_path / "data" / "train.jsonl", "{}\n")
    write(tmp_path / "plans" / "data" / "eval.jsonl", "{}\n")
    write(tmp_path / "data" / "shards" / "part-1.jsonl", "{}\n")
    write(tmp_path / "data" / "shards" / "part-0.jsonl", "{}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _lookup(root: Path) -> Lookup:
    return Lookup(os.getcwd(), str(root), str(root / "plans" / "plan.yaml"))


def test_each_kind_of_path_is_its_own_value_with_what_was_looked_at(project):
    lookup = _lookup(project)
    train = resolve_split("data/train.jsonl", lookup)
    assert isinstance(train, LocalFile) and train.path == Path(project, "data", "train.jsonl")
    assert train.looked == (Path(project, "data", "train.jsonl"),)  # the first base had it
    eval_ = resolve_split("data/eval.jsonl", lookup)  # not under cwd or the project root: the plan's directory
    assert isinstance(eval_, LocalFile) and eval_.path == Path(project, "plans", "data", "eval.jsonl")
    assert eval_.looked == (Path(project, "data", "eval.jsonl"), Path(project, "data", "eval.jsonl"),
                            Path(project, "plans", "data", "eval.jsonl"))
    shards = resolve_split("data/shards/part-*.jsonl", lookup)
    assert isinstance(shards, LocalGlob)
    assert [shown for shown, _ in shards.glob.matches] == ["data/shards/part-0.jsonl", "data/shards/part-1.jsonl"]
    assert shards.looked[-2:] == (Path(project, "data", "shards", "part-0.jsonl"), Path(project, "data", "shards", "part-1.jsonl"))
    missing = resolve_split("data/none.jsonl", lookup)
    assert isinstance(missing, Absent) and len(missing.looked) == 3
    remote = resolve_split(" s3://bucket/train.jsonl?versionId=v1 ", lookup)
    assert isinstance(remote, Remote) and remote.uri == "s3://bucket/train.jsonl?versionId=v1" and remote.looked == ()
    assert inside_checkout(train, lookup) and inside_checkout(shards, lookup)


def test_a_glob_of_more_files_than_a_split_may_have_is_unlisted(project, monkeypatch):
    from planlint.services.split_data import resolve

    monkeypatch.setattr(resolve, "MAX_OBJECTS", 1)
    found = resolve_split("data/shards/part-*.jsonl", _lookup(project))
    assert isinstance(found, Unlisted) and found.reason == "data/shards/part-*.jsonl: matches more than 1 files"


def test_a_link_out_of_the_checkout_is_found_but_not_inside(project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "secret.jsonl"
    outside.write_text("{}\n")
    os.symlink(outside, project / "data" / "linked.jsonl")
    found = resolve_split("data/linked.jsonl", _lookup(project))
    assert isinstance(found, LocalFile) and not inside_checkout(found, _lookup(project))


def test_the_rule_the_cache_and_the_check_share_one_resolution(project, monkeypatch):
    plan = {"splits": {"train": {"path": "data/train.jsonl"}, "eval": {"path": "data/shards/part-*.jsonl"}}}
    ctx = PlanContext(data=plan, path="plans/plan.yaml", file=project / "plans" / "plan.yaml")
    looked_up: list[str] = []
    real_isfile = os.path.isfile

    def counting(path):
        looked_up.append(os.fspath(path))
        return real_isfile(path)

    monkeypatch.setattr(os.path, "isfile", counting)
    assert leakage.remote_or_glob(ctx) is True
    first = list(looked_up)
    assert first  # resolved here, once
    assert leakage.inputs(ctx)[0] == Path(project, "data", "train.jsonl")
    leakage.split_data_problems(ctx)
    assert looked_up == first  # neither the cache's inputs nor the check looked again
