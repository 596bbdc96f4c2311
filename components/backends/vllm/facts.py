"""What vLLM TPU and its image are, as the library relies on them: ports, paths, metrics,
the multi-node script, the environment of a multi-host group, the Cloud Storage FUSE mounts and
the flags the library writes itself. Each fact names its upstream source.

Upstream references: kubernetes-sigs/lws@v0.10.0 docs/examples/vllm/TPU/lws.yaml (Ray over a
group, v5e 4x4, TP 16) and vllm-project/tpu-inference@v0.27.0
examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml (Ray health-check environment,
the Run:ai streamer). The image is vLLM TPU v0.29.0 (versions.py): its flags and environment were
checked against the 0.29.0 wheels (vllm-tpu, tpu-inference), but the pod shape stays referenced to
tpu-inference v0.27.0's examples and Dockerfile, the newest tag of the tpu-inference git mirror; the
wheels carry neither ``examples/`` nor ``docker/``, so 0.29.0's own example manifests were not read.
"""

from collections.abc import Mapping, Sequence

from ...catalog import SliceShape
from ...catalog.versions import PINS
from ...common.validation import Choice
from ...operations.alerts.error_rate import HttpResponses
from ...operations.autoscaling import MetricKind
from ...operations.observability import ServingSignals

HTTP_PORT = 8000
"""The OpenAI-compatible server's port (``vllm serve --port``; 8000 is vLLM's default)."""
RAY_GCS_PORT = 6379
"""The Ray head's GCS port: ``multi-node-serving.sh leader`` runs ``ray start --head --port=6379``
and workers ``ray start --address=<leader>:6379`` (vllm-project/vllm examples/online_serving/
multi-node-serving.sh)."""
HEALTH_PATH = "/health"
"""vLLM's health endpoint: 200 once the engine is up (vllm/entrypoints/openai/api_server.py)."""
COMPLETIONS_PATH = "/v1/completions"
"""vLLM's OpenAI completions endpoint, on the serving port: its ``CompletionRequest`` takes ``model``, ``prompt`` and
``max_tokens`` (default 16), and answers a ``CompletionResponse`` whose ``object`` is always ``"text_completion"``
(vllm-project/vllm vllm/entrypoints/openai/completion/protocol.py at 002032ee, ``CompletionRequest`` and
``CompletionResponse``; the OpenAI API's fields, which the 0.29.0 wheel serves at the same path: the stack's
``completionExample`` output). The serving probe sends one (:mod:`tpu_serving.operations.prober`)."""
COMPLETION_ANSWER = '"object": *"text_completion"'
"""RE2 pattern of a completion's answer (:data:`COMPLETIONS_PATH`): an error answers a JSON error object instead."""
PROBE_PROMPT = "Say OK."
"""The serving probe's prompt: a few tokens, so the probe measures a request's path and not a long prefill."""
METRICS_PATH = "/metrics"
"""vLLM's Prometheus endpoint, on the serving port ("exposed via the /metrics endpoint on the vLLM
OpenAI compatible API server", docs.vllm.ai usage/metrics; GKE's vLLM TPU tutorial scrapes
``path: /metrics, port: 8000``)."""


class VllmMetric(Choice):
    """vLLM's Prometheus metrics the stacks watch (vllm/v1/metrics/loggers.py, vLLM 0.11 and later)."""

    REQUESTS_RUNNING = "vllm:num_requests_running"
    REQUESTS_WAITING = "vllm:num_requests_waiting"
    TIME_TO_FIRST_TOKEN = "vllm:time_to_first_token_seconds"
    INTER_TOKEN_LATENCY = "vllm:inter_token_latency_seconds"
    """Replaces ``vllm:time_per_output_token_seconds`` (deprecated in 0.11, removed: vllm PR #32661)."""
    KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"
    """Replaces ``vllm:gpu_cache_usage_perc`` ("Deprecated in 0.9 - Renamed as vllm:kv_cache_usage_perc")."""
    GENERATION_TOKENS = "vllm:generation_tokens"
    """Counter of the tokens the engine generated, one series per engine (vllm-tpu 0.29.0 wheel:
    vllm/v1/metrics/loggers.py l.704-711, incremented every scheduler step l.1212; ``num_requests_running`` l.494,
    ``num_requests_waiting`` l.504); its samples are ``vllm:generation_tokens_total``."""


