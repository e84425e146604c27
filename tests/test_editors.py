"""Editors: the modeline, the VS Code setting and the SchemaStore entry, and yaml-language-server reading them.

yaml-language-server comes from npm (tests/npm/package.json, installed on first
use by tests/npm_tools.py) and is driven over stdio as an editor drives it;
those tests are skipped, with the reason, only where npm cannot install it.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import ROOT, write
from lsp_client import LspClient
from npm_tools import node, npm_package
from planlint.scaffold import MODELINE, SCHEMA_URL

RELATIVE_MODELINE = "# yaml-language-server: $schema=../schemas/plan.schema.json"


@pytest.mark.parametrize("method", ["grpo", "sft"])
def test_init_writes_the_modeline(method, tmp_path, planlint):
    assert planlint("init", "demo", "--method", method, cwd=tmp_path).status == 0
    first = (tmp_path / "plans" / "demo.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == MODELINE == f"# yaml-language-server: $schema={SCHEMA_URL}"
    assert SCHEMA_URL == "https://raw.githubusercontent.com/planlint/planlint/main/schemas/plan.schema.json"


def test_the_repository_plans_carry_the_modeline():
    plans = sorted((ROOT / "plans").glob("*.yaml")) + sorted((ROOT / "examples").glob("*.yaml"))
    assert len(plans) >= 4
    for plan in plans:
        first = plan.read_text(encoding="utf-8").splitlines()[0]
        assert first == RELATIVE_MODELINE, plan
        target = (plan.parent / first.split("$schema=", 1)[1]).resolve()
        assert target == (ROOT / "schemas" / "plan.schema.json").resolve()


def test_schemastore_catalog_entry():
    catalog = json.loads((ROOT / "docs" / "schemastore-catalog.json").read_text(encoding="utf-8"))
    assert catalog["version"] == 1 and catalog["$schema"] == "https://json.schemastore.org/schema-catalog.json"
    (entry,) = catalog["schemas"]
    assert set(entry) == {"name", "description", "fileMatch", "url"}
    assert entry["url"] == SCHEMA_URL
    assert "plans/*.yaml" in entry["fileMatch"]


def test_readme_shows_the_vscode_setting_and_the_catalog():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", re.sub(r"^  ", "", readme, flags=re.M), re.S)
              if '"yaml.schemas"' in block]
    assert blocks, "README lost the VS Code yaml.schemas example"
    assert blocks[0]["yaml.schemas"] == {SCHEMA_URL: ["plans/*.yaml", "plans/*.yml"]}
    assert "docs/schemastore-catalog.json" in readme and MODELINE in readme


# --------------------------------------------------------------------------- yaml-language-server over stdio

SETTINGS = {"yaml": {"validate": True, "hover": True, "completion": True, "schemaStore": {"enable": False}, "format": {"enable": False}}}


@pytest.fixture
def server():
    package = npm_package("yaml-language-server")
    client = LspClient([node(), str(package / "bin" / "yaml-language-server"), "--stdio"], settings=SETTINGS)
    yield client
    client.close()


def _open(server, tmp_path, text: str, name: str = "plan.yaml") -> str:
    """A checkout-like layout (plans/ beside schemas/), so the relative modeline resolves offline."""
    schemas = tmp_path / "schemas"
    if not schemas.exists():
        schemas.mkdir()
        shutil.copy(ROOT / "schemas" / "plan.schema.json", schemas / "plan.schema.json")
    path = write(tmp_path / "plans" / name, text)
    server.request("initialize", {
        "processId": None, "rootUri": tmp_path.as_uri(),
        "capabilities": {"workspace": {"configuration": True},
                         "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}, "completion": {"completionItem": {"snippetSupport": False}}}},
    })
    server.notify("initialized", {})
    server.notify("workspace/didChangeConfiguration", {"settings": SETTINGS})
    uri = path.as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    return uri


def _diagnostics(server, uri: str, *, non_empty: bool) -> list[dict]:
    message = server.wait_for(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
        and (bool(m["params"]["diagnostics"]) or not non_empty),
        timeout=90,
    )
    return message["params"]["diagnostics"]


def _shipped() -> str:
    return (ROOT / "plans" / "retail-refund-grpo.yaml").read_text(encoding="utf-8")


def test_a_broken_plan_gets_the_schemas_diagnostics(server, tmp_path):
    text = _shipped().replace("kind: ExperimentPlan\n", "kind: ExperimentPlan\nbogus_key: 1\n", 1)
    uri = _open(server, tmp_path, text)
    diagnostics = _diagnostics(server, uri, non_empty=True)
    line = text.splitlines().index("bogus_key: 1")
    assert any(d["range"]["start"]["line"] == line and "bogus_key" in d["message"] for d in diagnostics), diagnostics
    assert all("planlint experiment plan" in d.get("source", "") for d in diagnostics), diagnostics


def test_the_modeline_is_what_attaches_the_schema(server, tmp_path):
    text = _shipped().replace(RELATIVE_MODELINE + "\n", "", 1).replace("kind: ExperimentPlan\n", "kind: ExperimentPlan\nbogus_key: 1\n", 1)
    assert "yaml-language-server" not in text
    uri = _open(server, tmp_path, text)
    assert _diagnostics(server, uri, non_empty=False) == []  # without it, no schema: no diagnostic


def test_completion_and_hover_come_from_the_schema(server, tmp_path):
    """A plan being written: `planlint init`'s first lines, the cursor on a new line under metadata."""
    text = f"{RELATIVE_MODELINE}\napiVersion: planlint/v1\nkind: ExperimentPlan\nmetadata:\n  name: demo\n  \n"
    uri = _open(server, tmp_path, text)
    _diagnostics(server, uri, non_empty=False)  # the document is loaded

    def labels(line: int, character: int) -> set[str]:
        found = server.request("textDocument/completion", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
        return {item["label"] for item in (found["items"] if isinstance(found, dict) else found)}

    assert {"owner", "status", "labels", "description", "tags"} <= labels(5, 2)  # metadata's other keys
    assert {"method", "dataset", "splits", "graders", "baseline", "budget"} <= labels(5, 0)  # the plan's sections
    hover = server.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 2}})
    assert "Must be planlint/v1" in hover["contents"]["value"], hover
