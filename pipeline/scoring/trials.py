"""Agent trials as the scorer reads them, from any of the layouts agents leave behind.

Accepted inputs (``load_trials``):
  * a JSONL file of records ``{leg_id, answer, tool_log, steps?, tokens?, wall_time_s?}`` where
    ``tool_log`` is a list of calls or a path (relative to the file) of a JSONL tool log;
  * a directory holding such JSONL files, or one sub-directory per trial with ``trial.json``
    (same record) and usually ``tool_log.jsonl``;
  * Harbor-style trial directories (``result.json``, ``agent/trajectory.json`` in ATIF,
    an ``answer.txt`` and/or a ``tool_log.jsonl`` anywhere below);
  * ATIF trajectories (``steps[].tool_calls`` with ``observation.results``).
A call is ``{tool, args, success, result_preview, result_len, ts, url?}``. A record that cannot
be read becomes a ``Trial`` with ``error`` set: it is scored as a failure with that reason.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pipeline.scoring.matching import TextIndex


@dataclass
class ToolCall:
    """One call an agent made, as its tool log shows it.

    Not a ``model.TraceEntry``: a log holds only a preview of the response (the full text is not
    kept), a success flag instead of provenance, and no stop or step (an agent's calls are not
    assigned to stops until scoring matches them). ``from_entry`` views a golden entry this way."""
    tool: str
    args: dict[str, Any]
    success: bool = True
    result_preview: str = ""
    result_len: int | None = None
    ts: float | str | None = None
    url: str | None = None

    @property
    def index(self):
        """The result text prepared for value look-ups (built once per call)."""
        idx = self.__dict__.get("_index")
        if idx is None:
            idx = self.__dict__["_index"] = TextIndex(self.result_preview or "")
        return idx

    @classmethod
    def from_entry(cls, entry: Any, preview_chars: int | None = None) -> ToolCall:
        """A golden ``TraceEntry`` as an agent's log would show that call."""
        text = entry.response if preview_chars is None else entry.response[:preview_chars]
        url = entry.args.get("url") if entry.tool == "fetch_webpage" and isinstance(entry.args, dict) else None
        try:
            failed = "error" in json.loads(entry.response)
        except (json.JSONDecodeError, TypeError):
            failed = True
        return cls(tool=entry.tool, args=entry.args, success=not failed,
                   result_preview=text, result_len=len(entry.response), url=url)

    @property
    def page_url(self) -> str | None:
        if self.tool != "fetch_webpage":
            return None
        return self.url or (self.args.get("url") if isinstance(self.args, dict) else None)


@dataclass
class Trial:
    trial_id: str
    leg_id: str | None
    answer: str | None = None
    calls: list[ToolCall] = field(default_factory=list)
    steps: int | None = None
    tokens: int | None = None
    wall_time_s: float | None = None
    agent: str | None = None
    source: str | None = None
    error: str | None = None          # why this trial could not be read (scored as a failure)
    messages: list[str] = field(default_factory=list)  # agent texts (final message etc.), for value search

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class TrialFormatError(ValueError):
    pass


