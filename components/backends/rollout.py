"""How a LeaderWorkerSet backend's groups are replaced, by whole slices: ``serving.rollout``.

``in-place`` (the default) takes one group down at a time: LWS deletes it and recreates it from the new
template on the slices it freed, so those slices serve nothing until the new group is ready. ``surge``
first starts one extra group from the new template on a spare share of the serving slices (one group's
worth beyond the groups' own, which scales from zero and is billed only while a rollout runs), then
recreates the old groups one at a time while it serves, and removes it at the end: no serving capacity is
lost (:func:`~tpu_serving.platform.lws.rollout_strategy` cites the LWS controller code). The plan's ``rollout``
output says which, for how many groups and for how long, so that a preview or a diff of an engine bump
shows what the update costs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi

from ..catalog import tpu_zones
from ..operations.autoscaling import DEFAULT_SCALE_DOWN_PERIOD_SECONDS, scale_down_window
from ..operations.maintenance import host_maintenance, maintenance_line
from ..platform import lws
from ..platform.lws import Rollout
from . import scaling
from .base import Stack

KEY = scaling.KEY

CONTAINER_RESTART = (
    "a restart of any container of a group's pods, a sidecar's too (GCS FUSE, a router's, an HTTP front end), "
    "recreates the whole group, which reloads"
)
"""What a container restart costs a LeaderWorkerSet group: LWS recreates the group when any container of any of its
pods, init containers and so native sidecars included, has restarted (kubernetes-sigs/lws v0.10.0
pkg/utils/pod/pod_utils.go l.28-45 ``ContainerRestarted``; pkg/controllers/pod_controller.go l.207-264 deletes the
leader and the group with it)."""


def problems(serving: scaling.Scaled, pools: int, per_group: int | None = None) -> list[str]:
    """A surge needs the serving slices to hold the groups and one more group's share: exactly ``per_group``
    slices each when the backend fixes it (vLLM: one), else an even share each."""
    if serving.rollout != Rollout.SURGE:
        return []
    most = scaling.groups(serving)
    held = "autoscaling.maxReplicas" if serving.autoscaling is not None else "replicas"
    given = f"serving.slices provide {pools} ({', '.join(serving.slices)})"
    if per_group is not None:
        need = (most + 1) * per_group
        if pools == need:
            return []
        other = f", or set {held} to {pools // per_group - 1}" if pools // per_group > 1 else ""
        return [
            f'{KEY}.rollout = "surge": each group and the surge group take {per_group} whole slice(s), so {most} '
            f"group(s) of {held} need {need} serving slices; {given}. List {need}{other}, or use rollout "
            '"in-place"'
        ]
    if pools % (most + 1) == 0:
        return []
    fewer, more = pools - pools % (most + 1), pools + (most + 1) - pools % (most + 1)
    choices = f"{fewer} or {more}" if fewer else f"{more}"
    return [
        f'{KEY}.rollout = "surge": the surge group needs a spare share of the serving slices as large as one '
        f"group's, beside the {most} group(s) of {held}, all shares equal; {given}, not a multiple of "
        f'{most + 1}. List {choices} slices, or use rollout "in-place"'
    ]


def canary_problems(serving: scaling.Scaled, disaggregated: bool = False) -> list[str]:
    """``serving.canaryGroups`` must roll at least one group and hold at least one of the fixed count, or of the
    HPA's minimum (:func:`~tpu_serving.platform.lws.canary_problem`); a DisaggregatedSet has no partition."""
    canary = serving.canary_groups
    if canary is None:
        return []
    at = f"{KEY}.canaryGroups = {canary}"
    if disaggregated:
        return [f"{at}: {lws.DISAGGREGATED_CANARY}"]
    auto = serving.autoscaling
    fewest, held = (
        (auto.min_replicas, "autoscaling.minReplicas") if auto is not None else (serving.replicas, "replicas")
    )
    why = lws.canary_problem(canary, fewest, held)
    return [f"{at}: {why}"] if why else []


