"""One direction of imports (issue 23, item 9): the layers contract in pyproject.toml holds, no module
imports another that imports it back, and imports sit at module level, except of heavy optional
third-party packages (and of the Prefect glue, which is Prefect)."""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "flows")

# What a function may import: packages that cost a start-up much (measured: python -X importtime) and
# serve one path only, so importing them at module level would slow every process that never takes it.
LAZY = {
    "prefect", "prefect_dask", "dask",  # orchestration: imported once flows.prefect_api has chosen the API
    "distributed",                      # Dask clusters (about 1 s): only when a release runs on one
    "openai",                           # the LLM client (about 0.5 s), only when an LLM answers
    "datasets", "huggingface_hub",      # the hub (about 0.6 s): loading a hub dataset, uploading a release
    "sympy",                            # the calculator (about 0.3 s): the registry loads its backend everywhere
    "scipy",                            # KD-trees of the offline world, built on the first nearest-place query
    "networkx",                         # city routing in the offline world, on the first directions call
    "h5py",                             # the elevation grid, on the first elevation call
    "requests", "urllib3",              # the live backends, loaded with every toolbox, used only when live
    "mcp", "mcp_types", "uvicorn",      # the MCP SDK (about 0.5 s): only while serving
    "libzim",                           # ZIM snapshot imports only
    "osmium",                           # the optional ``world`` extra: building city extracts
    "llama_cpp", "inspect_ai", "torch",  # optional runtimes
}
# Importing it imports Prefect, which reads its API settings at import: callers import it once
# flows.prefect_api has chosen the API (see flows/prefect_tasks.py).
PREFECT_GLUE = "flows.prefect_tasks"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [node.module]
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - node.level + 1]
    return [".".join(base + ([node.module] if node.module else []))]


def _imports_in_functions(node: ast.AST, module: str, is_package: bool, in_function: bool = False):
    """(line, imported module) of every import statement inside a function or lambda under ``node``."""
    for child in ast.iter_child_nodes(node):
        if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
            yield from ((child.lineno, name) for name in _imported(child, module, is_package))
        yield from _imports_in_functions(child, module, is_package, in_function or isinstance(
            child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def function_level_imports() -> list[tuple[str, int, str]]:
    """(file, line, imported module) of every import inside a function, in every first-party module."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            found += [(str(path.relative_to(ROOT)), line, name)
                      for line, name in _imports_in_functions(tree, _module_name(path), path.name == "__init__.py")]
    return found


def test_imports_inside_functions_are_of_heavy_optional_packages_only():
    found = function_level_imports()
    assert found, "the scan finds nothing: it is broken"
    wrong = [f"{file}:{line}: import {name}" for file, line, name in found
             if name != PREFECT_GLUE and name.split(".")[0] not in LAZY]
    assert not wrong, ("imports inside functions (move them to the top of the module; an import cycle they "
                       "dodged is a layering error to fix):\n" + "\n".join(wrong))


def test_the_allow_list_is_of_third_party_packages():
    assert not LAZY & set(PACKAGES) and not LAZY & set(sys.stdlib_module_names)


def test_the_layers_contract_is_kept():
    pytest.importorskip("importlinter")
    lint = "from importlinter.cli import lint_imports_command; lint_imports_command(['--no-cache', '--no-logo'])"
    done = subprocess.run([sys.executable, "-c", lint],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 kept, 0 broken" in done.stdout


def test_no_module_imports_one_that_imports_it_back():
    grimp = pytest.importorskip("grimp")
    import networkx as nx

    sys.path.insert(0, str(ROOT))
    try:
        graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    finally:
        sys.path.remove(str(ROOT))
    edges = nx.DiGraph((m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m))
    cycles = sorted(sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1)
    assert not cycles, f"import cycles: {cycles}"
