"""The runbooks' commands in one stack's own names: node upgrades one pool at a time (a JobSet's or PathwaysJob's
back to back, :mod:`tpu_serving_tools.runbook.whole`), TPU host maintenance, a lost VM, a zone outage, and with a
capacity fallback a group on a fallback slice (:mod:`tpu_serving_tools.runbook.fallback`) (docs/upgrade.md, "Node drains
and upgrades"; docs/operate.md, "TPU host maintenance", "A VM that goes silent", "A zone outage", "A group on a fallback
slice"), from the stack's offline plan.

``tpu-serving runbook --stack S [--root DIR]`` previews the stack in-process and prints shell commands with the
cluster, its location, the serving namespace, the workload, its HPA and each node pool filled in. Everything comes
from the plan (its outputs ``clusterName``, ``namespace``, ``slices``, ``rollout``, ``autoscaling``, and its
resources: the cluster, the node pools, the LeaderWorkerSet, the HorizontalPodAutoscalers), not from the library.
A plan with no TPU slice fails: there is nothing to run.

Flags, with their sources:

- ``gcloud container clusters upgrade CLUSTER --location L --node-pool POOL`` upgrades one node pool to the control
  plane's version (https://cloud.google.com/sdk/gcloud/reference/container/clusters/upgrade).
- ``kubectl drain -l SELECTOR --ignore-daemonsets --delete-emptydir-data --pod-selector SELECTOR`` evicts the pods
  of the selected nodes that the pod selector selects (the stack's serving pods: its operators may evict no other),
  honouring disruption budgets; drain refuses pods with an emptyDir volume unless ``--delete-emptydir-data`` is given
  (https://kubernetes.io/docs/reference/kubectl/generated/kubectl_drain/); ``kubectl uncordon -l SELECTOR``
  (https://kubernetes.io/docs/reference/kubectl/generated/kubectl_uncordon/).
- ``cloud.google.com/perform-maintenance=true`` starts a node's pending host maintenance
  (https://cloud.google.com/kubernetes-engine/docs/how-to/perform-host-maintenance-accelerators);
  ``cloud.google.com/scheduled-maintenance-time`` says when it is due
  (https://cloud.google.com/kubernetes-engine/docs/how-to/view-maintenance-events).
- ``node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`` releases a lost node's pods, and is removed by hand
  once the node is back (https://kubernetes.io/docs/concepts/cluster-administration/node-shutdown/).
- ``spec.behavior.scaleDown.selectPolicy: Disabled`` turns an HPA's scale-downs off, ``Max`` is the default
  (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/horizontal-pod-autoscaler-v2/).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tpu_serving.operations.maintenance.group_cover import COVER_ANNOTATION
from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.runbook import fallback as fb
from tpu_serving_tools.runbook.fixed import fixed_zone_lines
from tpu_serving_tools.runbook.gate import gate_held, gate_released
from tpu_serving_tools.runbook.header import access_lines
from tpu_serving_tools.runbook.names import LWS, POOL_LABEL, Names, Pool, RunbookError, names
from tpu_serving_tools.runbook.waits import STARTED_AT, grown, ready_again, serving_again, until_back
from tpu_serving_tools.runbook.whole import restarts_as_a_whole, whole_maintenance, whole_upgrades

LWS_NAME = "leaderworkerset.sigs.k8s.io/name"

__all__ = ["NOT_LWS", "STARTED_AT", "RunbookError", "main", "ready_again", "render", "until_back", "upgrade_order"]

NOT_LWS: dict[str, str] = {
    "disaggregatedset": "a DisaggregatedSet keeps one group per role at its minimum, so a pool's upgrade stops its "
    "role's group until it reloads",
    "jobset": "a JobSet restarts as a whole, so any pool's upgrade or maintenance stops the whole workload until "
    "it restarts",
    "pathwaysjob": "a PathwaysJob restarts as a whole, so any pool's upgrade or maintenance stops it and spends one "
    "of its restarts (serving.maxRestarts)",
}
"""What a node upgrade does to a workload that is not a LeaderWorkerSet's groups (docs/upgrade.md)."""


