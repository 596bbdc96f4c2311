"""The checks of ``tpu-serving verify``: pure functions from a :class:`~.snapshot.Snapshot` to findings.

Each check fails on what is missing rather than counting what is there: a workload with no pods, a selector
that selects nothing, a declared object that is absent, a plan that declares nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .snapshot import Obj, Snapshot, descendants, meta

TPU = "google.com/tpu"
POOL_LABEL = "cloud.google.com/gke-nodepool"
COMPUTE_CLASS_LABEL = "cloud.google.com/compute-class"
"""A ComputeClass's node label, on the nodes GKE makes for it (GKE, "About node pool auto-creation")."""
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
# LeaderWorkerSet's pod labels (sigs.k8s.io/lws v0.10.0 api/leaderworkerset/v1/leaderworkerset_types.go:
# SetNameLabelKey "leaderworkerset.sigs.k8s.io/name", GroupIndexLabelKey "leaderworkerset.sigs.k8s.io/group-index").
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
"""``"0"`` on a group's leader (lws v0.10.0 leaderworkerset_types.go WorkerIndexLabelKey)."""
ZONE_LABEL = "topology.kubernetes.io/zone"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
JOBSET_JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
"""JobSet's labels on its child Jobs' pods (jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go l.32-36)."""
"""The label JobSet puts on its Jobs' pods (sigs.k8s.io/jobset v0.12.0 api/jobset/v1alpha2/jobset_types.go
JobSetNameKey)."""

SERVING_KINDS = ("LeaderWorkerSet", "DisaggregatedSet", "JobSet", "PathwaysJob")
"""The workload kinds a serving deployment runs, one of which :func:`workloads` requires of a serving stack."""
WORKLOAD_KINDS = (*SERVING_KINDS, "Deployment")


