"""GKE maintenance: when GKE may upgrade the cluster and its TPU slices, and the exclusions that hold
upgrades back (a cluster setting, :attr:`tpu_serving.cluster.TpuClusterArgs.maintenance`)."""

from collections.abc import Sequence
from dataclasses import dataclass

from pulumi_gcp import container

from .settings import described
from .validation import Choice


class ExclusionScope(Choice):
    """What a maintenance exclusion holds back."""

    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


@dataclass(frozen=True)
class MaintenanceExclusion:
    """A period in which GKE does not upgrade the cluster (or only patches it)."""

    name: str = described("Name of the exclusion, e.g. `launch-freeze`.")
    start_time: str = described("Start, RFC 3339 in UTC, e.g. `2026-12-01T00:00:00Z`.")
    end_time: str | None = described(
        "End, RFC 3339 in UTC; unset with scope NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES "
        "lasts until the minor version's end of support.",
        default=None,
    )
    scope: ExclusionScope = described(
        "What is held back: NO_UPGRADES (at most 30 days), NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES.",
        default="NO_MINOR_OR_NODE_UPGRADES",
    )


@dataclass(frozen=True)
class MaintenanceSettings:
    """When GKE may upgrade the control plane and the nodes (TPU slices included).

    An upgrade recreates the VMs of a multi-host TPU slice together, so a serving slice is
    down for the whole upgrade. The default confines automatic upgrades to weekend nights
    (UTC): Saturdays and Sundays 02:00-08:00, 12 hours a week, above GKE's minimum of 48
    hours of availability in 32 days (https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions).
    """

    window_start: str = described(
        "Start of the first recurring maintenance window, RFC 3339 in UTC (its time of day is the daily start).",
        default="2026-01-03T02:00:00Z",
    )
    window_end: str = described(
        "End of the first recurring maintenance window, RFC 3339 in UTC (its time of day is the daily end).",
        default="2026-01-03T08:00:00Z",
    )
    recurrence: str = described(
        "RFC 5545 RRULE of the window, e.g. `FREQ=WEEKLY;BYDAY=SA,SU`.", default="FREQ=WEEKLY;BYDAY=SA,SU"
    )
    exclusions: Sequence[MaintenanceExclusion] = described(
        "Maintenance exclusions, e.g. a freeze around a launch.", default=()
    )


def maintenance_policy(m: MaintenanceSettings) -> container.ClusterMaintenancePolicyArgsDict:
    """The cluster's ``maintenance_policy``: the recurring window and the exclusions."""
    policy: container.ClusterMaintenancePolicyArgsDict = {
        "recurring_window": {"start_time": m.window_start, "end_time": m.window_end, "recurrence": m.recurrence},
    }
    if m.exclusions:
        policy["maintenance_exclusions"] = [_maintenance_exclusion(e) for e in m.exclusions]
    return policy


def _maintenance_exclusion(e: MaintenanceExclusion) -> container.ClusterMaintenancePolicyMaintenanceExclusionArgsDict:
    """One maintenance exclusion; one without an end lasts until the end of support of the version."""
    exclusion: container.ClusterMaintenancePolicyMaintenanceExclusionArgsDict = {
        "exclusion_name": e.name,
        "start_time": e.start_time,
    }
    options: container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgsDict = {"scope": e.scope}
    if e.end_time:
        exclusion["end_time"] = e.end_time
    else:
        options["end_time_behavior"] = "UNTIL_END_OF_SUPPORT"
    exclusion["exclusion_options"] = options
    return exclusion
