"""Race metrics per trial and their aggregates (definitions: docs/SCORING.md).

FA  final-answer accuracy: the answer is exactly one digit and equals the passcode y*.
PVR page-visit rate: share of the leg's page stops whose page the agent fetched.
RCR roadblock completion rate: share of roadblocks whose whole chain the agent executed with
    matching arguments (in order).
Supplementary: intermediate value accuracy, steps, step-limit hits, tokens, time, tool efficiency.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Any

from pipeline.export.naming import task_id
from pipeline.model import LEVELS, Leg
from pipeline.scoring.golden import GoldenLeg, golden_view
from pipeline.scoring.judges import GoldenTraceJudge, Judgment
from pipeline.scoring.matching import TextIndex, value_in_text
from pipeline.scoring.trials import Trial
from pipeline.scoring.urls import Resolver, page_key
from pipeline.scoring.wide import wide_reach

NAV, TOOL, COMP = "navigation", "tool_use", "computation"


@dataclass
class TrialScore:
    trial_id: str
    leg_id: str | None
    agent: str | None
    variant: str | None
    level: str | None
    answer: str | None
    passcode: int | None
    fa: int
    pvr: float | None
    rcr: float | None
    intermediate: float | None
    steps: int
    budget: int | None
    step_limit_hit: bool
    n_calls: int
    useful_calls: int
    eta: float | None
    tokens: int | None
    wall_time_s: float | None
    error_class: str | None        # navigation | tool_use | computation (failed trials) | invalid
    shortcut: bool
    near_miss: bool
    invalid_reason: str | None
    judgments: list[dict] = field(default_factory=list)
    wide: list[dict] = field(default_factory=list)   # per wide stop: members, reached, recall, precision
    wide_recall: float | None = None                 # mean over the leg's wide stops (None: it has none)
    wide_precision: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def final_answer_correct(answer: str | None, passcode: int | None) -> int:
    if answer is None or passcode is None:
        return 0
    a = str(answer).strip()
    return int(re.fullmatch(r"\d", a) is not None and int(a) == passcode)


def page_visit_rate(golden: GoldenLeg, trial: Trial, resolve: Resolver | None = None) -> float | None:
    if not golden.pages:
        return None
    fetched = {page_key(c.page_url, resolve) for c in trial.calls if c.page_url}
    return sum(key in fetched for _, key in golden.pages) / len(golden.pages)


def chain_executed(chain, trial: Trial, recorded: bool = False) -> bool:
    """The chain's steps appear, in order, among the agent's calls (other calls may interleave).

    ``recorded``: the chain is one an imported leg recorded, not one a golden trace ran here. Its
    steps after one the agent made and the tool failed are not owed: the golden solution's own run of
    the chain stops at its first failure (``pipeline.execute``; an offline gazetteer without rivers
    cannot geocode one), and the attempted call counts, the failure being the environment's."""
    k = 0
    for call in trial.calls:
        if k < len(chain) and chain[k].matches(call.tool, call.args, call.result_preview or ""):
            k += 1
            if recorded and not call.success:
                return True
    return k == len(chain)


def roadblock_completion_rate(golden: GoldenLeg, trial: Trial) -> float | None:
    if not golden.chains:
        return None
    recorded = not golden.leg.trace           # an imported leg: its chains as recorded, never run here
    return sum(chain_executed(chain, trial, recorded) for chain in golden.chains.values()) / len(golden.chains)


def intermediate_accuracy(golden: GoldenLeg, trial: Trial) -> float:
    """Share of golden stop values found in the agent's tool results, arguments or messages.

    Not in its answer: the passcode is one digit, and a digit that happens to equal a small stop
    value is no evidence the agent obtained it (a random guesser would score above zero)."""
    if not golden.values:
        return None
    other = TextIndex("\n".join([json.dumps(c.args, ensure_ascii=False, default=str) for c in trial.calls]
                                + list(trial.messages)))
    blob = TextIndex.merged([c.index for c in trial.calls] + [other])
    return sum(value_in_text(v, blob) for _, v in golden.values) / len(golden.values)


def _at_least(x: float | None, t: float) -> bool:
    return x is None or x >= t


def classify(fa: int, pvr: float | None, rcr: float | None) -> str | None:
    """Why a failed trial failed: navigation < tool use < computation (first that applies)."""
    if fa:
        return None
    if not _at_least(pvr, 0.5):
        return NAV
    if not _at_least(rcr, 0.5):
        return TOOL
    return COMP


