"""The serving backends, registered in one place.

A backend is one package (facts, args, pods, component, settings, checks, backend and its
``policy_allowlist.json``); what the deployment asks of it, and what a backend answers unless it
says otherwise, is :class:`.base.ServingBackend`; what the LeaderWorkerSet backends share besides
is :class:`.groups.GroupBackend`. Adding one is a new package and its line in :data:`BACKENDS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeAlias, Union

from pydantic import Field

from . import jetstream, pathways_job, saxml, vllm
from .base import Backend, Built, Platform, ServingEndpoint, ServingSettings, ServingSlices, probed

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        jetstream.BACKEND,
        saxml.BACKEND,
        pathways_job.BACKEND,
        vllm.BACKEND,
    )
}
"""Every serving backend, by its ``serving.backend`` value."""

if TYPE_CHECKING:
    # mypy cannot evaluate the union built from BACKENDS below: it sees what the stack reads of any backend's
    # settings, and narrows to one backend's model by isinstance.
    Serving: TypeAlias = ServingSettings
else:
    Serving = Annotated[
        Union[tuple(b.settings for b in BACKENDS.values())],  # noqa: UP007 (a runtime-built union has no `X | Y` spelling)
        Field(discriminator="backend"),
    ]
"""The serving settings of a stack: the backend's own model, chosen by ``backend``."""

__all__ = ["BACKENDS", "Backend", "Built", "Platform", "Serving", "ServingEndpoint", "ServingSlices", "probed"]
