"""Whether a stack is fit to serve production traffic (``production``): the gaps that keep its serving from an SLO,
which ``production: true`` refuses, each at its key, and which the preview's ``Production:`` line lists when the stack
says ``production: false`` (SRE review round 40, M1 and M6: the example stacks page nobody, and four serve from one
group, so a team that copies one copies its opt-outs unless the stack says what it is).

The gaps every backend shares are here: alert policies that notify nobody, or none; tickets (WARNING) sent to the
pages' channels; one serving group. A backend's
own are its :attr:`~tpu_serving.backends.Backend.production_gaps` (an alpha API in the serving path, a job that
disruptions fail for good)."""

from __future__ import annotations

import json

from ..backends import BACKENDS
from ..backends.base import Gap
from ..backends.rollout import UPGRADE_WAIT_MINUTES
from ..catalog import capacity as capacity_rules
from ..catalog import tpu_zones
from ..catalog.capacity import Capacity
from ..common.settings import PROJECT_NAMESPACE, CreateOrExisting
from ..operations.maintenance.host_maintenance_job import GateMode
from .checks import FULL_OUTAGE, full_outage
from .models import StackConfig, TpuSliceConfig
from .serving_facts import (
    maintenance_gate_applies,
    maintenance_gate_runs,
    reload_outlasting_upgrade_wait,
    serving_kind_names,
)
from .slice_capacity import fallback_steps, stockouts

NO_ALERTS = Gap(
    "observability.enabled",
    "false",
    "the stack creates no alert policy: an outage is seen only by someone looking at the serving",
)
UNPAGED = Gap(
    "observability.unpaged",
    "true",
    "its alert policies notify nobody: an outage is seen only by someone looking at Cloud Monitoring; name the "
    "pages' channels in observability.notificationChannels",
)


def ticket_gap(cfg: StackConfig) -> Gap | None:
    """The WARNING alerts notify the pages' channels: ``observability.ticketChannels`` empty, so they fall back to
    ``notificationChannels`` (:meth:`~tpu_serving.operations.observability_settings.ObservabilitySettings.channels`), or naming
    one of them. A ticket is what can wait for working hours; sent to the pager it wakes the on-call for a group
    reloading or a backlog, and a pager that rings for tickets is soon silenced (SRE review: tickets on the pager's
    channels). Only for alert policies the stack creates and that page someone (the ``unpaged`` gap is the other
    case)."""
    watch = cfg.observability
    pages = list(watch.notification_channels)
    if not watch.enabled or watch.cloud_resources != CreateOrExisting.CREATE or not pages:
        return None
    if not watch.ticket_channels:
        return Gap(
            "observability.ticketChannels",
            "[]",
            "the WARNING alerts (a group reloading, a backlog, a pod not ready, metrics missing) go to the pages' "
            "channels, observability.notificationChannels: tickets wake the pager, for what can wait for working "
            "hours; name a ticket queue's channels in observability.ticketChannels",
        )
    shared = [c for c in watch.ticket_channels if c in pages]
    if not shared:
        return None
    return Gap(
        "observability.ticketChannels",
        ", ".join(shared),
        "a ticket channel is also a page channel (observability.notificationChannels): tickets wake the pager, for "
        "what can wait for working hours; name channels of a ticket queue only",
    )


def single_group_gap(why: str) -> Gap:
    """``serving.singleGroup: accepted``: each disruption of the one group stops the service (:func:`full_outage`)."""
    return Gap(
        "serving.singleGroup",
        "accepted",
        f"{why}: {FULL_OUTAGE}",
    )


HELD_BY_RESERVATION = (Capacity.RESERVATION, Capacity.ANY_RESERVATION)
"""The capacity types that hold a serving slice's VMs through a stockout (:data:`~tpu_serving.catalog.capacity.STOCKOUT`)."""


def serving_kinds(cfg: StackConfig) -> list[tuple[int, TpuSliceConfig]]:
    """The slice kinds the serving runs on (``serving.slices``, and each disaggregated role's), with their index in
    ``tpuSlices``; none while the serving names a kind the stack lacks (reported elsewhere)."""
    if cfg.serving is None:
        return []
    named = serving_kind_names(cfg.serving)
    return [(i, s) for i, s in enumerate(cfg.tpu_slices) if s.name in named]


SPREAD = "serve from slice kinds of the same shape in two zones (tpuSlices[].zone, serving.slices)"


def zone_gap(cfg: StackConfig, kinds: list[tuple[int, TpuSliceConfig]]) -> Gap | None:
    """Every serving slice in one zone: a zonal outage or host-maintenance wave takes every group at once (the
    preview's ``Maintenance:`` line, :func:`tpu_serving.operations.maintenance.maintenance_line.zone_line`)."""
    zones = sorted({cfg.zone_of(s) for _, s in kinds})
    if len(zones) != 1:
        return None
    return Gap(
        "tpuSlices[].zone",
        zones[0],
        f"every serving slice is in {zones[0]}: a zonal outage or a wave of TPU host maintenance there takes every "
        f"group at once; {tpu_zones.one_zone_only(kinds[0][1].shape.generation.name, zones[0]) or SPREAD}",
    )


