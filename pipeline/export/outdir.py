"""The folder an export writes into: new or empty, or holding only an earlier export of the same kind,
which is replaced; anything else is refused.

Every export (``harbor``, ``aar``, ``trajectories``) leaves ``.legwork-export.json`` in its folder: the
kind and every top-level entry it wrote. The next export into that folder deletes exactly those
entries before it writes (so no task of the earlier export is left beside the new ones for
``harbor run -p`` to race) and says so; a folder holding anything the manifest does not list, or an
export of another kind, is refused with the name of what is in the way.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from pipeline.usage import UserError

MANIFEST = ".legwork-export.json"


class OutDirError(UserError):
    """The export's folder holds something the export did not write."""


def _entries(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name != MANIFEST)


def prepare(out: str | Path, kind: str) -> str | None:
    """Make ``out`` ready for an export of ``kind``; return a note when an earlier export was removed."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{out} is a file, not a folder; choose a new or empty folder for the {kind} export")
    if not out.exists() or not any(out.iterdir()):
        return None
    manifest = out / MANIFEST
    if not manifest.is_file():
        raise OutDirError(f"{out} is not empty and holds no earlier Legwork export (e.g. {_entries(out)[0]!r}); "
                          f"choose a new or empty folder")
    try:
        earlier = json.loads(manifest.read_text(encoding="utf-8"))
        written = set(earlier["entries"])
        earlier_kind = earlier["kind"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutDirError(f"{manifest} is unreadable ({exc}); choose a new or empty folder") from None
    if earlier_kind != kind:
        raise OutDirError(f"{out} holds an earlier {earlier_kind} export, not a {kind} export; "
                          f"choose a new or empty folder")
    stray = [name for name in _entries(out) if name not in written]
    if stray:
        raise OutDirError(f"{out} holds {stray[0]!r}, which no earlier {kind} export wrote; "
                          f"choose a new or empty folder")
    removed = 0
    for name in sorted(written):
        p = out / name
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
            removed += 1
        elif p.exists() or p.is_symlink():
            p.unlink()
            removed += 1
    manifest.unlink()
    return f"replaced the earlier {kind} export in {out} ({removed} entries removed)"


def record(out: str | Path, kind: str) -> Path:
    """Write ``out``'s manifest: the kind and every top-level entry now in the folder."""
    out = Path(out)
    path = out / MANIFEST
    path.write_text(json.dumps({"kind": kind, "entries": _entries(out)}, indent=1) + "\n", encoding="utf-8")
    return path
