"""The vLLM engine's container images: the pinned release's, or another run unverified on its flags."""

from dataclasses import dataclass

from ...catalog.images import image_name, pinned_image_problem, release_image_problem
from ...common.settings import described
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
        check=lambda image: _unverified_problem(image) if image is not None else "",
    )

    @property
    def engine(self) -> str:
        """The image the pods run: the unverified one when given, else the pinned release's."""
        return self.unverified_vllm or self.vllm


def _unverified_problem(image: str) -> str:
    """An unverified engine image must still be pinned, and a vLLM TPU image: its path's last name ``vllm-tpu``, as
    the pinned one's and any mirror's (library review 2, M3: the GPU image ``vllm/vllm-openai`` came in here)."""
    problem = pinned_image_problem(image)
    if problem:
        return problem
    name = image_name(DEFAULT_IMAGE)
    if image_name(image) != name:
        return f"is not a {name} image (push a build of your own under the name {name}: <registry>/<path>/{name}:<tag>)"
    return ""
