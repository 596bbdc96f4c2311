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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from .images import pinned_image_problem
from .options import child_options
from .podspec import container_security, pod_security, requests
from .settings import described, proxy_only_subnet_problem
from .validation import check_arguments
from .versions import PINS

if TYPE_CHECKING:
    from pulumi_gcp import compute

GATEWAY_CLASS = "gke-l7-rilb"
"""GKE's regional internal Application Load Balancer GatewayClass."""
GATEWAY_API = "gateway.networking.k8s.io/v1"
INFERENCE_API = "inference.networking.k8s.io/v1"
GKE_POLICY_API = "networking.gke.io/v1"
LISTENER_PORT = 80
PROXY_ONLY_PURPOSE = "REGIONAL_MANAGED_PROXY"
PROXY_SUBNET_ANNOTATION = "tpu-serving.dev/proxy-only-subnet"
"""Annotation on the Gateway naming the proxy-only subnet's range its proxies connect from (for readers
of the plan, such as the runtime model, when the stack does not create the subnet itself)."""
INFERENCE_POOL_MIN_GKE = (1, 34, 0, 1626000)
"""GKE installs and manages the GA CRDs of the Gateway API and of the Gateway API Inference Extension
(InferencePool ``inference.networking.k8s.io/v1``) from 1.34.0-gke.1626000 ("GKE automatically installs
all GA CRDs for Gateway API and Gateway API Inference Extension on GKE versions 1.34.0-gke.1626000 or
later", llm-d.ai docs "Installing Gateway API CRDs", after GKE's Inference Gateway guide). The stack
therefore installs no InferencePool CRD (applying one would fight GKE for it, and destroying the stack
would delete GKE's CRD with every InferencePool of the cluster); the objects are validated against the
gateway-api-inference-extension v1.6.0 release's CRD. The endpoint picker reads InferencePool
``inference.networking.k8s.io/v1`` ("Only `inference.networking.k8s.io/v1` is currently supported",
llm-d/llm-d-router@v0.10.0 pkg/epp/server/options.go l.173-174), built against gateway-api-inference-extension
v1.5.0 (its go.mod l.61), whose CRD differs from v1.6.0's only in also requiring ``spec.endpointPickerRef``
(config/crd/bases/inference.networking.k8s.io_inferencepools.yaml, v1.5.0 l.197-200 against v1.6.0), which
:func:`inference_pool` always sets: the objects are valid under both."""

HEALTH_CHECK_RANGES: Sequence[str] = ("35.191.0.0/16", "130.211.0.0/22")
"""Google Cloud health check probe ranges of the regional internal Application Load Balancer
(https://cloud.google.com/load-balancing/docs/firewall-rules)."""

