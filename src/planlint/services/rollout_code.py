"""A rollout's code as the SDK's submit preflight meets it, checked without running any of it.

`osmosis train submit` imports `rollouts/<rollout>/<entrypoint>` before it
submits (platform/cli/rollout_entrypoint.py): the rollout's own
`__init__.py`, that of each package directory on the way to the entrypoint,
then the entrypoint, each executed. A file that is not valid Python stops
the submit there. planlint never imports or runs repository code (the
checkout is hostile): `compile_problem` compiles each of those files with
the built-in `compile()`, which parses and builds bytecode and executes
nothing, so a syntax error is found where the import would stop. What only
running the code could show (an import that fails, an exception at import
time) stays out of reach.

Python's grammar grows: a rollout runs on Python 3.12+ (the SDK's floor),
so under an older interpreter an error that may be newer syntax (PEP 695
type parameters, PEP 701 f-strings) is said to be unknowable, not reported.

Before the import, the preflight reads the rollout's `pyproject.toml`
(`[project].dependencies`) and skips the import when this environment does
not satisfy them (a warning, not a refusal). Whether the submitting
environment has them planlint cannot know; what it can check without
running anything is `pyproject_problems`: that the file is TOML and each
dependency a PEP 508 requirement, which the platform's resolver needs and
the preflight silently skips.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from planlint.core.loader import read_text
from planlint.core.messages import show
from planlint.core.positions import Positions, Span
from planlint.services.run_config import FormatProblem, type_name

# The oldest Python a rollout runs on (the SDK's Requires-Python).
ROLLOUT_PYTHON = (3, 12)


@dataclass
class SourceDocument:
    """A file of the rollout a finding is placed in (`Problem.document`): its display path
    and text; positions come with each problem (`Problem.span`)."""

    path: str
    text: str | None = None
    kind: str = "python"
    data: None = None
    positions: Positions = field(default_factory=Positions)
    error: None = None


@dataclass(frozen=True)
class CompileResult:
    """`span` and `message`: where and why the file is not valid Python; `unknown`: why
    planlint cannot tell (the file is unreadable, or this Python is older than the
    rollout's). All None: it compiles."""

    span: Span | None = None
    message: str | None = None
    unknown: str | None = None


def imported_files(rollout_dir: Path, entrypoint: str) -> list[Path]:
    """The files the SDK's loader executes to import `entrypoint`, in its order: the
    rollout's `__init__.py` and each intermediate package's, where they exist, then the
    entrypoint itself."""
    parts = [part for part in PurePosixPath(entrypoint).parts if part not in ("", ".")]
    files = []
    directory = rollout_dir
    for part in [""] + parts[:-1]:
        directory = directory / part if part else directory
        init = directory / "__init__.py"
        if init.is_file():
            files.append(init)
    files.append(rollout_dir.joinpath(*parts))
    return files


def _may_be_newer_syntax(error: SyntaxError, source: str) -> bool:
    """Could this SyntaxError of an older Python be syntax of Python 3.12+ (PEP 695, PEP 701)?"""
    message = error.msg or ""
    lines = source.splitlines()
    line = lines[error.lineno - 1] if error.lineno and 0 < error.lineno <= len(lines) else ""
    stripped = line.lstrip()
    return (
        message.startswith("f-string")
        or any(prefix + quote in line.lower() for prefix in ("f", "rf", "fr") for quote in ("'", '"'))
        or stripped.startswith("type ")
        or ((stripped.startswith(("def ", "class ", "async def ")) and "[" in stripped.split("(")[0]))
    )


def compile_problem(path: Path, max_size: int) -> CompileResult:
    """Compile the Python file at `path` (never run it): whether it is valid Python."""
    text, problem = read_text(path, max_size)
    if problem is not None or text is None:
        return CompileResult(unknown=(problem.message if problem is not None else "it cannot be read"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning (an invalid escape) is not an error
            compile(text, str(path), "exec", dont_inherit=True)
    except SyntaxError as error:  # IndentationError and TabError too
        if sys.version_info[:2] < ROLLOUT_PYTHON and _may_be_newer_syntax(error, text):
            return CompileResult(unknown=(
                f"Python {sys.version_info[0]}.{sys.version_info[1]} cannot compile it at line {error.lineno} ({error.msg}), "
                f"which may be syntax of Python {ROLLOUT_PYTHON[0]}.{ROLLOUT_PYTHON[1]}+, where rollouts run: run planlint on 3.12+ to check it"
            ))
        return CompileResult(span=_span(error, text), message=error.msg or "invalid syntax")
    except ValueError as error:  # NUL bytes, before Python 3.12
        return CompileResult(span=Span(1, 1, 1, 2), message=str(error) or "not Python source")
    except (RecursionError, MemoryError):
        return CompileResult(unknown="it is nested too deeply to compile here")
    return CompileResult()


def _span(error: SyntaxError, text: str) -> Span:
    lines = text.splitlines() or [""]
    line = min(max(error.lineno or 1, 1), len(lines))
    width = len(lines[line - 1])
    column = min(max(error.offset or 1, 1), width + 1)
    end_line = error.end_lineno if error.end_lineno and error.end_lineno >= line else line
    end_line = min(end_line, len(lines))
    end_column = error.end_offset if error.end_offset and (end_line > line or error.end_offset > column) else column + 1
    return Span(line, column, end_line, min(end_column, len(lines[end_line - 1]) + 2))


def pyproject_problems(data: dict) -> Iterator[FormatProblem]:
    """What the platform's resolver would refuse in a rollout's pyproject.toml that the SDK's
    preflight reads past: `[project]` not a table, `dependencies` not a list of strings, a
    dependency that is not a PEP 508 requirement (packaging's parser, the SDK's own)."""
    project = data.get("project")
    if project is None:
        return
    if not isinstance(project, dict):
        yield FormatProblem(("project",), f"project must be a table, not {type_name(project)}")
        return
    dependencies = project.get("dependencies")
    if dependencies is None:
        return
    if not isinstance(dependencies, list):
        yield FormatProblem(("project", "dependencies"), f"project.dependencies must be a list of requirement strings, not {type_name(dependencies)}")
        return
    from packaging.requirements import InvalidRequirement, Requirement  # only for a rollout that declares dependencies

    for index, raw in enumerate(dependencies):
        if not isinstance(raw, str):
            yield FormatProblem(("project", "dependencies", index), f"project.dependencies[{index}] must be a string, not {type_name(raw)}")
            continue
        try:
            Requirement(raw)
        except InvalidRequirement as error:
            first = str(error).splitlines()[0] if str(error) else "invalid"
            yield FormatProblem(("project", "dependencies", index), f"{show(raw)} is not a PEP 508 requirement ({first})")

