"""cluster_notices: the ticket on GKE's end-of-support and security-bulletin notifications, present exactly on the
stacks whose cluster holds node upgrades back (read off the plan's Cluster, not off the code that decides)."""

from __future__ import annotations

import pytest

from tests.conftest import STACKS, plan_of
from tpu_serving.operations.alerts.cluster_notices import notices_filter, policy_args
from tpu_serving.operations.observability_settings import ObservabilitySettings

POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"
CLUSTER = "gcp:container/cluster:Cluster"
HOLDING = {"NO_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES"}


def test_notices_filter_matches_the_clusters_end_of_support_and_bulletins_only():
    f = notices_filter("vllm70b")
    assert f.startswith('resource.type=("gke_cluster" OR "gke_nodepool") AND resource.labels.cluster_name="vllm70b"')
    assert 'log_id("container.googleapis.com/notifications")' in f
    assert 'jsonPayload.eventType="END_OF_SUPPORT"' in f
    assert "SecurityBulletinEvent" in f and "UpgradeAvailableEvent" not in f


def test_cluster_notices_policy_is_a_rate_limited_ticket():
    settings = ObservabilitySettings(ticket_channels=("projects/p/notificationChannels/1",))
    args = policy_args("p", "c", settings)
    assert args.severity == "WARNING"
    assert args.notification_channels == ["projects/p/notificationChannels/1"]
    assert args.alert_strategy.notification_rate_limit.period == "86400s"


def _holds_upgrades(plan) -> bool | None:
    """Whether the plan's created cluster holds node upgrades back (None: it creates no cluster)."""
    clusters = plan.of_type(CLUSTER)
    if not clusters:
        return None
    (cluster,) = clusters
    exclusions = (cluster.inputs.get("maintenancePolicy") or {}).get("maintenanceExclusions") or []
    return any((e.get("exclusionOptions") or {}).get("scope") in HOLDING for e in exclusions)


@pytest.mark.parametrize("stack", STACKS)
def test_cluster_notices_policy_where_node_upgrades_are_held(stack):
    plan = plan_of(stack)
    held = _holds_upgrades(plan)
    policies = [p for p in plan.of_type(POLICY) if p.name.endswith("-observability-cluster-notices")]
    if held is None:  # an existing cluster: held only when the stack says so (cluster.existing.nodeUpgradesHeld)
        return
    assert len(policies) == int(held), (stack, held)
    if policies:
        condition = policies[0].inputs["conditions"][0]["conditionMatchedLog"]
        cluster = plan.of_type(CLUSTER)[0].inputs["name"]
        assert f'resource.labels.cluster_name="{cluster}"' in condition["filter"]


def test_cluster_notices_found_in_some_stack():
    assert sum(1 for s in STACKS if _holds_upgrades(plan_of(s))) >= 3


def test_cluster_notices_policy_of_a_platform_is_the_platforms_once_for_its_cluster():
    """GKE review M1: the model stacks' pools are on their platform's cluster, whose output says node upgrades are held
    (``nodeUpgradesHeld``); the platform opens the ticket once for the cluster, and no model stack repeats it."""
    platform = plan_of("platform-us-east5")
    assert platform.outputs["platform"]["nodeUpgradesHeld"] is True
    (policy,) = [p for p in platform.of_type(POLICY) if p.name.endswith("-alerts-cluster-notices")]
    condition = policy.inputs["conditions"][0]["conditionMatchedLog"]
    assert 'resource.labels.cluster_name="tpu-platform"' in condition["filter"]
    for model in ("vllm-llama31-8b-platform", "vllm-llama33-70b-platform"):
        assert not [p for p in plan_of(model).of_type(POLICY) if p.name.endswith("cluster-notices")], model