EPP_IMAGE = PINS["epp"].value
EPP_USER = 65532
"""The ``nonroot`` user of gcr.io/distroless/static:nonroot, the endpoint picker's base image
(llm-d/llm-d-router@v0.10.0 Dockerfile.epp l.6 ``ARG BASE_IMAGE=gcr.io/distroless/static:nonroot``, l.50
``USER 65532:65532``; uid and gid 65532: GoogleContainerTools/distroless#443, which names them for the
``:nonroot`` images)."""
EPP_GRPC_PORT = 9002
"""The picker's ext-proc gRPC port: its default (llm-d/llm-d-router@v0.10.0 pkg/epp/server/options.go l.41
``DefaultGrpcPort = 9002``, flag ``--grpc-port`` l.164), which the chart leaves as it is and names in the Service
and the InferencePool (config/charts/routerlib/templates/_deployment.yaml l.134-135, _service.yaml l.56-59,
_inferencepool.yaml l.35-36; values.yaml l.13 ``extProcPort: 9002``)."""
EPP_HEALTH_PORT = 9003
"""Its gRPC health port (options.go l.151 default, ``--grpc-health-port`` l.214; the chart passes it,
_deployment.yaml l.113-115, and probes it, l.143-165). GKE's Gateway controller health-checks the picker on gRPC
9003 unless a HealthCheckPolicy on its Service names another port (config/charts/llm-d-router-gateway/templates/
gke.yaml l.38-41)."""
EPP_METRICS_PORT = 9090
"""Its metrics port (options.go l.150 default, ``--metrics-port`` l.213; _deployment.yaml l.138-139,
_service.yaml l.60-62)."""
EPP_HEALTH_SERVICE = "inference-extension"
"""The gRPC health service the chart's probes name for a single replica (_deployment.yaml l.149-151, l.161-163);
without leader election the picker answers every service name alike (cmd/epp/runner/health.go l.66-74)."""
EPP_POOL_GROUP = INFERENCE_API.split("/")[0]
"""``--pool-group``, as the chart passes it (_deployment.yaml l.102-103); the picker's default too
(pkg/common/routing/common.go l.28, options.go l.136)."""
EPP_OBJECTIVE_GROUPS: Sequence[str] = ("inference.networking.x-k8s.io", "llm-d.ai")
"""API groups of the InferenceObjective and InferenceModelRewrite kinds the picker watches: ``llm-d.ai`` first,
else the legacy ``inference.networking.x-k8s.io``, whichever the cluster serves (pkg/epp/server/controller_config.go
l.35-42, l.71-88); the chart's Role grants both (config/charts/llm-d-router-gateway/templates/rbac.yaml l.9-14)."""
EPP_CONFIG_FILE = "default-plugins.yaml"
EPP_PLUGINS = """apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: kv-cache-utilization-scorer
- type: prefix-cache-scorer
- type: metrics-data-source
  parameters:
    scheme: "http"
    path: "/metrics"
    insecureSkipVerify: true
- type: core-metrics-extractor
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: queue-scorer
    weight: 2
  - pluginRef: kv-cache-utilization-scorer
    weight: 2
  - pluginRef: prefix-cache-scorer
    weight: 3
"""
"""The chart's default plugin configuration for vLLM over HTTP without the latency predictor
(llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/_config.yaml l.8-81 with values.yaml l.21-27,
l.162-164): apiVersion ``llm-d.ai/v1alpha1`` (apix/config/v1alpha1/zz_generated.register.go l.15-18; the
``inference.networking.x-k8s.io/v1alpha1`` of gateway-api-inference-extension still loads but is deprecated,
pkg/epp/config/loader/configloader.go l.53, l.91-93); each plugin type a beta one of the release
(cmd/epp/runner/runner.go l.611, l.624-625, l.692-693). The metrics source scrapes each model server's
InferencePool target port (pkg/epp/framework/plugins/datalayer/source/metrics/datasource.go l.47-52)."""


def _cidr_check(value: str) -> str:
    return proxy_only_subnet_problem(value) if isinstance(value, str) else ""


@dataclass(frozen=True)
class GatewaySettings:
    """An internal GKE Gateway (regional internal Application Load Balancer) in front of the serving Service."""

    proxy_only_cidr: str = described(
        "Range of the region's proxy-only subnet, whose addresses the load balancer's proxies connect from "
        "(a /23 or larger is recommended); must not overlap other subnets of the network.",
        default="192.168.0.0/23",
        check=_cidr_check,
    )
    create_proxy_only_subnet: bool = described(
        "Create the proxy-only subnet; set false when the network already has one in the region (one per "
        "region and network) and give its range in proxyOnlyCidr.",
        default=True,
    )
    inference_pool: bool = described(
        "vLLM only: route through an InferencePool whose endpoint picker sends each request to the leader "
        "with the least queue and KV-cache load.",
        default=False,
    )
    epp_image: str = described(
        "Endpoint picker image, pinned (llm-d/llm-d-router).",
        default=EPP_IMAGE,
        check=pinned_image_problem,
    )
    epp_cpu: str = described(
        "CPU request of the endpoint picker (the namespace quota needs one; the llm-d-router v0.10.0 chart "
        "requests 8 CPUs and 8Gi, while this default is the stack's own, kept from the earlier picker).",
        default="1",
        pattern=r"^\d+(\.\d+)?m?$",
    )
    epp_memory: str = described("Memory request of the endpoint picker.", default="2Gi", pattern=r"^\d+(Ki|Mi|Gi|Ti)?$")
    request_timeout_seconds: int = described(
        "Longest request the load balancer lets run, in seconds (GCPBackendPolicy timeoutSec; the backend "
        "service default of 30 s would cut off long completions and streams).",
        default=300,
        ge=1,
        le=86400,
    )


