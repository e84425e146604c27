"""What reading a plan may cost (`Limits`) and how the loader says what it refused (`LoadProblem`)."""

from __future__ import annotations

from dataclasses import dataclass

from planlint.core.positions import Route, Span

DEFAULT_MAX_FILE_SIZE = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    max_depth: int = 64  # plans are ~5 levels deep
    max_nodes: int = 100_000  # after alias expansion
    max_aliases: int = 1_000
    time_budget: float = 5.0  # seconds per file, last line of defence


@dataclass
class LoadProblem:
    code: str  # PL001, PL002 or PL006
    span: Span
    message: str
    route: Route = ()


def unreadable(message: str) -> LoadProblem:
    """PL006 at 1:1: the file cannot be read as a plan."""
    return LoadProblem("PL006", Span(1, 1, 1, 1), message)
