"""How long a new serving group takes to serve, and what its output tokens cost: sums of published figures.

Catalog data plus pure builders. The deployment exports their lines (the ``timeToServe`` and ``tokenCost`` stack
outputs) and the preview prints them. Every figure is a :class:`Published` that carries where it was published and
under which conditions; a term nobody has published is printed as unpublished, never guessed. The lines name each
figure's source, so a figure that loses its source cannot be printed (``Published`` refuses one without it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..catalog import SliceShape
from ..common.validation import Choice

TIME_TO_SERVE = "timeToServe"
"""The stack output of the time-to-serve lines."""
TOKEN_COST = "tokenCost"
"""The stack output of the cost-per-token lines."""
OUTPUT_TITLES = ((TIME_TO_SERVE, "Time to serve"), (TOKEN_COST, "Cost per token"))
"""Each output and the title the preview and the preview diff print its lines under."""


def output_lines(outputs: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(title, line)`` of each line of a plan's time-to-serve and cost-per-token outputs (none: an empty list)."""
    found = []
    for key, title in OUTPUT_TITLES:
        lines = outputs.get(key)
        found += [(title, line) for line in lines if isinstance(line, str)] if isinstance(lines, list) else []
    return found


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
    image: str
    """The engine image the groups run (as the stack names it, before any mirror)."""
    runs: str
    """The engine build and the settings a throughput depends on, as the stack runs them (``vllm-tpu v0.29.0,
    max-model-len 8192``)."""
    disaggregated: bool = False
    """Whether prefill and decode run in separate groups (a published throughput of one group serving both does not
    hold for them)."""
    groups: tuple[int, int] = (1, 1)
    """The groups that serve at the least and at the most (the autoscaler's minimum and maximum, or the fixed count)."""


IMAGE_SIZE: dict[Engine, Published] = {
    Engine.VLLM_TPU: Published(
        19.5,
        19.5,
        "GB",
        "a vllm-tpu image uncompressed, a test build after the change, not the release a stack runs (the nightly "
        "before it: 25.9 GB)",
        "https://github.com/vllm-project/tpu-inference/pull/1245",
    ),
}
"""The engine's container image, which a node without it reads before the group starts."""

WEIGHT_READ: dict[str, Published] = {
    # Both figures are issue 3768's, for Llama 3.3 70B in vLLM TPU on one v5p-8 VM: 53 MiB/s single-threaded (its
    # summary, and marin PR 3777: "RunAI 41 min download alone"), 727 MiB/s (185 s, whole model in host memory, a
    # comment of 2026-03-22, whose whole start took 481 s). One VM's read; a group of several VMs is not measured.
    "runai-streamer": Published(
        53,
        727,
        "MiB/s",
        "the Run:ai Model Streamer reading Llama 3.3 70B from Cloud Storage into vLLM TPU on one v5p-8 VM: 53 MiB/s "
        "single-threaded, 727 MiB/s with the whole model in host memory (a whole start of 481 s)",
        "https://github.com/marin-community/marin/issues/3768",
    ),
}
"""How fast each loader reads the weights into one TPU VM, where a rate is published (by ``EngineProfile.loader``).
None for the Hugging Face Hub, nor for a Cloud Storage FUSE volume under the stacks' settings (:data:`FUSE_READ`)."""

FUSE_READ = (
    "no rate under this stack's FUSE settings; marin PR 1208 (https://github.com/marin-community/marin/pull/1208) "
    "reports Llama 70B loaded in 14 minutes through a FUSE mount with a cache directory over gRPC, under its own"
)
"""What is published of a Cloud Storage FUSE read of weights: one whole load under other settings, no rate."""

_COLD_COMPILE = (
    "vLLM TPU's graph capture before the change, on other models (Qwen3 30B FP8: 209 s, Qwen3 235B BF16: 345 s), "
    "TPU not named, engine build unknown"
)
COMPILE: dict[tuple[Engine, bool], Published] = {
    (Engine.VLLM_TPU, False): Published(
        209, 345, "s", _COLD_COMPILE, "https://github.com/vllm-project/tpu-inference/pull/2517"
    ),
    # No published measure of an XLA cache on a Cloud Storage FUSE volume (the stacks' VLLM_XLA_CACHE_PATH). Marin's
    # (https://github.com/marin-community/marin/issues/2318, closed as stale) measured a cache on local disk, 357 s
    # cold and 154 s cached for a whole start of Llama 3.1 8B on a v4-8, and one read by JAX straight from gs://.
    (Engine.VLLM_TPU, True): Published(
        209,
        345,
        "s",
        _COLD_COMPILE + "; with the cache it is an upper bound: no measure of an XLA cache on a FUSE volume is "
        "published (marin-community/marin issue 2318: a whole start of Llama 3.1 8B on a v4-8, 357 s cold, 154 s with "
        "the cache on local disk)",
        "https://github.com/vllm-project/tpu-inference/pull/2517",
    ),
}
"""Compilation at start, by engine and whether the compilation cache is on."""