@dataclass(frozen=True)
class ServingGatewayArgs:
    """Arguments of :class:`ServingGateway`."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the cluster (and of the proxy-only subnet)."""
    network: str
    """VPC network of the cluster."""
    namespace: str
    """Namespace of the serving Service."""
    name: str
    """Name of the Gateway, its HTTPRoute and (with an InferencePool) the pool and its EPP."""
    service: str
    """The serving Service."""
    port: int
    """Its port (and the pods' target port)."""
    health_path: str
    """Path that answers 200 when a backend is ready."""
    settings: GatewaySettings = field(default_factory=GatewaySettings)
    """The stack's gateway settings."""
    pool_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the pods an InferencePool selects (the leaders); required with ``settings.inference_pool``."""
    subnet_name: str = "proxy-only"
    """Name of the proxy-only subnet when created."""
    priority_class_name: str | None = None
    """PriorityClass of the endpoint picker (it is on every request's path)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the Kubernetes objects."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types."""
        if self.settings.inference_pool and not self.pool_selector:
            return ["pool_selector: an InferencePool needs the labels of the pods it selects"]
        return []

    @property
    def epp(self) -> str:
        return f"{self.name}-epp"


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


def gateway(args: ServingGatewayArgs) -> dict[str, Any]:
    """The Gateway: one HTTP listener on the regional internal load balancer."""
    spec = {
        "gatewayClassName": GATEWAY_CLASS,
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


def health_check_policy(args: ServingGatewayArgs) -> dict[str, Any]:
    """The load balancer's health check on the server's health path (GKE does not infer it for Gateways)."""
    target = backend_ref(args)
    check = {"type": "HTTP", "httpHealthCheck": {"requestPath": args.health_path, "port": args.port}}
    ref = {"group": target.get("group", ""), "kind": target.get("kind", "Service"), "name": target["name"]}
    return _custom(args, GKE_POLICY_API, "HealthCheckPolicy", {"default": {"config": check}, "targetRef": ref})


def backend_policy(args: ServingGatewayArgs) -> dict[str, Any]:
    """The backend service's request timeout and request logging. A regional internal Application Load
    Balancer's backend service times requests out after 30 s unless told otherwise (Compute Engine
    backendServices ``timeoutSec`` default); the endpoint picker's GKE chart sets 300 s and logging on its
    InferencePool for the same reason (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/
    gke.yaml l.98-115, as gateway-api-inference-extension's inferencepool chart did before)."""
    target = backend_ref(args)
    ref = {"group": target.get("group", ""), "kind": target.get("kind", "Service"), "name": target["name"]}
    default = {"timeoutSec": args.settings.request_timeout_seconds, "logging": {"enabled": True}}
    return _custom(args, GKE_POLICY_API, "GCPBackendPolicy", {"default": default, "targetRef": ref})


def inference_pool(args: ServingGatewayArgs) -> dict[str, Any]:
    """The InferencePool over the leaders, with its endpoint picker."""
    picker = {"name": args.epp, "port": {"number": EPP_GRPC_PORT}, "failureMode": "FailClose"}
    spec = {
        "selector": {"matchLabels": dict(args.pool_selector)},
        "targetPorts": [{"number": args.port}],
        "endpointPickerRef": picker,
    }
    return _custom(args, INFERENCE_API, "InferencePool", spec)


def epp_labels(args: ServingGatewayArgs) -> dict[str, str]:
    return {"app": args.epp}


def epp_role(args: ServingGatewayArgs) -> k8s.rbac.v1.RoleInitArgs:
    """What the EPP reads, in its namespace: the objectives and model rewrites (in either group it may find them
    in), its InferencePool and the pods (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/
    rbac.yaml l.8-17 and config/charts/routerlib/templates/_rbac.yaml l.49-52, one Role here; the manager caches
    exactly these kinds, pkg/epp/server/controller_manager.go l.65-101). The stack creates no objective or rewrite
    and installs neither group's CRDs (llm-d-router ships the ``llm-d.ai`` ones, config/crd/bases): the picker
    skips a kind the cluster does not serve (controller_manager.go l.84-93). The chart's ClusterRole for
    TokenReviews and SubjectAccessReviews comes only with its Prometheus monitoring (_rbac.yaml l.2-40), which
    the stack does not deploy: nothing scrapes the picker's metrics port."""
    read = ["get", "watch", "list"]
    return k8s.rbac.v1.RoleInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        rules=[
            *(
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[group], resources=["inferenceobjectives", "inferencemodelrewrites"], verbs=read
                )
                for group in EPP_OBJECTIVE_GROUPS
            ),
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[EPP_POOL_GROUP], resources=["inferencepools"], verbs=read),
            k8s.rbac.v1.PolicyRuleArgs(api_groups=[""], resources=["pods"], verbs=read),
        ],
    )


