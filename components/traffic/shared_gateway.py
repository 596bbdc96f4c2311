"""``SharedGateway``: a platform stack's internal Gateway, which its model stacks' HTTPRoutes attach to.

The Gateway is :func:`tpu_serving.traffic.gateway.gateway`'s (GatewayClass ``gke-l7-rilb``, one HTTP listener, a reserved
regional internal address), in a namespace of its own, with the region's proxy-only subnet unless it exists. Its
listener admits the routes of the model stacks' namespaces: ``allowedRoutes.namespaces`` defaults to ``from: Same``
("Only Routes in the same namespace may be used by this Gateway"), and ``from: Selector`` takes "Routes in namespaces
selected by the selector" (Gateway API v1.3.0 Gateway CRD, gateway-api-v1.3.0-gateways-crd.yaml l.491-515 of the
reference copy). The selector is the label every namespace of a tpu-serving deployment carries
(``app.kubernetes.io/part-of: tpu-serving``, :data:`ROUTE_NAMESPACES`): another tenant's namespace cannot attach a
route to it unless it is labelled so.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ..common.options import child_options
from ..common.validation import check_arguments
from .gateway import ServingGateway, gateway, proxy_only_subnet
from .gateway_settings import GatewaySettings, ServingGatewayArgs

ROUTE_NAMESPACES = {"app.kubernetes.io/part-of": "tpu-serving"}
"""The namespace label of the routes the shared Gateway admits (every deployment's namespace has it:
:func:`tpu_serving.phases.context`, ``k8s_labels``)."""


@dataclass(frozen=True)
class SharedGatewayArgs:
    """Arguments of :class:`SharedGateway`."""

    gateway: ServingGatewayArgs
    """The Gateway: its project, region, network, namespace, name, settings, proxy-only subnet's name and address
    (``service``, ``port`` and ``health_path`` are the routes', unused here)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels of the namespace and the Gateway."""
    subnet_aliases: tuple[str, ...] = ()
    """URN aliases of the proxy-only subnet: the subnet of a self-contained stack's ServingGateway that
    ``pulumi state move`` brought here (:func:`tpu_serving.platform.tpu_platform.moved_subnet_aliases`)."""


def shared_gateway(args: ServingGatewayArgs) -> dict[str, Any]:
    """The Gateway of :func:`tpu_serving.traffic.gateway.gateway`, its listener admitting the model stacks' routes."""
    obj = gateway(args)
    listener = {
        **obj["spec"]["listeners"][0],
        "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": dict(ROUTE_NAMESPACES)}}},
    }
    return {**obj, "spec": {**obj["spec"], "listeners": [listener]}}


class SharedGateway(pulumi.ComponentResource):
    """The platform's internal Gateway, its namespace, its address and (unless it exists) the proxy-only subnet.

    Pass the cluster's Kubernetes provider in ``opts.providers``."""

    address: pulumi.Output[str]
    """The Gateway's internal IP address."""
    proxy_only_subnet: Any
    """The proxy-only subnet (a ``gcp.compute.Subnetwork``), None when it exists already."""

    def __init__(self, name: str, args: SharedGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"SharedGateway {name!r}", args, SharedGatewayArgs)
        super().__init__("tpu-serving:index:SharedGateway", name, None, opts)
        child = child_options(self, opts)
        g = args.gateway
        self.proxy_only_subnet = None
        waits: list[pulumi.Resource] = []
        if g.settings.create_proxy_only_subnet:
            from pulumi_gcp import compute

            moved = pulumi.ResourceOptions(aliases=list(args.subnet_aliases))
            subnet = proxy_only_subnet(g)
            self.proxy_only_subnet = compute.Subnetwork(
                f"{name}-proxy-only", subnet, opts=pulumi.ResourceOptions.merge(child, moved)
            )
            waits.append(self.proxy_only_subnet)
        self.address, reserved = ServingGateway._address(name, g, child)
        waits += [reserved] if reserved is not None else []
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=g.namespace, labels=dict(args.labels)),
            opts=child,
        )
        obj = shared_gateway(g)
        k8s.apiextensions.CustomResource(
            f"{name}-gateway",
            api_version=str(obj["apiVersion"]),
            kind=str(obj["kind"]),
            metadata=obj["metadata"],
            spec=obj["spec"],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[namespace, *waits])),
        )
        self.register_outputs({"address": self.address, "namespace": g.namespace, "name": g.name})


__all__ = ["ROUTE_NAMESPACES", "GatewaySettings", "SharedGateway", "SharedGatewayArgs", "shared_gateway"]
