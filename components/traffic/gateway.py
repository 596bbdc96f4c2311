"""``ServingGateway``: an internal GKE Gateway in front of the serving Service, optionally through an InferencePool.

- GatewayClass ``gke-l7-rilb``: the regional internal Application Load Balancer, Envoy proxies
  that connect to the backends from the region's proxy-only subnet. "If you are using a
  regional or cross-region GatewayClass, you must enable a proxy-only subnet", the cluster must
  be VPC-native with the HttpLoadBalancing add-on, and "GKE Gateway doesn't infer health check
  parameters": a Service that does not answer ``GET /`` with 200 needs a HealthCheckPolicy
  (https://cloud.google.com/kubernetes-engine/docs/how-to/deploying-gateways, "GKE Gateway
  controller requirements" and "Restrictions and limitations").
- The proxy-only subnet (``purpose: REGIONAL_MANAGED_PROXY``, ``role: ACTIVE``; one per region
  and network, shared by every regional Envoy-based load balancer there): "Packets sent from a
  proxy to a backend VM or endpoint have a source IP address from the proxy-only subnet"
  (https://cloud.google.com/load-balancing/docs/proxy-only-subnets).
- Backends are reached from the proxy-only subnet and probed from the health check ranges
  35.191.0.0/16 and 130.211.0.0/22 (https://cloud.google.com/load-balancing/docs/firewall-rules,
  regional internal Application Load Balancer): :data:`HEALTH_CHECK_RANGES`, which the
  namespace's ``serving-ingress`` policy admits with the proxy-only subnet.
- With an InferencePool (``inference.networking.k8s.io/v1``), the Gateway asks the endpoint
  picker (EPP) which leader takes each request, by queue and KV-cache load. The EPP is
  llm-d/llm-d-router@v0.10.0's (gateway-api-inference-extension v1.6.0 moved it there: that release's
  README l.16-23), deployed as that release's ``llm-d-router-gateway`` Helm chart deploys it with
  ``provider.name: gke`` (config/charts/llm-d-router-gateway/templates: epp.yaml, rbac.yaml, gke.yaml, over
  config/charts/routerlib/templates: _deployment.yaml, _service.yaml, _config.yaml, _rbac.yaml): image
  ``ghcr.io/llm-d/llm-d-router-endpoint-picker``, flags ``--pool-name``, ``--pool-namespace``, ``--pool-group``,
  ``--zap-encoder json``, ``--config-file``, ``--grpc-health-port``, ``--tracing=false``; ext-proc gRPC on 9002,
  gRPC health on 9003, metrics on 9090; the queue, KV-cache and prefix-cache scorers over the model servers'
  metrics, configured in the ``llm-d.ai/v1alpha1`` EndpointPickerConfig. The file and line of each are cited
  where they are used; ``tools/conformance/epp.py`` checks the flags and the configuration against the release.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from ..common.options import child_options
from ..common.validation import check_arguments
from ..platform.shared_vpc import network_project
from .epp import (
    EPP_GRPC_PORT,
    EPP_HA_REPLICAS,
    epp_config,
    epp_deployment,
    epp_disruption_budget,
    epp_labels,
    epp_network_policy,
    epp_role,
    epp_service,
)
from .gateway_settings import (
    EPP_IMAGE,
    GATEWAY_API,
    GATEWAY_CLASS,
    GKE_POLICY_API,
    HEALTH_CHECK_RANGES,
    INFERENCE_API,
    INFERENCE_POOL_MIN_GKE,
    LISTENER_PORT,
    PROXY_ONLY_PURPOSE,
    PROXY_SUBNET_ANNOTATION,
    GatewaySettings,
    ServingGatewayArgs,
)

if TYPE_CHECKING:
    from pulumi_gcp import compute

__all__ = [
    "EPP_IMAGE",
    "HEALTH_CHECK_RANGES",
    "INFERENCE_API",
    "INFERENCE_POOL_MIN_GKE",
    "LISTENER_PORT",
    "GatewaySettings",
    "ServingGateway",
    "ServingGatewayArgs",
]


def _meta(args: ServingGatewayArgs, name: str, annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": args.namespace, "labels": dict(args.labels)}
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def _custom(
    args: ServingGatewayArgs, api: str, kind: str, spec: dict[str, Any], annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A custom object named after the gateway, in the serving namespace."""
    return {"apiVersion": api, "kind": kind, "metadata": _meta(args, args.name, annotations), "spec": spec}