def epp_deployment(args: ServingGatewayArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """The endpoint picker, one replica, Recreate strategy, a grace period of 130 s, ``NAMESPACE`` and ``POD_NAME``
    from the downward API and the plugin configuration mounted at /config (llm-d/llm-d-router@v0.10.0
    config/charts/routerlib/templates/_deployment.yaml l.14, l.166-174, l.203-205, l.280-282, l.337-345;
    values.yaml l.7 ``replicas: 1``). Its arguments are the chart's for an InferencePool (l.96-128) with the
    chart's defaults: no leader election (one replica, l.110-112), no tracing (``tracing.enabled: false``,
    values.yaml l.145-146), and no ``--metrics-endpoint-auth=false`` (``monitoring.prometheus.auth.enabled: true``,
    values.yaml l.136-139)."""
    field_env = [
        k8s.core.v1.EnvVarArgs(
            name=n,
            value_from=k8s.core.v1.EnvVarSourceArgs(field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path=p)),
        )
        for n, p in (("NAMESPACE", "metadata.namespace"), ("POD_NAME", "metadata.name"))
    ]
    health = k8s.core.v1.GRPCActionArgs(port=EPP_HEALTH_PORT, service=EPP_HEALTH_SERVICE)
    container = k8s.core.v1.ContainerArgs(
        name="epp",
        image=args.settings.epp_image,
        args=[
            "--pool-name",
            args.name,
            "--pool-namespace",
            args.namespace,
            "--pool-group",
            EPP_POOL_GROUP,
            "--zap-encoder",
            "json",
            "--config-file",
            f"/config/{EPP_CONFIG_FILE}",
            "--grpc-health-port",
            str(EPP_HEALTH_PORT),
            "--tracing=false",
        ],
        ports=[
            k8s.core.v1.ContainerPortArgs(name="grpc", container_port=EPP_GRPC_PORT),
            k8s.core.v1.ContainerPortArgs(name="grpc-health", container_port=EPP_HEALTH_PORT),
            k8s.core.v1.ContainerPortArgs(name="metrics", container_port=EPP_METRICS_PORT),
        ],
        liveness_probe=k8s.core.v1.ProbeArgs(grpc=health, initial_delay_seconds=5, period_seconds=10),
        readiness_probe=k8s.core.v1.ProbeArgs(grpc=health, period_seconds=2),
        env=field_env,
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="plugins-config", mount_path="/config")],
        resources=requests(args.settings.epp_cpu, args.settings.epp_memory, memory_limit=True),
        # The image is distroless/static:nonroot running as 65532 (llm-d/llm-d-router@v0.10.0 Dockerfile.epp
        # l.6, l.50): one static binary (/app/epp, l.48, l.59) reading its config from the mounted ConfigMap, so
        # the root filesystem is read-only. It writes no file: the ext-proc server's self-signed certificate
        # (--secure-serving, on by default, options.go l.153) is made in memory (pkg/epp/server/runserver.go
        # l.182, internal/tls/tls.go l.34-73).
        security_context=container_security(run_as_user=EPP_USER, read_only_root=True),
    )
    return k8s.apps.v1.DeploymentInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=1,
            strategy=k8s.apps.v1.DeploymentStrategyArgs(type="Recreate"),
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, **epp_labels(args)}),
                spec=k8s.core.v1.PodSpecArgs(
                    service_account_name=args.epp,
                    # The endpoint picker watches the InferencePool and its pods: it needs its token.
                    automount_service_account_token=True,
                    security_context=pod_security(),
                    priority_class_name=args.priority_class_name,
                    termination_grace_period_seconds=130,
                    containers=[container],
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="plugins-config", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=args.epp)
                        )
                    ],
                ),
            ),
        ),
    )


def epp_service(args: ServingGatewayArgs) -> k8s.core.v1.ServiceInitArgs:
    """The EPP's ext-proc and metrics ports (llm-d/llm-d-router@v0.10.0 config/charts/routerlib/templates/
    _service.yaml l.45-66).

    The chart also declares ``appProtocol: kubernetes.io/h2c`` (cleartext HTTP/2) on the ext-proc port (l.59,
    since llm-d/llm-d-router#1681), while the picker serves ext-proc over TLS unless ``--secure-serving=false``
    (pkg/epp/server/options.go l.153, l.226), and GKE reads a Service port's ``appProtocol`` as the protocol its
    load balancer speaks to the backend (https://cloud.google.com/kubernetes-engine/docs/how-to/secure-gateway
    #load-balancer-tls, as quoted in openbao/openbao-helm#151; not read here). How GKE's InferencePool
    controller uses it for the picker is not written in the release's sources, so the port keeps none, as
    before the move to llm-d-router."""
    return k8s.core.v1.ServiceInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.epp, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=epp_labels(args),
            ports=[
                k8s.core.v1.ServicePortArgs(name="grpc-ext-proc", protocol="TCP", port=EPP_GRPC_PORT),
                k8s.core.v1.ServicePortArgs(name="http-metrics", protocol="TCP", port=EPP_METRICS_PORT),
            ],
        ),
    )