@dataclass(frozen=True)
class Finding:
    """One verdict on one subject."""

    check: str
    subject: str
    ok: bool
    detail: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return f"{mark} {self.check:<10} {self.subject}" + (f": {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class Pool:
    """A node pool the stack's TPU pods may use: its name and the node labels GKE gives its nodes."""

    name: str
    accelerator: str
    topology: str
    vms: int
    chips_per_vm: int


def _name(obj: Obj) -> str:
    m = meta(obj)
    return f"{m.get('namespace')}/{m['name']}" if m.get("namespace") else str(m["name"])


def _subject(kind: str, obj: Obj) -> str:
    return f"{kind} {_name(obj)}"


# --------------------------------------------------------------------------- declared objects


def declared(snapshot: Snapshot, expected: Sequence[tuple[str, str, str | None, str]]) -> list[Finding]:
    """Every object of ``expected`` (apiVersion, kind, namespace, name) exists. Nothing declared fails."""
    if not expected:
        return [Finding("declared", "plan", False, "the plan declares no Kubernetes object")]
    out = []
    for key in expected:
        _, kind, namespace, name = key
        found = snapshot.present.get(key, False)
        subject = f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"
        out.append(Finding("declared", subject, found, "" if found else "not found on the API server"))
    return out


# --------------------------------------------------------------------------- what the controllers made


def _int(value: Any, default: int = 1) -> int:
    return int(value) if value is not None else default


def expected_pods(kind: str, obj: Obj) -> int:
    """The pods a workload of ``kind`` runs at rest, from its spec."""
    spec = obj.get("spec", {})
    if kind == "LeaderWorkerSet":
        return _int(spec.get("replicas")) * _int(spec.get("leaderWorkerTemplate", {}).get("size"))
    if kind == "DisaggregatedSet":
        return sum(
            _int(r.get("replicas")) * _int(r.get("leaderWorkerTemplate", {}).get("size")) for r in spec.get("roles", [])
        )
    if kind == "JobSet":
        return sum(
            _int(j.get("replicas")) * _int(j.get("template", {}).get("spec", {}).get("parallelism"))
            for j in spec.get("replicatedJobs", [])
        )
    if kind == "Deployment":
        return _int(spec.get("replicas"))
    return 0


def _headless_service(snapshot: Snapshot, owner: Obj, name: str) -> Finding:
    """A controller's headless Service ``name`` for ``owner``: it exists, is headless and is owned by ``owner`` (the
    controller creates it only when no Service of that name exists, so another object of that name takes its place).
    """
    m = meta(owner)
    kind = str(owner.get("kind"))
    svc = snapshot.get("Service", m.get("namespace"), name)
    subject = f"Service {m.get('namespace')}/{name}"
    if svc is None:
        return Finding("controller", subject, False, f"the {kind}'s headless Service does not exist")
    owned = m["uid"] in [r["uid"] for r in meta(svc).get("ownerReferences", []) or []]
    headless = svc.get("spec", {}).get("clusterIP") == "None"
    if owned and headless:
        return Finding("controller", subject, True, f"headless, owned by the {kind}")
    why = [] if owned else [f"not owned by the {kind} (another object took its name)"]
    why += [] if headless else [f"clusterIP {svc.get('spec', {}).get('clusterIP')!r}, not headless"]
    return Finding("controller", subject, False, "; ".join(why))


def headless_services(snapshot: Snapshot, kind: str, obj: Obj) -> list[Finding]:
    """The headless Service a workload's controller makes: a LeaderWorkerSet's, named after it (lws v0.9.0
    pkg/utils/controller/controller_utils.go ``CreateHeadlessServiceIfNotExists``); a JobSet's with DNS hostnames
    on, named ``spec.network.subdomain`` or after the JobSet (jobset v0.12.0 pkg/controllers/jobset_controller.go
    l.788-833 ``createHeadlessSvcIfNecessary``, l.1090-1098 ``GetSubdomain``, l.1154-1156: only when
    ``enableDNSHostnames`` is true, which its webhook defaults)."""
    if kind == "LeaderWorkerSet":
        return [_headless_service(snapshot, obj, meta(obj)["name"])]
    if kind == "JobSet":
        network = obj.get("spec", {}).get("network") or {}
        if network.get("enableDNSHostnames") is True:
            return [_headless_service(snapshot, obj, network.get("subdomain") or meta(obj)["name"])]
    return []


def workloads(snapshot: Snapshot, namespaces: Iterable[str], serving: bool) -> list[Finding]:
    """Each workload's controller made its objects: the pods its spec asks for (through the owner chain), and
    a LeaderWorkerSet's or JobSet's headless Service. A serving stack without a workload fails."""
    out: list[Finding] = []
    found = 0
    for namespace in namespaces:
        for kind in WORKLOAD_KINDS:
            for obj in snapshot.of(kind, namespace):
                found += kind in SERVING_KINDS
                out.extend(_workload(snapshot, kind, obj))
    if serving and not found:
        out.append(
            Finding("controller", "serving", False, "no LeaderWorkerSet, DisaggregatedSet, JobSet or PathwaysJob")
        )
    return out


def _workload(snapshot: Snapshot, kind: str, obj: Obj) -> list[Finding]:
    out: list[Finding] = []
    if kind == "PathwaysJob":
        jobsets = descendants(snapshot, obj, "JobSet")
        out.append(
            Finding(
                "controller",
                _subject(kind, obj),
                bool(jobsets),
                f"JobSet {', '.join(meta(j)['name'] for j in jobsets)}" if jobsets else "its controller made no JobSet",
            )
        )
        return out
    out += headless_services(snapshot, kind, obj)
    want = expected_pods(kind, obj)
    pods = descendants(snapshot, obj, "Pod")
    live = [p for p in pods if not meta(p).get("deletionTimestamp")]
    ok = want > 0 and len(live) == want
    out.append(Finding("controller", _subject(kind, obj), ok, f"{len(live)} pods of {want}"))
    return out


# --------------------------------------------------------------------------- pods


def pod_is_ready(pod: Obj) -> bool:
    conditions = pod.get("status", {}).get("conditions", []) or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def pods_ready(snapshot: Snapshot, namespaces: Iterable[str]) -> list[Finding]:
    """Every pod of the namespaces is scheduled and Ready; a pod that is not says why, in the scheduler's words
    when it has spoken (the pod's PodScheduled condition)."""
    out: list[Finding] = []
    for namespace in namespaces:
        pods = snapshot.of("Pod", namespace)
        if not pods:
            out.append(Finding("ready", f"namespace {namespace}", False, "no pods"))
        for pod in pods:
            node = pod.get("spec", {}).get("nodeName")
            if not node:
                out.append(Finding("ready", _subject("Pod", pod), False, "not scheduled: " + _unscheduled(pod)))
            else:
                out.append(_pod_ready(pod, node))
    return out


def _one_off(pod: Obj) -> bool:
    """A pod of a plain Job (not of a JobSet's, which serve until stopped): it may end."""
    m = meta(pod)
    owned = any(ref.get("kind") == "Job" for ref in m.get("ownerReferences", []) or [])
    return owned and JOBSET_NAME_LABEL not in (m.get("labels") or {})


def _pod_ready(pod: Obj, node: str) -> Finding:
    phase = pod.get("status", {}).get("phase")
    if phase == "Succeeded" and _one_off(pod):
        return Finding("ready", _subject("Pod", pod), True, f"on {node}, completed (a one-off Job)")
    ok = phase == "Running" and pod_is_ready(pod)
    why = "" if ok else (", not Ready" if phase == "Running" else f", phase {phase}")
    return Finding("ready", _subject("Pod", pod), ok, f"on {node}{why}")


def _unscheduled(pod: Obj) -> str:
    for c in pod.get("status", {}).get("conditions", []) or []:
        if c.get("type") == "PodScheduled" and c.get("status") != "True":
            return str(c.get("message") or c.get("reason") or "pending")
    return "pending"


def _tpu_request(pod: Obj) -> int:
    total = 0
    for c in pod.get("spec", {}).get("containers", []) or []:
        resources = c.get("resources", {}) or {}
        value = (resources.get("requests") or {}).get(TPU) or (resources.get("limits") or {}).get(TPU)
        total += int(value or 0)
    return total


def pool_of(labels: Mapping[str, str], pools: Mapping[str, Pool], classes: Mapping[str, Pool]) -> Pool | None:
    """The stack's pool a node of ``labels`` belongs to: one of ``pools`` by its name, or a pool GKE made for one of
    the stack's ComputeClasses (``classes``: each class's slice), named as GKE named it and labelled with the class."""
    name = labels.get(POOL_LABEL, "")
    found = pools.get(name)
    if found is not None or labels.get(COMPUTE_CLASS_LABEL) not in classes:
        return found
    return dataclasses.replace(classes[labels[COMPUTE_CLASS_LABEL]], name=name)


def placement(
    snapshot: Snapshot, namespaces: Iterable[str], pools: Mapping[str, Pool], classes: Mapping[str, Pool] | None = None
) -> list[Finding]:
    """Every TPU pod sits on a node of one of the stack's pools (or of a pool GKE made for one of its ComputeClasses)
    whose accelerator and topology labels are the pool's slice, asks for all of its VM's chips, and a multi-host
    group's pods (a LeaderWorkerSet group, a JobSet's child Job) fill whole slices: distinct nodes of each pool, as many
    as the slice has VMs. Without a TPU pod, a stack with pools fails."""
    nodes = {meta(n)["name"]: n for n in snapshot.of("Node")}
    classes = classes or {}
    out: list[Finding] = []
    groups: dict[tuple[str, str, str], list[Obj]] = {}
    for namespace in namespaces:
        for pod in snapshot.of("Pod", namespace):
            chips = _tpu_request(pod)
            if not chips:
                continue
            out.append(_placed(pod, chips, nodes.get(pod.get("spec", {}).get("nodeName", "")), pools, classes))
            labels = meta(pod).get("labels", {}) or {}
            if LWS_NAME_LABEL in labels:
                key = (namespace, labels[LWS_NAME_LABEL], labels.get(LWS_GROUP_LABEL, ""))
                groups.setdefault(key, []).append(pod)
            elif JOBSET_NAME_LABEL in labels:  # a JobSet's child Job is one slice (the Saxml model servers)
                name = f"{labels[JOBSET_NAME_LABEL]}/{labels.get(JOBSET_REPLICATED_JOB_LABEL, '')}"
                groups.setdefault((namespace, name, labels.get(JOBSET_JOB_INDEX_LABEL, "")), []).append(pod)
    if pools and not out:
        out.append(Finding("placement", "TPU pods", False, "no pod requests google.com/tpu"))
    out.extend(_group(key, members, nodes, pools, classes) for key, members in sorted(groups.items()))
    return out


def _placed(pod: Obj, chips: int, node: Obj | None, pools: Mapping[str, Pool], classes: Mapping[str, Pool]) -> Finding:
    subject = _subject("Pod", pod)
    if node is None:
        return Finding("placement", subject, False, "not on a node")
    labels = meta(node).get("labels", {}) or {}
    pool = pool_of(labels, pools, classes)
    if pool is None:
        return Finding("placement", subject, False, f"on pool {labels.get(POOL_LABEL)!r}, not one of {sorted(pools)}")
    problems = []
    if labels.get(ACCELERATOR_LABEL) != pool.accelerator or labels.get(TOPOLOGY_LABEL) != pool.topology:
        problems.append(f"node is {labels.get(ACCELERATOR_LABEL)} {labels.get(TOPOLOGY_LABEL)}")
    allocatable = int(node.get("status", {}).get("allocatable", {}).get(TPU, 0))
    if chips != allocatable:
        problems.append(f"asks for {chips} of the VM's {allocatable} chips")
    return Finding("placement", subject, not problems, "; ".join(problems) or f"pool {pool.name}")


def _group(
    key: tuple[str, str, str],
    members: list[Obj],
    nodes: Mapping[str, Obj],
    pools: Mapping[str, Pool],
    classes: Mapping[str, Pool],
) -> Finding:
    """A multi-host group's TPU pods fill whole slices, one VM each: every VM of each pool they are on (a GKE
    multi-host TPU pool is one slice). A vLLM or JetStream group is one slice; a Pathways group holds several (the
    disaggregated JetStream-Pathways group: its prefill slice and its decode slice)."""
    namespace, lws, index = key
    subject = f"group {namespace}/{lws}/{index}"
    names = [m.get("spec", {}).get("nodeName") for m in members]
    by_pool: dict[str, int] = {}
    node_labels: dict[str, Mapping[str, str]] = {}
    for name in names:
        labels = (meta(nodes[name]).get("labels", {}) or {}) if name in nodes else {}
        pool_name = str(labels.get(POOL_LABEL)) if name in nodes else "no node"
        node_labels[pool_name] = labels
        by_pool[pool_name] = by_pool.get(pool_name, 0) + 1
    problems = ["two pods share a VM"] if len(set(names)) != len(names) else []
    for pool_name, count in sorted(by_pool.items()):
        pool = pool_of(node_labels[pool_name], pools, classes)
        if pool is None:
            problems.append(f"{count} pods on {pool_name!r}, not a pool of the stack")
        elif count != pool.vms:
            problems.append(f"{count} pods on pool {pool_name}, a slice of {pool.vms} VMs")
    whole = f"{len(members)} VMs of {len(by_pool)} whole slice{'s' if len(by_pool) > 1 else ''}"
    return Finding("placement", subject, not problems, "; ".join(problems) or whole)


# --------------------------------------------------------------------------- zones


def _zone_spread(lws: Obj) -> Obj | None:
    """The required zone spread on a LeaderWorkerSet's leaders (its ``leaderTemplate``, else its ``workerTemplate``,
    whose pod 0 leads), None without one."""
    template = lws.get("spec", {}).get("leaderWorkerTemplate", {}) or {}
    pod = template.get("leaderTemplate") or template.get("workerTemplate") or {}
    for c in (pod.get("spec") or {}).get("topologySpreadConstraints") or []:
        if c.get("topologyKey") == ZONE_LABEL and c.get("whenUnsatisfiable") == "DoNotSchedule":
            return dict(c)
    return None


def zones(snapshot: Snapshot, namespaces: Iterable[str]) -> list[Finding]:
    """The leaders a LeaderWorkerSet's required zone spread selects (``DoNotSchedule`` on
    ``topology.kubernetes.io/zone``, ``minDomains`` N: the standing groups, :func:`tpu_serving.common.spread.group_zone_spread`)
    sit in as many zones as they can: N, or one per leader when fewer. The rule binds only when a pod is placed: a
    scale-down removes the highest-numbered group wherever it sits (lws v0.10.0), and can leave the others in one
    zone, which the next zonal event takes together (SRE review round 43, M2). A LeaderWorkerSet with the rule and no
    selected leader on a node fails."""
    nodes = {meta(n)["name"]: n for n in snapshot.of("Node")}
    out: list[Finding] = []
    for namespace in namespaces:
        for lws in snapshot.of("LeaderWorkerSet", namespace):
            rule = _zone_spread(lws)
            if rule is None:
                continue
            placed = _leader_zones(snapshot.of("Pod", namespace), str(meta(lws)["name"]), nodes, rule)
            out.append(_spread(_subject("LeaderWorkerSet", lws), placed, int(rule.get("minDomains") or 1)))
    return out


def _leader_zones(pods: Sequence[Obj], lws: str, nodes: Mapping[str, Obj], rule: Obj) -> list[str]:
    """The zone of each leader of LeaderWorkerSet ``lws`` that ``rule``'s selector selects and is on a node."""
    out = []
    for pod in pods:
        labels = meta(pod).get("labels") or {}
        node = nodes.get(pod.get("spec", {}).get("nodeName") or "")
        leads = labels.get(LWS_NAME_LABEL) == lws and labels.get(LWS_WORKER_LABEL) == "0"
        if leads and node is not None and selects(rule.get("labelSelector"), labels):
            out.append(str(meta(node).get("labels", {}).get(ZONE_LABEL)))
    return out


def _spread(subject: str, placed: Sequence[str], wanted: int) -> Finding:
    if not placed:
        return Finding("zones", subject, False, "no leader on a node")
    need, found = min(wanted, len(placed)), sorted(set(placed))
    detail = f"{len(placed)} leaders in {len(found)} zones ({', '.join(found)}), {need} wanted"
    if len(found) >= need:
        return Finding("zones", subject, True, detail)
    move = (
        "; one zonal event can take them together: delete one leader pod of the crowded zone to place its group again"
    )
    return Finding("zones", subject, False, detail + move)


# --------------------------------------------------------------------------- selectors


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a label selector (``matchLabels``/``matchExpressions``, or a plain map) selects ``labels``."""
    if selector is None:
        return False
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return all(labels.get(k) == v for k, v in selector.items())
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e["key"], e["operator"], e.get("values") or []
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and labels.get(key) in values)
            or (op == "Exists" and key not in labels)
            or (op == "DoesNotExist" and key in labels)
        ):
            return False
    return True


def _selected(snapshot: Snapshot, namespace: str, selector: Mapping[str, Any] | None) -> list[Obj]:
    return [p for p in snapshot.of("Pod", namespace) if selects(selector, meta(p).get("labels", {}) or {})]


_SELECTORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Service", ("spec", "selector")),
    ("InferencePool", ("spec", "selector")),
    ("PodMonitoring", ("spec", "selector")),
    ("PodDisruptionBudget", ("spec", "selector")),
    ("NetworkPolicy", ("spec", "podSelector")),
)


def _at(obj: Obj, path: Sequence[str]) -> Any:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def selectors(snapshot: Snapshot, namespaces: Iterable[str]) -> list[Finding]:
    """Every Service (with a selector), InferencePool, PodMonitoring, PodDisruptionBudget and NetworkPolicy
    selects at least one pod, and every HorizontalPodAutoscaler's target exists and has replicas."""
    out: list[Finding] = []
    for namespace in namespaces:
        for kind, path in _SELECTORS:
            for obj in snapshot.of(kind, namespace):
                selector = _at(obj, path)
                if kind == "Service" and not selector:
                    continue  # a Service without a selector has its endpoints managed by someone else
                if kind == "NetworkPolicy" and selector == {}:
                    selector = {"matchLabels": {}}
                n = len(_selected(snapshot, namespace, selector))
                out.append(Finding("selects", _subject(kind, obj), n > 0, f"{n} pods"))
        for hpa in snapshot.of("HorizontalPodAutoscaler", namespace):
            out += [_hpa(snapshot, namespace, hpa), scaling_active(hpa)]
    return out


def _hpa(snapshot: Snapshot, namespace: str, hpa: Obj) -> Finding:
    ref = hpa.get("spec", {}).get("scaleTargetRef", {})
    target = snapshot.get(str(ref.get("kind")), namespace, str(ref.get("name")))
    subject = _subject("HorizontalPodAutoscaler", hpa)
    if target is None:
        return Finding("selects", subject, False, f"target {ref.get('kind')} {ref.get('name')} does not exist")
    current = hpa.get("status", {}).get("currentReplicas")
    ok = current is not None and int(current) >= 1
    return Finding("selects", subject, ok, f"{ref.get('kind')} {ref.get('name')}, currentReplicas {current}")


SCALES = "scales"
"""The check that an HPA computes a replica count from its metrics: its ``ScalingActive`` condition is True. The
HPA controller writes ``currentReplicas`` whether or not it can read a metric; only this condition says it can
(k8s.io/kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go l.358 ``ValidMetricFound``; False with
``InvalidSelector`` or ``AmbiguousSelector`` l.401-430, ``FailedGet<Type>Metric`` l.480-587 and l.1143-1150)."""


def scaling_active(hpa: Obj) -> Finding:
    """Whether ``hpa``'s controller computed a replica count from its metrics (condition ``ScalingActive``)."""
    conditions = hpa.get("status", {}).get("conditions") or []
    active = next((c for c in conditions if c.get("type") == "ScalingActive"), None)
    subject = _subject("HorizontalPodAutoscaler", hpa)
    if active is None:
        return Finding(SCALES, subject, False, "no ScalingActive condition: the HPA controller has not synced it")
    detail = f"ScalingActive {active.get('status')} ({active.get('reason')}): {active.get('message', '')}"
    return Finding(SCALES, subject, active.get("status") == "True", detail)


def run_all(
    snapshot: Snapshot,
    namespaces: Sequence[str],
    pools: Mapping[str, Pool],
    declared_objects: Sequence[tuple[str, str, str | None, str]],
    serving: bool,
    classes: Mapping[str, Pool] | None = None,
) -> list[Finding]:
    """Every check, in order."""
    return [
        *declared(snapshot, declared_objects),
        *workloads(snapshot, namespaces, serving),
        *pods_ready(snapshot, namespaces),
        *placement(snapshot, namespaces, pools, classes),
        *zones(snapshot, namespaces),
        *selectors(snapshot, namespaces),
    ]