def _hpa_patch(n: Names, policy: str) -> list[str]:
    body = json.dumps({"spec": {"behavior": {"scaleDown": {"selectPolicy": policy}}}}, separators=(",", ":"))
    return [f"kubectl -n {n.namespace} patch hpa {h} --type merge -p '{body}'" for h in n.hpas]


def _hold(n: Names) -> list[str]:
    if not n.hpas:
        return []
    return [
        "# First: hold the HPA's scale-downs while groups reload (LeaderWorkerSet keeps only maxSurge groups above a",
        "# lower count while a group reloads; with none, the highest-index group goes, Ready or not); scale-ups go",
        "# on.",
        *_hpa_patch(n, "Disabled"),
    ]


def _unhold(n: Names) -> list[str]:
    if not n.hpas:
        return []
    return [
        "# Last: give the HPA its scale-downs back (Max, the default; pulumi up does not reset it: do not skip this).",
        *_hpa_patch(n, "Max"),
    ]


def _leaders(n: Names) -> str:
    return f"leaderworkerset.sigs.k8s.io/name={n.workload},role=leader"


def _group_map(n: Names) -> list[str]:
    if n.kind != LWS:
        return [f"kubectl -n {n.namespace} get pods -o wide   # which pool's nodes hold the pods now"]
    return [
        f"kubectl -n {n.namespace} get pods -l {_leaders(n)} -o wide   # which pool holds which group now"
        " (a node's name carries its pool's)"
    ]


def _upgrade(n: Names, pool: Pool) -> str:
    # --quiet: the command asks "Do you want to continue (Y/n)?", and a pasted procedure answers it with its own next
    # line (SRE review 29, m1; gcloud's global flag --quiet disables interactive prompts, taking the default)
    line = f"gcloud container clusters upgrade {n.cluster} --location {n.location} --node-pool {pool.name} --quiet"
    if pool.no_surge:
        line += "   # maxSurge 0 (a reservation's pool): its node goes first, a group on it is down meanwhile"
    return line


def upgrade_order(n: Names) -> tuple[Pool, ...]:
    """The TPU pools in upgrade order: those that hold no standing group first (spares, pools that scale from zero),
    so that a group moved by a later upgrade or repair lands on an upgraded free slice, then the standing groups'
    pools, each the plan's order."""
    return tuple(p for p in n.tpu_pools if not p.standing) + tuple(p for p in n.tpu_pools if p.standing)


def _upgrade_section(n: Names) -> list[str]:
    whole = restarts_as_a_whole(n)  # SRE review 30, M2: its pools back to back, one wait (tools/runbook/whole.py)
    how = "the workload's pools back to back" if whole else "one pool at a time"
    lines = [f'## Node upgrades, {how} (docs/upgrade.md, "Node drains and upgrades")']
    if n.existing:
        lines.append(
            f"# An existing cluster: its node upgrades are its owner's; {n.location} is the stack's region, use the "
            "cluster's own location if it differs."
        )
    if n.kind != LWS and not whole:
        lines.append(f"# No LeaderWorkerSet: {NOT_LWS[n.kind]}; the HPA hold is not covered (docs/upgrade.md).")
    lines += [*_hold(n), *gate_held(n)]
    lines += [*_group_map(n), *fb.class_upgrade_lines(n)]  # SRE review of the runbook, M3: a group on GKE's pool
    order = upgrade_order(n)
    if whole:
        cpu = [_upgrade(n, Pool(p, False, False, False)) for p in n.cpu_pools]
        return [*lines, *whole_upgrades(n, [_upgrade(n, pool) for pool in order], cpu), *gate_released(n), *_unhold(n)]
    # SRE review 31, m4: the first upgrade waited for nothing; a cover group on a free pool would go with it
    lines += [*_cover_check(n), "# Every group serves before the first upgrade:", *serving_again(n)]
    free = [p.name for p in order if not p.standing]
    if free:
        lines.append(
            f"# Pools that hold no standing group first ({', '.join(free)}): the HPA's extra groups, or a group that "
            "moved, may run there (the map above); upgrade one only while every group is Ready."
        )
    for pool in order:
        lines += [_upgrade(n, pool), *serving_again(n)]
    if n.cpu_pools:
        lines.append("# Then the CPU pools:")
        lines += [_upgrade(n, Pool(p, False, False, False)) for p in n.cpu_pools]
    elif n.existing:
        lines.append("# The cluster's CPU pools are not the stack's: upgrade them as the cluster's owner does.")
    return lines + gate_released(n) + _unhold(n)


