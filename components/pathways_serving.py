"""``PathwaysServing``: JetStream + MaxText on Pathways, as one LeaderWorkerSet.

The leader pod holds the Pathways resource manager (``pathways-rm``), the IFRT proxy
(``pathways-proxy``), the JetStream/MaxText server (``jax-tpu``) and its HTTP front end
(``jetstream-http``); each worker pod is a Pathways server on one TPU VM. Interleaved
serving spreads one model over one or more slices; disaggregated serving runs prefill and
decode on two slices (``ExperimentalMaxtextDisaggregatedServer_8``).

Everything that depends on the slices (group size, ``--instance_type``, node selectors,
``google.com/tpu`` per worker, subgroups) is derived from the catalog shape, never typed in.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

import pulumi
import pulumi_kubernetes as k8s

from . import lws
from .catalog import SliceShape
from .images import image_problem
from .nodepool import NODEPOOL_LABEL, TPU_RESOURCE, node_selector
from .options import child_options
from .pathways_workload import DEFAULT_PATHWAYS_VERSION
from .podspec import ProbeSettings, http_probes, requests, tcp_probe
from .settings import described
from .validation import Choice, check_arguments

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


def metrics_port_problem(port: int | None) -> str:
    """Why ``port`` cannot be the metrics port of the leader pod (its containers share one network), or ``""``."""
    taken = {
        RM_PORT: "pathways-rm",
        PROXY_PORT: "pathways-proxy",
        JAX_PORT: "jax-tpu gRPC",
        HTTP_PORT: "jetstream-http",
    }
    return f"taken by {taken[port]} on the leader pod" if port in taken else ""


DISAGGREGATED_SERVERS: Mapping[str, str] = {
    "v6e-8": "ExperimentalMaxtextDisaggregatedServer_8",
    "v5e-16": "ExperimentalMaxtextDisaggregatedServer_16",
}
"""Slice (``<generation>-<chips>``) -> MaxText's inference server for disaggregated prefill/decode on two such
slices. Each server hard-codes its slices: AI-Hypercomputer/maxtext ``MaxText/maxengine_config.py``
``get_server_config`` at tpu-recipes-v0.1.2 (14b5876, lines 48-70): ``prefill_slices=("v6e-8",)`` and
``generate_slices=("v6e-8",)`` for ``_8``, ``("v5e-16",)`` for ``_16``; MaxText of the jetstream-pathways:v0.2.0
image is bounded to those tags by the seeds (tools/conformance/extract_maxtext.py)."""


def disaggregated_server(shape: SliceShape) -> str | None:
    """MaxText's disaggregated server for two slices of ``shape``, or None when MaxText has none for it."""
    return DISAGGREGATED_SERVERS.get(f"{shape.generation.name}-{shape.chips}")


def disaggregation_problem(shape: SliceShape) -> str:
    """Why slices of ``shape`` cannot serve disaggregated, or ``""``."""
    if disaggregated_server(shape) is not None:
        return ""
    return (
        f"MaxText's disaggregated servers run only on {' or '.join(DISAGGREGATED_SERVERS)} slices, "
        f"not {shape.generation.name}-{shape.chips} ({shape.machine_type.name}, topology {shape.topology})"
    )


class Mode(Choice):
    """How the model is served over the group's slices."""

    INTERLEAVED = "interleaved"
    DISAGGREGATED = "disaggregated"


class WeightDtype(Choice):
    """MaxText ``weight_dtype``."""

    BFLOAT16 = "bfloat16"
    FLOAT32 = "float32"


class Quantization(Choice):
    """MaxText ``quantization``."""

    INT8 = "int8"
    INT4 = "int4"
    FP8 = "fp8"
    INTMP = "intmp"


PATHWAYS_REGISTRY = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
PATHWAYS_TAG = DEFAULT_PATHWAYS_VERSION
"""The seeds' Pathways images are ``:latest``; the defaults pin the Pathways release of
:data:`components.pathways_workload.DEFAULT_PATHWAYS_VERSION` instead (the tag the
PathwaysJob controller itself derives from ``pathwaysVersion``), so a redeploy never
changes the server under a fixed JetStream client."""


