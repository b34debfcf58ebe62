"""The ``inspect_ai`` entry point (``legwork = pipeline.agents.inspect._registry``): loading it registers
the tasks as ``legwork/race_legs``, ``legwork/math``, ``legwork/atp``, ``legwork/os``, ``legwork/git``.

Inspect names a task after the top-level module that defines it (here ``pipeline``), so each task is also
registered under the distribution's name, which is what ``inspect eval legwork/<task>`` looks up.
"""
from __future__ import annotations

from inspect_ai._util.registry import RegistryInfo, registry_add, registry_info

from pipeline.agents.inspect.scripted import legwork  # noqa: F401 - registers the legwork/oracle and legwork/random models
from pipeline.agents.inspect.tasks import TASKS, atp_tasks, git_tasks, math_tasks, os_tasks, race_legs

NAMESPACE = "legwork"

for _name, _task in TASKS.items():
    _info = registry_info(_task)
    if _info.name != f"{NAMESPACE}/{_name}":
        registry_add(_task, RegistryInfo(type="task", name=f"{NAMESPACE}/{_name}", metadata=_info.metadata))

__all__ = ["atp_tasks", "git_tasks", "math_tasks", "os_tasks", "race_legs"]