def _call_from(d: Any, where: str) -> ToolCall:
    if not isinstance(d, dict):
        raise TrialFormatError(f"{where}: a tool call must be an object, got {type(d).__name__}")
    tool = d.get("tool") or d.get("tool_name") or d.get("name") or d.get("function_name")
    if not isinstance(tool, str) or not tool:
        raise TrialFormatError(f"{where}: tool call without a tool name")
    args = d.get("args", d.get("arguments", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except json.JSONDecodeError as exc:
            if d.get("success") is not False:
                raise TrialFormatError(f"{where}: arguments are not JSON ({exc.msg})") from None
            # a failed call: the race logs an agent's broken arguments as written (pipeline.race.agent_tool_call)
            args = {"_unparsed_arguments": args}
    if not isinstance(args, dict):
        raise TrialFormatError(f"{where}: arguments must be an object")
    preview = d.get("result_preview", d.get("result", ""))
    if not isinstance(preview, str):
        preview = json.dumps(preview, ensure_ascii=False)
    return ToolCall(tool=tool, args=args, success=bool(d.get("success", "error" not in d)),
                    result_preview=preview, result_len=d.get("result_len"), ts=d.get("ts"), url=d.get("url"))


def read_tool_log(path: str | Path) -> list[ToolCall]:
    """A JSONL tool log; a broken line (e.g. a truncated last line) raises TrialFormatError."""
    p = Path(path)
    if not p.is_file():
        raise TrialFormatError(f"tool log not found: {p}")
    calls = []
    for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TrialFormatError(f"{p.name} line {n}: not valid JSON ({exc.msg}); log truncated or malformed") from None
        if isinstance(d, dict) and d.get("refused"):   # past the step budget: refused, not run, no call
            continue
        calls.append(_call_from(d, f"{p.name} line {n}"))
    return calls


def _opt_int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def trial_from_record(rec: Any, base: Path, trial_id: str) -> Trial:
    """One trial record; never raises: problems go to ``Trial.error``."""
    if not isinstance(rec, dict):
        return Trial(trial_id, None, error=f"record is not an object ({type(rec).__name__})", source=str(base))
    trial = Trial(trial_id=str(rec.get("trial_id") or trial_id), leg_id=rec.get("leg_id") or rec.get("task_id"),
                  answer=None if rec.get("answer") is None else str(rec.get("answer")),
                  steps=_opt_int(rec.get("steps")), tokens=_opt_int(rec.get("tokens")),
                  wall_time_s=rec.get("wall_time_s") if isinstance(rec.get("wall_time_s"), (int, float)) else None,
                  agent=rec.get("agent"), source=str(base),
                  messages=[m for m in rec.get("messages", []) if isinstance(m, str)])
    if trial.leg_id is None:
        trial.error = "record has no leg_id"
        return trial
    log = rec.get("tool_log", [])
    try:
        if isinstance(log, str):
            trial.calls = read_tool_log((base / log) if not Path(log).is_absolute() else Path(log))
        elif isinstance(log, list):
            trial.calls = [_call_from(c, f"tool_log[{i}]") for i, c in enumerate(log)]
        elif log is not None:
            raise TrialFormatError("tool_log must be a list of calls or a path")
    except TrialFormatError as exc:
        trial.error = str(exc)
    return trial


def trial_from_atif(traj: Any, trial_id: str, source: str, leg_id: str | None = None,
                    answer: str | None = None) -> Trial:
    """An ATIF trajectory (Harbor): agent steps' tool_calls paired with observation results."""
    trial = Trial(trial_id, leg_id, answer=answer, source=source)
    if not isinstance(traj, dict) or not isinstance(traj.get("steps"), list):
        trial.error = "ATIF trajectory without a steps list"
        return trial
    tokens = 0
    agent_steps = 0
    for i, step in enumerate(traj["steps"]):
        if not isinstance(step, dict):
            trial.error = f"ATIF step {i} is not an object"
            return trial
        if step.get("source") == "agent":
            agent_steps += 1
            if isinstance(step.get("message"), str) and step["message"]:
                trial.messages.append(step["message"])
        m = step.get("metrics") or {}
        tokens += int(m.get("prompt_tokens") or 0) + int(m.get("completion_tokens") or 0)
        results = {r.get("source_call_id"): r for r in ((step.get("observation") or {}).get("results") or [])
                   if isinstance(r, dict)}
        for c in step.get("tool_calls") or []:
            try:
                call = _call_from(c, f"ATIF step {i}")
            except TrialFormatError as exc:
                trial.error = str(exc)
                return trial
            r = results.get(c.get("tool_call_id"))
            if r is not None:
                content = r.get("content")
                call.result_preview = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
                call.result_len = len(call.result_preview)
                call.success = not r.get("is_error", False) and '"error"' not in call.result_preview[:200]
            trial.calls.append(call)
    final = traj.get("final_metrics") or {}
    total = (final.get("total_prompt_tokens") or 0) + (final.get("total_completion_tokens") or 0)
    trial.tokens = total or tokens or None
    trial.steps = final.get("total_steps") or agent_steps or None
    return trial


def _read_json(p: Path) -> Any:
    return json.loads(p.read_text(encoding="utf-8"))


def _trial_from_dir(d: Path) -> Trial:
    tid = d.name
    try:
        if (d / "trial.json").is_file():
            return trial_from_record(_read_json(d / "trial.json"), d, tid)
        result = _read_json(d / "result.json") if (d / "result.json").is_file() else {}
        leg_id = result.get("leg_id") or result.get("task_name") or result.get("task_id")
        answer_files = sorted(d.rglob("answer.txt"))
        answer = answer_files[0].read_text(encoding="utf-8").strip() if answer_files else None
        logs = sorted(d.rglob("tool_log.jsonl"))
        trajs = sorted(d.rglob("trajectory.json"))
        if trajs:
            trial = trial_from_atif(_read_json(trajs[0]), tid, str(d), leg_id, answer)
            if logs and trial.error is None:  # our executor's log is richer than the ATIF view
                trial.calls = read_tool_log(logs[0])
        elif logs:
            trial = Trial(tid, leg_id, answer=answer, source=str(d), calls=read_tool_log(logs[0]))
        else:
            trial = Trial(tid, leg_id, answer=answer, source=str(d))
        if trial.leg_id is None:
            trial.error = trial.error or "no leg id (trial.json leg_id or result.json task_name)"
        return trial
    except TrialFormatError as exc:
        return Trial(tid, None, source=str(d), error=str(exc))
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        return Trial(tid, None, source=str(d), error=f"unreadable trial: {exc}")


def _trials_from_jsonl(p: Path) -> list[Trial]:
    out = []
    for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        tid = f"{p.stem}:{n}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append(Trial(tid, None, source=str(p), error=f"{p.name} line {n}: not valid JSON ({exc.msg})"))
            continue
        if isinstance(rec, dict) and isinstance(rec.get("steps"), list) and "leg_id" not in rec:
            out.append(trial_from_atif(rec, tid, str(p), rec.get("task_name")))
        else:
            out.append(trial_from_record(rec, p.parent, tid))
    return out


def load_trials(path: str | Path) -> list[Trial]:
    """Every trial under ``path`` (see module docstring), in a stable order."""
    p = Path(path)
    if p.is_file():
        if p.suffix == ".json":
            d = _read_json(p)
            if isinstance(d, dict) and isinstance(d.get("steps"), list) and "leg_id" not in d:
                return [trial_from_atif(d, p.stem, str(p), d.get("task_name"))]
            return [trial_from_record(d, p.parent, p.stem)]
        return _trials_from_jsonl(p)
    if not p.is_dir():
        raise FileNotFoundError(f"no runs at {p}")
    trials: list[Trial] = []
    for f in sorted(p.glob("*.jsonl")):
        if f.name != "tool_log.jsonl":
            trials.extend(_trials_from_jsonl(f))
    for d in sorted(x for x in p.iterdir() if x.is_dir()):
        if (d / "trial.json").is_file() or (d / "result.json").is_file() or any(d.rglob("trajectory.json")) \
                or (d / "tool_log.jsonl").is_file():
            trials.append(_trial_from_dir(d))
        else:
            trials.extend(load_trials(d))
    return trials


def iter_calls(trials: Iterable[Trial]) -> Iterable[ToolCall]:
    for t in trials:
        yield from t.calls