METRIC_KINDS: Mapping[str, MetricKind] = {
    **dict.fromkeys(
        (
            VllmMetric.REQUESTS_RUNNING,
            VllmMetric.REQUESTS_WAITING,
            VllmMetric.KV_CACHE_USAGE,
        ),
        MetricKind.GAUGE,
    ),
    **dict.fromkeys(
        (
            VllmMetric.TIME_TO_FIRST_TOKEN,
            VllmMetric.INTER_TOKEN_LATENCY,
            "vllm:time_per_output_token_seconds",
            "vllm:e2e_request_latency_seconds",
            "vllm:request_queue_time_seconds",
            "vllm:request_inference_time_seconds",
            "vllm:request_prefill_time_seconds",
            "vllm:request_decode_time_seconds",
            "vllm:request_prompt_tokens",
            "vllm:request_generation_tokens",
            "vllm:request_max_num_generation_tokens",
            "vllm:request_params_n",
            "vllm:request_params_max_tokens",
        ),
        MetricKind.HISTOGRAM,
    ),
    **dict.fromkeys(
        ("vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits", VllmMetric.GENERATION_TOKENS),
        MetricKind.COUNTER,
    ),
}
"""The kinds of vLLM's Prometheus metrics, by the name the server registers (vllm/v1/metrics/loggers.py
``PrometheusStatLogger``: its ``prometheus_client.Gauge``, ``Histogram`` and ``Counter``; a counter's series
gain ``_total``): the HPA can read only a gauge."""


SIGNALS = ServingSignals(
    requests_running=VllmMetric.REQUESTS_RUNNING.value,
    requests_waiting=VllmMetric.REQUESTS_WAITING.value,
    time_to_first_token=VllmMetric.TIME_TO_FIRST_TOKEN.value,
    time_per_output_token=VllmMetric.INTER_TOKEN_LATENCY.value,
    cache_usage=VllmMetric.KV_CACHE_USAGE.value,
    generation_tokens=f"{VllmMetric.GENERATION_TOKENS.value}_total",
)
"""vLLM's serving signals, for the dashboard and the alerts (the metrics above)."""


HTTP_RESPONSES = HttpResponses(
    server="vLLM's OpenAI-compatible server",
    metric="http_requests_total",
    status_label="status",
    server_errors="5xx",
)
"""vLLM's count of its HTTP responses, by status class. The server instruments its FastAPI app with
prometheus-fastapi-instrumentator, unconditionally, into the registry ``/metrics`` serves (vllm-tpu 0.29.0 wheel:
vllm/entrypoints/serve/instrumentator/metrics.py l.65-75 ``Instrumentator(excluded_handlers=["/metrics", "/health",
"/load", "/ping", "/version", "/server_info"], registry=registry).add().instrument(app)``, called by
vllm/entrypoints/serve/instrumentator/__init__.py l.16-18 from ``register_vllm_serve_api_routers``; the wheel requires
prometheus-fastapi-instrumentator>=8.0.0). With no instrumentation added the middleware records the default metrics,
among them the counter ``http_requests_total`` with labels ``method``, ``status`` and ``handler``
(trallnag/prometheus-fastapi-instrumentator v8.0.0 src/prometheus_fastapi_instrumentator/middleware.py l.87-101,
metrics.py l.708-720), and ``should_group_status_codes`` defaults to true (instrumentation.py l.39), so ``status``
holds the class: ``status[0] + "xx"`` (middleware.py l.203), ``5xx`` for any server error, also for an exception
the app raised (the status starts at 500, l.144). Unchanged in v8.0.2. Probes (``/health``, ``/ping``) and scrapes
are not counted. A streamed completion that fails after its 200 header counts as ``2xx``."""


