"""Each HealthCheckPolicy asks the pods behind its target a path they serve: one the kubelet's probes ask on that
port, or a path the same handler answers (library review 7, M3: ``/healthz`` for a vLLM server that serves
``/health`` passed every category, and every endpoint would fail the load balancer's health check)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import Finding

HEALTH_CHECK = (
    "the load balancer sends its health check to each endpoint on that port and path (GKE HealthCheckPolicy "
    "config.httpHealthCheck), and an endpoint that does not answer 200 gets no request: a path the server does not "
    "serve fails every endpoint; use the path the pods' own probes ask (ServingNeighbours.health_path)"
)


SAME_HANDLER: Mapping[str, tuple[str, ...]] = {"/health": ("/ping",)}
"""Paths a server answers with the handler of a path its pods are probed at: vLLM serves ``GET /ping`` with its
``/health`` handler (vllm-tpu 0.29.0 wheel: vllm/entrypoints/serve/sagemaker/api_router.py l.47-52, registered by
vllm/entrypoints/launchers/api_server/routers.py l.28-32), which the disaggregated stacks' load balancer asks through
the decode leaders' sidecar."""


def _probed_paths(pods: Sequence[Any], ns: str, selector: Mapping[str, Any], port: int) -> set[tuple[str, str]]:
    """(owner, path) of each httpGet probe on ``port`` of the pods of ``ns`` that ``selector`` selects."""
    from tpu_serving_tools.runtime.network_policy import selector_matches

    def number(c: Any, p: int | str) -> int:
        return int(c.named_ports.get(p, 0)) if isinstance(p, str) else int(p)

    return {
        (pod.owner, path)
        for pod in pods
        if pod.namespace == ns and selector_matches(selector, pod.labels)
        for c in pod.containers
        for p, path in c.http_probes
        if number(c, p) == port
    }


def _health_check_finding(policy: Mapping[str, Any], target: Mapping[str, Any], pods: Sequence[Any]) -> Finding | None:
    spec, ns = policy.get("spec") or {}, str(policy["metadata"].get("namespace", "default"))
    check = ((spec.get("default") or {}).get("config") or {}).get("httpHealthCheck") or {}
    from tpu_serving_tools.runtime.network_policy import label_selector  # the one reader of a selector

    selector = label_selector(target)
    if selector is None or "requestPath" not in check:
        return None
    ref, path = spec.get("targetRef") or {}, str(check["requestPath"])
    asked = _probed_paths(pods, ns, selector, int(check.get("port", 0)))
    ok = any(path in (p, *SAME_HANDLER.get(p, ())) for _, p in asked)
    served = ", ".join(sorted({f"{p} ({owner})" for owner, p in asked})) or "none"
    return Finding(
        f"ref HealthCheckPolicy {ns}/{policy['metadata']['name']} -> port {check.get('port')} path {path}",
        ok,
        "a path the pods' probes ask on that port, or its handler's"
        if ok
        else f"the pods behind {ref.get('kind')} {ns}/{ref.get('name')} are probed on that port at: {served}; "
        + HEALTH_CHECK,
    )


def findings(view: PlanView) -> list[Finding]:
    """Each HealthCheckPolicy's HTTP path and port are ones the pods behind its target are probed on by the kubelet
    (library review 7, M3: ``/healthz`` for a vLLM server that serves ``/health`` passed every category)."""
    from tpu_serving_tools.runtime.pods import pods_of

    targets = {
        (o["kind"], str(o["metadata"].get("namespace", "default")), str(o["metadata"]["name"])): o
        for kind in ("InferencePool", "Service")
        for o in view.kubernetes_objects(kind)
    }
    pods, out = pods_of(view), []
    for policy in view.kubernetes_objects("HealthCheckPolicy"):
        ref = (policy.get("spec") or {}).get("targetRef") or {}
        ns = str(policy["metadata"].get("namespace", "default"))
        target = targets.get((str(ref.get("kind")), ns, str(ref.get("name"))))
        found = _health_check_finding(policy, target, pods) if target is not None else None  # none: the references
        out += [found] if found is not None else []
    return out
