"""A canary rollout (``serving.canaryGroups``) through ``pulumi up``, judged from the groups the real LWS controller
rolls.

The stack goes up with ``canaryGroups: 1`` and is scaled to two groups (the HPA's minimum, through the scale
subresource: ``make e2e`` has no metrics API). Its engine image is then bumped as :mod:`.rollout` bumps it, the
canary still set: the LeaderWorkerSet's ``partition`` is 1, so the highest-index group of the two (group 1) must
move to the new template revision and group 0 must keep the old one for as long as the canary holds (every pod's
``leaderworkerset.sigs.k8s.io/template-revision-hash``, sampled from the bump on; the leader StatefulSet's
``spec.updateStrategy.rollingUpdate.partition``, which the LWS controller keeps at the LeaderWorkerSet's). Then
``canaryGroups`` is removed and ``pulumi up`` releases group 0: every group ends on the new revision.

Sources: sigs.k8s.io/lws@v0.9.0 pkg/controllers/leaderworkerset_controller.go l.280-288 (``rollingUpdateParameters``:
``stsPartition = max(stsPartition, ...Partition)``); api/leaderworkerset/v1/leaderworkerset_types.go l.37-63 (the
pod labels).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tpu_serving_tools.verify.checks import LWS_GROUP_LABEL, Finding

from .lifecycle import hpa_targets, up_finding
from .rollout import (
    LWS_GROUP,
    LWS_PLURAL,
    LWS_VERSION,
    REVISION,
    bumped,
    live_lws,
    lws_pods,
    rolled_out,
    serving_groups,
)
from .stack_run import StackRun, engine_errors

CANARY = 1
"""The canary's groups: the highest-index one of two."""

GROUPS = 2
"""The groups the run holds while it rolls (the flagship stack's ``autoscaling.minReplicas``)."""

HOLD_SECONDS = 30.0
"""How long the canary must hold group 0 once group 1 serves on the new revision. Under kwok a pod is Ready within
seconds, so without a partition the controller has moved on to group 0 well within it."""


def with_canary(config: Mapping[str, Any], canary: int | None = CANARY) -> dict[str, Any]:
    """The stack file's ``config`` with ``serving.canaryGroups`` set to ``canary`` (None removes it)."""
    serving = {k: v for k, v in dict(config.get("serving") or {}).items() if k != "canaryGroups"}
    if canary is not None:
        serving["canaryGroups"] = canary
    return {**config, "serving": serving}


def revisions_by_group(pods: Iterable[Mapping[str, Any]]) -> dict[int, set[str]]:
    """Each group index's template revisions, over its pods (not being deleted)."""
    out: dict[int, set[str]] = {}
    for p in pods:
        meta = p.get("metadata") or {}
        labels = meta.get("labels") or {}
        if meta.get("deletionTimestamp") or LWS_GROUP_LABEL not in labels:
            continue
        out.setdefault(int(labels[LWS_GROUP_LABEL]), set()).add(str(labels.get(REVISION)))
    return out


@dataclass
class Canary:
    """What the run saw of one LeaderWorkerSet while its canary held."""

    namespace: str
    name: str
    size: int
    old: set[str]
    held: list[set[str]] = field(default_factory=list)
    """Group 0's revisions, each sample from the bump on."""
    moved: set[str] = field(default_factory=set)
    """Group 1's revisions once it served on a new one."""

    @property
    def subject(self) -> str:
        return f"LeaderWorkerSet {self.namespace}/{self.name}"


def held_finding(c: Canary) -> Finding:
    """Group 0 kept the old revision in every sample."""
    left = [sorted(s - c.old) for s in c.held if s - c.old]
    if not c.held:
        detail = "no sample of group 0"
    elif left:
        detail = f"group 0 moved to {left[0]} ({len(left)} of {len(c.held)} samples)"
    else:
        detail = f"group 0 on {sorted(c.old)} in {len(c.held)} samples"
    return Finding("canary", f"{c.subject}: group 0 kept the old revision", bool(c.held) and not left, detail)


def moved_finding(c: Canary) -> Finding:
    """Group 1 serves on one new revision."""
    ok = len(c.moved) == 1 and not c.moved & c.old
    return Finding("canary", f"{c.subject}: group 1 moved to the new revision", ok, f"group 1 on {sorted(c.moved)}")


