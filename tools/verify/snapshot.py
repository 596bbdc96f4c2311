"""What ``tpu-serving verify`` reads from a cluster: the objects of the stack's namespaces and the nodes.

A :class:`Snapshot` is plain data (each object as the API server returns it, a JSON mapping), so that the
checks are pure functions over it; :func:`read` fills one from a live API server with the Kubernetes Python
client, read-only (``get`` and ``list`` only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Obj = Mapping[str, Any]
"""One Kubernetes object as JSON."""


@dataclass(frozen=True)
class Kind:
    """A resource kind the checks read: its group/version and kind, and whether it is namespaced."""

    api_version: str
    kind: str
    namespaced: bool = True


KINDS: tuple[Kind, ...] = (
    Kind("v1", "Pod"),
    Kind("v1", "Service"),
    Kind("v1", "ResourceQuota"),
    Kind("v1", "Event"),
    Kind("discovery.k8s.io/v1", "EndpointSlice"),
    Kind("apps/v1", "Deployment"),
    Kind("apps/v1", "ReplicaSet"),
    Kind("apps/v1", "StatefulSet"),
    Kind("batch/v1", "Job"),
    Kind("autoscaling/v2", "HorizontalPodAutoscaler"),
    Kind("networking.k8s.io/v1", "NetworkPolicy"),
    Kind("policy/v1", "PodDisruptionBudget"),
    Kind("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"),
    # lws v0.10.0 config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml l.17: `- name: v1`, served and
    # stored (its only version)
    Kind("disaggregatedset.x-k8s.io/v1", "DisaggregatedSet"),
    Kind("jobset.x-k8s.io/v1alpha2", "JobSet"),
    Kind("pathways-job.pathways.domain/v1", "PathwaysJob"),
    Kind("inference.networking.k8s.io/v1", "InferencePool"),
    Kind("monitoring.googleapis.com/v1", "PodMonitoring"),
    Kind("gateway.networking.k8s.io/v1", "Gateway"),
    Kind("gateway.networking.k8s.io/v1", "HTTPRoute"),
    Kind("v1", "Node", namespaced=False),
)
"""Every kind a check reads. A kind the cluster does not serve reads as no objects."""


@dataclass(frozen=True)
class Snapshot:
    """The objects of some namespaces, by kind, and every node."""

    objects: Mapping[str, Sequence[Obj]] = field(default_factory=dict)
    """Objects by kind (``Pod``, ``LeaderWorkerSet``, ...)."""
    missing_kinds: frozenset[str] = frozenset()
    """Kinds the API server does not serve (their CRD is not installed)."""
    present: Mapping[tuple[str, str, str | None, str], bool] = field(default_factory=dict)
    """Whether each object asked for by (apiVersion, kind, namespace, name) exists."""

    def of(self, kind: str, namespace: str | None = None) -> list[Obj]:
        """The objects of ``kind``, in ``namespace`` when given."""
        items = self.objects.get(kind, ())
        return [o for o in items if namespace is None or o.get("metadata", {}).get("namespace") == namespace]

    def by_uid(self) -> dict[str, tuple[str, Obj]]:
        """Every object by its UID, with its kind."""
        return {o["metadata"]["uid"]: (kind, o) for kind, items in self.objects.items() for o in items}

    def get(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        return next((o for o in self.of(kind, namespace) if o["metadata"]["name"] == name), None)


def meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata", {})  # type: ignore[no-any-return]


def owners(obj: Obj) -> list[str]:
    """The UIDs of the object's owners."""
    return [ref["uid"] for ref in meta(obj).get("ownerReferences", []) or []]


def descendants(snapshot: Snapshot, root: Obj, kind: str) -> list[Obj]:
    """The objects of ``kind`` that ``root`` owns, directly or through owned objects (the garbage collector's
    graph: a Pod of a StatefulSet of a LeaderWorkerSet of a DisaggregatedSet)."""
    uids = {meta(root)["uid"]}
    frontier = set(uids)
    index = snapshot.by_uid()
    children: dict[str, set[str]] = {}
    for uid, (_, obj) in index.items():
        for owner in owners(obj):
            children.setdefault(owner, set()).add(uid)
    while frontier:
        frontier = {c for uid in frontier for c in children.get(uid, ())} - uids
        uids |= frontier
    return [o for o in snapshot.of(kind) if meta(o)["uid"] in uids and meta(o)["uid"] != meta(root)["uid"]]


def read(
    api_client: Any,
    namespaces: Iterable[str],
    asked: Iterable[tuple[str, str, str | None, str]] = (),
    kinds: Sequence[Kind] = KINDS,
) -> Snapshot:
    """Read ``kinds`` in ``namespaces`` (and the cluster-scoped ones) from the API server of ``api_client``
    (a ``kubernetes.client.ApiClient``), and whether each object ``asked`` for exists, with ``get`` and
    ``list`` calls only."""
    try:
        return _read(api_client, namespaces, asked, kinds)
    except ClusterUnreadable:
        raise
    except Exception as err:  # the client's own errors: urllib3's, ApiException (401, 403), a kubeconfig's plugin
        raise ClusterUnreadable(_reason(api_client, err)) from err


class ClusterUnreadable(Exception):
    """The API server could not be reached or refused a read; the message says which, and where."""


def _reason(api_client: Any, err: Exception) -> str:
    host = getattr(getattr(api_client, "configuration", None), "host", "the API server")
    status = getattr(err, "status", None)
    if status in (401, 403):
        return (
            f"{host} refused a read ({status} {getattr(err, 'reason', '')}): verify needs get and list on the "
            "stack's namespaces and on nodes"
        )
    return f"cannot read {host}: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _read(
    api_client: Any,
    namespaces: Iterable[str],
    asked: Iterable[tuple[str, str, str | None, str]],
    kinds: Sequence[Kind],
) -> Snapshot:
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

    client = DynamicClient(api_client)  # type: ignore[no-untyped-call]
    objects: dict[str, list[Obj]] = {}
    missing: set[str] = set()
    wanted = sorted(set(namespaces))
    for kind in kinds:
        try:
            resource = client.resources.get(api_version=kind.api_version, kind=kind.kind)
        except ResourceNotFoundError:
            missing.add(kind.kind)
            continue
        items: list[Obj] = []
        for namespace in wanted if kind.namespaced else [None]:
            listed = resource.get(namespace=namespace) if namespace else resource.get()
            items.extend(item.to_dict() for item in listed.items)
        objects[kind.kind] = items
    present: dict[tuple[str, str, str | None, str], bool] = {}
    for key in asked:
        version, kind_name, namespace, name = key
        try:
            resource = client.resources.get(api_version=version, kind=kind_name)
            resource.get(name=name, namespace=namespace) if namespace else resource.get(name=name)
            present[key] = True
        except (ResourceNotFoundError, NotFoundError):
            present[key] = False
    return Snapshot(objects, frozenset(missing), present)
