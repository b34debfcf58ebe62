"""What a tool call can fail with: the exception types every layer names (imports nothing).

Below the configuration, the fault injector and the registry, so that each of them, the backends,
the stages and the agents name the same classes without importing one another.
"""
from __future__ import annotations


class ToolError(Exception):
    """A well-formed call that the backend cannot answer (the message says why)."""


class ToolArgumentError(ValueError):
    """Arguments break the tool's JSON schema, or the tool does not exist."""


class SimulatedRefused(ToolError):
    """The answer would be simulated but the settings forbid simulated values."""


class ServiceFailure(ToolError):
    """The service behind the tool failed this time (an HTTP 5xx, a dropped connection)."""


class ToolTimeout(ToolError):
    """The tool gave no answer in time."""


class MalformedResponse(ToolError):
    """The response is not a result object (not JSON, not an object, no valid provenance)."""


TRANSIENT_FAILURES = (ServiceFailure, ToolTimeout, MalformedResponse)   # the service failed this time


class ToolUnavailable(RuntimeError):
    """The tool cannot run at all on this machine with these settings (e.g. no sandbox for agent
    code). A configuration error, not an answer: never recorded in the cache, and deliberately
    not a ``ToolError``, so generation fails the run with this message instead of quietly
    rejecting every leg that would have used the tool."""


class LiveServiceError(RuntimeError):
    """A live service could not answer now (network, 5xx after retries, refused key); not cached."""


__all__ = [
    "TRANSIENT_FAILURES",
    "LiveServiceError",
    "MalformedResponse",
    "ServiceFailure",
    "SimulatedRefused",
    "ToolArgumentError",
    "ToolError",
    "ToolTimeout",
    "ToolUnavailable",
]