def capacity_gaps(cfg: StackConfig, kinds: list[tuple[int, TpuSliceConfig]]) -> list[Gap]:
    """Serving slices that no reservation holds: what a stockout does to them, as the ``capacity.obtained`` output says
    it (:func:`.slice_capacity.stockouts`: a capacity fallback's or an empty pool's slice waits, and pulumi up does not
    fail)."""
    said = stockouts(cfg)
    found = []
    for i, s in kinds:
        chosen = capacity_rules.effective(s.capacity, s.spot, s.reservation)
        if chosen not in HELD_BY_RESERVATION:
            # why it is a gap first: the stockout text alone read as good news (new-user reviews of the fallback)
            why = "no reservation holds its slice (capacity: reservation would); meanwhile "
            found.append(Gap(f"tpuSlices[{i}].capacity", chosen.value, why + said[s.name]))
    return found


def fallback_gap(cfg: StackConfig) -> Gap | None:
    """A capacity fallback without the host-maintenance gate (one standing group, or ``hostMaintenance.mode:
    ticket``): the gate's fallback-slice ticket is the only signal that a group serves on a slice GKE made for the
    class (:mod:`tpu_serving.operations.maintenance.gate_fallback`), so nothing says it is there (SRE review of the capacity fallback, M1:
    the 405B example's one group could stay on Spot unseen)."""
    steps = [str(s) for s in fallback_steps(cfg)]
    if not steps or maintenance_gate_runs(cfg):
        return None
    return Gap(
        "serving.fallback",
        json.dumps(steps),
        "no host-maintenance gate runs (one standing group, or hostMaintenance.mode: ticket), so nothing tickets a "
        "group that serves on a fallback slice: it bills at its step's price, a Spot slice is preempted with about "
        f"30 s of notice, a flex-start slice's VMs go {capacity_rules.FLEX_START_MAX_HOURS // 24} days after they "
        "started; after a capacity wait, a repair or host maintenance look with `kubectl get nodes -L "
        "cloud.google.com/compute-class,cloud.google.com/gke-nodepool` (docs/operate.md, A group on a fallback slice)",
    )


def _reload_outlasts(startup: int) -> str:
    """The reason a group's reload of ``startup`` seconds meets GKE's automatic node upgrades (both upgrade gaps)."""
    return (
        f"a group reloads for up to {startup // 60} minutes, no less than the {UPGRADE_WAIT_MINUTES} minutes GKE "
        "waits on the disruption budget in an automatic node upgrade"
    )


def existing_upgrades_gap(cfg: StackConfig) -> Gap | None:
    """An existing cluster whose owner is not said to hold node upgrades, under several groups that each reload for
    an hour or more: GKE's next slice upgrade can take a second group while the first reloads
    (:func:`tpu_serving.config.checks.upgrade_overlap_problems`, the created cluster's case, which refuses it)."""
    existing = cfg.cluster.existing
    startup = reload_outlasting_upgrade_wait(cfg.serving)
    if existing is None or existing.node_upgrades_held or startup is None:
        return None
    return Gap(
        "cluster.existing.nodeUpgradesHeld",
        "false",
        f"{_reload_outlasts(startup)}, so the cluster's next slice upgrade can take a "
        "second group while the first reloads; have its owner hold node upgrades (NO_MINOR_OR_NODE_UPGRADES) and "
        "upgrade the TPU pools one at a time, and say so here",
    )


def platform_upgrades_gap(cfg: StackConfig, held: bool) -> Gap | None:
    """A model stack (``platform``) whose platform does not hold node upgrades back (its ``platform`` output's
    ``nodeUpgradesHeld``), under several groups that each reload for an hour or more: the TPU pools are on the
    platform's cluster, so :func:`existing_upgrades_gap`'s case, with the platform's setting instead of
    ``cluster.existing``'s. Known only from the platform's output (the offline preview: the platform's preview; ``pulumi
    preview`` and ``up``: the deployed platform's)."""
    startup = reload_outlasting_upgrade_wait(cfg.serving)
    if cfg.platform is None or held or startup is None:
        return None
    return Gap(
        "platform.stack",
        f"{cfg.platform.stack} (its output platform.nodeUpgradesHeld false)",
        f"{_reload_outlasts(startup)}, and the platform's cluster does not hold node "
        "upgrades back, so its next slice upgrade can take a second group while the first reloads; give the platform "
        "stack a maintenance exclusion of scope NO_MINOR_OR_NODE_UPGRADES (its cluster.maintenance.exclusions, or "
        "cluster.existing.nodeUpgradesHeld: true once its owner holds them) and upgrade the TPU pools one at a time",
    )


