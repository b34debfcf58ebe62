"""No module of the package binds one top-level name twice. Blind race 52 (R04) found ``hops.called_so``
reading with a pattern that a later ``_CALLED`` of the same module had silently replaced: the check it
was written for (blind race 11) had not run since. Linters flag a function or an import defined twice,
not a constant."""
from __future__ import annotations

import ast
import collections
from pathlib import Path

import pipeline

PACKAGE = Path(pipeline.__file__).parent


def twice_bound(source: str) -> dict[str, list[int]]:
    """Top-level names bound more than once (assignments, functions, classes), with their lines."""
    seen: dict[str, list[int]] = collections.defaultdict(list)
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
            names = [node.target.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        else:
            names = []
        for name in names:
            seen[name].append(node.lineno)
    return {name: lines for name, lines in seen.items() if len(lines) > 1}


def test_the_check_finds_a_name_bound_twice():
    assert twice_bound("A = 1\ndef f():\n    A = 2\nB = 3\nA = 4\n") == {"A": [1, 5]}
    assert twice_bound("X: int = 1\nclass X:\n    pass\n") == {"X": [1, 2]}


def test_no_module_binds_a_top_level_name_twice():
    found = {str(path.relative_to(PACKAGE)): names for path in sorted(PACKAGE.rglob("*.py"))
             if (names := twice_bound(path.read_text(encoding="utf-8")))}
    assert found == {}
