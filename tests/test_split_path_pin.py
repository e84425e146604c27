"""PL107's verdict on each scheme's path forms: severity, and the pinned form its message shows."""

import pytest

from planlint.rules.base import ERROR, WARNING
from planlint.rules.pinning import split_path_pin

SHA = "3f2a9c1d5e7b8a0f4c6d2e1b9a8c7d6e5f4a3b2c"


@pytest.mark.parametrize("path", [
    "data/train.jsonl",
    "data/train-*.parquet",
    f"hf://datasets/acme/refunds@{SHA}/train.parquet",
    f"hf://datasets/acme/refunds@{SHA}/data/train-*.parquet",
    "s3://bucket/train.jsonl?versionId=3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",
    "gs://bucket/train.jsonl#1712345678901234",
])
def test_pinned_paths_pass(path):
    assert split_path_pin(path) is None


@pytest.mark.parametrize("path, severity, pinned", [
    ("hf://datasets/acme/refunds/train.parquet", ERROR, "hf://datasets/acme/refunds@<commit sha>/train.parquet"),
    ("hf://datasets/acme/refunds@main/train.parquet", ERROR, "hf://datasets/acme/refunds@<commit sha>/train.parquet"),
    ("hf://datasets/acme/refunds@v1.0/train.parquet", ERROR, "hf://datasets/acme/refunds@<commit sha>/train.parquet"),
    ("s3://bucket/train.jsonl", WARNING, "s3://bucket/train.jsonl?versionId=<version id>"),
    ("gs://bucket/train.jsonl", WARNING, "gs://bucket/train.jsonl#<generation>"),
    ("https://example.invalid/train.jsonl", WARNING, "s3://BUCKET/KEY?versionId=<version id>"),
])
def test_floating_paths_have_their_severity_and_pinned_form(path, severity, pinned):
    found = split_path_pin(path)
    assert found is not None and found[0] == severity
    assert pinned in found[2]


def test_a_revision_after_the_file_is_shown_where_the_hub_reads_it():
    # huggingface_hub reads a revision only after the repository name: FILE@REV names a file "FILE@REV"
    severity, why, pinned = split_path_pin(f"hf://datasets/acme/refunds/train.parquet@{SHA}")
    assert severity == ERROR
    assert "after the file" in why
    assert pinned == f"hf://datasets/acme/refunds@{SHA}/train.parquet"


def test_an_empty_version_id_is_not_repeated_in_the_pinned_form():
    severity, _, pinned = split_path_pin("s3://bucket/train.jsonl?versionId=")
    assert severity == WARNING
    assert pinned == "s3://bucket/train.jsonl?versionId=<version id>"


@pytest.mark.parametrize("path, why, pinned", [
    # a fragment that is not a generation is replaced, not kept before the generation
    ("gs://bucket/train.jsonl#abc", "without a generation", "gs://bucket/train.jsonl#<generation>"),
    ("gs://bucket/train.jsonl#", "without a generation", "gs://bucket/train.jsonl#<generation>"),
    # S3's 'null' version is the one a later upload to the key overwrites
    ("s3://bucket/train.jsonl?versionId=null", "null version", "s3://bucket/train.jsonl?versionId=<version id>"),
    # the reader takes a version only from a ?versionId= at the end; otherwise '?' is a wildcard of the key
    ("s3://bucket/train.jsonl?versionId=abc&x=y", "is a glob", "one versioned object per split"),
    ("s3://bucket/train.jsonl?x=1&versionId=abc", "is a glob", "one versioned object per split"),
])
def test_pl107_judges_a_version_as_the_reader_reads_it(path, why, pinned):
    severity, found_why, found_pinned = split_path_pin(path)
    assert severity == WARNING
    assert why in found_why
    assert pinned in found_pinned
