"""A restart of any container of a LeaderWorkerSet group's pods recreates the group: what the pods and the preview
say of it."""

from __future__ import annotations

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack import rollout_summary

DISAGG_STACK = "vllm-llama33-70b-disagg-v6e8x2"


@pytest.mark.parametrize("stack", ["llama31-405b-v6e16", "vllm-llama33-70b-v5e16", DISAGG_STACK])
def test_rollout_drain_line_says_a_sidecar_restart_reloads_the_group(stack):
    (drain,) = [line for line in rollout_summary(plan_of(stack).outputs) if line.startswith("Drain: ")]
    assert drain.endswith(
        "a restart of any container of a group's pods, a sidecar's too (GCS FUSE, a router's, an HTTP front end), "
        "recreates the whole group, which reloads"
    )


def test_vllm_pods_routing_sidecar_readiness_on_its_own_health_route():
    (ds,) = [o for o in kubernetes_objects(plan_of(DISAGG_STACK)) if o["kind"] == "DisaggregatedSet"]
    sidecars = [
        c
        for role in ds["spec"]["roles"]
        # a single-host role's one pod comes from workerTemplate (no leaderTemplate: vllm.pods)
        for t in [role["spec"]["leaderWorkerTemplate"]]
        for c in (t.get("leaderTemplate") or t["workerTemplate"])["spec"].get("initContainers", [])
        if c["name"] == "routing-sidecar"
    ]
    assert len(sidecars) == 1  # decode's leaders only
    (sidecar,) = sidecars
    assert sidecar["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000, "scheme": "HTTP"}
    # A liveness restart would recreate the decode group: none.
    assert "livenessProbe" not in sidecar and "startupProbe" not in sidecar
