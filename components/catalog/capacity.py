"""How a TPU slice obtains its VMs: the capacity types GKE sells, their rules and their node pool fields.

Pure data plus rules; :mod:`tpu_serving.pools.nodepool` renders the fields, the stack file and the
component arguments check the rules. Sources, each where its rule is used:

- Spot VMs and reservations in GKE, specific or any:
  https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations
  (consuming any reservation is a GKE Standard feature; a specific one names the reservation).
- TPU reservations are billed through a committed use discount, capacity only with one:
  https://cloud.google.com/tpu/docs/consumption-options
- Flex-start (Dynamic Workload Scheduler) for TPU slice node pools: the pool has
  autoscaling with no initial nodes, consumes no reservation, and its VMs run for at most
  seven days (https://cloud.google.com/kubernetes-engine/docs/how-to/dws-flex-start-training-tpu,
  https://cloud.google.com/kubernetes-engine/docs/concepts/dws). Google's own xpk creates
  flex-start TPU pools with ``--flex-start --enable-autoscaling --location-policy=ANY
  --reservation-affinity=none --no-enable-autorepair --max-nodes=<VMs>``
  (AI-Hypercomputer/xpk ``src/xpk/core/capacity.py``), which is what is rendered here.
- Queued provisioning (``--enable-queued-provisioning``, nodes only through a
  ProvisioningRequest): GKE documents it for GPUs
  (https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest: "optimize GPU
  obtainability ... with GPUs"); xpk enables it for GPU clusters only
  (``src/xpk/utils/kueue.py``: ``is_queued_cluster`` is true for ``AcceleratorType.GPU``
  alone). No GKE page documents it for TPU slices, and the serving workloads create no
  ProvisioningRequest, so it is refused for TPU slices: not a choice (the valid values a refusal lists name only what
  GKE gives a TPU slice), but a value a setting answers with :data:`NOT_FOR_TPU` (new-user review of the capacity
  fallback, m2: the choices listed ``queued`` as valid).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import BeforeValidator

from ..common.validation import Choice

FLEX_START_MAX_HOURS = 7 * 24
"""Flex-start VMs run for at most seven days (https://cloud.google.com/kubernetes-engine/docs/concepts/dws)."""


class Capacity(Choice):
    """How the VMs of a slice are obtained and billed."""

    ON_DEMAND = "on-demand"
    SPOT = "spot"
    RESERVATION = "reservation"
    ANY_RESERVATION = "any-reservation"
    FLEX_START = "flex-start"


NOT_FOR_TPU: Mapping[str, str] = {
    "queued": "queued provisioning (ProvisioningRequest) is documented for GPU node pools only, and the serving "
    "workloads create no ProvisioningRequest; use flex-start for TPU slices",
}
"""Capacity types GKE has but not for TPU slices, and why (the module's sources)."""


def _tpu_capacity(value: object) -> object:
    if isinstance(value, str) and value in NOT_FOR_TPU:
        raise ValueError(f"{NOT_FOR_TPU[value]}; valid: {', '.join(repr(str(c)) for c in Capacity)}")
    return value


TpuCapacity = Annotated[Capacity, BeforeValidator(_tpu_capacity)]
"""A stack file's slice capacity: a :class:`Capacity`, and a GKE capacity type it cannot take refused with its reason.
The component argument stays a plain :class:`Capacity`, whose refusal lists the valid values: the provider's schema
inference takes no validator in a type (pulumi ``provider/experimental/analyzer.py``: ``issubclass()`` of it)."""


def effective(capacity: str, spot: bool, reservation: str | None) -> Capacity:
    """The capacity a slice gets, with the older ``spot: true`` / ``reservation: x`` spellings still honoured.

    Before ``capacity`` existed a slice said ``spot: true`` for Spot VMs or named a
    ``reservation`` to consume it; with ``capacity`` left at ``on-demand`` they still mean that.
    """
    chosen = Capacity(capacity)
    if chosen is Capacity.ON_DEMAND and spot:
        return Capacity.SPOT
    if chosen is Capacity.ON_DEMAND and reservation is not None:
        return Capacity.RESERVATION
    return chosen


def problems(capacity: str, spot: bool, reservation: str | None, max_run_duration_hours: int | None) -> list[str]:
    """Combinations GKE (or this library, where it says so) refuses, each naming the fields involved.

    The field names are the Python ones (``max_run_duration_hours``); the stack file's
    checks spell them in camelCase.
    """
    try:
        chosen = Capacity(capacity)
    except ValueError:
        return []  # the type check reports the value itself
    found = []
    if spot and reservation is not None:
        found.append("spot and reservation are mutually exclusive: Spot VMs consume no reservation")
    elif spot and chosen not in (Capacity.ON_DEMAND, Capacity.SPOT):
        found.append(f"spot = true and capacity = {chosen} are two capacity types; set capacity alone")
    if reservation is not None and chosen not in (Capacity.ON_DEMAND, Capacity.RESERVATION):
        what = "consumes any matching reservation" if chosen is Capacity.ANY_RESERVATION else "consumes no reservation"
        found.append(
            f"reservation = {reservation!r} with capacity = {chosen}: {chosen} {what}; "
            "a named reservation needs capacity = reservation"
        )
    if chosen is Capacity.RESERVATION and reservation is None:
        found.append("capacity = reservation needs reservation (the name of the specific reservation to consume)")
    if max_run_duration_hours is not None and chosen is not Capacity.FLEX_START:
        found.append(
            f"max_run_duration_hours = {max_run_duration_hours} with capacity = {chosen}: "
            "the maximum run duration belongs to flex-start VMs"
        )
    return found


def scales_from_zero(capacity: Capacity) -> bool:
    """Whether the slice's pool starts empty and the autoscaler adds the whole slice on demand (flex-start)."""
    return capacity is Capacity.FLEX_START


STOCKOUT: dict[Capacity, str] = {
    Capacity.ON_DEMAND: "a stockout fails the node pool's creation, and so pulumi up (Compute Engine "
    "ZONE_RESOURCE_POOL_EXHAUSTED; a slice of several VMs is created whole or not at all); a slice lost to a repair or "
    "host maintenance waits for capacity, serving nothing meanwhile; a reservation (capacity: reservation) holds it",
    Capacity.SPOT: "a stockout fails the node pool's creation, and so pulumi up, as on demand; Spot VMs are also "
    "preempted whenever Compute Engine needs them back, and the slice then waits for capacity",
    Capacity.RESERVATION: "the named reservation holds the VMs: a zone's stockout does not touch them; pulumi up "
    "fails only when the reservation has no free slice of this shape",
    Capacity.ANY_RESERVATION: "a matching reservation holds the VMs while it has a free slice; without one the pool "
    "takes on-demand VMs, and a stockout then fails the node pool's creation, and so pulumi up",
    Capacity.FLEX_START: "the pool starts empty, so pulumi up succeeds whatever the stock; the pods stay Pending "
    "until Dynamic Workload Scheduler obtains the whole slice, whose VMs then run for at most seven days",
}
"""What a stockout does, by capacity type, for the preview (the ``capacity.obtained`` output). A zone without free VMs
answers a new request ZONE_RESOURCE_POOL_EXHAUSTED, unrelated to quota, and running VMs are not affected (Compute
Engine, "Troubleshooting resource availability errors", cloud.google.com/compute/docs/troubleshooting/
troubleshooting-resource-availability); "Hosts in a multi-host TPU slice node pool are treated as one atomic unit. If
GKE cannot deploy one node in the slice, no node in the slice is deployed" and a repair "shuts down all TPU VMs in the
slice" (cloud.google.com/tpu/docs/tpus-in-gke, "Multi-host TPU slice node pools"); reservations hold capacity for the
VMs that consume them (https://cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations); flex-start as
in this module's docstring."""

FROM_ZERO = (
    "the pool starts empty and the autoscaler adds the whole slice when a group needs it, so pulumi up succeeds "
    "whatever the stock; in a stockout that group stays Pending until capacity returns"
)
"""What a stockout does to a serving slice that scales from zero (an HPA's extra group, a surge rollout's spare):
the cluster autoscaler's scale-up fails, not the node pool's creation (:data:`STOCKOUT`'s sources)."""


def capacity_wait(wait_minutes: int | None) -> str:
    """When the groups waiting for a slice under a capacity fallback open a ticket: after ``wait_minutes``, the stack's
    ``observability.capacityWaitMinutes`` (:func:`tpu_serving.operations.alerts.serving_alerts.capacity_wait_alert`); None: a
    program's plan with no capacity-wait alert (:func:`tpu_serving_tools.runtime.node_pool.capacity_wait_minutes`)."""
    if wait_minutes is None:
        return "no capacity-wait ticket opens (the plan has no alert on the waiting groups)"
    return (
        f"after {wait_minutes} minutes (observability.capacityWaitMinutes) the 'Serving groups waiting for capacity' "
        "ticket opens"
    )


def fallback_reserved(wait_minutes: int | None) -> str:
    """What a stockout does to a serving slice of a capacity fallback that a specific reservation fills from zero: the
    reservation, then the class's next step (:func:`fallback`, :data:`FROM_ZERO_RESERVED`); the ticket after
    ``wait_minutes`` (:func:`capacity_wait`)."""
    return (
        "the pool starts empty and the autoscaler adds the whole slice from the named reservation when a group needs "
        "it (the reservation holds and bills its VMs meanwhile); with no free slice there, GKE makes one of the class's "
        "next step (serving.fallback); while no step has a slice the group stays Pending, and "
        + capacity_wait(wait_minutes)
    )


FROM_ZERO_RESERVED = (
    "the pool starts empty and the autoscaler adds the whole slice when a group needs it, from the named reservation, "
    "which holds (and bills) its VMs meanwhile: no stockout reaches it; a reservation with no free slice of this "
    "shape leaves that group Pending"
)
"""What a stockout does to a serving slice that scales from zero on a specific reservation: nothing; the reservation
bills its VMs used or not (:attr:`tpu_serving.cost.estimate.SliceUsage.chips_billed`)."""

TO_ZERO = (
    "the pool is created with its whole slice (a stockout then fails pulumi up, as a fixed pool's creation) and the "
    "autoscaler removes the slice once no group runs on it, as after a group moved to a free slice of its shape; "
    "taking it back then waits for capacity like a pool that scales from zero"
)
"""What a stockout does to a serving slice kept on that may go down to zero (:func:`tpu_serving.config.slice_capacity.scale_to_zero`):
its creation as :data:`STOCKOUT` says, its scale-up afterwards as :data:`FROM_ZERO`."""


def fallback(wait_minutes: int | None) -> str:
    """What a stockout does to a serving slice of a capacity fallback (:class:`tpu_serving.pools.compute_class.TpuComputeClass`),
    the capacity-wait ticket after ``wait_minutes`` (:func:`capacity_wait`; new-user review m7: the text named the
    setting, not the stack's minutes): its pool is created with none of its VMs
    (:func:`tpu_serving.pools.nodepool.node_pool_args`), so no creation meets it; the class's priorities then answer it at
    scale-up (GKE, "About custom ComputeClasses", "Fallback compute priorities": "If the most preferred configuration
    is unavailable, GKE automatically selects the next configuration in the hierarchy",
    https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes)."""
    return (
        "the pool is created empty and the groups that select the serving's ComputeClass bring its slice: the autoscaler "
        "adds it, or in a stockout GKE makes a slice of the class's next step (serving.fallback), so pulumi up succeeds "
        f"whatever the stock; while no step has a slice the groups stay Pending, and {capacity_wait(wait_minutes)}; a "
        "pool that already holds its slice keeps it until no group runs on it"
    )