MULTI_NODE_SCRIPTS: Sequence[str] = (
    "/workspace/vllm/examples/ray_serving/multi-node-serving.sh",
    "/workspace/vllm/examples/online_serving/multi-node-serving.sh",
)
"""Ray bootstrap script of the vLLM TPU image (the image clones vLLM into /workspace/vllm:
vllm-project/tpu-inference@v0.27.0 docker/Dockerfile; 0.29.0's Dockerfile is not in its wheels, and the
vllm-tpu 0.32.0 sdist still has the script under ``examples/ray_serving/``). vLLM moved it from ``online_serving``
(kubernetes-sigs/lws@v0.10.0 docs/examples/vllm/TPU/lws.yaml) to ``ray_serving``
(tpu-inference@v0.27.0 examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml); the
pods run the first that exists, so an image from either side of the move works."""

ROLE_LABEL = "role"
"""The leader template's ``role: leader`` label, which the serving Service selects (as upstream)."""

MULTI_HOST_ENV: Mapping[str, str] = {
    "TPU_MULTIHOST_BACKEND": "ray",
    "MODEL_IMPL_TYPE": "vllm",
    "RAY_health_check_failure_threshold": "100",
    "RAY_health_check_timeout_ms": "20000",
    "RAY_health_check_period_ms": "10000",
    "RAY_grpc_keepalive_timeout_ms": "3000000",
    "RAY_CGRAPH_get_timeout": "600",
    "RAY_CGRAPH_submit_timeout": "600",
}
"""Environment of every pod of a multi-host group, after vllm-project/tpu-inference@v0.27.0
examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml, keeping only what the image's release
reads: the Ray multi-host backend and the vLLM (torchax) model implementation (tpu-inference 0.29.0
``tpu_inference/envs.py``: ``TPU_MULTIHOST_BACKEND`` in ["ray"], ``MODEL_IMPL_TYPE`` in auto/vllm/flax_nnx/
jetpack), Ray health checks that tolerate hosts busy loading weights or compiling (100 missed 10 s GCS
pings; RayConfig ``health_check_*`` and ``grpc_keepalive_timeout_ms``, named in Ray 2.60.0's and
2.58.0's ``_raylet.so``) and compiled-graph timeouts of 10 minutes, the hang detection of a multi-host engine.
Ray reads both in **seconds** (Ray 2.60.0 ``ray/dag/context.py`` l.13-14 ``DEFAULT_SUBMIT_TIMEOUT_S``,
``DEFAULT_GET_TIMEOUT_S``; l.54-58 "The maximum time in seconds"): the example's ``30000`` is 8 h 20 min, so a wedged
step went unnoticed for hours. vLLM raises the get timeout from Ray's 10 s to 300 s unless set ("it is 10 seconds by
default", vllm-tpu 0.29.0 vllm/v1/executor/ray_executor.py l.547-554); 600 s lets a step that compiles a shape the
warm-up missed finish, and a step with no result after 10 minutes raises: the engine exits and the group is
recreated. The example's ``TPU_BACKEND_TYPE`` (only forwarded to Ray workers, read by
nothing in tpu-inference 0.29.0), ``RAY_RESERVE_CPU_FOR_RAYLET``, ``RAY_num_heartbeats_timeout`` and
``RAY_raylet_heartbeat_timeout_milliseconds`` (named nowhere in Ray 2.60.0 or 2.58.0: the heartbeat configs gave way
to the health checks) are left out; ``make check`` (``engines``) checks every variable against the
release tables in tools/conformance/tables."""