ADDRESS_PURPOSE = "SHARED_LOADBALANCER_VIP"
"""The purpose of the regional internal address an internal Application Load Balancer's forwarding rule takes
(terraform-google-modules/terraform-docs-samples@af14240 gke/autopilot/iap/main.tf l.36-42, "Required for internal
ingress": ``address_type = "INTERNAL"``, ``purpose = "SHARED_LOADBALANCER_VIP"``)."""


def gateway(args: ServingGatewayArgs) -> dict[str, Any]:
    """The Gateway: one HTTP listener on the regional internal load balancer, at the address the stack reserved or
    named (``spec.addresses``, type ``NamedAddress``: the name of a Compute Engine address; Gateway API v1.3.0 CRD
    ``spec.addresses[].type``, gateway-api-v1.3.0-gateways-crd.yaml l.108 of the reference copy). A fixed address
    gives clients a stable entry and the serving probe a target known before GKE programs the Gateway
    (:func:`tpu_serving.operations.serving_metrics.through_gateway`); without one, GKE allocates it when it programs the Gateway and
    reports it only in ``status.addresses``."""
    spec = {
        "gatewayClassName": GATEWAY_CLASS,
        "addresses": [{"type": "NamedAddress", "value": args.address_name}],
        "listeners": [{"name": "http", "protocol": "HTTP", "port": LISTENER_PORT}],
    }
    return _custom(args, GATEWAY_API, "Gateway", spec, {PROXY_SUBNET_ANNOTATION: args.settings.proxy_only_cidr})


def backend_ref(args: ServingGatewayArgs) -> dict[str, Any]:
    """The route's backend: the InferencePool, or the serving Service."""
    if args.settings.inference_pool:
        return {"group": INFERENCE_API.split("/")[0], "kind": "InferencePool", "name": args.name}
    return {"name": args.service, "port": args.port}


def http_route(args: ServingGatewayArgs) -> dict[str, Any]:
    """Every path of the Gateway's listener to the backend."""
    rule = {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}], "backendRefs": [backend_ref(args)]}
    return _custom(args, GATEWAY_API, "HTTPRoute", {"parentRefs": [{"name": args.name}], "rules": [rule]})


POOL_HEALTH_CHECK_SECONDS = 2
"""The InferencePool's health check interval and timeout: the chart's "more aggressive health check than the default
5s for faster switch over" (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/gke.yaml
l.16-19; GKE review round 40, m1): a group that dies leaves the pool's backends sooner when the picker fails open."""


def health_check_policy(args: ServingGatewayArgs) -> dict[str, Any]:
    """The load balancer's health check on the server's health path (GKE does not infer it for Gateways); on an
    InferencePool every :data:`POOL_HEALTH_CHECK_SECONDS`, as the chart checks it."""
    target = backend_ref(args)
    check = {"type": "HTTP", "httpHealthCheck": {"requestPath": args.health_path, "port": args.port}}
    ref = {"group": target.get("group", ""), "kind": target.get("kind", "Service"), "name": target["name"]}
    default: dict[str, Any] = {"config": check}
    if args.settings.inference_pool:
        default = {"timeoutSec": POOL_HEALTH_CHECK_SECONDS, "checkIntervalSec": POOL_HEALTH_CHECK_SECONDS, **default}
    return _custom(args, GKE_POLICY_API, "HealthCheckPolicy", {"default": default, "targetRef": ref})


