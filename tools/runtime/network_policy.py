"""Endpoints and flows of the ``network`` category, and the verdict of NetworkPolicy on each flow.

Each flow is evaluated with Kubernetes NetworkPolicy semantics as GKE Dataplane V2 (Cilium) applies them:

- a pod is isolated for ingress (egress) when a policy of that type selects it; then a flow is
  allowed only if some rule of some selecting policy matches the peer and the port;
- destinations on the host network are not subject to NetworkPolicy;
- sources on the host network are node addresses: no ``podSelector``/``namespaceSelector``
  selects them and, on Dataplane V2, no ``ipBlock`` either
  (``DPV2_IPBLOCK_MATCHES_NODES`` in ``data/gcp.json``, with its source); only a rule with no ``from``
  admits them;
- kubelet probes come from the pod's own node and are allowed
  (``DPV2_LOCAL_HOST_ALLOWED`` in ``data/gcp.json``);
- the VPC firewall admits node and pod sources inside the cluster (GKE's ``-vms``/``-all`` rules).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Container, Pod, pods_of
from tpu_serving_tools.runtime.result import Finding

POLICY_KIND = "NetworkPolicy"

# --------------------------------------------------------------------------- endpoints


@dataclass(frozen=True)
class Workload:
    """One kind of pod the plan's controllers create: the pods of one role of one object, which
    share labels, network mode and containers (built from :func:`tools.runtime.pods.pods_of`)."""

    name: str
    namespace: str
    role: str
    """The pod's role in its object: ``leader``/``worker``, a replicated job, ``pathways-head``..."""
    labels: Mapping[str, str]
    host_network: bool
    containers: tuple[Container, ...] = ()
    owner: str = ""
    """``<namespace>/<kind>/<name>`` of the object whose controller creates the pods: same-named objects of two
    namespaces (two default-named serving components) are two owners."""


@dataclass(frozen=True)
class Peer:
    """A flow's source or destination as policy sees it."""

    label: str
    namespace: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    kind: str = "pod"
    """``pod`` (a pod-network pod), ``node`` (a node address: hostNetwork pod, kubelet), ``ip``."""
    ip: str = ""
    workload: Workload | None = None


@dataclass(frozen=True)
class Flow:
    """A connection a backend needs."""

    src: Peer
    dst: Peer
    port: int
    protocol: str = "TCP"
    why: str = ""
    local: bool = False
    """Source is the destination's own node (kubelet probes)."""

    @property
    def subject(self) -> str:
        return f"flow {self.src.label} -> {self.dst.label}:{self.port}/{self.protocol}"


def peer_of(w: Workload) -> Peer:
    """The peer a workload's pods appear as: a node address when on the host network."""
    return Peer(f"{w.namespace}/{w.name}", w.namespace, w.labels, "node" if w.host_network else "pod", workload=w)


# --------------------------------------------------------------------------- workloads from the plan


def _workload_name(pod: Pod) -> str:
    """``<object>-<role>`` for objects with several roles of their own (LWS, PathwaysJob), else the role."""
    kind, name = pod.owner.split("/", 1)
    return f"{name}-{pod.role}" if kind in ("LeaderWorkerSet", "PathwaysJob") else pod.role


def workloads(view: PlanView) -> list[Workload]:
    """One :class:`Workload` per (object, role) of the pods the plan's controllers create."""
    seen: dict[tuple[str, str, str], Workload] = {}
    for pod in pods_of(view):
        key = (pod.namespace, pod.owner, pod.role)
        if key not in seen:
            seen[key] = Workload(
                _workload_name(pod),
                pod.namespace,
                pod.role,
                dict(pod.labels),
                pod.host_network,
                pod.containers + tuple(c for c in pod.init_containers if c.sidecar),
                f"{pod.namespace}/{pod.owner}",
            )
    return list(seen.values())


