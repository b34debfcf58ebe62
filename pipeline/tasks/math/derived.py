"""Process-level tasks derived from each math problem (for evaluating how a model reasons), in the
three groups of AgenticMathBench: planning, action and feedback.

  planning  capability_planning    prompt -> the set of atomic capabilities the solution needs
            next_step_planning@P   prompt + the first P% of the plan -> the next (capability, sub-goal)
            tool_planning          prompt -> the knowledge points to look up (in order) and how many
                                   calculator calls the golden solution makes
  action    step_execution         prompt + the worked steps so far + the next sub-goal -> the
                                   calculator expression for it and its exact result
  feedback  correctness_judgment   prompt + a worked solution -> is it correct? (one correct, one flawed)
            error_localization     prompt + the flawed solution -> first wrong step and the error type
            error_correction       prompt + the flawed solution + where it first goes wrong -> the
                                   value that step should have

Plans follow from each problem's parameters (and the step picked for ``step_execution`` from its
task id), so these answers differ between problems of one template, not only between templates.
Scoring functions are in ``metrics.py``.
"""
from __future__ import annotations

import hashlib
import json

from pipeline.cache import canonical_json

PLAN_CUTS = (20, 50, 80)
KINDS = ("capability_planning", "next_step_planning", "tool_planning", "step_execution", "correctness_judgment",
         "error_localization", "error_correction")
GROUPS = {"capability_planning": "planning", "next_step_planning": "planning", "tool_planning": "planning",
          "step_execution": "action", "correctness_judgment": "feedback", "error_localization": "feedback",
          "error_correction": "feedback"}


def plan_cut(n_steps: int, percent: int) -> int:
    """How many plan steps are shown at ``percent``: at least one, never all."""
    return min(n_steps - 1, max(1, (n_steps * percent) // 100))


def _pick(task_id: str, n: int, purpose: str) -> int:
    """A stable choice among n options, from the task id alone."""
    return int.from_bytes(hashlib.sha256(f"{task_id}/{purpose}".encode()).digest()[:8], "big") % n


def derived_rows(row: dict) -> list[dict]:
    meta = json.loads(row["metadata_json"])
    answer = json.loads(row["answer_json"])
    trace = json.loads(row["trace_json"])
    task_id, prompt, plan = row["task_id"], row["prompt"], meta["plan"]
    flawed = meta["flawed_solution"]
    out = []

    def add(kind: str, suffix: str, inputs: dict, target: dict) -> None:
        out.append({"derived_id": f"{task_id}/{suffix}", "task_id": task_id, "kind": kind,
                    "input_json": canonical_json(inputs), "target_json": canonical_json(target)})

    # planning
    add("capability_planning", "capability_planning", {"prompt": prompt}, {"capabilities": meta["capabilities"]})
    for percent in PLAN_CUTS:
        cut = plan_cut(len(plan), percent)
        add("next_step_planning", f"next_step_planning@{percent}", {"prompt": prompt, "plan_prefix": plan[:cut]},
            {"step": cut, **plan[cut]})
    calls = trace["steps"]
    add("tool_planning", "tool_planning", {"prompt": prompt},
        {"knowledge_points": meta["knowledge_points"],
         "calculator_calls": sum(1 for c in calls if c["tool"] == "calculator")})
    # action
    calc = [(i, c) for i, c in enumerate(calls) if c["tool"] == "calculator"]
    if calc:
        i, call = calc[_pick(task_id, len(calc), "step_execution")]
        k = meta["call_steps"][i]
        add("step_execution", "step_execution",
            {"prompt": prompt, "steps_so_far": meta["solution"][:k],
             "next": {"step": k, "capability": plan[k]["capability"], "goal": plan[k]["goal"]},
             "tools": ["calculator"]},
            {"step": k, "tool": "calculator", "expression": call["args"]["expression"], "result": call["value"]})
    # feedback
    correct = {"prompt": prompt, "solution": meta["solution"], "final_answer": answer["value"]}
    wrong = {"prompt": prompt, "solution": flawed["steps"], "final_answer": flawed["final_answer"]}
    first, second = ((correct, True), (wrong, False)) if _pick(task_id, 2, "judgment") == 0 else \
        ((wrong, False), (correct, True))
    add("correctness_judgment", "correctness_judgment/a", first[0], {"correct": first[1]})
    add("correctness_judgment", "correctness_judgment/b", second[0], {"correct": second[1]})
    add("error_localization", "error_localization", wrong,
        {"first_error_step": flawed["first_error_step"], "error_type": flawed["error_type"]})
    k = flawed["first_error_step"]
    add("error_correction", "error_correction", {**wrong, "first_error_step": k},
        {"step": k, "value": meta["solution"][k]["value"], "text": meta["solution"][k]["text"]})
    return out