def _pool_nodes(pools: list[Pool]) -> str:
    return f"{POOL_LABEL} in ({','.join(p.name for p in pools)})"


def _manual_start(n: Names) -> list[str]:
    lines = []
    if n.gate_starts:
        lines.append(
            f"# The stack's host-maintenance gate (CronJob in {n.namespace}) starts these itself, one pool at a time;"
            " by hand only with hostMaintenance.mode: ticket:"
        )
    lines += _hold(n)
    # SRE review 34, M2: a `kubectl wait --timeout=90m` fell through on timeout to the next pool's start, whatever the
    # stack's startup window; the loop ends only once every standing group serves (the LeaderWorkerSet's Available)
    wait = serving_again(n)
    lines.append("# One pool at a time, each with maintenance pending (the list above), once every group serves:")
    for pool in n.tpu_pools:
        selector = f"{POOL_LABEL}={pool.name}"
        lines += [
            *wait,
            # SRE review 30, m5: a pool with nothing pending (a spare, a pool at zero) is skipped; its wait never ended
            f"if kubectl get nodes -l '{selector},cloud.google.com/scheduled-maintenance-time' -o name | grep -q .; then",
            f"  {STARTED_AT}",
            f"  kubectl label nodes -l {selector} cloud.google.com/perform-maintenance=true --overwrite",
            f"  {until_back(selector)}",
            "fi",
        ]
    return [*lines, *wait, *_unhold(n)]


AUTOSCALING_FLAGS = (
    ("totalMinNodeCount", "--total-min-nodes"),
    ("totalMaxNodeCount", "--total-max-nodes"),
    ("minNodeCount", "--min-nodes"),
    ("maxNodeCount", "--max-nodes"),
    ("locationPolicy", "--location-policy"),
)
"""A node pool's ``autoscaling`` fields (pulumi-gcp ``NodePoolAutoscaling``) and the ``gcloud container clusters
update --node-pool`` flags that set them back (https://cloud.google.com/kubernetes-engine/docs/how-to/
cluster-autoscaler, "Enabling autoscaling for an existing node pool"; ``--no-enable-autoscaling``: "Disabling
autoscaling for an existing node pool")."""


def _autoscaler(n: Names, pool: Pool, on: bool) -> list[str]:
    """Turn ``pool``'s autoscaling off (the cluster autoscaler then provisions none of its nodes) or back on."""
    if not pool.autoscaling:
        return []
    base = f"gcloud container clusters update {n.cluster} --location {n.location} --node-pool {pool.name}"
    if not on:
        return [f"{base} --no-enable-autoscaling   # the autoscaler must not provision it for the added group"]
    declared = dict(pool.autoscaling)
    flags = " ".join(f"{flag} {declared[key]}" for key, flag in AUTOSCALING_FLAGS if key in declared)
    return [f"{base} --enable-autoscaling {flags}   # its autoscaling back, as the stack declares it"]


