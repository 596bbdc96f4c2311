"""The pods the controllers create from a plan's Kubernetes objects.

Expands LeaderWorkerSets, JobSets, PathwaysJobs (through the JobSet their controller creates),
Deployments, Jobs and bare Pods into :class:`Pod` values, applying what the API server and the
controllers add on the way: LWS environment variables, Kubernetes request defaulting
(limits -> requests, LimitRange defaults), PathwaysJob head and worker containers. The facts used
are in :mod:`tools.runtime.facts` with their sources.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.planview import PlanView

# --------------------------------------------------------------------------- quantities

_SUFFIX = {
    "m": 1e-3,
    "": 1.0,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
    "T": 1e12,
    "P": 1e15,
    "E": 1e18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")


def parse_quantity(value: str | int | float) -> float:
    """A Kubernetes quantity (``"500m"``, ``"32Gi"``, ``"32000000000"``, ``1.5``) as a float."""
    if isinstance(value, (int, float)):
        return float(value)
    m = _QUANTITY.match(str(value).strip())
    if not m:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(m.group(1)) * _SUFFIX[m.group(2) or ""]


@dataclass(frozen=True)
class Resources:
    """CPU (cores), memory (bytes) and TPU chips."""

    cpu: float = 0.0
    memory: float = 0.0
    tpu: float = 0.0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.tpu + other.tpu)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.tpu - other.tpu)

    def max(self, other: Resources) -> Resources:
        """Per-resource maximum."""
        return Resources(max(self.cpu, other.cpu), max(self.memory, other.memory), max(self.tpu, other.tpu))

    def fits_in(self, other: Resources) -> bool:
        """Whether every resource of ``self`` is at most that of ``other`` (with a rounding margin)."""
        eps = 1e-9
        return self.cpu <= other.cpu + eps and self.memory <= other.memory + 1 and self.tpu <= other.tpu + eps

    def describe(self) -> str:
        """``24.25 CPU / 132.5 GB`` (+ ``/ 4 TPU`` when any)."""
        text = f"{_num(self.cpu)} CPU / {_num(self.memory / F.GB)} GB"
        return text + (f" / {_num(self.tpu)} TPU" if self.tpu else "")


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


_RESOURCE_KEYS = {"cpu": "cpu", "memory": "memory", F.TPU_RESOURCE: "tpu"}


def _resources(values: Mapping[str, Any] | None) -> dict[str, float]:
    return {_RESOURCE_KEYS[k]: parse_quantity(v) for k, v in (values or {}).items() if k in _RESOURCE_KEYS}


def _as_resources(values: Mapping[str, float]) -> Resources:
    return Resources(values.get("cpu", 0.0), values.get("memory", 0.0), values.get("tpu", 0.0))


# --------------------------------------------------------------------------- model


@dataclass(frozen=True)
class Toleration:
    """One pod toleration."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, key: str, value: str, effect: str) -> bool:
        """Whether this toleration tolerates the taint ``key=value:effect``."""
        if self.effect and self.effect != effect:
            return False
        if self.operator == "Exists":
            return not self.key or self.key == key
        return self.key == key and self.value == value


@dataclass(frozen=True)
class Container:
    """A container as the kubelet gets it (after defaulting and controller injection)."""

    name: str
    image: str = ""
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """Name -> value; ``valueFrom`` rendered as ``<fieldRef:path>``, ``<secretKeyRef:name/key>``..."""
    ports: tuple[int, ...] = ()
    named_ports: Mapping[str, int] = field(default_factory=dict)
    """``ports[].name`` -> ``containerPort``, for policies and probes that name a port."""
    requests: Resources = Resources()
    limits: Resources = Resources()
    requested: frozenset[str] = frozenset()
    """Resources (``cpu``, ``memory``, ``tpu``) the container has a request for, after defaulting."""
    probe_ports: tuple[int | str, ...] = ()
    sidecar: bool = False
    """An init container with ``restartPolicy: Always`` (a native sidecar)."""
    read_only_mounts: frozenset[str] = frozenset()
    """Names of volumes this container mounts read-only."""


