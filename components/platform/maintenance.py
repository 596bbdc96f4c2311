"""GKE maintenance: when GKE may upgrade the cluster and its TPU slices, and the exclusions that hold
upgrades back (a cluster setting, :attr:`tpu_serving.platform.cluster.TpuClusterArgs.maintenance`)."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pulumi_gcp import container

from ..common.settings import described
from ..common.validation import Choice


class ExclusionScope(Choice):
    """What a maintenance exclusion holds back."""

    NO_UPGRADES = "NO_UPGRADES"
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"


# GKE's rules for a maintenance policy (https://cloud.google.com/kubernetes-engine/docs/how-to/maintenance-windows-and-exclusions,
# "Considerations when configuring a maintenance window": "You must allow at least 48 hours of maintenance
# availability in a 32-day rolling window. Only contiguous availability windows of at least four hours are
# considered"; https://cloud.google.com/kubernetes-engine/docs/concepts/maintenance-windows-and-exclusions: a
# "No upgrades" exclusion lasts at most 30 days). The API keys exclusions by name.
MIN_AVAILABILITY = timedelta(hours=48)
ROLLING_DAYS = 32
MIN_WINDOW = timedelta(hours=4)
NO_UPGRADES_LONGEST = timedelta(days=30)
DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
"""RFC 5545 weekdays, Monday first."""


def instant(value: str | None) -> datetime | None:
    """An RFC 3339 UTC instant such as ``2026-01-03T02:00:00Z``, or None when it is not one."""
    try:
        return datetime.strptime(value or "", "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None


def instant_problem(value: str | None) -> str:
    """Why ``value`` is not an RFC 3339 instant in UTC such as ``2026-01-03T02:00:00Z`` (None: unset), or ``""``:
    the maintenance policy's times are RFC 3339 ("startTime ... in RFC3339 format", GKE API
    ``projects.locations.clusters`` ``MaintenancePolicy.window.recurringWindow.window`` and
    ``maintenanceExclusions``), and the rules here read them in UTC."""
    if value is None or instant(value) is not None:
        return ""
    return "must be an RFC 3339 instant in UTC such as 2026-01-03T02:00:00Z"


def _pair(part: str) -> tuple[str, str]:
    key, _, value = part.partition("=")
    return key, value


def recurrence_problem(rule: str) -> str:
    """Why ``rule`` is not an RRULE of the forms GKE documents (``FREQ=DAILY``, ``FREQ=WEEKLY;BYDAY=SA,SU``), or ``""``."""
    parts = dict(_pair(p) for p in rule.split(";"))
    if "FREQ" not in parts:
        return "not an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=SA,SU or FREQ=DAILY"
    if set(parts) - {"FREQ", "BYDAY"}:
        return f"only FREQ and BYDAY are read here (e.g. FREQ=WEEKLY;BYDAY=SA,SU), got {', '.join(sorted(set(parts) - {'FREQ', 'BYDAY'}))}"
    if parts.get("FREQ") not in ("DAILY", "WEEKLY"):
        return "FREQ must be DAILY or WEEKLY (e.g. FREQ=WEEKLY;BYDAY=SA,SU)"
    days = parts.get("BYDAY", "").split(",") if "BYDAY" in parts else []
    if parts["FREQ"] == "DAILY" and days:
        return "BYDAY goes with FREQ=WEEKLY"
    if parts["FREQ"] == "WEEKLY" and (not days or any(d not in DAYS for d in days) or len(set(days)) != len(days)):
        return f"FREQ=WEEKLY needs BYDAY, each of {', '.join(DAYS)} at most once"
    return ""


def worst_availability(rule: str, length: timedelta) -> timedelta:
    """The maintenance time GKE counts in the worst 32 consecutive days: the windows that start in them, each
    ``length`` long, when a window is at least four hours (shorter ones count for nothing)."""
    if length < MIN_WINDOW or recurrence_problem(rule):
        return timedelta(0)
    parts = dict(_pair(p) for p in rule.split(";"))
    if parts["FREQ"] == "DAILY":
        return ROLLING_DAYS * length
    days = {DAYS.index(d) for d in parts["BYDAY"].split(",")}
    weeks, rest = divmod(ROLLING_DAYS, 7)
    fewest_in_rest = min(sum((start + i) % 7 in days for i in range(rest)) for start in range(7))
    return (weeks * len(days) + fewest_in_rest) * length


@dataclass(frozen=True)
class MaintenanceExclusion:
    """A period in which GKE does not upgrade the cluster (or only patches it)."""

    name: str = described("Name of the exclusion, e.g. `launch-freeze`.")
    start_time: str = described("Start, RFC 3339 in UTC, e.g. `2026-12-01T00:00:00Z`.", check=instant_problem)
    end_time: str | None = described(
        "End, RFC 3339 in UTC; unset with scope NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES "
        "lasts until the minor version's end of support.",
        default=None,
        check=instant_problem,
    )
    scope: ExclusionScope = described(
        "What is held back: NO_UPGRADES (at most 30 days), NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES.",
        default="NO_MINOR_OR_NODE_UPGRADES",
    )

    def problems(self) -> list[str]:
        """It ends after it starts (library review 13, m5: a backwards range was accepted, and only the check's
        warning that nothing held upgrades hinted at it), and a "No upgrades" exclusion lasts at most 30 days."""
        start, end = instant(self.start_time), instant(self.end_time)
        if start and end and end <= start:
            return [f"end_time = {self.end_time!r}: the exclusion must end after its start_time {self.start_time}"]
        if self.scope == ExclusionScope.NO_UPGRADES and start and end and end - start > NO_UPGRADES_LONGEST:
            return [
                f"end_time = {self.end_time!r}: scope NO_UPGRADES lasts at most 30 days (GKE), "
                f"this one {(end - start).days} days from start_time {self.start_time}"
            ]
        return []


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
        check=instant_problem,
    )
    window_end: str = described(
        "End of the first recurring maintenance window, RFC 3339 in UTC (its time of day is the daily end).",
        default="2026-01-03T08:00:00Z",
        check=instant_problem,
    )
    recurrence: str = described(
        "RFC 5545 RRULE of the window, e.g. `FREQ=WEEKLY;BYDAY=SA,SU` or `FREQ=DAILY`.",
        default="FREQ=WEEKLY;BYDAY=SA,SU",
        check=recurrence_problem,
    )
    exclusions: Sequence[MaintenanceExclusion] = described(
        "Maintenance exclusions, e.g. a freeze around a launch.", default=()
    )

    def problems(self) -> list[str]:
        """The window ends after it starts; it allows GKE's 48 hours in any 32 days, in windows of at least four
        hours; the recurrence is one GKE reads; each exclusion has its own name."""
        found = []
        start, end = instant(self.window_start), instant(self.window_end)
        if start and end and end <= start:
            found.append(f"window_end = {self.window_end!r}: must be after window_start {self.window_start}")
        elif start and end:
            have = worst_availability(self.recurrence, end - start)
            if have < MIN_AVAILABILITY:
                hours = (end - start).total_seconds() / 3600
                found.append(
                    f"window_end = {self.window_end!r}: windows of {hours:g} hours ({self.recurrence}) give "
                    f"{have.total_seconds() / 3600:g} hours of maintenance in the worst {ROLLING_DAYS} days; GKE needs "
                    f"at least 48, counting only windows of four hours or more: lengthen the window or add days"
                )
        names = [e.name for e in self.exclusions]
        found += [
            f"exclusions: name {n!r} is used twice (GKE keys exclusions by name)"
            for n in sorted(set(names))
            if names.count(n) > 1
        ]
        return found


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
