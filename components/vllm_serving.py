"""``VllmServing``: vLLM TPU (vllm-project/tpu-inference) serving on a LeaderWorkerSet.

One group per slice: every TPU VM of the slice runs one pod holding all of its chips. On a
multi-host slice the leader starts the Ray head and then the OpenAI-compatible server; the
workers join the leader's Ray cluster, and vLLM spreads the model over every chip of the
slice (tensor parallelism times pipeline parallelism = the slice's chips). A single-host
slice runs the server alone, without Ray.

Upstream references: kubernetes-sigs/lws@v0.10.0 docs/examples/vllm/TPU/lws.yaml (Ray over a
group, v5e 4x4, TP 16) and vllm-project/tpu-inference@v0.27.0
examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml (Ray health-check environment,
the Run:ai streamer).

Weights come from a GCS bucket, never from Hugging Face unless the stack asks for it: through a
read-only Cloud Storage FUSE CSI volume with the parallel-download file cache, or read by the
Run:ai model streamer straight from ``gs://``. The XLA compilation cache persists in a bucket.
"""

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from . import lws
from .buckets import is_object_path
from .catalog import SliceShape
from .images import pinned_image_problem
from .nodepool import TPU_RESOURCE, node_selector
from .options import child_options
from .podspec import ProbeSettings, http_probes, requests
from .settings import described
from .validation import Choice, check_arguments

HTTP_PORT = 8000
"""The OpenAI-compatible server's port (``vllm serve --port``; 8000 is vLLM's default)."""
RAY_GCS_PORT = 6379
"""The Ray head's GCS port: ``multi-node-serving.sh leader`` runs ``ray start --head --port=6379``
and workers ``ray start --address=<leader>:6379`` (vllm-project/vllm examples/online_serving/
multi-node-serving.sh)."""
HEALTH_PATH = "/health"
"""vLLM's health endpoint: 200 once the engine is up (vllm/entrypoints/openai/api_server.py)."""
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


MULTI_NODE_SCRIPTS: Sequence[str] = (
    "/workspace/vllm/examples/ray_serving/multi-node-serving.sh",
    "/workspace/vllm/examples/online_serving/multi-node-serving.sh",
)
"""Ray bootstrap script of the vLLM TPU image (the image clones vLLM into /workspace/vllm:
vllm-project/tpu-inference@v0.27.0 docker/Dockerfile). vLLM moved it from ``online_serving``
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
    "RAY_CGRAPH_get_timeout": "30000",
    "RAY_CGRAPH_submit_timeout": "30000",
}
"""Environment of every pod of a multi-host group, after vllm-project/tpu-inference@v0.27.0
examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml, keeping only what the image's release
reads: the Ray multi-host backend and the vLLM (torchax) model implementation (tpu-inference 0.21.0
``tpu_inference/envs.py``: ``TPU_MULTIHOST_BACKEND`` in ["ray"], ``MODEL_IMPL_TYPE`` in auto/vllm/flax_nnx/
jetpack), Ray health checks that tolerate hosts busy loading weights or compiling (100 missed 10 s GCS
pings; RayConfig ``health_check_*`` and ``grpc_keepalive_timeout_ms``, named in Ray 2.60.0's
``_raylet.so``) and compiled-graph timeouts (``ray/dag/context.py`` reads ``RAY_CGRAPH_get_timeout``,
``RAY_CGRAPH_submit_timeout``). The example's ``TPU_BACKEND_TYPE`` (only forwarded, read by nothing in
tpu-inference 0.21.0), ``RAY_RESERVE_CPU_FOR_RAYLET``, ``RAY_num_heartbeats_timeout`` and
``RAY_raylet_heartbeat_timeout_milliseconds`` (named nowhere in Ray 2.60.0: the heartbeat configs gave way
to the health checks) are left out; ``make check`` (``engines``) checks every variable against the
release tables in tools/conformance/tables."""

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
weights never change under a running server) and the file cache with parallel downloads.
Sources: the metadata and file cache options of GKE's model-serving example in "Optimize the
Cloud Storage FUSE CSI driver for performance" (cloud-storage-fuse-csi-driver-perf), and the
parallel-download options of GKE's vLLM TPU tutorial (serve-vllm-tpu). Parallel downloads need
the file cache ("Parallel downloads require the file cache to be enabled") and GKE
1.29.6-gke.1254000 / 1.30.2-gke.1394000 or later (GoogleCloudPlatform/gcs-fuse-csi-driver
docs/releases.md); metadata prefetch needs 1.32.1-gke.1357001 or later (same page)."""

