"""What the engines, controllers and GKE's add-ons listen on and are called, as the runtime model knows them.

The model's own table, each fact with its upstream source; the library holds its own copy of some of these,
and ``tests/test_runtime_facts_agree.py`` compares the two, so that neither can drift alone.
"""

from __future__ import annotations

from collections.abc import Mapping

SAX_ADMIN = "sax-admin-server"
SAX_MODEL = "sax-model-server"
SAX_HTTP = "sax-http"
"""Saxml roles, named as seed 002 names them (../shared/reference/seed-manifests/saxml-lmcloudspmd175b-2xv5e-4x8.yaml:
the admin Deployment, the model-server JobSet's replicated job, the sax-http Deployment)."""
SAX_ADMIN_PORT = 10000
"""google/saxml@v1.1.0 saxml/server/admin_server flag --port (default 10000); seed 002 containerPort 10000."""
SAX_MODEL_PORT = 10001
"""Seed 002 model server: args --port=10001, containerPort 10001 (saxml/server/model_server flag --port)."""

PATHWAYS_WORKER_PORT = 38679
"""Pathways worker --server_port in the JetStream + Pathways seeds (seed 001a/001b: --server_port=38679,
containerPort 38679); the resource manager dials it back."""
PATHWAYS_PROXY_PORT = 29000
"""google/pathways-job@v0.1.4 internal/controller/pathwaysjob_controller.go:59 PathwaysProxyPort = 29000 (the IFRT
proxy's --server_port, :621)."""

GMP_COLLECTOR_NAMESPACE = "gmp-system"
GMP_COLLECTOR_LABELS: Mapping[str, str] = {"app.kubernetes.io/name": "collector", "app": "managed-prometheus-collector"}
"""Managed Prometheus' collector DaemonSet: namespace gmp-system, pod labels app.kubernetes.io/name: collector and
app: managed-prometheus-collector, pod network (GoogleCloudPlatform/prometheus-engine@v0.17.2 manifests/operator.yaml,
the collector DaemonSet)."""

GATEWAY_CLASS_REGIONAL_INTERNAL = "gke-l7-rilb"
"""GKE's regional internal Application Load Balancer GatewayClass
(https://cloud.google.com/kubernetes-engine/docs/concepts/gateway-api#gatewayclass)."""
PROXY_ONLY_PURPOSE = "REGIONAL_MANAGED_PROXY"
"""A regional Envoy load balancer's proxies connect from the region's active subnet of this purpose
(https://cloud.google.com/load-balancing/docs/proxy-only-subnets)."""
HEALTH_CHECK_RANGES: tuple[str, ...] = ("35.191.0.0/16", "130.211.0.0/22")
"""Google Cloud health check probes' sources (https://cloud.google.com/load-balancing/docs/health-check-concepts,
"Probe IP ranges and firewall rules"; https://cloud.google.com/load-balancing/docs/firewall-rules)."""

SERVING_SERVICE: Mapping[str, str] = {
    "vllm": "vllm-api",
    "jetstream-pathways": "jetstream-svc",
    "saxml": "sax-http-lb",
}
"""The Service clients of a backend call when ``serving.serviceName`` does not name another: the product's documented
endpoint per backend (README, Configuration: ``serving.serviceName`` defaults; Saxml's LoadBalancer in front of
sax-http). The PathwaysJob backend serves no clients."""
