"""The library's layers, read from its source. The folders are the layers, bottom to top (:data:`LAYERS`): what
every component builds with (``common``), the catalog, the components of each phase (``platform``, ``pools``,
``traffic``, ``operations``, ``tenancy``, ``cost``), the serving backends, the config edge; above them the
deployment (``deployment``, ``phases``, ``derived``, ``stack_outputs`` and each phase's entry) and the program's
edge. Nothing imports upward, every module is in a layer, no two modules import each other (directly or round a
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

LAYERS = ("common", "catalog", "platform", "pools", "traffic", "operations", "tenancy", "cost", "backends", "config")
"""The library's folders, bottom to top: a module imports only from its own folder and the folders before it."""
EDGE = {PACKAGE, f"{PACKAGE}.provider"}
"""What a program imports: the package's exports and the component provider for other languages."""
PHASE_ENTRIES = {
    f"{PACKAGE}.platform.inventory",  # the cloud resources a deployment creates or names existing
    f"{PACKAGE}.platform.egress",  # the platform phase's Cloud NAT of an existing cluster and image mirror
    f"{PACKAGE}.platform.tpu_platform",  # a platform stack's deployment (TpuPlatform), from its settings
    f"{PACKAGE}.pools.pool_phase",  # the TPU node pools phase
    f"{PACKAGE}.traffic.route_phase",  # a model stack's traffic phase
    f"{PACKAGE}.operations.watched",  # the operations phase's view of what the serving exports
}
"""The modules of a phase's folder that read the settings and the phases' context: the deployment's layer."""
DEPLOYMENT = {
    f"{PACKAGE}.deployment",
    f"{PACKAGE}.phases",
    f"{PACKAGE}.derived",
    f"{PACKAGE}.stack_outputs",
} | PHASE_ENTRIES
"""The one deployment component, its phases, the settings it derives, its stack outputs and the phases' entries."""
BACKENDS = f"{PACKAGE}.backends"
SHARED_BY_BACKENDS = {BACKENDS, f"{BACKENDS}.base", f"{BACKENDS}.groups", f"{BACKENDS}.scaling", f"{BACKENDS}.rollout"}
"""The registry and what every backend builds on; everything else under ``backends`` is one backend's package."""


def module_name(path: Path, root: Path = LIBRARY, package: str = PACKAGE) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
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


def import_graph(root: Path = LIBRARY, top: str = PACKAGE, reach: tuple[str, ...] = ()) -> dict[str, set[str]]:
    """Module -> the modules of package ``top`` (read from ``root``), and of the packages ``reach`` names, it imports (a
    ``from pkg import name`` that names a module counts as that module)."""
    modules = {module_name(p, root, top): p for p in root.rglob("*.py") if ".venv" not in p.parts}
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
            if not any(source == pkg or source.startswith(f"{pkg}.") for pkg in (top, *reach)):
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


def rank(module: str) -> int | None:
    """The module's layer: its folder's place in :data:`LAYERS`, one above them for the deployment, two for the
    edge; None for a module in none."""
    if module in EDGE:
        return len(LAYERS) + 1
    if module in DEPLOYMENT:
        return len(LAYERS)
    folder = module.split(".")[1] if "." in module else ""
    return LAYERS.index(folder) if folder in LAYERS else None


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    """Every module in no layer, and every import that goes against the layers."""
    found = [
        f"{module}: in no layer (a folder of LAYERS, or the deployment)" for module in graph if rank(module) is None
    ]
    for module, imported in sorted(graph.items()):
        for target in sorted(imported):
            edge = f"{module} -> {target}"
            low, high = rank(module), rank(target)
            if target in EDGE and module not in EDGE:
                found.append(f"{edge}: only a program imports the package's edge")
            elif target in DEPLOYMENT and module not in EDGE | DEPLOYMENT:
                found.append(f"{edge}: the deployment is above every component")
            elif low is not None and high is not None and high > low:
                found.append(f"{edge}: imports upward ({LAYERS[low]} is below {LAYERS[high]})")
            target_backend, module_backend = backend_of(target), backend_of(module)
            if target_backend is not None and module_backend not in (None, target_backend):
                found.append(f"{edge}: one backend never reaches into another")
            if target_backend is not None and module in SHARED_BY_BACKENDS - {BACKENDS}:
                found.append(f"{edge}: what every backend builds on knows no backend")
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
    assert f"{PACKAGE}.catalog" in graph[f"{PACKAGE}.catalog.models"]