CACHE_MOUNT_OPTIONS: Sequence[str] = ("implicit-dirs",)
"""Mount options of the read-write compilation cache volume."""

LIBRARY_FLAGS: frozenset[str] = frozenset(
    {
        "--model",
        "--port",
        "--host",
        "--served-model-name",
        "--tensor-parallel-size",
        "-tp",
        "--pipeline-parallel-size",
        "-pp",
        "--max-model-len",
        "--dtype",
        "--quantization",
        "-q",
        "--gpu-memory-utilization",
        "--load-format",
        "--distributed-executor-backend",
        "--download-dir",
    }
)
"""Engine flags the component sets from its own settings; ``extra_args`` may not repeat them."""

_FLAG = re.compile(r"^--[a-z0-9][a-z0-9-]*(=.*)?$")


DEFAULT_IMAGE = "docker.io/vllm/vllm-tpu:v0.21.0"
"""The newest vLLM TPU release tag an upstream document pins (ray-project/ray
doc/source/serve/llm/user-guides/tpu.md: ``FROM vllm/vllm-tpu:v0.21.0``); GKE's tutorial and
the tpu-inference examples use the mutable ``latest``/``nightly`` tags."""


class WeightsLoader(Choice):
    """How the engine reads the weights."""

    GCSFUSE = "gcsfuse"
    """A read-only Cloud Storage FUSE volume with the parallel-download file cache."""
    RUNAI_STREAMER = "runai-streamer"
    """The Run:ai model streamer reads ``gs://`` directly (``--load-format=runai_streamer``)."""
    HUGGING_FACE = "hugging-face"
    """Downloaded from the Hugging Face Hub at start; ``model`` is a repository id."""


class Dtype(Choice):
    """``--dtype`` of the weights and activations (``auto`` takes the checkpoint's)."""

    AUTO = "auto"
    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"


class VllmQuantization(Choice):
    """``--quantization`` methods vLLM TPU serves (vllm-project/tpu-inference@v0.27.0
    tpu_inference/platforms/tpu_platform.py ``supported_quantization``)."""

    COMPRESSED_TENSORS = "compressed-tensors"
    """A pre-quantized checkpoint (INT8 W8A8 on v5e/v6e: tpu-inference docs/includes/quantization.md)."""
    AUTO_AWQ = "auto_awq"
    """A pre-quantized AWQ checkpoint (INT4 W4A16)."""
    FP8 = "fp8"
    """FP8 weights, quantized at load (native FP8 on TPU7x only, per the same table)."""


def extra_args_problem(args: Sequence[str]) -> str:
    """Why ``args`` are not engine flags ``--flag`` / ``--flag=value`` the library leaves to the user, or ``""``."""
    found = []
    bad = [a for a in args if not isinstance(a, str) or not _FLAG.match(a)]
    if bad:
        found.append(f"{', '.join(map(repr, bad))}: each must be `--flag` or `--flag=value` (lower-case flag name)")
    owned = sorted({a.split("=", 1)[0] for a in args if isinstance(a, str)} & LIBRARY_FLAGS)
    if owned:
        found.append(f"{', '.join(owned)}: set by the component from its own settings; use those instead")
    return "; ".join(found)


