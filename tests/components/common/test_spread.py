"""``spread.zone_spread``: every Deployment of two or more replicas on the CPU pool prefers different zones, with a
selector that selects its own pods (one that selects nothing spreads nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import plan_edited
from tpu_serving.common.spread import ZONE_LABEL, standing_groups, zone_spread
from tpu_serving.operations.autoscaling import METRICS_ADAPTER
from tpu_serving.platform.controllers import JOBSET, LWS, Controller
from tpu_serving_tools.verify.checks import selects

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


LEADERS = {"leaderworkerset.sigs.k8s.io/name": "vllm", "role": "leader"}
PREFERRED = {
    "maxSkew": 1,
    "topologyKey": ZONE_LABEL,
    "whenUnsatisfiable": "ScheduleAnyway",
    "labelSelector": {"matchLabels": LEADERS},
}


def test_group_zone_spread_keeps_the_production_examples_standing_groups_apart_required():
    """GKE and SRE reviews round 42 (M1, B1): the groups selected only the slice's shape, so a group pushed off its
    slice could restart on the free slice in the other group's zone and stay there. SRE review round 45 (M3): a rule
    over every leader kept the HPA's next group off the surviving zone's free slice in a zone outage; it binds the two
    standing groups (the HPA's minimum), and the rest only prefer the emptier zone."""
    required, preferred = _leader_spreads("vllm-llama33-70b-v6e8")
    assert required == {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "DoNotSchedule",
        "minDomains": 2,
        "labelSelector": {
            "matchLabels": LEADERS,
            "matchExpressions": [
                {"key": "leaderworkerset.sigs.k8s.io/group-index", "operator": "In", "values": ["0", "1"]}
            ],
        },
    }
    assert preferred == PREFERRED
    (lws,) = [r for r in plan_of("vllm-llama33-70b-v6e8").resources if r.type.endswith(":LeaderWorkerSet")]
    leader = lws.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]
    assert leader["role"] == "leader"  # the selector's own label is on the pod the constraint sits on
    webhook = {**leader, "leaderworkerset.sigs.k8s.io/name": "vllm"}  # the LWS webhook adds its name and index
    assert [
        selects(required["labelSelector"], {**webhook, "leaderworkerset.sigs.k8s.io/group-index": str(i)})
        for i in range(4)
    ] == [
        True,
        True,
        False,
        False,
    ]


@pytest.mark.parametrize(("replicas", "zones", "standing"), [(2, 2, 2), (1, 2, 2), (3, 2, 3), (4, 3, 4), (1, 3, 3)])
def test_standing_groups_are_the_minimum_and_at_least_one_per_zone(replicas: int, zones: int, standing: int):
    assert standing_groups(replicas, zones) == standing


@pytest.mark.parametrize("stack", ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16", "llama31-405b-v6e16"])
def test_group_zone_spread_is_left_out_where_the_serving_slices_are_in_one_zone(stack: str):
    assert _leader_spreads(stack) == []


def test_group_zone_spread_preferred_only_scores_the_zones():
    """SRE review round 44, M2: ``zoneSpread: preferred`` binds no group (ScheduleAnyway, no minDomains, which needs
    DoNotSchedule)."""
    plan = plan_edited("vllm-llama33-70b-v6e8", serving=lambda s: s.update(zoneSpread="preferred"))
    (lws,) = [r for r in plan.resources if r.type.endswith(":LeaderWorkerSet")]
    (spread,) = lws.inputs["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["topologySpreadConstraints"]
    assert spread == PREFERRED
