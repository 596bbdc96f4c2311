"""Shared fixtures: the project root, the reference material in ../shared, cached plans."""

from __future__ import annotations

import functools
import gc
import os
import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

import pytest
from _pytest.config import parse_warning_filter

from tpu_serving_tools.e2e.controlplane import toolchain_file
from tpu_serving_tools.preview.offline import Plan, preview_stack
from tpu_serving_tools.preview.stack_files import load_project, stack_config
from tpu_serving_tools.reference.sources import REFERENCE_ENV, WITHOUT_SEEDS_ENV, reference_dir

pytest_plugins = ["tests.messages", "pytester"]
"""Every error message of the library that a test creates is held to tests/golden_messages.txt."""

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = reference_dir(ROOT)
"""``../shared/reference`` beside the checkout, or ``$TPU_SERVING_REFERENCE`` (``make test REFERENCE_DIR=<dir>``)."""
STACKS_ROOT = Path(os.environ.get("TPU_SERVING_STACKS_ROOT") or ROOT)
"""The project whose stacks the stack tests preview: this one, or (``TPU_SERVING_STACKS_ROOT``) a copy with a stack
of its own, as tests/test_new_stack.py runs them: the stack tests hold for any valid stack."""
CRDS = REFERENCE / "crds"
SEED_MANIFESTS = REFERENCE / "seed-manifests"
UPSTREAM = REFERENCE / "upstream"
ALL_STACKS = load_project(STACKS_ROOT).stacks()
"""Every stack file's stack."""
PLATFORM_STACKS = [s for s in ALL_STACKS if "tpu-serving:sharedPlatform" in stack_config(load_project(STACKS_ROOT), s)]
"""The platform stacks (``sharedPlatform``): a cluster, its controllers and shared Gateway, no serving."""
STACKS = [s for s in ALL_STACKS if s not in PLATFORM_STACKS]
"""The serving stacks, model stacks on a platform among them: the tests of a serving deployment take these."""
SHIPPED = (
    "llama2-70b-disagg-v6e8x2",
    "llama31-405b-v6e16",
    "pathwaysjob-batch-v6e16",
    "pathwaysjob-interactive-v5e16",
    "saxml-175b-v5e32x2",
    "vllm-llama31-405b-tpu7x16",
    "vllm-llama31-405b-v6e16",
    "vllm-llama33-70b-disagg-v6e8x2",
    "vllm-llama33-70b-existing",
    "vllm-llama33-70b-v5e16",
    "vllm-llama33-70b-v6e8",
)
"""The stack files this repository ships. Tests of facts about these examples (which one is the production example,
which are gated, whose network is whose) read this; tests that hold for any stack read :data:`STACKS`, so a stack of
a user's own (docs/add-your-own-model.md) passes them without editing a test (new-user review round 48, M1)."""


def plan_of(stack: str) -> Plan:
    """The offline plan of ``stack``, computed once per test session (once per mutant under mutmut).

    While mutmut collects which tests reach which functions (``MUTANT_UNDER_TEST=stats``), every call
    previews afresh: a plan cached by the first test would credit the library's builders to that test
    alone, and mutmut would then run only it against their mutants (a mutant the golden test kills was
    reported as surviving)."""
    mutant = os.environ.get("MUTANT_UNDER_TEST", "")
    if mutant == "stats":
        return preview_stack(STACKS_ROOT, stack)
    return _cached_plan(stack, mutant)


@functools.cache
def _cached_plan(stack: str, mutant: str) -> Plan:
    return preview_stack(STACKS_ROOT, stack)


_IMPORT_TIME: set[str] = set()
"""Library functions the test modules' imports ran (mutmut's names), while mutmut collects its stats."""


