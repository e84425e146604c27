"""The facts of plans a run reads but does not lint (PL005's names, PL507's caps), kept per file version.

A pre-commit hook names one plan; PL005 and PL507 still read every other plan
under the repository's plans/. With the cache on, what each file says is kept
under its state (size, times, inode), so an unchanged repository is not read
again. These tests count the files read (no timings) and compare every report
with the uncached one. Forged facts files: tests/test_cache_forging.py.
"""

from __future__ import annotations

import sys

import pytest

from conftest import ROOT, write
from planlint.core.config import Config
from planlint.engine import run as run_module
from planlint.engine.plan_names import commitment
from planlint.engine.plan_facts import PlanFacts
from test_diff_mode import new_repo, plan  # noqa: F401

sys.path.insert(0, str(ROOT / "bench"))
from corpus import make_plan  # noqa: E402

sys.path.remove(str(ROOT / "bench"))


@pytest.fixture
def counted(monkeypatch):
    """How many names and commitments were read from files (not from the kept facts)."""
    counts = {"name": 0, "commit": 0}
    read_name, commitment = run_module.read_name, run_module.commitment

    def counting_read_name(*args, **kwargs):
        counts["name"] += 1
        return read_name(*args, **kwargs)

    def counting_commitment(*args, **kwargs):
        counts["commit"] += 1
        return commitment(*args, **kwargs)

    monkeypatch.setattr(run_module, "read_name", counting_read_name)
    monkeypatch.setattr(run_module, "commitment", counting_commitment)
    # The files are written just now; a real run would not keep what it read of them for
    # PlanFacts.RACY_SECONDS. Run the clock on instead of waiting.
    monkeypatch.setattr(PlanFacts, "clock", staticmethod(lambda: __import__("time").time_ns() + 60 * 1_000_000_000))

    def take() -> dict:
        taken = dict(counts)
        counts.update(name=0, commit=0)
        return taken

    return take


def _repository(tmp_path, plans: int = 40):
    repo = new_repo(tmp_path / "repo")
    usd = 0.0  # what the generated plans commit in USD
    for index in range(plans):
        path = write(repo / "plans" / f"team-{index % 4}" / f"plan-{index:03d}.yaml", make_plan(3, index)[0])
        found = commitment(str(path), Config())
        usd += found[1] if found is not None and found[0] == "USD" else 0
    # Over the limit by 1 with search.yaml's 4,800 and retail.yaml's 300; under it without search.yaml.
    write(repo / ".planlint.yaml", f"budget: {{committed_limit: {{USD: {usd + 5099:.0f}, EUR: 10000000, GBP: 10000000}}}}\n")
    write(repo / "plans" / "search.yaml", plan("search-ranking", status="running", **{"max_spend: 250": "max_spend: 4800"}))
    write(repo / "plans" / "retail.yaml", plan("retail-refund-window", status="approved", **{"max_spend: 250": "max_spend: 300"}))
    return repo


def _report(planlint, repo, *flags: str) -> tuple[int, str]:
    result = planlint("--format", "json", *flags, "plans/retail.yaml", cwd=repo)
    return result.status, result.out


def test_an_unchanged_repository_is_read_once_and_every_report_is_the_uncached_one(tmp_path, planlint, counted):
    repo = _repository(tmp_path)
    files = len(list((repo / "plans").rglob("*.yaml")))
    uncached = _report(planlint, repo, "--no-cache")
    assert '"PL507"' in uncached[1]  # search.yaml's 4,800 USD and this plan's 300 go over the limit
    assert counted()["name"] == 1  # without a cache, only files whose bytes hold the name are read for it: its own
    assert _report(planlint, repo) == uncached  # cold: every file read once, for each fact
    assert counted() == {"name": files, "commit": files}
    assert _report(planlint, repo) == uncached  # warm: nothing read again
    assert counted() == {"name": 0, "commit": 0}

    # Another plan takes this plan's name: one file changed, one file read, and PL005 reports it.
    other = repo / "plans" / "team-1" / "plan-005.yaml"
    text = other.read_text(encoding="utf-8")
    name = text.split("\n  name: ", 1)[1].split("\n", 1)[0]
    other.write_text(text.replace(f"name: {name}\n", "name: retail-refund-window\n", 1), encoding="utf-8")
    uncached = _report(planlint, repo, "--no-cache")
    assert '"PL005"' in uncached[1] and "plans/team-1/plan-005.yaml" in uncached[1]
    counted()
    assert _report(planlint, repo) == uncached
    assert counted() == {"name": 1, "commit": 1}

    # The running plan is finished: its cap no longer counts, and PL507 is gone with and without the cache.
    search = repo / "plans" / "search.yaml"
    search.write_text(search.read_text(encoding="utf-8").replace("status: running", "status: completed"), encoding="utf-8")
    uncached = _report(planlint, repo, "--no-cache")
    assert '"PL507"' not in uncached[1]
    counted()
    assert _report(planlint, repo) == uncached
    assert counted() == {"name": 1, "commit": 1}


def test_a_file_just_written_is_read_again_until_its_state_can_be_trusted(tmp_path, planlint, monkeypatch, counted):
    repo = _repository(tmp_path, plans=3)
    monkeypatch.setattr(PlanFacts, "clock", staticmethod(__import__("time").time_ns))  # the real clock: every file is new
    first = _report(planlint, repo)
    assert counted() == {"name": 5, "commit": 5}
    assert _report(planlint, repo) == first
    assert counted() == {"name": 5, "commit": 5}  # nothing was kept: a second write in the same clock tick could hide


def test_a_utf16_plan_of_the_repository_counts_with_and_without_the_cache(tmp_path, planlint, counted):
    # The loader reads a plan with a UTF-16 byte order mark (a `.gitattributes` working-tree-encoding does
    # that on checkout); its bytes hold no UTF-8 name, so the byte pre-scan must still let it through.
    repo = _repository(tmp_path, plans=2)
    twin = plan("retail-refund-window", status="draft")
    (repo / "plans" / "twin.yaml").write_bytes(b"\xff\xfe" + twin.encode("utf-16-le"))
    uncached = _report(planlint, repo, "--no-cache")
    assert '"PL005"' in uncached[1] and "plans/twin.yaml" in uncached[1]
    assert _report(planlint, repo) == uncached
    assert _report(planlint, repo) == uncached


def test_facts_of_deleted_plans_do_not_pile_up(tmp_path, planlint, counted):
    repo = _repository(tmp_path, plans=12)
    assert '"files": 1' in _report(planlint, repo)[1]
    (facts,) = (repo / ".planlint_cache" / "plan-facts").glob("*.json")
    size = facts.stat().st_size
    deleted = sorted((repo / "plans").glob("team-*/*.yaml"))[:11]
    for path in deleted:
        path.unlink()
    for index in range(3):  # a plan changes: the facts file is written again, without the deleted plans
        write(repo / "plans" / "team-9" / f"new-{index}.yaml", make_plan(4, index)[0])
    counted()
    assert _report(planlint, repo) == _report(planlint, repo, "--no-cache")
    assert facts.stat().st_size < size
    text = facts.read_text(encoding="utf-8", errors="replace")
    assert not any(path.name in text for path in deleted)
    assert "plan-011.yaml" in text and "new-2.yaml" in text
