"""The data-aware split checks (PL207-PL211) over a plan's train and eval splits.

check.py runs a check (`check_split_data`), which returns typed facts
(facts.py) or says why there are none (errors.py); the rest is what it stands on,
bottom up: the stores split paths name (schemes), the objects of a split
and how they are opened (_sources), the readers of each format (_formats
over _jsonl, _csv, _parquet and their _base), the two passes over the rows
(_scan), the per-object index parts and their cache (_index_parts), and
the worker processes (_workers). docs/data-checks.md says what is checked;
docs/ARCHITECTURE.md how a store is added.
"""

from planlint.services.split_data._values import DEFAULT_INPUT_FIELDS
from planlint.services.split_data.check import (
    CACHE_VERSION,
    DEFAULT_MAX_BYTES,
    DEFAULT_TIME_BUDGET,
    GlobMatches,
    SplitPath,
    _have_pyarrow,
    check_split_data,
)
from planlint.services.split_data._sources import local_glob
from planlint.services.split_data.facts import EXAMPLES, CheckResult, DataFacts, SameData, Stopped

__all__ = ["CACHE_VERSION", "DEFAULT_INPUT_FIELDS", "DEFAULT_MAX_BYTES", "DEFAULT_TIME_BUDGET", "EXAMPLES", "CheckResult", "DataFacts",
           "GlobMatches", "SameData", "SplitPath", "Stopped", "check_split_data", "local_glob", "_have_pyarrow"]
