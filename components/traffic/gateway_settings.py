"""Settings and arguments of the serving gateway (:mod:`tpu_serving.traffic.gateway`), and the API facts both it and the
endpoint picker (:mod:`tpu_serving.traffic.epp`) name: the Gateway and InferencePool APIs, the load balancer's ranges."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..catalog.images import pinned_image_problem
from ..catalog.versions import PINS
from ..common.naming import (
    NameLimit,
    check_dns_name,
    dns_name,
    gateway_address_name,
    gateway_name,
    gateway_url_map_problem,
    namespace_problem,
    project_problems,
    region_problems,
)
from ..common.podspec import REQUEST_TIMEOUT_SECONDS
from ..common.settings import described, proxy_only_subnet_problem

GATEWAY_CLASS = "gke-l7-rilb"
"""GKE's regional internal Application Load Balancer GatewayClass."""
LB_BACKEND_KEEPALIVE_SECONDS = 600
"""How long the load balancer's Envoy proxies keep an idle connection to a backend open, fixed and not configurable
for the Envoy-based Application Load Balancers, the regional internal one among them
(https://cloud.google.com/load-balancing/docs/l7-internal, "Timeouts and retries": backend HTTP keepalive timeout,
10 minutes; https://cloud.google.com/load-balancing/docs/https, "Backend HTTP keepalive timeout": "you must configure
your backend software so that its HTTP keepalive (TCP idle) timeout value is greater than 600 seconds", else the
backend closes a connection the proxy is about to reuse and the request fails with a 502)."""
SERVER_KEEPALIVE_SECONDS = LB_BACKEND_KEEPALIVE_SECONDS + 20
"""The idle keep-alive an HTTP server behind the gateway keeps, where the engine lets it be set: above the load
balancer's own (:data:`LB_BACKEND_KEEPALIVE_SECONDS`), so the proxy, not the server, closes an idle connection (the
20 s are the library's margin)."""
CONNECTION_DRAINING_MAX_SECONDS = 3600
"""The most ``connectionDraining.drainingTimeoutSec`` of a GCPBackendPolicy takes (GKE's networking.gke.io/v1 schema,
datreeio/CRDs-catalog@7b1e26ef networking.gke.io/gcpbackendpolicy_v1.json: ``minimum: 0``, ``maximum: 3600``; Compute
Engine's backend services: "The timeout duration must be from 0 to 3600 seconds, inclusive",
https://cloud.google.com/load-balancing/docs/enabling-connection-draining). The policy drains for the gateway's
request timeout (:func:`tpu_serving.traffic.gateway.backend_policy`), so that timeout keeps to it."""
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

COMPUTE_NAME = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
"""A Compute Engine resource name: 1-63 characters, RFC 1035 (https://cloud.google.com/compute/docs/naming-resources)."""

EPP_IMAGE = PINS["epp"].value
"""The endpoint picker image the version set pins (llm-d/llm-d-router)."""


