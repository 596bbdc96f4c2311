"""A zone outage: what the real scheduler does with the HPA's next group while one zone's VMs are all silent.

The stack goes up and is scaled to its two standing groups, one in each zone (the required zone spread:
:func:`tpu_serving.common.spread.group_zone_spread`). Then every Node of group 0's zone is taken from kwok at once, as a
zone that loses power or its network: the real node lifecycle controller taints them unreachable, and its taint
eviction marks group 0's pods for deletion after ``serving.probes.nodeLostSeconds``; with no kubelet to confirm it,
they stay Terminating, so group 0 cannot come back before the zone does. The surviving zone's group must serve
throughout. Then the stack's host-maintenance gate runs (its program from the ConfigMap ``pulumi up`` created, as its
ServiceAccount: :func:`.host_maintenance.run_gate_on`, with ``LOST_SECONDS`` shortened): it must raise the HPA's
minimum by the lost group (:mod:`tpu_serving.operations.maintenance.group_cover`; SRE review round 21, M1: at idle load nothing else adds
one), the real HPA controller must scale the LeaderWorkerSet to three, and the real scheduler must place group 2's
leader on the surviving zone's free slice: the required rule binds the standing groups only. The zone then comes
back (kwok takes its Nodes again), all three groups must serve, and the gate's next run must give the HPA its bounds
back.

What this does not show: a real zone's outage (the VMs stop; GKE's control plane, regional, keeps answering), the
cluster autoscaler (``make e2e`` creates every pool's Nodes at its maximum: :func:`.nodes.create_plan_nodes`), the
CronJob's schedule (the run starts the program itself), and the HPA's metric-driven decisions (a raised minimum
scales without metrics).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tpu_serving.common.spread import ZONE_LABEL
from tpu_serving.operations.maintenance.group_cover import COVER_ANNOTATION
from tpu_serving_tools.verify.checks import Finding

from .controlplane import KWOK_LABEL
from .host_maintenance import run_gate_on
from .kube import Kube
from .lifecycle import hpa_targets
from .node_loss import (
    autoscaled_lifecycle,
    deleted_after_toleration,
    group_pods,
    scale,
    silence,
    tainted,
    wait,
    where,
)
from .rollout import live_lws, lws_pods, serving_groups
from .stack_run import StackRun, engine_errors

CHECK = "zone-outage"
STANDING = 2
"""The standing groups of the run's stack (its ``autoscaling.minReplicas``), one per zone."""
GATE_LOST_SECONDS = 20
"""The gate run's ``LOST_SECONDS`` (the CronJob's is 600), so that the run need not wait 10 minutes."""


def _admin(api_client: Any) -> Kube:
    """The run's admin connection, as :class:`.kube.Kube` (the gate's runner asks it for a token)."""
    return Kube.of(api_client)


def _hpa(api_client: Any, namespace: str, name: str) -> dict[str, Any]:
    return dict(_admin(api_client).get("autoscaling/v2", "HorizontalPodAutoscaler", name, namespace))


def run_gate_finding(api_client: Any, namespace: str, subject: str, wanted: str) -> Finding:
    """One run of the stack's gate: its exit code 0 and ``wanted`` among what it did to the HPAs."""
    with tempfile.TemporaryDirectory(prefix="gate-") as folder:
        code, line = run_gate_on(_admin(api_client), namespace, Path(folder), {"LOST_SECONDS": str(GATE_LOST_SECONDS)})
    covers = [str(c) for c in line.get("covers", [])]
    ok = code == 0 and any(c.startswith(wanted) for c in covers)
    return Finding(CHECK, subject, ok, f"exit {code}: {'; '.join(covers) or line.get('message')}")


def _zone_nodes(api_client: Any, zone: str) -> list[str]:
    from kubernetes import client

    found = client.CoreV1Api(api_client).list_node(label_selector=f"{ZONE_LABEL}={zone}").items
    return sorted(str(n.metadata.name) for n in found if n.metadata is not None)


def _zone_of(api_client: Any, node: str) -> str:
    from kubernetes import client

    metadata = client.CoreV1Api(api_client).read_node(node).metadata
    return str(((metadata.labels if metadata is not None else None) or {}).get(ZONE_LABEL))