def backend_policy(args: ServingGatewayArgs) -> dict[str, Any]:
    """The backend service's request timeout and request logging. A regional internal Application Load
    Balancer's backend service times requests out after 30 s unless told otherwise (Compute Engine
    backendServices ``timeoutSec`` default); the endpoint picker's GKE chart sets 300 s and logging on its
    InferencePool for the same reason (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/
    gke.yaml l.98-115, as gateway-api-inference-extension's inferencepool chart did before).

    Connection draining for as long: an endpoint removed from the backend's zonal NEG (its pod is terminating) keeps
    its requests in flight for ``connectionDraining.drainingTimeoutSec`` while the load balancer sends it no new
    connection ("For the specified duration of the timeout, existing requests to the removed VM or endpoint are given
    time to complete", https://cloud.google.com/load-balancing/docs/enabling-connection-draining); omitted it is 0 s
    and the streams on a leaving pod are cut at the load balancer, whatever the pod's own drain
    (:class:`~tpu_serving.common.podspec.Shutdown`). At most :data:`~tpu_serving.traffic.gateway_settings.CONNECTION_DRAINING_MAX_SECONDS`,
    which bounds the request timeout."""
    target = backend_ref(args)
    ref = {"group": target.get("group", ""), "kind": target.get("kind", "Service"), "name": target["name"]}
    timeout = args.settings.request_timeout_seconds
    default = {
        "timeoutSec": timeout,
        "connectionDraining": {"drainingTimeoutSec": timeout},
        "logging": {"enabled": True},
    }
    return _custom(args, GKE_POLICY_API, "GCPBackendPolicy", {"default": default, "targetRef": ref})


def proxy_only_subnet(args: ServingGatewayArgs) -> "compute.SubnetworkArgs":
    """The region's proxy-only subnet, when the gateway creates it (``settings.create_proxy_only_subnet``): in the
    network's own project (a Shared VPC's host), active."""
    from pulumi_gcp import compute as gcp_compute

    return gcp_compute.SubnetworkArgs(
        name=args.subnet_name,
        project=network_project(args.network) or args.project,
        region=args.region,
        network=args.network,
        ip_cidr_range=args.settings.proxy_only_cidr,
        purpose=PROXY_ONLY_PURPOSE,
        role="ACTIVE",
    )


def failure_mode(disaggregated: bool) -> str:
    """The InferencePool's ``failureMode`` (:func:`inference_pool` says why): ``FailClose`` for a prefill/decode
    pool, ``FailOpen`` otherwise."""
    return "FailClose" if disaggregated else "FailOpen"


def inference_pool(args: ServingGatewayArgs) -> dict[str, Any]:
    """The InferencePool over the leaders, with its endpoint picker.

    ``failureMode: FailOpen``, the llm-d-router v0.10.0 chart's default (config/charts/routerlib/templates/
    _inferencepool.yaml l.37, values.yaml l.154-156), for a pool of equal leaders: the picker runs as one replica,
    so while it is rescheduled (an upgrade, an autoscaler scale-down or a repair of its node) the Gateway still
    sends requests to the pool's leaders, unpicked, instead of failing every one of them.

    ``FailClose`` for a prefill/decode pool: unpicked, the Gateway would forward a request "to an endpoint of its
    picking" (gateway-api-inference-extension v1.6.0 api/v1/inferencepool_types.go l.168-173, l.182-188; the enum
    FailOpen;FailClose, l.179), a prefill leader as likely as a decode one, and a prefill server answers one
    token while holding the request's KV blocks until the KV pull timeout (``kvPullTimeoutSeconds``, upstream's 180 s). The picker
    runs as a leader and a standby (:data:`tpu_serving.traffic.epp.EPP_HA_REPLICAS`), behind either mode."""
    picker = {"name": args.epp, "port": {"number": EPP_GRPC_PORT}, "failureMode": failure_mode(args.disaggregated)}
    spec = {
        "selector": {"matchLabels": dict(args.pool_selector)},
        "targetPorts": [{"number": args.port}],
        "endpointPickerRef": picker,
    }
    return _custom(args, INFERENCE_API, "InferencePool", spec)


LEASE = (
    "a leader lost with its node, which releases nothing, holds it up to 15 s, and the load balancer's health check "
    "then has to pass on the new one"
)
"""What an ungraceful loss of the leading picker costs: it releases its Lease on SIGTERM only (llm-d-router v0.10.0
pkg/epp/server/controller_manager.go l.109-115, ``LeaderElectionReleaseOnCancel``, and no ``LeaseDuration``, so
controller-runtime's default applies: v0.23.3, its go.mod's, pkg/manager/internal.go ``defaultLeaseDuration = 15 *
time.Second``, the same in v0.20.4 and v0.24.0); a repair or a host error does not run the shutdown (the preview's
Upgrades line)."""