IMAGE_CACHE_DISK = (
    "none: the node reads the image from its secondary boot disk (GKE, 'Use secondary boot disks to preload data or "
    "container images', https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading)"
)
IMAGE_STREAMED = (
    "the streamed pull (GKE gives no time, and says a first pull, or a workload that reads many of the image's files "
    "as it starts, may not gain: https://cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, Limitations)"
)
PROVISIONING = (
    "a new group on VMs that run; not counted: noticing a lost node, recreating a slice's VMs (host maintenance, a "
    "repair), the HPA's reaction, and for a slice from zero the time GKE takes to create its VMs, which Google does not "
    "publish for TPU slices"
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
        """The preview's line, against the startup window the group's probes allow: within it only when every term
        is published; more than it when the published terms alone exceed it; else not known."""
        low, high = round(self.low_seconds / 60), round(self.high_seconds / 60)
        window = f"the {startup_seconds / 60:g}-minute startup window (serving.probes.maxStartupSeconds)"
        if self.low_seconds > startup_seconds:
            verdict = f"MORE than {window}: the group is recreated before it serves"
        elif self.unpublished:
            verdict = f"so at least {low} minutes; whether it fits {window} is not known"
        elif self.high_seconds <= startup_seconds:
            verdict = f"within {window}"
        else:
            verdict = f"which may exceed {window}"
        total = f"{low}" if low == high else f"{low}-{high}"
        gaps = f"; not published: {', '.join(self.unpublished)}" if self.unpublished else ""
        return (
            f"{self.workload}: the published terms add up to about {total} minutes, {verdict}: "
            f"{'; '.join(self.terms)}{gaps}; {PROVISIONING}"
        )


def group_start(
    profile: EngineProfile, model_gib: float | None, image_cache_disk: bool, image_streaming: bool, vms: int = 1
) -> ServeTime:
    """The start of one of ``profile``'s groups on a slice of ``vms`` VMs that runs: image, weights, compilation.
    ``image_streaming``: GKE streams the image (its own node pools, an Artifact Registry image)."""
    if model_gib is not None and model_gib <= 0:
        raise ValueError(f"model_gib = {model_gib}: the weights' size must be above 0")
    terms: list[str] = []
    unpublished: list[str] = []
    low = high = 0.0
    size = IMAGE_SIZE.get(profile.engine)
    image = size.cited() if size else "an image of unpublished size"
    if image_cache_disk:
        terms.append(f"image pull {IMAGE_CACHE_DISK}")
    else:
        unpublished.append(f"{IMAGE_STREAMED if image_streaming else 'the pull rate'} of {image}")
    rate = WEIGHT_READ.get(profile.loader)
    if rate is not None and model_gib is not None and vms == 1:
        low += model_gib * 1024 / rate.high
        high += model_gib * 1024 / rate.low
        terms.append(f"weights {model_gib:.1f} GiB at {rate.cited()}")
    elif rate is not None and model_gib is not None:
        unpublished.append(f"the weight read of {vms} VMs (the one published rate is one VM's: {rate.cited()})")
    elif profile.loader == "gcsfuse":
        unpublished.append(f"the weight read of loader gcsfuse ({FUSE_READ})")
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
    """A published throughput: one model on one slice shape with one engine build and its settings, in one
    scenario, with the latency it was measured at."""

    model: str
    """The Hugging Face id served (matched exactly against the stack's served model name)."""
    machine_type: str
    """The GKE machine type of the measured slice's VMs (one VM: a Cloud TPU VM of that many chips)."""
    topology: str
    engine: Engine
    measured_with: str
    """The engine build and the settings it ran with."""
    input_tokens: int
    output_tokens: int
    concurrency: int
    latency: str
    """The latency at that throughput, as published (time to first token, time per output token)."""
    output_tokens_per_second_per_chip: Published
    disaggregated: bool = False
    """Measured with prefill and decode in separate groups."""

    def scenario(self) -> str:
        """``1000 in / 1000 out, concurrency 128``."""
        return f"{self.input_tokens} in / {self.output_tokens} out, concurrency {self.concurrency}"


_RECIPE = (
    "https://github.com/AI-Hypercomputer/tpu-recipes/blob/c8cfe2f689081d36701a101cd73a70965d80926b/inference/"
    "trillium/vLLM/Llama3.x/README.md"
)
# One Cloud TPU VM (gcloud alpha compute tpus tpu-vm create --type v6e --topology 2x4, README.md l.42-43: 8 chips on
# one host, GKE's ct6e-standard-8t), vllm serve with tensor parallel 8 and the settings of l.122-133, the image of l.83,
# vllm bench serve of 3000 random prompts with --ignore-eos (l.211-225); the results at concurrency 64 (l.230-257) and
# 128 (l.260-287), each on the slice's 8 chips.
_RECIPE_SETTINGS = (
    "vllm-tpu v0.12.0, max-model-len 2048, max-num-seqs 256, max-num-batched-tokens 512, async scheduling, no prefix "
    "caching, gpu-memory-utilization 0.98"
)
THROUGHPUT: tuple[Throughput, ...] = tuple(
    Throughput(
        "meta-llama/Llama-3.3-70B-Instruct",
        "ct6e-standard-8t",
        "2x4",
        Engine.VLLM_TPU,
        _RECIPE_SETTINGS,
        1000,
        1000,
        concurrency,
        latency,
        Published(
            total / 8,
            total / 8,
            "output tokens/s per chip",
            f"Llama 3.3 70B on one v6e-8 VM, {total} tokens/s on its 8 chips",
            f"{_RECIPE}#{lines}",
        ),
    )
    for concurrency, total, latency, lines in (
        (64, 2494.80, "P99 TTFT 2501.65 ms, mean TPOT 25.35 ms", "L230-L257"),
        (128, 3544.46, "P99 TTFT 8250.26 ms, mean TPOT 35.12 ms", "L260-L287"),
    )
)
"""Published serving throughputs; a stack is costed per token only where one matches its model, shape, engine and
mode."""


def published_throughput(
    model: str, shape: SliceShape, engine: Engine, disaggregated: bool = False
) -> list[Throughput]:
    """The published rows for exactly this model, machine type, topology, engine and mode (none: an empty list)."""
    return [
        t
        for t in THROUGHPUT
        if t.model == model
        and t.machine_type == shape.machine_type.name
        and t.topology == shape.topology
        and t.engine is engine
        and t.disaggregated is disaggregated
    ]


def token_cost_line(
    profile: EngineProfile, shape: SliceShape, chip_hour_usd: float | None, price_note: str = ""
) -> str:
    """What a million output tokens cost on one group's slice at each published throughput, or why no figure is
    given. One group loaded as in the scenario: the stack's idle, spare and standing groups are not counted."""
    rows = published_throughput(profile.model, shape, profile.engine, profile.disaggregated)
    workload = profile.workload
    if not rows:
        mode = " with prefill and decode disaggregated" if profile.disaggregated else ""
        return (
            f"{workload}: no throughput is published for {profile.model} on {shape.slice_name} "
            f"({shape.machine_type.name} {shape.topology}) with {profile.engine}{mode}, so no cost per token is given"
        )
    if chip_hour_usd is None:
        return f"{workload}: no chip-hour price is known for {shape.generation.name} (set prices.tpuChipHour)"
    figures = [
        f"${chip_hour_usd / (r.output_tokens_per_second_per_chip.low * 3600) * 1e6:,.2f} at concurrency "
        f"{r.concurrency} ({r.output_tokens_per_second_per_chip.cited()}; {r.latency})"
        for r in rows
    ]
    note = f" ({price_note})" if price_note else ""
    return (
        f"{workload}: per million output tokens, one group loaded as published ({rows[0].input_tokens} in / "
        f"{rows[0].output_tokens} out): {'; '.join(figures)}; at ${chip_hour_usd:,.2f} per chip-hour{note}; "
        f"measured with {rows[0].measured_with}; this stack runs {profile.runs}, so its throughput may differ; idle, "
        "spare and lightly loaded groups raise the stack's own cost per token"
    )


def stack_cost_line(profile: EngineProfile, shape: SliceShape, tpu_usd_per_hour: tuple[float, float]) -> str | None:
    """What a million output tokens cost the stack: its TPU estimate per hour (with its fewest groups up; every slice
    up) over its fewest and most groups, each loaded as published; None without a published throughput."""
    rows = published_throughput(profile.model, shape, profile.engine, profile.disaggregated)
    if not rows or not all(tpu_usd_per_hour):
        return None
    fewest, most = profile.groups
    spans = []
    for n, hourly in dict.fromkeys(((fewest, tpu_usd_per_hour[0]), (most, tpu_usd_per_hour[1]))):
        usd = [hourly / (n * r.output_tokens_per_second_per_chip.low * shape.chips * 3600) * 1e6 for r in rows]
        spans.append(f"{n} group(s) at ${hourly:,.2f}/hour: ${min(usd):,.2f}-${max(usd):,.2f}")
    return (
        f"the stack's own, its TPU estimate over its groups each loaded as published (concurrency "
        f"{'/'.join(str(r.concurrency) for r in rows)}): {'; '.join(spans)}; less loaded groups cost more"
    )
