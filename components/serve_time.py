"""How long a new serving group takes to serve, and what its output tokens cost: sums of published figures.

Catalog data plus pure builders. The deployment exports their lines (the ``timeToServe`` and ``tokenCost`` stack
outputs) and the preview prints them. Every figure is a :class:`Published` that carries where it was published and
under which conditions; a term nobody has published is printed as unpublished, never guessed. The lines name each
figure's source, so a figure that loses its source cannot be printed (``Published`` refuses one without it).
"""

from __future__ import annotations

from dataclasses import dataclass

from .catalog import SliceShape
from .validation import Choice

TIME_TO_SERVE = "timeToServe"
"""The stack output of the time-to-serve lines."""
TOKEN_COST = "tokenCost"
"""The stack output of the cost-per-token lines."""
OUTPUT_TITLES = ((TIME_TO_SERVE, "Time to serve"), (TOKEN_COST, "Cost per token"))
"""Each output and the title the preview and the preview diff print its lines under."""


@dataclass(frozen=True)
class Published:
    """One published figure: a value or a range, its unit, the conditions it was measured under, and where."""

    low: float
    high: float
    unit: str
    conditions: str
    """What was measured, on what (model, hardware, version), as the source states it."""
    source: str
    """Where it was published: an https URL (a pull request, an issue, a file at a commit)."""

    def __post_init__(self) -> None:
        if not self.source.startswith("https://"):
            raise ValueError(f"a published figure needs its source (an https URL), not {self.source!r}")
        if not 0 <= self.low <= self.high:
            raise ValueError(f"a range runs from low to high: {self.low} .. {self.high}")

    def figure(self) -> str:
        """``19.5 GB`` or ``209-345 s``."""
        value = f"{self.low:.4g}" if self.low == self.high else f"{self.low:.4g}-{self.high:.4g}"
        return f"{value} {self.unit}"

    def cited(self) -> str:
        """The figure with its conditions and source, as the preview prints it."""
        return f"{self.figure()} ({self.conditions}; {self.source})"


class Engine(Choice):
    """A serving engine whose start has published figures."""

    VLLM_TPU = "vllm-tpu"


@dataclass(frozen=True)
class EngineProfile:
    """A backend's serving groups as their start and their throughput depend on them."""

    workload: str
    """The groups' workload, as the preview names it (``LeaderWorkerSet vllm``)."""
    engine: Engine
    model: str
    """The model id it serves (matched exactly against :data:`THROUGHPUT`)."""
    loader: str
    """How the weights reach the engine (``gcsfuse``, ``runai-streamer``, ``hugging-face``)."""
    compilation_cache: bool
    """Whether compiled programs persist between starts (a bucket the engine reads them back from)."""
    disaggregated: bool = False
    """Whether prefill and decode run in separate groups (a published throughput of one group serving both does not
    hold for them)."""


IMAGE_SIZE: dict[Engine, Published] = {
    Engine.VLLM_TPU: Published(
        19.5,
        19.5,
        "GB",
        "the vllm-tpu image uncompressed, a test build after the change (the nightly before it: 25.9 GB)",
        "https://github.com/vllm-project/tpu-inference/pull/1245",
    ),
}
"""The engine's container image, which a node without it reads before the group starts."""

WEIGHT_READ: dict[str, Published] = {
    "runai-streamer": Published(
        727,
        727,
        "MiB/s",
        "the Run:ai Model Streamer loading Llama 3.3 70B from Cloud Storage in vLLM TPU on a v5p-8 (tensor parallel "
        "4, 64 GB host memory) in 185 s, a comment of 2026-03-22",
        "https://github.com/marin-community/marin/issues/3768",
    ),
}
"""How fast each loader reads the weights into a TPU slice, where a rate is published (by ``EngineProfile.loader``).
No rate is published for a Cloud Storage FUSE volume or the Hugging Face Hub."""

