"""What JetStream, MaxText and Pathways are, as the ``jetstream-pathways`` backend relies on them:
ports, health and metrics paths, the metrics it watches, the disaggregated servers and the
Pathways images. Each fact names its upstream source."""

from collections.abc import Mapping

from ...catalog.pathways import JETSTREAM_PATHWAYS_VERSION
from ...common.validation import Choice
from ...operations.autoscaling import MetricKind

RM_PORT = 38677
"""Pathways resource manager gRPC port."""
PROXY_PORT = 38681
"""IFRT proxy server port."""
WORKER_PORT = 38679
"""Pathways worker (server) port."""
JAX_PORT = 9000
"""JetStream gRPC port of the MaxText server."""
HTTP_PORT = 8000
"""JetStream HTTP port (``/generate``, ``/healthcheck``)."""
GENERATE_PATH = "/generate"
"""jetstream-http's completion endpoint: ``POST /generate`` with ``{"prompt": ..., "max_tokens": ...}`` answers
``{"response": "..."}`` (the JetStream + Pathways seed, seed-manifests/jetstream-pathways-llama31-405b-v6e16.yaml
l.145-148, and GKE's "Serve an LLM using multi-host TPUs on GKE with JetStream and Pathways", its curl and output).
The image is closed-source (JetStream's own HTTP server, v0.3 jetstream/entrypoints/http/api_server.py, serves
``/v1/generate`` with another body), so the seed and the tutorial are the only sources. The serving probe sends one
(:mod:`tpu_serving.operations.prober`)."""
GENERATE_ANSWER = '"response"'
"""RE2 pattern of :data:`GENERATE_PATH`'s answer."""
HTTP_KEEPALIVE_SECONDS = 5
"""How long ``jetstream-http`` keeps an idle connection: uvicorn's default ``timeout_keep_alive`` (5 s, uvicorn
config.py ``Config``), which it does not set and takes no flag or variable for (AI-Hypercomputer/JetStream v0.3, the
first tag after the image's v0.2.3, jetstream/entrypoints/http/api_server.py l.130-132 ``uvicorn.run(app, host=...,
port=..., log_level="info")``; uvicorn reads ``UVICORN_*`` variables only through its command line). Behind a gateway
its load balancer keeps idle backend connections 600 s (:data:`~tpu_serving.traffic.gateway_settings.LB_BACKEND_KEEPALIVE_SECONDS`),
so a request sent on a connection the server has just closed can fail (502); the library cannot raise it without
replacing the image's entrypoint (docs/backends.md)."""
HEALTH_PATH = "/healthcheck"
"""Path that answers 200 once the server is ready: the seed manifests probe ``GET /healthcheck`` on
port 8000 (seed-manifests/jetstream-pathways-llama31-405b-v6e16.yaml, ``jax-tpu`` probes)."""
METRICS_PORT = 9090
"""Default port of JetStream's Prometheus metrics server in ``jax-tpu``: MaxText's
``prometheus_port`` (MaxText/maxengine_server.py: ``if config.prometheus_port != 0:
metrics_server_config = config_lib.MetricsServerConfig(port=config.prometheus_port)``, passed to
JetStream's ``server_lib.run``); 9090 is the example of AI-Hypercomputer/JetStream
docs/observability-prometheus-metrics-in-jetstream-server.md ("Metrics are not exported by
default"), free among the leader's ports."""
METRICS_PATH = "/"
"""Path the metrics are scraped on: JetStream serves them with prometheus_client's HTTP server, and
both JetStream's guide and GKE's "Configure autoscaling for LLM workloads on TPUs"
(https://cloud.google.com/kubernetes-engine/docs/how-to/machine-learning/inference/autoscaling-tpu)
scrape ``path: "/"``."""


class JetStreamMetric(Choice):
    """JetStream's Prometheus metrics the stacks watch (AI-Hypercomputer/JetStream
    jetstream/core/metrics/prometheus.py ``JetstreamMetricsCollector``). JetStream has no gauge of
    running requests; its decode slots in use stand in for the KV cache."""

    PREFILL_BACKLOG = "jetstream_prefill_backlog_size"
    """Gauge: "Size of prefill queue" (requests waiting). The default autoscaling metric: GKE's "Best practices
    for autoscaling large language model (LLM) inference workloads with TPUs" recommends it for JetStream's
    HPA, as the requests waiting in the server's queue, which correlates strongly with latency
    (https://cloud.google.com/kubernetes-engine/docs/best-practices/machine-learning/inference/autoscaling-tpu,
    "Server metrics"; its examples are on "Configure autoscaling for LLM workloads on TPUs",
    https://cloud.google.com/kubernetes-engine/docs/how-to/machine-learning/inference/autoscaling-tpu)."""
    SLOTS_USED = "jetstream_slots_used_percentage"
    """Gauge: "The percentage of decode slots currently being used" (0 to 1, per generate engine)."""
    TIME_TO_FIRST_TOKEN = "jetstream_time_to_first_token"
    """Histogram: "Time to first token per request in seconds"."""
    TIME_PER_OUTPUT_TOKEN = "jetstream_time_per_output_token"
    """Histogram: "Average time per output token per request in seconds"."""


METRIC_KINDS: Mapping[str, MetricKind] = {
    JetStreamMetric.PREFILL_BACKLOG: MetricKind.GAUGE,
    JetStreamMetric.SLOTS_USED: MetricKind.GAUGE,
    JetStreamMetric.TIME_TO_FIRST_TOKEN: MetricKind.HISTOGRAM,
    JetStreamMetric.TIME_PER_OUTPUT_TOKEN: MetricKind.HISTOGRAM,
}
"""The kinds of the JetStream metrics above (``JetstreamMetricsCollector``): the HPA can read only a gauge."""


DISAGGREGATED_SERVERS: Mapping[str, str] = {
    "v6e-8": "ExperimentalMaxtextDisaggregatedServer_8",
    "v5e-16": "ExperimentalMaxtextDisaggregatedServer_16",
}
"""Slice (``<generation>-<chips>``) -> MaxText's inference server for disaggregated prefill/decode on two such
slices. Each server hard-codes its slices: AI-Hypercomputer/maxtext ``MaxText/maxengine_config.py``
``get_server_config`` at tpu-recipes-v0.1.2 (14b5876, lines 48-70): ``prefill_slices=("v6e-8",)`` and
``generate_slices=("v6e-8",)`` for ``_8``, ``("v5e-16",)`` for ``_16``; MaxText of the jetstream-pathways:v0.2.0
image is bounded to those tags by the seeds (tools/conformance/extract_maxtext.py)."""

PATHWAYS_REGISTRY = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
PATHWAYS_TAG = JETSTREAM_PATHWAYS_VERSION
"""The seeds' Pathways images are ``:latest``; the defaults pin the Pathways release of
:data:`tpu_serving.catalog.pathways.JETSTREAM_PATHWAYS_VERSION` instead (a tag of the form the
PathwaysJob controller derives from ``pathwaysVersion``), so a redeploy never changes the
server under a fixed JetStream client. It stays at that release when the ``pathways-job``
backend's release moves: the JetStream image, the client, no longer changes."""
