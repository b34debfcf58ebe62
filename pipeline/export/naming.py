"""Task ids shared by the Harbor export and the scores that refer to its tasks (a module of its own: the
scorer needs the id, not the exporter and the agents' environments it imports)."""
from __future__ import annotations

import re

from pipeline.model import Leg


def task_id(leg: Leg) -> str:
    """Unique across variants and levels: the variant and level are always part of the id."""
    raw = f"legwork-{leg.variant}-{leg.level}-{leg.leg_id}"
    return re.sub(r"[^a-z0-9_.-]+", "-", raw.lower()).strip("-")
