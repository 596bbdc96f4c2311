"""tools/e2e/routes.py: the Gateway API's attachment and backend rules, as ``make e2e`` reads them off live objects
(here, objects given to a stand-in for the API server's reads)."""

from __future__ import annotations

import copy
from typing import Any

from tpu_serving_tools.e2e.routes import HTTP_ROUTE_TYPE, admits, match_keys, routes_served

PART_OF = {"app.kubernetes.io/part-of": "tpu-serving"}
GATEWAY = {
    "apiVersion": "gateway.networking.k8s.io/v1",
    "kind": "Gateway",
    "metadata": {"name": "internal", "namespace": "gw"},
    "spec": {
        "listeners": [
            {
                "name": "http",
                "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": PART_OF}}},
            }
        ]
    },
}


def namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def route(ns: str, model: str | None) -> dict[str, Any]:
    match: dict[str, Any] = {"path": {"type": "PathPrefix", "value": "/"}}
    if model:
        match["headers"] = [{"name": "X-Gateway-Model-Name", "type": "Exact", "value": model}]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r", "namespace": ns},
        "spec": {
            "parentRefs": [{"name": "internal", "namespace": "gw"}],
            "rules": [{"backendRefs": [{"name": "api", "port": 8000}], "matches": [match]}],
        },
    }


def service_slice(ns: str, ready: bool, service: str = "api", port: str = "http") -> dict[str, Any]:
    return {
        "metadata": {"namespace": ns, "labels": {"kubernetes.io/service-name": service}},
        "ports": [{"name": port, "port": 8000}],
        "endpoints": [{"conditions": {"ready": ready}}],
    }


def service(ns: str, name: str = "api", port: int = 8000) -> dict[str, Any]:
    return {
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"ports": [{"name": "http", "port": port}]},
    }


