"""The data-aware split checks (PL207-PL211) over a plan's train and eval splits.

resolve.py finds where a plan's split paths lead (every lint asks it, for the
cache); check.py runs a check (`check_split_data`), which returns typed facts
(facts.py) or says why there are none (errors.py). The rest is what the check
stands on, bottom up: the stores split paths name (schemes), the objects of a
split and how they are opened (_sources), the readers of each format
(_formats over _jsonl, _csv, _parquet and their _base), the two passes over
the rows (_scan), the per-object index parts and their cache (_index_parts),
and the worker processes (_workers). docs/data-checks.md says what is
checked; docs/ARCHITECTURE.md how a store is added.

The names below are imported on first use (`__getattr__`): a lint that only
resolves split paths, or asks a store how PL107 pins a path, loads neither
the check nor its readers.
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
