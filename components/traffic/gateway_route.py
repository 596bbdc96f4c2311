"""``GatewayRoute``: a model stack's HTTPRoute on a platform stack's shared Gateway.

A model stack (``platform``) creates no Gateway, address nor proxy-only subnet: those are the platform's
(:mod:`tpu_serving.traffic.shared_gateway`). It creates, in its own namespace, what :class:`~tpu_serving.traffic.gateway.ServingGateway`
creates besides them: the HTTPRoute, the load balancer's HealthCheckPolicy and GCPBackendPolicy, and with an
InferencePool the pool and its endpoint picker, from the same builders. The route names the platform's Gateway in
another namespace: ``parentRefs[].namespace`` ("Namespace is the namespace of the referent. When unspecified, this
refers to the local namespace of the Route", Gateway API v1.3.0 HTTPRoute CRD, gateway-api-v1.3.0-httproutes-crd.yaml
l.2723-2724 of the reference copy), and the Gateway's listener admits routes of other namespaces only when its
``allowedRoutes.namespaces.from`` says so (l.491-515 of gateway-api-v1.3.0-gateways-crd.yaml: default ``Same``), which
the platform's Gateway does for the model stacks' namespaces (:func:`tpu_serving.traffic.shared_gateway.shared_gateway`).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pulumi

from ..common.options import child_options
from ..common.validation import check_arguments
from .gateway import (
    ServingGateway,
    backend_policy,
    custom_resources,
    health_check_policy,
    http_route,
    inference_pool,
    router_restart,
)
from .gateway_settings import GatewaySettings, ServingGatewayArgs


@dataclass(frozen=True)
class GatewayRouteArgs:
    """Arguments of :class:`GatewayRoute`: the serving gateway's objects but the Gateway, and the Gateway they attach
    to."""

    serving: ServingGatewayArgs
    """The route's namespace, name, Service, port, health path, settings and pool (its ``address_name`` and
    ``subnetwork`` are the platform's concern and unused here)."""
    parent_name: pulumi.Input[str]
    """The platform's Gateway."""
    parent_namespace: pulumi.Input[str]
    """Its namespace."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels of the route's objects (the serving's)."""
    models: tuple[str, ...] = ()
    """The model names the route takes requests for (:attr:`~tpu_serving.backends.base.ServingEndpoint.models`):
    each in the :data:`MODEL_HEADER` header; none: every request no other route's header match takes."""


MODEL_HEADER = "X-Gateway-Model-Name"
"""The request header a model's route on the shared Gateway matches: the header GKE Inference Gateway's body-based
routing sets from an OpenAI request's ``model`` (https://cloud.google.com/kubernetes-engine/docs/how-to/
configure-body-based-routing, "Header injection"); a client may set it itself."""


def attached_route(args: GatewayRouteArgs) -> dict[str, Any]:
    """The HTTPRoute of :func:`tpu_serving.traffic.gateway.http_route`, attached to the platform's Gateway instead of one of
    its own, and taking only the requests for its models.

    Several model stacks' routes share one Gateway listener: two that match the same requests (every path, as a
    self-contained stack's route does) tie, and the oldest route takes them all (Gateway API v1.3.0 HTTPRoute CRD,
    gateway-api-v1.3.0-httproutes-crd.yaml l.2176-2194 of the reference copy: precedence by path, method, "Largest
    number of header matches", then "The oldest Route based on creation timestamp"). Each model's rule therefore also
    matches :data:`MODEL_HEADER` exactly, once per model name (matches are ORed, their conditions ANDed, l.2163-2170)."""
    route = http_route(args.serving)
    parent = {"name": args.parent_name, "namespace": args.parent_namespace}
    rules = [{**rule, "matches": _for_models(rule["matches"], args.models)} for rule in route["spec"]["rules"]]
    return {**route, "spec": {**route["spec"], "parentRefs": [parent], "rules": rules}}


def _for_models(matches: list[dict[str, Any]], models: tuple[str, ...]) -> list[dict[str, Any]]:
    """``matches``, each also requiring :data:`MODEL_HEADER` to name one of ``models`` (unchanged without models)."""
    if not models:
        return matches
    header = [{"type": "Exact", "name": MODEL_HEADER, "value": m} for m in models]
    return [{**m, "headers": [h]} for m in matches for h in header]


class GatewayRoute(pulumi.ComponentResource):
    """An HTTPRoute on a platform's shared Gateway, with the serving gateway's policies and InferencePool."""

    router_restart: str
    """What a restart of the router does to requests (:func:`tpu_serving.traffic.gateway.router_restart`)."""

    def __init__(self, name: str, args: GatewayRouteArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"GatewayRoute {name!r}", args, GatewayRouteArgs)
        super().__init__("tpu-serving:index:GatewayRoute", name, None, opts)
        child = child_options(self, opts)
        serving = replace(args.serving, settings=replace(args.serving.settings, create_proxy_only_subnet=False))
        objects = [attached_route(args), health_check_policy(serving), backend_policy(serving)]
        if serving.settings.inference_pool:
            objects.append(inference_pool(serving))
            ServingGateway._epp(name, serving, child)
        custom_resources(name, objects, child)
        self.router_restart = router_restart(serving)
        self.register_outputs({"parent": {"name": args.parent_name, "namespace": args.parent_namespace}})


__all__ = ["GatewayRoute", "GatewayRouteArgs", "GatewaySettings", "attached_route"]