def _sts_partition(api_client: Any, c: Canary) -> int | None:
    from kubernetes import client

    sts = client.AppsV1Api(api_client).read_namespaced_stateful_set(c.name, c.namespace)
    strategy = sts.spec.update_strategy
    rolling = strategy.rolling_update if strategy is not None else None
    return None if rolling is None else rolling.partition


def _scale(api_client: Any, c: Canary, timeout: float) -> Finding:
    """The LeaderWorkerSet at :data:`GROUPS` groups, every one serving (the HPA's minimum, set by hand)."""
    from kubernetes import client

    client.CustomObjectsApi(api_client).patch_namespaced_custom_object_scale(
        LWS_GROUP, LWS_VERSION, c.namespace, LWS_PLURAL, c.name, {"spec": {"replicas": GROUPS}}
    )
    deadline = time.monotonic() + timeout
    while (serving := serving_groups(lws_pods(api_client, c.namespace, c.name), c.size)) != GROUPS:
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    return Finding("canary", f"{c.subject}: scaled to {GROUPS}", serving == GROUPS, f"{serving} groups serve")


def _hold(api_client: Any, c: Canary, timeout: float) -> None:
    """Sample group 0 until group 1 serves on a new revision, then for :data:`HOLD_SECONDS` more."""
    deadline, until = time.monotonic() + timeout, None
    while time.monotonic() < (until or deadline):
        pods = lws_pods(api_client, c.namespace, c.name)
        groups = revisions_by_group(pods)
        c.held.append(groups.get(0, set()))
        one = [p for p in pods if (p.get("metadata") or {}).get("labels", {}).get(LWS_GROUP_LABEL) == "1"]
        if until is None and serving_groups(one, c.size) == 1 and not groups.get(1, set()) & c.old:
            c.moved, until = groups.get(1, set()), time.monotonic() + HOLD_SECONDS
        time.sleep(0.5)


def _up(run: StackRun, config: Mapping[str, Any], subject: str) -> Finding:
    run.write_stack_file(config)
    try:
        up = run.up()
    except Exception as err:  # the engine's own refusal is the finding
        return Finding("canary", subject, False, engine_errors(str(err)))
    return Finding("canary", subject, bool(up.changed), ", ".join(f"{k} {v}" for k, v in sorted(up.changed.items())))


def canary_rollout(run: StackRun, api_client: Any, config: Mapping[str, Any], timeout: float = 120.0) -> list[Finding]:
    """Scale to two groups, bump the image with the canary set and watch group 0 hold, then release it."""
    targets = hpa_targets(run.resources())
    change = bumped(config)
    if not targets or change is None:
        return [Finding("canary", "canary", False, "the stack has no autoscaled LeaderWorkerSet with an engine image")]
    (namespace, name), (bumped_config, image) = targets[0], change
    c = Canary(namespace, name, live_lws(api_client, namespace, name)[1], set())
    out = [_scale(api_client, c, timeout)]
    c.old = {r for s in revisions_by_group(lws_pods(api_client, namespace, name)).values() for r in s}
    out.append(_up(run, with_canary(bumped_config), f"pulumi up of {image}, canaryGroups {CANARY}"))
    _hold(api_client, c, timeout)
    partition = _sts_partition(api_client, c)
    out += [moved_finding(c), held_finding(c)]
    out.append(Finding("canary", f"{c.subject}: leader StatefulSet partition", partition == 1, f"{partition}"))
    out.append(_up(run, with_canary(bumped_config, None), "pulumi up without canaryGroups"))
    deadline, last = time.monotonic() + timeout, "not sampled"
    while time.monotonic() < deadline and (
        last := rolled_out(lws_pods(api_client, namespace, name), GROUPS, c.size, c.old, image)
    ):
        time.sleep(0.5)
    out.append(Finding("canary", f"{c.subject}: released, every group on the new revision", not last, last or "done"))
    return out


def canary_lifecycle(report: Any, run: StackRun, api_client: Any, config: Mapping[str, Any]) -> None:
    """``run_stack``'s lifecycle for the canary: up, :func:`canary_rollout`, destroy."""
    if not up_finding(report, run):
        return
    report.findings += report.step("canary", lambda: canary_rollout(run, api_client, config))
    report.step("destroy", run.destroy)