@dataclass(frozen=True)
class Volume:
    """A pod volume; ``gcs_bucket`` for GCS FUSE CSI volumes."""

    name: str
    kind: str
    gcs_bucket: str | None = None
    read_only: bool = False


@dataclass(frozen=True)
class Pod:
    """One pod as a controller creates it."""

    name: str
    namespace: str
    owner: str
    """``Kind/name`` of the object the plan declares, e.g. ``LeaderWorkerSet/jetstream-pathways``."""
    role: str
    """``leader``/``worker`` (LWS), the replicated job name (JobSet), ``pathways-head``/``pathways-worker``."""
    group: str
    """Pods that must land together and restart together (an LWS group, a JobSet child Job = a slice)."""
    restart_unit: str
    """What is recreated at once when one pod fails or the object is updated."""
    labels: Mapping[str, str] = field(default_factory=dict)
    host_network: bool = False
    service_account: str = "default"
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    volumes: tuple[Volume, ...] = ()
    priority_class: str = ""
    exclusive_topology: str | None = None
    """Topology key whose domain this pod's exclusive set takes whole (e.g. ``cloud.google.com/gke-nodepool``)."""
    exclusive_set: str | None = None
    """The set that takes the domain: the LWS group or sub-group, or the JobSet child Job."""

    @property
    def all_containers(self) -> tuple[Container, ...]:
        return self.init_containers + self.containers

    @property
    def requests(self) -> Resources:
        """The pod's effective request (sidecar rule of the Kubernetes docs, see facts)."""
        regular = sum((c.requests for c in self.containers), Resources())
        sidecars = Resources()
        peak = Resources()
        for c in self.init_containers:
            if c.sidecar:
                sidecars = sidecars + c.requests
                peak = peak.max(sidecars)
            else:
                peak = peak.max(c.requests + sidecars)
        return peak.max(regular + sidecars)

    @property
    def host_ports(self) -> frozenset[int]:
        """Ports bound on the node: every containerPort of a hostNetwork pod."""
        if not self.host_network:
            return frozenset()
        return frozenset(
            p for c in self.containers + tuple(i for i in self.init_containers if i.sidecar) for p in c.ports
        )

    @property
    def requests_tpu(self) -> bool:
        return any(c.limits.tpu or c.requests.tpu for c in self.all_containers)

    @property
    def family(self) -> str:
        """Controller family whose exclusive placement rules see this pod (``LeaderWorkerSet`` or ``JobSet``)."""
        kind = self.owner.split("/", 1)[0]
        return "JobSet" if kind in ("JobSet", "PathwaysJob") else kind

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


# --------------------------------------------------------------------------- containers


@dataclass(frozen=True)
class LimitDefaults:
    """A namespace's LimitRange ``Container`` defaults."""

    default_limits: Mapping[str, float] = field(default_factory=dict)
    default_requests: Mapping[str, float] = field(default_factory=dict)


def limit_defaults(view: PlanView) -> dict[str, LimitDefaults]:
    """Namespace -> the merged Container defaults of its LimitRanges."""
    out: dict[str, LimitDefaults] = {}
    for lr in view.kubernetes_objects("LimitRange"):
        ns = lr.get("metadata", {}).get("namespace", "default")
        limits: dict[str, float] = dict(out.get(ns, LimitDefaults()).default_limits)
        requests: dict[str, float] = dict(out.get(ns, LimitDefaults()).default_requests)
        for item in (lr.get("spec") or {}).get("limits") or []:
            if item.get("type") == "Container":
                limits.update(_resources(item.get("default")))
                requests.update(_resources(item.get("defaultRequest")))
        out[ns] = LimitDefaults(limits, requests)
    return out