def router_restart(args: ServingGatewayArgs) -> str:
    """What a restart of the router in front of the serving pods does (the preview's ``Router restart:`` line)."""
    if not args.settings.inference_pool:
        return (
            "no endpoint picker: the load balancer spreads requests over the Service's ready pods; its proxies are "
            "Google's, nothing of the stack restarts in the path"
        )
    replicas = (
        f"{EPP_HA_REPLICAS} endpoint picker replicas with leader election, on different nodes, RollingUpdate and a "
        "disruption budget of one (a new picker is Ready once its gRPC server answers, before it has synced its pool: "
        "llm-d/llm-d-router v0.10.0 cmd/epp/runner/health.go l.90-96, the liveness service its readiness asks, so a "
        "broken picker release rolls out unchecked and the Gateway probe's alert is what catches it)"
    )
    if not args.disaggregated:
        return (
            f"{replicas}, failureMode FailOpen: when the leader stops, a standby takes its Lease within seconds ({LEASE}); "
            "meanwhile, and if neither replica runs, the load balancer sends requests to any ready leader of the "
            "pool, unpicked (by neither queue nor KV-cache load)"
        )
    return (
        f"{replicas}, failureMode FailClose: when the leader stops, a standby takes its Lease within seconds ({LEASE}); "
        "requests arriving while no replica leads are refused (503), never sent unpicked to a prefill server; the alpha "
        "rollout screener (--allow-experimental-plugins) answers 503 until its first pod snapshot after a start"
    )


def pool_ingress(args: ServingGatewayArgs) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """A prefill/decode pool's pods take their target port from the endpoint picker (it reads ``/metrics`` there,
    :data:`~tpu_serving.traffic.epp.EPP_METRICS_PLUGINS`) and from Google's health checkers (:data:`HEALTH_CHECK_RANGES`,
    the regional internal Application Load Balancer's row of https://cloud.google.com/load-balancing/docs/firewall-rules;
    GKE opens its VPC firewall for its Gateways' health checks from them, https://cloud.google.com/kubernetes-engine/
    docs/concepts/firewall-rules, "GKE Gateways and HTTPRoutes"): the load balancer checks every endpoint of the
    pool, prefill's too. Clients and the load balancer's proxies reach the decode leaders only
    (the backend's ``serving-ingress``): with ``FailClose`` the Gateway sends a request nowhere the picker did not
    choose, and the picker's destination is a decode server."""
    peers = [
        k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=c))
        for c in HEALTH_CHECK_RANGES
    ]
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=f"{args.name}-pool-ingress", namespace=args.namespace, labels=dict(args.labels)
        ),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=dict(args.pool_selector)),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[
                        k8s.networking.v1.NetworkPolicyPeerArgs(
                            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args))
                        ),
                        *peers,
                    ],
                    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=args.port)],
                )
            ],
        ),
    )


def custom_resources(name: str, objects: list[dict[str, Any]], opts: pulumi.ResourceOptions) -> None:
    """Each of ``objects`` (a Gateway API or GKE policy object) as a ``CustomResource`` named ``<name>-<kind>``."""
    for obj in objects:
        kind = str(obj["kind"])
        k8s.apiextensions.CustomResource(
            f"{name}-{kind.lower()}",
            api_version=str(obj["apiVersion"]),
            kind=kind,
            metadata=obj["metadata"],
            spec=obj["spec"],
            opts=opts,
        )


