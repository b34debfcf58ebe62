"""Offline backends: real data shipped with the project or a PyPI package; simulated where none exists.

Every module here registers its implementations on import; keep this list complete."""
from pipeline.tools.backends.offline import (  # noqa: F401  (world data)
    countries,
    maps,
    markets,
    math_tools,
    python_tools,
    weather,
    web,
)
