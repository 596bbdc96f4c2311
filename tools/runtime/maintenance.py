"""``maintenance``: does each serving that keeps two or more standing LeaderWorkerSet groups in different node pools
have a host-maintenance gate? An advisory category: its findings are warnings, and ``tpu-serving check`` does not
fail on them (a stack may choose the ticket alone, ``hostMaintenance.mode: ticket``).

TPU VMs do not live-migrate, and a host event on one VM of a slice stops the whole slice, on Google's schedule: GKE
"Manage GKE node disruption for GPUs and TPUs" (cloud.google.com/kubernetes-engine/docs/concepts/handle-disruption-
gpu-tpu): "When a host event happens to the VM within a TPU slice, the entire slice gets interrupted", and host events
"bypass GKE maintenance policies and exclusions"; "Manage AI-optimized GKE clusters" (cloud.google.com/ai-hypercomputer/
docs/manage/manage-gke-clusters): "GPUs and TPUs don't support live migration" (the sources
``tpu_serving.backends.rollout.HOST_MAINTENANCE`` quotes). Two pools' windows can overlap, so two standing groups in two
pools keep one serving only if something keeps their maintenance apart: the gate (``tpu_serving.HostMaintenanceGate``)
starts one pool's at a time where Cloud TPU lists a manual start, and elsewhere watches and pages close windows.

Read off the plan alone, as the rest of the runtime model: the LeaderWorkerSets it declares, the standing groups (an
HPA's ``minReplicas``, else ``spec.replicas``: :func:`.pods.pods_of`), the node pool the model places each group on
(:func:`.scheduling.place`), and the CronJobs whose container's environment names the LeaderWorkerSet
(``LEADER_WORKER_SETS``) and the pools (``POOLS``), which is how the gate's CronJob carries its settings. A plan with
no LeaderWorkerSet says so: it is no gated plan.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime.k8s_prereqs import PRIORITY_REFUSED, declared_priority_classes
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import hpa_bounds, pods_of, scaled_by
from tpu_serving_tools.runtime.result import CategoryResult, Finding
from tpu_serving_tools.runtime.scheduling import at_minimum, landing_pools, node_pools, place

CATEGORY = "maintenance"
NONE_SUBJECT = "maintenance leaderworkersets"
"""The finding of a plan with no LeaderWorkerSet."""
DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
"""A stack file's program: its gate is the stack file's ``hostMaintenance``."""
LIBRARY_ADVICE = (
    "add tpu_serving.HostMaintenanceGate beside the serving: HostMaintenanceGateArgs(namespace={ns!r}, pools={pools!r}, "
    "leader_worker_sets=({name!r},), fewest_groups={groups}{autoscalers}, starts=tpu_serving.operations.maintenance.host_maintenance."
    'manual_start_listed(<the pools\' shape>)) (docs/library-api.md, "Host maintenance and the image mirror")'
)
STACK_ADVICE = 'hostMaintenance.mode: start (the default) runs it; docs/operate.md, "TPU host maintenance"'


@dataclass(frozen=True)
class Gate:
    """A CronJob of the plan that carries a host-maintenance gate's settings."""

    name: str
    namespace: str
    leader_worker_sets: tuple[str, ...]
    pools: tuple[str, ...]
    starts: bool
    priority_class: str = ""
    """Its pod's ``priorityClassName`` (empty: none)."""


def gate_starts(env: Mapping[str, str]) -> bool:
    """Whether the gate of environment ``env`` starts maintenance (``STARTS``, true unless ``false``) or watches."""
    return env.get("STARTS", "true") != "false"


def _gate(name: str, namespace: str, pod: Mapping[str, Any], env: Mapping[str, str]) -> Gate:
    """The gate whose container's environment is ``env``, in the CronJob ``namespace/name`` of pod spec ``pod``."""
    return Gate(
        name,
        namespace,
        tuple(x for x in env["LEADER_WORKER_SETS"].split(",") if x),
        tuple(x for x in env["POOLS"].split(",") if x),
        gate_starts(env),
        str(pod.get("priorityClassName") or ""),
    )