UPGRADE_WAIT_MINUTES = 60
"""How long GKE waits on a node upgrade's drain, for the pods' disruption budgets and termination grace, before it
goes ahead: an hour. GKE's "Extend the run time of Autopilot Pods" (cloud.google.com/kubernetes-engine/docs/how-to/
extended-duration-pods, "About GKE-initiated Pod eviction"): "For automatic node upgrades, the grace period can be
up to one hour"; for the disruption budget, William Denniss (GKE product manager), "Minimizing Pod Disruption on
Autopilot" (wdenniss.com/minimizing-pod-disruption), node upgrades and repairs: "PDB: is respected for up to one
hour", Autopilot upgrading "using a node pool upgrade with surge enabled", whose behaviour applies to Standard."""


HOST_MAINTENANCE = (
    "TPU host maintenance and repairs come on Google's schedule, not in the window: maintenance exclusions do not "
    "stop them, and each recreates a slice's VMs together; GKE may also preempt on-demand and reserved TPUs to "
    "defragment capacity; auto-repairs and host errors do not support graceful shutdown, so the pods' preStop and "
    "grace-period drain is not assured for them"
)
"""What no maintenance policy holds back. Google, "Manage GKE node disruption for GPUs and TPUs"
(cloud.google.com/kubernetes-engine/docs/concepts/handle-disruption-gpu-tpu): "Host events are issued for the
underlying Google Cloud infrastructure and they bypass GKE maintenance policies and exclusions", and "When a host
event happens to the VM within a TPU slice, the entire slice gets interrupted"; "Manage AI-optimized GKE clusters"
(cloud.google.com/ai-hypercomputer/docs/manage/manage-gke-clusters, "Manage host maintenance for AI workloads"):
"they bypass GKE maintenance windows and exclusions ... GPUs and TPUs don't support live migration". The same GKE
page (fetched 2026-11-28), "Why GPUs and TPUs require disruption management": "GKE might also restart reserved and
on-demand TPUs by using preemption, which allows GKE to provision larger TPUs, due to defragmentation reasons"; and
"What does infrastructure interruption mean in GKE?": "TerminationEvent events don't support graceful shutdown",
triggered by "Auto repair" and "HostError" (GKE review m2). It says no more than that: nothing here claims how
often either comes."""


def upgrade_schedule(channel: str | None, window: str, held: bool) -> str:
    """When GKE upgrades the nodes: the cluster's channel and window (``channel`` None: an existing cluster, whose
    owner sets them), and whether an exclusion holds node upgrades back."""
    if channel is None:
        return "node upgrades come on the existing cluster's channel and maintenance window (its owner's)"
    return (
        f"GKE upgrades the nodes on the {channel} channel in the window {window}"
        f"{', now held back by a maintenance exclusion' if held else ''}"
    )


def stack_upgrade_schedule(cfg: Stack) -> str:
    """:func:`upgrade_schedule` of the stack's cluster."""
    m = cfg.cluster.maintenance
    return upgrade_schedule(
        None if cfg.existing else str(cfg.cluster.release_channel),
        window_text(m.window_start, m.window_end, m.recurrence),
        node_upgrades_held(cfg),
    )


RolloutOutput = dict[str, object] | pulumi.Output[dict[str, object]]
"""The ``rollout`` stack output: plain, or once a model stack's platform output is read."""

NODE_UPGRADE_HOLDING_SCOPES = ("NO_UPGRADES", "NO_MINOR_OR_NODE_UPGRADES")
"""The maintenance exclusion scopes that hold node upgrades back (GKE API MaintenanceExclusionOptions.Scope)."""


def node_upgrades_held(cfg: Stack) -> bool:
    """A maintenance exclusion of the stack's cluster holds node upgrades back (:data:`NODE_UPGRADE_HOLDING_SCOPES`)."""
    return any(str(e.scope) in NODE_UPGRADE_HOLDING_SCOPES for e in cfg.cluster.maintenance.exclusions)


def window_text(start: str, end: str, recurrence: str) -> str:
    """``FREQ=WEEKLY;BYDAY=SA,SU 02:00-08:00 UTC`` of a maintenance window given as RFC 3339 instants (their times
    of day are the daily start and end) and an RRULE."""
    return f"{recurrence} {start[11:16]}-{end[11:16]} UTC"