def _add_group(n: Names, zone: str | None) -> list[str]:
    """Step 2 of the move: one more group first, so the standing ones keep serving while the moved one reloads."""
    if not n.hpas and all(p.standing for p in n.tpu_pools):  # library review 5, M3: no slice to move to
        return [
            "# No HPA and no free slice (every serving pool holds a standing group): the drained group has nowhere",
            "# to go and stays down until its pool's maintenance ends, while the others carry its requests. Drain",
            "# only if they can; else let the maintenance take the group at its window, as it would anyway.",
        ]
    if not n.hpas:
        return ["# No HPA: skip adding a group; the drained group reloads while the others carry its requests."]
    where = f"outside {zone}" if zone else "on a free slice of another zone than the first window's"
    lines = ["# Add a group (not above the HPA's maximum; at the maximum, skip this) and wait until it serves:"]
    for hpa in n.hpas:
        lines += [
            f"N=$(kubectl -n {n.namespace} get leaderworkerset {n.workload} -o jsonpath='{{.spec.replicas}}')",
            f'kubectl -n {n.namespace} patch hpa {hpa} --type merge -p "{{\\"spec\\":{{\\"minReplicas\\":$((N+1))}}}}"',
        ]
    return [
        *lines,
        grown(n.namespace, n.workload),
        *serving_again(n),
        *_group_map(n),
        f"# Check: the new group is {where}, and a pool of that zone besides the first window's holds no group. If",
        "# not, do not drain (the drained group would wait Pending for its own slice): set the HPA's minimum back and",
        "# give it its scale-downs back (Max; while they are held, a lower minimum removes no group).",
    ]


def _zones(n: Names) -> dict[str, list[Pool]]:
    """The serving pools by zone, when the plan creates each in one zone (else empty: the zones are unknown)."""
    by_zone: dict[str, list[Pool]] = {}
    for pool in n.tpu_pools:
        if pool.zone is None:
            return {}
        by_zone.setdefault(pool.zone, []).append(pool)
    return by_zone


def _drains(pools: list[Pool], flags: str) -> list[str]:
    lines = []
    for pool in pools:  # any serving pool can hold a group by then (a repair, the HPA, an earlier move)
        selector = f"{POOL_LABEL}={pool.name}"
        lines += [
            f"kubectl drain -l {selector} {flags}   # if the first window is {pool.name}'s: its group moves",
            f"kubectl uncordon -l {selector}   # after its maintenance",
        ]
    return lines


def _zone_move(n: Names, zone: str, pools: list[Pool], flags: str) -> list[str]:
    """The move when the first window's pool is in ``zone``: hold the zone's pools while the group is added (GKE
    review round 52, M1: the scheduler breaks the leaders' zone tie at random, and the cluster autoscaler may grow
    either zone's autoscaled pool, not one of fixed size), give them back, then drain."""
    selector = f"'{_pool_nodes(pools)}'"
    return [
        f"# If the first window's pool is in {zone} ({', '.join(p.name for p in pools)}): hold that zone's pools, so",
        "# that the added group takes another zone's free slice; the moved group is required in its own zone, apart",
        "# from the other standing groups, and needs that zone's free slice (docs/operate.md, step 2).",
        f"kubectl cordon -l {selector}",
        *fb.class_hold_lines(n, zone),
        *(line for pool in pools for line in _autoscaler(n, pool, on=False)),
        *_add_group(n, zone),
        f"kubectl uncordon -l {selector}   # the zone's pools back, before the drain",
        *(line for pool in pools for line in _autoscaler(n, pool, on=True)),
        *_drains(pools, flags),
    ]


