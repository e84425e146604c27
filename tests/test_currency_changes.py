"""Currency games: a cap is an amount *and* its currency.

Attacks, end to end on real git repositories and the real CLI: 900 USD
becomes 900 KWD (about three times the money) in a pull request; a plan
picks a currency the configured limits do not list; `currency: usd` in
lower case slips under `max_spend_limit`.
"""

from __future__ import annotations

import json

import pytest

from conftest import write
from github_server import FakeGitHub
from test_diff_mode import commit, git, hermetic_git, new_repo, plan  # noqa: F401 - hermetic_git is an autouse fixture

pytestmark = pytest.mark.integration

TOKEN = "ghp_" + "Cu8" * 12
BASE = plan("retail", status="approved", **{"max_spend: 250": "max_spend: 900", "estimated_cost: 180": "estimated_cost: 500"})


def pull_request(tmp_path, head: str, *, config: str | None = None):
    repo = new_repo(tmp_path / "repo")
    write(repo / "plans" / "retail.yaml", BASE)
    if config is not None:
        write(repo / ".planlint.yaml", config)
    commit(repo, "base")
    git(repo, "checkout", "-q", "-b", "pr")
    write(repo / "plans" / "retail.yaml", head)
    commit(repo, "the pull request")
    return repo


def codes(result) -> list[tuple[str, str]]:
    return [(f["code"], f["yaml_path"]) for f in result.json["findings"]]


def test_attack_900_usd_becomes_900_kwd(tmp_path, planlint):
    repo = pull_request(tmp_path, BASE.replace("currency: USD", "currency: KWD"))
    result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
    assert result.status == 1 and codes(result) == [("PL703", "budget.currency")], result.out
    message = result.json["findings"][0]["message"]
    assert "budget.currency changed from 'USD' to 'KWD' (a cap in another currency is another cap)" in message
    assert "budget.approved_by is still '@ml-leads', who approved the old cap" in message
    # Only the spelling of the code changed: the same cap.
    repo = pull_request(tmp_path / "two", BASE.replace("currency: USD", "currency: 'USD'"))
    assert planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json["findings"] == []


def test_a_currency_change_needs_a_verified_approval(tmp_path, planlint, monkeypatch):
    head = BASE.replace("currency: USD", "currency: KWD").replace('approved_by: "@ml-leads"', 'approved_by: "@carol"')
    repo = pull_request(tmp_path, head)
    with FakeGitHub(TOKEN) as github:
        github.add_pull(12, author="bob", head_sha="3" * 40)
        event = write(tmp_path / "event.json", json.dumps({"pull_request": {"number": 12, "user": {"login": "bob"}, "head": {"sha": "3" * 40}}}))
        for key, value in {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request", "GITHUB_API_URL": github.url,
                           "GITHUB_REPOSITORY": "o/r", "PLANLINT_GITHUB_TOKEN": TOKEN}.items():
            monkeypatch.setenv(key, value)
        result = planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo)
        assert codes(result) == [("PL707", "budget.approved_by")], result.out
        assert result.json["findings"][0]["message"].startswith("budget.currency changed from 'USD' to 'KWD', so the pull request needs")
        github.add_review(12, "carol", "APPROVED")
        assert planlint("--diff-base", "main", "--format", "json", "--no-cache", cwd=repo).json["findings"] == []


@pytest.mark.parametrize("config, status, limits", [
    ("max_spend_limit: {USD: 1000, EUR: 900}\n", "draft", "max_spend_limit lists EUR, USD"),
    ("budget: {committed_limit: {USD: 20000}}\n", "approved", "budget.committed_limit lists USD"),
])
def test_a_currency_the_limits_do_not_list_is_an_error_not_unlimited(config, status, limits, tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", config)
    write(tmp_path / "plans" / "kwd.yaml", plan("kwd", status=status, **{"currency: USD": "currency: KWD", "max_spend: 250": "max_spend: 50000",
                                                                       "estimated_cost: 180": "estimated_cost: 500"}))
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert result.status == 1 and codes(result) == [("PL505", "budget.currency")], result.out
    assert f"budget.currency 'KWD' is not limited: {limits} only" in result.json["findings"][0]["message"]
    # A listed currency is judged by its limit, as before.
    write(tmp_path / "plans" / "kwd.yaml", plan("kwd", status=status))
    assert planlint("--format", "json", "plans/", cwd=tmp_path).json["findings"] == []


def test_a_lower_case_currency_does_not_hide_the_limit(tmp_path, planlint):
    write(tmp_path / ".planlint.yaml", "max_spend_limit: {USD: 1000}\n")
    write(tmp_path / "plans" / "big.yaml", plan("big", **{"currency: USD": "currency: usd", "max_spend: 250": "max_spend: 2500"}))
    result = planlint("--format", "json", "plans/", cwd=tmp_path)
    assert sorted(codes(result)) == [("PL503", "budget.currency"), ("PL505", "budget.max_spend")], result.out
    assert "is over the configured limit of 1000 USD" in next(f["message"] for f in result.json["findings"] if f["code"] == "PL505")
