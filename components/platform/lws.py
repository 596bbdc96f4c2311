"""The LeaderWorkerSet API as the serving components use it: names, labels, and the object itself.

Facts from kubernetes-sigs/lws@v0.10.0 (api/leaderworkerset/v1 leaderworkerset_types.go and
pkg/webhooks/leaderworkerset_webhook.go).
"""

from collections.abc import Mapping
from enum import Enum

import pulumi
import pulumi_kubernetes as k8s

from ..common.naming import NODEPOOL_LABEL
from .controllers import LWS, parse_version

API_VERSION = "leaderworkerset.x-k8s.io/v1"
KIND = "LeaderWorkerSet"
NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
"""Label the controller puts on every pod of a LeaderWorkerSet (SetNameLabelKey)."""
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
"""Label of a pod's group (GroupIndexLabelKey)."""
EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/exclusive-topology"
"""Annotation: each group takes a whole domain of this topology key."""
SUBGROUP_EXCLUSIVE_TOPOLOGY = "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology"
"""Annotation: each subgroup takes a whole domain of this topology key."""
LEADER_ADDRESS = "$(LWS_LEADER_ADDRESS)"
"""LWS injects the leader's address into every container of the group (the kubelet expands it)."""

RECREATE_AFTER_START_SINCE = (0, 9, 0)
"""The first LWS release with ``restartPolicy: RecreateGroupAfterStart`` (kubernetes-sigs/lws v0.9.0
api/leaderworkerset/v1/leaderworkerset_types.go:338; absent from v0.8.0)."""


def version_problem(version: str) -> str:
    """Why ``version`` is not an LWS release such as v0.10.0 (:func:`controllers.parse_version`), or ``""``."""
    try:
        parse_version(version)
    except ValueError:
        return "is not an LWS release such as v0.10.0"
    return LWS.newer_problem(version)


def restart_policy(lws_version: str) -> str:
    """The group restart policy for an LWS release: ``RecreateGroupAfterStart`` from v0.9.0, which recreates
    the group when a pod or container restarts, as ``RecreateGroupOnPodRestart`` does, but not while a pod of
    the group is still Pending (v0.10.0 pkg/controllers/pod_controller.go ``handleRestartPolicy``: "Skipping
    group recreation because there is a pod pending"). A slice whose VMs come up one by one (a scale from
    zero, a node repair) then starts once, instead of being recreated each time an early pod restarts."""
    new = parse_version(lws_version) >= RECREATE_AFTER_START_SINCE
    return "RecreateGroupAfterStart" if new else "RecreateGroupOnPodRestart"


class Rollout(str, Enum):
    """How a LeaderWorkerSet replaces its groups when their template changes (an engine bump, a new flag)."""

    IN_PLACE = "in-place"
    """One group down at a time: it is deleted and recreated on the slice it frees; its slice's capacity is lost
    until the new group is ready."""
    SURGE = "surge"
    """One extra group first, on a spare slice; each old group is then recreated while the extra one serves, and
    the extra group goes when all are done: no capacity lost, a spare slice needed."""


ROLLOUT_DESCRIPTION = (
    "How the groups are replaced when their template changes (an engine bump, a flag): `in-place`, one group "
    "down at a time, its slices' capacity lost until it is ready again; or `surge`, one extra group first on a "
    "spare share of `slices` (one group's worth beyond the groups', scaling from zero), no capacity lost."
)
"""The ``rollout`` setting's description, for the stack file and the components alike."""