def alert_gaps(cfg: StackConfig) -> list[Gap]:
    """Alert policies that notify nobody, or none; tickets on the pages' channels (:func:`ticket_gap`)."""
    watch = cfg.observability
    if not watch.enabled:
        return [NO_ALERTS]
    if watch.cloud_resources == CreateOrExisting.CREATE and not watch.notification_channels and watch.unpaged:
        return [UNPAGED]
    tickets = ticket_gap(cfg)
    return [] if tickets is None else [tickets]


def gate_gap(cfg: StackConfig) -> Gap | None:
    """Standing groups without the host-maintenance gate (``hostMaintenance.mode: ticket``): a lost serving VM pages
    only as below minimum, nothing covers its group, and nothing starts the pools' maintenance one at a time (SRE
    review round 22, M2: ``production: true`` accepted it, with no gap said)."""
    if cfg.host_maintenance.mode != GateMode.TICKET or not maintenance_gate_applies(cfg):
        return None
    return Gap(
        "hostMaintenance.mode",
        "ticket",
        "no host-maintenance gate: a lost serving VM pages only as 'Serving groups below minimum', after "
        f"observability.notReadyMinutes ({cfg.observability.not_ready_minutes}), not after 10 minutes; no group "
        "replaces a lost one until someone raises the HPA; and nothing starts the pools' maintenance one pool at a "
        "time; use start",
    )


def platform_probe_gap(cfg: StackConfig) -> Gap | None:
    """A model stack's route on its platform's Gateway (``platform`` and ``gateway``, watched): its serving probe goes
    to its Service, not through the Gateway, whose address's IP the model stack does not know when it plans (SRE
    review, Blocker: the preview said "no gap the library knows of"). The load balancer's alerts on the Gateway
    (:mod:`tpu_serving.operations.alerts.platform_gateway_alerts`) count the 5xx it answers; an outage that answers nothing (a route
    not attached, the address unreachable, the load balancer's series gone) reads as no traffic."""
    if cfg.platform is None or cfg.gateway is None or not cfg.observability.enabled:
        return None
    return Gap(
        "platform.stack",
        cfg.platform.stack,
        "the serving probe goes to the model's Service, not through the platform's Gateway (the model stack does not "
        "know the Gateway address's IP when it plans): a Gateway outage that answers no request (a route not "
        "attached, the address unreachable) reads as no traffic, and nothing tickets when the load balancer's series "
        "read nothing; probe the Gateway from outside the stack, with the model's X-Gateway-Model-Name header",
    )


def production_gaps(cfg: StackConfig) -> list[Gap]:
    """What keeps the stack's serving from a production SLO, in the stack file's order; none without serving."""
    serving = cfg.serving
    if serving is None:
        return []
    gaps = alert_gaps(cfg)
    gaps += [g for g in [platform_probe_gap(cfg)] if g]
    why, _ = full_outage(serving)
    one_group = bool(why) and getattr(serving, "single_group", None) == "accepted"
    if one_group:
        gaps.append(single_group_gap(why))
    kinds = serving_kinds(cfg)
    if kinds:
        shape = kinds[0][1].shape
        gaps += [
            g for g in [None if one_group else zone_gap(cfg, kinds), existing_upgrades_gap(cfg), gate_gap(cfg)] if g
        ]
        # an existing cluster's pools are their owner's: their capacity is no gap of this stack's (new-user
        # review 10, m5: a stockout "fails the node pool's creation" of a pool the stack does not create)
        gaps += [] if cfg.cluster.existing is not None else capacity_gaps(cfg, kinds)
        gaps += [g for g in [fallback_gap(cfg)] if g]
        gaps += list(BACKENDS[serving.backend].production_gaps(serving, shape))
    return gaps


def production_problems(cfg: StackConfig) -> list[str]:
    """Each gap of a stack that says ``production: true`` (the default), at its key."""
    if not cfg.production:
        return []
    return [
        f"{PROJECT_NAMESPACE}:{g.key} = {g.value}: {g.why}; production: true refuses it (set production to false to "
        "run the stack as an example; valid: true, false)"
        for g in production_gaps(cfg)
    ]


def production_output(cfg: StackConfig, platform_held: bool = True) -> dict[str, object]:
    """The ``production`` stack output, which the preview prints: whether the stack says it serves production
    traffic, and the gaps (none when it does: they are refused). ``platform_held``: a model stack's platform's
    ``nodeUpgradesHeld`` (:func:`platform_upgrades_gap`), known only from its output, whose gap a ``production: true``
    stack refuses here, with a ``ValueError`` that fails the preview and ``up``."""
    late = platform_upgrades_gap(cfg, platform_held)
    if late is not None and cfg.production:
        raise ValueError(
            f"{PROJECT_NAMESPACE}:{late.key} = {late.value}: {late.why}; production: true refuses it (set production "
            "to false to run the stack as an example; valid: true, false)"
        )
    return {
        "production": cfg.production,
        "gaps": [f"{g.key} {g.value}: {g.why}" for g in [*production_gaps(cfg), *([late] if late else [])]],
    }
