"""Each DisaggregatedSet role on its TPU slices, and each role's scale path.

Per role: every group of its child LeaderWorkerSets is scheduled (:func:`.scheduling.place`), on whole slices (the
group's TPU pods are exactly the VMs of one multi-host slice pool, each pod taking every chip of its VM), on pools no
other role's groups use; a placementPolicy other than None puts a slice's roles in one domain of its topology key
(:mod:`.ds_facts`). A role that cannot be scheduled fails, naming the role and the first reason.

Per HPA on a DisaggregatedSetRoleScaler: the scaler exists (the controller makes ``<ds>-<role>`` for External roles
only), the metric reaches the HPA (the Custom Metrics Stackdriver Adapter installed and allowed to read Cloud
Monitoring, a PodMonitoring scraping the leaders the scaler selects, the collectors let in), then the role's groups
from ``minReplicas`` to ``maxReplicas``, each new group on a slice provisioned from zero, and at ``maxReplicas`` a
rollout's surge groups (:data:`.ds_facts.DEFAULT_MAX_SURGE`): one that no slice takes stops every role's rollout.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from tpu_serving_tools.runtime import ds_facts as D
from tpu_serving_tools.runtime import metrics_adapter, pods_ds
from tpu_serving_tools.runtime.network_flows import COLLECTOR
from tpu_serving_tools.runtime.network_policy import Flow, Workload, _named_port, evaluate, peer_of, selector_matches
from tpu_serving_tools.runtime.network_policy import workloads as all_workloads
from tpu_serving_tools.runtime.node_pool import NodePool
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, hpa_bounds, pods_of
from tpu_serving_tools.runtime.quantities import scaled
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import (
    Placement,
    at_minimum,
    candidate_pools,
    group_pods,
    minimum_finding,
    node_pools,
    place,
    provision,
)

# --------------------------------------------------------------------------- roles on their slices

K = TypeVar("K")


def role_children(view: PlanView) -> Iterator[tuple[Mapping[str, Any], str, list[pods_ds.Child]]]:
    counts = {k: lo for k, (lo, _) in hpa_bounds(view).items()}
    for ds in view.kubernetes_objects(D.DS_KIND):
        kids = pods_ds.children(ds, counts)
        for role in dict.fromkeys(c.role for c in kids):
            yield ds, role, [c for c in kids if c.role == role]


def _whole_slice(group: Sequence[Pod], placement: Placement) -> str | None:
    """Why a placed group does not take exactly one whole slice (None: it does)."""
    tpu = [p for p in group if p.requests_tpu]
    pools = {placement.pool_of[p.key].name: placement.pool_of[p.key] for p in tpu}
    if len(pools) != 1:
        return f"its TPU pods span pools {', '.join(sorted(pools))}"
    (pool,) = pools.values()
    if pool.slice_vms is None and len(tpu) != 1:
        return f"pool {pool.name} is no multi-host slice (no TPU topology): its VMs are not one ICI domain"
    # A pool without a TPU topology is of single-host slices, each VM a slice of its own (GKE "TPUs in GKE":
    # single-host TPU slice node pools need no placement policy): one pod on one of its VMs takes a whole slice.
    if pool.slice_vms is not None and pool.slice_vms != len(tpu):
        return f"{len(tpu)} TPU pod(s) on slice {pool.name} of {pool.slice_vms} VMs: not the whole slice"
    chips = pool.allocatable.tpu if pool.allocatable else 0
    short = [p.name for p in tpu if p.requests.tpu != chips]
    if short:
        return f"pods {', '.join(short)} do not take all {chips:g} chips of their VM"
    return None


def _role_settings(view: PlanView) -> Mapping[str, Any]:
    """``serving.disaggregation`` of the settings: per role its settings (empty without)."""
    return ((view.setting("serving") or {}).get("disaggregation") or {}) if view.setting("serving") else {}


def pools_each_may_take(
    view: PlanView, pods: Sequence[Pod], owners: Mapping[K, Collection[tuple[str, str, str]]]
) -> dict[K, set[str]]:
    """Per key: the pools every one of its TPU pods (those of ``owners``: namespace, ``Kind/name`` and role, any role
    when it is ``""``) may land on, by their nodeSelector, node affinity and tolerations (none when it has no TPU
    pod). A DisaggregatedSet's roles and the plan's workloads (:mod:`.scheduling_tenants`) are held apart by it."""
    pools = node_pools(view)
    may: dict[K, set[str]] = {}
    for key, own in owners.items():
        tpu = [
            p
            for p in pods
            if p.requests_tpu and ((p.namespace, p.owner, p.role) in own or (p.namespace, p.owner, "") in own)
        ]
        may[key] = {pool.name for pool in pools if tpu and all(pool in candidate_pools(p, pools) for p in tpu)}
    return may


def _pools_each_role_may_take(
    view: PlanView, pods: Sequence[Pod], roles: Sequence[tuple[Any, str, list[pods_ds.Child]]]
) -> dict[tuple[str, str], set[str]]:
    """Per (ds, role): the pools every one of its TPU pods may land on (none when it has no TPU pod)."""
    return pools_each_may_take(
        view,
        pods,
        {
            (ds["metadata"]["name"], role): {(c.namespace, f"LeaderWorkerSet/{c.name}", "") for c in kids}
            for ds, role, kids in roles
        },
    )


def _shared_pools_text(a: str, b: str, shared: Sequence[str], slices: Sequence[Any]) -> str:
    """Why role ``a`` is not on slices of its own: role ``b``'s pods select ``shared`` too."""
    return (
        f"its pods may land on {', '.join(shared)}, which role {b}'s pods select too: nothing in its "
        f"selectors or affinity keeps it on slices of its own (settings: {a} on slice {slices[0]!r}, "
        f"{b} on {slices[1]!r}); on a cluster either role may take the other's slices"
    )