def _drain(n: Names) -> list[str]:
    """docs/operate.md's one procedure for moving a group before its window ("Moving a group before its window")."""
    lines = ["# Cloud TPU lists no manual start for these pools: each slice's maintenance comes at its window."]
    if n.kind != LWS:
        return [*lines, f"# Not covered: moving a group off its slice is a LeaderWorkerSet's move; {NOT_LWS[n.kind]}."]
    if len(n.tpu_pools) < 2:  # new-user review 11, m1: no other slice to move a group to, nor a second window
        return [
            *lines,
            f"# One serving pool ({', '.join(p.name for p in n.tpu_pools)}): its maintenance stops the service for the",
            "# maintenance and a reload; there is no other slice to move a group to. Serving through it takes a second",
            "# serving pool (docs/operate.md, 'TPU host maintenance').",
        ]
    flags = "--ignore-daemonsets" + (" --delete-emptydir-data" if n.empty_dir else "")
    flags += f" --pod-selector {LWS_NAME}={n.workload}"  # the stack's pods only (GKE review round 54, m2)
    lines += [
        "# Only when two serving pools' windows open within a maintenance and a reload of each other (the ticket",
        "# 'TPU host maintenance windows close' names them), move the group of the first, onto a free slice whose",
        "# own window differs (docs/operate.md, 'Moving a group before its window'):",
    ]
    if n.empty_dir:
        lines.append(
            "# (--delete-emptydir-data: the serving pods mount emptyDir volumes, which drain refuses otherwise)"
        )
    lines += _hold(n)
    zones = by_zone if len(by_zone := _zones(n)) > 1 else {}  # one zone: nothing to hold, the group stays in it
    for zone, pools in zones.items():
        lines += _zone_move(n, zone, pools, flags)
    if not zones:
        lines += [*_add_group(n, None), *_drains(list(n.tpu_pools), flags)]
    return [*lines, *_unhold(n), *_restore_bounds(n, max_too=False)]


def _restore_bounds(n: Names, max_too: bool) -> list[str]:
    """The HPA's bounds back to the stack's, by the same kind of patch: ``pulumi up`` compares the program with its
    own state and does not see a patched HPA (tools/e2e/lifecycle.py: without --refresh it never sees the live
    object; with it, the patch's field manager owns the field); then a refreshed preview shows no change left."""
    if not n.hpas or n.min_replicas is None:
        return ["# done"]
    bounds = {"minReplicas": n.min_replicas, **({"maxReplicas": n.max_replicas} if max_too else {})}
    body = json.dumps({"spec": bounds}, separators=(",", ":"))
    return [
        "# Then the HPA's bounds back to the stack's (pulumi up does not see the patch and would not undo it):",
        *(f"kubectl -n {n.namespace} patch hpa {h} --type merge -p '{body}'" for h in n.hpas),
        "pulumi preview --refresh   # no change left for the HPA",
    ]


def _maintenance_section(n: Names) -> list[str]:
    lines = [
        '## TPU host maintenance (docs/operate.md, "TPU host maintenance")',
        f"kubectl get nodes -l '{_pool_nodes(list(n.tpu_pools))},cloud.google.com/scheduled-maintenance-time' \\",
        f"    -L cloud.google.com/scheduled-maintenance-time,{POOL_LABEL}   # pending, and when",
        *fb.class_maintenance_lines(n),
        *_group_map(n),
        *_cover_check(n),
    ]
    if not n.manual_start:  # a drain: its own checks see where each moved group lands
        return lines + _drain(n)
    body = lines + (whole_maintenance(n) if restarts_as_a_whole(n) else _manual_start(n))  # SRE 30, M2: all at once
    last, held = fb.class_after_maintenance_lines(n), _unhold(n)  # where the groups landed, before the HPA's release
    return body[: -len(held)] + last + held if held and body[-len(held) :] == held else body + last


def _cover_check(n: Names) -> list[str]:
    """No move while the gate covers a lost group (SRE review round 22, m4): the HPA's bounds are raised already."""
    if not n.gate:
        return []
    return [
        "# Not while the host-maintenance gate covers a lost group (this prints its annotation; empty: none): the",
        "# HPA's bounds are raised already and the steps below would add to them. Wait until the gate gives them back.",
        *_cover_annotation(n),
    ]


