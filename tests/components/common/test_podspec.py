"""Shared pod-spec builders (tpu_serving.common.podspec) as the TPU serving pods use them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tests.conftest import plan_of
from tpu_serving_tools.preview.offline import kubernetes_objects


def _lost_node_tolerations(spec: dict) -> dict[str, int]:
    return {t["key"]: t.get("tolerationSeconds") for t in spec["tolerations"] if t.get("effect") == "NoExecute"}


@pytest.mark.parametrize("stack", ["llama31-405b-v6e16", "vllm-llama33-70b-v5e16"])
def test_podspec_node_lost_tolerations_on_every_tpu_serving_pod(stack):
    # Without them the API server adds both for 300 s (DefaultTolerationSeconds): a dead TPU VM's group kept a
    # Ready leader for five minutes.
    (lws,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "LeaderWorkerSet"]
    template = lws["spec"]["leaderWorkerTemplate"]
    for pod in (template["leaderTemplate"], template["workerTemplate"]):
        assert _lost_node_tolerations(pod["spec"]) == {
            "node.kubernetes.io/not-ready": 60,
            "node.kubernetes.io/unreachable": 60,
        }


def test_podspec_node_lost_seconds_is_one_bounded_setting():
    from tpu_serving import ProbeSettings
    from tpu_serving.backends.vllm.settings import VllmProbesConfig
    from tpu_serving.common.podspec import node_lost_tolerations

    assert [t.toleration_seconds for t in node_lost_tolerations(ProbeSettings(node_lost_seconds=30))] == [30, 30]
    assert VllmProbesConfig(nodeLostSeconds=120).node_lost_seconds == 120
    for bad in (9, 3601):
        with pytest.raises(ValidationError):
            VllmProbesConfig(nodeLostSeconds=bad)


def test_pathways_builder_probe_maths():
    from tpu_serving import ProbeSettings

    p = ProbeSettings(max_startup_seconds=3601, startup_period_seconds=5)
    assert p.startup_failure_threshold == 721  # rounds up: never tolerates less than asked
    assert p.imposed_seconds_to_ready == 15
