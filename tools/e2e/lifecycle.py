"""What ``make e2e`` does to a deployed stack after ``pulumi up``, each step judged from the API server:
a second preview, a scale through the scale subresource (the HPA's path), an image bump that rolls out by whole
groups, and ``pulumi destroy`` that leaves nothing behind.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tpu_serving_tools.verify.checks import Finding

from .stack_run import StackRun

WORKLOAD_PLURALS = {
    "LeaderWorkerSet": ("leaderworkerset.x-k8s.io", "v1", "leaderworkersets"),
    "DisaggregatedSet": ("disaggregatedset.x-k8s.io", "v1alpha1", "disaggregatedsets"),
}

SKIPPED_KINDS = frozenset({"Event", "Lease", "EndpointSlice", "Endpoints", "ControllerRevision", "ComponentStatus"})
"""Kinds that come and go with the control plane's own work (leases, events, endpoints): not stack objects."""

Key = tuple[str, str, str | None, str]


def wait_for(condition: Callable[[], bool], timeout: float, interval: float = 0.5) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def second_preview(run: StackRun) -> Finding:
    """A preview right after ``up`` proposes no change."""
    change = run.preview()
    if not change.counts:
        return Finding("preview", "second preview", False, "the preview reported no resources at all")
    changed = change.changed
    detail = ", ".join(f"{op} {n}" for op, n in sorted(changed.items())) or f"{change.counts.get('same', 0)} same"
    return Finding("preview", "second preview", not changed, detail)


def inventory(api_client: Any) -> set[Key]:
    """Every object the API server lists, by (apiVersion, kind, namespace, name), but :data:`SKIPPED_KINDS`."""
    from kubernetes.dynamic import DynamicClient
    from kubernetes.dynamic.exceptions import NotFoundError

    client = DynamicClient(api_client)  # type: ignore[no-untyped-call]
    client.resources.invalidate_cache()  # a CRD deleted since the last discovery serves nothing now
    out: set[Key] = set()
    for resource in client.resources.search():
        if resource.kind in SKIPPED_KINDS or resource.kind.endswith("List") or "list" not in resource.verbs:
            continue
        if "/" in resource.name:  # a subresource
            continue
        try:
            items = resource.get().items
        except NotFoundError:
            continue  # discovered, then its CRD went away: it holds nothing
        for item in items:
            m = item.metadata
            out.add((resource.group_version, resource.kind, m.namespace, m.name))
    return out


def left_behind(before: set[Key], after: set[Key]) -> Finding:
    """What ``destroy`` left: objects that exist now and did not before ``up``."""
    extra = sorted(after - before, key=str)
    detail = "; ".join(f"{k} {ns + '/' if ns else ''}{n}" for _, k, ns, n in extra[:12])
    return Finding("destroy", "nothing left", not extra, f"{len(extra)} objects left: {detail}" if extra else "")


def _custom(api_client: Any) -> Any:
    from kubernetes import client

    return client.CustomObjectsApi(api_client)


def scale(api_client: Any, kind: str, namespace: str, name: str, replicas: int) -> None:
    """Set ``replicas`` through the scale subresource, as the HorizontalPodAutoscaler does."""
    group, version, plural = WORKLOAD_PLURALS[kind]
    _custom(api_client).patch_namespaced_custom_object_scale(
        group, version, namespace, plural, name, {"spec": {"replicas": replicas}}
    )


def lws_status(api_client: Any, namespace: str, name: str) -> dict[str, Any]:
    obj = _custom(api_client).get_namespaced_custom_object(
        "leaderworkerset.x-k8s.io", "v1", namespace, "leaderworkersets", name
    )
    return dict(obj)


@dataclass
class GroupWatch:
    """Samples a LeaderWorkerSet's Ready groups in the background while something (a rollout) runs."""

    api_client: Any
    namespace: str
    name: str
    interval: float = 0.2
    samples: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> GroupWatch:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            status = lws_status(self.api_client, self.namespace, self.name).get("status", {})
            self.samples.append(int(status.get("readyReplicas") or 0))
            self._stop.wait(self.interval)


def rolled_out(api_client: Any, namespace: str, name: str, timeout: float) -> Finding:
    """The LeaderWorkerSet's every group is updated and Ready (its status, written by its controller)."""

    def done() -> bool:
        obj = lws_status(api_client, namespace, name)
        want = int(obj.get("spec", {}).get("replicas") or 0)
        status = obj.get("status", {})
        return want > 0 and status.get("updatedReplicas") == want and status.get("readyReplicas") == want

    ok = wait_for(done, timeout)
    status = lws_status(api_client, namespace, name).get("status", {})
    detail = f"updated {status.get('updatedReplicas')}, ready {status.get('readyReplicas')}"
    return Finding("rollout", f"LeaderWorkerSet {namespace}/{name}", ok, detail)


def floor_held(samples: Iterable[int], floor: int, subject: str) -> Finding:
    """The Ready groups never fell below ``floor`` while the rollout ran."""
    seen = list(samples)
    if not seen:
        return Finding("rollout", subject, False, "no sample of the Ready groups was taken")
    low = min(seen)
    return Finding("rollout", subject, low >= floor, f"lowest Ready groups {low}, floor {floor}, {len(seen)} samples")
