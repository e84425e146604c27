"""`planlint server` end to end: the real server over stdio, driven by a real LSP client (pytest-lsp).

Diagnostics at the exact range, the --fix quick fix applied through the returned edit, a suppression added
by the code action (and its reason required), hover on a code in a suppression, and diagnostics equal,
finding for finding, to `planlint --format json` over the rule fixtures.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp", reason="pytest-lsp is part of the test extra")
from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402

from conftest import FIXTURES, ROOT, write  # noqa: E402
from plan_overlay import REFERENCE  # noqa: E402

LOOSENED = REFERENCE.replace('release: "2026.11.03"', "release: latest")
SERVER = ClientServerConfig(server_command=[sys.executable, "-I", "-m", "planlint", "server"])


def workspace(tmp_path: Path) -> Path:
    """A repository with the project's catalog, as a team has it."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "catalog.yaml", "datasets: {retail-refunds: {releases: ['2026.10.01', '2026.11.03']}}\n"
          "graders: {tau-retail-db-state: {versions: ['1.4.2']}, polite-tone-judge: {versions: ['3.0.1']}}\n")
    write(repo / ".planlint.yaml", "catalog: catalog.yaml\n")
    return repo


async def start(client: LanguageClient, root: Path, **options) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), initialization_options=options or None))


async def opened(client: LanguageClient, path: Path, text: str, version: int = 1) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=version, text=text)))
    return await diagnostics_for(client, uri)


async def diagnostics_for(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    while True:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri:
            return list(params.diagnostics)


async def changed(client: LanguageClient, path: Path, text: str, version: int) -> list[types.Diagnostic]:
    uri = path.as_uri()
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    return await diagnostics_for(client, uri)


def apply(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    offset = lambda p: starts[p.line] + p.character  # noqa: E731 - ASCII test text: code points = UTF-16 units
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def actions(client: LanguageClient, path: Path, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_floating_release_fixed_through_the_quick_fix(client: LanguageClient, tmp_path):
    repo = workspace(tmp_path)
    await start(client, repo)
    plan = repo / "plans" / "retail.yaml"
    write(plan, LOOSENED)
    found = await opened(client, plan, LOOSENED)
    assert [d.code for d in found] == ["PL102"]
    (d,) = found
    assert d.range == types.Range(start=types.Position(line=20, character=11), end=types.Position(line=20, character=17))
    assert d.severity == types.DiagnosticSeverity.Error and d.source == "planlint"
    assert d.code_description.href.endswith("/docs/rules/PL102.md")

    offered = await actions(client, plan, d)
    fix = next(a for a in offered if a.title.startswith("Fix PL102"))
    fixed = apply(LOOSENED, fix.edit.changes[plan.as_uri()])
    assert 'release: "2026.11.03" ' in fixed and "latest" not in fixed.split("dataset:")[1].split("splits:")[0]
    assert await changed(client, plan, fixed, 2) == []


@pytest.mark.asyncio
async def test_suppression_from_the_code_action_silences_and_needs_a_reason(client: LanguageClient, tmp_path):
    repo = workspace(tmp_path)
    await start(client, repo)
    plan = repo / "plans" / "retail.yaml"
    write(plan, LOOSENED)
    (d,) = await opened(client, plan, LOOSENED)
    suppress = next(a for a in await actions(client, plan, d) if a.title.startswith("Suppress PL102"))
    silenced = apply(LOOSENED, suppress.edit.changes[plan.as_uri()])
    assert "release: latest               # planlint: disable=PL102 -- TODO: say why this is fine # an exact" in silenced
    assert await changed(client, plan, silenced, 2) == []
    # The reason is not optional: the same suppression without one is PL009.
    bare = silenced.replace(" -- TODO: say why this is fine", "")
    assert [x.code for x in await changed(client, plan, bare, 3)] == ["PL009"]


@pytest.mark.asyncio
async def test_hover_on_a_code_in_a_suppression_explains_the_rule(client: LanguageClient, tmp_path):
    repo = workspace(tmp_path)
    await start(client, repo)
    text = LOOSENED.replace("release: latest", "release: latest  # planlint: disable=PL102,spend-over-limit -- moving on purpose")
    plan = repo / "plans" / "retail.yaml"
    write(plan, text)
    await opened(client, plan, text)
    line = text.splitlines().index(next(x for x in text.splitlines() if "disable=PL102" in x))
    column = text.splitlines()[line].index("PL102") + 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=plan.as_uri()), position=types.Position(line=line, character=column)))
    assert hover is not None and "PL102 dataset-release-floating" in hover.contents.value
    by_name = text.splitlines()[line].index("spend-over-limit") + 3
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=plan.as_uri()), position=types.Position(line=line, character=by_name)))
    assert hover is not None and "spend-over-limit" in hover.contents.value
    nothing = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=plan.as_uri()), position=types.Position(line=0, character=2)))
    assert nothing is None


