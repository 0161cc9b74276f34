"""The package tree is layered: no import cycles between modules (lazy imports inside functions
included), ``models`` imports nothing from ``designer``, and the subpackages of ``designer`` import
one way only, in the order of ARCHITECTURE.md."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("designer", "models")

# Lower layers first; a subpackage may import only itself and what stands before it.
LAYERS = ("designer.errors", "designer.formats", "models", "designer.inputs", "designer.solve", "designer.audit",
          "designer.outputs", "designer.tools", "designer.cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


def imports(path: Path, known: set[str]) -> set[str]:
    """Every project module ``path`` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def import_graph() -> nx.DiGraph:
    mods = modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(mods)
    for name, path in mods.items():
        for target in imports(path, set(mods)):
            if target != name and not name.startswith(target + "."):  # a package's own __init__
                graph.add_edge(name, target)
    return graph


def layer(module: str) -> int:
    matches = [i for i, prefix in enumerate(LAYERS) if module == prefix or module.startswith(prefix + ".")]
    return matches[-1] if matches else -1


def test_no_import_cycles():
    cycles = list(nx.simple_cycles(import_graph()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_models_import_nothing_from_designer():
    bad = [(a, b) for a, b in import_graph().edges if a.startswith("models") and b.startswith("designer")]
    assert not bad, f"models/ imports the application: {bad}"


def test_layers_import_downwards():
    graph = import_graph()
    upward = [(a, b) for a, b in graph.edges if a != "designer" and b != "designer" and layer(b) > layer(a)]
    assert not upward, "imports against the layer order: " + ", ".join(f"{a} -> {b}" for a, b in upward)


def test_the_test_sees_a_cycle(tmp_path):
    """The checker itself: a planted two-module cycle is found."""
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import x\n")
    graph = nx.DiGraph()
    for name in ("a", "b"):
        for target in imports(tmp_path / f"{name}.py", {"a", "b"}):
            graph.add_edge(name, target)
    assert list(nx.simple_cycles(graph))
