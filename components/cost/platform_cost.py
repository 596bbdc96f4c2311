"""The platform stack's cost estimate, shown once, and a model stack's share of it.

A platform stack prices what it runs with :func:`tpu_serving.cost.estimate.estimate`, as a stack with its own cluster does: its
CPU pool at its autoscaling minimum in each zone, those nodes' boot disks, and the GKE cluster management fee; it has no
TPU slice and no bucket. Its ``platform`` output (:class:`~tpu_serving.platform.platform_outputs.PlatformCost`) carries the sums
and the shares its stack file gives the model stacks (``sharedPlatform.costShares``). A model stack counts neither the
fee nor the platform's CPU pool as its own (they are on an existing cluster, its owner's:
:func:`tpu_serving.derived.cost_estimate`); its ``cost`` output adds ``platformShare``, its fraction of the platform's
sums and the rule that gave it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pulumi

from ..catalog.prices import HOURS_PER_MONTH
from ..platform.platform_outputs import PlatformCost, PlatformOutputs
from . import estimate as cost

if TYPE_CHECKING:
    from ..platform.cluster import TpuCluster
    from ..platform.existing import ExistingCluster
    from ..platform.platform_cluster import PlatformCluster

SHARES_KEY = "sharedPlatform.costShares"
"""The platform stack file's key that shares its cost among the model stacks."""


def platform_estimate(machine_type: str, each: int, disk_size_gb: int, zones: Sequence[str]) -> cost.CostEstimate:
    """The platform's own cost: its CPU pool at its minimum (``each`` nodes in each of ``zones``), their boot disks and
    the cluster management fee."""
    return cost.estimate(
        slices=[], nodes=cost.pool_minimum("cpu pool", machine_type, each, disk_size_gb, zones), buckets=[]
    )


def platform_cost(estimate: cost.CostEstimate, shares: Mapping[str, float]) -> PlatformCost:
    """The ``cost`` field of the ``platform`` output: the estimate's sums and unpriced items, and the shares."""
    return PlatformCost(
        per_hour=round(estimate.per_hour(), 4),
        per_month=round(estimate.per_month(), 2),
        unpriced=[x.what for x in estimate.unpriced],
        shares=dict(shares),
    )


def share_rule(platform: PlatformOutputs, stack: str) -> str:
    """How ``stack``'s share of the platform's cost was set, in words."""
    fraction = platform.cost.shares.get(stack)
    if fraction is None:
        return (
            f"none: the platform stack {platform.stack}'s {SHARES_KEY} does not name {stack} "
            f"(it names {', '.join(sorted(platform.cost.shares)) or 'no stack'})"
        )
    return f"{fraction:g} of the platform's cost: {SHARES_KEY}.{stack} in the platform stack {platform.stack}"


def share_output(platform: PlatformOutputs, stack: str, own_per_hour: float) -> dict[str, object]:
    """The ``platformShare`` of a model stack's ``cost`` output: its fraction of the platform's sums, the rule that set
    it, the platform's sums and unpriced items, and its own cost with the share added."""
    fraction = platform.cost.shares.get(stack, 0.0)
    share = platform.cost.per_hour * fraction
    return {
        "rule": share_rule(platform, stack),
        "fraction": fraction,
        "perHour": round(share, 2),
        "perMonth": round(share * HOURS_PER_MONTH, 2),
        "platformPerHour": round(platform.cost.per_hour, 2),
        "platformPerMonth": round(platform.cost.per_month, 2),
        "platformUnpriced": list(platform.cost.unpriced),
        "withShare": {
            "perHour": round(own_per_hour + share, 2),
            "perMonth": round((own_per_hour + share) * HOURS_PER_MONTH, 2),
        },
    }


def share_of(
    cluster: TpuCluster | ExistingCluster | PlatformCluster, estimate: cost.CostEstimate
) -> dict[str, pulumi.Output[dict[str, object]]]:
    """A model stack's ``platformShare`` (on a platform's cluster, a
    :class:`~tpu_serving.platform.platform_cluster.PlatformCluster`): its share of the platform's cost as read through the
    StackReference, for this stack's name; nothing for a stack with a cluster of its own or an existing one."""
    from ..platform.platform_cluster import PlatformCluster as Platform

    if not isinstance(cluster, Platform):
        return {}
    stack, own = pulumi.get_stack(), estimate.per_hour()
    return {"platformShare": cluster.platform.apply(lambda p: share_output(p, stack, own))}
