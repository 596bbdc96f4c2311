"""Where the Cloud Storage FUSE file cache of the weights lives: the TPU VM's memory, or its boot disk.

Every group (re)start downloads the whole model through the ``gcsfuse`` loader's file cache (parallel downloads need
it: :data:`.facts.WEIGHTS_MOUNT_OPTIONS`). The sidecar GKE injects keeps that cache in the pod's ``gke-gcsfuse-cache``
volume, an ``emptyDir`` on the node's boot disk unless the pod declares a volume of that name itself
(GoogleCloudPlatform/gcs-fuse-csi-driver v1.24.4 pkg/webhook/sidecar_spec.go l.322-342
``GetSidecarContainerVolumeSpec``: the cache volume is injected only when the pod has none;
pkg/webhook/mutatingwebhook.go l.362-363). On a ``pd-balanced`` boot disk that write and read-back of 130 GiB (Llama
3.3 70B in bf16) is bounded by the disk's throughput, during the very reload that leaves the stack a group short (GKE
review round 43, M3). GKE lets the pod bring its own "custom read cache volume" ("Configure resources for the sidecar
container", https://cloud.google.com/kubernetes-engine/docs/how-to/cloud-storage-fuse-csi-driver-sidecar), and a
memory-backed one is what the driver's own end-to-end suite mounts ("should cache the data using in-memory custom cache volume", v1.24.4 test/e2e/testsuites/file_cache.go
l.170-191).

In memory the cache is the model's size (:func:`cache_gib`) in a memory-backed ``emptyDir`` of that ``sizeLimit``, the
file cache is capped just below it (``file-cache:max-size-mb``; unbounded, gcsfuse fills the volume and its writes
fail), and the sidecar that writes it asks the scheduler and the namespace quota for it
(``gke-gcsfuse/memory-request``: a tmpfs page counts against the memory of the container that wrote it; the webhook
gives the sidecar that request with the unlimited ``memory-limit: "0"`` the stack already sets, pkg/webhook/config.go
l.101-121 ``populateResource``). It holds only while the VM's memory holds it beside the pod's own requests:
``auto`` picks memory where it does (a ``ct6e-standard-8t`` host has 1440 GiB), the boot disk where it does not (a
``ct5lp-hightpu-4t`` host has 192 GiB: :mod:`tpu_serving.catalog.machines`).
"""

from __future__ import annotations

import math
from typing import Protocol

from ...catalog.machines import MACHINES, SYSTEM_MEMORY_BYTES
from ...common.quota import memory_bytes
from ...common.validation import Choice
from .facts import GCSFUSE_SIDECAR_REQUESTS


class FileCache(Choice):
    """Where the ``gcsfuse`` loader's file cache of the weights lives."""

    AUTO = "auto"
    """In the VM's memory when it holds the cache beside the pod's requests, else on the boot disk."""
    MEMORY = "memory"
    """A memory-backed volume the size of the model; the sidecar requests that memory."""
    BOOT_DISK = "boot-disk"
    """The driver's default: an emptyDir on the node's boot disk, which must hold the whole model."""


MEMORY_REQUEST = "gke-gcsfuse/memory-request"
"""The sidecar's memory request annotation (v1.24.4 pkg/webhook/mutatingwebhook.go l.54)."""
CACHE_VOLUME = "gke-gcsfuse-cache"
"""The volume name the driver's webhook takes for the sidecar's file cache (sidecar_spec.go l.35)."""
HEADROOM = 1.05
"""The cache holds the weights' bytes and the snapshot's small files (config, tokenizer): 5% over the weights."""
MAX_SIZE_SLACK_MIB = 512
"""The file cache's cap (``file-cache:max-size-mb``) stays this far below the volume's ``sizeLimit``, so gcsfuse
evicts before the volume is full."""
GIB = 2**30


def cache_gib(weights_gib: float) -> int:
    """GiB the file cache needs for ``weights_gib`` of weights, rounded up."""
    return math.ceil(weights_gib * HEADROOM) + 1


class PodRequests(Protocol):
    """The memory a group's pods request (:class:`~.args.VllmRequests`)."""

    @property
    def leader_memory(self) -> str: ...
    @property
    def worker_memory(self) -> str: ...
    @property
    def shm_size(self) -> str: ...


def pod_memory(r: PodRequests) -> int:
    """Bytes of memory the largest pod of a group requests for itself: its container (leader or worker) and
    ``/dev/shm``."""
    return max(memory_bytes(r.leader_memory), memory_bytes(r.worker_memory)) + memory_bytes(r.shm_size)


def memory_left(machine_type: str, pod_memory: int) -> float | None:
    """Bytes of a VM of ``machine_type`` left for the cache once the largest pod's own requests (``pod_memory``: its
    container and ``/dev/shm``), the sidecar's default request and GKE's reservation and system allowance are taken
    (as :meth:`~tpu_serving.catalog.machines.Machine.fits` counts them); None for a machine type the catalog does not know."""
    machine = MACHINES.get(machine_type)
    if machine is None:
        return None
    return machine.allocatable_memory - SYSTEM_MEMORY_BYTES - pod_memory - memory_bytes(GCSFUSE_SIDECAR_REQUESTS[1])


def memory_gib(choice: FileCache, machine_type: str, pod_memory: int, weights_gib: float | None) -> int | None:
    """GiB of a memory-backed file cache, or None: the cache stays on the boot disk (``boot-disk``; ``auto`` where the
    VM's memory does not hold it; a size unknown)."""
    if choice == FileCache.BOOT_DISK or weights_gib is None:
        return None
    gib = cache_gib(weights_gib)
    left = memory_left(machine_type, pod_memory)
    if choice == FileCache.MEMORY or (left is not None and gib * GIB <= left):
        return gib
    return None


def memory_problem(machine_type: str, pod_memory: int, weights_gib: float | None) -> str:
    """Why ``memory`` cannot hold the file cache on this VM, or ``""``: the sidecar's request would make the pod
    unschedulable."""
    if weights_gib is None:
        return ""
    gib, left = cache_gib(weights_gib), memory_left(machine_type, pod_memory)
    if left is None or gib * GIB <= left:
        return ""
    return (
        f"a {machine_type} VM has {max(left, 0) / GIB:.0f} GiB left beside the pod's requests, and the model's cache "
        f"needs {gib} GiB; use boot-disk or auto"
    )


MAX_SIZE = "file-cache:max-size-mb:"


def max_size_option(gib: int | None) -> str:
    """``file-cache:max-size-mb``: unbounded on the boot disk (the disk check sizes it), capped in memory."""
    return f"{MAX_SIZE}-1" if gib is None else f"{MAX_SIZE}{gib * 1024 - MAX_SIZE_SLACK_MIB}"