@dataclass(frozen=True)
class PathwaysImages:
    """Container images of the Pathways and JetStream containers."""

    proxy: str = described(
        "IFRT proxy server image.", default=f"{PATHWAYS_REGISTRY}/proxy_server:{PATHWAYS_TAG}", check=image_problem
    )
    server: str = described(
        "Pathways server image (resource manager and workers).",
        default=f"{PATHWAYS_REGISTRY}/server:{PATHWAYS_TAG}",
        check=image_problem,
    )
    jetstream: str = described(
        "JetStream + MaxText server image.",
        default="us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pathways:v0.2.0",
        check=image_problem,
    )
    http: str = described(
        "JetStream HTTP front end image.",
        default="us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-http:v0.2.3",
        check=image_problem,
    )


@dataclass(frozen=True)
class MaxTextSettings:
    """The MaxText/JetStream server settings, passed to ``jax-tpu`` as ``key=value`` arguments.

    Unset optional settings are left out, so MaxText's config file decides them.
    """

    config_file: str = described("MaxText config file, the first argument (e.g. `MaxText/configs/base.yml`).")
    model_name: str = described("MaxText model name, e.g. `llama3.1-405b`.")
    max_prefill_predict_length: int = described("Longest prompt (prefill) in tokens.")
    max_target_length: int = described("Longest prompt plus generated text in tokens.")
    per_device_batch_size: int = described("Decode batch size per TPU chip.")
    ici_fsdp_parallelism: int = described("FSDP parallelism within a slice.", default=1)
    ici_autoregressive_parallelism: int = described("Autoregressive (decode) parallelism within a slice.", default=1)
    ici_tensor_parallelism: int = described(
        "Tensor parallelism within a slice; -1 uses every remaining chip.", default=-1
    )
    scan_layers: bool = described("Scan over layers (false for serving).", default=False)
    weight_dtype: WeightDtype = described("Weight dtype.", default=WeightDtype.BFLOAT16)
    quantization: Quantization | None = described("Weight quantization; unset for none.", default=None)
    quantize_kvcache: bool | None = described("Quantize the KV cache.", default=None)
    checkpoint_is_quantized: bool | None = described("The checkpoint is already quantized.", default=None)
    enable_model_warmup: bool | None = described("Compile and warm up before serving.", default=None)
    enable_single_controller: bool | None = described("Single-controller JAX (Pathways).", default=None)
    async_checkpointing: bool | None = described("Asynchronous checkpointing (false for serving).", default=None)
    steps: int | None = described("MaxText `steps`.", default=None)
    tokenizer_path: str | None = described(
        "Tokenizer path inside the image, e.g. `assets/tokenizer.llama2`.", default=None
    )
    compute_axis_order: str | None = described("Compute axis order, e.g. `0,2,1,3`.", default=None)
    ar_cache_axis_order: str | None = described("Autoregressive cache axis order, e.g. `0,2,1,3`.", default=None)
    stack_prefill_result_cache: bool | None = described("Stack prefill results in the cache.", default=None)
    inference_benchmark_test: bool | None = described("MaxText `inference_benchmark_test`.", default=None)
    prometheus_port: int | None = described(
        "Port of JetStream's Prometheus metrics (MaxText `prometheus_port`), scraped by the stack; unset: no metrics.",
        default=METRICS_PORT,
        ge=1024,
        le=65535,
        check=metrics_port_problem,
    )
    extra_args: Sequence[str] = described("Further `key=value` MaxText arguments, appended as given.", default=())


@dataclass(frozen=True)
class PathwaysRequests:
    """CPU and memory requests of the Pathways and JetStream containers.

    The leader shares a TPU VM with one worker, so leader plus worker must fit the smallest
    TPU VM (ct5lp-hightpu-4t: 112 vCPUs, 192 GB).
    """

    proxy_cpu: str = described("`pathways-proxy` CPU request.", default="1")
    proxy_memory: str = described("`pathways-proxy` memory request.", default="4Gi")
    resource_manager_cpu: str = described("`pathways-rm` CPU request.", default="2")
    resource_manager_memory: str = described("`pathways-rm` memory request.", default="8Gi")
    jax_cpu: str = described("`jax-tpu` CPU request.", default="8")
    jax_memory: str = described("`jax-tpu` memory request.", default="32Gi")
    http_cpu: str = described("`jetstream-http` CPU request.", default="1")
    http_memory: str = described("`jetstream-http` memory request.", default="2Gi")
    worker_cpu: str = described("Pathways worker CPU request (per TPU VM).", default="16")
    worker_memory: str = described("Pathways worker memory request (per TPU VM).", default="64Gi")