def _cover_annotation(n: Names) -> list[str]:
    """The command that prints each HPA's cover annotation (empty: no cover)."""
    key = COVER_ANNOTATION.replace(".", "\\.")
    return [f"kubectl -n {n.namespace} get hpa {h} -o jsonpath='{{.metadata.annotations.{key}}}'" for h in n.hpas]


def _lost_vm_section(n: Names) -> list[str]:
    if n.existing:  # the nodes are the cluster owner's: the namespace's own equivalent of the taint (SRE review 20)
        return [
            '## A VM that goes silent (docs/operate.md, "A VM that goes silent")',
            f"kubectl -n {n.namespace} get pods -o wide   # the group's pods on the silent node, Terminating",
            "# Only if the VM is gone for good: release its pods at once. The out-of-service taint is the cluster",
            "# owner's here; deleting the pods with no grace period is what it does (its pods have no volume to detach):",
            f"kubectl -n {n.namespace} delete pod <its pods> --grace-period=0 --force",
            "# Then tell the cluster owner: the node stays, NotReady, until they repair or remove it.",
        ]
    return [
        '## A VM that goes silent (docs/operate.md, "A VM that goes silent")',
        f"kubectl get nodes -l '{_pool_nodes(list(n.tpu_pools))}'   # the NotReady node",
        *fb.class_lost_vm_lines(n),
        f"kubectl -n {n.namespace} get pods -o wide --field-selector spec.nodeName=<node>   # its pods, Terminating",
        "# Only if the VM is gone for good: release its pods at once (non-graceful node shutdown).",
        "kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
        "# Once the node is back or replaced: remove the taint.",
        "kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute-",
    ]


def _zone_section(n: Names) -> list[str]:
    title = '## A zone outage (docs/operate.md, "A zone outage")'
    if not n.hpas and (n.other_hpas or n.kind != LWS):
        why = "a DisaggregatedSet's role HPAs" if n.other_hpas else f"a {n.kind}'s groups"
        return [title, f"# Not covered: {why}; the HPA patch that adds a group applies to a LeaderWorkerSet's HPA."]
    if len(zones := _zones(n)) == 1:  # SRE review round 17, m1: no surviving zone to add a group in
        (zone,) = zones
        return [
            title,
            f"# Every serving slice is in {zone}: its outage stops serving, and no group can be added elsewhere (the",
            "# stack file's tpuSlices[].zone spreads them). Wait for the zone; the groups come back on their slices.",
            *fb.class_zone_lines(n, one_zone=True),
        ]
    where = [*_group_map(n), *fb.class_zone_lines(n, one_zone=False)]  # SRE review of the runbook, M3
    if not n.hpas:
        return [title, *fixed_zone_lines(n, where, serving_again(n))]
    lines = [title, *where, *_lost_zone_autoscaling(zones, n, on=False), *_cover_lines(n)]
    lines += [
        "# Only if a pool of the surviving zone holds no group (a free slice; else the new group waits Pending all",
        "# outage): add one group now, the HPA's minimum and maximum to the groups the LeaderWorkerSet holds plus one.",
    ]
    for hpa in n.hpas:
        lines += [
            f"N=$(kubectl -n {n.namespace} get leaderworkerset {n.workload} -o jsonpath='{{.spec.replicas}}')",
            f"kubectl -n {n.namespace} patch hpa {hpa} --type merge "
            '-p "{\\"spec\\":{\\"minReplicas\\":$((N+1)),\\"maxReplicas\\":$((N+1))}}"',
        ]
    return [
        *lines,
        "# After the outage: wait until every group serves first. A maximum below the groups running scales down at",
        "# once, past the HPA's behaviour; LeaderWorkerSet keeps only maxSurge groups above the new count meanwhile.",
        *serving_again(n),
        *_lost_zone_autoscaling(zones, n, on=True),
        *_restore_bounds(n, max_too=True),
    ]


