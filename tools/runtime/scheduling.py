"""Would every pod be scheduled, and would the namespace quota admit them?

Node pools come from the plan's ``gcp:container/nodePool:NodePool`` resources, and on an existing cluster from the
pools the plan records as existing (:mod:`tools.runtime.existing`), with GKE's node
labels and taints (:mod:`.facts`) and allocatable (:mod:`.machine_facts`). Placement is a greedy
first-fit: sets with exclusive topology (an LWS group or sub-group, a JobSet child Job) first,
largest TPU demand first, each onto the first topology domain (node pool, or node for
``kubernetes.io/hostname``) that holds all of it; then every other pod, largest CPU first. A real
scheduler may find a placement the greedy one misses only in contrived cases; it never places a
pod the model rejects for selector, taint, size or host-port reasons.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime import machine_facts as M
from tpu_serving_tools.runtime.existing import existing_node_pools
from tpu_serving_tools.runtime.node_pool import NodePool, allocatable, boot_disk_gb, most_and_start
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, Resources, pods_of
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.text import counted, plural

ACCOUNT_TYPE = "gcp:serviceaccount/account:Account"


def _service_account_urn(view: PlanView, resource: Mapping[str, Any]) -> str | None:
    """The Account URN that flows into ``nodeConfig`` (the node service account)."""
    config = resource["inputs"].get("nodeConfig") or {}
    if not config.get("serviceAccount"):
        return None
    accounts = [r for r in view.input_source(resource, "nodeConfig") if r["type"] == ACCOUNT_TYPE]
    if accounts:
        return str(accounts[0]["urn"])
    email = str(config["serviceAccount"])
    for acc in view.of_type(ACCOUNT_TYPE):
        if email.startswith(f"{acc['inputs'].get('accountId')}@"):
            return str(acc["urn"])
    return email


def node_pools(view: PlanView) -> list[NodePool]:
    """The plan's node pools with GKE's labels, taints, sizes and allocatable."""
    pools = []
    for r in view.of_type(NODE_POOL):
        inputs = r["inputs"]
        config = inputs.get("nodeConfig") or {}
        name = str(inputs.get("name") or r["name"])
        mt = str(config.get("machineType", "e2-medium"))
        zones = max(1, len(inputs.get("nodeLocations") or ()))
        nodes, min_nodes = most_and_start(inputs, zones)
        labels = {**(config.get("labels") or {}), F.NODEPOOL_LABEL: name}
        taints = [
            (
                str(t.get("key")),
                str(t.get("value", "")),
                F.NODE_TAINT_EFFECTS.get(str(t.get("effect")), str(t.get("effect"))),
            )
            for t in config.get("taints") or ()
        ]
        if mt in M.TPU_MACHINES:
            tpu_vm = M.TPU_MACHINES[mt]
            topology = (inputs.get("placementPolicy") or {}).get("tpuTopology") or tpu_vm.single_host_topology
            labels[F.TPU_ACCELERATOR_LABEL] = tpu_vm.accelerator
            labels[F.TPU_TOPOLOGY_LABEL] = topology
            taints.append(F.TPU_TAINT)
        if config.get("spot"):
            labels[F.SPOT_LABEL] = "true"
        placement = inputs.get("placementPolicy") or {}
        slice_vms = nodes if mt in M.TPU_MACHINES and placement.get("tpuTopology") else None
        pools.append(
            NodePool(
                name,
                str(r["urn"]),
                mt,
                nodes,
                labels,
                tuple(taints),
                allocatable(mt),
                _service_account_urn(view, r),
                min_nodes,
                slice_vms,
                tuple(str(z) for z in inputs.get("nodeLocations") or ()),
                disk_size_gb=boot_disk_gb(config),
            )
        )
    return pools + existing_node_pools(view)


# --------------------------------------------------------------------------- pod/pool matching


def tolerates_all(pod: Pod, taints: Iterable[tuple[str, str, str]]) -> bool:
    """Whether the pod tolerates every NoSchedule/NoExecute taint (with GKE's injected TPU toleration)."""
    for key, value, effect in taints:
        if effect == "PreferNoSchedule":
            continue
        if F.EXTENDED_RESOURCE_TOLERATION and key == F.TPU_RESOURCE and pod.requests_tpu and effect == "NoSchedule":
            continue
        if not any(t.tolerates(key, value, effect) for t in pod.tolerations):
            return False
    return True


def _expression_matches(expr: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op, values = str(expr.get("key")), str(expr.get("operator")), [str(v) for v in expr.get("values") or ()]
    if key == F.HOSTNAME_LABEL and op in ("In", "Exists"):
        return True  # some node of the pool has each hostname
    value = labels.get(key)
    return {
        "In": value in values,
        "NotIn": value not in values,
        "Exists": value is not None,
        "DoesNotExist": value is None,
        "Gt": value is not None and value.isdigit() and bool(values) and int(value) > int(values[0]),
        "Lt": value is not None and value.isdigit() and bool(values) and int(value) < int(values[0]),
    }.get(op, False)


def selector_matches(pod: Pod, pool: NodePool) -> bool:
    """Whether the pool's node labels satisfy the pod's nodeSelector (hostname matches any node) and one of its
    required node affinity terms, if any."""
    if not all(k == F.HOSTNAME_LABEL or pool.labels.get(k) == v for k, v in pod.node_selector.items()):
        return False
    terms = pod.node_affinity
    return not terms or any(all(_expression_matches(e, pool.labels) for e in term) for term in terms)


def candidate_pools(pod: Pod, pools: Sequence[NodePool]) -> list[NodePool]:
    """Pools whose nodes the pod's nodeSelector and tolerations admit (resources not considered)."""
    return [p for p in pools if selector_matches(pod, p) and tolerates_all(pod, p.taints)]


def landing_pools(pod: Pod, pools: Sequence[NodePool]) -> list[NodePool]:
    """Candidate pools with nodes big enough for the pod's requests (unknown machine types kept)."""
    return [p for p in candidate_pools(pod, pools) if p.allocatable is None or pod.requests.fits_in(p.allocatable)]


# --------------------------------------------------------------------------- placement


@dataclass
class _Node:
    pool: NodePool
    name: str
    free: Resources
    ports: set[int] = field(default_factory=set)
    pods: list[Pod] = field(default_factory=list)


@dataclass
class Placement:
    """Where each pod went, or why it could not go anywhere."""

    node_of: dict[str, str] = field(default_factory=dict)
    """Pod key -> ``pool/node``."""
    pool_of: dict[str, NodePool] = field(default_factory=dict)
    failure: dict[str, str] = field(default_factory=dict)
    """Pod key -> reason."""


class _Cluster:
    """Mutable node state for the greedy placement."""

    def __init__(self, pools: Sequence[NodePool]):
        self.pools = list(pools)
        self.nodes = {
            p.name: [_Node(p, f"{p.name}-{i}", p.allocatable) for i in range(p.nodes)]
            for p in pools
            if p.allocatable is not None
        }
        self.owner: dict[tuple[str, str], tuple[str, str]] = {}
        """(topology key, domain) -> (family, exclusive set) that took it."""

    @staticmethod
    def domain(node: _Node, key: str) -> str:
        return node.name if key == F.HOSTNAME_LABEL else node.pool.labels.get(key, "")

    def fits(self, pod: Pod, node: _Node) -> bool:
        if not pod.requests.fits_in(node.free) or pod.host_ports & node.ports:
            return False
        for (key, dom), (family, owner_set) in self.owner.items():
            if self.domain(node, key) == dom and family == pod.family and owner_set != pod.exclusive_set:
                return False
        return True

    def put(self, pod: Pod, node: _Node) -> None:
        node.free = node.free - pod.requests
        node.ports |= pod.host_ports
        node.pods.append(pod)

    def domains(self, key: str, pools: Sequence[NodePool]) -> list[list[_Node]]:
        """The topology domains (lists of nodes) of ``key`` within ``pools``."""
        out: dict[str, list[_Node]] = {}
        for pool in pools:
            for node in self.nodes.get(pool.name, ()):
                out.setdefault(self.domain(node, key), []).append(node)
        return list(out.values())

    def family_pods_in(self, nodes: Sequence[_Node], pod: Pod) -> bool:
        return any(p.family == pod.family and p.exclusive_set != pod.exclusive_set for n in nodes for p in n.pods)


def _place_one(cluster: _Cluster, pod: Pod, nodes: Sequence[_Node]) -> _Node | None:
    for node in nodes:
        if cluster.fits(pod, node):
            cluster.put(pod, node)
            return node
    return None


def _selector_why(pod: Pod) -> str:
    """No pool matches the pod's node selector (and node affinity)."""
    affinity = f" and node affinity {[list(t) for t in pod.node_affinity]}" if pod.node_affinity else ""
    return f"no node pool has labels {dict(pod.node_selector)}{affinity}"


def _taint_why(matching: Sequence[NodePool]) -> str:
    """Every pool that matches is tainted against the pod."""
    taints = sorted({f"{k}={v}:{e}" for p in matching for k, v, e in p.taints})
    return (
        f"pools {', '.join(p.name for p in matching)} are tainted {', '.join(taints)} and the pod does not tolerate it"
    )


def _too_big_why(pod: Pod, known: Sequence[NodePool]) -> str:
    """The pod's requests exceed every known pool's node."""
    biggest = max(known, key=lambda p: (p.allocatable.cpu, p.allocatable.memory))  # type: ignore[union-attr]
    return (
        f"needs {pod.requests.describe()}; largest node of pool {biggest.name} ({biggest.machine_type}) has "
        f"{biggest.allocatable.describe()} allocatable"  # type: ignore[union-attr]
    )


def _taken_why(pod: Pod, known: Sequence[NodePool]) -> str:
    """The pod would fit a node, but other pods (or its exclusive set's domain) took the room."""
    if pod.exclusive_topology:
        return (
            f"no free {pod.exclusive_topology} domain holds its whole set {pod.exclusive_set} "
            f"(pools {', '.join(f'{p.name} x{p.nodes}' for p in known)}; taken or too small, or host ports clash)"
        )
    return "no node has room left (CPU/memory/TPU or host ports taken by other pods) in " + ", ".join(
        p.name for p in known
    )


def _why(pod: Pod, pools: Sequence[NodePool]) -> str:
    """The most precise reason a pod has no node."""
    matching = [p for p in pools if selector_matches(pod, p)]
    if not matching:
        return _selector_why(pod)
    tolerated = [p for p in matching if tolerates_all(pod, p.taints)]
    if not tolerated:
        return _taint_why(matching)
    unknown = [p for p in tolerated if p.allocatable is None]
    known = [p for p in tolerated if p.allocatable is not None]
    if not known:
        return f"machine type {unknown[0].machine_type} of pool {unknown[0].name} is not in the allocatable fact table"
    if not any(pod.requests.fits_in(p.allocatable) for p in known if p.allocatable):
        return _too_big_why(pod, known)
    return _taken_why(pod, known)


def _split_sets(pods: Sequence[Pod]) -> tuple[dict[str, list[Pod]], list[Pod]]:
    """The pods of each exclusive set (by set), and the pods placed one by one."""
    sets: dict[str, list[Pod]] = {}
    singles: list[Pod] = []
    for pod in pods:
        if pod.exclusive_topology and pod.exclusive_set:
            sets.setdefault(pod.exclusive_set, []).append(pod)
        else:
            singles.append(pod)
    return sets, singles


def _record(result: Placement, pod: Pod, node: _Node | None, pools: Sequence[NodePool]) -> None:
    """The pod's node and pool in ``result``, or why it has none."""
    if node is None:
        result.failure[pod.key] = _why(pod, pools)
    else:
        result.node_of[pod.key] = f"{node.pool.name}/{node.name}"
        result.pool_of[pod.key] = node.pool


def _try_domain(cluster: _Cluster, members: Sequence[Pod], dom: Sequence[_Node]) -> list[tuple[Pod, _Node]] | None:
    """Every member on a node of ``dom``, biggest TPU request first; else None, with the domain's nodes as before."""
    trial: list[tuple[Pod, _Node]] = []
    snapshot = [(n, n.free, set(n.ports), list(n.pods)) for n in dom]
    for pod in sorted(members, key=lambda p: -p.requests.tpu):
        node = _place_one(cluster, pod, dom)
        if node is None:
            break
        trial.append((pod, node))
    if len(trial) == len(members):
        return trial
    for n, free, ports, npods in snapshot:
        n.free, n.ports, n.pods = free, ports, npods
    return None


def _place_set(cluster: _Cluster, members: Sequence[Pod], pools: Sequence[NodePool]) -> list[tuple[Pod, _Node]] | None:
    """An exclusive set on the first free domain of its topology key that holds it whole (the domain then its)."""
    first = members[0]
    key = first.exclusive_topology or ""
    usable = [p for p in pools if all(p in candidate_pools(m, pools) for m in members)]
    for dom in cluster.domains(key, usable):
        taken_by = cluster.owner.get((key, cluster.domain(dom[0], key)))
        if cluster.family_pods_in(dom, first) or taken_by not in (None, (first.family, first.exclusive_set)):
            continue
        placed = _try_domain(cluster, members, dom)
        if placed is not None:
            cluster.owner[(key, cluster.domain(dom[0], key))] = (first.family, first.exclusive_set or "")
            return placed
    return None


def place(pods: Sequence[Pod], pools: Sequence[NodePool]) -> Placement:
    """Greedy placement of ``pods`` onto ``pools`` (see module docstring for the order)."""
    cluster = _Cluster(pools)
    result = Placement()
    sets, singles = _split_sets(pods)
    for members in sorted(sets.values(), key=lambda m: -sum(p.requests.tpu for p in m)):
        placed = _place_set(cluster, members, pools)
        for pod in members:
            _record(result, pod, next((n for p, n in placed or () if p is pod), None), pools)
    for pod in sorted(singles, key=lambda p: (-p.requests.tpu, -p.requests.cpu)):
        nodes = [n for pool in candidate_pools(pod, pools) for n in cluster.nodes.get(pool.name, ())]
        _record(result, pod, _place_one(cluster, pod, nodes), pools)
    return result


# --------------------------------------------------------------------------- scale path


def at_minimum(pool: NodePool) -> NodePool:
    return pool if pool.min_nodes is None else replace(pool, nodes=pool.min_nodes)


def group_pods(pods: Sequence[Pod], owner: str, group: int, namespace: str | None = None) -> list[Pod]:
    """The pods of group ``group`` of ``owner`` (``Kind/name``), in ``namespace`` when given."""
    return [
        p
        for p in pods
        if p.owner == owner and p.group.endswith(f"{owner}/{group}") and (namespace is None or p.namespace == namespace)
    ]


def provision(group: Sequence[Pod], pools: list[NodePool], originals: Mapping[str, NodePool]) -> tuple[str, bool]:
    """Scale up the first empty autoscaled pool that takes the whole pending group; (what happened, ok)."""
    tpu_pods = [p for p in group if p.requests.tpu]
    empty = [p for p in pools if p.min_nodes is not None and p.nodes == 0]
    fitting = [p for p in empty if all(p in landing_pools(m, [p]) for m in group)]
    if not fitting:
        names = ", ".join(p.name for p in empty) or "none"
        return f"no node pool that scales from zero takes the group (empty autoscaled pools: {names})", False
    pool = originals[fitting[0].name]
    single_host = pool.slice_vms is None and len(tpu_pods) == 1  # one VM, a single-host slice of its own
    if tpu_pods and not single_host and pool.slice_vms != len(tpu_pods):
        adds = (
            "its VMs one by one (no TPU topology)"
            if pool.slice_vms is None
            else f"{counted(pool.slice_vms, 'VM')} at once"
        )
        return f"pool {pool.name} adds {adds}, the group needs {len(tpu_pods)}: not exactly one whole slice", False
    pools[pools.index(fitting[0])] = pool
    return (
        f"slice {pool.name} provisioned ({pool.min_nodes} -> {pool.nodes} {pool.machine_type} {plural('VM', pool.nodes)} at once)",
        True,
    )


@dataclass(frozen=True)
class Step:
    """One group added to those already up: where it landed, after which provisioning."""

    ok: bool
    provisioned: str | None
    """What :func:`provision` did (or why it could not), None when the group fit on nodes already up."""
    pool: str | None
    """The pool of the group's first pod, once scheduled."""
    pending: str | None
    """Why a pod of the group is still pending after a slice was provisioned."""
    waiting: str | None = None
    """Why the group's first pending pod had no node before any provisioning (None when it fit)."""


def step_up(
    view: PlanView, key: tuple[str, str, str], count: int, pools: list[NodePool], originals: Mapping[str, NodePool]
) -> Step:
    """Group ``count - 1`` of workload ``key`` beside the groups before it: on nodes already up, else on the first
    empty autoscaled pool that takes it whole (``pools`` is updated with the slice provisioned)."""
    pods = pods_of(view, {key: count})
    group = group_pods(pods, f"{key[1]}/{key[2]}", count - 1, key[0])
    before = place(pods, pools)
    if all(p.key in before.node_of for p in group):
        return Step(True, None, before.pool_of[group[0].key].name if group else None, None)
    waiting = next(before.failure[p.key] for p in group if p.key not in before.node_of)
    what, ok = provision(group, pools, originals)
    if not ok:
        return Step(False, what, None, None, waiting)
    after = place(pods, pools)
    pending = [p.key for p in group if p.key not in after.node_of]
    if pending:
        return Step(False, what, None, after.failure[pending[0]], waiting)
    return Step(True, what, after.pool_of[group[0].key].name, None, waiting)


def minimum_finding(
    view: PlanView,
    key: tuple[str, str, str],
    lo: int,
    pools: Sequence[NodePool],
    pods_named: str,
    subject: str,
    say: str = "",
) -> Finding:
    """The HPA's minimum of workload ``key`` on the pools as they start: its pods (names starting ``pods_named``)
    all scheduled."""
    start = place(pods_of(view, {key: lo}), pools)
    unplaced = [k for k in start.failure if k.startswith(pods_named)]
    return Finding(
        f"{subject} at minReplicas {lo}",
        not unplaced,
        f"{say}{lo} group(s) on the pools as they start (autoscaled pools at their minimum)"
        if not unplaced
        else f"{say}pods pending before any scale-up: {', '.join(unplaced)}",
    )