def _own_pools(
    view: PlanView, pods: Sequence[Pod], roles: Sequence[tuple[Any, str, list[pods_ds.Child]]]
) -> dict[tuple[str, str], list[str]]:
    """Per (ds, role): the pools its TPU pods may land on, and the roles that may land there too although the
    settings give them other slices (``serving.disaggregation.<role>.slice``; roles without settings count as apart)."""
    may = _pools_each_role_may_take(view, pods, roles)
    wanted = _role_settings(view)
    out: dict[tuple[str, str], list[str]] = {}
    for (ds, a), mine in may.items():
        for (other_ds, b), theirs in may.items():
            slices = [(wanted.get(r) or {}).get("slice") for r in (a, b)]
            if (ds, a) == (other_ds, b) or (slices[0] is not None and slices[0] == slices[1]):
                continue
            shared = sorted(mine & theirs)
            if shared:
                out.setdefault((ds, a), []).append(_shared_pools_text(a, b, shared, slices))
    return out


def _pools_in_use(
    roles: Sequence[tuple[Any, str, list[pods_ds.Child]]], pods: Sequence[Pod], placement: Placement
) -> dict[str, str]:
    """Per pool: the first role (``<ds>/<role>``) whose placed pods use it."""
    used: dict[str, str] = {}
    for ds, role, kids in roles:
        name = ds["metadata"]["name"]
        for c in kids:
            for p in pods:
                if p.owner == f"LeaderWorkerSet/{c.name}" and p.key in placement.pool_of:
                    used.setdefault(placement.pool_of[p.key].name, f"{name}/{role}")
    return used


def _unscheduled_finding(subject: str, role: str, mine: Sequence[Pod], placement: Placement) -> Finding | None:
    """The role's failure when it runs no group or a pod of it is pending; None when every pod is placed."""
    pending = [p for p in mine if p.key not in placement.node_of]
    if not mine:
        return Finding(subject, False, f"role {role} runs no group (0 replicas): nothing serves its stage")
    if pending:
        why = placement.failure[pending[0].key]
        return Finding(subject, False, f"role {role} cannot be scheduled: pod {pending[0].name}: {why}")
    return None


