"""Shared fixtures: the project root, the reference material in ../shared, cached plans."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from tools.offline import Plan, load_project, preview_stack

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT.parent / "shared" / "reference"
CRDS = REFERENCE / "crds"
SEED_MANIFESTS = REFERENCE / "seed-manifests"
STACKS = load_project(ROOT).stacks()


@functools.cache
def plan_of(stack: str) -> Plan:
    """The offline plan of ``stack`` (computed once per test session)."""
    return preview_stack(ROOT, stack)


@pytest.fixture(scope="session")
def reference() -> Path:
    if not REFERENCE.is_dir():
        pytest.fail(f"reference material missing: {REFERENCE} (clone beside ../shared)")
    return REFERENCE


def resource(plan: Plan, type_: str, name: str):
    """The one resource of ``type_`` named ``name``."""
    found = [r for r in plan.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, f"{type_} {name}: found {len(found)} in {[r.name for r in plan.of_type(type_)]}"
    return found[0]
