"""Split files and plans for the data-check tests (local globs, S3, GCS, the Hub):
the reference plan with chosen split paths, and rows as Parquet or gzip JSON Lines bytes."""

from __future__ import annotations

import gzip
import io
import json

from conftest import REFERENCE_PLAN


def plan_text(train: str, eval_: str) -> str:
    """The spec's reference plan (clean under every rule), with these split paths and a group boundary only."""
    text = REFERENCE_PLAN.read_text(encoding="utf-8")
    text = text.replace("path: data/retail/train.jsonl", f"path: {json.dumps(train)}", 1)
    text = text.replace("path: data/retail/eval.jsonl", f"path: {json.dumps(eval_)}", 1)
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("time_key:", "cutoff:"))]
    return "\n".join(lines) + "\n"


def parquet_bytes(rows: list[dict]) -> bytes:
    import pyarrow as pa  # the callers skip without it
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table({key: [row[key] for row in rows] for key in rows[0]}), buffer)
    return buffer.getvalue()


def jsonl_gz(rows: list[dict]) -> bytes:
    return gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode())
