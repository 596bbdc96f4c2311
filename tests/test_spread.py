"""``spread.zone_spread``: every Deployment of two or more replicas on the CPU pool prefers different zones, with a
selector that selects its own pods (one that selects nothing spreads nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.autoscaling import METRICS_ADAPTER
from tpu_serving.controllers import JOBSET, LWS, Controller
from tpu_serving.spread import ZONE_LABEL, zone_spread

STACKS = [
    "saxml-175b-v5e32x2",
    "vllm-llama33-70b-v5e16",
    "vllm-llama33-70b-disagg-v6e8x2",
    "vllm-llama33-70b-existing",
]


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    match = selector.get("matchLabels") or {}
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


def test_zone_spread_prefers_zones_and_never_blocks():
    assert zone_spread({"app": "x"}) == {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"app": "x"}},
    }


@pytest.mark.parametrize("stack", STACKS)
def test_zone_spread_of_every_replicated_deployment_selects_its_own_pods(stack: str):
    deployments = [r.inputs for r in plan_of(stack).of_type("kubernetes:apps/v1:Deployment")]
    replicated = [d for d in deployments if d["spec"].get("replicas", 1) >= 2]
    assert replicated, f"{stack}: no Deployment of two replicas"
    for d in replicated:
        pod_labels = d["spec"]["template"]["metadata"]["labels"]
        (zones,) = [
            c for c in d["spec"]["template"]["spec"]["topologySpreadConstraints"] if c["topologyKey"] == ZONE_LABEL
        ]
        assert zones["whenUnsatisfiable"] == "ScheduleAnyway"
        assert zones["labelSelector"] == d["spec"]["selector"], d["metadata"]["name"]
        assert _selects(zones["labelSelector"], pod_labels), d["metadata"]["name"]


@pytest.mark.parametrize("controller", [LWS, JOBSET, METRICS_ADAPTER], ids=["lws", "jobset", "metrics-adapter"])
def test_zone_spread_of_the_installed_managers_selects_their_own_pods(controller: Controller):
    a = controller.availability
    assert a is not None
    labels = dict(a.selector)  # the release manifest's pod template carries its selector's labels
    release = {
        "kind": "Deployment",
        "metadata": {"name": a.deployment},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "manager"}]}},
        },
    }
    pod = controller.installed(release, controller.default_version)["spec"]["template"]["spec"]
    (zones,) = [c for c in pod["topologySpreadConstraints"] if c["topologyKey"] == ZONE_LABEL]
    assert zones == zone_spread(labels)
    assert _selects(zones["labelSelector"], release["spec"]["template"]["metadata"]["labels"])


def _leader_spreads(stack: str) -> list[dict[str, Any]]:
    """The topology spread constraints of each LeaderWorkerSet's leader pod template in ``stack``."""
    found = []
    for r in plan_of(stack).resources:
        if r.type.endswith(":LeaderWorkerSet"):
            template = r.inputs["spec"]["leaderWorkerTemplate"]
            pod = template.get("leaderTemplate") or template["workerTemplate"]
            found += pod["spec"].get("topologySpreadConstraints") or []
    return found


def test_group_zone_spread_keeps_the_production_examples_groups_apart_required():
    """GKE and SRE reviews round 42 (M1, B1): the groups selected only the slice's shape, so a group pushed off its
    slice could restart on the free slice in the other group's zone and stay there."""
    (spread,) = _leader_spreads("vllm-llama33-70b-v6e8")
    assert spread == {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "DoNotSchedule",
        "minDomains": 2,
        "labelSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}},
    }
    (lws,) = [r for r in plan_of("vllm-llama33-70b-v6e8").resources if r.type.endswith(":LeaderWorkerSet")]
    leader = lws.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]
    assert leader["role"] == "leader"  # the selector's own label is on the pod the constraint sits on


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16", "llama31-405b-v6e16"])
def test_group_zone_spread_is_left_out_where_the_serving_slices_are_in_one_zone(stack: str):
    assert _leader_spreads(stack) == []


def test_group_zone_spread_preferred_is_the_zone_outage_break_glass():
    """SRE review round 44, M2: with the rule required, a zone outage pins the stack to the surviving zone's groups,
    and neither a recreated group nor the HPA's next one may take that zone's free slices; ``zoneSpread: preferred``
    only scores the zones (ScheduleAnyway, no minDomains, which needs DoNotSchedule)."""
    plan = plan_edited("vllm-llama33-70b-v6e8", serving=lambda s: s.update(zoneSpread="preferred"))
    (lws,) = [r for r in plan.resources if r.type.endswith(":LeaderWorkerSet")]
    (spread,) = lws.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["topologySpreadConstraints"]
    assert spread == {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}},
    }