@dataclass(frozen=True)
class VllmEngineSettings:
    """Engine settings of ``vllm serve``."""

    max_model_len: int = described(
        "Longest prompt plus output, in tokens (`--max-model-len`).", default=8192, ge=128, le=1048576
    )
    dtype: Dtype = described(
        "Weights and activations dtype (`--dtype`); `auto` takes the checkpoint's.", default=Dtype.AUTO
    )
    quantization: VllmQuantization | None = described(
        "Weight quantization (`--quantization`); unset serves the checkpoint as it is.", default=None
    )
    tensor_parallel_size: int | None = described(
        "Tensor parallelism (`--tensor-parallel-size`); unset uses every chip of the slice over the pipeline stages.",
        default=None,
        ge=1,
        le=256,
    )
    pipeline_parallel_size: int = described(
        "Pipeline stages (`--pipeline-parallel-size`); tensor x pipeline must equal the slice's chips.",
        default=1,
        ge=1,
        le=64,
    )
    memory_utilization: float = described(
        "Share of each chip's HBM the engine may use for weights, activations and KV cache (`--gpu-memory-utilization`).",
        default=0.9,
        ge=0.1,
        le=0.98,
    )
    extra_args: Sequence[str] = described(
        "Further engine arguments, each `--flag` or `--flag=value`, appended as given.",
        default=(),
        check=extra_args_problem,
    )

    def parallelism(self, chips: int) -> tuple[int, int]:
        """``(tensor, pipeline)`` over ``chips``: tensor derived when unset."""
        pp = self.pipeline_parallel_size
        return (self.tensor_parallel_size or max(chips // pp, 1)), pp


@dataclass(frozen=True)
class VllmImages:
    """Container image of the engine."""

    vllm: str = described(
        "vLLM TPU image (leader and workers), pinned to a release tag or digest (`latest` is refused).",
        default=DEFAULT_IMAGE,
        check=pinned_image_problem,
    )


@dataclass(frozen=True)
class VllmRequests:
    """CPU, memory and shared memory of the pods; each pod has a TPU VM to itself."""

    leader_cpu: str = described("Leader CPU request.", default="24")
    leader_memory: str = described("Leader memory request.", default="96Gi")
    worker_cpu: str = described("Worker CPU request (per TPU VM).", default="24")
    worker_memory: str = described("Worker memory request (per TPU VM).", default="96Gi")
    shm_size: str = described("Size of the memory-backed `/dev/shm` of every pod.", default="30Gi")


@dataclass(frozen=True)
class SecretKey:
    """A key of a Kubernetes Secret in the serving namespace."""

    name: str = described("Secret name.", pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    key: str = described("Key inside the Secret.", default="token", pattern=r"^[-._a-zA-Z0-9]+$")


@dataclass(frozen=True)
class VllmServingArgs:
    """Arguments of :class:`VllmServing`."""

    namespace: str
    """Namespace of the workload."""
    service_account: str
    """Kubernetes service account of every pod (workload identity: weights and cache buckets)."""
    shape: SliceShape
    """Shape of each serving slice; one group per slice."""
    model: str
    """The weights: a path inside ``weights_bucket`` (a Hugging Face snapshot: config, tokenizer,
    safetensors), or a Hugging Face repository id when ``loader`` is ``hugging-face``."""
    served_model_name: str
    """The model name clients send (``--served-model-name``)."""
    loader: WeightsLoader = WeightsLoader.GCSFUSE
    """How the weights are read."""
    weights_bucket: str | None = None
    """Bucket holding ``model`` (``gcsfuse`` and ``runai-streamer``)."""
    cache_bucket: str | None = None
    """Bucket of the persistent XLA compilation cache; ``None`` compiles afresh on every start."""
    cache_path: str = "vllm-compilation-cache"
    """Folder of the compilation cache inside ``cache_bucket``."""
    hf_token_secret: SecretKey | None = None
    """Secret holding a Hugging Face token (``hugging-face`` loader only)."""
    replicas: int = 1
    """Groups, one slice each."""
    autoscaled: bool = False
    """An HPA owns the group count (``replicas`` is left out of the LeaderWorkerSet, so a ``pulumi up``
    never resets what the HPA chose)."""
    name: str = "vllm"
    """LeaderWorkerSet name; its first leader pod is ``<name>-0``."""
    service_name: str = "vllm-api"
    """Name of the ClusterIP Service on the leaders' serving port."""
    engine: VllmEngineSettings = field(default_factory=VllmEngineSettings)
    """Engine settings."""
    images: VllmImages = field(default_factory=VllmImages)
    """Container image."""
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    """Health probe timing of the server."""
    requests: VllmRequests = field(default_factory=VllmRequests)
    """CPU, memory and shared memory."""
    priority_class_name: str | None = None
    """PriorityClass of the group's pods."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.validation`)."""
        found = []
        if self.loader != WeightsLoader.HUGGING_FACE and not self.weights_bucket:
            found.append(f"weights_bucket: required with loader {self.loader.value!r}")
        if self.loader != WeightsLoader.HUGGING_FACE and (not is_object_path(self.model)):
            found.append(f"model = {self.model!r}: must be a path inside the weights bucket, e.g. llama-3.3-70b")
        if self.hf_token_secret is not None and self.loader != WeightsLoader.HUGGING_FACE:
            found.append("hf_token_secret: only the hugging-face loader reads a token")
        found += parallelism_problems("engine", self.engine, self.shape)
        if clash := lws.service_name_problem(self.name, self.service_name):
            found.append(f"service_name = {self.service_name!r}: {clash}")
        return found

    @property
    def group_size(self) -> int:
        """Pods per group: one per TPU VM of the slice (the leader holds chips too)."""
        return self.shape.vms

    @property
    def multi_host(self) -> bool:
        return self.shape.vms > 1


def parallelism_problems(at: str, engine: VllmEngineSettings, shape: SliceShape) -> list[str]:
    """Tensor x pipeline parallelism must use exactly the chips of one slice."""
    tp, pp = engine.parallelism(shape.chips)
    if tp * pp == shape.chips:
        return []
    given = "tensorParallelSize" if engine.tensor_parallel_size else "pipelineParallelSize"
    valid = [f"{t} x {shape.chips // t}" for t in range(1, shape.chips + 1) if shape.chips % t == 0]
    return [
        f"{at}.{given}: tensor {tp} x pipeline {pp} = {tp * pp} chips, but a {shape.topology} slice "
        f"({shape.machine_type.name}) has {shape.chips}; valid tensor x pipeline: {', '.join(valid)}"
    ]


# --------------------------------------------------------------------------- builders


def model_location(args: VllmServingArgs) -> str:
    """What ``vllm serve`` is given as the model: a mount path, a ``gs://`` URI or a repository id."""
    if args.loader == WeightsLoader.GCSFUSE:
        return WEIGHTS_MOUNT
    if args.loader == WeightsLoader.RUNAI_STREAMER:
        return f"gs://{args.weights_bucket}/{args.model}"
    return args.model


def engine_args(args: VllmServingArgs) -> list[str]:
    """The arguments of ``vllm serve``, after the model."""
    e = args.engine
    tp, pp = e.parallelism(args.shape.chips)
    out = [
        f"--port={HTTP_PORT}",
        f"--served-model-name={args.served_model_name}",
        f"--tensor-parallel-size={tp}",
        f"--max-model-len={e.max_model_len}",
        f"--dtype={e.dtype.value}",
        f"--gpu-memory-utilization={e.memory_utilization:g}",
    ]
    if pp > 1:
        out.append(f"--pipeline-parallel-size={pp}")
    if e.quantization is not None:
        out.append(f"--quantization={e.quantization.value}")
    if args.loader == WeightsLoader.RUNAI_STREAMER:
        out.append("--load-format=runai_streamer")
    if args.multi_host:
        out.append("--distributed-executor-backend=ray")
    return out + list(e.extra_args)


def _find_script() -> str:
    first, second = MULTI_NODE_SCRIPTS
    return f"S={first}; [ -f $S ] || S={second}; "


def ray_init_timeout(args: VllmServingArgs) -> int:
    """Seconds the Ray bootstrap waits for the group: the leader for every worker to join, a worker for the head.

    ``multi-node-serving.sh`` gives up after ``ray_init_timeout`` (300 s unless ``--ray_init_timeout=`` says
    otherwise, for ``leader`` and ``worker`` alike: vllm-project/vllm examples/online_serving/
    multi-node-serving.sh), and the leader then exits before ``vllm serve`` starts: the group restarts, and a
    worker still pulling a multi-GB image makes it restart again. The group's pods may take the whole startup
    window (``probes.max_startup_seconds``) to come up, so the bootstrap waits as long."""
    return int(args.probes.max_startup_seconds)


def leader_script(args: VllmServingArgs) -> str:
    """The leader's shell: the Ray head of the group (multi-host), then the server in the foreground."""
    serve = shlex.join(["vllm", "serve", model_location(args), *engine_args(args)])
    if not args.multi_host:
        return f"exec {serve}"
    # $(LWS_GROUP_SIZE) is expanded by the kubelet (LWS sets it on every pod of the group).
    return (
        f"{_find_script()}bash $S leader --ray_cluster_size=$(LWS_GROUP_SIZE) "
        f"--ray_init_timeout={ray_init_timeout(args)} && exec {serve}"
    )


def worker_script(args: VllmServingArgs) -> str:
    """A worker joins the leader's Ray cluster and blocks (retrying for the group's startup window)."""
    return (
        f"{_find_script()}exec bash $S worker --ray_address=$(LWS_LEADER_ADDRESS) "
        f"--ray_init_timeout={ray_init_timeout(args)}"
    )


def environment(args: VllmServingArgs) -> list[k8s.core.v1.EnvVarArgs]:
    """Environment of every pod: Ray health checks, the compilation cache, Hub access."""
    out = [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in (MULTI_HOST_ENV if args.multi_host else {}).items()]
    if args.cache_bucket:
        out += cache_environment()
    if args.loader != WeightsLoader.HUGGING_FACE:
        # Nothing comes from the Hub at runtime: huggingface_hub refuses every download.
        out.append(k8s.core.v1.EnvVarArgs(name="HF_HUB_OFFLINE", value="1"))
    if args.hf_token_secret is not None:
        out.append(
            k8s.core.v1.EnvVarArgs(
                name="HF_TOKEN",
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    secret_key_ref=k8s.core.v1.SecretKeySelectorArgs(
                        name=args.hf_token_secret.name, key=args.hf_token_secret.key
                    )
                ),
            )
        )
    return out


def cache_environment() -> list[k8s.core.v1.EnvVarArgs]:
    """The persistent XLA compilation cache: one folder per group and host of the cache volume.

    tpu-inference points JAX's persistent cache at ``VLLM_XLA_CACHE_PATH``
    (vllm-project/tpu-inference@v0.27.0 tpu_inference/runner/compilation_manager.py:
    ``jax.config.update("jax_compilation_cache_dir", VLLM_XLA_CACHE_PATH)``). Concurrent writers
    to one cache folder fail ("concurrent writes to the VLLM_XLA_CACHE_PATH will cause the error:
    RuntimeError: filesystem error: cannot create directories", GKE serve-vllm-tpu), and whether
    the hosts of a Ray group form one JAX process group whose rank 0 alone writes (JAX
    docs/persistent_compilation_cache.md) is not documented for tpu-inference. So each pod
    writes only its own folder, ``<group index>/<worker index>``: the same host of the same group
    finds its programs again after a restart, and no two pods ever write the same path.
    """
    group = k8s.core.v1.EnvVarArgs(
        name="LWS_GROUP_INDEX",
        value_from=k8s.core.v1.EnvVarSourceArgs(
            field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path=f"metadata.labels['{lws.GROUP_INDEX_LABEL}']")
        ),
    )
    # $(VAR) refers to variables defined before it in the list (LWS_WORKER_INDEX is injected by
    # the LWS pod webhook into every container).
    path = f"{CACHE_MOUNT}/$(LWS_GROUP_INDEX)/$(LWS_WORKER_INDEX)"
    return [group, k8s.core.v1.EnvVarArgs(name="VLLM_XLA_CACHE_PATH", value=path)]


def volumes(args: VllmServingArgs) -> tuple[list[k8s.core.v1.VolumeArgs], list[k8s.core.v1.VolumeMountArgs]]:
    """``/dev/shm``, the weights (``gcsfuse``) and the compilation cache, with their mounts."""
    vols = [
        k8s.core.v1.VolumeArgs(
            name=DSHM_VOLUME,
            empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs(medium="Memory", size_limit=args.requests.shm_size),
        )
    ]
    mounts = [k8s.core.v1.VolumeMountArgs(name=DSHM_VOLUME, mount_path="/dev/shm")]
    if args.loader == WeightsLoader.GCSFUSE:
        options = (*WEIGHTS_MOUNT_OPTIONS, f"only-dir={args.model}")
        vols.append(_gcsfuse_volume(WEIGHTS_VOLUME, str(args.weights_bucket), options, read_only=True))
        mounts.append(k8s.core.v1.VolumeMountArgs(name=WEIGHTS_VOLUME, mount_path=WEIGHTS_MOUNT, read_only=True))
    if args.cache_bucket:
        options = (*CACHE_MOUNT_OPTIONS, f"only-dir={args.cache_path}")
        vols.append(_gcsfuse_volume(CACHE_VOLUME, args.cache_bucket, options, read_only=False))
        mounts.append(k8s.core.v1.VolumeMountArgs(name=CACHE_VOLUME, mount_path=CACHE_MOUNT))
    return vols, mounts


def _gcsfuse_volume(name: str, bucket: str, options: Sequence[str], *, read_only: bool) -> k8s.core.v1.VolumeArgs:
    attributes = {"bucketName": bucket, "mountOptions": ",".join(options)}
    if read_only:
        # Lists the bucket's objects at mount time, so the first reads need no metadata round trips.
        attributes["gcsfuseMetadataPrefetchOnMount"] = "true"
    return k8s.core.v1.VolumeArgs(
        name=name,
        csi=k8s.core.v1.CSIVolumeSourceArgs(driver=GCSFUSE_DRIVER, read_only=read_only, volume_attributes=attributes),
    )


def uses_gcsfuse(args: VllmServingArgs) -> bool:
    return args.loader == WeightsLoader.GCSFUSE or bool(args.cache_bucket)


def leader_container(args: VllmServingArgs, mounts: list[k8s.core.v1.VolumeMountArgs]) -> k8s.core.v1.ContainerArgs:
    """The server (and, multi-host, the Ray head): probes on ``/health``, TPU chips of its VM."""
    p, r = args.probes, args.requests
    startup, readiness, liveness = http_probes(HEALTH_PATH, HTTP_PORT, p)
    return k8s.core.v1.ContainerArgs(
        name="vllm-leader",
        image=args.images.vllm,
        command=["/bin/sh", "-c"],
        args=[leader_script(args)],
        env=environment(args),
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=HTTP_PORT)]
        + ([k8s.core.v1.ContainerPortArgs(name="ray-gcs", container_port=RAY_GCS_PORT)] if args.multi_host else []),
        resources=requests(r.leader_cpu, r.leader_memory, {TPU_RESOURCE: str(args.shape.chips_per_vm)}),
        startup_probe=startup,
        readiness_probe=readiness,
        liveness_probe=liveness,
        volume_mounts=mounts,
    )