def _group_problems(
    kids: Sequence[pods_ds.Child], mine: Sequence[Pod], placement: Placement, used: Mapping[str, str], me: str
) -> tuple[list[str], list[str]]:
    """Each group of the role (``me``, ``<ds>/<role>``): its problems (not a whole slice, a pool another role
    uses) and where it runs."""
    problems, where = [], []
    for c in kids:
        owner = f"LeaderWorkerSet/{c.name}"
        for g in range(c.replicas):
            group = group_pods(mine, owner, g)
            slice_problem = _whole_slice(group, placement)
            pools = sorted({placement.pool_of[p.key].name for p in group})
            others = [used[p] for p in pools if used.get(p) not in (None, me)]
            if slice_problem:
                problems.append(f"group {g}: {slice_problem}")
            if others:
                problems.append(f"group {g} shares pool {', '.join(pools)} with role {others[0]}")
            where.append(f"group {g} on {' + '.join(pools)}")
    return problems, where


def role_findings(view: PlanView, pods: Sequence[Pod], placement: Placement) -> list[Finding]:
    """One finding per DisaggregatedSet role: all its groups on whole slices of pools of its own."""
    out = []
    roles = list(role_children(view))
    shared = _own_pools(view, pods, roles)
    used = _pools_in_use(roles, pods, placement)
    for ds, role, kids in roles:
        ns, name = ds["metadata"].get("namespace", "default"), ds["metadata"]["name"]
        subject = f"role {ns}/{name} {role}"
        mine = [p for c in kids for p in pods if p.owner == f"LeaderWorkerSet/{c.name}"]
        refused = _unscheduled_finding(subject, role, mine, placement)
        if refused is not None:
            out.append(refused)
            continue
        groups, where = _group_problems(kids, mine, placement, used, f"{name}/{role}")
        problems = [*shared.get((name, role), []), *groups]
        out.append(
            Finding(
                subject,
                not problems,
                f"role {role}: " + ("; ".join(problems) if problems else f"{', '.join(where)}, each a whole slice"),
            )
        )
        out += _placement_finding(ds, kids, pods, placement) if role == kids[0].role and ds is roles[0][0] else []
    return out


def _placement_finding(
    ds: Mapping[str, Any], kids: Sequence[pods_ds.Child], pods: Sequence[Pod], placement: Placement
) -> list[Finding]:
    """A placementPolicy other than None: every pod of a slice, all roles, in one domain of its topology key
    (affinity.go:60-69)."""
    policy = (ds.get("spec") or {}).get("placementPolicy") or {}
    if str(policy.get("type", "")) in D.PLACEMENT_NONE or not policy.get("topology"):
        return []
    key, name = str(policy["topology"]), ds["metadata"]["name"]
    every = pods_ds.children(ds)
    out = []
    for s in sorted({c.slice for c in every}):
        owners = {f"LeaderWorkerSet/{c.name}" for c in every if c.slice == s}
        domains = {
            placement.pool_of[p.key].labels.get(key, placement.node_of[p.key])
            for p in pods
            if p.owner in owners and p.key in placement.pool_of
        }
        ok = len(domains) <= 1
        out.append(
            Finding(
                f"role {ds['metadata'].get('namespace', 'default')}/{name} slice {s} placement",
                ok,
                f"{policy['type']} puts slice {s}'s roles in one {key} domain"
                + ("" if ok else f", but they land in {', '.join(sorted(domains))}: the required podAffinity fails"),
            )
        )
    return out


# --------------------------------------------------------------------------- scale paths


