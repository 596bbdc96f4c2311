"""The traffic phase of a model stack on a platform stack (``platform``): an HTTPRoute on the platform's shared
Gateway (:class:`~tpu_serving.traffic.gateway_route.GatewayRoute`) instead of a Gateway of its own
(:func:`tpu_serving.phases.build_traffic`)."""

from ..common.naming import gateway_name
from ..common.settings import to_settings
from ..phases import Context, IdentityParts, PlatformParts, ServingParts, TenancyParts, TrafficParts
from ..platform.platform_cluster import PlatformCluster
from ..tenancy.tenant import SERVING_PRIORITY
from .gateway import LISTENER_PORT, GatewaySettings, ServingGatewayArgs
from .gateway_route import MODEL_HEADER, GatewayRoute, GatewayRouteArgs

UNUSED = "platform"
"""The route's ``address_name`` and ``subnetwork``: the Gateway's address is the platform's, and the route reserves
none (:class:`~tpu_serving.traffic.gateway_route.GatewayRouteArgs`)."""


def build_route(
    ctx: Context, platform: PlatformParts, identity: IdentityParts, tenancy: TenancyParts, serving: ServingParts
) -> TrafficParts:
    """The route to the backend's Service (or InferencePool) on the platform's Gateway, when the stack has a
    ``gateway``; no Gateway, address or proxy-only subnet of its own."""
    cfg, endpoint, cluster = ctx.cfg, serving.built.endpoint, platform.cluster
    if cfg.gateway is None or endpoint is None or serving.platform is None or not isinstance(cluster, PlatformCluster):
        return TrafficParts(None, {})
    shared = cluster.platform.apply(lambda p: p.gateway)
    route = GatewayRoute(
        f"{ctx.name}-route",
        GatewayRouteArgs(
            ServingGatewayArgs(
                project=cfg.project,
                region=cfg.region,
                network=UNUSED,
                namespace=identity.identity.namespace_name,
                name=gateway_name(endpoint.service),
                service=endpoint.service,
                port=endpoint.port,
                health_path=endpoint.health_path,
                settings=to_settings(cfg.gateway, GatewaySettings),
                pool_selector=endpoint.pods,
                disaggregated=endpoint.disaggregated,
                priority_class_name=SERVING_PRIORITY,
                labels=serving.platform.k8s_labels,
                address_name=UNUSED,
                subnetwork=UNUSED,
            ),
            parent_name=shared.apply(lambda g: g.name),
            parent_namespace=shared.apply(lambda g: g.namespace),
            labels=serving.platform.k8s_labels,
            models=endpoint.models,
        ),
        opts=serving.platform.options(platform.apis, tenancy.tenancy),
    )
    outputs = {
        "gateway": shared.apply(lambda g: f"{g.namespace}/{g.name}"),
        "port": LISTENER_PORT,
        "routerRestart": route.router_restart,
        # what a client sends for the route to take its request (docs/platform.md, "Routes")
        "requests": {"header": MODEL_HEADER, "models": list(endpoint.models)} if endpoint.models else "every request",
    }
    return TrafficParts(None, {"gateway": outputs})