def worker_container(args: VllmServingArgs, mounts: list[k8s.core.v1.VolumeMountArgs]) -> k8s.core.v1.ContainerArgs:
    """A Ray worker on one TPU VM, holding all of its chips."""
    r = args.requests
    return k8s.core.v1.ContainerArgs(
        name="vllm-worker",
        image=args.images.vllm,
        command=["/bin/sh", "-c"],
        args=[worker_script(args)],
        env=environment(args),
        resources=requests(r.worker_cpu, r.worker_memory, {TPU_RESOURCE: str(args.shape.chips_per_vm)}),
        readiness_probe=k8s.core.v1.ProbeArgs(
            # Ready once the group's Ray head answers: `ray health-check` exits 0 when the GCS at
            # --address is healthy (Ray CLI, ray/scripts/scripts.py `health_check`).
            exec_=k8s.core.v1.ExecActionArgs(
                command=["/bin/sh", "-c", f"ray health-check --address=${{LWS_LEADER_ADDRESS}}:{RAY_GCS_PORT}"]
            ),
            period_seconds=args.probes.readiness_period_seconds,
            failure_threshold=args.probes.readiness_failure_threshold,
        ),
        volume_mounts=mounts,
    )


def leader_labels(args: VllmServingArgs) -> dict[str, str]:
    """Labels that pick the leaders out: the LWS name label and ``role: leader`` (as upstream)."""
    return {lws.NAME_LABEL: args.name, ROLE_LABEL: "leader"}


