"""Live HTTP backends (optional, selected by configuration): real public APIs, provenance ``live``.

Every base URL and key lives in ``settings.live`` (see each module), so tests point the
backends at a local server. Shared HTTP behaviour (timeouts, retries, rate limits) is in
``http``.
"""
from pipeline.tools.backends.live import (
    local,  # noqa: F401  (calculator, math_knowledge_search: local)
    maps,  # noqa: F401  (maps_*)
    markets,  # noqa: F401  (countries_*, crypto_*, stock_*)
    python_tools,  # noqa: F401  (python_*)
    weather,  # noqa: F401  (weather_*)
    web,  # noqa: F401  (fetch_webpage, web_search)
)
