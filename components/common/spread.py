"""Zone spread of the stack's replicated Deployments on the CPU pool: one constraint, built once.

Every Deployment the stack runs with two or more replicas on the CPU pool (the LWS, JobSet and metrics adapter
managers as installed, :class:`tpu_serving.platform.controllers.Availability`; the endpoint picker, :mod:`tpu_serving.traffic.epp`;
sax-http) asks the scheduler to put its replicas in different zones, so a zone outage leaves one serving. The pool
spans several zones of the region (:func:`tpu_serving.common.gcp_zones.pool_zones`).

``whenUnsatisfiable: ScheduleAnyway``, never ``DoNotSchedule``: "ScheduleAnyway tells the scheduler to schedule the
pod in any location, but giving higher precedence to topologies that would help reduce the skew" (Kubernetes API
reference, Pod v1, ``topologySpreadConstraints.whenUnsatisfiable``,
https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#scheduling; "Pod Topology Spread
Constraints", https://kubernetes.io/docs/concepts/scheduling-eviction/topology-spread-constraints/). A pool left in
one zone, or a zone that is down, then never keeps a replica Pending; the node spread the Deployments already have
(required, by ``kubernetes.io/hostname``) still holds. ``topology.kubernetes.io/zone`` is the well-known label the
kubelet sets to the node's zone (https://kubernetes.io/docs/reference/labels-annotations-taints/#topologykubernetesiozone).
"""

from collections.abc import Mapping
from typing import Any

import pulumi_kubernetes as k8s

from .validation import Choice

ZONE_LABEL = "topology.kubernetes.io/zone"
"""The node label of its zone."""


def zone_spread(match_labels: Mapping[str, str]) -> dict[str, Any]:
    """The constraint that spreads the pods ``match_labels`` selects (the Deployment's own pod selector) over zones,
    preferred, never required."""
    return {
        "maxSkew": 1,
        "topologyKey": ZONE_LABEL,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": dict(match_labels)},
    }


def zone_spread_args(match_labels: Mapping[str, str]) -> k8s.core.v1.TopologySpreadConstraintArgs:
    """:func:`zone_spread` as the Kubernetes provider's typed pod spec takes it."""
    c = zone_spread(match_labels)
    return k8s.core.v1.TopologySpreadConstraintArgs(
        max_skew=c["maxSkew"],
        topology_key=c["topologyKey"],
        when_unsatisfiable=c["whenUnsatisfiable"],
        label_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=c["labelSelector"]["matchLabels"]),
    )


class ZoneSpread(Choice):
    """How the serving groups' leaders keep apart over the zones of their slices (:func:`group_zone_spread`)."""

    REQUIRED = "required"
    """The standing groups no more than one apart between zones, each waiting for a slice in its own zone; the groups
    above them take any zone's free slice, the emptier zone first."""
    PREFERRED = "preferred"
    """Every group takes any zone's free slice, the emptier zone first."""


def _constraint(
    match_labels: Mapping[str, str], when: str, indices: tuple[str, list[str]] | None = None, zones: int | None = None
) -> k8s.core.v1.TopologySpreadConstraintArgs:
    return k8s.core.v1.TopologySpreadConstraintArgs(
        max_skew=1,
        topology_key=ZONE_LABEL,
        when_unsatisfiable=when,
        min_domains=zones,
        label_selector=k8s.meta.v1.LabelSelectorArgs(
            match_labels=dict(match_labels),
            match_expressions=[
                k8s.meta.v1.LabelSelectorRequirementArgs(key=indices[0], operator="In", values=indices[1])
            ]
            if indices is not None
            else None,
        ),
    )


def standing_groups(replicas: int, zones: int) -> int:
    """The groups :func:`group_zone_spread` holds apart: the ones that always run (``replicas``, the HPA's minimum
    when it owns the count), and at least one per zone."""
    return max(replicas, zones)


def group_zone_spread(
    match_labels: Mapping[str, str],
    zones: int,
    standing: tuple[str, int],
    spread: ZoneSpread = ZoneSpread.REQUIRED,
) -> list[k8s.core.v1.TopologySpreadConstraintArgs]:
    """The constraints that keep serving groups apart over ``zones`` zones (the pods ``match_labels`` selects: one
    per group, its leader).

    ``required``: the standing groups (``standing``: the label of a leader's group index and how many,
    :func:`standing_groups`; the LWS pod webhook labels each leader ``leaderworkerset.sigs.k8s.io/group-index``,
    ``0`` up: lws v0.9.0 pkg/webhooks/pod_webhook.go l.103-108) differ by at most one between zones, and while
    fewer than ``zones`` zones have a node the pods could take, the emptiest counts as holding none ("When the
    number of eligible domains with matching topology keys is less than minDomains, Pod Topology Spread treats
    'global minimum' as 0 ... scheduler won't schedule more than maxSkew Pods to those domains": k8s.io/api v0.36.3
    core/v1/types.go l.4734-4743,
    ``TopologySpreadConstraint.MinDomains``, which needs ``DoNotSchedule``). A standing group that a repair, host
    maintenance or an upgrade pushes off its slice must not land on a free slice in the other group's zone: it would
    stay there, and the next zonal event would take both (GKE and SRE reviews round 42). It waits Pending for a slice
    in its own zone, and the cluster autoscaler, which simulates scheduling on a new node of each pool, adds one there.

    The groups above them (the HPA's, a surge rollout's spare) are not selected, so the rule does not bind them: the
    scheduler adds 1 to a zone's count only for a pod the selector matches ("'existing matching num' + 'if
    self-match (1 or 0)' - 'global minimum' <= 'maxSkew'": k8s.io/kubernetes v1.36.3
    pkg/scheduler/framework/plugins/podtopologyspread/filtering.go l.337-356), and a standing group's leader that is
    being deleted, as on a VM a zone outage cut off, is not counted (common.go l.150-153). So in a zone outage a
    group the HPA adds (below its maximum: docs/operate.md) takes the surviving zone's free slice with no template
    change (SRE review round 45, M3), and a second, preferred rule over every leader (``ScheduleAnyway``: "giving higher precedence to topologies
    that would help reduce the skew", the Pod API reference) sends such groups to the emptier zone while both are up.
    The API refuses two constraints only on the same key with the same ``whenUnsatisfiable``
    (k8s.io/kubernetes v1.36.3 pkg/apis/core/validation/validation.go l.8943-8951).

    ``preferred`` keeps only that second rule, for every group. Changing it rolls every group."""
    preferred = _constraint(match_labels, "ScheduleAnyway")
    if spread == ZoneSpread.PREFERRED:
        return [preferred]
    label, count = standing
    return [_constraint(match_labels, "DoNotSchedule", (label, [str(i) for i in range(count)]), zones), preferred]
