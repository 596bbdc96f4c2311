"""Probes that run a command: Kubernetes gives an exec probe 1 s unless ``timeoutSeconds`` says otherwise
(core/v1 Probe.timeoutSeconds, "Defaults to 1 second"), too short for a command-line tool that starts an
interpreter (`ray health-check` took up to about 1 s against an idle Ray head). Every exec probe of every stack
sets a timeout of a few seconds, at most its period."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving_tools.preview.offline import kubernetes_objects

PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def _containers(obj: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list):
            found += [c for c in obj["containers"] if isinstance(c, dict)]
        for v in obj.values():
            found += _containers(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _containers(v)
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_every_exec_probe_has_time_to_run(stack: str):
    probes = [
        (c["name"], kind, c[kind])
        for o in kubernetes_objects(plan_of(stack))
        for c in _containers(o)
        for kind in PROBES
        if isinstance(c.get(kind), dict) and "exec" in c[kind]
    ]
    short = [(n, k, p.get("timeoutSeconds", 1)) for n, k, p in probes if p.get("timeoutSeconds", 1) < 5]
    assert not short, f"exec probes with too short a timeout: {short}"
    overlapping = [(n, k) for n, k, p in probes if p["timeoutSeconds"] > p.get("periodSeconds", 10)]
    assert not overlapping, overlapping


def _multi_host_groups(stack: str) -> bool:
    """Whether a LeaderWorkerSet of ``stack`` spans more than one host (a group with Ray workers)."""
    return any(
        o.get("kind") == "LeaderWorkerSet" and o["spec"]["leaderWorkerTemplate"].get("size", 1) > 1
        for o in kubernetes_objects(plan_of(stack))
    )


def test_the_multi_host_vllm_stacks_have_exec_probes():
    """The rule above is not vacuous: the vLLM workers' Ray check is an exec probe. A single-host vLLM stack (one
    of a user's own, docs/add-your-own-model.md) has no Ray workers and so no such probe."""
    stacks = [s for s in STACKS if s.startswith("vllm-") and _multi_host_groups(s)]
    assert stacks
    for stack in stacks:
        assert any(
            "exec" in c.get("readinessProbe", {}) for o in kubernetes_objects(plan_of(stack)) for c in _containers(o)
        ), stack
