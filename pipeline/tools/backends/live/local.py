"""Tools with no remote service (local computations): the live backend answers like the offline one.

So ``LEGWORK_BACKEND=live`` gives a complete toolbox. The offline implementation is looked up
at call time, so this module follows whatever the offline package registers.
"""
from __future__ import annotations

from pipeline.tools import registry
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements

# countries_list: the list of the offline country statistics and their capitals' points (issue 34);
# REST Countries' list would not match the points the live geocoder gives, so it stays offline.
LOCAL_TOOLS = ("calculator", "math_knowledge_search", "countries_list")


def _delegate(tool: str):
    def run(args: dict, ctx: BackendContext) -> dict:
        offline = registry._IMPLEMENTATIONS.get((tool, "offline"))
        if offline is None:
            raise ToolError(f"{tool}: no local implementation registered")
        return offline(args, ctx)

    run.__name__ = f"live_{tool}"
    return run


for _tool in LOCAL_TOOLS:
    if _tool in registry.TOOLS:
        implements(_tool, "live")(_delegate(_tool))
