"""The flows each backend of the ``network`` category needs.

Flows come from the rendered objects where they say so (a ``--resource_manager_address=$(X):port``
argument, a ``SAX_HTTP`` URL, probes, a Service's target port, the ``serving-ingress`` policy's
peers, the pods a PodMonitoring has Managed Prometheus' collectors scrape) and otherwise from
:data:`~.backend_facts.FACT_FLOWS` (each backend's ``runtime_facts.json``). :mod:`.network_policy` evaluates them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tpu_serving_tools.runtime import ds_facts as ds
from tpu_serving_tools.runtime import engine_facts as ef
from tpu_serving_tools.runtime import gcp_facts as facts
from tpu_serving_tools.runtime import picker
from tpu_serving_tools.runtime.backend_facts import BACKENDS, FactFlow
from tpu_serving_tools.runtime.network_policy import (
    Flow,
    Peer,
    Workload,
    _named_port,
    peer_of,
    selector_matches,
    workloads,
)
from tpu_serving_tools.runtime.planview import PlanView

# --------------------------------------------------------------------------- needed flows

ADDRESS_ARG = re.compile(r"--(?P<flag>\w+_address)=\$\((?P<var>\w+)\)(?::(?P<port>\d+))?")
"""A container argument naming a peer by an injected address variable (and a port, unless implied)."""

IMPLIED_PORTS: dict[str, int] = {
    # vllm-project/vllm examples/online_serving/multi-node-serving.sh: `worker --ray_address=<leader>`
    # runs `ray start --address=<leader>:6379` (the head's GCS port, `ray start --head --port=6379`).
    "ray_address": 6379,
}
"""Ports of address arguments that name only the host."""

ADDRESS_VARS: dict[str, str] = {
    # LWS injects LWS_LEADER_ADDRESS into every pod of a group (kubernetes-sigs/lws@v0.10.0 pkg/webhooks:
    # the pod webhook adds env LWS_LEADER_ADDRESS = <leader pod>.<svc>.<ns>).
    "LWS_LEADER_ADDRESS": "leader",
    # PathwaysJob v0.1.4 sets PATHWAYS_HEAD to the head pod (google/pathways-job@v0.1.4:internal/controller/
    # pathwaysjob_controller.go, "--resource_manager_address=$(PATHWAYS_HEAD):29001").
    "PATHWAYS_HEAD": "pathways-head",
}


def _by_role(ws: list[Workload], role: str, owner: str = "") -> list[Workload]:
    return [w for w in ws if w.role == role and (not owner or w.owner == owner)]


def _arg_flows(ws: list[Workload]) -> Iterator[Flow]:
    """Flows named by ``--x_address=$(VAR):port`` arguments."""
    for w in ws:
        for c in w.containers:
            for arg in c.args + c.command:
                m = ADDRESS_ARG.search(arg)
                if m is None:
                    continue
                role = ADDRESS_VARS.get(m["var"])
                port = int(m["port"]) if m["port"] else IMPLIED_PORTS.get(m["flag"])
                for dst in _by_role(ws, role, w.owner) if role and port else ():
                    yield Flow(peer_of(w), peer_of(dst), int(port or 0), why=f"{c.name} {m['flag']}")


def _fact_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """The flows of the stack's backend (``serving.backend``; every backend's for a plan that records no settings):
    another backend's roles may share a role name (an LWS ``leader`` and ``worker``) but not its flows."""
    backend = (view.setting("serving") or {}).get("backend")
    facts: list[tuple[FactFlow, tuple[str, ...]]]
    if backend in BACKENDS:
        facts = [(fact, ()) for fact in BACKENDS[backend].flows]
    else:  # no settings (a library program): each backend's flows between pods running its images
        facts = [(fact, b.images) for b in BACKENDS.values() for fact in b.flows]
    for fact, images in facts:
        for src in _by_role(ws, fact.src_role):
            for dst in _by_role(ws, fact.dst_role):
                if src.namespace == dst.namespace and (not images or (_runs(src, images) and _runs(dst, images))):
                    yield Flow(peer_of(src), peer_of(dst), fact.port, why=fact.source)


def _runs(w: Workload, images: tuple[str, ...]) -> bool:
    return any(name in c.image for c in w.containers for name in images)


def _services(view: PlanView) -> list[Mapping[str, Any]]:
    return list(view.kubernetes_objects("Service"))


def _service_backends(ws: list[Workload], svc: Mapping[str, Any]) -> list[Workload]:
    ns, sel = svc["metadata"].get("namespace", "default"), (svc.get("spec") or {}).get("selector") or {}
    return [w for w in ws if w.namespace == ns and sel and selector_matches({"matchLabels": sel}, w.labels)]