@dataclass(frozen=True)
class RolloutPlan:
    """What replacing every group costs: how many, by how many slices each, for how long."""

    rollout: Rollout
    groups: int
    """Groups at most (an HPA's maximum, else the fixed count)."""
    autoscaled: bool
    fewest: int
    """Groups at least (an HPA's minimum, else the fixed count)."""
    slices_per_group: int
    startup_minutes: int
    """The startup window of a group: how long its slices may serve nothing (in place), or the surge runs."""
    spare_pools: tuple[str, ...]
    """Node pools of the surge group's spare share (none in place)."""
    channel: str | None = None
    """The cluster's GKE release channel; None: an existing cluster, whose owner sets its channel and window."""
    window: str = ""
    """The cluster's maintenance window (:func:`window_text`)."""
    node_upgrades_held: bool = False
    """A maintenance exclusion holds node upgrades back (scope NO_UPGRADES or NO_MINOR_OR_NODE_UPGRADES)."""
    grace_seconds: int = 0
    """A leaving group's pods' termination grace period: how long a removed group may take to drain."""
    scale_down_period_seconds: int = 0
    """Seconds over which the HPA removes at most one group (autoscaled only)."""
    scale_down_stabilization_seconds: int = 0
    """How long the HPA's metric must stay low before it removes a group (autoscaled only)."""
    canary_groups: int | None = None
    """Groups, from the highest index, that take a template change; the others are held (``serving.canaryGroups``)."""
    maintenance: str = ""
    """Whether one zonal host-maintenance wave can take every group (:func:`stack_maintenance`)."""

    @property
    def partition(self) -> int | None:
        """The LeaderWorkerSet's ``partition``: the groups held, counted from the fewest (:func:`lws.canary_partition`)."""
        return lws.canary_partition(self.fewest, self.canary_groups)

    @property
    def summary(self) -> str:
        """One line for the preview and for a diff that changes the groups' template."""
        return self._strategy + self.canary

    @property
    def canary(self) -> str:
        """How a canary proceeds (``""`` without one): which group indexes take the new template, that the others
        wait, what the HPA's new groups and a surge group do, and how to release or roll back
        (:func:`lws.canary_partition` cites the controllers)."""
        held = self.partition
        if held is None:
            return ""
        top = f"{held}-{self.fewest - 1}" if self.fewest - 1 > held else f"{held}"
        moved = f"group{'s' if self.fewest - 1 > held else ''} {top}"
        if self.autoscaled:
            moved += f" (at {self.fewest} groups, the minimum) and every group of a higher index the HPA runs or adds"
        kept = f"group{'s' if held > 1 else ''} {'0' if held == 1 else f'0-{held - 1}'}"
        surge = (
            "; the surge group starts on it as well and stays on its spare slice until the release"
            if self.rollout == Rollout.SURGE
            else ""
        )
        return (
            f"; canary (serving.canaryGroups {self.canary_groups}, partition {held}): on the next template change "
            f"only {moved} take the new template{surge}; {kept} {'wait' if held > 1 else 'waits'} on the old one while you watch the canary's "
            "error rate and time to first token; to release them, remove canaryGroups and run `pulumi up`; to roll "
            "back, restore the previous stack file and run `pulumi up` (the waiting groups never moved; docs/upgrade.md)"
        )

    @property
    def _strategy(self) -> str:
        """How the groups roll, without a canary."""
        n = f"{'up to ' if self.autoscaled else ''}{self.groups} group{'s' if self.groups != 1 else ''}"
        k = self.slices_per_group
        unit = "one slice" if k == 1 else f"{k} slices"
        m = self.startup_minutes
        if self.rollout == Rollout.SURGE:
            return (
                f"rolling update of {n}, {unit} at a time, with surge: a new group starts first on empty serving "
                f"{'slice' if k == 1 else 'slices'} (with every group up, the spare {', '.join(self.spare_pools)}), "
                "then each old group is recreated "
                f"while it serves; no serving capacity lost; the spare runs up to about "
                f"{m * (self.groups + 1)} minutes (a startup window of {m} minutes per group, one group more)"
            )
        if self.groups == 1:
            return (
                f"rolling update of the only group, in place: the service stops for up to about {m} minutes (its "
                'startup window); rollout "surge" with a spare slice keeps it serving'
            )
        alone = f"; at {self.fewest} group (the minimum) the service stops meanwhile" if self.fewest == 1 else ""
        owned = f"{unit}'s" if k == 1 else f"{unit}'"
        return (
            f"rolling update of {n}, {unit} at a time, in place: about {m} minutes of {owned} capacity lost per "
            f"group (its startup window), up to {m * self.groups} minutes in all{alone}"
        )

    @property
    def drain(self) -> str:
        """One line on voluntary disruptions (node drains and upgrades, the autoscaler's scale-down): the groups'
        disruption budget (:func:`tpu_serving.platform.lws.group_disruption_budget`) lets them go one at a time."""
        budget = "a node drain or upgrade takes one group at a time (disruption budget: one eviction, then none until the group serves again)"
        if self.groups == 1:
            return (
                f"{budget}; with one group, a drain stops the service until its slice is back and it has loaded; "
                f"{CONTAINER_RESTART}"
            )
        if self.fewest == 1:
            return f"{budget}; at {self.fewest} group (the minimum) a drain stops the service meanwhile; {CONTAINER_RESTART}"
        return f"{budget}; {self.fewest - 1} of {self.fewest} groups at least keep serving; {CONTAINER_RESTART}"

    @property
    def upgrade(self) -> str:
        """One line on GKE's node upgrades: when they come, and what one costs the groups. An upgrade drains a
        slice's nodes and recreates its VMs together (:class:`~tpu_serving.platform.maintenance.MaintenanceSettings`); the
        disruption budget holds the next drain only until GKE stops waiting (:data:`UPGRADE_WAIT_MINUTES`)."""
        when = upgrade_schedule(self.channel, self.window, self.node_upgrades_held)
        return f"{self._upgrade_cost(when)}; {HOST_MAINTENANCE}"

    def _upgrade_cost(self, when: str) -> str:
        """``when``, then what a node upgrade costs the groups."""
        m, wait = self.startup_minutes, UPGRADE_WAIT_MINUTES
        cost = f"each upgrade recreates a slice's VMs and its group reloads for up to about {m} minutes"
        if self.groups == 1:
            way_out = (
                ""
                if self.node_upgrades_held or self.channel is None
                else "; a maintenance exclusion of scope NO_MINOR_OR_NODE_UPGRADES (cluster.maintenance.exclusions) "
                "lets you choose when"
            )
            return f"{when}; {cost}: with one group, the service stops meanwhile{way_out}"
        if m >= wait and self.node_upgrades_held:
            return (
                f"{when}; {cost}, no less than the {wait} minutes GKE waits on the disruption budget: upgrade the "
                "TPU pools yourself, one at a time, the next once its group serves again (docs/upgrade.md)"
            )
        if m >= wait:
            return (
                f"{when}; {cost}, no less than the {wait} minutes GKE waits on the disruption budget: the next "
                "slice's upgrade can then take a second group down while the first still reloads"
            )
        alone = f"; at {self.fewest} group (the minimum) the service stops meanwhile" if self.fewest == 1 else ""
        return f"{when}; {cost}; the disruption budget holds the next slice's drain until it serves again{alone}"

    def _window_note(self) -> str:
        """Whether the scale-down waits out a group's start (:func:`~tpu_serving.operations.autoscaling.scale_down_window`)."""
        if self.scale_down_stabilization_seconds >= self.startup_minutes * 60:
            return (
                ": the window covers a group's start, so a group that began reloading while the load asked for it "
                "serves again before one goes, but not one that begins after the load fell"
            )
        return (
            f": the window is shorter than a group's start ({self.startup_minutes} min), so a group that began "
            "reloading under load may still be reloading when one goes"
        )

    @property
    def scale_down(self) -> str:
        """One line on removing groups: the HPA's pace, which group leaves and how. The LWS controller scales the
        groups through its leader StatefulSet (kubernetes-sigs/lws v0.10.0 pkg/controllers/
        leaderworkerset_controller.go l.849-850, ``WithReplicas``, ``ParallelPodManagement``), and a StatefulSet
        removes the pods whose ordinal is at or past ``replicas`` (k8s.io/kubernetes v1.36.3 pkg/controller/
        statefulset/stateful_set_control.go l.590-598, "condemned"), whatever their readiness. But the replicas it
        gives that StatefulSet on a scale-down keep up to ``maxSurge`` groups above the new count while a lower group
        is not Ready or not on the current revision (v0.9.0, the release e2e runs, l.356-361 "Replicas changed during
        rolling update", l.685-696 ``calculateRollingUpdateReplicas``; v0.10.0 the same, l.362-367 and l.691-702 as
        SRE review round 16, m6, read them, and saw it on the real controllers): with ``surge`` (maxSurge 1) a scale-down by one group waits for a reloading lower group; with
        ``in-place`` (maxSurge 0) the highest-index group leaves, Ready or not."""
        drain = (
            f"; the group's pods drain for up to {self.grace_seconds} s (their grace period) before its slice is freed"
        )
        if not self.autoscaled and self.groups == 1:
            return f"no autoscaling: the stack fixes 1 group, which nothing scales down{drain.replace('the group', 'a leaving group')}"
        if not self.autoscaled:
            return f"no autoscaling: the stack fixes {self.groups} groups; lowering the count removes the highest-index groups{drain}"
        floor = (
            f"; at {self.fewest} group (the minimum) every request then waits on one group"
            if self.fewest == 1
            else f"; never below {self.fewest} groups (the minimum)"
        )
        return (
            f"the HPA removes at most one group every {self.scale_down_period_seconds} s, once its metric has stayed "
            f"low for {self.scale_down_stabilization_seconds} s; {self._which_leaves()}{self._window_note()}"
            f"{floor}{drain}"
        )

    def _which_leaves(self) -> str:
        if lws.surge_groups(self.rollout):
            return (
                "the LWS controller removes the highest-index group once the lower ones serve: while one reloads (a "
                f"recreation, an upgrade) it keeps {lws.surge_groups(self.rollout)} group above the new count (maxSurge), "
                "so one group less cannot remove a Ready group then, a larger drop can"
            )
        return (
            "the LWS controller removes the highest-index group, Ready or not (maxSurge 0), so a scale-down can "
            "remove a Ready group while a lower one reloads (a recreation, an upgrade)"
        )

    def output(self) -> dict[str, object]:
        """The stack output ``rollout``."""
        return {
            "strategy": self.rollout.value,
            "groups": self.groups,
            "slicesPerGroup": self.slices_per_group,
            "startupMinutes": self.startup_minutes,
            "sparePools": list(self.spare_pools),
            "summary": self.summary,
            "drain": self.drain,
            "upgrade": self.upgrade,
            "scaleDown": self.scale_down,
            **({"maintenance": self.maintenance} if self.maintenance else {}),
            **({} if self.partition is None else {"canaryGroups": self.canary_groups, "partition": self.partition}),
        }


