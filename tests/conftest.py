from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REFERENCE_PLAN = FIXTURES / "reference_plan.yaml"


class Result:
    def __init__(self, status: int, out: str, err: str) -> None:
        self.status, self.out, self.err = status, out, err

    @property
    def err_without_notes(self) -> str:
        """stderr less the `planlint: note:` lines (information, not problems)."""
        return "".join(line for line in self.err.splitlines(keepends=True) if not line.startswith("planlint: note:"))

    @property
    def json(self) -> dict:
        return json.loads(self.out)

    def __repr__(self) -> str:  # shown by pytest on failure
        return f"Result(status={self.status}, out={self.out[:2000]!r}, err={self.err[:2000]!r})"


@pytest.fixture
def planlint(capsys, monkeypatch):
    """Run the CLI in-process: planlint("plans/", "--format", "json")."""
    from planlint.cli import main

    def run(*args: str, cwd: Path | None = None) -> Result:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        status = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(status, captured.out, captured.err)

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    return run


def run_process(*args: str, cwd: Path | None = None, timeout: float = 60, env: dict | None = None, input: bytes | None = None) -> Result:
    """Run `python -m planlint` in a child process (for crash/hang/exit-code tests)."""
    full_env = dict(os.environ)
    full_env.pop("GITHUB_ACTIONS", None)
    full_env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + full_env.get("PYTHONPATH", "")
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "planlint", *map(str, args)],
        cwd=cwd, capture_output=True, timeout=timeout, env=full_env, input=input,
    )
    return Result(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def pytest_configure(config):
    import npm_tools

    npm_tools.CONFIG = config  # so the npm install can say that it runs


def pytest_report_header(config):
    import npm_tools

    return npm_tools.report_header()


@pytest.fixture(scope="session", autouse=True)
def _cache_key_outside_home(tmp_path_factory):
    """The caches' sealing key (planlint.core.cache_seal) in a temporary directory, for this process and its children."""
    previous = os.environ.get("PLANLINT_CACHE_KEY")
    os.environ["PLANLINT_CACHE_KEY"] = str(tmp_path_factory.mktemp("cache-key") / "key")
    yield
    if previous is None:
        os.environ.pop("PLANLINT_CACHE_KEY", None)
    else:
        os.environ["PLANLINT_CACHE_KEY"] = previous


# --------------------------------------------------------------------------- object stores stay local

#: Where the object-store clients go when a test lints a plan with a remote split
#: path (the PL107 fixtures name s3://, gs://, hf:// and https:// paths): a closed
#: port on 127.0.0.1, never the internet or a cloud's instance metadata service.
#: Tests that read remote splits point them at their own servers (tests/object_store.py).
_NOWHERE = "http://127.0.0.1:9"
OFFLINE_STORES = {
    "AWS_ENDPOINT_URL": _NOWHERE,
    "AWS_ACCESS_KEY_ID": "AKIAPLANLINTNOWHERE1",  # credentials given: botocore asks no metadata service
    "AWS_SECRET_ACCESS_KEY": "planlint-tests-go-nowhere",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    "STORAGE_EMULATOR_HOST": _NOWHERE,  # gcsfs: anonymous, to this endpoint
    "HF_ENDPOINT": _NOWHERE,
    "HF_HUB_OFFLINE": "1",
}


@pytest.fixture(scope="session", autouse=True)
def _object_stores_offline():
    """No test reaches an object store, the Hub or a metadata service outside 127.0.0.1."""
    previous = {name: os.environ.get(name) for name in OFFLINE_STORES}
    os.environ.update(OFFLINE_STORES)
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


# --------------------------------------------------------------------------- HTTP timeout guard

UNTIMED_REQUESTS: list[str] = []


def _finite_pair(timeout) -> bool:
    import math

    return (
        isinstance(timeout, tuple) and len(timeout) == 2
        and all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 < t and math.isfinite(t) for t in timeout)
    )


@pytest.fixture(scope="session", autouse=True)
def _http_timeout_guard():
    """Every request any in-process test makes through requests must carry a finite (connect, read) timeout.

    The real request still runs (no mock); a request without one is recorded
    and fails the test that made it (`_no_untimed_requests`), even where
    planlint would swallow an exception.
    """
    try:
        from requests.adapters import HTTPAdapter
    except ImportError:  # pragma: no cover - requests is a test dependency
        yield
        return
    original = HTTPAdapter.send

    def send(self, request, *args, **kwargs):
        timeout = kwargs["timeout"] if "timeout" in kwargs else (args[1] if len(args) > 1 else None)
        if not _finite_pair(timeout):
            UNTIMED_REQUESTS.append(f"{request.method} {request.url} timeout={timeout!r}")
        return original(self, request, *args, **kwargs)

    HTTPAdapter.send = send
    yield
    HTTPAdapter.send = original


@pytest.fixture(autouse=True)
def _no_untimed_requests(_http_timeout_guard):
    yield
    found = list(UNTIMED_REQUESTS)
    UNTIMED_REQUESTS.clear()
    assert not found, f"requests made without a finite (connect, read) timeout: {found}"



@pytest.fixture
def registry_waits(monkeypatch):
    """The registry client's waits, recorded instead of taken (its clock is injected)."""
    from planlint.services.registry import Registry

    waits: list[float] = []
    monkeypatch.setattr(Registry, "sleep", staticmethod(waits.append))
    return waits