class ServingGateway(pulumi.ComponentResource):
    """An internal GKE Gateway and HTTPRoute to the serving Service (or an InferencePool and its EPP).

    Pass the cluster's Kubernetes provider in ``opts.providers``; the cluster must have the Gateway
    API on (``gateway_api_config``), and, with an InferencePool, its CRD installed (``opts.depends_on``).
    """

    address_command: str
    """``kubectl`` command that prints the Gateway's internal address (GKE fills ``status.addresses``)."""
    address: pulumi.Output[str]
    """The Gateway's internal IP address: the one the stack reserved, or ``settings.existing_address_ip``."""
    address_name: str
    """The name of that address (the Gateway's ``NamedAddress``)."""
    gateway_name: str
    """The Gateway's name in the serving namespace."""
    request_timeout_seconds: int
    """The load balancer's request timeout (``gateway.requestTimeoutSeconds``)."""
    router_restart: str
    """What a restart of the router does to requests (:func:`router_restart`)."""

    def __init__(self, name: str, args: ServingGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ServingGateway {name!r}", args, ServingGatewayArgs)
        super().__init__("tpu-serving:index:ServingGateway", name, None, opts)
        child = child_options(self, opts)
        # The proxy-only subnet, when created here (not a schema output, so that pulumi_gcp.compute is
        # imported only when it is needed, as for the cluster's NAT).
        self.proxy_only_subnet: compute.Subnetwork | None = None
        k8s_child = child
        if args.settings.create_proxy_only_subnet:
            from pulumi_gcp import compute as gcp_compute

            self.proxy_only_subnet = gcp_compute.Subnetwork(f"{name}-proxy-only", proxy_only_subnet(args), opts=child)
            k8s_child = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.proxy_only_subnet]))
        self.address_name = args.address_name
        self.gateway_name = args.name
        self.request_timeout_seconds = args.settings.request_timeout_seconds
        self.listener_port = LISTENER_PORT
        self.address, reserved = self._address(name, args, child)
        if reserved is not None:
            k8s_child = pulumi.ResourceOptions.merge(k8s_child, pulumi.ResourceOptions(depends_on=[reserved]))
        objects = [gateway(args), http_route(args), health_check_policy(args), backend_policy(args)]
        if args.settings.inference_pool:
            objects.append(inference_pool(args))
            self._epp(name, args, child)
        custom_resources(name, objects, k8s_child)
        self.address_command = (
            f"kubectl -n {args.namespace} get gateway {args.name} -o jsonpath='{{.status.addresses[0].value}}'"
        )
        self.router_restart = router_restart(args)
        self.register_outputs(
            {"address": self.address, "addressCommand": self.address_command, "routerRestart": self.router_restart}
        )

    @staticmethod
    def _address(
        name: str, args: ServingGatewayArgs, child: pulumi.ResourceOptions
    ) -> tuple[pulumi.Output[str], pulumi.Resource | None]:
        """The Gateway's IP: of the address named existing, or of one reserved here (regional, internal, in the
        cluster's subnet, :data:`ADDRESS_PURPOSE`), with the resource reserved."""
        ip = args.settings.existing_address_ip
        if ip is not None:
            return pulumi.Output.from_input(ip), None
        from pulumi_gcp import compute as gcp_compute

        reserved = gcp_compute.Address(
            f"{name}-address",
            name=args.address_name,
            project=args.project,
            region=args.region,
            subnetwork=args.subnetwork,
            address_type="INTERNAL",
            purpose=ADDRESS_PURPOSE,
            opts=child,
        )
        return reserved.address, reserved

    @staticmethod
    def _epp(name: str, args: ServingGatewayArgs, child: pulumi.ResourceOptions) -> None:
        meta = k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels))
        sa = k8s.core.v1.ServiceAccount(f"{name}-epp-sa", metadata=meta, opts=child)
        role = k8s.rbac.v1.Role(f"{name}-epp-role", epp_role(args), opts=child)
        k8s.rbac.v1.RoleBinding(
            f"{name}-epp-binding",
            metadata=meta,
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=args.epp),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=args.epp, namespace=args.namespace)],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[role])),
        )
        config = k8s.core.v1.ConfigMap(
            f"{name}-epp-config",
            metadata=meta,
            data=epp_config(args),
            opts=child,
        )
        k8s.apps.v1.Deployment(
            f"{name}-epp",
            epp_deployment(args),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[sa, config])),
        )
        k8s.core.v1.Service(f"{name}-epp-svc", epp_service(args), opts=child)
        k8s.networking.v1.NetworkPolicy(f"{name}-epp-from-gateway", epp_network_policy(args), opts=child)
        k8s.policy.v1.PodDisruptionBudget(f"{name}-epp-pdb", epp_disruption_budget(args), opts=child)
        if args.disaggregated:
            k8s.networking.v1.NetworkPolicy(f"{name}-pool-ingress", pool_ingress(args), opts=child)