def plan_output(rollout: RolloutPlan, platform_held: pulumi.Output[bool] | None) -> RolloutOutput:
    """The ``rollout`` output of ``rollout``; on a model stack, once its platform's output says whether node upgrades
    are held (``platform_held``), which its upgrade line takes instead of the model stack's own cluster settings."""
    if platform_held is None:
        return rollout.output()
    return platform_held.apply(lambda held: dataclasses.replace(rollout, node_upgrades_held=held).output())


def serving_pools(cfg: Stack, slices: Sequence[str]) -> list[str]:
    """The node pools of the serving slices, in the stack file's order (the spare share is the last)."""
    return [p for s in cfg.tpu_slices if s.name in slices for p in cfg.node_pool_names(s)]


def stack_maintenance(
    cfg: Stack,
    slices: Sequence[str] | None = None,
    gated: bool = False,
    watched: bool = False,
    covered: bool = False,
    whole: bool = False,
) -> str:
    """The ``Maintenance:`` line of the stack's serving slices (``slices``: their kinds' names; None: every slice
    kind), each node pool in its kind's zone, else the stack's (:func:`tpu_serving.operations.maintenance.maintenance_line.zone_line`);
    ``gated``: the stack's host-maintenance gate starts it; ``watched``: the gate runs; ``covered``: it covers a group
    down for a maintenance through the HPA; ``whole``: the workload restarts as a whole (a JobSet, a PathwaysJob), so
    its pools are started together (:func:`tpu_serving.operations.maintenance.maintenance_line.zone_line`)."""
    kinds = [s for s in cfg.tpu_slices if slices is None or s.name in slices]
    pools = [(p, s.zone or cfg.zone) for s in kinds for p in cfg.node_pool_names(s)]
    startable = all(host_maintenance.manual_start_listed(s.shape) for s in kinds)
    spread = tpu_zones.one_zone_only(kinds[0].shape.generation.name, pools[0][1]) if kinds and pools else None
    return maintenance_line.zone_line(pools, gated, startable, watched, spread, covered, whole)