def score_trial(golden: GoldenLeg | None, trial: Trial, judge=None, resolve: Resolver | None = None) -> TrialScore:
    leg = golden.leg if golden else None
    if trial.error is not None or golden is None:
        reason = trial.error or f"unknown leg {trial.leg_id!r}"
        return TrialScore(trial.trial_id, trial.leg_id, trial.agent, leg.variant if leg else None,
                          leg.level if leg else None, trial.answer, leg.passcode if leg else None, 0, 0.0, 0.0, 0.0,
                          trial.steps or len(trial.calls), leg.step_budget if leg else None, False, len(trial.calls),
                          0, None, trial.tokens, trial.wall_time_s, "invalid", False, False, reason)
    fa = final_answer_correct(trial.answer, leg.passcode)
    pvr = page_visit_rate(golden, trial, resolve)
    rcr = roadblock_completion_rate(golden, trial)
    inter = intermediate_accuracy(golden, trial)
    steps = trial.steps if trial.steps is not None else len(trial.calls)
    judgments: list[Judgment] = (judge or GoldenTraceJudge(resolve)).judge(golden, trial)
    wide = wide_reach(leg, trial)
    useful = sum(j.sign > 0 for j in judgments)
    eta = useful / len(trial.calls) if trial.calls else None
    return TrialScore(
        trial.trial_id, trial.leg_id, trial.agent, leg.variant, leg.level, trial.answer, leg.passcode, fa, pvr, rcr,
        inter, steps, golden.budget, steps >= golden.budget, len(trial.calls), useful, eta, trial.tokens,
        trial.wall_time_s, classify(fa, pvr, rcr), bool(fa and pvr is not None and pvr < 0.3),
        bool(not fa and inter is not None and inter >= 0.8), None,
        [{"call": j.call, "tool": j.tool, "label": j.label, "sign": j.sign, "confidence": j.confidence,
          "rationale": j.rationale} for j in judgments],
        [w.to_dict() for w in wide], _avg([w.recall for w in wide]), _avg([w.precision for w in wide]),
    )


def find_leg(legs: dict[str, Leg], leg_id: str | None) -> Leg | None:
    """Exact id, else a Harbor task name that contains a leg's id (task ids add variant/level)."""
    if leg_id is None:
        return None
    if leg_id in legs:
        return legs[leg_id]
    by_task = {task_id(leg): leg for leg in legs.values()}
    if leg_id in by_task:
        return by_task[leg_id]
    hits = [leg for lid, leg in legs.items() if lid and lid in leg_id]
    return max(hits, key=lambda l: len(l.leg_id)) if hits else None


def score_trials(legs: Iterable[Leg], trials: Iterable[Trial], judge=None,
                 resolve: Resolver | None = None) -> list[TrialScore]:
    by_id = {leg.leg_id: leg for leg in legs}
    views: dict[str, GoldenLeg] = {}
    out = []
    for t in trials:
        leg = find_leg(by_id, t.leg_id)
        golden = None
        if leg is not None:
            golden = views.get(leg.leg_id) or views.setdefault(leg.leg_id, golden_view(leg, resolve))
        out.append(score_trial(golden, t, judge, resolve))
    return out


def _avg(xs: list) -> float | None:
    xs = [x for x in xs if x is not None]
    return mean(xs) if xs else None


def summarize(scores: list[TrialScore]) -> dict[str, Any]:
    """Means over trials (metrics undefined for a leg, e.g. RCR without roadblocks, are skipped)."""
    n = len(scores)
    failed = [s for s in scores if not s.fa]
    errs = defaultdict(int)
    for s in failed:
        errs[s.error_class] += 1
    return {
        "n": n,
        "invalid": sum(s.error_class == "invalid" for s in scores),
        "fa": _avg([s.fa for s in scores]),
        "pvr": _avg([s.pvr for s in scores]),
        "rcr": _avg([s.rcr for s in scores]),
        "intermediate": _avg([s.intermediate for s in scores]),
        "eta": _avg([s.eta for s in scores]),
        "steps": _avg([s.steps for s in scores]),
        "step_limit_rate": _avg([float(s.step_limit_hit) for s in scores]),
        "tokens": _avg([s.tokens for s in scores]),
        "wall_time_s": _avg([s.wall_time_s for s in scores]),
        "errors": {k: errs.get(k, 0) / n if n else 0.0 for k in (NAV, TOOL, COMP, "invalid")},
        "shortcut_rate": _avg([float(s.shortcut) for s in scores]),
        "near_miss_rate": _avg([float(s.near_miss) for s in scores]),
        "wide_recall": _avg([s.wide_recall for s in scores]),
        "wide_precision": _avg([s.wide_precision for s in scores]),
    }


def tool_utility(scores: Iterable[TrialScore]) -> dict[str, int]:
    """Aggregate utility per tool: sum of the judges' signs (+1 positive, -1 non-positive)."""
    total: dict[str, int] = defaultdict(int)
    for s in scores:
        for j in s.judgments:
            total[j["tool"]] += j["sign"]
    return dict(sorted(total.items()))


def _group_order(item) -> tuple:
    (agent, variant, level), _ = item
    return (agent, variant, LEVELS.index(level) if level in LEVELS else len(LEVELS), level)


def aggregate(scores: list[TrialScore]) -> dict[str, Any]:
    groups: dict[tuple, list[TrialScore]] = defaultdict(list)
    for s in scores:
        groups[(s.agent or "-", s.variant or "-", s.level or "-")].append(s)
    return {
        "overall": summarize(scores),
        "groups": [{"agent": a, "variant": v, "level": l, **summarize(g)} for (a, v, l), g in sorted(groups.items(), key=_group_order)],
        "tool_utility": tool_utility(scores),
    }
