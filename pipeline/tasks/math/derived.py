"""Process-level tasks derived from each math problem (for evaluating how a model reasons).

  capability_planning       prompt -> the set of atomic capabilities the solution needs
  next_step_planning@P      prompt + the first P% of the plan -> the next (capability, sub-goal)
  correctness_judgment      prompt + a worked solution -> is it correct? (one correct, one flawed)
  error_localization        prompt + the flawed solution -> first wrong step and the error type
Scoring functions are in ``metrics.py``.
"""
from __future__ import annotations

import json

from pipeline.cache import canonical_json

PLAN_CUTS = (20, 50, 80)


def plan_cut(n_steps: int, percent: int) -> int:
    """How many plan steps are shown at ``percent``: at least one, never all."""
    return min(n_steps - 1, max(1, (n_steps * percent) // 100))


def derived_rows(row: dict) -> list[dict]:
    meta = json.loads(row["metadata_json"])
    answer = json.loads(row["answer_json"])
    task_id, prompt, plan = row["task_id"], row["prompt"], meta["plan"]
    flawed = meta["flawed_solution"]
    out = []

    def add(kind: str, suffix: str, inputs: dict, target: dict) -> None:
        out.append({"derived_id": f"{task_id}/{suffix}", "task_id": task_id, "kind": kind,
                    "input_json": canonical_json(inputs), "target_json": canonical_json(target)})

    add("capability_planning", "capability_planning", {"prompt": prompt}, {"capabilities": meta["capabilities"]})
    for percent in PLAN_CUTS:
        cut = plan_cut(len(plan), percent)
        add("next_step_planning", f"next_step_planning@{percent}", {"prompt": prompt, "plan_prefix": plan[:cut]},
            {"step": cut, **plan[cut]})
    correct = {"prompt": prompt, "solution": meta["solution"], "final_answer": answer["value"]}
    wrong = {"prompt": prompt, "solution": flawed["steps"], "final_answer": flawed["final_answer"]}
    add("correctness_judgment", "correctness_judgment/correct", correct, {"correct": True})
    add("correctness_judgment", "correctness_judgment/flawed", wrong, {"correct": False})
    add("error_localization", "error_localization", wrong,
        {"first_error_step": flawed["first_error_step"], "error_type": flawed["error_type"]})
    return out