_COLD_COMPILE = (
    "vLLM TPU's graph capture at start before the change (Qwen3 30B FP8: 209 s, Qwen3 235B BF16: 345 s; the TPU is "
    "not named)"
)
COMPILE: dict[tuple[Engine, bool], Published] = {
    (Engine.VLLM_TPU, False): Published(
        209, 345, "s", _COLD_COMPILE, "https://github.com/vllm-project/tpu-inference/pull/2517"
    ),
    # The one published measure of vLLM TPU's start with a persistent compilation cache (a whole start of Llama 3.1
    # 8B on a v4-8, 357 s cold, 154 s with the cache on local disk) found "no speedup" with the cache in Cloud
    # Storage (https://github.com/marin-community/marin/issues/2318), where this stack keeps it: the cold figure
    # stands, and the line says so.
    (Engine.VLLM_TPU, True): Published(
        209,
        345,
        "s",
        _COLD_COMPILE + "; a cache in Cloud Storage, as here, showed no speedup in the one published measure "
        "(marin-community/marin issue 2318: 357 s cold, 154 s with the cache on local disk, Llama 3.1 8B, v4-8)",
        "https://github.com/vllm-project/tpu-inference/pull/2517",
    ),
}
"""Compilation at start, by engine and whether the compilation cache is on."""

IMAGE_CACHE_DISK = (
    "none: the node reads the image from its secondary boot disk (GKE, 'Use secondary boot disks to preload data or "
    "container images', https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading)"
)
IMAGE_STREAMED = (
    "streamed: the container starts while the image is read; GKE's page gives no time "
    "(https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming), Google's announcement of 2021-11-03 "
    "'a couple of seconds (irrespective of container size)' (https://cloud.google.com/blog/products/"
    "containers-kubernetes/introducing-container-image-streaming-in-gke)"
)
PROVISIONING = (
    "a slice from zero adds the time GKE takes to create its VMs, which Google does not publish for TPU slices"
)


@dataclass(frozen=True)
class ServeTime:
    """A serving group's start, term by term: the seconds published terms add up to, and the terms none is for."""

    workload: str
    terms: tuple[str, ...]
    low_seconds: float
    high_seconds: float
    unpublished: tuple[str, ...]

    def line(self, startup_seconds: int) -> str:
        """The preview's line, against the startup window the group's probes allow."""
        low, high = round(self.low_seconds / 60), round(self.high_seconds / 60)
        total = f"{low}" if low == high else f"{low}-{high}"
        window = startup_seconds / 60
        verdict = (
            f"within the {window:g}-minute startup window"
            if self.high_seconds <= startup_seconds
            else f"MORE than the {window:g}-minute startup window (serving.probes.maxStartupSeconds): the group is "
            "recreated before it serves"
        )
        gaps = f"; not published: {', '.join(self.unpublished)}" if self.unpublished else ""
        return (
            f"{self.workload}: the published terms add up to about {total} minutes, {verdict}: "
            f"{'; '.join(self.terms)}{gaps}; "
            f"{PROVISIONING}"
        )


def serve_time(
    profile: EngineProfile, model_gib: float | None, image_cache_disk: bool, image_streaming: bool
) -> ServeTime:
    """The start of one of ``profile``'s groups on a slice that runs: image, weights and compilation."""
    terms: list[str] = []
    unpublished: list[str] = []
    low = high = 0.0
    size = IMAGE_SIZE.get(profile.engine)
    if image_cache_disk:
        terms.append(f"image pull {IMAGE_CACHE_DISK}")
    elif image_streaming:
        terms.append(f"image pull of {size.cited() if size else 'an image of unpublished size'}: {IMAGE_STREAMED}")
    else:
        unpublished.append(f"the pull rate of {size.cited() if size else 'the image'}")
    rate = WEIGHT_READ.get(profile.loader)
    if rate is not None and model_gib is not None:
        low += model_gib * 1024 / rate.high
        high += model_gib * 1024 / rate.low
        terms.append(f"weights {model_gib:.1f} GiB at {rate.cited()}")
    else:
        unpublished.append(f"the weight read of loader {profile.loader}")
    compile_ = COMPILE.get((profile.engine, profile.compilation_cache))
    if compile_ is not None:
        low += compile_.low
        high += compile_.high
        cache = "with" if profile.compilation_cache else "without"
        terms.append(f"compilation {cache} the cache {compile_.cited()}")
    else:
        unpublished.append("compilation")
    return ServeTime(profile.workload, tuple(terms), low, high, tuple(unpublished))


