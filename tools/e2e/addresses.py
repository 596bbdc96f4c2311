"""Each run's own loopback addresses: a block ``127.<b>.0.0/16`` held for the run's lifetime.

Runs on one machine (two developers' sessions, a test and a runner) must not share a pod IP: every controller binds
its pod's IP with the same ports. A run claims a free block with an exclusive lock on a file of
``<tmp>/tpu-serving-e2e-blocks/`` (released when the run stops or its process dies) and lays out in it:

- pod CIDRs: Node ``n`` gets ``198.18.<n>.0/24`` (``n`` below :data:`MAX_NODES`), in the benchmarking range of
  RFC 2544 (198.18.0.0/15), which nothing on this machine routes and nothing ever dials: a pod IP must be an address
  an EndpointSlice may hold, and a loopback one may not (k8s.io/kubernetes v1.36.3
  ``pkg/apis/core/validation/validation.go`` 8433-8434, applied to slices by ``pkg/apis/discovery/validation/
  validation.go`` 123), so a Service selecting 127.x pods never gets an endpoint, and the Pulumi Kubernetes
  provider's await of such a Service never ends;
- stand-in addresses: the process that stands in for pod ``198.18.<n>.<m>`` listens on ``127.<b>.<n>.<m>``
  (:meth:`AddressBlock.stand_in`), where the Service forwarder sends that pod's traffic;
- Node InternalIPs: ``127.<b>.250.<n+1>``;
- Service ClusterIPs: ``127.<b>.208.0/20`` (the ``kubernetes`` Service takes its first address);
- kwok's ``--cidr`` (pods of a Node without a pod CIDR): ``198.18.240.0/24``.

The control plane itself listens on 127.0.0.1, on ports the OS hands out.
"""

from __future__ import annotations

import fcntl
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

BLOCKS = range(16, 255)
"""Second octets a run may take (127.0.x.x, where the control plane listens, and low blocks are left alone)."""
MAX_NODES = 200
POD_PREFIX = "198.18."
"""Every pod IP of a run starts so (RFC 2544's benchmarking range: routed nowhere here, dialed by nothing)."""
LOCKS = Path(tempfile.gettempdir()) / "tpu-serving-e2e-blocks"


class NoFreeBlock(RuntimeError):
    """Every block is held by a run."""


@dataclass
class AddressBlock:
    """The addresses of one run (``block``: the second octet), held while :attr:`lock` is open."""

    block: int
    lock: IO[str] | None = None
    nodes_made: int = field(default=0)

    @property
    def service_cidr(self) -> str:
        return f"127.{self.block}.208.0/20"

    @property
    def kubernetes_service_ip(self) -> str:
        return f"127.{self.block}.208.1"

    @property
    def kwok_cidr(self) -> str:
        return f"{POD_PREFIX}240.0/24"

    def stand_in(self, pod_ip: str) -> str:
        """The loopback address where the process standing in for the pod of ``pod_ip`` listens."""
        if not pod_ip.startswith(POD_PREFIX):
            raise ValueError(f"pod IP {pod_ip} is not in {POD_PREFIX}0.0/16, the run's pod range")
        return f"127.{self.block}.{pod_ip.removeprefix(POD_PREFIX)}"

    @property
    def prefix(self) -> str:
        """``127.<b>.``: every pod, Node and Service address of the run starts so."""
        return f"127.{self.block}."

    def node(self, n: int) -> tuple[str, str]:
        """Node ``n``'s InternalIP and pod CIDR."""
        if not 0 <= n < MAX_NODES:
            raise ValueError(f"a run holds at most {MAX_NODES} kwok Nodes (one /24 of 127.{self.block}.0.0/16 each)")
        return f"127.{self.block}.250.{n + 1}", f"{POD_PREFIX}{n}.0/24"

    def next_node(self) -> tuple[str, str]:
        """The next Node's InternalIP and pod CIDR."""
        n = self.nodes_made
        self.nodes_made += 1
        return self.node(n)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.close()
            self.lock = None


def claim(locks: Path = LOCKS) -> AddressBlock:
    """A block no other live run holds, locked until :meth:`AddressBlock.release` (or the process's end)."""
    locks.mkdir(parents=True, exist_ok=True)
    for block in random.sample(list(BLOCKS), len(BLOCKS)):
        handle = (locks / f"{block}.lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return AddressBlock(block, handle)
    raise NoFreeBlock(f"every address block under {locks} is held by a run")