KEEP_ALIVE_ENV = "VLLM_HTTP_TIMEOUT_KEEP_ALIVE"
"""Seconds vLLM's API server keeps an idle HTTP connection (vllm-tpu 0.29.0 wheel: vllm/envs.py l.1138-1139, default
``"5"``; passed to uvicorn as ``timeout_keep_alive``, vllm/entrypoints/launchers/api_server/entry.py l.151). Every vLLM
pod sets it to :data:`~tpu_serving.traffic.gateway_settings.SERVER_KEEPALIVE_SECONDS`, above the gateway load balancer's fixed
600 s: at 5 s the server closed connections the load balancer's proxies still pooled (502s on reuse). It is also
above the router sidecar's client side (Go's ``http.Transport`` idles connections 90 s, llm-d guides'
``VLLM_HTTP_TIMEOUT_KEEP_ALIVE=120`` for it)."""
SHUTDOWN_TIMEOUT_FLAG = "--shutdown-timeout"
"""``vllm serve --shutdown-timeout=<seconds>``: on SIGTERM the API server stops its engine client with this timeout,
and the engine core drains the requests in flight for up to as long before it aborts the rest ("Shutdown timeout in
seconds. 0 = abort, >0 = wait.", vllm-tpu 0.29.0 vllm/engine/arg_utils.py l.1728-1733, default 0;
vllm/config/vllm.py l.439-443 ``shutdown_timeout``; the SIGTERM handler, vllm/entrypoints/launchers/launcher.py
l.133-158; the drain, vllm/v1/engine/core.py l.1502-1547 ``_handle_shutdown``). At its default, 0, SIGTERM aborts
every request in flight."""
PYTHON = "python3"
"""The image's interpreter, for the exec probes (the vLLM TPU image runs ``python3 -m vllm.entrypoints...``:
kubernetes-sigs/lws@v0.10.0 docs/examples/vllm/TPU/lws.yaml l.33)."""
DRAINING_MARKER = "/tmp/tpu-serving-draining"
"""A file a prefill leader's preStop hook creates: its readiness probe fails from then on (:func:`.pods.readiness`)."""

DSHM_VOLUME = "dshm"
WEIGHTS_VOLUME = "model-weights"
CACHE_VOLUME = "compilation-cache"
WEIGHTS_MOUNT = "/model"
"""Where the model's folder of the weights bucket is mounted (``only-dir``): ``vllm serve /model``."""
CACHE_MOUNT = "/compilation-cache"

GCSFUSE_DRIVER = "gcsfuse.csi.storage.gke.io"
GCSFUSE_ANNOTATIONS: Mapping[str, str] = {
    "gke-gcsfuse/volumes": "true",
    "gke-gcsfuse/cpu-limit": "0",
    "gke-gcsfuse/memory-limit": "0",
    "gke-gcsfuse/ephemeral-storage-limit": "0",
}
"""Pod annotations of the Cloud Storage FUSE CSI driver: inject its sidecar, and lift the
sidecar's limits (``0`` = unlimited) so the parallel download of large weights is not
throttled, and the file cache (an emptyDir on the node's boot disk by default) may hold the
whole model. Source: GKE "Serve an LLM using TPUs on GKE with vLLM"
(https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-vllm-tpu, the same four
annotations) and "Optimize the Cloud Storage FUSE CSI driver for performance"
(https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver-perf:
with the default emptyDir cache, ``ephemeral-storage-limit`` must exceed ``file-cache:max-size-mb``)."""

GCSFUSE_SIDECAR_REQUESTS: tuple[str, str] = ("250m", "256Mi")
"""CPU and memory requests of the Cloud Storage FUSE sidecar GKE's webhook injects into a pod annotated
``gke-gcsfuse/volumes: "true"``, a native sidecar (an init container with ``restartPolicy: Always``), when the pod's
``gke-gcsfuse/cpu-request`` and ``gke-gcsfuse/memory-request`` annotations do not say otherwise (the annotations above
lift its limits only). Source: GKE "Configure resources for the sidecar container"
(https://cloud.google.com/kubernetes-engine/docs/how-to/persistent-volumes/cloud-storage-fuse-csi-driver-sidecar) and
GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.4 cmd/webhook/main.go l.64-67 (the default requests); the runtime
model's copy is ``GCS_FUSE_SIDECAR_REQUESTS`` in tools/runtime/data/kubernetes.json."""
GCSFUSE_PREFETCH_REQUESTS: tuple[str, str] = ("10m", "10Mi")
"""Requests of the metadata prefetch sidecar, injected beside it for a volume with
``gcsfuseMetadataPrefetchOnMount: "true"`` (gcs-fuse-csi-driver v1.24.4 pkg/webhook/sidecar_spec.go l.31, l.45, l.259;
cmd/webhook/main.go l.64-67)."""

