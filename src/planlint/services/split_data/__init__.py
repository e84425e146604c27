"""The data-aware split checks (PL207-PL211) over a plan's train and eval splits.

resolve finds where split paths lead, check runs a check and returns facts;
the rest is what it stands on (docs/ARCHITECTURE.md, "The data path"). The
names here are imported on first use (`__getattr__`): a lint that only
resolves split paths, or asks a store how PL107 pins one, loads no reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planlint.services.split_data._sources import DEFAULT_MAX_BYTES
    from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS
    from planlint.services.split_data.check import CACHE_VERSION, DEFAULT_TIME_BUDGET, _have_pyarrow, check_split_data
    from planlint.services.split_data.facts import EXAMPLES, CheckResult, DataFacts, SameData, Stopped
    from planlint.services.split_data.resolve import GlobMatches, SplitPath, local_glob

__all__ = ["CACHE_VERSION", "DEFAULT_INPUT_FIELDS", "DEFAULT_MAX_BYTES", "DEFAULT_TIME_BUDGET", "EXAMPLES", "CheckResult", "DataFacts",
           "GlobMatches", "SameData", "SplitPath", "Stopped", "check_split_data", "local_glob", "_have_pyarrow"]


def __getattr__(name: str) -> Any:
    # `import a.b as x`, never `from a import b`: the latter asks this function for `b` again
    if name in ("CACHE_VERSION", "DEFAULT_TIME_BUDGET", "_have_pyarrow", "check_split_data", "check"):
        import planlint.services.split_data.check as check

        return check if name == "check" else getattr(check, name)
    if name in ("EXAMPLES", "CheckResult", "DataFacts", "SameData", "Stopped"):
        import planlint.services.split_data.facts as facts

        return getattr(facts, name)
    if name in ("GlobMatches", "SplitPath", "local_glob"):
        import planlint.services.split_data.resolve as resolve

        return getattr(resolve, name)
    if name == "DEFAULT_INPUT_FIELDS":
        import planlint.services.split_data._values as values

        return values.DEFAULT_INPUT_FIELDS
    if name == "DEFAULT_MAX_BYTES":
        import planlint.services.split_data._sources as sources

        return sources.DEFAULT_MAX_BYTES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