def leader_worker_set_spec(args: VllmServingArgs) -> dict[str, object]:
    """``spec`` of the LeaderWorkerSet (LWS v0.10.0)."""
    vols, mounts = volumes(args)
    annotations = dict(GCSFUSE_ANNOTATIONS) if uses_gcsfuse(args) else None

    def pod(container: k8s.core.v1.ContainerArgs, labels: Mapping[str, str]) -> k8s.core.v1.PodTemplateSpecArgs:
        return k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(labels) or None, annotations=annotations),
            spec=k8s.core.v1.PodSpecArgs(
                containers=[container],
                service_account_name=args.service_account,
                priority_class_name=args.priority_class_name,
                node_selector=node_selector(args.shape),
                tolerations=[k8s.core.v1.TolerationArgs(key=TPU_RESOURCE, operator="Exists", effect="NoSchedule")],
                volumes=vols,
            ),
        )

    leader = pod(leader_container(args, mounts), {**args.labels, ROLE_LABEL: "leader"})
    template: dict[str, object] = {"size": args.group_size, "restartPolicy": "RecreateGroupOnPodRestart"}
    if args.multi_host:
        template["leaderTemplate"] = leader
        template["workerTemplate"] = pod(worker_container(args, mounts), args.labels)
    else:
        template["workerTemplate"] = leader  # a group of one: the leader is built from the worker template
    replicas: dict[str, object] = {} if args.autoscaled else {"replicas": args.replicas}
    return {
        **replicas,
        # No surge: a surge group would need a slice the stack does not have and would stall the rollout.
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
        },
        "leaderWorkerTemplate": template,
    }