WEIGHTS_MOUNT_OPTIONS: Sequence[str] = (
    "implicit-dirs",
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:type-cache-max-size-mb:-1",
    "file-cache:max-size-mb:-1",
    "file-cache:cache-file-for-range-read:true",
    "file-cache:enable-parallel-downloads:true",
    "file-cache:parallel-downloads-per-file:100",
    "file-cache:max-parallel-downloads:-1",
    "file-cache:download-chunk-size-mb:10",
)
"""Mount options of the read-only weights volume: metadata cached for the pod's life (the
weights never change under a running server) and the file cache with parallel downloads (its size,
``file-cache:max-size-mb``, unbounded here as in GKE's examples, is capped when the cache is in memory:
:func:`.file_cache.max_size_option`).
Sources: the metadata and file cache options of GKE's model-serving example in "Optimize the
Cloud Storage FUSE CSI driver for performance" (cloud-storage-fuse-csi-driver-perf), and the
parallel-download options of GKE's vLLM TPU tutorial (serve-vllm-tpu). Parallel downloads need
the file cache ("Parallel downloads require the file cache to be enabled") and GKE
1.29.6-gke.1254000 / 1.30.2-gke.1394000 or later (GoogleCloudPlatform/gcs-fuse-csi-driver
docs/releases.md); metadata prefetch needs 1.32.1-gke.1357001 or later (same page)."""

CACHE_MOUNT_OPTIONS: Sequence[str] = ("implicit-dirs",)
"""Mount options of the read-write compilation cache volume."""

ENGINE_FLAGS: Mapping[str, str] = {
    "--tensor-parallel-size": "tensor_parallel_size",
    "--pipeline-parallel-size": "pipeline_parallel_size",
    "--max-model-len": "max_model_len",
    "--dtype": "dtype",
    "--quantization": "quantization",
    "--gpu-memory-utilization": "memory_utilization",
    "--block-size": "block_size",
    "--kv-cache-memory-bytes": "memory_utilization",
    "--num-gpu-blocks-override": "memory_utilization",
}
"""Engine flags -> the engine setting (:class:`~tpu_serving.backends.vllm.args.VllmEngineSettings`) that decides
them. ``--kv-cache-memory-bytes`` sizes the KV cache in bytes ("kv_cache_memory_bytes (when not-None) ignores
gpu_memory_utilization"), and
``--num-gpu-blocks-override`` replaces the profiled count of KV-cache blocks: both take HBM beyond the share
``memory_utilization`` sets (vllm-project/vllm vllm/config/cache.py, ``kv_cache_memory_bytes`` and
``num_gpu_blocks_override``; vllm/engine/arg_utils.py ``EngineArgs.add_cli_args``)."""

SERVING_FLAGS: frozenset[str] = frozenset(
    {
        "--model",
        "--revision",
        "--served-model-name",
        "--port",
        "--host",
        "--load-format",
        "--distributed-executor-backend",
        "--download-dir",
        "--kv-transfer-config",
        "--shutdown-timeout",
    }
)
"""Flags the component writes from the serving arguments: the model and its name, the port the Service and the
probes use, the weights loader, the executor (Ray across a multi-host group), the drain on SIGTERM
(:data:`SHUTDOWN_TIMEOUT_FLAG`) and, in a disaggregated pair, the KV connector (:mod:`.kv`)."""

TOPOLOGY_FLAGS: frozenset[str] = frozenset(
    {
        "--headless",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--master-port",
    }
)
"""Flags that change how many chips or hosts one engine spans, or which process serves: the library runs one
engine per slice over exactly its chips, the API server on the leader (vllm/entrypoints/cli/serve.py: ``--headless``
runs no API server; ``--nnodes``, ``--node-rank``, ``--master-addr`` and ``--master-port`` place a multi-node
engine without Ray). So is every flag with ``-parallel`` in its name but :data:`PARALLEL_FLAGS_ALLOWED`: data
parallelism multiplies the chips an engine needs, context parallelism splits the group the library derives
(vllm/engine/arg_utils.py ``parallel_group``: ``--data-parallel-size``, ``--data-parallel-rank``...,
``--decode-context-parallel-size``)."""

