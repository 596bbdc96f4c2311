"""The capacity report: chips, VMs and HBM a deployment allocates, against what its model needs.

Pure arithmetic over catalog shapes. The model needs, per serving slice, the smallest slice
of the same machine type whose HBM holds its weights (:func:`catalog.smallest_fitting_topology`);
the ratio of allocated chips to those chips shows over-provisioning. Weights only: KV cache,
activations and batch headroom are not in the need, so a ratio a little above 1 is expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import catalog
from ..catalog import SliceShape
from ..catalog.models import ModelSize


@dataclass(frozen=True)
class Allocation:
    """What a deployment allocates and, when its model's size is known, what the model needs."""

    chips: int
    vms: int
    hbm_gib: int
    model: ModelSize | None
    """The largest served model, or None when its size is unknown."""
    smallest_fit: SliceShape | None
    """The smallest slice of the serving machine type that holds the model (None: unknown, or none fits)."""
    serving_slices: int
    """Slices that each hold a whole copy of the model."""

    @property
    def chips_needed(self) -> int | None:
        """Chips of the smallest fitting slice, once per serving slice."""
        return None if self.smallest_fit is None else self.smallest_fit.chips * self.serving_slices

    @property
    def ratio(self) -> float | None:
        """Allocated chips over needed chips: 1.0 is a tight fit, 2.0 twice what the weights need."""
        needed = self.chips_needed
        return None if not needed else self.chips / needed


def allocation(
    slices: Sequence[tuple[SliceShape, int]],
    serving: SliceShape | None,
    serving_slices: int,
    model: ModelSize | None,
) -> Allocation:
    """The allocation of ``slices`` (shape, count), whose ``serving_slices`` of shape ``serving`` hold ``model``."""
    fit = (
        catalog.smallest_fitting_topology(serving.machine_type.name, model.gib)
        if serving is not None and model is not None
        else None
    )
    return Allocation(
        chips=sum(s.chips * n for s, n in slices),
        vms=sum(s.vms * n for s, n in slices),
        hbm_gib=sum(s.hbm_gib * n for s, n in slices),
        model=model,
        smallest_fit=fit,
        serving_slices=serving_slices,
    )
