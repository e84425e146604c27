"""Osmosis benchmark configs: the TOML `osmosis benchmark submit PATH` reads.

`check_benchmark()` is the SDK's `load_benchmark_submit_config`
(osmosis-ai 0.3.8, `platform/cli/benchmark_config.py`) restated as
problems at routes: the pydantic models' keys and types (unknown keys
rejected everywhere, `[[agents]]` of 1 to 8 tables, each with a `model`
told apart by its `type`: provider, endpoint or hosted), then the checks it
makes after them (environment variable names, secret names, and the names
the platform injects that an `[env]` may not also set). A benchmark config
names no rollout and no commit: it may live anywhere in the repository.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from planlint.core.messages import show
from planlint.core.positions import Route
from planlint.services.run_config import ENV_VAR_NAME, RESERVED_ENV_PREFIX, SECRET_NAME, FormatProblem, type_name

BENCHMARK = "benchmark"
SECTIONS = ("experiment", "tasks", "agents", "execution", "verifier", "secrets", "env")
EXECUTION_KEYS = ("attempts_per_task", "max_concurrent_attempts", "timeout_multiplier", "max_retries",
                  "pass_threshold", "judge_model", "judge_api_key_secret")
AGENT_KEYS = ("harness", "harness_api_key_secret", "model", "env")
# The model kinds an agent may name, and the string keys each needs (extra_headers: endpoint, optional).
MODEL_KEYS = {
    "provider": ("model", "api_key_secret"),
    "endpoint": ("base_url", "model", "api_key_secret"),
    "hosted": ("base_model", "lora_model_name"),
}
MAX_AGENTS = 8
MAX_SECRETS = 16
# benchmark_config.py: harnesses that read a credential of their own, and names the runner keeps.
HARNESS_API_KEY_ENV = {"cursor-cli": "CURSOR_API_KEY"}
MINI_SWE_AGENT_KEY_ENV = "MSWEA_API_KEY"
RESERVED_MODEL_SECRETS = ("DAYTONA_API_KEY", "DAYTONA_API_URL")


def _table(data: dict, name: str, route: Route = ()) -> Iterator[FormatProblem]:
    """A problem when `data[name]` is there and not a table."""
    if name in data and not isinstance(data[name], dict):
        where = ".".join(str(part) for part in route + (name,))
        yield FormatProblem(route + (name,), f"{where} must be a table, not {type_name(data[name])}")


def _unknown(table: dict, known: tuple[str, ...], route: Route) -> Iterator[FormatProblem]:
    where = ".".join(str(part) for part in route) or "the top level"
    for key in table:
        if key not in known:
            yield FormatProblem(route + (key,), f"{show(key)} is not a key of {where} in a benchmark config; the SDK rejects unknown keys (known: {', '.join(known)})", at_key=True)


def _string(table: dict, key: str, route: Route, *, required: bool) -> Iterator[FormatProblem]:
    where = ".".join(str(part) for part in route + (key,))
    if key not in table:
        if required:
            yield FormatProblem(route + (key,), f"{where} is missing; the SDK requires it in a benchmark config", missing=True)
    elif not isinstance(table[key], str):
        yield FormatProblem(route + (key,), f"{where} must be a string, not {type_name(table[key])}")


def _string_list(table: dict, key: str, route: Route, *, selectors: bool = False, most: int | None = None) -> Iterator[FormatProblem]:
    if key not in table:
        return
    value, where = table[key], ".".join(str(part) for part in route + (key,))
    if not isinstance(value, list):
        yield FormatProblem(route + (key,), f"{where} must be a list of strings, not {type_name(value)}")
        return
    for index, item in enumerate(value):
        if not isinstance(item, str):
            yield FormatProblem(route + (key, index), f"{where}[{index}] must be a string, not {type_name(item)}")
        elif selectors and not item.strip():
            yield FormatProblem(route + (key, index), f"{where}[{index}] is empty or only spaces; the SDK requires a name")
    if most is not None and len(value) > most:
        yield FormatProblem(route + (key,), f"{where} has {len(value)} names; the SDK takes at most {most}")


def _string_map(value: Any, route: Route, label: str) -> Iterator[FormatProblem]:
    """[env] and extra_headers: a table of strings; for [env], names the platform accepts."""
    if not isinstance(value, dict):
        yield FormatProblem(route, f"{label} must be a table of KEY = \"value\" pairs, not {type_name(value)}")
        return
    for key, item in value.items():
        if not isinstance(item, str):
            yield FormatProblem(route + (key,), f"{label} values must be strings, not {type_name(item)}: quote it")
    if label.endswith("[env]"):
        for key in value:
            if not ENV_VAR_NAME.match(key):
                yield FormatProblem(route + (key,), f"{show(key)} is not a valid environment variable name: it must match ^[A-Z_][A-Z0-9_]*$", at_key=True)
            elif key.startswith(RESERVED_ENV_PREFIX):
                yield FormatProblem(route + (key,), f"{show(key)}: names starting with {RESERVED_ENV_PREFIX} are reserved by the platform; choose another", at_key=True)


def _model(model: Any, route: Route) -> Iterator[FormatProblem]:
    if not isinstance(model, dict):
        yield FormatProblem(route, f"the agent's model must be a table with a type (provider, endpoint or hosted), not {type_name(model)}")
        return
    kind = model.get("type")
    if kind not in MODEL_KEYS:
        if "type" not in model:
            yield FormatProblem(route + ("type",), "the agent's model has no type; the SDK needs one of provider, endpoint, hosted", missing=True)
        else:
            yield FormatProblem(route + ("type",), f"the agent's model type {show(kind)} is none of provider, endpoint, hosted")
        return
    known = ("type",) + MODEL_KEYS[kind] + (("extra_headers",) if kind == "endpoint" else ())
    yield from _unknown(model, known, route)
    for key in MODEL_KEYS[kind]:
        yield from _string(model, key, route, required=True)
    headers = model.get("extra_headers")
    if kind == "endpoint" and "extra_headers" in model:
        yield from _string_map(headers, route + ("extra_headers",), "extra_headers")
        if isinstance(headers, dict) and any(isinstance(name, str) and name.casefold() == "authorization" for name in headers):
            name = next(name for name in headers if name.casefold() == "authorization")
            yield FormatProblem(route + ("extra_headers", name), "extra_headers must not include an Authorization header; name the credential in api_key_secret", at_key=True)


def check_benchmark(data: dict) -> Iterator[FormatProblem]:
    """What `osmosis benchmark submit` would reject in the benchmark config `data`."""
    experiment = data.get("experiment")
    if "experiment" not in data:
        yield FormatProblem(("experiment",), "[experiment] is missing; a benchmark config needs it with benchmark = NAME", missing=True)
    elif not isinstance(experiment, dict):
        yield FormatProblem(("experiment",), f"experiment must be a table, not {type_name(experiment)}")
    else:
        yield from _unknown(experiment, ("benchmark",), ("experiment",))
        yield from _string(experiment, "benchmark", ("experiment",), required=True)
    agents = data.get("agents")
    if "agents" not in data:
        yield FormatProblem(("agents",), "[[agents]] is missing; a benchmark config needs one to eight [[agents]] tables", missing=True)
    elif not isinstance(agents, list):
        yield FormatProblem(("agents",), f"agents must be an array of tables ([[agents]]), not {type_name(agents)}")
    elif not 1 <= len(agents) <= MAX_AGENTS:
        yield FormatProblem(("agents",), f"a benchmark config has {len(agents)} [[agents]]; the SDK takes one to {MAX_AGENTS}")
    yield from _unknown(data, SECTIONS, ())
    for name in ("tasks", "execution", "verifier", "secrets"):
        yield from _table(data, name)
    tasks = data.get("tasks")
    if isinstance(tasks, dict):
        yield from _unknown(tasks, ("categories", "task_names", "task_set"), ("tasks",))
        yield from _string_list(tasks, "categories", ("tasks",), selectors=True)
        yield from _string_list(tasks, "task_names", ("tasks",), selectors=True)
        if "task_set" in tasks and tasks["task_set"] != "parity":
            yield FormatProblem(("tasks", "task_set"), f"tasks.task_set {show(tasks['task_set'])} is not a task set the SDK knows: only \"parity\" (another would run every task)")
    for index, agent in enumerate(agents if isinstance(agents, list) else []):
        route: Route = ("agents", index)
        if not isinstance(agent, dict):
            yield FormatProblem(route, f"agents[{index}] must be a table, not {type_name(agent)}")
            continue
        yield from _unknown(agent, AGENT_KEYS, route)
        yield from _string(agent, "harness", route, required=False)
        yield from _string(agent, "harness_api_key_secret", route, required=False)
        if "model" not in agent:
            yield FormatProblem(route + ("model",), f"agents[{index}] has no model; the SDK requires one", missing=True)
        else:
            yield from _model(agent["model"], route + ("model",))
        if "env" in agent:
            yield from _string_map(agent["env"], route + ("env",), f"agents[{index}] [env]")
    execution = data.get("execution")
    if isinstance(execution, dict):
        yield from _unknown(execution, EXECUTION_KEYS, ("execution",))
        yield from _string(execution, "judge_api_key_secret", ("execution",), required=False)
    for name in ("verifier", "secrets"):
        section = data.get(name)
        if isinstance(section, dict):
            yield from _unknown(section, ("required",), (name,))
            yield from _string_list(section, "required", (name,), most=MAX_SECRETS)
    if "env" in data:
        yield from _string_map(data["env"], ("env",), "[env]")
    yield from _secret_references(data)


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _secret_references(data: dict) -> Iterator[FormatProblem]:
    """benchmark_config._validate_secret_references: the names of the secrets a benchmark
    references, and the names the platform injects that an [env] may not set too."""
    agents = [(index, agent) for index, agent in enumerate(data["agents"]) if isinstance(agent, dict)] if isinstance(data.get("agents"), list) else []
    execution = _mapping(data.get("execution"))
    named: list[tuple[Route, str]] = []
    for index, agent in agents:
        model = _mapping(agent.get("model"))
        secret = _text(model.get("api_key_secret"))
        if model.get("type") in ("provider", "endpoint") and secret is not None:
            named.append((("agents", index, "model", "api_key_secret"), secret))
        harness_secret = _text(agent.get("harness_api_key_secret"))
        if harness_secret is not None:
            named.append((("agents", index, "harness_api_key_secret"), harness_secret))
    judge = _text(execution.get("judge_api_key_secret"))
    if judge is not None:
        named.append((("execution", "judge_api_key_secret"), judge))
    for name in ("verifier", "secrets"):
        required = _mapping(data.get(name)).get("required")
        if isinstance(required, list):
            named.extend(((name, "required", i), item) for i, item in enumerate(required) if isinstance(item, str))
    for where, secret in named:
        if not SECRET_NAME.match(secret):
            yield FormatProblem(where, f"{show(secret)} is not a valid secret name: it must match ^[A-Z][A-Z0-9_]*$")
    common = _mapping(data.get("env"))
    judge = judge or None
    verifier = _mapping(data.get("verifier")).get("required")
    for index, agent in agents:
        route = ("agents", index)
        env = {**common, **_mapping(agent.get("env"))}
        model = _mapping(agent.get("model"))
        kind, harness = model.get("type"), _text(agent.get("harness"))
        secret = _text(model.get("api_key_secret")) if kind in ("provider", "endpoint") else None
        if secret in RESERVED_MODEL_SECRETS:
            yield FormatProblem(route + ("model", "api_key_secret"), f"{show(secret)} is a name the benchmark runner reserves; store the model's credential under another secret name")
        elif secret is not None and secret in env:
            yield FormatProblem(route + ("model", "api_key_secret"), f"{show(secret)} is also set in [env]: the platform injects the secret under that name; remove the env var or rename it")
        if judge is not None and judge in env:
            yield FormatProblem(("execution", "judge_api_key_secret"), f"{show(judge)} is also set in [env] of agents[{index}]: the platform injects the judge's secret under that name")
        for position, name in enumerate(verifier if isinstance(verifier, list) else []):
            if isinstance(name, str) and name in env:
                yield FormatProblem(("verifier", "required", position), f"{show(name)} is also set in [env] of agents[{index}]: the platform injects the verifier's secret under that name")
        reads = HARNESS_API_KEY_ENV.get(harness or "")
        given = agent.get("harness_api_key_secret")
        if reads and reads in env:
            yield FormatProblem(route + ("harness",), f"{show(reads)} is set in [env], but agents[{index}]'s {harness} harness manages it: remove the env var")
        if reads and given is None:
            yield FormatProblem(route + ("harness_api_key_secret",), f"agents[{index}]'s {harness} harness needs harness_api_key_secret = {show(reads)}, the secret it reads", missing=True)
        elif reads and given != reads:
            yield FormatProblem(route + ("harness_api_key_secret",), f"agents[{index}]'s {harness} harness reads {reads}: harness_api_key_secret must name exactly that secret")
        elif not reads and given is not None:
            whose = f"the {harness} harness" if harness else "the official scaffold"
            yield FormatProblem(route + ("harness_api_key_secret",), f"{whose} of agents[{index}] does not use harness_api_key_secret; remove it", at_key=True)
        if harness == "mini-swe-agent" and kind != "hosted" and MINI_SWE_AGENT_KEY_ENV in env:
            yield FormatProblem(route + ("harness",), f"{MINI_SWE_AGENT_KEY_ENV} is set in [env], but the platform injects agents[{index}]'s model key under that name for mini-swe-agent: remove the env var")
