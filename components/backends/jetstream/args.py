"""The typed arguments of :class:`~tpu_serving.backends.jetstream.component.PathwaysServing`:
the MaxText settings, the Pathways images and requests, and their checks."""

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields

from ...catalog import SliceShape
from ...catalog.images import image_problem, release_image_problem
from ...catalog.models import (
    MAXTEXT_MODEL_PARAMETERS,
    ModelSize,
    WeightPrecision,
    hbm_fit_problem,
    maxtext_precision,
    size_example,
)
from ...catalog.versions import PINS
from ...common.naming import namespace_problem
from ...common.podspec import ProbeSettings, Shutdown
from ...common.settings import described, names_a_secret, quantity
from ...common.validation import Choice
from ...platform import lws
from .facts import (
    DISAGGREGATED_SERVERS,
    HTTP_PORT,
    JAX_PORT,
    METRICS_PORT,
    PATHWAYS_REGISTRY,
    PATHWAYS_TAG,
    PROXY_PORT,
    RM_PORT,
)


def metrics_port_problem(port: int | None) -> str:
    """Why ``port`` cannot be the metrics port of the leader pod (its containers share one network), or ``""``."""
    taken = {
        RM_PORT: "pathways-rm",
        PROXY_PORT: "pathways-proxy",
        JAX_PORT: "jax-tpu gRPC",
        HTTP_PORT: "jetstream-http",
    }
    return f"taken by {taken[port]} on the leader pod" if port in taken else ""


MAXTEXT_KEY = re.compile(r"^[a-z_][a-z0-9_]*=")
LIBRARY_KEYS = frozenset({"model_name", "load_parameters_path", "inference_server"})
"""MaxText keys the component writes besides its settings: the model, the checkpoint and the disaggregated
server (:func:`~tpu_serving.backends.jetstream.pods.maxtext_args`)."""