class Live:
    """The reads :func:`routes_served` makes (``find``, ``list``), answered from a list of objects."""

    def __init__(self, objects: list[dict[str, Any]]):
        self.objects = objects

    def find(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        for o in self.objects:
            m = o["metadata"]
            if o.get("kind") == kind and m["name"] == name and m.get("namespace") == namespace:
                return o
        return None

    def list(self, api_version: str, kind: str, namespace: str | None = None, *, label_selector: str = "") -> list:
        if kind == "Pod":
            return [o for o in self.objects if o.get("kind") == "Pod" and o["metadata"]["namespace"] == namespace]
        if kind != "EndpointSlice":
            return []
        key, _, value = label_selector.partition("=")
        return [o for o in self.objects if o.get("endpoints") is not None and o["metadata"]["namespace"] == namespace
                and o["metadata"]["labels"].get(key) == value]  # fmt: skip


def world(ns_labels: dict[str, str] | None = None, ready: bool = True, second: str | None = "m-b") -> Live:
    objects = [GATEWAY, namespace("a", {**PART_OF, **(ns_labels or {})}), namespace("b", PART_OF)]
    objects += [route("a", "m-a"), route("b", second)]
    objects += [service(n) for n in ("a", "b")]
    objects += [service_slice("a", ready), service_slice("b", True)]
    return Live(objects)


STATES = {
    "model-a": [{"type": HTTP_ROUTE_TYPE, "outputs": {"metadata": {"namespace": "a", "name": "r"}}}],
    "model-b": [{"type": HTTP_ROUTE_TYPE, "outputs": {"metadata": {"namespace": "b", "name": "r"}}}],
}


def failed(findings: list[Any]) -> list[str]:
    return [f"{f.subject}: {f.detail}" for f in findings if not f.ok]


def test_routes_served_passes_two_models_routes_on_one_gateway():
    findings = routes_served(world(), STATES)  # type: ignore[arg-type]
    assert failed(findings) == [] and len(findings) == 4


def test_routes_served_fails_a_route_whose_namespace_no_listener_admits():
    live = world()
    live.objects[1] = namespace("a", {})  # the part-of label gone: the listener's selector picks nothing
    found = failed(routes_served(live, STATES))  # type: ignore[arg-type]
    assert any("no listener admits namespace a" in f for f in found)
    assert any("1 of 2 declared route(s) attached" in f for f in found)


def test_routes_served_fails_a_backend_with_no_ready_endpoint():
    found = failed(routes_served(world(ready=False), STATES))  # type: ignore[arg-type]
    assert found == ["model-a: HTTPRoute a/r: Service a/api: no ready endpoint"]


def test_routes_served_fails_two_routes_that_take_the_same_requests():
    found = failed(routes_served(world(second="m-a"), STATES))  # type: ignore[arg-type]
    assert len(found) == 1 and "a/r and b/r both match" in found[0]


def test_routes_served_fails_a_declared_route_that_is_not_live_and_a_stack_with_none():
    live = world()
    live.objects = [o for o in live.objects if not (o.get("kind") == "HTTPRoute" and o["metadata"]["namespace"] == "b")]
    states = {**STATES, "model-c": []}
    found = failed(routes_served(live, states))  # type: ignore[arg-type]
    assert "model-b: HTTPRoute b/r: not found" in found
    assert "model-c: routes: its state holds no HTTPRoute" in found
    assert any("1 of 2 declared route(s) attached" in f for f in found)


def test_routes_served_fails_with_no_declared_route_at_all():
    found = failed(routes_served(world(), {}))  # type: ignore[arg-type]
    assert found == [
        "the model stacks' routes on the platform's Gateway: 0 of 0 declared route(s) attached, to 0 Gateway(s): "
    ]


def test_admits_by_from_same_all_and_selector_and_by_route_kind():
    gateway = copy.deepcopy(GATEWAY)
    assert admits(gateway, namespace("x", PART_OF)) == ["http"] and admits(gateway, namespace("x")) == []
    gateway["spec"]["listeners"][0]["allowedRoutes"] = {}  # from: Same by default
    assert admits(gateway, namespace("gw")) == ["http"] and admits(gateway, namespace("x", PART_OF)) == []
    gateway["spec"]["listeners"][0]["allowedRoutes"] = {"namespaces": {"from": "All"}, "kinds": [{"kind": "GRPCRoute"}]}
    assert admits(gateway, namespace("x")) == []


def test_match_keys_tell_header_matches_apart_and_default_a_rule_without_matches_to_every_path():
    assert match_keys(route("a", "m-a")) != match_keys(route("a", "m-b"))
    bare = route("a", None)
    bare["spec"]["rules"][0].pop("matches")
    assert match_keys(bare) == match_keys(route("a", None))


def test_routes_served_fails_a_backend_ref_to_a_port_the_service_does_not_have():
    live = world()
    live.objects = [service("a", port=9000) if o.get("kind") == "Service" and o["metadata"]["namespace"] == "a" else o
                    for o in live.objects]  # fmt: skip
    found = failed(routes_served(live, STATES))  # type: ignore[arg-type]
    assert found == ["model-a: HTTPRoute a/r: Service a/api: no port 8000 (it has [9000])"]


def test_match_keys_compare_header_names_case_insensitively():
    lower = route("b", "m-a")
    lower["spec"]["rules"][0]["matches"][0]["headers"][0]["name"] = "x-gateway-model-name"
    assert match_keys(lower) == match_keys(route("a", "m-a"))


def pool_world(container_port: int, picker_ready: bool = True) -> Live:
    pool = {
        "kind": "InferencePool",
        "metadata": {"name": "pool", "namespace": "a"},
        "spec": {
            "selector": {"matchLabels": {"role": "leader"}},
            "targetPorts": [{"number": 8000}],
            "endpointPickerRef": {"name": "epp", "port": {"number": 9002}},
        },
    }
    pod = {
        "kind": "Pod",
        "metadata": {"name": "vllm-0", "namespace": "a", "labels": {"role": "leader"}},
        "spec": {"containers": [{"name": "vllm", "ports": [{"containerPort": container_port}]}]},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    epp = service("a", "epp", 9002)
    return Live([pool, pod, epp, service_slice("a", picker_ready, "epp")])


def test_backend_problems_judges_an_inference_pools_pods_ports_and_its_picker():
    from tpu_serving_tools.e2e.routes import backend_problems

    ref = {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "pool"}
    assert backend_problems(pool_world(8000), "a", ref) == []  # type: ignore[arg-type]
    assert backend_problems(pool_world(8080), "a", ref) == [  # type: ignore[arg-type]
        "InferencePool pool: 1 pod(s), none Ready on ports [8000]"
    ]
    assert backend_problems(pool_world(8000, picker_ready=False), "a", ref) == [  # type: ignore[arg-type]
        "endpoint picker Service a/epp: no ready endpoint"
    ]