GC_THRESHOLDS = (5000, 20, 100)
"""The cyclic garbage collector's thresholds while the tests run (Python's default: 700, 10, 10). An offline preview
allocates hundreds of thousands of container objects (the SDK's outputs, futures and tasks), so under the default the
collector ran a young collection every 700 allocations and a full one every 100 young ones, each full one walking
every object alive (measured, ``-p no:xdist``: 81 full collections, 28 s)."""


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the suite is collected, its modules, their imports and the collected items, which live until the session
    ends, are moved out of the garbage collector's sight (``gc.freeze``), and the collector runs less often
    (:data:`GC_THRESHOLDS`): a full collection walked every one of those objects again (about 700,000 in one process),
    and the collector took 32 s of the fast suite's 105 s, measured with ``-p no:xdist``; 6 s after. What a test sees
    is unchanged: only when unreachable cycles are freed (still before the session ends: pytest collects at its end).

    Under mutmut's stats run: note the functions that ran while the suite was imported (the settings models
    built from dataclasses, the price and version tables). mutmut would credit them to the first test alone."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from mutmut.state import state  # the dev requirements' mutmut, only under mutmut

        _IMPORT_TIME.update(state()._stats)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Under mutmut's stats run: the library's memoized values are built afresh for each test, as the plans are
    (:func:`plan_of`), so the functions behind them are credited to every test that uses them, not to the first
    alone (a survivor of the seed-27 sample, a mutant of validation._dataclass, was run against the one test that
    first built the argument validators, while a later test that catches it never ran)."""
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from tpu_serving.backends.saxml import pods
        from tpu_serving.common import validation

        validation._ADAPTERS.clear()
        pods.publisher_script.cache_clear()


INLINE_PROGRAM_LEFT_RUNNING = r"ignore:Exception ignored in. <coroutine object run_(in_stack|pulumi_func) at :pytest.PytestUnraisableExceptionWarning"
"""The e2e harness's inline program (``tools/e2e/stack_run.py``) runs on an event loop of the Python SDK's
``automation/_server.py`` (pulumi 3.272.0, ``LanguageServer.Run``). When the engine fails an ``up`` (as
``test_e2e_shared_tenancy`` makes it, on purpose), that loop is left with the program's ``run_in_stack`` coroutine
unfinished; whenever the garbage collector later closes it, its ``finally`` awaits ``_shutdown_callbacks``, whose
``asyncio.get_running_loop()`` (``runtime/_callbacks.py`` l.110) raises outside any loop, an unraisable exception in
whichever test is running then (CI of stop 59 failed ``test_e2e_zone_outage`` on it, after every step had passed).
The command's own result, which the tests assert, is unaffected; only these two SDK coroutines are ignored, and only
in e2e tests, so an unraisable exception of anything else still fails. ``StackRun`` collects them before each command,
outside its program's loop (``collected_outside_the_run``): closed inside a later program's loop, one stopped that
program's callback server."""


def pytest_configure(config: pytest.Config) -> None:
    """``make e2e`` (``-m e2e``): the filter holds for the whole session too, for a coroutine only collected at its
    end (pytest's ``pytest_unconfigure`` collects once more, under the session's filters)."""
    if (config.option.markexpr or "").strip() == "e2e":
        # pytest's configure-time warnings context is open here and stays open until after pytest_unconfigure
        # (pytest 9.2.0, config/__init__.py l.1359-1370): a filter added now is in force for that last collection
        warnings.filterwarnings(*parse_warning_filter(INLINE_PROGRAM_LEFT_RUNNING, escape=False))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each e2e item ignores them, however it was selected (one file of them runs without ``-m e2e``)."""
    for item in items:
        if item.get_closest_marker("e2e") is not None:
            item.add_marker(pytest.mark.filterwarnings(INLINE_PROGRAM_LEFT_RUNNING))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """In CI (``CI`` set, as ``.ci/run`` is run), an e2e test that skips fails: CI builds the toolchain before
    ``make e2e``, so a skip there means a tool the run needs is missing, and would pass unseen."""
    report: pytest.TestReport = yield
    if os.environ.get("CI") and report.skipped and item.get_closest_marker("e2e") is not None:
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where the e2e toolchain is built first: {report.longrepr}"
    missing = missing_reference_file(call.excinfo.value if call.excinfo is not None else None)
    if missing is not None and report.failed:
        report.longrepr = missing
    return report


def missing_reference_file(error: BaseException | None) -> str | None:
    """What a test that failed on a reference file it could not open needs, said as the fixture says a missing
    folder: a fork that fetched some of the files (new-user reviews 15 m6 and 16 m5: one missing folder failed every
    test that reads any file) fails only the tests whose own files are missing, each naming its file."""
    if not isinstance(error, FileNotFoundError) or error.filename is None:
        return None
    path = Path(str(error.filename))
    if REFERENCE not in path.parents:
        return None
    return needs_reference_file(path.relative_to(REFERENCE))


def needs_reference_file(relative: Path | str) -> str:
    """The message of a test whose reference file is missing: what fetches it, and what to do where GitHub cannot be
    reached (new-user review 17, m6)."""
    return (
        f"needs the reference file {relative}: run `make reference` (docs/development.md, 'Reference schemas'), which "
        f"fetches it into {REFERENCE} (${REFERENCE_ENV} elsewhere); a machine that cannot reach GitHub copies `crds/` "
        f"and `upstream/` from one that can and sets ${REFERENCE_ENV} to the copy"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Under mutmut's stats run: every test relies on what the imports built, so each is credited with the
    import-time functions (mutmut runs them all against such a mutant; pyproject's ``forkserver_warmup = "none"``
    makes each mutant's process import the library afresh, so the mutant takes effect at import)."""
    if _IMPORT_TIME:
        from mutmut.state import state

        state()._stats.update(_IMPORT_TIME)


@pytest.fixture(scope="session")
def reference() -> Path:
    """The upstream reference files (CRDs and manifests), which ``make reference`` fetches."""
    missing = [d for d in (REFERENCE,) if not d.is_dir()]  # its files: each test that reads one (above)
    if missing:
        pytest.fail(  # the summary line shows the start of the message: what to do comes first
            f"needs the reference files: run `make reference` (docs/development.md, 'Reference schemas'), which "
            f"fetches them into {REFERENCE} (${REFERENCE_ENV} elsewhere); missing: " + ", ".join(map(str, missing))
        )
    return REFERENCE