@pytest.mark.asyncio
async def test_a_yaml_file_that_is_not_a_plan_gets_no_diagnostics(client: LanguageClient, tmp_path):
    repo = workspace(tmp_path)
    await start(client, repo)
    other = repo / "plans" / "compose.yaml"
    write(other, "services: {web: {image: nginx}}\n")
    assert await opened(client, other, "services: {web: {image: nginx}}\n") == []


def cli_findings(path: Path, cwd: Path) -> list[tuple]:
    proc = subprocess.run([sys.executable, "-m", "planlint", "--format", "json", "--no-cache", str(path)],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted((f["code"], f["line"], f["column"], f["end_line"], f["end_column"], f["severity"], f["message"])
                  for f in json.loads(proc.stdout)["findings"])


def server_findings(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return sorted((d.code, d.range.start.line + 1, d.range.start.character + 1, d.range.end.line + 1, d.range.end.character + 1,
                   "error" if d.severity == types.DiagnosticSeverity.Error else "warning", d.message) for d in diagnostics)


@pytest.mark.asyncio
@pytest.mark.slow
async def test_diagnostics_equal_the_cli_findings_over_the_fixtures(client: LanguageClient):
    """With the data checks on save, a saved plan's diagnostics are exactly its `--format json` findings."""
    await start(client, ROOT, dataChecksOnSave=True)
    fixtures = sorted((FIXTURES / "rules").glob("*.yaml"))
    assert len(fixtures) > 10
    compared = 0
    for path in fixtures:
        text = path.read_text(encoding="utf-8")
        expected = cli_findings(path.relative_to(ROOT), ROOT)
        if any(code == "PL004" for code, *_ in expected):
            continue  # not a plan: the server lints plans only, by content
        await opened(client, path, text)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
        got = server_findings(await diagnostics_for(client, path.as_uri()))
        assert got == expected, path.name
        compared += 1
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
        await diagnostics_for(client, path.as_uri())
    assert compared > 10


def leaking_workspace(tmp_path: Path) -> Path:
    """Customer cus-1 is in both splits: PL207 once the rows are read."""
    repo = workspace(tmp_path)
    write(repo / "data" / "retail" / "train.jsonl",
          '{"customer_id": "cus-1", "created_at": "2026-05-01"}\n{"customer_id": "cus-2", "created_at": "2026-06-01"}\n')
    write(repo / "data" / "retail" / "eval.jsonl", '{"customer_id": "cus-1", "created_at": "2026-09-01"}\n')
    write(repo / "plans" / "retail.yaml", REFERENCE)
    return repo


async def saved(client: LanguageClient, path: Path) -> list[types.Diagnostic]:
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
    return await diagnostics_for(client, path.as_uri())


@pytest.mark.asyncio
async def test_data_checks_run_on_save_only_when_the_editor_turns_them_on(client: LanguageClient, tmp_path):
    repo = leaking_workspace(tmp_path)
    await start(client, repo, dataChecksOnSave=True)
    plan = repo / "plans" / "retail.yaml"
    assert await opened(client, plan, REFERENCE) == []  # keystrokes never read the split files
    assert [d.code for d in await saved(client, plan)] == ["PL207"]
    assert await changed(client, plan, REFERENCE + "\n", 2) == []


@pytest.mark.asyncio
async def test_no_data_checks_on_save_by_default(client: LanguageClient, tmp_path):
    repo = leaking_workspace(tmp_path)
    await start(client, repo)
    plan = repo / "plans" / "retail.yaml"
    assert await opened(client, plan, REFERENCE) == []
    assert await saved(client, plan) == []


def test_the_server_says_how_to_install_pygls_when_it_is_missing(tmp_path):
    """Without the lsp extra: one line naming the extra, exit 2, no traceback."""
    blocker = write(tmp_path / "block" / "sitecustomize.py",
                    "import sys\nclass _Block:\n    def find_spec(self, name, path=None, target=None):\n"
                    "        if name.split('.')[0] in ('pygls', 'lsprotocol'):\n            raise ImportError(name)\n"
                    "sys.meta_path.insert(0, _Block())\n")
    env = {"PYTHONPATH": str(blocker.parent), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "planlint", "server"], capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "planlint: error: planlint server needs pygls: pip install 'planlint[lsp]'\n"


@pytest.mark.asyncio
async def test_a_plan_reusing_another_plans_name_gets_pl005_as_from_the_cli(client: LanguageClient, tmp_path):
    """Issue 14 item 6 in the editor: the repository's other plans count for PL005, as they do for a named file."""
    repo = workspace(tmp_path)
    write(repo / "plans" / "retail.yaml", REFERENCE)
    copy = repo / "plans" / "retail-copy.yaml"
    write(copy, REFERENCE)
    await start(client, repo)
    expected = cli_findings(copy.relative_to(repo), repo)
    assert [code for code, *_ in expected] == ["PL005"]
    assert "already used by plans/retail.yaml" in expected[0][-1]
    assert server_findings(await opened(client, copy, REFERENCE)) == expected


@pytest.mark.asyncio
async def test_a_plan_the_config_excludes_gets_no_diagnostics_as_from_the_cli(client: LanguageClient, tmp_path):
    """The configuration's `exclude` holds in the editor as on the command line."""
    repo = workspace(tmp_path)
    write(repo / ".planlint.yaml", "catalog: catalog.yaml\nexclude: [\"plans/archive/**\"]\n")
    old = repo / "plans" / "archive" / "retail.yaml"
    write(old, LOOSENED)
    kept = repo / "plans" / "retail.yaml"
    write(kept, LOOSENED)
    await start(client, repo)
    assert cli_findings(old.relative_to(repo), repo) == []
    assert server_findings(await opened(client, old, LOOSENED)) == []
    assert [d.code for d in await opened(client, kept, LOOSENED)] == ["PL102"]


@pytest.mark.asyncio
@pytest.mark.parametrize("setting", ["severity: {dataset-release-floating: warning}", "ignore: [dataset-release-floating]"])
async def test_rules_named_by_name_in_the_config_count_as_from_the_cli(client: LanguageClient, tmp_path, setting):
    """`select`, `ignore` and `severity` may name a rule by its name in the editor too, as on the command line."""
    repo = workspace(tmp_path)
    write(repo / ".planlint.yaml", f"catalog: catalog.yaml\n{setting}\n")
    plan = repo / "plans" / "retail.yaml"
    write(plan, LOOSENED)
    await start(client, repo)
    expected = cli_findings(plan.relative_to(repo), repo)
    assert [(f[0], f[5]) for f in expected] == ([("PL102", "warning")] if "severity" in setting else [])
    assert server_findings(await asyncio.wait_for(opened(client, plan, LOOSENED), 120)) == expected


@pytest.mark.asyncio
async def test_committed_spend_counts_the_repositorys_other_plans_as_from_the_cli(client: LanguageClient, tmp_path):
    """PL507 in the editor: the other approved and running plans count, as for a file named on the CLI."""
    repo = workspace(tmp_path)
    write(repo / ".planlint.yaml", "catalog: catalog.yaml\nbudget: {committed_limit: {USD: 400}}\n")
    write(repo / "plans" / "running.yaml", REFERENCE.replace("name: retail-refund-window", "name: running-plan")
          .replace("status: approved", "status: running"))
    plan = repo / "plans" / "retail.yaml"
    write(plan, REFERENCE)
    await start(client, repo)
    expected = cli_findings(plan.relative_to(repo), repo)
    assert [code for code, *_ in expected] == ["PL507"]
    assert server_findings(await opened(client, plan, REFERENCE)) == expected


@pytest.mark.asyncio
async def test_messages_name_files_relative_to_the_workspace_wherever_the_server_started(tmp_path, monkeypatch):
    """The catalog is named as the CLI names it from the workspace root, even when the editor started the
    server in another directory."""
    repo = workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan = repo / "plans" / "retail.yaml"
    text = REFERENCE.replace('release: "2026.11.03"', 'release: "2026.12.01"')
    write(plan, text)
    monkeypatch.chdir(elsewhere)
    config = ClientServerConfig(server_command=SERVER.server_command)
    client = await config.start()
    try:
        await start(client, repo)
        found = await asyncio.wait_for(opened(client, plan, text), 120)
    finally:
        await asyncio.wait_for(client.shutdown_session(), 60)
        await asyncio.wait_for(client.stop(), 60)
    assert [d.code for d in found] == ["PL105"]
    assert "catalog.yaml" in found[0].message and str(repo) not in found[0].message, found[0].message
