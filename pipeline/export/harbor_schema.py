"""A mirror of the Harbor models the Harbor export must satisfy: the task config (``task.toml``)
and the ATIF trajectory (``trajectory.json``). ``harbor`` 0.25 needs a newer Python than this
project's 3.11, so the export is checked against these pydantic models instead of importing it.

Read from Harbor's source (Apache-2.0), field names, types, defaults and validators as Harbor has
them; only what a Legwork task uses is validated deeply, the rest is typed loosely:

* task config, schema 1.4: ``src/harbor/models/task/config.py`` as carried by the fork
  AlienKevin/sprint @ 49e3cd773739875a1ff87e4533d652d5659ffc14 (``TaskConfig.schema_version``
  default "1.4", ``[task]`` ``PackageInfo`` with the ``org/name`` pattern of
  ``harbor.constants.ORG_NAME_PATTERN``, ``NetworkMode`` no-network | public | allowlist,
  ``MCPServerConfig`` stdio | sse | streamable-http, ``allow_internet`` deprecated); cross-checked
  with LegoX/harbor @ 73fd120e731217b38f31667932ea26a28cdd4fff (schema 1.1, same fields).
* task directory: ``src/harbor/models/task/paths.py`` (``TaskPaths.is_valid``: task.toml,
  environment/, instruction.md, tests/test.sh; the oracle runs solution/solve.sh).
* ATIF (v1.0-v1.6): ``src/harbor/models/trajectories/*.py`` and ``utils/trajectory_validator.py``
  as vendored by refreshdotdev/harbor-trajectories @ 22dafa68f53b0e20b8818510116d18a3a58fcd73
  (every model ``extra = forbid``; step ids 1..n; observation results name a tool call of their
  own step; agent-only fields only on agent steps).
* the verifier's reward files (``harbor.verifier``): ``/logs/verifier/reward.txt`` holds one number,
  ``reward.json`` an object of numbers.
"""
from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

HARBOR_TASK_SCHEMA_VERSION = "1.4"
ATIF_SCHEMA_VERSION = "ATIF-v1.6"
# harbor.constants.ORG_NAME_PATTERN: a [task] name that fails it is refused at publish time and
# silently skipped by a local run.
ORG_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")


# ---- task.toml ---------------------------------------------------------------------------------
class NetworkMode(str, Enum):
    NO_NETWORK = "no-network"
    PUBLIC = "public"
    ALLOWLIST = "allowlist"


class Author(BaseModel):
    name: str
    email: str | None = None


class PackageInfo(BaseModel):
    name: str
    version: str | None = Field(default=None, min_length=1)
    description: str = ""
    authors: list[Author] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _org_name(cls, v: str) -> str:
        if not ORG_NAME_PATTERN.match(v) or ".." in v:
            raise ValueError(f"package name must be 'org/name' (letters, digits, '.', '_', '-'), got {v!r}")
        return v


class _PhaseNetwork(BaseModel):
    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None

    @model_validator(mode="after")
    def _hosts_only_for_allowlist(self):
        if self.allowed_hosts and self.network_mode not in (None, NetworkMode.ALLOWLIST):
            raise ValueError("allowed_hosts is only valid when network_mode='allowlist'")
        return self


class AgentConfig(_PhaseNetwork):
    timeout_sec: float | None = None
    user: str | int | None = None


class SolutionConfig(BaseModel):
    env: dict[str, str] = Field(default_factory=dict)


class HealthcheckConfig(BaseModel):
    command: str
    interval_sec: float = 5.0
    timeout_sec: float = 30.0
    start_period_sec: float = 0.0
    start_interval_sec: float = 5.0
    retries: int = 3


class MCPServerConfig(BaseModel):
    name: str
    transport: Literal["stdio", "sse", "streamable-http"] = "sse"
    url: str | None = None
    command: str | None = None
    args: list[str] = Field(default_factory=list)

    @field_validator("transport", mode="before")
    @classmethod
    def _http_alias(cls, v: Any) -> Any:
        return "streamable-http" if v == "http" else v

    @model_validator(mode="after")
    def _transport_fields(self):
        if self.transport in ("sse", "streamable-http") and not self.url:
            raise ValueError(f"'url' is required for transport '{self.transport}'")
        if self.transport == "stdio" and not self.command:
            raise ValueError("'command' is required for transport 'stdio'")
        return self


class EnvironmentConfig(BaseModel):
    network_mode: NetworkMode = NetworkMode.PUBLIC
    allowed_hosts: list[str] | None = None
    build_timeout_sec: float = 600.0
    docker_image: str | None = None
    os: Literal["linux", "windows"] = "linux"
    cpus: int | None = None
    memory_mb: int | None = None
    storage_mb: int | None = None
    gpus: int | None = None
    gpu_types: list[str] | None = None
    tpu: dict[str, Any] | None = None
    mcp_servers: list[MCPServerConfig] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    skills_dir: str | None = None
    healthcheck: HealthcheckConfig | None = None
    workdir: str | None = None
    allow_internet: bool | None = None      # deprecated in Harbor: network_mode replaces it


