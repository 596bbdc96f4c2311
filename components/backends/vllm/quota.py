"""What the namespace quota charges for one vLLM group (:mod:`tpu_serving.common.quota`): its pods, with the containers GKE
injects and the decode leader's routing sidecar."""

from __future__ import annotations

from ...catalog import SliceShape
from ...common.quota import ContainerRequests, PodShape
from .args import VllmRequests
from .facts import GCSFUSE_PREFETCH_REQUESTS, GCSFUSE_SIDECAR_REQUESTS
from .sidecar import ROUTING_SIDECAR_REQUESTS


def group_pods(
    r: VllmRequests,
    shape: SliceShape,
    *,
    gcsfuse: bool,
    prefetch: bool,
    decode: bool = False,
    cache_gib: int | None = None,
) -> tuple[PodShape, ...]:
    """The pods of one group as quota charges them (:mod:`tpu_serving.common.quota`): the leader and the workers, one per
    TPU VM (:attr:`~.args.VllmServingArgs.group_size`), each with the Cloud Storage FUSE sidecars GKE injects when it
    mounts a bucket (:func:`uses_gcsfuse`; the metadata prefetch one for the read-only weights volume) and, on a decode
    leader, the routing sidecar (:func:`sidecar_container`). With the file cache in memory (``cache_gib``), the FUSE
    sidecar requests its size (:func:`.pods.gcsfuse_annotations`)."""
    cpu, memory = GCSFUSE_SIDECAR_REQUESTS
    fuse = ContainerRequests("gke-gcsfuse-sidecar", cpu, f"{cache_gib}Gi" if cache_gib else memory, sidecar=True)
    injected = [fuse] if gcsfuse else []
    if gcsfuse and prefetch:
        injected.append(ContainerRequests("gke-gcsfuse-metadata-prefetch", *GCSFUSE_PREFETCH_REQUESTS, sidecar=True))
    chips = shape.chips_per_vm
    leader_init = [*([ContainerRequests("routing-sidecar", *ROUTING_SIDECAR_REQUESTS, sidecar=True)] if decode else [])]
    leader = PodShape(
        "leader",
        1,
        (ContainerRequests("vllm-leader", r.leader_cpu, r.leader_memory, chips),),
        (*injected, *leader_init),
    )
    if shape.vms == 1:
        return (leader,)
    worker = PodShape(
        "worker", shape.vms - 1, (ContainerRequests("vllm-worker", r.worker_cpu, r.worker_memory, chips),), (*injected,)
    )
    return leader, worker