@dataclass(frozen=True)
class GatewaySettings:
    """An internal GKE Gateway (regional internal Application Load Balancer) in front of the serving Service."""

    proxy_only_cidr: str = described(
        "Range of the region's proxy-only subnet, whose addresses the load balancer's proxies connect from "
        "(a /23 or larger is recommended); must not overlap other subnets of the network.",
        default="192.168.0.0/23",
        check=proxy_only_subnet_problem,
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
    # Not the chart's size (SRE review m8): llm-d/llm-d-router@v0.10.0 config/charts/routerlib/values.yaml l.59-65
    # requests 8 CPUs and 8Gi (memory limit 16Gi, no CPU limit). 8 CPUs fit no node of the default CPU pool: an
    # n2-standard-8 leaves 7.91 vCPUs to pods after GKE's reservation (machines.py, cloud.google.com/kubernetes-engine/
    # docs/concepts/plan-node-sizes), less its system pods; and the picker's two replicas would need two such nodes
    # to themselves. A stack that serves more traffic sets epp_cpu and epp_memory (and a larger cpuPool.machineType);
    # the namespace quota (quota.py, epp_pods) follows these settings.
    epp_cpu: str = described(
        "CPU request of the endpoint picker (the namespace quota needs one; the llm-d-router v0.10.0 chart "
        "requests 8 CPUs and 8Gi, more than an n2-standard-8 node of the default CPU pool holds; this default is "
        "the stack's own).",
        default="1",
        pattern=r"^\d+(\.\d+)?m?$",
    )
    epp_memory: str = described("Memory request of the endpoint picker.", default="2Gi", pattern=r"^\d+(Ki|Mi|Gi|Ti)?$")
    existing_address: str | None = described(
        "Name of a regional internal address reserved already for the Gateway (purpose SHARED_LOADBALANCER_VIP, in "
        "the cluster's subnet); unset, the stack reserves one, named <cluster>-<gateway>. Give its IP in "
        "existingAddressIp: the serving probe sends its request there.",
        default=None,
        pattern=COMPUTE_NAME,
    )
    existing_address_ip: str | None = described(
        "IPv4 address of existingAddress (both or neither).",
        default=None,
        pattern=r"^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$",
    )
    address_subnetwork: str | None = described(
        "Subnet the stack reserves the Gateway's address in, when it reserves one: unset, cluster.subnetwork, or "
        "else the network's name (an auto-mode network names its subnet in each region after itself).",
        default=None,
        pattern=COMPUTE_NAME,
    )
    request_timeout_seconds: int = described(
        "Longest request the load balancer lets run, in seconds (GCPBackendPolicy timeoutSec; the backend "
        "service default of 30 s would cut off long completions and streams), and how long it lets the requests "
        "on a removed endpoint finish (connectionDraining.drainingTimeoutSec, at most 3600).",
        default=REQUEST_TIMEOUT_SECONDS,
        ge=1,
        le=CONNECTION_DRAINING_MAX_SECONDS,
    )


def address_name(existing: str | None, cluster: str, service: str) -> str:
    """The Gateway's address: the one named existing, or the one the stack reserves (a Compute Engine name: at most 63
    characters of lower-case letters, digits and dashes, as a DNS label)."""
    return existing or dns_name(gateway_address_name(cluster, gateway_name(service)), limit=NameLimit.K8S_LABEL)


def existing_address_problem(existing: str | None, existing_ip: str | None) -> str | None:
    """An existing address needs its name and its IP (the key and why), or neither."""
    if (existing is None) == (existing_ip is None):
        return None
    given = "existingAddress" if existing is not None else "existingAddressIp"
    return (
        f"{given}: an existing address needs both existingAddress (its name, for the Gateway) and existingAddressIp "
        "(its IP, for the serving probe); give both, or neither to have the stack reserve one"
    )


def address_problems(settings: GatewaySettings, address_name: str, subnetwork: str) -> list[str]:
    """The Gateway's address: an existing one with its IP, or one to reserve, in a subnet, under a name."""
    found = []
    both = existing_address_problem(settings.existing_address, settings.existing_address_ip)
    if both is not None:
        found.append(f"settings.{both}")
    if settings.existing_address is not None and address_name != settings.existing_address:
        found.append(f"address_name: {address_name!r} is not settings.existingAddress {settings.existing_address!r}")
    if not address_name:
        found.append("address_name: the Gateway's address needs a name")
    if settings.existing_address is None and not subnetwork:
        found.append("subnetwork: the subnet to reserve the Gateway's address in is required")
    return found


EPP_SUFFIX = "-epp"


def health_path_problem(path: str) -> str:
    """Why ``path`` is not an HTTP path a health check asks (absolute, no space: GKE HealthCheckPolicy
    ``requestPath``), or ``""``."""
    return (
        ""
        if path.startswith("/") and not any(c.isspace() for c in path)
        else "must be an absolute path such as /health"
    )


def gateway_object_name_problem(name: str) -> str:
    """Why ``name`` cannot name a gateway's Kubernetes objects, its endpoint picker ``<name>-epp`` among them (a
    DNS-1123 label, and the picker's name a label value of at most 63 characters: it labels its pods), or ``""``."""
    problem = check_dns_name(name)
    if problem:
        return problem
    most = int(NameLimit.K8S_LABEL) - len(EPP_SUFFIX)
    if len(name) > most:
        return f"must be at most {most} characters: its endpoint picker is {name}{EPP_SUFFIX}, a label value"
    return ""


@dataclass(frozen=True)
class ServingGatewayArgs:
    """Arguments of :class:`ServingGateway`."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the cluster (and of the proxy-only subnet)."""
    network: str
    """VPC network of the cluster: its name, or with a Shared VPC its path, ``projects/<host>/global/networks/<name>``
    (the proxy-only subnet is then made in the host project: a subnet belongs to its network's project)."""
    namespace: str = field(metadata={"check": namespace_problem})
    """Namespace of the serving Service."""
    name: str = described(
        "Name of the Gateway, its HTTPRoute and (with an InferencePool) the pool and its endpoint picker "
        "(`<name>-epp`).",
        check=gateway_object_name_problem,
    )
    service: str = described("The serving Service (`ServingNeighbours.service`).", check=check_dns_name)
    port: int = described("Its port (and the pods' target port; `ServingNeighbours.port`).", ge=1, le=65535)
    health_path: str = described(
        "Path that answers 200 when a backend is ready (`ServingNeighbours.health_path`).", check=health_path_problem
    )
    settings: GatewaySettings = field(default_factory=GatewaySettings)
    """The stack's gateway settings."""
    pool_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the pods an InferencePool selects (the leaders); required with ``settings.inference_pool``."""
    subnet_name: str = "proxy-only"
    """Name of the proxy-only subnet when created."""
    priority_class_name: str | None = None
    """PriorityClass of the endpoint picker (it is on every request's path)."""
    disaggregated: bool = False
    """The pool's pods are prefill and decode servers (labelled ``llm-d.ai/role``): the picker runs its
    prefill/decode profiles (:data:`~tpu_serving.traffic.epp.EPP_PD_PLUGINS`)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the Kubernetes objects."""
    address_name: str = ""
    """The regional internal address the Gateway takes (its ``NamedAddress``): reserved by the gateway in
    :attr:`subnetwork` unless ``settings.existing_address`` names one (:func:`tpu_serving.common.naming.gateway_address_name`);
    required."""
    subnetwork: str = ""
    """The subnet the address is reserved in (the cluster's nodes' subnet), when the gateway reserves it."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types."""
        found = project_problems(self.project) + region_problems(self.region)
        found += address_problems(self.settings, self.address_name, self.subnetwork)
        if self.settings.inference_pool and not self.pool_selector:
            found.append("pool_selector: an InferencePool needs the labels of the pods it selects")
        if self.disaggregated and not self.settings.inference_pool:
            found.append("disaggregated: prefill/decode routing is the endpoint picker's; set settings.inference_pool")
        if cut := gateway_url_map_problem(self.namespace, self.name):
            found.append(f"name = {self.name!r} in namespace {self.namespace!r}: {cut}")
        return found

    @property
    def epp(self) -> str:
        return f"{self.name}{EPP_SUFFIX}"