PARALLEL_FLAGS_ALLOWED: frozenset[str] = frozenset({"--enable-expert-parallel", "--max-parallel-loading-workers"})
"""``-parallel`` flags that leave the chips alone: expert parallelism spreads a MoE model's experts over the same
tensor-parallel ranks, and loading workers are processes."""

CONFIG_FILE_FLAG = "--config"
"""``vllm serve --config <file>``: its YAML keys become flags (vllm/utils/argparse_utils.py
``FlexibleArgumentParser._pull_args_from_config``), those above too, out of the component's sight."""

SECRET_FLAGS: frozenset[str] = frozenset({"--hf-token", "--api-key"})
"""The flags of ``vllm serve`` that carry a secret, at vLLM 0.29.0: ``--hf-token`` (the bearer token for the Hugging
Face Hub, vllm/engine/arg_utils.py ``EngineArgs.hf_token``) and ``--api-key`` (the keys the server requires of its
clients, the front end's vllm/entrypoints/launchers/cli_args.py in the 0.29.0 wheel). Of the release's flags whose
name holds ``token``, ``key``, ``secret`` or ``password`` (tools/conformance/tables/vllm-0.29.0.json) the others carry
none: token counts and thresholds (``--max-num-batched-tokens``...), the tokenizer's (``--tokenizer``,
``--skip-tokenizer-init``...) and the path of the TLS key file (``--ssl-keyfile``). ``extra_args`` refuses these and
their abbreviations, which ``vllm serve`` takes for them (argparse's ``allow_abbrev``: ``--hf-tok=...`` is
``--hf-token``)."""

STATS_OFF_FLAGS: frozenset[str] = frozenset({"--disable-log-stats"})
"""The flags of ``vllm serve`` that take away the engine's Prometheus metrics, at vllm-tpu 0.29.0 (read in the wheel,
the sha256 of tools/conformance/tables/vllm-0.29.0.json): ``--disable-log-stats`` (vllm/engine/arg_utils.py
l.1707-1711) gives the engine ``log_stats=False`` (the server's vllm/entrypoints/launchers/api_server/entry.py l.99,
vllm/v1/engine/async_llm.py l.231), and with it no ``StatLoggerManager`` (async_llm.py l.172-181), the only maker of
``PrometheusStatLogger`` (vllm/v1/metrics/loggers.py l.1383-1386), which registers every ``vllm:`` metric:
``/metrics`` then serves the HTTP server's own series only (a maintainer's answer in vllm-project/vllm#11987,
2025-01-14: the endpoint stays, "not receiving any data"). The leaders' probes
(:mod:`.progress`), the HPA's gauge and the alerts read those metrics. No other flag of the release removes the
Prometheus logger: ``--aggregate-engine-logging`` and ``--api-server-count`` above 1 choose or drop the logging one
only (loggers.py l.1351-1363), the ``*-metrics`` flags add series, ``--show-hidden-metrics-for-version`` shows
deprecated ones, ``--headless`` runs no API server at all (:data:`TOPOLOGY_FLAGS`); a stat-logger plugin that
subclasses ``PrometheusStatLogger`` replaces it (loggers.py l.74-88, l.1374, l.1383) but comes from a package
installed in the image, not a flag. ``extra_args`` refuses these and their abbreviations."""

LIBRARY_FLAGS: frozenset[str] = frozenset(ENGINE_FLAGS) | SERVING_FLAGS
"""Engine flags the component sets from its own settings; ``extra_args`` may not repeat them, nor abbreviate
them: ``vllm serve``'s parser (vLLM's ``FlexibleArgumentParser``) keeps argparse's ``allow_abbrev``, so
``--tensor-parallel`` sets ``--tensor-parallel-size``."""

DEFAULT_IMAGE = PINS["vllm-tpu"].value
"""The newest vLLM TPU release whose wheel is on PyPI and whose image tag a public document names
(AI-Hypercomputer/tpu-recipes inference/ironwood/vLLM/Qwen3-32B/llm-d/README.md:
``docker.io/vllm/vllm-tpu:v0.29.0``; the tag was not checked against a registry); GKE's tutorial and
the tpu-inference examples use the mutable ``latest``/``nightly`` tags."""

