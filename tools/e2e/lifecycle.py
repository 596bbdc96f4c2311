"""What ``make e2e`` does to a deployed stack after ``pulumi up``, each step judged from the API server: a second
preview, a scale from 1 to 2 through the scale subresource followed by a preview and an ``up`` (:func:`scale_and_up`),
and ``pulumi destroy`` that leaves nothing behind. The image bump's rollout is :mod:`.rollout`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tpu_serving_tools.verify.checks import Finding

from .rollout import LWS_GROUP, LWS_PLURAL, LWS_VERSION, live_lws, lws_pods, serving_groups
from .stack_run import StackRun, engine_errors

SKIPPED_KINDS = frozenset({"Event", "Lease", "EndpointSlice", "Endpoints", "ControllerRevision", "ComponentStatus"})
"""Kinds that come and go with the control plane's own work (leases, events, endpoints): not stack objects."""

Key = tuple[str, str, str | None, str]


def second_preview(run: StackRun) -> Finding:
    """A preview right after ``up`` proposes no change."""
    change = run.preview(refresh=True)
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


def retained(state: Iterable[Mapping[str, Any]]) -> set[Key]:
    """The Kubernetes objects of the stack's state that ``pulumi destroy`` keeps (``retainOnDelete``: the shared
    PriorityClasses on an existing cluster, :class:`tpu_serving.tenancy.tenant.TenancyArgs` ``shared_cluster``)."""
    out: set[Key] = set()
    for r in state:
        if not r.get("retainOnDelete") or not str(r.get("type", "")).startswith("kubernetes:"):
            continue
        obj = r.get("outputs") or r.get("inputs") or {}
        meta = obj.get("metadata") or {}
        out.add((str(obj.get("apiVersion")), str(obj.get("kind")), meta.get("namespace"), str(meta.get("name"))))
    return out


def left_behind(before: set[Key], after: set[Key], kept: set[Key] | None = None) -> Finding:
    """What ``destroy`` left: objects that exist now and did not before ``up``, but those the stack ``kept``
    (:func:`retained`)."""
    extra = sorted(after - before - (kept or set()), key=str)
    detail = "; ".join(f"{k} {ns + '/' if ns else ''}{n}" for _, k, ns, n in extra[:12])
    return Finding("destroy", "nothing left", not extra, f"{len(extra)} objects left: {detail}" if extra else "")


HPA_TYPE = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"


def hpa_targets(state: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(namespace, name) of each LeaderWorkerSet an HPA of the stack's state scales."""
    out = []
    for r in state:
        if r.get("type") != HPA_TYPE:
            continue
        obj = r.get("outputs") or r.get("inputs") or {}
        ref = (obj.get("spec") or {}).get("scaleTargetRef") or {}
        if ref.get("kind") == "LeaderWorkerSet":
            out.append((str((obj.get("metadata") or {}).get("namespace")), str(ref.get("name"))))
    return out


def _replicas(api_client: Any, namespace: str, name: str) -> tuple[int, int, int]:
    """(the LeaderWorkerSet's spec.replicas, its leader StatefulSet's spec.replicas: what its controller made, the
    groups that serve: whole, Ready, on one revision)."""
    from kubernetes import client

    lws, size = live_lws(api_client, namespace, name)
    sts = client.AppsV1Api(api_client).read_namespaced_stateful_set(name, namespace)
    serving = serving_groups(lws_pods(api_client, namespace, name), size)
    return int(lws["spec"].get("replicas", 1)), int(sts.spec.replicas or 0), serving


def scale_and_up(run: StackRun, api_client: Any, target: tuple[str, str], timeout: float = 60.0) -> list[Finding]:
    """The HPA's path: the LeaderWorkerSet scaled from 1 to 2 through its scale subresource, its controller making
    the second group, which the scheduler places and which serves (every pod Ready); then ``pulumi preview --refresh`` proposes no change, and ``pulumi up --refresh``
    leaves the replicas at 2 (the stack does not own ``spec.replicas`` of an autoscaled workload, so it and the HPA
    do not fight). Without ``--refresh`` the engine compares the program with its own state only and never sees
    what the HPA did; a later update of the workload would apply the stack's replicas again."""
    import time

    from kubernetes import client

    namespace, name = target
    subject = f"LeaderWorkerSet {namespace}/{name}"
    api = client.CustomObjectsApi(api_client)
    api.patch_namespaced_custom_object_scale(
        LWS_GROUP, LWS_VERSION, namespace, LWS_PLURAL, name, {"spec": {"replicas": 2}}
    )
    deadline = time.monotonic() + timeout
    while (seen := _replicas(api_client, namespace, name)) != (2, 2, 2) and time.monotonic() < deadline:
        time.sleep(1)
    detail = f"scaled to 2: spec {seen[0]}, leader StatefulSet {seen[1]}, serving groups {seen[2]}"
    out = [Finding("scale", subject, seen == (2, 2, 2), detail)]
    preview = f"{subject}: preview --refresh after the scale"
    try:
        change = run.preview(refresh=True)
    except Exception as err:  # the engine's own refusal is the finding
        return [*out, Finding("scale", preview, False, engine_errors(str(err)))]
    same = f"{change.counts.get('same', 0)} same"
    detail = ", ".join(f"{op} {n}" for op, n in sorted(change.changed.items())) or same
    if change.changed:  # which resources, and the engine's reason, from the preview's own lines
        said = [line.strip() for line in change.stdout.splitlines() if "[diff:" in line or "replace" in line]
        detail += ": " + " | ".join(said[:6])
    out.append(Finding("scale", preview, bool(change.counts) and not change.changed, detail))
    try:
        run.up(refresh=True)
    except Exception as err:
        return [*out, Finding("scale", f"{subject}: up --refresh after the scale", False, engine_errors(str(err)))]
    kept = _replicas(api_client, namespace, name)[0]
    out.append(Finding("scale", f"{subject}: up --refresh after the scale", kept == 2, f"spec.replicas {kept}"))
    return out


def up_finding(report: Any, run: StackRun) -> bool:
    """``pulumi up`` as a report step, and its finding: the resources it made, or the engine's own message; whether
    the stack is up (a lifecycle of its own runs its steps only then)."""
    try:
        up = report.step("up", run.up)
    except Exception as err:  # the engine's own message is the finding
        report.findings.append(Finding("up", "pulumi up", False, engine_errors(str(err))))
        return False
    counts = ", ".join(f"{k} {v}" for k, v in sorted(up.counts.items()))
    report.findings.append(Finding("up", "pulumi up", True, counts))
    return True