# --------------------------------------------------------------------------- selectors and policies


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Kubernetes label selector semantics (``{}`` selects everything)."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = str(expr["key"]), str(expr["operator"]), list(expr.get("values") or [])
        ok = {
            "In": labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def _ns_labels(view: PlanView, namespace: str) -> dict[str, str]:
    labels = {facts.NAMESPACE_NAME_LABEL: namespace}
    for ns in view.kubernetes_objects("Namespace"):
        if ns["metadata"].get("name") == namespace:
            labels.update(ns["metadata"].get("labels") or {})
    return labels


def _in_cidr(ip: str, block: Mapping[str, Any]) -> bool:
    """Whether ``ip`` is in the ipBlock ``block``; a block that is no CIDR admits nothing (the API server refuses
    such a policy, and ``TenancyArgs`` such ranges: library review 7, M5, where the check raised a traceback)."""
    addr = ipaddress.ip_address(ip)
    try:
        if addr not in ipaddress.ip_network(block["cidr"], strict=False):
            return False
        return not any(addr in ipaddress.ip_network(e, strict=False) for e in block.get("except") or ())
    except ValueError:
        return False


def _peer_matches(view: PlanView, rule_peer: Mapping[str, Any], policy_ns: str, peer: Peer) -> bool:
    """Whether one ``from``/``to`` entry selects ``peer``."""
    if "ipBlock" in rule_peer:
        if peer.kind == "ip":
            return _in_cidr(peer.ip, rule_peer["ipBlock"])
        if peer.kind == "node":
            return facts.DPV2_IPBLOCK_MATCHES_NODES and bool(peer.ip) and _in_cidr(peer.ip, rule_peer["ipBlock"])
        return False  # Cilium never matches pod IPs by CIDR
    if peer.kind != "pod":
        return False  # node and external addresses carry no pod labels
    if "namespaceSelector" in rule_peer:
        if not selector_matches(rule_peer["namespaceSelector"], _ns_labels(view, peer.namespace)):
            return False
    elif peer.namespace != policy_ns:
        return False
    return selector_matches(rule_peer.get("podSelector", {}), peer.labels)


def _port_matches(rule_ports: list[Mapping[str, Any]] | None, port: int, protocol: str, dst: Workload | None) -> bool:
    if not rule_ports:
        return True
    for p in rule_ports:
        if (p.get("protocol") or "TCP") != protocol:
            continue
        want = p.get("port")
        if want is None:
            return True
        if isinstance(want, str) and not want.isdigit():
            want = _named_port(dst, want)
        if want is not None and int(want) <= port <= int(p.get("endPort") or want):
            return True
    return False


def _named_port(w: Workload | None, name: str) -> int | None:
    return next((c.named_ports[name] for c in (w.containers if w else ()) if name in c.named_ports), None)


def _policies(view: PlanView, namespace: str, direction: str, target: Peer) -> list[Mapping[str, Any]]:
    """Policies of ``direction`` (Ingress/Egress) in ``namespace`` that select ``target``."""
    out = []
    for pol in view.kubernetes_objects(POLICY_KIND):
        spec = pol.get("spec") or {}
        types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress") else ["Ingress"])
        if (
            pol["metadata"].get("namespace", "default") == namespace
            and direction in types
            and selector_matches(spec.get("podSelector", {}), target.labels)
        ):
            out.append(pol)
    return out


def _side(view: PlanView, flow: Flow, direction: str) -> tuple[bool, str]:
    """Verdict of one side: ingress at the destination or egress at the source."""
    target, other = (flow.dst, flow.src) if direction == "Ingress" else (flow.src, flow.dst)
    if target.kind == "node":
        return True, f"{target.label} is on the host network (not subject to NetworkPolicy)"
    if target.kind != "pod":
        return True, f"{target.label} is outside the cluster's pods" if direction == "Ingress" else ""
    if direction == "Ingress" and flow.local and facts.DPV2_LOCAL_HOST_ALLOWED:
        return True, "from the pod's own node (kubelet; Cilium allows the local host)"
    selecting = _policies(view, target.namespace, direction, target)
    if not selecting:
        return True, f"no {direction.lower()} policy selects {target.label}"
    key, dst_w = ("from", flow.dst.workload) if direction == "Ingress" else ("to", flow.dst.workload)
    for pol in selecting:
        for rule in pol["spec"].get(direction.lower()) or ():
            peers = rule.get(key)
            if _port_matches(rule.get("ports"), flow.port, flow.protocol, dst_w) and (
                not peers or any(_peer_matches(view, p, target.namespace, other) for p in peers)
            ):
                return True, f"allowed by {direction.lower()} policy {pol['metadata']['name']}"
    names = ", ".join(p["metadata"]["name"] for p in selecting)
    hint = (
        " (the source is a node address: hostNetwork sources match no podSelector, and no ipBlock on Dataplane V2)"
        if other.kind == "node"
        else ""
    )
    return False, f"denied: {direction.lower()} policies [{names}] select {target.label} and no rule admits it{hint}"


def evaluate(view: PlanView, flow: Flow) -> Finding:
    """The verdict of one flow: egress at the source, ingress at the destination, VPC firewall."""
    if flow.dst.kind == "pod" and flow.dst.workload is None and flow.port == 0:
        return Finding(flow.subject, False, flow.why)  # a destination the plan lacks (see network_flows._client_flows)
    reasons = []
    for direction in ("Egress", "Ingress"):
        ok, why = _side(view, flow, direction)
        if not ok:
            return Finding(flow.subject, False, f"{why} [{flow.why}]" if flow.why else why)
        if why:
            reasons.append(why)
    if flow.src.kind in ("pod", "node") and flow.dst.kind in ("pod", "node"):
        reasons.append("VPC firewall: GKE -vms/-all rules")
    return Finding(flow.subject, True, "; ".join(reasons))


def label_selector(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The label selector of a PodMonitoring or an InferencePool (``matchLabels``/``matchExpressions``) or of a Service
    (a plain map, as ``matchLabels``); None: it selects by no label (a Service without a selector)."""
    selector = (obj.get("spec") or {}).get("selector")
    if not isinstance(selector, Mapping):
        return None
    if obj.get("kind") == "Service":
        return {"matchLabels": selector} if selector else None
    return selector
