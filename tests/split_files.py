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


def put_leaky_shards(store, bucket: str, train_rows: int, eval_rows: int) -> None:
    """Into `store` (anything with put(bucket, key, bytes): S3, GCS): train as 3 Parquet shards of
    `train_rows` rows, eval as 2 gzip JSON Lines shards of `eval_rows` rows; customer 'cust-leak' is
    planted in train shard 00001 row 7 and eval shard 1 row 4 (1-based)."""
    for shard in range(3):
        rows = [{"customer_id": f"train-{shard}-{n}", "prompt": f"train prompt {shard} {n}"} for n in range(train_rows)]
        if shard == 1:
            rows[6]["customer_id"] = "cust-leak"
        store.put(bucket, f"train/part-{shard:05d}.parquet", parquet_bytes(rows))
    for shard in range(2):
        rows = [{"customer_id": f"eval-{shard}-{n}", "prompt": f"eval prompt {shard} {n}"} for n in range(eval_rows)]
        if shard == 1:
            rows[3]["customer_id"] = "cust-leak"
        store.put(bucket, f"eval/part-{shard}.jsonl.gz", jsonl_gz(rows))
