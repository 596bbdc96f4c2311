"""The serving backends, registered in one place.

A backend is one module (settings, checks, build, outputs, ports; see :mod:`.base`). Adding
one is a new module and one line in :data:`BACKENDS`.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from . import jetstream_pathways, pathways_job, saxml
from .base import Backend, Built, Platform, ServingSlices

BACKENDS: dict[str, Backend] = {
    b.name: b for b in (jetstream_pathways.BACKEND, saxml.BACKEND, pathways_job.BACKEND)
}
"""Every serving backend, by its ``serving.backend`` value."""

Serving = Annotated[
    Union[tuple(b.settings for b in BACKENDS.values())],  # type: ignore[valid-type]
    Field(discriminator="backend"),
]
"""The serving settings of a stack: the backend's own model, chosen by ``backend``."""

__all__ = ["BACKENDS", "Backend", "Built", "Platform", "Serving", "ServingSlices"]
