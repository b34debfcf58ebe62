"""``--model legwork/oracle`` and ``--model legwork/random``: the runtime's scripted policies as an Inspect model.

They need no server and no network, so an Inspect race runs end to end offline (a smoke test of the tasks,
the tool server and the scorers; Inspect's own ``mockllm/model`` counts tokens with tiktoken, which
downloads its encoding on first use). Each turn they play the next action of the environment's policy
(``oracle_actions`` or ``random_actions`` seeded ``<epoch - 1>:<item id>``, as the race's agents), for the
item of the running sample: a tool call, or a plain reply; on legs the reply is a call of ``submit`` with
the digit, its message the oracle's worked solution. On an AAR leg without a golden trace the oracle makes
the calls its executor makes here (``environments.oracle_calls``), then submits its working and y*.
"""
from __future__ import annotations

import random
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, GenerateConfig, ModelAPI, ModelOutput, ModelUsage
from inspect_ai.model import modelapi as _modelapi
from inspect_ai.solver._task_state import sample_state
from inspect_ai.tool import ToolChoice, ToolInfo

from pipeline.agents.environments import environment_for, oracle_calls, parse_digit, worked_solution
from pipeline.config import load_settings
from pipeline.tools.registry import Toolbox
from pipeline.tools.toollog import ToolLog

ITEMS: dict[str, Any] = {}     # item id -> Leg or task row, filled by the tasks of this process
_ORACLE_CALLS: dict[str, list] = {}   # leg id -> the oracle's calls on an imported leg (its executor's, run here)
POLICIES = ("oracle", "random")


class ScriptedModel(ModelAPI):
    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig | None = None, **model_args: Any):
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in POLICIES:
            raise ValueError(f"legwork/{model_name}: the scripted models are {', '.join(POLICIES)}")

    def actions(self, item, seed: int) -> list[tuple]:
        is_leg = not isinstance(item, dict)
        env = environment_for(item, ToolLog(None), None)
        try:
            if self.model_name == "random":
                return env.random_actions(random.Random(f"{seed}:{env.item_id}"))
            if is_leg and not item.trace:   # the calls its executor makes here, then its working and y*
                answer = str(item.passcode)
                if item.leg_id not in _ORACLE_CALLS:        # run once per leg, not once per turn
                    _ORACLE_CALLS[item.leg_id] = oracle_calls(item, Toolbox(load_settings()))
                return [*(("act", tool, args) for tool, args in _ORACLE_CALLS[item.leg_id]),
                        ("message", worked_solution(item, answer)), ("reply", f"ANSWER: {answer}")]
            return env.oracle_actions()
        finally:
            env.close()

    async def generate(self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice,
                       config: GenerateConfig) -> ModelOutput:
        state = sample_state()
        meta = state.metadata if state is not None else {}
        item_id = meta.get("leg_id") or meta.get("task_id")
        if item_id not in ITEMS:
            raise ValueError("legwork/oracle and legwork/random play only the samples of Legwork's tasks")
        item = ITEMS[item_id]
        seed = max(0, int(state.epoch or 1) - 1)
        actions = self.actions(item, seed)
        message = "\n".join(a[1] for a in actions if a[0] == "message")
        actions = [a for a in actions if a[0] != "message"]
        turn = sum(isinstance(m, ChatMessageAssistant) for m in input)
        action = actions[min(turn, len(actions) - 1)]
        model = f"legwork/{self.model_name}"
        if action[0] == "act":
            out = ModelOutput.for_tool_call(model, action[1], action[2])
        elif not isinstance(item, dict):     # a leg: the digit goes to react()'s submit tool
            out = ModelOutput.for_tool_call(model, "submit", {"answer": parse_digit(action[1]) or ""},
                                            content=message or action[1])
        else:
            out = ModelOutput.from_content(model, action[1])
        out.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return out


@_modelapi(name="legwork")
def legwork() -> type[ModelAPI]:
    return ScriptedModel


__all__ = ["ITEMS", "POLICIES", "ScriptedModel", "legwork"]
