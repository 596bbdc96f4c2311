"""The vLLM engine's container images: the pinned release's, or another run unverified on its flags."""

from dataclasses import dataclass

from ...images import pinned_image_problem, release_image_problem
from ...settings import described
from .facts import DEFAULT_IMAGE


@dataclass(frozen=True)
class VllmImages:
    """Container image of the engine."""

    vllm: str = described(
        "vLLM TPU image (leader and workers), tagged with the release the pods are built for (a digest may follow;"
        " a registry mirror may serve it).",
        default=DEFAULT_IMAGE,
        check=release_image_problem("vllm-tpu", override="unverified_vllm"),
    )
    unverified_vllm: str | None = described(
        "A vLLM TPU image of another release, run in place of `vllm` on the flags and environment built and checked"
        " for the pinned one (a fix on the serving team's schedule): pinned to a tag or digest; the preview and"
        " `make check` say it is unverified and what the conformance tables know of its differences.",
        default=None,
        check=lambda image: pinned_image_problem(image) if image is not None else "",
    )

    @property
    def engine(self) -> str:
        """The image the pods run: the unverified one when given, else the pinned release's."""
        return self.unverified_vllm or self.vllm