def _env_value(env: Mapping[str, Any]) -> str:
    if "value" in env:
        return str(env["value"])
    source = env.get("valueFrom") or {}
    for kind, ref in source.items():
        if isinstance(ref, Mapping):
            detail = (
                ref.get("fieldPath")
                or ref.get("resource")
                or "/".join(str(ref[k]) for k in ("name", "key") if k in ref)
            )
            return f"<{kind}:{detail}>"
    return ""


def _probe_ports(spec: Mapping[str, Any]) -> tuple[int | str, ...]:
    ports: list[int | str] = []
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        p = spec.get(probe) or {}
        for handler in ("tcpSocket", "httpGet", "grpc"):
            if handler in p and "port" in p[handler]:
                ports.append(p[handler]["port"])
    return tuple(dict.fromkeys(ports))


def make_container(spec: Mapping[str, Any], defaults: LimitDefaults, *, init: bool = False) -> Container:
    """A container spec with Kubernetes request defaulting applied (see facts)."""
    res = spec.get("resources") or {}
    limits = _resources(res.get("limits"))
    requests = _resources(res.get("requests"))
    for k, v in limits.items():  # API defaulting: a limit without a request is the request
        requests.setdefault(k, v)
    for k, v in defaults.default_limits.items():  # LimitRanger: default limits, then requests
        if k not in limits:
            limits[k] = v
            requests.setdefault(k, v)
    for k, v in defaults.default_requests.items():
        requests.setdefault(k, v)
    return Container(
        name=str(spec.get("name", "")),
        image=str(spec.get("image", "")),
        command=tuple(str(a) for a in spec.get("command") or ()),
        args=tuple(str(a) for a in spec.get("args") or ()),
        env={str(e["name"]): _env_value(e) for e in spec.get("env") or ()},
        ports=tuple(int(p["containerPort"]) for p in spec.get("ports") or () if "containerPort" in p),
        named_ports={str(p["name"]): int(p["containerPort"]) for p in spec.get("ports") or () if "name" in p},
        requests=_as_resources(requests),
        limits=_as_resources(limits),
        requested=frozenset(requests),
        probe_ports=_probe_ports(spec),
        sidecar=init and spec.get("restartPolicy") == F.SIDECAR_RESTART_POLICY,
        read_only_mounts=frozenset(m["name"] for m in spec.get("volumeMounts") or () if m.get("readOnly")),
    )


def _volume(spec: Mapping[str, Any]) -> Volume:
    kind = next((k for k in spec if k != "name"), "unknown")
    csi = spec.get("csi") or {}
    bucket = None
    if csi.get("driver") == F.GCS_FUSE_CSI_DRIVER:
        bucket = (csi.get("volumeAttributes") or {}).get("bucketName")
    return Volume(str(spec.get("name", "")), kind, bucket, bool(csi.get("readOnly")))


@dataclass(frozen=True)
class _Placement:
    """Where a pod belongs, passed from a controller's expansion to :func:`make_pod`."""

    name: str
    namespace: str
    owner: str
    role: str
    group: str
    restart_unit: str
    exclusive_topology: str | None = None
    exclusive_set: str | None = None
    controller_labels: Mapping[str, str] = field(default_factory=dict)
    """Labels the controller adds to the template's (LWS and JobSet name their pods' set and role)."""


def injected_sidecars(annotations: Mapping[str, str], defaults: LimitDefaults) -> tuple[Container, ...]:
    """Containers that GKE's webhooks add to a pod with these annotations (the GCS FUSE sidecar, see facts)."""
    if str(annotations.get(F.GCS_FUSE_INJECT_ANNOTATION, "")).lower() != "true":
        return ()
    requests = {
        k: annotations.get(a, F.GCS_FUSE_SIDECAR_REQUESTS[k]) for k, a in F.GCS_FUSE_REQUEST_ANNOTATIONS.items()
    }
    spec = {"name": F.GCS_FUSE_SIDECAR, "restartPolicy": F.SIDECAR_RESTART_POLICY, "resources": {"requests": requests}}
    return (make_container(spec, LimitDefaults(), init=True),)