class VerifierConfig(_PhaseNetwork):
    timeout_sec: float = 600.0
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    environment_mode: Literal["shared", "separate"] | None = None
    environment: EnvironmentConfig | None = None
    continuous: dict[str, Any] | None = None
    collect: list[dict[str, Any]] = Field(default_factory=list)


class TaskConfig(BaseModel):
    """``harbor.models.task.config.TaskConfig`` (unknown keys ignored, as Harbor ignores them)."""
    schema_version: str = HARBOR_TASK_SCHEMA_VERSION
    task: PackageInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = None
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    steps: list[dict[str, Any]] | None = None
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _version_rename(cls, data: Any) -> Any:
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            data.setdefault("schema_version", data.pop("version"))
        return data

    @classmethod
    def model_validate_toml(cls, text: str) -> TaskConfig:
        return cls.model_validate(tomllib.loads(text))


# ---- ATIF trajectory ---------------------------------------------------------------------------
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageSource(_Strict):
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
    path: str


class ContentPart(_Strict):
    type: Literal["text", "image"]
    text: str | None = None
    source: ImageSource | None = None

    @model_validator(mode="after")
    def _fields_for_type(self):
        if (self.type == "text") != (self.text is not None) or (self.type == "image") != (self.source is not None):
            raise ValueError("a text part has only 'text', an image part only 'source'")
        return self


class ToolCall(_Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any]


class SubagentTrajectoryRef(_Strict):
    session_id: str
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResult(_Strict):
    source_call_id: str | None = None
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None


class Observation(_Strict):
    results: list[ObservationResult]


class Metrics(_Strict):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class Step(_Strict):
    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart]
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso(cls, v: str | None) -> str | None:
        if v is not None:
            datetime.fromisoformat(v)   # Python 3.11 reads a trailing Z
        return v

    @model_validator(mode="after")
    def _agent_only(self):
        if self.source != "agent":
            for name in ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"):
                if getattr(self, name) is not None:
                    raise ValueError(f"field {name!r} is only for agent steps, this one is {self.source!r}")
        return self


class Agent(_Strict):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Strict):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class Trajectory(_Strict):
    schema_version: Literal["ATIF-v1.0", "ATIF-v1.1", "ATIF-v1.2", "ATIF-v1.3", "ATIF-v1.4", "ATIF-v1.5",
                            "ATIF-v1.6"] = ATIF_SCHEMA_VERSION
    session_id: str
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _step_ids_and_call_refs(self):
        for i, step in enumerate(self.steps):
            if step.step_id != i + 1:
                raise ValueError(f"steps[{i}].step_id: expected {i + 1} (sequential from 1), got {step.step_id}")
            if step.observation is None:
                continue
            ids = {tc.tool_call_id for tc in step.tool_calls or []}
            for r in step.observation.results:
                if r.source_call_id is not None and r.source_call_id not in ids:
                    raise ValueError(f"step {step.step_id}: observation names tool call {r.source_call_id!r}, "
                                     "which is not among its tool_calls")
        return self


# ---- checks ----------------------------------------------------------------------------------
def task_problems(task_dir: str | Path) -> list[str]:
    """What Harbor would refuse in one exported task directory (empty when it loads)."""
    d = Path(task_dir)
    problems = [f"missing {rel}" for rel in ("task.toml", "instruction.md", "environment", "tests/test.sh",
                                             "solution/solve.sh") if not (d / rel).exists()]
    if (d / "task.toml").is_file():
        try:
            TaskConfig.model_validate_toml((d / "task.toml").read_text(encoding="utf-8"))
        except (ValidationError, tomllib.TOMLDecodeError) as exc:
            problems.append(f"task.toml: {exc}")
    env = d / "environment"
    if env.is_dir() and not (env / "Dockerfile").is_file() and not (env / "docker-compose.yaml").is_file():
        problems.append("environment/ holds neither a Dockerfile nor a docker-compose.yaml")
    return problems


def trajectory_problems(path_or_data: str | Path | dict) -> list[str]:
    """``TrajectoryValidator.validate`` of Harbor: every schema error, as text (empty when valid)."""
    data = path_or_data
    if not isinstance(data, dict):
        try:
            data = json.loads(Path(path_or_data).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return [f"cannot read trajectory: {exc}"]
    try:
        Trajectory.model_validate(data)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc'])) or 'trajectory'}: {e['msg']}" for e in exc.errors()]
    return []


def reward_problems(reward_dir: str | Path) -> list[str]:
    """What Harbor's verifier would fail to parse in ``reward.txt`` / ``reward.json``."""
    d, problems = Path(reward_dir), []
    txt, js = d / "reward.txt", d / "reward.json"
    if not txt.is_file() and not js.is_file():
        return ["no reward.txt and no reward.json"]
    if txt.is_file():
        try:
            float(txt.read_text())
        except ValueError:
            problems.append(f"reward.txt is not a number: {txt.read_text()[:40]!r}")
    if js.is_file():
        try:
            data = json.loads(js.read_text())
        except ValueError as exc:
            return problems + [f"reward.json is not JSON: {exc}"]
        if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                 for v in data.values()):
            problems.append("reward.json must be an object of numbers")
    return problems
