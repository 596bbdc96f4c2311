"""The pod model: :class:`Pod` and its containers, tolerations and volumes, and how a pod template
becomes one (Kubernetes request defaulting, LimitRange defaults, the containers GKE injects).

The controllers' expansions (:mod:`.pods_lws`, :mod:`.pods_jobset`, :mod:`.pods_pathwaysjob`, and the
Deployment/Job/Pod ones in :mod:`tools.runtime.pods`) build their pods with :func:`make_pod`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.quantities import Resources, _as_resources, _resources

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
    http_probes: tuple[tuple[int | str, str], ...] = ()
    """(port, path) of each probe's ``httpGet``: what the kubelet already asks the container."""
    sidecar: bool = False
    """An init container with ``restartPolicy: Always`` (a native sidecar)."""
    read_only_mounts: frozenset[str] = frozenset()
    """Names of volumes this container mounts read-only."""


@dataclass(frozen=True)
class Volume:
    """A pod volume; ``gcs_bucket`` and ``mount_options`` for GCS FUSE CSI volumes, ``medium`` for an emptyDir."""

    name: str
    kind: str
    gcs_bucket: str | None = None
    read_only: bool = False
    mount_options: tuple[str, ...] = ()
    """A GCS FUSE volume's ``mountOptions``, split at commas."""
    medium: str | None = None
    """An emptyDir's ``medium`` (``""``: the node's disk, ``Memory``: tmpfs); None for any other kind."""


@dataclass(frozen=True)
class ZoneRule:
    """A required topology spread over zones (``topologyKey: topology.kubernetes.io/zone``, ``whenUnsatisfiable:
    DoNotSchedule``): the pods ``selector`` picks in the pod's namespace differ by at most ``max_skew`` between
    zones, and while fewer than ``min_domains`` zones are eligible the emptiest counts as holding none (k8s.io/api
    v0.36.3 core/v1/types.go l.4734-4743)."""

    max_skew: int
    min_domains: int
    selector: Mapping[str, Any]


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
    node_affinity: tuple[tuple[Mapping[str, Any], ...], ...] = ()
    """``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``: each term's ``matchExpressions``; a node
    must match one term (https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#node-affinity)."""
    zone_rules: tuple[ZoneRule, ...] = ()
    """The pod's required spreads over zones (``ScheduleAnyway`` ones only rank nodes, and are left out)."""

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


def _http_probes(spec: Mapping[str, Any]) -> tuple[tuple[int | str, str], ...]:
    found: list[tuple[int | str, str]] = []
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        get = (spec.get(probe) or {}).get("httpGet") or {}
        if "port" in get:
            found.append((get["port"], str(get.get("path", "/"))))
    return tuple(dict.fromkeys(found))


def _defaulted(spec: Mapping[str, Any], defaults: LimitDefaults) -> tuple[dict[str, float], dict[str, float]]:
    """The container's limits and requests after Kubernetes request defaulting (see facts)."""
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
    return limits, requests


def _container_ports(spec: Mapping[str, Any]) -> tuple[tuple[int, ...], dict[str, int]]:
    """The container's ports, and those of them that are named, by name."""
    ports = spec.get("ports") or ()
    numbers = tuple(int(p["containerPort"]) for p in ports if "containerPort" in p)
    return numbers, {str(p["name"]): int(p["containerPort"]) for p in ports if "name" in p}


def make_container(spec: Mapping[str, Any], defaults: LimitDefaults, *, init: bool = False) -> Container:
    """A container spec with Kubernetes request defaulting applied (see facts)."""
    limits, requests = _defaulted(spec, defaults)
    name, image = str(spec.get("name", "")), str(spec.get("image", ""))
    command = tuple(str(a) for a in spec.get("command") or ())
    args = tuple(str(a) for a in spec.get("args") or ())
    env = {str(e["name"]): _env_value(e) for e in spec.get("env") or ()}
    ports, named_ports = _container_ports(spec)
    return Container(
        name=name,
        image=image,
        command=command,
        args=args,
        env=env,
        ports=ports,
        named_ports=named_ports,
        requests=_as_resources(requests),
        limits=_as_resources(limits),
        requested=frozenset(requests),
        probe_ports=_probe_ports(spec),
        http_probes=_http_probes(spec),
        sidecar=init and spec.get("restartPolicy") == F.SIDECAR_RESTART_POLICY,
        read_only_mounts=frozenset(m["name"] for m in spec.get("volumeMounts") or () if m.get("readOnly")),
    )