def _target_port(svc: Mapping[str, Any], port: int) -> int:
    for p in (svc.get("spec") or {}).get("ports") or ():
        if p.get("port") == port:
            tp = p.get("targetPort", port)
            return int(tp) if str(tp).isdigit() else port
    return port


URL = re.compile(r"^\w+://(?P<host>[^:/]+)(:(?P<port>\d+))?")


def _env_url_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """Flows named by an env URL pointing at a Service of the plan (e.g. the publisher's SAX_HTTP)."""
    for w in ws:
        for c in w.containers:
            for env_name, value in c.env.items():
                m = URL.match(value)
                if not m:
                    continue
                host = m["host"].split(".")
                for svc in _services(view):
                    meta = svc["metadata"]
                    if host[0] == meta["name"] and (len(host) == 1 or host[1] == meta.get("namespace", "default")):
                        port = int(m["port"] or 80)
                        for dst in _service_backends(ws, svc):
                            yield Flow(
                                peer_of(w), peer_of(dst), _target_port(svc, port), why=f"{c.name} env {env_name}"
                            )


def _client_peers(view: PlanView) -> list[Peer]:
    """Who the stack says may call its endpoint: ``tenancy.allowedNamespaces`` (a pod of each) and
    ``tenancy.allowedCidrs`` (an address of each)."""
    tenancy = view.setting("tenancy") or {}
    peers = [Peer(f"clients in namespace {ns}", ns) for ns in tenancy.get("allowedNamespaces") or ()]
    for cidr in tenancy.get("allowedCidrs") or ():
        net = ipaddress.ip_network(cidr, strict=False)
        peers.append(Peer(f"clients {net}", kind="ip", ip=str(net.network_address + 1)))
    return peers


def serving_service(view: PlanView) -> tuple[str, str] | None:
    """(namespace, name) of the Service the stack's clients call, from its settings (None: no clients)."""
    serving = view.setting("serving") or {}
    name = serving.get("serviceName") or ef.SERVING_SERVICE.get(str(serving.get("backend")))
    namespace = (view.setting("workloadIdentity") or {}).get("namespace")
    return (str(namespace), str(name)) if name and namespace else None


def _client_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """The stack's allowed clients -> its serving Service's backends, on each port's target port. The flows
    come from the settings, so a policy missing from the plan fails them rather than making them vanish."""
    target = serving_service(view)
    if target is None:
        return
    svc = _named(view, "Service", *target)
    for client in _client_peers(view):
        if svc is None:
            missing = Peer(f"{target[0]}/{target[1]} (no such Service)", target[0])
            yield Flow(client, missing, 0, why="the serving Service the settings name is not in the plan")
            continue
        for sp in (svc.get("spec") or {}).get("ports") or ():
            for dst in _service_backends(ws, svc):
                yield Flow(
                    client, peer_of(dst), _target_port(svc, sp["port"]), why=f"Service {target[1]} port {sp['port']}"
                )


SUBNETWORK_TYPE = "gcp:compute/subnetwork:Subnetwork"


def _ip_peer(label: str, cidr: str) -> Peer:
    """A representative address of ``cidr`` (its first host)."""
    return Peer(label, kind="ip", ip=str(ipaddress.ip_network(cidr, strict=False).network_address + 1))


def _proxy_cidrs(view: PlanView, gw: Mapping[str, Any]) -> list[str]:
    """Where a regional Gateway's proxies connect from: the plan's active proxy-only subnets, else the
    range the stack's settings give for the region's existing one (``gateway.proxyOnlyCidr``)."""
    made = [
        str(r["inputs"]["ipCidrRange"])
        for r in view.of_type(SUBNETWORK_TYPE)
        if r["inputs"].get("purpose") == ef.PROXY_ONLY_PURPOSE and r["inputs"].get("role") == "ACTIVE"
    ]
    named = (view.setting("gateway") or {}).get("proxyOnlyCidr")
    return made or ([str(named)] if named else [])


PLATFORM_GATEWAY: Mapping[str, Any] = {"spec": {"gatewayClassName": ef.GATEWAY_CLASS_REGIONAL_INTERNAL}}
"""A platform stack's shared Gateway, as a model stack's routes reach it: it is not in the model's plan, and a platform
creates a regional internal one (tests/test_runtime_network_flows.py reads it off the platform's plan), whose proxies
connect from the range the model stack names (``gateway.proxyOnlyCidr``, checked against the platform's output)."""


def _platform_gateway(view: PlanView) -> Mapping[str, Any] | None:
    """:data:`PLATFORM_GATEWAY` for a model stack (``platform``), which routes only to its platform's Gateway."""
    return PLATFORM_GATEWAY if view.setting("platform") is not None else None