def rollout_strategy(rollout: Rollout, partition: int | None = None) -> dict[str, object]:
    """``spec.rolloutStrategy`` for ``rollout``. LWS v0.10.0 rolls groups from the highest index down, holding
    ``replicas + maxSurge`` groups while it updates, and deletes the surge group once the others are updated and
    ready (pkg/controllers/leaderworkerset_controller.go:282-380 ``rollingUpdateParameters``, :691
    ``calculateRollingUpdateReplicas``); its webhook defaults are maxUnavailable 1, maxSurge 0
    (pkg/webhooks/leaderworkerset_webhook.go:64-70), which ``in-place`` states. ``partition`` (a canary,
    :func:`canary_partition`) holds the groups below that index on the old template; None leaves it out (the
    webhook's default, 0: every group rolls)."""
    surge = rollout == Rollout.SURGE
    config: dict[str, object] = {"maxUnavailable": 0 if surge else 1, "maxSurge": 1 if surge else 0}
    if partition is not None:
        config["partition"] = partition
    return {"type": "RollingUpdate", "rollingUpdateConfiguration": config}


CANARY_DESCRIPTION = (
    "Canary rollout: how many groups, counted from the highest index as LWS rolls them, take a template change "
    "(an engine image, a flag) on the next `pulumi up`; the lower groups keep the old revision until this is "
    "removed and `pulumi up` runs again, which releases them. Rendered as the LeaderWorkerSet's "
    "`rolloutStrategy.rollingUpdateConfiguration.partition` = the groups held, an index: with autoscaling it is "
    "counted from `minReplicas`, and a group the HPA adds above it starts on the new template. At least 1, and at "
    "least one group held (below `replicas`, or `autoscaling.minReplicas`). Unset: every group rolls."
)
"""The ``canaryGroups`` setting's description, for the stack file and the components alike."""


def canary_partition(groups: int, canary: int | None) -> int | None:
    """The LeaderWorkerSet's ``partition`` for ``canary`` groups of ``groups`` (the fixed count, or the HPA's
    minimum): the groups held, those of index below it. LWS never lets the leader StatefulSet's partition fall
    below it (kubernetes-sigs/lws v0.9.0 pkg/controllers/leaderworkerset_controller.go l.285-288, v0.10.0 l.291-294:
    ``stsPartition = max(stsPartition, ...Partition)`` in ``rollingUpdateParameters``; the function is the same in
    both releases), and the StatefulSet controller updates only the pods of ordinal at or above its partition, and
    creates a pod of a lower ordinal (a recreated group) from the old revision, one at or above it (a group the HPA
    adds) from the new one (k8s.io/kubernetes v1.36.3 pkg/controller/statefulset/stateful_set_utils.go l.530-541
    ``newVersionedStatefulSetPod``). The API: "During a rolling update, all the groups from ordinal Partition to
    Replicas-1 will be updated ... helpful in incremental rollout strategies like canary deployments"; with maxSurge,
    "the bursted replicas will keep remaining until the rolling update is completely done and the partition field
    is reset to 0" (api/leaderworkerset/v1/leaderworkerset_types.go v0.9.0 l.268-280, v0.10.0 l.270-282)."""
    return None if canary is None else groups - canary


def canary_problem(canary: int, groups: int, held: str) -> str:
    """Why ``canary`` groups of ``groups`` (the fixed count, or the HPA's minimum, given by key ``held``) are no
    canary, or ``""``: it must roll at least one group and hold at least one."""
    if 1 <= canary < groups:
        return ""
    if groups < 2:
        return (
            f"a canary needs two groups at least, one to roll and one to hold, and {held} is {groups}; "
            "remove canaryGroups"
        )
    return (
        f"holds no group of the {groups} of {held}: every group would roll; valid: "
        f"{'1' if groups == 2 else f'1 to {groups - 1}'}, "
        "or remove canaryGroups"
    )


def surge_groups(rollout: Rollout) -> int:
    """Groups a rollout adds beside the ``replicas`` ones: ``maxSurge`` of :func:`rollout_strategy` (LWS v0.10.0
    holds ``replicas + maxSurge`` groups while it updates, leaderworkerset_controller.go:282-380)."""
    return 1 if rollout == Rollout.SURGE else 0