def _volume(spec: Mapping[str, Any]) -> Volume:
    kind = next((k for k in spec if k != "name"), "unknown")
    csi = spec.get("csi") or {}
    bucket, options = None, tuple[str, ...]()
    if csi.get("driver") == F.GCS_FUSE_CSI_DRIVER:
        bucket = (csi.get("volumeAttributes") or {}).get("bucketName")
        options = tuple(o for o in str((csi.get("volumeAttributes") or {}).get("mountOptions", "")).split(",") if o)
    empty = spec.get("emptyDir")
    medium = str(empty.get("medium") or "") if isinstance(empty, Mapping) else None
    return Volume(str(spec.get("name", "")), kind, bucket, bool(csi.get("readOnly")), options, medium)


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


def injected_sidecars(
    annotations: Mapping[str, str], defaults: LimitDefaults, volumes: Sequence[Mapping[str, Any]] = ()
) -> tuple[Container, ...]:
    """Containers that GKE's webhooks add to a pod with these annotations and volumes (the GCS FUSE sidecar, and
    the metadata prefetch sidecar for a volume that asks for it; see facts)."""
    if str(annotations.get(F.GCS_FUSE_INJECT_ANNOTATION, "")).lower() != "true":
        return ()
    requests = {
        k: annotations.get(a, F.GCS_FUSE_SIDECAR_REQUESTS[k]) for k, a in F.GCS_FUSE_REQUEST_ANNOTATIONS.items()
    }
    spec = {"name": F.GCS_FUSE_SIDECAR, "restartPolicy": F.SIDECAR_RESTART_POLICY, "resources": {"requests": requests}}
    out = [make_container(spec, LimitDefaults(), init=True)]
    prefetch = any(
        str(((v.get("csi") or {}).get("volumeAttributes") or {}).get(F.GCS_FUSE_PREFETCH_ATTRIBUTE, "")).lower()
        == "true"
        for v in volumes
    )
    if prefetch:
        extra = {
            "name": F.GCS_FUSE_PREFETCH_SIDECAR,
            "restartPolicy": F.SIDECAR_RESTART_POLICY,
            "resources": {"requests": dict(F.GCS_FUSE_PREFETCH_REQUESTS)},
        }
        out.append(make_container(extra, LimitDefaults(), init=True))
    return tuple(out)


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
        init_containers=injected_sidecars(annotations, defaults, spec.get("volumes") or ())
        + tuple(make_container(c, defaults, init=True) for c in spec.get("initContainers") or ()),
        volumes=tuple(_volume(v) for v in spec.get("volumes") or ()),
        priority_class=str(spec.get("priorityClassName") or ""),
        exclusive_topology=where.exclusive_topology,
        exclusive_set=where.exclusive_set if where.exclusive_topology else None,
        node_affinity=_node_affinity(spec),
        zone_rules=_zone_rules(spec),
    )


def _zone_rules(spec: Mapping[str, Any]) -> tuple[ZoneRule, ...]:
    return tuple(
        ZoneRule(int(c.get("maxSkew", 1)), int(c.get("minDomains") or 1), dict(c.get("labelSelector") or {}))
        for c in spec.get("topologySpreadConstraints") or ()
        if c.get("topologyKey") == F.ZONE_LABEL and c.get("whenUnsatisfiable") == "DoNotSchedule"
    )


def _node_affinity(spec: Mapping[str, Any]) -> tuple[tuple[Mapping[str, Any], ...], ...]:
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    return tuple(tuple(t.get("matchExpressions") or ()) for t in required.get("nodeSelectorTerms") or ())


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