def test_imports_every_layer_holds_modules():
    """Each folder of LAYERS is a package of the library with modules in it, and each phase entry exists."""
    graph = import_graph()
    for folder in LAYERS:
        assert (LIBRARY / folder / "__init__.py").is_file(), folder
        assert sum(rank(m) == LAYERS.index(folder) for m in graph) >= 2, folder
    assert graph.keys() >= PHASE_ENTRIES


def test_imports_have_no_circles():
    assert circles(import_graph()) == []


def test_imports_never_go_upward():
    assert upward_imports(import_graph()) == []


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        ("catalog/__init__.py", "from .models import Precision", "circle"),
        ("backends/base.py", "from ..config.models import StackConfig", "backends is below config"),
        ("backends/vllm/pods.py", "from ..saxml.facts import HTTP_PORT", "another"),
        ("pools/nodepool.py", "from ..backends import BACKENDS", "pools is below backends"),
        ("platform/cluster.py", "from ..pools.nodepool import TpuNodePool", "platform is below pools"),
        ("traffic/gateway.py", "from ..deployment import TpuServingDeployment", "deployment is above"),
        ("common/naming.py", "from ..catalog import machine_type", "common is below catalog"),
        ("common/naming.py", "from .. import provider", "edge"),
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


def test_imports_checks_catch_a_module_in_no_layer(tmp_path):
    """A new module at the top of the package, neither the edge nor the deployment, is in no layer."""
    copy = tmp_path / "components"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "stray.py").write_text("from .common.naming import dns_name\n")
    assert f"{PACKAGE}.stray: in no layer (a folder of LAYERS, or the deployment)" in upward_imports(import_graph(copy))


TOOLS, POLICY = "tpu_serving_tools", "tpu_serving_policy"


def test_imports_tools_have_no_circles():
    """The tools (deferred imports included) import each other round no circle: scheduling and scheduling_ds, the e2e
    run and its platform and model runs, objects and health_checks each were one."""
    graph = import_graph(ROOT / "tools", TOOLS)
    assert len(graph) > 150 and sum(len(v) for v in graph.values()) > 300, "the walk read the tools' imports"
    assert circles(graph) == []


def test_imports_tools_circle_is_found_when_planted(tmp_path):
    copy = tmp_path / "tools"
    shutil.copytree(ROOT / "tools", copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / "runtime" / "scheduling.py"
    target.write_text(f"{target.read_text()}\nfrom tpu_serving_tools.runtime.scheduling_check import check\n")
    planted = {f"{TOOLS}.runtime.scheduling", f"{TOOLS}.runtime.scheduling_check"}
    assert any(planted <= set(circle) for circle in circles(import_graph(copy, TOOLS)))


def test_imports_policy_rules_import_neither_the_tools_nor_the_library():
    """The tools import the policy rules; the policy pack imports nothing of the tools (nor of the library: it reads
    plans)."""
    graph = import_graph(ROOT / "policy", POLICY, reach=(TOOLS, PACKAGE))
    assert {f"{POLICY}.rules", f"{POLICY}.allowlist"} <= graph.keys()
    assert {m: t for m, t in graph.items() if any(not x.startswith(POLICY) for x in t)} == {}
    tools = import_graph(ROOT / "tools", TOOLS, reach=(POLICY,))
    assert any(f"{POLICY}.rules" in t for t in tools.values()), "the tools read the policy rules"
