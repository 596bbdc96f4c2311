"""Which serving slices start empty, which may go down to zero, and what a stockout does to each slice kind: read by
the pools (their sizes and autoscaling), the ``capacity.obtained`` output and the production gaps alike."""

from __future__ import annotations

from ..backends import BACKENDS
from ..catalog import capacity
from ..pools.compute_class import Fallback
from .models import StackConfig, TpuSliceConfig


def fallback_steps(cfg: StackConfig) -> tuple[Fallback, ...]:
    """The steps of the stack's capacity fallback (``serving.fallback``), in order; none without one."""
    return tuple(BACKENDS[cfg.serving.backend].fallback(cfg.serving)) if cfg.serving is not None else ()


def has_fallback(cfg: StackConfig) -> bool:
    """The stack's serving has a capacity fallback (``serving.fallback``: a ComputeClass over its pools)."""
    return bool(fallback_steps(cfg))


def scale_from_zero(cfg: StackConfig) -> set[str]:
    """Serving slices (by pool) beyond those the backend keeps on: they start empty and scale from zero."""
    if cfg.serving is None:
        return set()
    backend = BACKENDS[cfg.serving.backend]
    serving = [p for p, _, s in cfg.slices if s.name in cfg.serving.slices]
    by_kind = {n: [p for p, _, s in cfg.slices if s.name == n] for n in cfg.serving.slices}
    per_kind = backend.from_zero_pools(cfg.serving, by_kind)
    if per_kind is not None:
        return per_kind
    keep = backend.always_on_slices(cfg.serving, len(serving))
    return set(serving[keep:])


def scale_to_zero(cfg: StackConfig) -> set[str]:
    """Serving slices (by pool) that start with their whole slice yet autoscale down to zero when idle: every pool of
    a shape that also has a pool starting empty. A group's pods select a slice by accelerator and topology only, so a
    group whose slice a repair, host maintenance or an upgrade takes restarts on a free slice of that shape, the
    surge spare or the HPA's next one, and stays there once its own slice is back; a pool of fixed size would then
    bill idle for good (GKE: "Multi-host TPU slice node pools" scale atomically, whole slice or none,
    https://cloud.google.com/kubernetes-engine/docs/concepts/tpus#node_pool). Reserved slices keep their VMs: the
    reservation bills either way. With a capacity fallback (``serving.fallback``) every serving slice is such a pool: a
    group that a lost slice sent to a slice GKE made for the class stays there too (GKE review of issue 37, M1)."""
    empty = scale_from_zero(cfg)
    shapes = {shape for p, shape, _ in cfg.slices if p in empty}
    fallback = has_fallback(cfg)
    return {
        p
        for p, shape, s in cfg.slices
        if p not in empty
        and (shape in shapes or fallback)
        and cfg.serving is not None
        and s.name in cfg.serving.slices
        and s.effective_capacity is not capacity.Capacity.RESERVATION
    }


def stockouts(cfg: StackConfig) -> dict[str, str]:
    """What a stockout does to each slice kind of a created cluster, by name (:data:`tpu_serving.catalog.capacity.STOCKOUT`; a
    serving slice of a capacity fallback: :func:`~tpu_serving.catalog.capacity.fallback`, with the stack's
    ``observability.capacityWaitMinutes``; one that starts empty: :data:`~tpu_serving.catalog.capacity.FROM_ZERO`). The
    ``capacity.obtained`` output and the ``Production:`` line's capacity gaps both say this, so they cannot disagree
    (new-user review of issue 37 item 2, M1)."""
    empty, idle, fallback = scale_from_zero(cfg), scale_to_zero(cfg), has_fallback(cfg)
    wait = cfg.observability.capacity_wait_minutes
    return {s.name: _stockout(s, empty, idle, fallback, wait) for s in cfg.tpu_slices}


def _stockout(s: TpuSliceConfig, empty: set[str], idle: set[str], fallback: bool, wait_minutes: int) -> str:
    """:func:`stockouts` of one kind, given the pools that start empty, those that may go down to zero, whether the
    serving has a fallback, and the minutes its groups wait for a slice before the capacity-wait ticket opens."""
    c, pools = s.effective_capacity, set(s.pool_names)
    # with a fallback every serving pool takes part in the class: one that a reservation fills from zero takes the
    # class's next step when the reservation has no free slice, and the others are all created empty, whether they
    # start so (empty) or may go down to zero (idle) (GKE review of the issue 37 item 2 fixes, M1)
    if fallback and c is capacity.Capacity.RESERVATION and pools <= empty:
        return capacity.fallback_reserved(wait_minutes)
    if fallback and pools <= empty | idle:
        return capacity.fallback(wait_minutes)
    if c is capacity.Capacity.RESERVATION and pools <= empty:
        return capacity.FROM_ZERO_RESERVED
    if c is not capacity.Capacity.FLEX_START and pools <= empty:
        return capacity.FROM_ZERO
    if pools <= idle:
        return capacity.TO_ZERO
    return capacity.STOCKOUT[c]


def obtained(cfg: StackConfig) -> dict[str, str]:
    """Per slice kind, how it gets its VMs and what a stockout then does (:func:`stockouts`); an existing cluster's
    pools are their owner's."""
    if cfg.cluster.existing is not None:
        return {s.name: "an existing node pool: its capacity is its owner's" for s in cfg.tpu_slices}
    said = stockouts(cfg)
    return {s.name: f"{s.effective_capacity}: {said[s.name]}" for s in cfg.tpu_slices}