def unscheduled(api_client: Any, namespace: str, pod: str) -> str:
    """The scheduler's last word on ``pod`` (its newest ``FailedScheduling`` event), for a failed finding."""
    from kubernetes import client

    events = (
        client.CoreV1Api(api_client)
        .list_namespaced_event(namespace, field_selector=f"involvedObject.name={pod},reason=FailedScheduling")
        .items
    )
    newest = max(events, key=lambda e: str(e.last_timestamp or e.event_time or ""), default=None)
    return f"; scheduler: {newest.message}" if newest is not None else ""


def _leader_zone(api_client: Any, namespace: str, name: str, group: str) -> str | None:
    leaders = [p for p in group_pods(api_client, namespace, name, group) if p["metadata"]["name"] == f"{name}-{group}"]
    node = leaders[0]["spec"].get("nodeName") if leaders else None
    return _zone_of(api_client, str(node)) if node else None


def _next_group(api_client: Any, target: tuple[str, str], size: int, lost: str, timeout: float) -> list[Finding]:
    """The gate raises the HPA's minimum, the HPA controller scales to three: group 2 must serve, in a zone other
    than the lost one."""
    namespace, name = target
    time.sleep(GATE_LOST_SECONDS + 1)
    raised = run_gate_finding(
        api_client, namespace, f"host-maintenance gate: covers group 0 while zone {lost} is down", "raising HPA"
    )
    return [raised, *([_placed(api_client, target, size, lost, timeout)] if raised.ok else [])]


def _placed(api_client: Any, target: tuple[str, str], size: int, lost: str, timeout: float) -> Finding:
    namespace, name = target
    took = wait(lambda: serving_groups(group_pods(api_client, namespace, name, "2"), size) == 1, timeout)
    subject = f"LeaderWorkerSet {namespace}/{name}: the HPA's next group while zone {lost} is down"
    if took is None:
        detail = f"not serving within {timeout:.0f} s: {where(api_client, namespace, name, ('2',))}"
        return Finding(CHECK, subject, False, detail + unscheduled(api_client, namespace, f"{name}-2"))
    zone = _leader_zone(api_client, namespace, name, "2")
    return Finding(CHECK, subject, zone not in (None, lost), f"serves {took:.0f} s after the raise, in {zone}")


def lose_a_zone(
    api_client: Any, target: tuple[str, str], node_lost_seconds: int, timeout: float = 240.0
) -> list[Finding]:
    """Silence every Node of group 0's zone, and follow the LeaderWorkerSet ``target`` (namespace, name): group 0's
    pods deleted after ``node_lost_seconds``, group 1 serving throughout, the HPA's next group placed in the surviving
    zone, and every group serving once the zone is back."""
    namespace, name = target
    _, size = live_lws(api_client, namespace, name)
    out = [scale(api_client, target, size, timeout, STANDING, CHECK)]
    if not out[0].ok:
        return out
    lost = _leader_zone(api_client, namespace, name, "0")
    kept = _leader_zone(api_client, namespace, name, "1")
    apart = lost is not None and kept is not None and lost != kept
    out.append(Finding(CHECK, f"LeaderWorkerSet {namespace}/{name}: standing groups", apart, f"in {lost} and {kept}"))
    if not apart or lost is None:
        return out
    nodes = _zone_nodes(api_client, lost)
    group0 = {p["metadata"]["name"] for p in group_pods(api_client, namespace, name, "0")}
    for node in nodes:
        silence(api_client, node)
    began = time.monotonic()
    took = wait(lambda: all(tainted(api_client, n) for n in nodes), timeout)
    out.append(
        Finding(
            CHECK,
            f"zone {lost}: its {len(nodes)} Nodes tainted unreachable",
            took is not None and bool(nodes),
            f"after {took:.0f} s silent" if took is not None else f"not within {timeout:.0f} s",
        )
    )
    if took is None:
        return out
    out.append(
        deleted_after_toleration(api_client, target, group0, node_lost_seconds, timeout, (CHECK, f"in zone {lost}"))
    )
    serving = serving_groups(group_pods(api_client, namespace, name, "1"), size)
    out.append(
        Finding(
            CHECK,
            f"LeaderWorkerSet {namespace}/{name}: group 1 while zone {lost} is down",
            serving == 1,
            f"{serving} serving",
        )
    )
    out += _next_group(api_client, target, size, lost, timeout)
    out.append(_zone_back(api_client, target, size, nodes, (began, timeout)))
    if out[-1].ok:
        out.append(_given_back(api_client, target))
    return out


