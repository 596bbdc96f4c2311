"""The serving groups' pod templates (:data:`tpu_serving.platform.lws.NOT_SAFE_TO_EVICT`): every leader and worker template
of every shipped stack's LeaderWorkerSet, and of each DisaggregatedSet role, tells the cluster autoscaler not to
evict its pods, so that it never moves a standing group off its slice to free a node (GKE review round 57, m5)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.conftest import SHIPPED, plan_of
from tpu_serving.platform import lws

SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"


def templates(stack: str) -> Iterator[tuple[str, dict]]:
    """``(where, template)`` of every serving pod template in the stack's plan."""
    for r in plan_of(stack).resources:
        kind = r.type.rsplit(":", 1)[-1]
        spec = r.inputs.get("spec") or {}
        sets = [spec] if kind == "LeaderWorkerSet" else [role.get("spec") or {} for role in spec.get("roles") or []]
        if kind not in ("LeaderWorkerSet", "DisaggregatedSet"):
            continue
        for i, s in enumerate(sets):
            for which in ("leaderTemplate", "workerTemplate"):
                template = (s.get("leaderWorkerTemplate") or {}).get(which)
                if template is not None:
                    yield f"{r.name} [{i}] {which}", template


def test_every_shipped_serving_template_is_counted() -> None:
    """A selector that selects nothing fails: the shipped stacks hold LeaderWorkerSet and DisaggregatedSet templates."""
    found = [w for stack in SHIPPED for w, _ in templates(stack)]
    assert sum("-ds " in w for w in found) == 2 and len(found) == 15, found  # single-host sets: a worker template only


@pytest.mark.parametrize("stack", SHIPPED)
def test_serving_pod_templates_are_not_safe_to_evict(stack: str) -> None:
    for where, template in templates(stack):
        annotations = (template.get("metadata") or {}).get("annotations") or {}
        assert annotations.get(SAFE_TO_EVICT) == "false", (stack, where)
    assert lws.NOT_SAFE_TO_EVICT == {SAFE_TO_EVICT: "false"}