DISAGGREGATED_SURGE = 1
"""Groups a DisaggregatedSet rollout adds to each role at once, all roles together: with no rollingUpdateConfiguration
the planner's ceiling is the role's size plus one (kubernetes-sigs/lws v0.10.0 pkg/controllers/disaggregatedset/
planner.go l.52-59 ``DefaultRollingUpdateConfig``, l.84-110 and ``canScaleUp`` l.195-200, as read for
``DEFAULT_MAX_SURGE`` of tools/runtime/data/disaggregated.json; the later planner, commit 08fbf8c, keeps it:
``planningCeiling = roleSize + 1`` when maxSurge and maxUnavailable are 0). The new revision's groups of every role
come up before any old one goes."""


DISAGGREGATED_CANARY = (
    "a disaggregated serving is a DisaggregatedSet, which rolls out across its roles itself and refuses a role's "
    "partition; remove canaryGroups"
)
"""kubernetes-sigs/lws v0.10.0 api/disaggregatedset/v1/disaggregatedset_types.go l.71-92 ("Partition must not be
set. DisaggregatedSet handles rollouts across roles"), pkg/webhooks/disaggregatedset/disaggregatedset_webhook.go
l.189-190 (a partition other than 0 refused)."""


IMMUTABLE_PATHS: tuple[str, ...] = ("spec.leaderWorkerTemplate.subGroupPolicy",)
"""LeaderWorkerSet fields the LWS v0.10.0 validating webhook refuses to change on update
(``ValidateUpdate``: subGroupSize may not be added, removed or changed). A change there
replaces the object."""

HEADLESS_SERVICE = (
    "kubernetes-sigs/lws@v0.10.0 pkg/utils/controller/controller_utils.go:33-60 (CreateHeadlessServiceIfNotExists)"
)
"""The LWS controller creates a headless Service named after the LeaderWorkerSet, which gives the pods their
DNS names (``<lws>-<group>.<lws>.<namespace>``, what ``LWS_LEADER_ADDRESS`` holds), and only when no Service
of that name exists in the namespace: a Service of ours with that name keeps it from being created."""


def service_name_problem(lws_name: str, service_name: str) -> str:
    """Why a Service named ``service_name`` beside the LeaderWorkerSet ``lws_name`` breaks it, or ``""``."""
    if service_name != lws_name:
        return ""
    return (
        f"the LeaderWorkerSet {lws_name!r} needs a headless Service of that name, which its controller creates only "
        f"when none exists ({HEADLESS_SERVICE}); with ours in its place {lws_name}-0.{lws_name}.<namespace> never "
        "resolves and the workers never reach the leader: choose another name"
    )


ONE_GROUP_PER_NODE_POOL: Mapping[str, str] = {EXCLUSIVE_TOPOLOGY: NODEPOOL_LABEL}
"""Each group takes one whole node pool (one slice)."""


def group_disruption_budget(
    metadata: k8s.meta.v1.ObjectMetaArgs, pods: Mapping[str, str]
) -> k8s.policy.v1.PodDisruptionBudgetInitArgs:
    """The disruption budget of the groups whose pods carry the labels ``pods`` (a LeaderWorkerSet's, or one role of
    a DisaggregatedSet, whose child LeaderWorkerSets of every revision it covers): voluntary evictions (a node drain,
    a GKE node upgrade, the cluster autoscaler's scale-down) never take two groups down together.

    One eviction at a time, ``maxUnavailable: 1``. Each allowed eviction spends the budget at once, so the next one,
    from any group, is refused (429, "Cannot evict pod as it would violate the pod's disruption budget.") until the
    disruption controller counts every pod healthy again, which is when the disrupted group serves again. The
    evicted pod restarts its whole group (``restartPolicy``); the group's other pods leave as its controller removes
    them or once they are no longer Ready (``unhealthyPodEvictionPolicy: AlwaysAllow``: an unready pod may always be
    evicted, so a loading or broken group never blocks a drain). A slice's drain therefore waits for its group's
    engine to notice the lost pod, not for a budget.

    A group's worth of pods (``maxUnavailable: <size>``) was tried and does not hold: ``make e2e`` evicted group 0
    of ``vllm-llama33-70b-existing`` and then a pod of group 1 was allowed, both groups down. The group's
    controller had already removed some of group 0's pods (their evictions answered 404), so fewer evictions were
    spent than pods lost, and the controller had not yet recounted (the budget counts pods, not groups: KEP-5682).

    Sources (k8s.io/kubernetes v1.36.3): pkg/controller/disruption/disruption.go l.268-273 (StatefulSet among the
    controllers it scales from: a group's pods belong to the leader StatefulSet and the group's worker StatefulSet),
    l.813-830 (``desiredHealthy = expected - maxUnavailable``); pkg/registry/core/pod/storage/eviction.go
    l.239-243 (``AlwaysAllow``), l.433-436 (the refusal), l.459 (each eviction spends one unit at once)."""
    return k8s.policy.v1.PodDisruptionBudgetInitArgs(
        metadata=metadata,
        spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(pods)),
            max_unavailable=1,
            unhealthy_pod_eviction_policy="AlwaysAllow",
        ),
    )