def maintenance_watched(cfg: Stack, serving: scaling.Scaled) -> bool:
    """Whether the host-maintenance gate runs for LeaderWorkerSet serving (vLLM or JetStream, not disaggregated):
    ``hostMaintenance.mode: start`` and two or more standing groups. It starts the maintenance only where
    :func:`maintenance_gated`; elsewhere it watches, and pages a serving node lost. The stack's decision is
    :func:`tpu_serving.config.serving_facts.maintenance_gate_runs`, which calls this one."""
    return str(cfg.host_maintenance.mode) == "start" and gate_would_watch(cfg, serving)


def gate_would_watch(cfg: Stack, serving: scaling.Scaled) -> bool:
    """Two or more standing groups on the stack's slices: the host-maintenance gate runs for them with
    ``hostMaintenance.mode: start`` (:func:`maintenance_watched`), whatever the mode says."""
    kinds = [s for s in cfg.tpu_slices if s.name in serving.slices]
    return scaling.fewest_groups(serving) >= 2 and bool(kinds)


def maintenance_starts(cfg: Stack, serving: scaling.Scaled) -> bool:
    """Whether every serving slice's node pools take a manual start of host maintenance
    (:func:`tpu_serving.operations.maintenance.host_maintenance.manual_start_listed`)."""
    kinds = [s for s in cfg.tpu_slices if s.name in serving.slices]
    return bool(kinds) and all(host_maintenance.manual_start_listed(s.shape) for s in kinds)