def gate_environments(view: PlanView) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, str]]]:
    """(namespace, name, pod spec, environment) of each CronJob whose container names LeaderWorkerSets and pools in
    its environment, as the host-maintenance gate carries its settings: the one reader of them (the maintenance,
    references and wiring findings)."""
    for cron in view.kubernetes_objects("CronJob"):
        meta = cron.get("metadata") or {}
        job = (((cron.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        pod = job.get("spec") or {}
        for c in pod.get("containers") or ():
            env = {str(e.get("name")): str(e.get("value") or "") for e in c.get("env") or ()}
            if "LEADER_WORKER_SETS" in env and "POOLS" in env:
                yield str(meta.get("namespace", "default")), str(meta.get("name")), pod, env


def gates(view: PlanView) -> list[Gate]:
    """The plan's CronJobs whose container names LeaderWorkerSets and pools in its environment."""
    return [_gate(name, ns, pod, env) for ns, name, pod, env in gate_environments(view)]


def _zones(view: PlanView) -> dict[str, str]:
    """Each created node pool's zones, by pool name."""
    return {
        str(r["inputs"].get("name") or r["name"]): ", ".join(str(z) for z in r["inputs"].get("nodeLocations") or ())
        for r in view.of_type(NODE_POOL)
    }


def standing_pools(view: PlanView) -> dict[tuple[str, str], list[str]]:
    """(namespace, name) of each LeaderWorkerSet the plan declares -> the node pool of each standing group the model
    places (a group it cannot place has none: the scheduling category says why)."""
    declared = [
        (str((o.get("metadata") or {}).get("namespace", "default")), str((o.get("metadata") or {}).get("name")))
        for o in view.kubernetes_objects("LeaderWorkerSet")
    ]
    if not declared:
        return {}
    pods = pods_of(view)
    # on the pools as they start: a pool that scales from zero holds no standing group (library review 3, M3)
    placement = place(pods, [at_minimum(p) for p in node_pools(view)])
    out: dict[tuple[str, str], list[str]] = {}
    for ns, name in declared:
        groups: dict[str, str] = {}
        for p in pods:
            if p.owner == f"LeaderWorkerSet/{name}" and p.namespace == ns and p.key in placement.pool_of:
                groups.setdefault(p.group, placement.pool_of[p.key].name)
        out[(ns, name)] = [groups[g] for g in sorted(groups)]
    return out


def reachable_pools(view: PlanView) -> dict[tuple[str, str], list[str]]:
    """(namespace, name) of each LeaderWorkerSet -> every node pool its pods may land on (node selector, affinity,
    tolerations, size), the pools that start empty too: a group recreated after a repair, or one the HPA adds, goes
    to any of them, and a gate that does not read one neither starts nor watches it there (library review 12, M1)."""
    pools = node_pools(view)
    out: dict[tuple[str, str], set[str]] = {}
    for p in pods_of(view):
        kind, _, name = p.owner.partition("/")
        if kind == "LeaderWorkerSet":
            out.setdefault((p.namespace, name), set()).update(pool.name for pool in landing_pools(p, pools))
    return {k: sorted(v) for k, v in out.items()}


def _advice(view: PlanView, ns: str, name: str, pools: Sequence[str], groups: int) -> str:
    """What to do: a library program's gate with what the plan says of the serving (``pools``: every pool its groups
    may run on; ``groups``: the standing ones), or a stack file's key."""
    if not any(r["type"] == DEPLOYMENT for r in view.resources):
        hpas = scaled_by(view).get((ns, "LeaderWorkerSet", name), ())
        bounds = hpa_bounds(view).get((ns, "LeaderWorkerSet", name))
        own = f", autoscaler_bounds={ {h: bounds for h in hpas}!r}" if hpas and bounds else ""  # SRE review 29, M3
        return LIBRARY_ADVICE.format(
            ns=ns,
            pools=tuple(sorted(set(pools))),
            name=name,
            groups=groups,
            autoscalers=f", autoscalers={hpas!r}{own}" if hpas else "",
        )
    setting = view.setting("hostMaintenance")
    mode = setting.get("mode") if isinstance(setting, dict) else None
    chosen = f"the stack file says hostMaintenance.mode: {mode}; " if mode else ""
    return chosen + STACK_ADVICE


def _ungated(
    view: PlanView, ns: str, name: str, pools: Sequence[str], every: Sequence[str], found: Sequence[Gate], head: str
) -> str:
    """Why the groups of ``ns/name`` are ungated (``head``: how many stand where): a gate of the namespace that names
    other LeaderWorkerSets (library review 13, m4: told to add a gate, the user would add a second one beside a
    misnamed first), or none."""
    risk = "TPU VMs do not live-migrate, and two pools' maintenance windows can overlap and stop every group at once; "
    beside = next((g for g in found if g.namespace == ns), None)
    if beside is not None:
        names = ", ".join(beside.leader_worker_sets) or "(none)"
        return (
            f"{head}the host-maintenance gate CronJob {ns}/{beside.name} names LeaderWorkerSets {names}, not {name}: "
            f"{risk}add {name!r} to that gate's leader_worker_sets (a typo of the name?)"
        )
    return f"{head}no host-maintenance gate CronJob: {risk}" + _advice(view, ns, name, every, len(pools))


def _finding(
    view: PlanView, ns: str, name: str, pools: Sequence[str], found: Sequence[Gate], reach: Sequence[str]
) -> Finding:
    """``pools``: those of the standing groups as the pools start; ``reach``: every pool the groups may land on."""
    subject = f"gate LeaderWorkerSet {ns}/{name}"
    apart, every = sorted(set(pools)), sorted({*pools, *reach})
    if len(pools) < 2:
        return Finding(subject, True, f"{len(pools)} standing group(s) placed: no other group to keep serving")
    if len(apart) < 2:
        return Finding(
            subject,
            True,
            f"{len(pools)} standing groups all in pool {apart[0]}: a gate, which starts one pool at a time, cannot "
            "keep one serving (spread them over pools)",
        )
    zones = _zones(view)
    where = ", ".join(f"{p} ({zones[p]})" if zones.get(p) else p for p in apart)
    gate = next((g for g in found if g.namespace == ns and name in g.leader_worker_sets), None)
    if gate is None:
        head = f"{len(pools)} standing groups in {len(apart)} node pools, {where}, and "
        return Finding(subject, False, _ungated(view, ns, name, pools, every, found, head))
    missing = [p for p in every if p not in gate.pools]
    if missing:
        return Finding(
            subject,
            False,
            f"the host-maintenance gate CronJob {ns}/{gate.name} leaves out pool(s) {', '.join(missing)} its groups "
            f"may run on (a group recreated after a repair, or added by the HPA, lands on any pool its pods fit; "
            f"POOLS: {', '.join(gate.pools)}): their maintenance goes ungated and a lost node there pages nobody",
        )
    if gate.priority_class and gate.priority_class not in declared_priority_classes(view):
        return Finding(
            subject,
            False,
            f"the host-maintenance gate CronJob {ns}/{gate.name} never runs: its pod's PriorityClass "
            f"{gate.priority_class} is not in the plan, and {PRIORITY_REFUSED}; pass HostMaintenanceGate a "
            "priority_class_name the cluster has, or None",
        )
    does = "starts their maintenance one pool at a time" if gate.starts else "watches them (starts nothing)"
    return Finding(subject, True, f"{len(pools)} standing groups in {where}; CronJob {ns}/{gate.name} {does}")


def check(view: PlanView) -> CategoryResult:
    """One finding per LeaderWorkerSet (gated, not needed, or a warning), or one that says the plan has none."""
    standing = standing_pools(view)
    if not standing:
        reason = "no LeaderWorkerSet in the plan: no standing groups for a host-maintenance gate to keep serving"
        return CategoryResult(CATEGORY, [Finding(NONE_SUBJECT, True, reason)])
    found, reach = gates(view), reachable_pools(view)
    return CategoryResult(
        CATEGORY,
        [_finding(view, ns, name, pools, found, reach.get((ns, name), ())) for (ns, name), pools in standing.items()],
    )


def summary_part(result: CategoryResult) -> str:
    """The check's summary-line part: the LeaderWorkerSets with standing groups apart that a gate covers, or why
    there is nothing to count."""
    if any(f.subject == NONE_SUBJECT for f in result.findings):
        return "host-maintenance gate: no LeaderWorkerSet"
    apart = [f for f in result.findings if not f.ok or "CronJob" in f.reason]
    if not apart:
        return "host-maintenance gate: no LeaderWorkerSet with standing groups in two pools"
    return f"standing groups apart gated {sum(f.ok for f in apart)}/{len(apart)}"


def preview_lines(view: PlanView) -> list[str]:
    """The ``Maintenance:`` lines of a library program's preview (a stack file's program has its own, from its
    ``rollout`` output): one per LeaderWorkerSet, a warning where standing groups in two pools have no gate."""
    if any(r["type"] == DEPLOYMENT for r in view.resources):
        return []
    findings = [f for f in check(view).findings if f.subject != NONE_SUBJECT]
    return [
        f"Maintenance: {'' if f.ok else 'warning: '}{f.subject.removeprefix('gate ')}: {f.reason}" for f in findings
    ]