def epp_network_policy(args: ServingGatewayArgs) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """The load balancer's proxies call the EPP's ext-proc port from the proxy-only subnet; Google's health
    checkers probe the EPP's backend from :data:`HEALTH_CHECK_RANGES`.

    GKE programs the EPP as a Service Extension backend of the load balancer, health-checked like any
    backend: from 35.191.0.0/16 and 130.211.0.0/22, not from the proxy-only subnet
    (https://cloud.google.com/load-balancing/docs/firewall-rules;
    kubernetes-sigs/gateway-api-inference-extension#2884: a policy admitting only the proxy-only subnet
    leaves the EPP unhealthy, and with ``failureMode: FailClose`` every request fails). GKE's Gateway
    controller checks the picker on gRPC port 9003 unless a HealthCheckPolicy on its Service names another
    (llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/gke.yaml l.38-41, a comment of
    the chart, not GKE's documentation); that no check reaches the ext-proc port is written nowhere we could
    read, so the checkers may still reach both the gRPC health port and the ext-proc port, and nothing else."""
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=f"{args.epp}-from-gateway", namespace=args.namespace, labels=dict(args.labels)
        ),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=epp_labels(args)),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[
                        k8s.networking.v1.NetworkPolicyPeerArgs(
                            ip_block=k8s.networking.v1.IPBlockArgs(cidr=args.settings.proxy_only_cidr)
                        )
                    ],
                    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=EPP_GRPC_PORT)],
                ),
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    from_=[
                        k8s.networking.v1.NetworkPolicyPeerArgs(ip_block=k8s.networking.v1.IPBlockArgs(cidr=cidr))
                        for cidr in HEALTH_CHECK_RANGES
                    ],
                    ports=[
                        k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=port)
                        for port in (EPP_GRPC_PORT, EPP_HEALTH_PORT)
                    ],
                ),
            ],
        ),
    )


class ServingGateway(pulumi.ComponentResource):
    """An internal GKE Gateway and HTTPRoute to the serving Service (or an InferencePool and its EPP).

    Pass the cluster's Kubernetes provider in ``opts.providers``; the cluster must have the Gateway
    API on (``gateway_api_config``), and, with an InferencePool, its CRD installed (``opts.depends_on``).
    """

    address_command: str
    """``kubectl`` command that prints the Gateway's internal address (GKE fills ``status.addresses``)."""

    def __init__(self, name: str, args: ServingGatewayArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("ServingGateway", args, ServingGatewayArgs)
        super().__init__("tpu-serving:index:ServingGateway", name, None, opts)
        child = child_options(self, opts)
        # The proxy-only subnet, when created here (not a schema output, so that pulumi_gcp.compute is
        # imported only when it is needed, as for the cluster's NAT).
        self.proxy_only_subnet: compute.Subnetwork | None = None
        k8s_child = child
        if args.settings.create_proxy_only_subnet:
            from pulumi_gcp import compute as gcp_compute

            self.proxy_only_subnet = gcp_compute.Subnetwork(
                f"{name}-proxy-only",
                name=args.subnet_name,
                project=args.project,
                region=args.region,
                network=args.network,
                ip_cidr_range=args.settings.proxy_only_cidr,
                purpose=PROXY_ONLY_PURPOSE,
                role="ACTIVE",
                opts=child,
            )
            k8s_child = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.proxy_only_subnet]))
        objects = [gateway(args), http_route(args), health_check_policy(args), backend_policy(args)]
        if args.settings.inference_pool:
            objects.append(inference_pool(args))
            self._epp(name, args, child)
        for obj in objects:
            kind = str(obj["kind"])
            k8s.apiextensions.CustomResource(
                f"{name}-{kind.lower()}",
                api_version=str(obj["apiVersion"]),
                kind=kind,
                metadata=obj["metadata"],
                spec=obj["spec"],
                opts=k8s_child,
            )
        self.address_command = (
            f"kubectl -n {args.namespace} get gateway {args.name} -o jsonpath='{{.status.addresses[0].value}}'"
        )
        self.register_outputs({"addressCommand": self.address_command})

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
            f"{name}-epp-config", metadata=meta, data={EPP_CONFIG_FILE: EPP_PLUGINS}, opts=child
        )
        k8s.apps.v1.Deployment(
            f"{name}-epp",
            epp_deployment(args),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[sa, config])),
        )
        k8s.core.v1.Service(f"{name}-epp-svc", epp_service(args), opts=child)
        k8s.networking.v1.NetworkPolicy(f"{name}-epp-from-gateway", epp_network_policy(args), opts=child)