def _leaders(view: PlanView, ns: str, ds: str, role: str) -> list[Any]:
    """The workloads the scaler's status.selector picks: the role's leaders (scaler_manager.go:177-187)."""
    sel = {"matchLabels": {D.DS_NAME_LABEL: ds, D.DS_ROLE_LABEL: role, "leaderworkerset.sigs.k8s.io/worker-index": "0"}}
    return [w for w in all_workloads(view) if w.namespace == ns and selector_matches(sel, w.labels)]


def _scrapes(view: PlanView, ns: str, w: Workload) -> list[tuple[str, int]]:
    """The PodMonitorings of namespace ``ns`` that select workload ``w``: (name, port) per endpoint that resolves."""
    scrapes = []
    for pm in view.kubernetes_objects("PodMonitoring"):
        spec = pm.get("spec") or {}
        if pm["metadata"].get("namespace", "default") == ns and selector_matches(spec.get("selector"), w.labels):
            for ep in spec.get("endpoints") or ():
                port = ep["port"] if isinstance(ep["port"], int) else _named_port(w, str(ep["port"]))
                if port is not None:
                    scrapes.append((pm["metadata"]["name"], int(port)))
    return scrapes


def _leader_problems(view: PlanView, ns: str, w: Workload) -> list[str]:
    """Leader workload ``w``: a PodMonitoring scrapes it, and the collectors reach each port scraped."""
    problems = []
    scrapes = _scrapes(view, ns, w)
    if not scrapes:
        problems.append(f"no PodMonitoring scrapes {w.name}, whose pods the HPA averages over")
    for pm_name, port in scrapes:
        verdict = evaluate(view, Flow(COLLECTOR, peer_of(w), port, why=f"PodMonitoring {pm_name}"))
        if not verdict.ok:
            problems.append(f"the collectors cannot scrape {w.name}:{port}: {verdict.reason}")
    return problems


def metric_finding(view: PlanView, hpa: Mapping[str, Any], ns: str, ds: str, role: str) -> Finding:
    """From the role's metric to the HPA: adapter, PodMonitoring on the scaler's pods, the collectors let in."""
    name = hpa["metadata"]["name"]
    subject = f"scale {ns}/{name} metric"
    metrics = [m["pods"]["metric"]["name"] for m in hpa["spec"].get("metrics") or () if m.get("type") == "Pods"]
    managed = [m for m in metrics if str(m).startswith(metrics_adapter.MANAGED_PROMETHEUS + "|")]
    if not managed:
        return Finding(subject, True, "no Managed Prometheus Pods metric (not modelled)")
    problems = [why] if (why := metrics_adapter.problem(view)) else []
    leaders = _leaders(view, ns, ds, role)
    if not leaders:
        problems.append(f"the scaler selects no pod (role {role}'s leaders)")
    for w in leaders:
        problems += _leader_problems(view, ns, w)
    metric = managed[0].split("|")[1]
    return Finding(
        subject,
        not problems,
        "; ".join(problems) or f"{metric} scraped from role {role}'s leaders, served to the HPA by the adapter",
    )


def _scaler_role(view: PlanView, ns: str, scaler: str) -> tuple[str, Mapping[str, Any]] | None:
    """The DisaggregatedSet (its name) and the role whose scaler ``scaler`` is, if any."""
    for ds in view.kubernetes_objects(D.DS_KIND):
        if ds["metadata"].get("namespace", "default") != ns:
            continue
        for role in (ds.get("spec") or {}).get("roles") or ():
            if pods_ds.is_external(role) and pods_ds.scaler_name(ds["metadata"]["name"], role["name"]) == scaler:
                return str(ds["metadata"]["name"]), role
    return None