def missing_seeds(folder: Path, environ: Mapping[str, str]) -> tuple[bool, str] | None:
    """None when ``folder`` holds the seeds' manifests; else (skip, why): skip only when ``environ`` says the
    checkout goes without them (:data:`WITHOUT_SEEDS_ENV`), fail otherwise."""
    if folder.is_dir():
        return None
    if environ.get(WITHOUT_SEEDS_ENV) == "1":
        return True, f"no seeds' manifests in {folder} ({WITHOUT_SEEDS_ENV}=1): a seed conformance test not run"
    return False, (
        f"needs the seeds' manifests in {folder}, which make reference cannot fetch (no upstream publishes them): "
        f"docs/development.md, 'Reference schemas', says where they come from; a fork without them: "
        f"make test WITHOUT_SEEDS=1 skips the tests that read them"
    )


@pytest.fixture(scope="session")
def seeds(reference: Path) -> Path:
    """The seeds' manifests, which no upstream publishes and ``make reference`` cannot fetch: only the seed
    conformance tests need them, so a checkout without them fails those alone (user review round 41, M1), or skips
    them when it says it goes without (:func:`missing_seeds`; user review round 42, M1)."""
    missing = missing_seeds(SEED_MANIFESTS, os.environ)
    if missing is not None:
        skip, why = missing
        if skip:
            pytest.skip(why)
        pytest.fail(why)
    return SEED_MANIFESTS


def require_toolchain() -> None:
    """Skip, naming what is missing and how to build it, where the e2e toolchain's file is absent (in CI a skipped
    e2e test fails: :func:`pytest_runtest_makereport`)."""
    if not toolchain_file().is_file():
        pytest.skip(f"no e2e toolchain at {toolchain_file()}: run `make e2e-tools` (or set TPU_SERVING_E2E_TOOLCHAIN)")


def run_module(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m <module> <args>`` from the project root, as a user runs a tool: its exit code and output."""
    return subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def resource(plan: Plan, type_: str, name: str):
    """The one resource of ``type_`` named ``name``."""
    found = [r for r in plan.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, f"{type_} {name}: found {len(found)} in {[r.name for r in plan.of_type(type_)]}"
    return found[0]


def flatten(obj, args_by_container=None) -> dict[str, object]:
    """Flatten a Kubernetes object to {path: value} for field-by-field comparison.

    Lists of named items are keyed by name; ``args_by_container`` maps a container name
    to a function that turns its ``args`` into a comparable dict.
    """
    args_by_container = args_by_container or {}
    flat: dict[str, object] = {}

    def walk(value, path):
        if isinstance(value, dict):
            convert = args_by_container.get(value.get("name")) if "args" in value else None
            if convert:
                value = {**value, "args": convert(value["args"])}
            for k, v in value.items():
                walk(v, f"{path}.{k}" if path else k)
        elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
            for v in value:
                walk(v, f"{path}[{v['name']}]")
        else:
            flat[path] = value

    walk(obj, "")
    return flat


def seed_differences(seed: dict, ours: dict, differences, normalise=flatten) -> tuple[list[str], set[str]]:
    """Compare two objects field by field.

    Returns the differences not explained by ``differences`` (``(path regex, reason)``
    pairs) and the regexes that explained at least one difference.
    """
    import re

    a, b = normalise(seed), normalise(ours)
    problems, used = [], set()
    for path in sorted(set(a) | set(b)):
        if a.get(path) == b.get(path):
            continue
        reason = next((r for r, _ in differences if re.fullmatch(r, path)), None)
        if reason is None:
            problems.append(f"{path}: seed {a.get(path)!r} != rendered {b.get(path)!r}")
        else:
            used.add(reason)
    return problems, used


def waits_for(plan: Plan, res) -> set[str]:
    """URNs ``res`` waits for: its recorded dependencies, theirs, and the children of a component it waits for.
    Not its parents' dependencies: a component's depends_on does not reach its children."""
    by_urn = {r.urn: r for r in plan.resources}
    seen: set[str] = set()
    todo = list(res.dependencies)
    while todo:
        urn = todo.pop()
        if urn in seen or urn not in by_urn:
            continue
        seen.add(urn)
        todo += list(by_urn[urn].dependencies) + [r.urn for r in plan.resources if r.parent == urn]
    return seen


HARDENED_DIFFERENCES: list[tuple[str, str]] = [
    (
        r"(.*\.)?spec\.automountServiceAccountToken",
        "no service account token in pods that never call the Kubernetes API (Checkov CKV_K8S_38)",
    ),
    (
        r"(.*\.)?spec\.securityContext\.seccompProfile\.type",
        "seccomp RuntimeDefault, which GKE Standard does not apply by itself (CKV_K8S_31)",
    ),
    (r".*\.securityContext\.allowPrivilegeEscalation", "no privilege escalation (CKV_K8S_20)"),
    (r".*\.securityContext\.capabilities\.drop", "every capability dropped, NET_RAW with them (CKV_K8S_28, _37)"),
]
"""The hardened pod defaults (issue: security baseline), a deliberate difference from every seed and example."""
