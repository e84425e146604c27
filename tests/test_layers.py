"""The layering contract (pyproject.toml, [tool.importlinter]) holds, and it would catch a breach.

import-linter reads every import of the package, those inside functions too:
a module may import only from its own layer or the layers below it, and no two
sibling modules (or folders) import each other, however indirectly.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT


def lint_imports(project: Path, src: Path) -> subprocess.CompletedProcess:
    tool = Path(sys.executable).parent / "lint-imports"
    command = [str(tool)] if tool.exists() else [sys.executable, "-m", "importlinter.cli"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        command + ["--no-cache", "--no-logo", str(project / "pyproject.toml")],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )


def test_the_package_keeps_its_layers_and_has_no_cycle():
    proc = lint_imports(ROOT, ROOT / "src")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 kept, 0 broken" in proc.stdout


@pytest.mark.parametrize(
    ("module", "planted", "complaint"),
    [
        # a function-level import that climbs: core asking the engine
        ("core/atomic.py", "from planlint.engine.run import lint_paths", "planlint.core is not allowed to import planlint.engine"),
        # a cycle inside one layer, hidden in a function: messages -> loader -> positions -> messages
        ("core/messages.py", "from planlint.core.loader import load_text", "No import cycle between sibling modules"),
        # a store that reads rows itself: the schemes module asking a reader
        ("services/split_data/schemes.py", "from planlint.services.split_data._jsonl import _jsonl_batches",
         "- planlint.services.split_data.schemes -> planlint.services.split_data._jsonl"),
    ],
)
def test_the_contract_catches_an_import_inside_a_function(tmp_path, module, planted, complaint):
    shutil.copytree(ROOT / "src" / "planlint", tmp_path / "src" / "planlint", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "src" / "planlint" / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef _planted():\n    {planted}\n", encoding="utf-8")
    proc = lint_imports(tmp_path, tmp_path / "src")
    assert proc.returncode != 0, proc.stdout
    assert complaint in proc.stdout
    assert "BROKEN" in proc.stdout


def test_no_import_the_contract_cannot_see():
    """import-linter reads import statements; an `import_module(...)` or `__import__(...)` call would
    climb a layer or close a cycle unseen, so the package makes none."""
    dynamic = []
    for path in sorted((ROOT / "src" / "planlint").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                if name in ("import_module", "__import__"):
                    dynamic.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert dynamic == []