@dataclass(frozen=True)
class PathwaysServingArgs:
    """Arguments of :class:`PathwaysServing`."""

    namespace: str
    """Namespace of the workload."""
    service_account: str
    """Kubernetes service account of every pod (workload identity: checkpoint and scratch access)."""
    shape: SliceShape
    """Shape of each serving slice."""
    num_slices: int
    """Number of slices (node pools) the group spans; ``--instance_count``."""
    maxtext: MaxTextSettings
    """MaxText/JetStream settings."""
    checkpoint_uri: str
    """``gs://`` URI of the checkpoint (MaxText ``load_parameters_path``)."""
    scratch_uri: str
    """``gs://`` location for Pathways scratch data (``--gcs_scratch_location``)."""
    mode: Mode = Mode.INTERLEAVED
    """``interleaved`` or ``disaggregated`` (prefill and decode on one slice each)."""
    name: str = "jetstream-pathways"
    """LeaderWorkerSet name; its leader pod is ``<name>-0``."""
    service_name: str = "jetstream-svc"
    """Name of the ClusterIP Service in front of ``jetstream-http``."""
    replicas: int = 1
    """Number of leader-worker groups (each needs its own slices)."""
    autoscaled: bool = False
    """An HPA owns the group count (``replicas`` is left out of the LeaderWorkerSet, so a ``pulumi up``
    never resets what the HPA chose)."""
    images: PathwaysImages = field(default_factory=PathwaysImages)
    """Container images."""
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    """Health probe timing."""
    requests: PathwaysRequests = field(default_factory=PathwaysRequests)
    """CPU and memory requests."""
    priority_class_name: str | None = None
    """PriorityClass of the group's pods."""
    resource_manager_flags: Sequence[str] = ()
    """Extra flags of the Pathways resource manager."""
    jax_env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment of ``jax-tpu``."""
    jax_capabilities: Sequence[str] = ()
    """Linux capabilities added to ``jax-tpu`` (the disaggregated server uses some)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.validation`)."""
        clash = lws.service_name_problem(self.name, self.service_name)
        found = [f"service_name = {self.service_name!r}: {clash}"] if clash else []
        if self.mode == "disaggregated" and (why := disaggregation_problem(self.shape)):
            found.append(f"mode = 'disaggregated': {why}")
        return found

    @property
    def group_size(self) -> int:
        """Pods per group: one Pathways worker per VM of every slice, plus the leader."""
        return self.num_slices * self.shape.vms + 1


def maxtext_args(settings: MaxTextSettings, checkpoint_uri: str, mode: Mode, shape: SliceShape) -> list[str]:
    """The ``jax-tpu`` arguments: the config file, then ``key=value`` settings, then the disaggregated server
    for ``shape`` (validated first: :func:`disaggregation_problem`)."""

    def text(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    args = [settings.config_file, f"model_name={settings.model_name}", f"load_parameters_path={checkpoint_uri}"]
    for f in fields(settings):
        if f.name in {"config_file", "model_name", "extra_args"}:
            continue
        value = getattr(settings, f.name)
        if value is not None:
            args.append(f"{f.name}={text(value)}")
    server = disaggregated_server(shape)
    if mode == "disaggregated" and server is not None:
        args.append(f"inference_server={server}")
    return args + list(settings.extra_args)


def _tpu_tolerations() -> list[k8s.core.v1.TolerationArgs]:
    return [k8s.core.v1.TolerationArgs(key=TPU_RESOURCE, operator="Exists", effect="NoSchedule")]


def leader_containers(args: PathwaysServingArgs) -> list[k8s.core.v1.ContainerArgs]:
    """``pathways-proxy``, ``pathways-rm``, ``jax-tpu`` and ``jetstream-http``."""
    img, r = args.images, args.requests
    startup, readiness, liveness = http_probes(HEALTH_PATH, HTTP_PORT, args.probes)
    scratch = f"--gcs_scratch_location={args.scratch_uri}"
    jax_security = (
        k8s.core.v1.SecurityContextArgs(capabilities=k8s.core.v1.CapabilitiesArgs(add=list(args.jax_capabilities)))
        if args.jax_capabilities
        else None
    )
    return [
        k8s.core.v1.ContainerArgs(
            name="pathways-proxy",
            image=img.proxy,
            image_pull_policy="Always",
            args=[f"--resource_manager_address={lws.LEADER_ADDRESS}:{RM_PORT}", f"--server_port={PROXY_PORT}", scratch],
            ports=[k8s.core.v1.ContainerPortArgs(container_port=PROXY_PORT)],
            resources=requests(r.proxy_cpu, r.proxy_memory),
            readiness_probe=tcp_probe(PROXY_PORT),
        ),
        k8s.core.v1.ContainerArgs(
            name="pathways-rm",
            image=img.server,
            image_pull_policy="Always",
            env=[
                k8s.core.v1.EnvVarArgs(name="HOST_ADDRESS", value=lws.LEADER_ADDRESS),
                k8s.core.v1.EnvVarArgs(name="TPU_SKIP_MDS_QUERY", value="true"),
            ],
            args=[
                f"--server_port={RM_PORT}",
                scratch,
                "--node_type=resource_manager",
                f"--instance_count={args.num_slices}",
                f"--instance_type={args.shape.instance_type}",
                *args.resource_manager_flags,
            ],
            ports=[k8s.core.v1.ContainerPortArgs(container_port=RM_PORT)],
            resources=requests(r.resource_manager_cpu, r.resource_manager_memory),
            readiness_probe=tcp_probe(RM_PORT),
        ),
        k8s.core.v1.ContainerArgs(
            name="jax-tpu",
            image=img.jetstream,
            image_pull_policy="Always",
            args=maxtext_args(args.maxtext, args.checkpoint_uri, args.mode, args.shape),
            env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in args.jax_env.items()] or None,
            security_context=jax_security,
            ports=[k8s.core.v1.ContainerPortArgs(container_port=JAX_PORT)]
            + (
                [k8s.core.v1.ContainerPortArgs(name="metrics", container_port=args.maxtext.prometheus_port)]
                if args.maxtext.prometheus_port
                else []
            ),
            resources=requests(r.jax_cpu, r.jax_memory),
            startup_probe=startup,
            readiness_probe=readiness,
            liveness_probe=liveness,
        ),
        k8s.core.v1.ContainerArgs(
            name="jetstream-http",
            image=img.http,
            image_pull_policy="Always",
            ports=[k8s.core.v1.ContainerPortArgs(container_port=HTTP_PORT)],
            resources=requests(r.http_cpu, r.http_memory),
            readiness_probe=tcp_probe(HTTP_PORT),
        ),
    ]


def worker_container(args: PathwaysServingArgs) -> k8s.core.v1.ContainerArgs:
    """The Pathways server on one TPU VM, holding all of its chips."""
    chips = str(args.shape.chips_per_vm)
    return k8s.core.v1.ContainerArgs(
        name="worker",
        image=args.images.server,
        image_pull_policy="Always",
        args=[
            f"--server_port={WORKER_PORT}",
            f"--resource_manager_address={lws.LEADER_ADDRESS}:{RM_PORT}",
            f"--gcs_scratch_location={args.scratch_uri}",
        ],
        ports=[k8s.core.v1.ContainerPortArgs(container_port=WORKER_PORT)],
        resources=requests(args.requests.worker_cpu, args.requests.worker_memory, {TPU_RESOURCE: chips}),
        readiness_probe=tcp_probe(WORKER_PORT),
    )


def selector_labels(args: PathwaysServingArgs) -> dict[str, str]:
    """Labels of the leader pods, selected by the Service."""
    return {"app": args.name}


def leader_worker_set_spec(args: PathwaysServingArgs) -> dict[str, object]:
    """``spec`` of the LeaderWorkerSet (LWS v0.4.0 and later)."""
    selector = node_selector(args.shape)
    tolerations = _tpu_tolerations()

    def pod(containers: list[k8s.core.v1.ContainerArgs]) -> k8s.core.v1.PodSpecArgs:
        return k8s.core.v1.PodSpecArgs(
            containers=containers,
            service_account_name=args.service_account,
            priority_class_name=args.priority_class_name,
            node_selector=selector,
            tolerations=tolerations,
        )

    template: dict[str, object] = {
        "size": args.group_size,
        "restartPolicy": "RecreateGroupOnPodRestart",
        "leaderTemplate": k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, **selector_labels(args)}),
            spec=pod(leader_containers(args)),
        ),
        "workerTemplate": k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(args.labels)) if args.labels else None,
            spec=pod([worker_container(args)]),
        ),
    }
    if args.num_slices > 1:
        # One subgroup per slice; the leader (size - 1 divisible) is the extra pod.
        template["subGroupPolicy"] = {"subGroupSize": args.shape.vms}
    replicas: dict[str, object] = {} if args.autoscaled else {"replicas": args.replicas}
    return {**replicas, "leaderWorkerTemplate": template}


def topology_annotation(args: PathwaysServingArgs) -> dict[str, str]:
    """One node pool per group, or per subgroup when the group spans several slices."""
    key = lws.SUBGROUP_EXCLUSIVE_TOPOLOGY if args.num_slices > 1 else lws.EXCLUSIVE_TOPOLOGY
    return {key: NODEPOOL_LABEL}


def service_args(args: PathwaysServingArgs) -> k8s.core.v1.ServiceInitArgs:
    """ClusterIP Service on the HTTP port of the leader pods."""
    return k8s.core.v1.ServiceInitArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(name=args.service_name, namespace=args.namespace, labels=dict(args.labels)),
        spec=k8s.core.v1.ServiceSpecArgs(
            type="ClusterIP",
            selector=selector_labels(args),
            ports=[
                k8s.core.v1.ServicePortArgs(
                    protocol="TCP", name="jetstream-http", port=HTTP_PORT, target_port=HTTP_PORT
                )
            ],
        ),
    )


class PathwaysServing(pulumi.ComponentResource):
    """JetStream + Pathways multi-host serving: a LeaderWorkerSet and a ClusterIP Service.

    Pass the cluster's Kubernetes provider in ``opts.providers``. The LeaderWorkerSet
    waits for its ``opts.depends_on`` (the LWS install and the slice node pools).
    """

    service: k8s.core.v1.Service
    """The ClusterIP Service on port 8000."""
    leader_pod: str
    """Name of the first group's leader pod."""
    port_forward: str
    """``kubectl port-forward`` command to reach the server from a workstation."""
    generate_example: str
    """A ``curl`` request to ``/generate`` through that port-forward."""

    def __init__(self, name: str, args: PathwaysServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("PathwaysServing", args, PathwaysServingArgs)
        super().__init__("tpu-serving:index:PathwaysServing", name, None, opts)
        self.leader_worker_set = lws.leader_worker_set(
            f"{name}-lws",
            k8s.meta.v1.ObjectMetaArgs(
                name=args.name,
                namespace=args.namespace,
                labels=dict(args.labels),
                annotations=topology_annotation(args),
            ),
            leader_worker_set_spec(args),
            child_options(self, opts),
        )
        self.service = k8s.core.v1.Service(
            f"{name}-svc",
            service_args(args),
            opts=child_options(self, opts),
        )
        self.leader_pod = f"{args.name}-0"
        self.port_forward = f"kubectl -n {args.namespace} port-forward svc/{args.service_name} {HTTP_PORT}:{HTTP_PORT}"
        self.generate_example = (
            f"curl -s -X POST localhost:{HTTP_PORT}/generate -H 'Content-type: application/json' "
            '-d \'{"prompt": "What are the top 5 programming languages", "max_tokens": 200}\''
        )
        self.register_outputs(
            {"leaderPod": self.leader_pod, "portForward": self.port_forward, "service": args.service_name}
        )