def _lost_zone_autoscaling(zones: dict[str, list[Pool]], n: Names, on: bool) -> list[str]:
    """The lost zone's autoscaled pools off first, and back after the outage (GKE review round 60, m3; SRE review
    round 22, m2): the added group's leader finds no node of its shape, so the cluster autoscaler picks the pool to
    grow, and an autoscaled pool of the dead zone fits as well as the surviving zone's; a node it cannot provision there is given
    up only after ``--max-node-provision-time`` (upstream default 15 minutes, kubernetes/autoscaler
    ``cluster-autoscaler/config/flags/flags.go``), while one group fewer carries the traffic."""
    lines = []
    for zone, pools in zones.items():
        if switched := [line for pool in pools for line in _autoscaler(n, pool, on)]:
            lines += [f"# If {zone} was the lost zone:" if on else f"# If {zone} is the lost zone:", *switched]
    if not lines:
        return []
    if on:
        return ["# The lost zone's pools back (before pulumi preview --refresh below, which would show them):", *lines]
    return [
        "# First, the lost zone's autoscaled pools: the autoscaler must not grow them for the group added below.",
        *lines,
    ]


def _cover_lines(n: Names) -> list[str]:
    """The gate's cover of a lost group, checked first (SRE review round 21, M1): by hand only without it."""
    if not n.gate:
        return []
    return [
        "# The host-maintenance gate covers the lost groups itself: on its run that pages, it raises the HPA's minimum",
        "# by them, and gives the stack's own bounds back once they serve again. Check it did (its annotation; its log",
        "# line says 'raising HPA ...'):",
        *_cover_annotation(n),
        "# Set: done, and do not patch the HPA too, nor run pulumi up on it, until the gate gives the bounds back.",
        "# Empty (the gate silent, or its patch refused): do it by hand, below. A gate that comes back keeps your raise",
        "# (none added while the minimum is above the stack's by the lost groups) and gives the stack's bounds back",
        "# itself once they serve; the restore below is then already done (SRE review round 29, M3).",
    ]


def render(plan: Mapping[str, Any], workload: str | None = None) -> str:
    """The runbook of ``plan``'s serving workload ``workload`` (``namespace/name``; None: the first): header,
    upgrades, host maintenance, a lost VM, a zone outage."""
    n = names(plan, workload)
    hpa = f", HPA {', '.join(n.hpas)}" if n.hpas else ", no HPA on it"
    if n.other_hpas:
        hpa += f" (its roles' HPAs {', '.join(n.other_hpas)} are not covered)"
    header = [
        f"# {n.stack}: the runbooks' commands in this stack's names (from its offline plan)",
        f"# cluster {n.cluster} ({n.location}), namespace {n.namespace}, {n.kind} {n.workload}{hpa}",
        *access_lines(n),
        f"# TPU pools: {', '.join(p.name + ('' if p.standing else ' (spare)' if p.spare else ' (from zero)') for p in n.tpu_pools)}",
    ]
    sections = [header, _upgrade_section(n), _maintenance_section(n), _lost_vm_section(n), _zone_section(n)]
    sections += [moved] if (moved := fb.fallback_section(plan, n)) else []
    return "\n\n".join("\n".join(s) for s in sections) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument(
        "--stack", required=True, help="the stack (stacks/Pulumi.<stack>.yaml, or Pulumi.<stack>.yaml beside a program)"
    )
    parser.add_argument("--root", type=Path, default=Path("."), help="the directory holding Pulumi.yaml")
    parser.add_argument(
        "--workload",
        metavar="NAMESPACE/NAME",
        help="the serving workload the runbook is for, in a program that serves several (default: the first)",
    )
    args = parser.parse_args(argv)
    from tpu_serving_tools.preview.offline import preview_stacks

    previewed = preview_stacks(args.root.resolve(), [args.stack])
    if previewed is None:
        return 2
    try:
        text = render(previewed[0][1], args.workload)
    except RunbookError as err:
        print(f"error: {args.stack}: no runbook: {err}", file=sys.stderr)
        return 1
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