def maxtext_extra_args_problem(args: Sequence[str]) -> str:
    """Why ``args`` are not ``key=value`` MaxText arguments the library leaves to the user, or ``""``: a key of
    :class:`MaxTextSettings` or one the component writes (:data:`LIBRARY_KEYS`), a ``*_parallelism`` key (the mesh
    over the slice's chips, which the ``ici_*`` settings set) and a key that names a secret (MaxText's
    ``hf_access_token``...: :func:`names_a_secret`) are refused. A message shows keys, never values."""
    keys = [a.split("=", 1)[0] for a in args if isinstance(a, str) and MAXTEXT_KEY.match(a)]
    owned = {f.name for f in fields(MaxTextSettings)} | LIBRARY_KEYS
    rules = [
        (
            [f"[{i}]" for i, a in enumerate(args) if not isinstance(a, str) or not MAXTEXT_KEY.match(a)],
            "each must be `key=value` (a lower-case MaxText config key)",
        ),
        ([k for k in keys if k in owned], "set by the component from the maxtext settings; set those instead"),
        (
            [k for k in keys if k not in owned and k.endswith("_parallelism")],
            "would change the mesh over the slice's chips, which the ici_* maxtext settings set",
        ),
        (
            [k for k in keys if names_a_secret(k)],
            "a secret on the command line is readable by anyone who can read the pod spec or the plan; the library "
            "passes no secret to MaxText",
        ),
    ]
    return "; ".join(f"{', '.join(sorted(set(which)))}: {why}" for which, why in rules if which)


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
        "JetStream + MaxText server image, tagged with the release the pods are built for (a digest may follow;"
        " a registry mirror may serve it).",
        default=PINS["jetstream"].value,
        check=release_image_problem("jetstream"),
    )
    http: str = described(
        "JetStream HTTP front end image.",
        default=PINS["jetstream-http"].value,
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
    extra_args: Sequence[str] = described(
        "Further `key=value` MaxText arguments, appended as given; a key of the maxtext settings, one the "
        "component writes, a `*_parallelism` key or a secret is refused.",
        default=(),
        check=maxtext_extra_args_problem,
        unshown=True,
    )


@dataclass(frozen=True)
class PathwaysRequests:
    """CPU and memory requests of the Pathways and JetStream containers.

    The leader shares a TPU VM with one worker, so leader plus worker must fit the smallest
    TPU VM (ct5lp-hightpu-4t: 112 vCPUs, 192 GB).
    """

    proxy_cpu: str = quantity("`pathways-proxy` CPU request.", "1")
    proxy_memory: str = quantity("`pathways-proxy` memory request.", "4Gi")
    resource_manager_cpu: str = quantity("`pathways-rm` CPU request.", "2")
    resource_manager_memory: str = quantity("`pathways-rm` memory request.", "8Gi")
    jax_cpu: str = quantity("`jax-tpu` CPU request.", "8")
    jax_memory: str = quantity("`jax-tpu` memory request.", "32Gi")
    http_cpu: str = quantity("`jetstream-http` CPU request.", "1")
    http_memory: str = quantity("`jetstream-http` memory request.", "2Gi")
    worker_cpu: str = quantity("Pathways worker CPU request (per TPU VM).", "16")
    worker_memory: str = quantity("Pathways worker memory request (per TPU VM).", "64Gi")


@dataclass(frozen=True)
class PathwaysServingArgs:
    """Arguments of :class:`PathwaysServing`."""

    namespace: str = field(metadata={"check": namespace_problem})
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
    never resets what the HPA chose; ``replicas`` then gives the HPA's minimum, which ``canary_groups`` counts from)."""
    rollout: lws.Rollout = described(lws.ROLLOUT_DESCRIPTION, default=lws.Rollout.IN_PLACE)
    canary_groups: int | None = described(lws.CANARY_DESCRIPTION, default=None, ge=1, le=63)
    """Groups, from the highest index, that take a template change; the others are held (``partition``)."""
    lws_version: str = described(
        "The LeaderWorkerSet release the cluster runs; it picks the group restart policy.",
        default=PINS["lws"].value,
        check=lws.version_problem,
    )
    images: PathwaysImages = field(default_factory=PathwaysImages)
    """Container images."""
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    """Health probe timing."""
    shutdown: Shutdown = field(default_factory=Shutdown)
    """How the group's pods leave: every container holds until the requests in flight are done
    (:func:`~.pods.pre_stop`)."""
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
    model_size: ModelSize | None = described(
        "Size of the served model for the HBM fit check; unset derives it from the MaxText model name (a known "
        "MaxText model) and its quantization and weight dtype, and any other name is refused.",
        default=None,
    )
    """Parameters and served precision of the model, checked against the HBM of one slice of ``shape``."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""

    def problems(self) -> list[str]:
        """Rules of these arguments beyond their types (see :mod:`tpu_serving.common.validation`)."""
        clash = lws.service_name_problem(self.name, self.service_name)
        found = [f"service_name = {self.service_name!r}: {clash}"] if clash else []
        if self.mode == "disaggregated" and (why := disaggregation_problem(self.shape)):
            found.append(f"mode = 'disaggregated': {why}")
        if self.canary_groups is not None and (
            why := lws.canary_problem(self.canary_groups, self.replicas, "replicas")
        ):
            found.append(f"canary_groups = {self.canary_groups}: {why}")
        return found + fit_problems(self.model_size, self.maxtext, self.shape)

    @property
    def group_size(self) -> int:
        """Pods per group: one Pathways worker per VM of every slice, plus the leader."""
        return self.num_slices * self.shape.vms + 1


def maxtext_size(declared: ModelSize | None, maxtext: MaxTextSettings) -> ModelSize | None:
    """The declared size, else that of a MaxText model name the library knows
    (:data:`~tpu_serving.catalog.models.MAXTEXT_MODEL_PARAMETERS`) in the precision MaxText serves it; None when neither."""
    if declared is not None:
        return declared
    known = MAXTEXT_MODEL_PARAMETERS.get(maxtext.model_name)
    precision = maxtext_precision(maxtext.quantization, maxtext.weight_dtype)
    return None if known is None else ModelSize(known, WeightPrecision(precision))


def fit_problems(
    declared: ModelSize | None,
    maxtext: MaxTextSettings,
    shape: SliceShape,
    prefix: str = "",
    spell: Callable[[str], str] = str,
    size_key: str = "model_size",
) -> list[str]:
    """The one HBM fit rule of the stack file's check and the component's arguments: the model's size is known
    (:func:`maxtext_size`), and every slice of a group holds the whole model (interleaved replicas and both
    disaggregated halves). ``prefix`` comes before a key in a message (``tpu-serving:serving.`` in a stack file),
    ``spell`` writes a field's name as the keys do, ``size_key`` is the key that declares the size (the stack
    file's ``model``, the argument ``model_size``)."""
    name = f"maxtext.{spell('model_name')}"
    size = maxtext_size(declared, maxtext)
    if size is None:
        example = size_example(size_key, python=spell is str)
        return [
            f"{prefix}{size_key}: required for the HBM fit check, since {name} {json.dumps(maxtext.model_name)} is "
            f"not a model the library knows; {example}; known: {', '.join(MAXTEXT_MODEL_PARAMETERS)}"
        ]
    at = prefix + (size_key if declared is not None else name)
    if size.attention is not None:
        # vLLM's fit check reads it (the KV cache of one request); MaxText sizes its cache from its own settings
        return [
            f"{at}.attention: vLLM's KV cache check reads it; the JetStream fit counts the weights only: leave it out"
        ]
    problem = hbm_fit_problem(at, size.parameters_billions, size.precision, shape)
    return [problem] if problem else []