def _named(view: PlanView, kind: str, ns: str, name: str) -> Mapping[str, Any] | None:
    return next(
        (
            o
            for o in view.kubernetes_objects(kind)
            if o["metadata"].get("namespace", "default") == ns and o["metadata"].get("name") == name
        ),
        None,
    )


def _route_backends(
    view: PlanView, ws: list[Workload], ns: str, ref: Mapping[str, Any]
) -> Iterator[tuple[Workload, int, str]]:
    """(pod workload, port, why) each backendRef of a route reaches: a Service's backends on its target
    port, or an InferencePool's selected pods on each target port."""
    if ref.get("kind", "Service") == "Service":
        svc = _named(view, "Service", ns, ref["name"])
        for dst in _service_backends(ws, svc) if svc else ():
            yield dst, _target_port(svc or {}, int(ref.get("port", 0))), f"Service {ref['name']}"
    elif ref.get("kind") == "InferencePool":
        pool = _named(view, "InferencePool", ns, ref["name"])
        spec = (pool or {}).get("spec") or {}
        for dst in (w for w in ws if w.namespace == ns and selector_matches(spec.get("selector"), w.labels)):
            for tp in spec.get("targetPorts") or ():
                yield dst, int(tp["number"]), f"InferencePool {ref['name']}"


def _gateway_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """A regional internal Gateway's proxies (from the proxy-only subnet) and the load balancer's health
    checks to every backend of its routes; with an InferencePool, the proxies to its endpoint picker
    and the picker to the pool's pods (it reads their metrics)."""
    for route in view.kubernetes_objects("HTTPRoute"):
        ns = route["metadata"].get("namespace", "default")
        for parent in (route.get("spec") or {}).get("parentRefs") or ():
            gw = _named(view, "Gateway", parent.get("namespace", ns), parent["name"]) or _platform_gateway(view)
            if gw is None or (gw.get("spec") or {}).get("gatewayClassName") != ef.GATEWAY_CLASS_REGIONAL_INTERNAL:
                continue
            sources = [_ip_peer(f"gateway {parent['name']} proxies {c}", c) for c in _proxy_cidrs(view, gw)]
            checks = [_ip_peer(f"load balancer health checks {c}", c) for c in ef.HEALTH_CHECK_RANGES]
            for rule in route["spec"].get("rules") or ():
                for ref in rule.get("backendRefs") or ():
                    closed = _fails_closed(view, ns, ref)
                    for dst, port, why in _route_backends(view, ws, ns, ref):
                        prefill_only = dst.labels.get(ds.LLMD_ROLE_LABEL) in ds.PREFILL_ONLY_ROLES
                        for src in checks if closed and prefill_only else sources + checks:
                            yield Flow(src, peer_of(dst), port, why=f"HTTPRoute {route['metadata']['name']} -> {why}")
                    yield from _picker_flows(view, ws, ns, ref, sources, checks)


def _fails_closed(view: PlanView, ns: str, ref: Mapping[str, Any]) -> bool:
    """Whether ``ref`` is an InferencePool whose picker fails closed (:data:`.ds_facts.FAIL_CLOSE`): its proxies
    then reach a pod only as the picker's destination."""
    if ref.get("kind") != "InferencePool":
        return False
    pool = _named(view, "InferencePool", ns, ref["name"]) or {}
    picker_ref = (pool.get("spec") or {}).get("endpointPickerRef") or {}
    return bool(picker_ref.get("failureMode") == ds.FAIL_CLOSE)


def _picker_flows(
    view: PlanView, ws: list[Workload], ns: str, ref: Mapping[str, Any], proxies: list[Peer], checks: list[Peer]
) -> Iterator[Flow]:
    """An InferencePool's endpoint picker: called by the proxies (ext-proc), health-checked by the load balancer
    on its gRPC health port (:func:`.picker.health_check_port`), reading the pool's pods."""
    if ref.get("kind") != "InferencePool":
        return
    pool = _named(view, "InferencePool", ns, ref["name"]) or {}
    picker_ref = (pool.get("spec") or {}).get("endpointPickerRef") or {}
    svc = _named(view, "Service", ns, picker_ref.get("name", ""))
    if svc is None:
        return
    port = _target_port(svc, int((picker_ref.get("port") or {}).get("number", 0)))
    pods = list(_route_backends(view, ws, ns, ref))
    checked, why = picker.health_check_port(view, ns, svc["metadata"]["name"])
    for epp in _service_backends(ws, svc):
        for src in proxies:
            yield Flow(src, peer_of(epp), port, why=f"InferencePool {ref['name']} endpointPickerRef (ext-proc)")
        for src in checks:
            yield Flow(src, peer_of(epp), checked, why=f"health check of InferencePool {ref['name']}'s picker ({why})")
        for dst, target, _ in pods:
            yield Flow(peer_of(epp), peer_of(dst), target, why="endpoint picker reads the model servers' metrics")