@dataclass(frozen=True)
class Throughput:
    """A published throughput: one model on one slice shape with one engine, in one scenario."""

    model: str
    """The Hugging Face id served (matched exactly against the stack's served model name)."""
    machine_type: str
    """The GKE machine type of the measured slice's VMs (one VM: a Cloud TPU VM of that many chips)."""
    topology: str
    engine: Engine
    input_tokens: int
    output_tokens: int
    concurrency: int
    output_tokens_per_second_per_chip: Published
    disaggregated: bool = False
    """Measured with prefill and decode in separate groups."""

    def scenario(self) -> str:
        """``1024 in / 1024 out, concurrency 128``."""
        return f"{self.input_tokens} in / {self.output_tokens} out, concurrency {self.concurrency}"


THROUGHPUT: tuple[Throughput, ...] = (
    Throughput(
        "meta-llama/Llama-3.3-70B-Instruct",
        # one Cloud TPU VM, gcloud alpha compute tpus tpu-vm create --type v6e --topology 2x4 (README.md l.42-43):
        # 8 chips on one host, GKE's ct6e-standard-8t
        "ct6e-standard-8t",
        "2x4",
        Engine.VLLM_TPU,
        1000,
        1000,
        128,
        # 3544.46 output tok/s on the slice's 8 chips (tensor parallel 8), vllm bench serve of 3000 random prompts with
        # --ignore-eos, vllm/vllm-tpu:v0.12.0, --max-model-len 2048 --max-num-seqs 256 --max-num-batched-tokens 512
        # (README.md l.83 the image, l.211-225 the benchmark, l.260-274 the result).
        Published(
            3544.46 / 8,
            3544.46 / 8,
            "output tokens/s per chip",
            "vLLM TPU v0.12.0 serving Llama 3.3 70B on a v6e-8, 3544.46 tokens/s on its 8 chips, max-model-len 2048",
            "https://github.com/AI-Hypercomputer/tpu-recipes/blob/c8cfe2f689081d36701a101cd73a70965d80926b/inference/"
            "trillium/vLLM/Llama3.x/README.md#L260-L274",
        ),
    ),
)
"""Published serving throughputs; a stack is costed per token only where one matches its model, shape and engine."""


def published_throughput(
    model: str, shape: SliceShape, engine: Engine, disaggregated: bool = False
) -> Throughput | None:
    """The published row for exactly this model, machine type, topology and engine, or None."""
    return next(
        (
            t
            for t in THROUGHPUT
            if t.model == model
            and t.machine_type == shape.machine_type.name
            and t.topology == shape.topology
            and t.engine is engine
            and t.disaggregated is disaggregated
        ),
        None,
    )


def token_cost_line(profile: EngineProfile, shape: SliceShape, chip_hour_usd: float | None) -> str:
    """What a million output tokens cost on one group's slice at a published throughput, or why no figure is given."""
    row = published_throughput(profile.model, shape, profile.engine, profile.disaggregated)
    workload = profile.workload
    if row is None:
        mode = " with prefill and decode disaggregated" if profile.disaggregated else ""
        return (
            f"{workload}: no throughput is published for {profile.model} on {shape.slice_name} with "
            f"{profile.engine}{mode}, so no cost per token is given"
        )
    if chip_hour_usd is None:
        return f"{workload}: no chip-hour price is known for {shape.generation.name} (set prices.tpuChipHour)"
    per_chip = row.output_tokens_per_second_per_chip
    usd = chip_hour_usd / (per_chip.low * 3600) * 1e6
    return (
        f"{workload}: ${usd:,.2f} per million output tokens at ${chip_hour_usd:,.2f} per chip-hour and "
        f"{per_chip.cited()}, scenario {row.scenario()}; a fully loaded group in that scenario only"
    )
