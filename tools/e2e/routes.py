"""Whether the model stacks' routes are served from their platform's one Gateway, read from the API server.

No Gateway controller runs here: GKE's is Google's, outside the cluster, and nothing writes a route's ``status``. The
run judges each live HTTPRoute by the rules the Gateway API states for a route to attach and for its backends to
resolve (the reference copies of the Gateway API v1.3.0 CRDs and the Inference Extension v1.6.0 InferencePool CRD):

- its ``parentRef`` names a Gateway that exists;
- a listener of that Gateway admits the route's namespace (``allowedRoutes.namespaces.from``: ``Same``, ``All``, or
  ``Selector`` on the namespace's labels; gateway-api-v1.3.0-gateways-crd.yaml l.488-509, default ``Same``; a
  label selector's ``matchLabels`` and ``matchExpressions`` are ANDed, l.540-565);
- every ``backendRef`` resolves in the route's namespace (a reference to another namespace needs a ReferenceGrant,
  which no stack makes): a Service with that port and a ready endpoint on it (its EndpointSlices), or an
  InferencePool whose ``selector`` picks a Ready pod declaring its ``targetPorts``, and whose endpoint picker's
  Service has the picker's port and a ready endpoint on it;
- no two routes on one Gateway take the same requests (one path and the same header matches): the oldest would
  take them all (gateway-api-v1.3.0-httproutes-crd.yaml l.2176-2194).

The routes judged are the live ones the model stacks' states hold: fewer live than declared fails, and so does a
Gateway with none.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving_tools.verify.checks import Finding, pod_is_ready, selects

from .kube import Kube

GATEWAY_API = "gateway.networking.k8s.io/v1"
INFERENCE_API = "inference.networking.k8s.io/v1"
HTTP_ROUTE_TYPE = f"kubernetes:{GATEWAY_API}:HTTPRoute"


def admits(gateway: Mapping[str, Any], namespace: Mapping[str, Any]) -> list[str]:
    """The listeners of ``gateway`` that admit an HTTPRoute of ``namespace`` (a Namespace object)."""
    ns_name = namespace["metadata"]["name"]
    ns_labels = namespace["metadata"].get("labels") or {}
    out = []
    for listener in gateway.get("spec", {}).get("listeners") or ():
        allowed = listener.get("allowedRoutes") or {}
        kinds = [k.get("kind") for k in allowed.get("kinds") or ()]
        if kinds and "HTTPRoute" not in kinds:
            continue
        spec = allowed.get("namespaces") or {}
        where = spec.get("from", "Same")
        if (
            where == "All"
            or (where == "Same" and ns_name == gateway["metadata"]["namespace"])
            or (where == "Selector" and selects(spec.get("selector"), ns_labels))
        ):
            out.append(str(listener.get("name")))
    return out


def match_keys(route: Mapping[str, Any]) -> list[str]:
    """Each request match of a route (its path and header matches), as a comparable key."""
    out = []
    for rule in route.get("spec", {}).get("rules") or ():
        for match in rule.get("matches") or [{"path": {"type": "PathPrefix", "value": "/"}}]:
            # header names match case-insensitively (gateway-api-v1.3.0-httproutes-crd.yaml l.2224)
            headers = sorted(json.dumps({**h, "name": str(h.get("name", "")).lower()}, sort_keys=True)
                             for h in match.get("headers") or ())  # fmt: skip
            out.append(json.dumps({"path": match.get("path"), "headers": headers, "method": match.get("method")}))
    return out


def ready_endpoints(kube: Kube, namespace: str, service: Mapping[str, Any], port: int | None) -> int:
    """The ready endpoints of a Service on its port ``port`` (None: on any of its ports), as the EndpointSlice
    controller writes them: a slice lists a Service port under that port's name, with the pods' target port."""
    name = service["metadata"]["name"]
    ports = [p for p in (service.get("spec") or {}).get("ports") or () if port is None or p.get("port") == port]
    names = {p.get("name") for p in ports}
    slices = kube.list(
        "discovery.k8s.io/v1", "EndpointSlice", namespace, label_selector=f"kubernetes.io/service-name={name}"
    )
    return sum(
        1
        for s in slices
        if names & {sp.get("name") for sp in s.get("ports") or ()}
        for e in s.get("endpoints") or ()
        if (e.get("conditions") or {}).get("ready") is True
    )


def _container_ports(pod: Mapping[str, Any]) -> set[int]:
    return {
        int(p["containerPort"])
        for c in (pod.get("spec") or {}).get("containers") or ()
        for p in c.get("ports") or ()
        if "containerPort" in p
    }


def service_problems(kube: Kube, namespace: str, name: str, port: int | None, what: str = "Service") -> list[str]:
    """Why the Service ``name`` does not serve on ``port``: missing, without that port, or no ready endpoint there."""
    service = kube.find("v1", "Service", name, namespace)
    if service is None:
        return [f"{what} {namespace}/{name}: not found"]
    listed = sorted(int(p["port"]) for p in (service.get("spec") or {}).get("ports") or ())
    if port is not None and port not in listed:
        return [f"{what} {namespace}/{name}: no port {port} (it has {listed})"]
    return [] if ready_endpoints(kube, namespace, service, port) else [f"{what} {namespace}/{name}: no ready endpoint"]


def backend_problems(kube: Kube, namespace: str, ref: Mapping[str, Any]) -> list[str]:
    """Why a route's ``backendRef`` does not resolve to something that serves, empty when it does: a Service on the
    ref's port, or an InferencePool whose Ready pods declare its target ports and whose endpoint picker's Service
    serves on the picker's port (inference-extension-v1.6.0-inferencepools-crd.yaml l.59-110, 132-140)."""
    kind, name = ref.get("kind", "Service"), str(ref.get("name"))
    if ref.get("namespace") not in (None, namespace):
        return [f"{kind} {ref.get('namespace')}/{name}: in another namespace (needs a ReferenceGrant)"]
    if kind == "Service":
        return service_problems(kube, namespace, name, ref.get("port"))
    if kind != "InferencePool":
        return [f"{kind} {name}: a backend kind no stack declares"]
    return pool_problems(kube, namespace, name)