def _step(
    view: PlanView, key: tuple[str, str, str], owner: str, count: int, pools: list[NodePool], originals: Any
) -> tuple[bool, str]:
    """Group ``count - 1`` of the role up: on nodes already up, else on a slice provisioned from zero. The groups up
    before it keep their nodes (it is placed last): the pods placed before the step must stay placed (a pod pending
    already, of another role, is that role's failure, not this step's)."""
    every = pods_of(view, {key: count})
    group = group_pods(every, owner, count - 1)
    pods = [p for p in every if p not in group] + group
    up = set(place(pods_of(view, {key: count - 1}), pools).node_of)
    watched = [p for p in pods if p in group or p.key in up]
    before = place(pods, pools)
    if all(p.key in before.node_of for p in watched):
        return True, f"group {count - 1} fits on nodes already up"
    what, ok = provision(group, pools, originals)
    if not ok:
        return False, f"group {count - 1} pending; {what}"
    after = place(pods, pools)
    pending = [p for p in watched if p.key not in after.node_of]
    if pending:
        return False, f"group {count - 1} pending; {what}; still pending: {after.failure[pending[0].key]}"
    return True, f"group {count - 1} pending; {what}; group scheduled on {after.pool_of[group[0].key].name}"


def scale_findings(view: PlanView) -> list[Finding]:
    """Per HPA on a DisaggregatedSetRoleScaler: its target, its metric path, its minimum, each step to its maximum."""
    out = []
    hpas = {
        (h["metadata"].get("namespace", "default"), (h["spec"].get("scaleTargetRef") or {}).get("name")): h
        for h in view.kubernetes_objects("HorizontalPodAutoscaler")
    }
    originals = {p.name: p for p in node_pools(view)}
    for key, (lo, hi) in hpa_bounds(view).items():
        ns, kind, scaler = key
        if kind != D.SCALER_KIND:
            continue
        found = _scaler_role(view, ns, scaler)
        if found is None:
            why = (
                "no DisaggregatedSet role with scaling.mode External makes this scaler (scaler_manager.go:57, :103-118)"
            )
            out.append(Finding(f"scale {ns}/{scaler}", False, f"{why}: the HPA has no /scale target"))
            continue
        ds, spec = found
        role = str(spec["name"])
        out.append(metric_finding(view, hpas[(ns, scaler)], ns, ds, role))
        owner = f"LeaderWorkerSet/{pods_ds.child_name(ds, 0, role)}"
        pools = [at_minimum(p) for p in originals.values()]
        prefix = f"{ns}/{owner.split('/', 1)[1]}-"
        out.append(minimum_finding(view, key, lo, pools, prefix, f"scale {ns}/{scaler}", f"role {role}: "))
        for replicas in range(lo + 1, hi + 1):
            ok, what = _step(view, key, owner, replicas, pools, originals)
            out.append(Finding(f"scale {ns}/{scaler} {replicas - 1} -> {replicas}", ok, f"role {role}: {what}"))
        for extra in range(1, _surge(spec, hi) + 1):
            ok, what = _step(view, key, owner, hi + extra, pools, originals)
            stalls = (
                "" if ok else "; the new revision never gets ready, so no old group goes: every role's rollout stops"
            )
            out.append(
                Finding(
                    f"scale {ns}/{scaler} rollout surge {extra} at {hi}",
                    ok,
                    f"role {role}: a rollout at the HPA's maximum, the new revision's surge group: {what}{stalls}",
                )
            )
    return out


def _surge(role: Mapping[str, Any], replicas: int) -> int:
    """The surge groups of a rollout of ``role`` at ``replicas`` (:data:`.ds_facts.DEFAULT_MAX_SURGE`)."""
    conf = ((role.get("spec") or {}).get("rolloutStrategy") or {}).get("rollingUpdateConfiguration")
    if conf is None:
        return D.DEFAULT_MAX_SURGE
    surge = scaled(conf.get("maxSurge", 0), replicas, round_up=True)
    unavailable = scaled(conf.get("maxUnavailable", 0), replicas, round_up=False)
    return surge if unavailable > 0 or surge > 0 else D.DEFAULT_MAX_SURGE