def _given_back(api_client: Any, target: tuple[str, str]) -> Finding:
    """The gate's next run, with every group serving again: the HPA's bounds back, its annotation gone."""
    namespace, name = target
    ran = run_gate_finding(api_client, namespace, "host-maintenance gate: gives the HPA its bounds back", "giving HPA")
    hpa = _hpa(api_client, namespace, name)
    bounds = (hpa["spec"].get("minReplicas"), hpa["spec"]["maxReplicas"])
    left = COVER_ANNOTATION in (hpa["metadata"].get("annotations") or {})
    ok = ran.ok and bounds[0] == STANDING and not left
    return Finding(CHECK, ran.subject, ok, f"{ran.detail}; HPA {name} min/max {bounds}, annotation left: {left}")


def _zone_back(
    api_client: Any, target: tuple[str, str], size: int, nodes: list[str], clock: tuple[float, float]
) -> Finding:
    """kwok takes the zone's Nodes again: their kubelets answer, the Terminating pods go, and group 0 comes back in
    its zone."""
    from kubernetes import client

    namespace, name = target
    began, timeout = clock
    for node in nodes:
        client.CoreV1Api(api_client).patch_node(node, {"metadata": {"labels": {KWOK_LABEL[0]: KWOK_LABEL[1]}}})
    back = wait(lambda: serving_groups(lws_pods(api_client, namespace, name), size) == STANDING + 1, timeout)
    subject = f"LeaderWorkerSet {namespace}/{name}: every group serves once the zone is back"
    if back is None:
        return Finding(
            CHECK, subject, False, f"not within {timeout:.0f} s: {where(api_client, namespace, name, ('0', '1', '2'))}"
        )
    return Finding(
        CHECK, subject, True, f"{STANDING + 1} groups serve {time.monotonic() - began:.0f} s after the zone went silent"
    )


def bounds_after_the_cover(run: StackRun, api_client: Any, config: Mapping[str, Any]) -> list[Finding]:
    """What Pulumi makes of the HPA once the gate has raised and given back its bounds (docs/operate.md, "A zone
    outage"): ``pulumi preview --refresh`` reads the live objects and must propose no change to any of them (the
    bounds are the program's again, the annotation gone, the state ConfigMap's data ignored), and ``pulumi up
    --refresh`` must pass, leaving the HPA's bounds as the stack file says."""
    del config  # the stack file as it is: no change of the bounds
    subject = "pulumi preview --refresh after the cover"
    try:
        change = run.preview(refresh=True)
    except Exception as err:  # the engine's own refusal is the finding
        (run.work / "bounds-preview.log").write_text(str(err))
        return [Finding(CHECK, subject, False, engine_errors(str(err)))]
    detail = (
        ", ".join(f"{op} {n}" for op, n in sorted(change.changed.items())) or f"{change.counts.get('same', 0)} same"
    )
    if change.changed:
        said = [line.strip() for line in change.stdout.splitlines() if "[diff:" in line or "~ " in line]
        detail += ": " + " | ".join(said[:6])
    out = [Finding(CHECK, subject, bool(change.counts) and not change.changed, detail)]
    try:
        run.up(refresh=True)
    except Exception as err:
        (run.work / "bounds-up.log").write_text(str(err))
        return [*out, Finding(CHECK, "pulumi up --refresh after the cover", False, engine_errors(str(err)))]
    (namespace, name), *_ = hpa_targets(run.resources())
    spec = _hpa(api_client, namespace, name)["spec"]
    bounds = (spec.get("minReplicas"), spec["maxReplicas"])
    out.append(
        Finding(CHECK, "pulumi up --refresh after the cover", bounds == (STANDING, STANDING + 1), f"HPA {bounds}")
    )
    return out


zone_outage_lifecycle = autoscaled_lifecycle(CHECK, lose_a_zone, bounds_after_the_cover)
"""``run_stack``'s lifecycle for a zone outage: :func:`lose_a_zone`, then :func:`bounds_after_the_cover`."""