def pool_problems(kube: Kube, namespace: str, name: str) -> list[str]:
    """Why the InferencePool ``name`` does not serve: missing, no Ready pod of its selector declaring its target
    ports, or its endpoint picker's Service not serving on the picker's port."""
    pool = kube.find(INFERENCE_API, "InferencePool", name, namespace)
    if pool is None:
        return [f"InferencePool {namespace}/{name}: not found"]
    spec = pool.get("spec") or {}
    selector = {"matchLabels": (spec.get("selector") or {}).get("matchLabels") or {}}
    targets = {int(t["number"]) for t in spec.get("targetPorts") or ()}
    picked = [p for p in kube.list("v1", "Pod", namespace) if selects(selector, p["metadata"].get("labels") or {})]
    serving = [p for p in picked if pod_is_ready(p) and targets and targets <= _container_ports(p)]
    out = [] if serving else [f"InferencePool {name}: {len(picked)} pod(s), none Ready on ports {sorted(targets)}"]
    picker = spec.get("endpointPickerRef") or {}
    if not picker.get("name"):
        return [*out, f"InferencePool {name}: no endpoint picker"]
    port = (picker.get("port") or {}).get("number")
    return out + service_problems(kube, namespace, str(picker["name"]), port, "endpoint picker Service")


def declared_routes(states: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[tuple[str, str]]]:
    """Each stack's HTTPRoutes, (namespace, name), as its deployed state holds them."""
    out: dict[str, list[tuple[str, str]]] = {}
    for stack, state in states.items():
        for r in state:
            if r.get("type") == HTTP_ROUTE_TYPE:
                meta = (r.get("outputs") or {}).get("metadata") or {}
                out.setdefault(stack, []).append((str(meta.get("namespace")), str(meta.get("name"))))
    return out


def routes_served(kube: Kube, states: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[Finding]:
    """A finding per model stack's route (attached to an existing Gateway through a listener that admits it, its
    backends serving), and one per Gateway: every declared route live on it, and no two taking the same requests."""
    declared = declared_routes(states)
    findings: list[Finding] = []
    on_gateway: dict[tuple[str, str], list[tuple[str, Mapping[str, Any]]]] = {}
    for stack in states:
        routes = declared.get(stack) or []
        if not routes:
            findings.append(Finding("gateway", f"{stack}: routes", False, "its state holds no HTTPRoute"))
        for namespace, name in routes:
            route = kube.find(GATEWAY_API, "HTTPRoute", name, namespace)
            if route is None:
                findings.append(Finding("gateway", f"{stack}: HTTPRoute {namespace}/{name}", False, "not found"))
                continue
            problems, gateways = _attachment(kube, route)
            for ref in (r for rule in route["spec"].get("rules") or () for r in rule.get("backendRefs") or ()):
                problems += backend_problems(kube, namespace, ref)
            for key in gateways:
                on_gateway.setdefault(key, []).append((f"{namespace}/{name}", route))
            detail = "; ".join(problems) or f"attached to {', '.join('/'.join(g) for g in gateways)}, backends serve"
            findings.append(Finding("gateway", f"{stack}: HTTPRoute {namespace}/{name}", not problems, detail))
    findings += _shared(on_gateway, sum(len(r) for r in declared.values()))
    return findings


def _attachment(kube: Kube, route: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """Why a route does not attach, and the Gateways it attaches to."""
    namespace = route["metadata"]["namespace"]
    ns = kube.find("v1", "Namespace", namespace)
    problems, attached = [], []
    parents = route.get("spec", {}).get("parentRefs") or ()
    if not parents:
        problems.append("no parentRef")
    for parent in parents:
        key = (str(parent.get("namespace") or namespace), str(parent["name"]))
        gateway = kube.find(GATEWAY_API, "Gateway", key[1], key[0])
        if gateway is None:
            problems.append(f"Gateway {'/'.join(key)}: not found")
        elif ns is None or not admits(gateway, ns):
            problems.append(f"Gateway {'/'.join(key)}: no listener admits namespace {namespace}")
        else:
            attached.append(key)
    return problems, attached


def _shared(
    on_gateway: Mapping[tuple[str, str], Sequence[tuple[str, Mapping[str, Any]]]], declared: int
) -> list[Finding]:
    """Per Gateway: the routes attached to it, and the requests two of them would both take."""
    attached = sum(len(routes) for routes in on_gateway.values())
    out = [
        Finding(
            "gateway",
            "the model stacks' routes on the platform's Gateway",
            declared > 0 and attached == declared and len(on_gateway) == 1,
            f"{attached} of {declared} declared route(s) attached, to {len(on_gateway)} Gateway(s): "
            + ", ".join("/".join(k) for k in on_gateway),
        )
    ]
    for key, routes in on_gateway.items():
        seen: dict[str, str] = {}
        ties = []
        for name, route in routes:
            for match in match_keys(route):
                if match in seen and seen[match] != name:
                    ties.append(f"{seen[match]} and {name} both match {match}")
                seen.setdefault(match, name)
        out.append(
            Finding(
                "gateway",
                f"Gateway {'/'.join(key)}: requests per route",
                not ties,
                "; ".join(ties) or f"{len(seen)} distinct match(es) over {len(routes)} route(s)",
            )
        )
    return out