def make_pod(template: Mapping[str, Any], where: _Placement, defaults: LimitDefaults) -> Pod:
    """A pod from a pod template (``{metadata, spec}``), with the containers GKE injects."""
    spec = template.get("spec") or {}
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    return Pod(
        name=where.name,
        namespace=where.namespace,
        owner=where.owner,
        role=where.role,
        group=where.group,
        restart_unit=where.restart_unit,
        labels={**((template.get("metadata") or {}).get("labels") or {}), **where.controller_labels},
        host_network=bool(spec.get("hostNetwork")),
        service_account=str(spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"),
        node_selector=dict(spec.get("nodeSelector") or {}),
        tolerations=tuple(
            Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", ""))
            for t in spec.get("tolerations") or ()
        ),
        containers=tuple(make_container(c, defaults) for c in spec.get("containers") or ()),
        init_containers=injected_sidecars(annotations, defaults)
        + tuple(make_container(c, defaults, init=True) for c in spec.get("initContainers") or ()),
        volumes=tuple(_volume(v) for v in spec.get("volumes") or ()),
        priority_class=str(spec.get("priorityClassName") or ""),
        exclusive_topology=where.exclusive_topology,
        exclusive_set=where.exclusive_set if where.exclusive_topology else None,
    )


def _with_env(pod: Pod, extra: Mapping[str, str], *, only: str | None = None, overwrite: bool = False) -> Pod:
    """``pod`` with ``extra`` env added to every container (or only the one named ``only``)."""

    def add(c: Container) -> Container:
        if only is not None and c.name != only:
            return c
        env = dict(c.env)
        for k, v in extra.items():
            if overwrite or k not in env:
                env[k] = v
        return replace(c, env=env)

    return replace(
        pod, containers=tuple(map(add, pod.containers)), init_containers=tuple(map(add, pod.init_containers))
    )


# --------------------------------------------------------------------------- LeaderWorkerSet


def _subgroup_of_worker(size: int, subgroup_size: int, index: int) -> int:
    """LWS v0.10.0 ``getSubGroupIndex`` (see facts)."""
    if (size - 1) % subgroup_size == 0 and size % subgroup_size != 0:
        return (index - 1) // subgroup_size
    return index // subgroup_size


def _lws_tpu_env(pod: Pod, lws: str, group: int, index: int, size: int, leader_tpu: bool) -> Pod:
    """TPU_WORKER_HOSTNAMES / TPU_WORKER_ID for the first TPU container (LWS v0.10.0 tpu.go, no sub-groups)."""
    tpu = next((c for c in pod.containers + pod.init_containers if c.limits.tpu or c.requests.tpu), None)
    if tpu is None:
        return pod
    leader = f"{lws}-{group}"
    hosts = ([f"{leader}.{lws}"] if leader_tpu or index == 0 else []) + [f"{leader}-{i}.{lws}" for i in range(1, size)]
    worker_id = index if (leader_tpu or index == 0) else index - 1
    port = tpu.env.get("TPU_PROCESS_PORT", str(F.LWS_TPU_PROCESS_DEFAULT_PORT))
    env = {
        "TPU_WORKER_HOSTNAMES": ",".join(hosts),
        "TPU_WORKER_ID": str(worker_id),
        "TPU_NAME": leader,
        "TPU_PROCESS_ADDRESSES": ",".join(f"{h}:{port}" for h in hosts),
        "TPU_PROCESS_PORT": port,
    }
    return _with_env(pod, env, only=tpu.name)


def _lws_tpu_env_subgroup(pod: Pod, lws: str, group: int, index: int, size: int, sg_size: int, leader_tpu: bool) -> Pod:
    """TPU env with sub-groups (LWS v0.10.0 ``addTPUVariablesSubGroup``)."""
    tpu = next((c for c in pod.containers + pod.init_containers if c.limits.tpu or c.requests.tpu), None)
    if tpu is None:
        return pod
    leader = f"{lws}-{group}"
    sg = 0 if index == 0 else _subgroup_of_worker(size, sg_size, index)
    worker_id = index % sg_size
    if index != 0 and not leader_tpu:
        worker_id, sg = (index - 1) % sg_size, (index - 1) // sg_size
    start, end = sg_size * sg + 1, sg_size * (sg + 1)
    hosts: list[str] = []
    if index == 0 or (leader_tpu and sg == 0):
        hosts.append(f"{leader}.{lws}")
        end -= 1
    elif leader_tpu:
        start, end = start - 1, end - 1
    hosts += [f"{leader}-{i}.{lws}" for i in range(start, end + 1)]
    env = {"TPU_WORKER_HOSTNAMES": ",".join(hosts), "TPU_WORKER_ID": str(worker_id), "TPU_NAME": leader}
    return _with_env(pod, env, only=tpu.name)


def expand_leaderworkerset(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """Every pod of a LeaderWorkerSet: ``replicas`` groups of a leader and ``size - 1`` workers."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    name, ns = meta["name"], meta.get("namespace", "default")
    annotations = meta.get("annotations") or {}
    tmpl = spec.get("leaderWorkerTemplate") or {}
    size = int(tmpl.get("size", 1))
    worker_t = tmpl.get("workerTemplate") or {}
    leader_t = tmpl.get("leaderTemplate") or worker_t
    sg_policy = tmpl.get("subGroupPolicy") or {}
    sg_size = int(sg_policy["subGroupSize"]) if sg_policy.get("subGroupSize") else None
    leader_excluded = (
        sg_policy.get("subGroupPolicyType") == "LeaderExcluded" or sg_policy.get("type") == "LeaderExcluded"
    )
    group_excl = annotations.get(F.LWS_EXCLUSIVE_ANNOTATION)
    sg_excl = annotations.get(F.LWS_SUBGROUP_EXCLUSIVE_ANNOTATION) if sg_size else None
    recreate_group = tmpl.get("restartPolicy", "RecreateGroupOnPodRestart") != "None"
    owner = f"LeaderWorkerSet/{name}"
    pods: list[Pod] = []
    for g in range(int(spec.get("replicas", 1))):
        group_key = f"{owner}/{g}"
        leader_pod = make_pod(leader_t, _Placement(f"{name}-{g}", ns, owner, "leader", group_key, group_key), defaults)
        leader_tpu = leader_pod.requests_tpu
        for index in range(size):
            template, role = (leader_t, "leader") if index == 0 else (worker_t, "worker")
            pod_name = f"{name}-{g}" if index == 0 else f"{name}-{g}-{index}"
            topo, excl_set = None, None
            if sg_excl and not (index == 0 and leader_excluded):
                sg = 0 if index == 0 else _subgroup_of_worker(size, sg_size or 1, index)
                topo, excl_set = sg_excl, f"{group_key}/subgroup-{sg}"
            if group_excl:  # the group-level rule dominates placement when both are set
                topo, excl_set = group_excl, group_key
            where = _Placement(
                pod_name,
                ns,
                owner,
                role,
                group_key,
                group_key if recreate_group else f"{owner}/{pod_name}",
                topo,
                excl_set,
                {F.LWS_NAME_LABEL: name, F.LWS_WORKER_INDEX_LABEL: str(index)},
            )
            pod = make_pod(template, where, defaults)
            lws_env = {
                F.LWS_ENV_LEADER_ADDRESS: f"{name}-{g}.{name}.{ns}",
                F.LWS_ENV_GROUP_SIZE: str(size),
                F.LWS_ENV_WORKER_INDEX: str(index),
            }
            if pod.requests_tpu:
                pod = (
                    _lws_tpu_env_subgroup(pod, name, g, index, size, sg_size, leader_tpu)
                    if sg_size
                    else _lws_tpu_env(pod, name, g, index, size, leader_tpu)
                )
            pods.append(_with_env(pod, lws_env))
    return pods


# --------------------------------------------------------------------------- JobSet


def _job_pod_count(job_spec: Mapping[str, Any]) -> int:
    parallelism = int(job_spec.get("parallelism", 1))
    completions = job_spec.get("completions")
    return min(parallelism, int(completions)) if completions is not None else parallelism


def expand_jobset(
    obj: Mapping[str, Any],
    defaults: LimitDefaults,
    *,
    owner: str | None = None,
    roles: Mapping[str, str] | None = None,
) -> list[Pod]:
    """Every pod of a JobSet: per replicated job, ``replicas`` child Jobs of ``parallelism`` pods."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    name, ns = meta["name"], meta.get("namespace", "default")
    owner = owner or f"JobSet/{name}"
    js_excl = (meta.get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
    pods: list[Pod] = []
    for rjob in spec.get("replicatedJobs") or ():
        job_t = rjob.get("template") or {}
        pod_t = (job_t.get("spec") or {}).get("template") or {}
        excl = (
            ((pod_t.get("metadata") or {}).get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
            or ((job_t.get("metadata") or {}).get("annotations") or {}).get(F.JOBSET_EXCLUSIVE_ANNOTATION)
            or js_excl
        )
        role = (roles or {}).get(rjob["name"], rjob["name"])
        for j in range(int(rjob.get("replicas", 1))):
            job_key = f"{owner}/{rjob['name']}-{j}"
            for p in range(_job_pod_count(job_t.get("spec") or {})):
                labels = {F.JOBSET_NAME_LABEL: name, F.JOBSET_REPLICATED_JOB_LABEL: rjob["name"]}
                where = _Placement(
                    f"{name}-{rjob['name']}-{j}-{p}", ns, owner, role, job_key, owner, excl, job_key, labels
                )
                pods.append(make_pod(pod_t, where, defaults))
    return pods


# --------------------------------------------------------------------------- PathwaysJob


def _pw_tpu_selector(worker: Mapping[str, Any]) -> dict[str, str]:
    selector = dict(worker.get("nodeSelector") or {})
    selector[F.TPU_ACCELERATOR_LABEL] = F.PW_GKE_ACCELERATOR.get(worker["type"], "")
    selector[F.TPU_TOPOLOGY_LABEL] = worker["topology"]
    return selector


def _pw_vms(machine_type: str, topology: str) -> tuple[int, int]:
    """(VMs per slice, chips per VM) as ``calculateVMsFromMachineTypeAndTopology`` computes them."""
    chips = math.prod(int(p) for p in topology.split("x"))
    per_vm = F.PW_CHIPS_PER_VM.get(machine_type, F.PW_DEFAULT_CHIPS_PER_VM)
    return (chips // per_vm if chips >= per_vm else 1), per_vm


def _pw_head_containers(pw: Mapping[str, Any], as_init: bool) -> list[dict[str, Any]]:
    spec = pw["spec"]
    worker = spec["workers"][0]
    pdir = spec.get("pathwaysDir", "")
    tag = spec.get("pathwaysVersion") or "latest"
    instance = f"{F.PW_TPU_VERSION.get(worker['type'], '')}:{worker['topology']}"
    coordinator = {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}
    rm = {
        "name": "pathways-rm",
        "image": f"{F.PW_RM_AND_WORKER_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
            "--node_type=resource_manager",
            f"--instance_count={int(worker.get('numSlices', 1))}",
            f"--instance_type={instance}",
        ],
        "env": [{"name": "HOST_ADDRESS", "valueFrom": coordinator}, {"name": "TPU_SKIP_MDS_QUERY", "value": "true"}],
        "ports": [{"containerPort": F.PW_RM_PORT}, {"containerPort": F.PW_RM_EXTRA_PORT}],
        "resources": {"limits": dict(F.PW_RM_LIMITS)},
    }
    proxy = {
        "name": "pathways-proxy",
        "image": f"{F.PW_PROXY_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_PROXY_PORT}",
            f"--resource_manager_address=$(PATHWAYS_HEAD):{F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
        ],
        "env": [{"name": "PATHWAYS_HEAD", "valueFrom": coordinator}],
        "ports": [{"containerPort": F.PW_PROXY_PORT}],
        "resources": {"limits": dict(F.PW_PROXY_LIMITS)},
    }
    if as_init:
        rm["restartPolicy"] = proxy["restartPolicy"] = F.SIDECAR_RESTART_POLICY
    return [rm, proxy]


def pathwaysjob_to_jobset(pw: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet the PathwaysJob v0.1.4 controller creates for ``pw`` (``createJobSet``)."""
    meta, spec = pw.get("metadata") or {}, pw.get("spec") or {}
    controller = spec.get("controller") or {}
    worker = spec["workers"][0]
    mode = controller.get("deploymentMode", "default")
    user = controller.get("template")
    coordinator = {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}
    if user:
        head_spec = dict(user.get("spec") or {})
        main = controller.get("mainContainerName", F.PW_DEFAULT_MAIN_CONTAINER)
        jax_env = [
            {"name": "PATHWAYS_HEAD", "valueFrom": coordinator},
            {"name": "JAX_PLATFORMS", "value": "proxy"},
            {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
            {"name": "JAX_BACKEND_TARGET", "value": f"grpc://$(PATHWAYS_HEAD):{F.PW_PROXY_PORT}"},
        ]
        head_spec["containers"] = [
            {**c, "env": list(c.get("env") or []) + jax_env} if c.get("name") == main else c
            for c in head_spec.get("containers") or []
        ]
        head_spec["initContainers"] = list(head_spec.get("initContainers") or []) + _pw_head_containers(pw, True)
    else:
        head_spec = {"containers": _pw_head_containers(pw, False)}
    head_spec["hostNetwork"] = True
    head_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    head_annotations = dict(meta.get("annotations") or {})
    if mode == F.PW_COLOCATE_MODE:
        head_spec["nodeSelector"] = _pw_tpu_selector(worker)
    else:
        head_annotations[F.JOBSET_EXCLUSIVE_ANNOTATION] = F.PW_HEAD_DEFAULT_EXCLUSIVE_TOPOLOGY
    vms, chips = _pw_vms(worker["type"], worker["topology"])
    tag = spec.get("pathwaysVersion") or "latest"
    pdir = spec.get("pathwaysDir", "")
    worker_container = {
        "name": "pathways-worker",
        "image": f"{F.PW_RM_AND_WORKER_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_WORKER_PORT}",
            f"--resource_manager_address=$(PATHWAYS_HEAD):{F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
        ],
        "env": [
            {"name": "PATHWAYS_HEAD", "valueFrom": coordinator},
            {"name": "MEGASCALE_COORDINATOR_ADDRESS", "valueFrom": coordinator},
        ],
        "ports": [{"containerPort": p} for p in F.PW_WORKER_PORTS],
        "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
        "resources": {"limits": {F.TPU_RESOURCE: str(chips)}},
    }
    worker_pod = {
        "metadata": {"annotations": {F.JOBSET_EXCLUSIVE_ANNOTATION: F.PW_WORKER_EXCLUSIVE_TOPOLOGY}},
        "spec": {
            "priorityClassName": worker.get("priorityClassName"),
            "containers": [worker_container],
            "nodeSelector": _pw_tpu_selector(worker),
            "volumes": [{"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}],
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
        },
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace", "default"),
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": F.PW_HEAD_JOB_NAME,
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": head_annotations},
                        "spec": {
                            "parallelism": 1,
                            "completions": 1,
                            "template": {"metadata": {"annotations": head_annotations}, "spec": head_spec},
                        },
                    },
                },
                {
                    "name": F.PW_WORKER_JOB_NAME,
                    "replicas": int(worker.get("numSlices", 1)),
                    "template": {"spec": {"parallelism": vms, "completions": vms, "template": worker_pod}},
                },
            ]
        },
    }


def expand_pathwaysjob(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """Every pod of a PathwaysJob: the head and the workers of the JobSet its controller creates."""
    roles = {F.PW_HEAD_JOB_NAME: "pathways-head", F.PW_WORKER_JOB_NAME: "pathways-worker"}
    return expand_jobset(
        pathwaysjob_to_jobset(obj), defaults, owner=f"PathwaysJob/{obj['metadata']['name']}", roles=roles
    )


# --------------------------------------------------------------------------- Deployment, Job, Pod


def expand_deployment(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """``replicas`` pods (default 1); a rolling update surges one pod at a time, so each pod is its own unit."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name, ns, owner = meta["name"], meta.get("namespace", "default"), f"Deployment/{meta['name']}"
    return [
        make_pod(
            spec.get("template") or {},
            _Placement(f"{name}-{i}", ns, owner, name, f"{owner}/{i}", f"{owner}/{i}"),
            defaults,
        )
        for i in range(int(spec.get("replicas", 1)))
    ]


def expand_job(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """``parallelism`` pods (default 1, at most ``completions``)."""
    meta, spec = obj["metadata"], obj.get("spec") or {}
    name, ns, owner = meta["name"], meta.get("namespace", "default"), f"Job/{meta['name']}"
    return [
        make_pod(spec.get("template") or {}, _Placement(f"{name}-{i}", ns, owner, name, owner, owner), defaults)
        for i in range(_job_pod_count(spec))
    ]


def expand_pod(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    meta = obj["metadata"]
    owner = f"Pod/{meta['name']}"
    where = _Placement(meta["name"], meta.get("namespace", "default"), owner, meta["name"], owner, owner)
    return [make_pod(obj, where, defaults)]


_EXPANDERS = {
    "LeaderWorkerSet": expand_leaderworkerset,
    "JobSet": expand_jobset,
    "PathwaysJob": expand_pathwaysjob,
    "Deployment": expand_deployment,
    "Job": expand_job,
    "Pod": expand_pod,
}


def hpa_bounds(view: PlanView) -> dict[tuple[str, str, str], tuple[int, int]]:
    """``(namespace, kind, name)`` of each HPA's scale target -> its ``(minReplicas, maxReplicas)``."""
    out = {}
    for hpa in view.kubernetes_objects("HorizontalPodAutoscaler"):
        meta, spec = hpa.get("metadata") or {}, hpa.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        key = (meta.get("namespace", "default"), str(ref.get("kind")), str(ref.get("name")))
        out[key] = (int(spec.get("minReplicas", 1)), int(spec["maxReplicas"]))
    return out


def with_replicas(obj: Mapping[str, Any], replicas: int) -> dict[str, Any]:
    """``obj`` with ``spec.replicas`` set, as a scale subresource update (an HPA's) leaves it."""
    return {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}}


def pods_of(view: PlanView, replicas: Mapping[tuple[str, str, str], int] | None = None) -> list[Pod]:
    """Every pod the plan's workload objects make, in plan order.

    An object an HPA scales runs its ``minReplicas`` (the HPA raises it there at once) unless
    ``replicas`` (``(namespace, kind, name)`` -> count) says otherwise.
    """
    defaults = limit_defaults(view)
    counts = {k: lo for k, (lo, _) in hpa_bounds(view).items()}
    counts.update(replicas or {})
    out: list[Pod] = []
    for obj in view.kubernetes_objects():
        expand = _EXPANDERS.get(str(obj.get("kind")))
        if expand is not None:
            meta = obj.get("metadata") or {}
            ns = meta.get("namespace", "default")
            count = counts.get((ns, str(obj.get("kind")), str(meta.get("name"))))
            out.extend(expand(obj if count is None else with_replicas(obj, count), defaults.get(ns, LimitDefaults())))
    return out


def gs_uris(values: Iterable[str]) -> Iterator[str]:
    """Every ``gs://...`` substring in ``values``."""
    for v in values:
        yield from re.findall(r"gs://[^\s,;'\"]+", v)