def leader_worker_set_disruption_budget(
    name: str, namespace: str, labels: Mapping[str, str]
) -> k8s.policy.v1.PodDisruptionBudgetInitArgs:
    """:func:`group_disruption_budget` of the LeaderWorkerSet ``name``: named after it, over its pods (every pod of
    its groups carries ``leaderworkerset.sigs.k8s.io/name``)."""
    return group_disruption_budget(
        k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace, labels=dict(labels)), {NAME_LABEL: name}
    )


def leader_worker_set(
    name: str,
    metadata: k8s.meta.v1.ObjectMetaArgs,
    spec: Mapping[str, object],
    opts: pulumi.ResourceOptions,
) -> k8s.apiextensions.CustomResource:
    """The LeaderWorkerSet object, replaced (old one deleted first) when an immutable field changes."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version=API_VERSION,
        kind=KIND,
        metadata=metadata,
        spec=dict(spec),
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(replace_on_changes=list(IMMUTABLE_PATHS), delete_before_replace=True)
        ),
    )


NOT_SAFE_TO_EVICT = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
"""The annotation of every serving group's pods: the cluster autoscaler never removes a node that holds one
("Pods that have the following annotation set: cluster-autoscaler.kubernetes.io/safe-to-evict: "false"",
kubernetes/autoscaler cluster-autoscaler FAQ, "What types of pods can prevent CA from removing a node?"; GKE logs
such a node's skipped scale-down as ``no.scale.down.node.pod.not.safe.to.evict.annotation``). A group that a
repair, a host maintenance or an upgrade moved onto a from-zero pool would otherwise be a scale-down candidate
when the autoscaler finds a free slice for it on a fixed pool, and moving it reloads the model for up to an hour
(GKE review rounds 11 to 57, m5). The HPA's scale-down removes a group first; its node then holds no such pod.
Adding it changes the templates, so a stack deployed before it rolls its groups once."""


SKIP_SERVICE_AWAIT = {"pulumi.com/skipAwait": "true"}
"""The annotation of a Service in front of a LeaderWorkerSet's model servers. pulumi-kubernetes waits on a new
Service with a selector until its endpoints have settled with no not-ready address, for 10 minutes by default,
then fails the update (v4.32.0 provider/pkg/await/service.go: ``DefaultServiceTimeoutMins = 10``,
``processEndpointEvent`` sets ``endpointsPending`` on ``NotReadyAddresses``, ``checkAndLogStatus`` succeeds only
when ``!endpointsPending``; ``pulumi.com/skipAwait`` bypasses the await, provider/pkg/metadata/overrides.go). A
model server is not ready for its whole startup window (an hour by default), so a first ``pulumi up`` whose
leader pod is scheduled within the settle window fails on the Service. Readiness is the startup probes' and the
alerts' business, not the update's."""
