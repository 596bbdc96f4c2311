"""The library's layers, read from its source: config edge -> deployment -> components and backends ->
pure builders -> catalog. Nothing imports upward, no two modules import each other (directly or round a
longer circle, ``TYPE_CHECKING`` imports included), and one backend package never reaches into another."""

from __future__ import annotations

import ast
import functools
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.conftest import ROOT

LIBRARY = ROOT / "components"
PACKAGE = "tpu_serving"

EDGE = {PACKAGE, f"{PACKAGE}.provider"}
"""What a program imports: the package's exports and the component provider for other languages."""
DEPLOYMENT = {
    f"{PACKAGE}.deployment",
    f"{PACKAGE}.phases",
    f"{PACKAGE}.derived",
    f"{PACKAGE}.stack_outputs",
    f"{PACKAGE}.inventory",
    f"{PACKAGE}.egress",  # the platform phase's Cloud NAT of an existing cluster and image mirror
    f"{PACKAGE}.watched",  # the operations phase's view of what the serving exports
    f"{PACKAGE}.pool_phase",  # the TPU node pools phase
    f"{PACKAGE}.route_phase",  # a model stack's traffic phase
    f"{PACKAGE}.platform",  # a platform stack's deployment (TpuPlatform), from its settings
}
"""The one deployment component, its phases, the settings it derives, its stack outputs and its list of cloud
resources (created or existing)."""
CONFIG = f"{PACKAGE}.config"
BACKENDS = f"{PACKAGE}.backends"
SHARED_BY_BACKENDS = {
    BACKENDS,
    f"{BACKENDS}.base",
    f"{BACKENDS}.scaling",
    f"{BACKENDS}.rollout",
    f"{BACKENDS}.groups",
}
"""The registry and what every backend builds on; everything else under ``backends`` is one backend's package."""
CATALOG = f"{PACKAGE}.catalog"


def module_name(path: Path, root: Path = LIBRARY) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def import_statements(source: str) -> tuple[tuple[int, str | None, tuple[str, ...]], ...]:
    """The import statements of one module's text: (relative level, module, names); cached by text, so the planted
    copies below parse only the file they change."""
    found: list[tuple[int, str | None, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Import):
            found.extend((0, a.name, ()) for a in node.names)
    return tuple(found)


def import_graph(root: Path = LIBRARY) -> dict[str, set[str]]:
    """Module -> the library modules it imports (a ``from pkg import name`` that names a module counts as that module)."""
    modules = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found: set[str] = set()
        for level, module, names in import_statements(path.read_text()):
            if level:
                base = package.split(".")[: len(package.split(".")) - (level - 1)]
                source = ".".join(base + ([module] if module else []))
            else:
                source = module or ""
            if not (source == PACKAGE or source.startswith(f"{PACKAGE}.")):
                continue
            if names:
                found |= {f"{source}.{n}" if f"{source}.{n}" in modules else source for n in names}
            else:
                found.add(source)
        graph[name] = found - {name}
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def backend_of(module: str) -> str | None:
    """The backend package a module belongs to, or None."""
    if not module.startswith(f"{BACKENDS}.") or module in SHARED_BY_BACKENDS:
        return None
    return ".".join(module.split(".")[:3])


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Every import that goes against the layers."""
    found = []
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            edge = f"{module} -> {target}"
            if module == CATALOG:
                found.append(f"{edge}: the catalog is the bottom layer")
            if target in EDGE and module not in EDGE:
                found.append(f"{edge}: only a program imports the package's edge")
            if target in DEPLOYMENT and module not in EDGE | DEPLOYMENT:
                found.append(f"{edge}: the deployment is above every component")
            if (target == CONFIG or target.startswith(f"{CONFIG}.")) and not (
                module in EDGE | DEPLOYMENT or module.startswith(f"{CONFIG}.") or module == CONFIG
            ):
                found.append(f"{edge}: the config edge is read by the deployment, never by what it configures")
            target_backend, module_backend = backend_of(target), backend_of(module)
            above_backends = module in EDGE | DEPLOYMENT or module == CONFIG or module.startswith(f"{CONFIG}.")
            if target_backend is not None and module_backend not in (None, target_backend):
                found.append(f"{edge}: one backend never reaches into another")
            if target_backend is not None and module in SHARED_BY_BACKENDS - {BACKENDS}:
                found.append(f"{edge}: what every backend builds on knows no backend")
            if target.startswith(BACKENDS) and not module.startswith(BACKENDS) and not above_backends:
                found.append(f"{edge}: components below the registry do not know the backends")
    return found


def test_imports_graph_is_the_whole_library():
    graph = import_graph()
    assert len(graph) == len(list(LIBRARY.rglob("*.py")))
    for backend in ("jetstream", "pathways_job", "saxml", "vllm"):
        assert f"{BACKENDS}.{backend}.component" in graph[f"{BACKENDS}.{backend}"] or any(
            m.startswith(f"{BACKENDS}.{backend}.") for m in graph[f"{BACKENDS}.{backend}"]
        )
    # relative imports resolve: the registry reaches every backend package and the base
    assert {f"{BACKENDS}.vllm", f"{BACKENDS}.saxml", f"{BACKENDS}.base"} <= graph[BACKENDS]
    assert f"{PACKAGE}.catalog" in graph[f"{PACKAGE}.models"]


def test_imports_have_no_circles():
    assert circles(import_graph()) == []


def test_imports_never_go_upward():
    assert upward_imports(import_graph()) == []


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        ("catalog.py", "from .models import Precision", "circle"),
        ("backends/base.py", "from ..config.models import StackConfig", "config edge"),
        ("backends/vllm/pods.py", "from ..saxml.facts import HTTP_PORT", "another"),
        ("nodepool.py", "from .backends import BACKENDS", "do not know the backends"),
        ("gateway.py", "from .deployment import TpuServingDeployment", "deployment is above"),
        ("catalog.py", "from .naming import head_pool_name", "bottom layer"),
        ("naming.py", "from . import provider", "edge"),
        ("backends/scaling.py", "from .vllm import facts", "knows no backend"),
    ],
)
def test_imports_checks_catch_a_planted_import(tmp_path, module, line, expected):
    """Each rule fails on a copy of the library with one import planted against it."""
    copy = tmp_path / "components"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(f"{target.read_text()}\n{line}\n")
    graph = import_graph(copy)
    problems = [f"circle: {' '.join(c)}" for c in circles(graph)] + upward_imports(graph)
    assert any(expected in p for p in problems), problems
