"""What the engines, controllers and GKE's add-ons listen on and are called, as the runtime model knows them.

The model's own table, each fact with its upstream source (the backends' own facts come from their
``runtime_facts.json``, see :mod:`.backend_facts`); the library holds its own copy of some of these,
and ``tests/tools/runtime/test_runtime_facts_agree.py`` compares the two, so that neither can drift alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from tpu_serving_tools.runtime import backend_facts as bf

_SAXML, _JETSTREAM, _PATHWAYS_JOB = (bf.BACKENDS[n] for n in ("saxml", "jetstream-pathways", "pathways-job"))
SAX_ADMIN, SAX_MODEL, SAX_HTTP = (_SAXML.roles[r] for r in ("admin", "model", "http"))
"""Saxml roles (components/backends/saxml/runtime_facts.json, with their sources)."""
SAX_ADMIN_PORT, SAX_MODEL_PORT = _SAXML.ports["admin"], _SAXML.ports["model"]
PATHWAYS_WORKER_PORT = _JETSTREAM.ports["pathways_worker"]
PATHWAYS_PROXY_PORT = _PATHWAYS_JOB.ports["proxy"]

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

SERVING_SERVICE: Mapping[str, str] = bf.SERVING_SERVICE
"""The Service clients of a backend call when ``serving.serviceName`` does not name another (each backend's
``runtime_facts.json``). The PathwaysJob backend serves no clients."""

EPP_PORTS: Mapping[str, tuple[str, int]] = {
    "ext-proc": ("--grpc-port", 9002),
    "health": ("--grpc-health-port", 9003),
    "metrics": ("--metrics-port", 9090),
}
"""What an endpoint picker listens on: its flag for each port, and the port when the flag is not given
(llm-d/llm-d-router@v0.10.0 pkg/epp/server/options.go: ``DefaultGrpcPort = 9002`` l.41, ``MetricsPort: 9090`` and
``GRPCHealthPort: 9003`` l.150-151, the flags l.164, l.213-215)."""
EPP_POOL_FLAG = "--pool-name"
"""The flag naming the InferencePool a picker serves (options.go l.177): a container given it is that pool's
picker. ``--pool-namespace`` (l.175) names the pool's namespace; when it is not given, the ``NAMESPACE`` variable
does, else ``default`` (cmd/epp/runner/runner.go l.915-923)."""
GKE_EPP_HEALTH_CHECK_PORT = 9003
"""GKE's Gateway controller health-checks an InferencePool's endpoint picker on gRPC port 9003, unless a
HealthCheckPolicy on the picker's Service names another port ("The GKE gateway controller health-checks the EPP
backend on gRPC port 9003 by default, so an explicit HealthCheckPolicy is only needed for other ports",
llm-d/llm-d-router@v0.10.0 config/charts/llm-d-router-gateway/templates/gke.yaml l.38-61)."""