def _probe_flows(ws: list[Workload]) -> Iterator[Flow]:
    for w in ws:
        for c in w.containers:
            for port in c.probe_ports:
                number = port if isinstance(port, int) else c.named_ports.get(port)
                if number is not None:
                    yield Flow(Peer("kubelet", kind="node"), peer_of(w), number, why=f"{c.name} probe", local=True)


COLLECTOR = Peer(f"{ef.GMP_COLLECTOR_NAMESPACE}/collector", ef.GMP_COLLECTOR_NAMESPACE, ef.GMP_COLLECTOR_LABELS, "pod")
"""Managed Prometheus' collector pods: on the pod network in ``gmp-system``
(:data:`tpu_serving.operations.observability.GMP_COLLECTOR_LABELS`, from prometheus-engine v0.17.2's DaemonSet)."""


def _scrape_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """The collectors -> every pod a PodMonitoring of the plan selects, on each endpoint's port."""
    for pm in view.kubernetes_objects("PodMonitoring"):
        ns = pm["metadata"].get("namespace", "default")
        spec = pm.get("spec") or {}
        for w in ws:
            if w.namespace != ns or not selector_matches(spec.get("selector") or {}, w.labels):
                continue
            for ep in spec.get("endpoints") or ():
                port = ep["port"] if isinstance(ep["port"], int) else _named_port(w, str(ep["port"]))
                if port is not None:
                    yield Flow(COLLECTOR, peer_of(w), int(port), why=f"PodMonitoring {pm['metadata']['name']}")


def _probe_target_flows(view: PlanView, ws: list[Workload]) -> Iterator[Flow]:
    """A prober a PodMonitoring scrapes with a ``target`` parameter (the serving probe's blackbox exporter,
    tpu_serving.operations.prober) -> the pods of the Service that URL names, by its bare name in the prober's namespace or
    ``<name>.<namespace>``, on the Service's target port."""
    for pm in view.kubernetes_objects("PodMonitoring"):
        ns, spec = pm["metadata"].get("namespace", "default"), pm.get("spec") or {}
        probers = [w for w in ws if w.namespace == ns and selector_matches(spec.get("selector") or {}, w.labels)]
        targets = [t for ep in spec.get("endpoints") or () for t in (ep.get("params") or {}).get("target") or ()]
        for m in filter(None, (URL.match(str(t)) for t in targets)):
            name, _, namespace = m["host"].partition(".")
            for svc in _services(view):
                meta = svc["metadata"]
                if (meta["name"], meta.get("namespace", "default")) != (name, namespace.split(".")[0] or ns):
                    continue
                port, why = (
                    _target_port(svc, int(m["port"] or 80)),
                    f"PodMonitoring {pm['metadata']['name']} probe target",
                )
                yield from (
                    Flow(peer_of(w), peer_of(d), port, why=why) for w in probers for d in _service_backends(ws, svc)
                )


def _egress_flows(ws: list[Workload]) -> Iterator[Flow]:
    dns_ns, dns_labels, dns_port = facts.KUBE_DNS
    dns = Peer(f"{dns_ns}/kube-dns", dns_ns, dns_labels, "pod")
    mds = Peer("metadata-server", kind="ip", ip=facts.METADATA_SERVER[0])
    for w in ws:
        for proto in ("UDP", "TCP"):
            yield Flow(peer_of(w), dns, dns_port, proto, why="name resolution")
        yield Flow(peer_of(w), mds, facts.METADATA_SERVER[1], why="GKE metadata server (Workload Identity)")


def needed_flows(view: PlanView, ws: list[Workload] | None = None) -> list[Flow]:
    """Every flow the plan's backend needs, de-duplicated by subject."""
    ws = workloads(view) if ws is None else ws
    seen: dict[str, Flow] = {}
    for flow in _chain(
        _arg_flows(ws),
        _fact_flows(view, ws),
        _env_url_flows(view, ws),
        _client_flows(view, ws),
        _scrape_flows(view, ws),
        _probe_target_flows(view, ws),
        _gateway_flows(view, ws),
        _probe_flows(ws),
        _egress_flows(ws),
    ):
        seen.setdefault(flow.subject, flow)
    return list(seen.values())


def _chain(*its: Iterable[Flow]) -> Iterator[Flow]:
    for it in its:
        yield from it
