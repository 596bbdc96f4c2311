"""What ``make e2e`` does to a deployed stack after ``pulumi up``, each step judged from the API server: a second
preview, and ``pulumi destroy`` that leaves nothing behind; and the verdict of a rollout's floor (:func:`floor_held`),
for the rollout step still to be wired (an image bump through ``pulumi up``, sampled from the LeaderWorkerSet's
status).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tpu_serving_tools.verify.checks import Finding

from .stack_run import StackRun

SKIPPED_KINDS = frozenset({"Event", "Lease", "EndpointSlice", "Endpoints", "ControllerRevision", "ComponentStatus"})
"""Kinds that come and go with the control plane's own work (leases, events, endpoints): not stack objects."""

Key = tuple[str, str, str | None, str]


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


def floor_held(samples: Iterable[int], floor: int, subject: str) -> Finding:
    """The Ready groups never fell below ``floor`` while the rollout ran."""
    seen = list(samples)
    if not seen:
        return Finding("rollout", subject, False, "no sample of the Ready groups was taken")
    low = min(seen)
    return Finding("rollout", subject, low >= floor, f"lowest Ready groups {low}, floor {floor}, {len(seen)} samples")