def maintenance_gated(cfg: Stack, serving: scaling.Scaled) -> bool:
    """Whether the host-maintenance gate starts the serving pools' maintenance: it runs
    (:func:`maintenance_watched`) on slices whose pools take a manual start (:func:`maintenance_starts`)."""
    return maintenance_watched(cfg, serving) and maintenance_starts(cfg, serving)


def plan(cfg: Stack, serving: scaling.Scaled, startup_seconds: int, grace_seconds: int) -> RolloutPlan:
    """The rollout of ``serving``'s groups on the stack's serving slices (``grace_seconds``: the groups' pods'
    termination grace period)."""
    pools = serving_pools(cfg, serving.slices)
    spare = scaling.spare_slices(serving, len(pools))
    groups = scaling.groups(serving)
    m = cfg.cluster.maintenance
    auto = serving.autoscaling
    watched = maintenance_watched(cfg, serving)
    return RolloutPlan(
        rollout=serving.rollout,
        groups=groups,
        autoscaled=serving.autoscaling is not None,
        fewest=scaling.fewest_groups(serving),
        slices_per_group=max(1, scaling.group_slices(serving, len(pools)) // groups),
        startup_minutes=math.ceil(startup_seconds / 60),
        spare_pools=tuple(pools[len(pools) - spare :]) if spare else (),
        channel=None if cfg.existing else str(cfg.cluster.release_channel),
        window=window_text(m.window_start, m.window_end, m.recurrence),
        node_upgrades_held=node_upgrades_held(cfg),
        grace_seconds=grace_seconds,
        scale_down_period_seconds=DEFAULT_SCALE_DOWN_PERIOD_SECONDS,
        scale_down_stabilization_seconds=scale_down_window(auto.scale_down_stabilization_seconds, startup_seconds)
        if auto is not None
        else 0,
        canary_groups=serving.canary_groups,
        maintenance=stack_maintenance(
            cfg,
            serving.slices,
            maintenance_gated(cfg, serving),
            watched,
            covered=watched and auto is not None,
        ),
    )
