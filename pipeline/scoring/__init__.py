"""Race scoring: FA, PVR, RCR, supplementary metrics, tool efficiency and Shapley attribution.

Definitions live in docs/SCORING.md; the CLI is ``python -m pipeline.score``.
"""
from pipeline.scoring.golden import GoldenLeg, GoldenStep, golden_view
from pipeline.scoring.judges import GoldenTraceJudge, Judgment, LLMJudge, make_judge
from pipeline.scoring.metrics import (
    TrialScore,
    aggregate,
    final_answer_correct,
    intermediate_accuracy,
    page_visit_rate,
    roadblock_completion_rate,
    score_trial,
    score_trials,
    summarize,
    tool_utility,
)
from pipeline.scoring.shapley import (
    banzhaf_values,
    best_combination,
    pairwise_consistency,
    predicted_best_combination,
    shapley_monte_carlo,
    shapley_values,
)
from pipeline.scoring.trials import ToolCall, Trial, load_trials
from pipeline.scoring.urls import page_key, same_page

__all__ = [
    "GoldenLeg", "GoldenStep", "GoldenTraceJudge", "Judgment", "LLMJudge", "ToolCall", "Trial", "TrialScore",
    "aggregate", "banzhaf_values", "best_combination", "final_answer_correct", "golden_view",
    "intermediate_accuracy", "load_trials", "make_judge", "page_key", "page_visit_rate", "pairwise_consistency",
    "predicted_best_combination", "roadblock_completion_rate", "same_page", "score_trial", "score_trials",
    "shapley_monte_carlo", "shapley_values", "summarize", "tool_utility",
]