def service_args(args: VllmServingArgs) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service on the leaders' serving port."""
    return k8s.core.v1.ServiceInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.service_name, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=leader_labels(args),
            ports=[k8s.core.v1.ServicePortArgs(protocol="TCP", name="http", port=HTTP_PORT, target_port=HTTP_PORT)],
        ),
    )


class VllmServing(pulumi.ComponentResource):
    """vLLM TPU serving: a LeaderWorkerSet (one group per slice) and a ClusterIP Service on its leaders.

    Pass the cluster's Kubernetes provider in ``opts.providers``. The LeaderWorkerSet waits
    for its ``opts.depends_on`` (the LWS install and the slice node pools).
    """

    service: k8s.core.v1.Service
    """The ClusterIP Service on port 8000."""
    leader_pod: str
    """Name of the first group's leader pod."""
    port_forward: str
    """``kubectl port-forward`` command to reach the server from a workstation."""
    completion_example: str
    """A ``curl`` request to ``/v1/completions`` through that port-forward."""

    def __init__(self, name: str, args: VllmServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("VllmServing", args, VllmServingArgs)
        super().__init__("tpu-serving:index:VllmServing", name, None, opts)
        self.leader_worker_set = lws.leader_worker_set(
            f"{name}-lws",
            k8s.meta.v1.ObjectMetaArgs(
                name=args.name,
                namespace=args.namespace,
                labels=dict(args.labels),
                annotations=dict(lws.ONE_GROUP_PER_NODE_POOL),
            ),
            leader_worker_set_spec(args),
            child_options(self, opts),
        )
        self.service = k8s.core.v1.Service(f"{name}-svc", service_args(args), opts=child_options(self, opts))
        self.leader_pod = f"{args.name}-0"
        self.port_forward = f"kubectl -n {args.namespace} port-forward svc/{args.service_name} {HTTP_PORT}:{HTTP_PORT}"
        self.completion_example = (
            f"curl -s localhost:{HTTP_PORT}/v1/completions -H 'Content-Type: application/json' "
            f'-d \'{{"model": "{args.served_model_name}", "prompt": "What are the top 5 programming languages", '
            '"max_tokens": 200}\''
        )
        self.register_outputs(
            {"leaderPod": self.leader_pod, "portForward": self.port_forward, "service": args.service_name}
        )