MULTI_HOST_CAUTION = "multi-host vLLM on TPU is unsupported on GKE and untested upstream"
"""The head of the caution every vLLM stack whose groups span several VMs previews with (:func:`caution`),
and which the README's stack table quotes for each such stack (tests/components/backends/test_vllm_caution.py holds the two together)."""

MULTI_HOST_SOURCES = (
    "GKE's vLLM TPU tutorial says multi-host configurations are not supported when using vLLM with TPUs on GKE "
    "(https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-vllm-tpu); tpu-inference v0.27.0's support "
    "matrix marks multi-host untested on the torchax path these pods select (MODEL_IMPL_TYPE=vllm) and failing for "
    "its Flax models, and has no v5e or v5p table; validate on one slice before relying on it"
)
"""Why a multi-host vLLM group is a caution, with its sources:

- GKE, "Serve an LLM using TPU Trillium on GKE with vLLM"
  (https://cloud.google.com/kubernetes-engine/docs/tutorials/serve-vllm-tpu, its Note under "vLLM"): "multi-host
  configurations are not supported when using vLLM with TPUs on GKE" (the README's "updated 2026-04-10" is from the
  first reading, commit 2c59a18; the stored copy re-read on 2026-11-29, docs.cloud.google.com through a mirror, shows
  the same Note and no date);
- vllm-project/tpu-inference@v0.27.0 (e1c03382) README.md l.251-256, "Core Features" (release): multi-host ❌ Failing
  for Flax, ❓ Untested for Torchax and Default, a rollup of v6e and v7x (l.99-102: untested if either generation is)
  last updated 2026-08-20 (l.79); its per-generation tables: support_matrices/release/v6e/{default,flax_nnx,vllm}/
  feature_support_matrix.csv l.16 untested (correctness and performance), release/v7x/vllm l.16 correctness passing,
  performance untested, release/v7x/flax_nnx l.16 failing; there is no v5e or v5p table. Its "Parallelism
  Techniques" table (README.md l.333-337) marks multi-host TP untested for Flax and Torchax alike. The pods select the
  torchax path (:data:`MULTI_HOST_ENV` ``MODEL_IMPL_TYPE=vllm``)."""


def caution(shape: SliceShape) -> str | None:
    """What the preview's ``Caution:`` line says of groups on ``shape`` (the ``caution`` output): a group over several
    VMs (:attr:`~tpu_serving.catalog.SliceShape.multi_host`, a LeaderWorkerSet's groups or a DisaggregatedSet's roles
    alike) runs what GKE and tpu-inference do not stand behind (:data:`MULTI_HOST_SOURCES`); None on one VM."""
    if not shape.multi_host:
        return None
    return (
        f"{MULTI_HOST_CAUTION}: each group spans the {shape.vms} VMs of a {shape.generation.name} {shape.topology} slice "
        f"({shape.machine_type.name}), Ray across them; {MULTI_HOST_SOURCES}"
    )


UNVERIFIED_ENGINE = "unverified engine release"
"""The head of the ``engine`` output of a serving whose image is ``images.unverified_vllm``."""


def unverified_engine(image: str, pinned: str) -> str:
    """What a serving on an engine image of another release (``images.unverified_vllm``) runs unverified: its pods'
    flags and environment are the pinned release's. The preview adds what the conformance tables know of the
    difference (tools/preview/stack.py)."""
    return (
        f"{UNVERIFIED_ENGINE}: {image} runs on the flags and environment built and checked for vLLM TPU {pinned} "
        "(images.unverified_vllm); nothing here checked them against its own release"
    )


def unpinned_revision(args_model: str, loader_downloads: bool, revision: str | None) -> str | None:
    """What a serving whose weights come from the Hub (``loader_downloads``) without ``model_revision`` runs: the
    repository's default branch at each group's start (SRE review 34, m1); None otherwise."""
    if not loader_downloads or revision is not None:
        return None
    return (
        f"{args_model} is downloaded from the Hub's default branch at each group start (model_revision unset), so "
        "groups started on different days can serve different files, with no rollout in any preview"
    )
