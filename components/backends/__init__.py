"""The serving backends, registered in one place.

A backend is one package (facts, args, pods, component, settings, checks, backend and its
``policy_allowlist.json``; what the deployment asks of it is :class:`.base.Backend`). Adding
one is a new package and one line in :data:`BACKENDS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeAlias, Union

from pydantic import Field

from . import jetstream, pathways_job, saxml, vllm
from .base import Backend, Built, Platform, ServingEndpoint, ServingSlices, probed

BACKENDS: dict[str, Backend] = {
    b.name: b for b in (jetstream.BACKEND, saxml.BACKEND, pathways_job.BACKEND, vllm.BACKEND)
}
"""Every serving backend, by its ``serving.backend`` value."""

if TYPE_CHECKING:
    # mypy cannot evaluate the union built from BACKENDS below: it sees the same union spelled
    # out (keep it in step with BACKENDS).
    Serving: TypeAlias = Annotated[
        jetstream.PathwaysServingConfig
        | saxml.SaxmlServingConfig
        | pathways_job.PathwaysJobConfig
        | vllm.VllmServingConfig,
        Field(discriminator="backend"),
    ]
else:
    Serving = Annotated[
        Union[tuple(b.settings for b in BACKENDS.values())],  # noqa: UP007 (a runtime-built union has no `X | Y` spelling)
        Field(discriminator="backend"),
    ]
"""The serving settings of a stack: the backend's own model, chosen by ``backend``."""

__all__ = ["BACKENDS", "Backend", "Built", "Platform", "Serving", "ServingEndpoint", "ServingSlices", "probed"]
