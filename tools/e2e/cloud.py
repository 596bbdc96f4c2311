"""What the cloud does for a cluster that no local component does: GKE's load balancer controller.

On GKE, a ``type: LoadBalancer`` Service gets its address from Google's service controller, which writes
``status.loadBalancer.ingress`` once the forwarding rule exists; the Pulumi Kubernetes provider waits for that
address before it calls the Service created (its Service await: an external Service is ready once it has an
ingress). No local component plays that part, so :class:`LoadBalancers` writes an address from
:data:`LB_CIDR_PREFIX` (loopback: nothing is routed anywhere) to each such Service, as the controller would.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .kube import ApiError, Kube

LB_CIDR_PREFIX = "127.4.0."
"""Load balancer addresses: 127.4.0.1 onwards."""


@dataclass
class LoadBalancers:
    """Gives every LoadBalancer Service an ingress address, in a background thread, until stopped."""

    kube: Kube
    interval: float = 0.5
    given: dict[str, str] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LoadBalancers:
        threading.Thread(target=self._run, daemon=True, name="load-balancers").start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sweep()
            except (ApiError, OSError):
                continue  # the API server may be stopping; the next sweep tries again

    def sweep(self) -> None:
        for svc in self.kube.list("v1", "Service"):
            if (svc.get("spec") or {}).get("type") != "LoadBalancer":
                continue
            if ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress"):
                continue
            key = f"{svc['metadata']['namespace']}/{svc['metadata']['name']}"
            address = self.given.setdefault(key, f"{LB_CIDR_PREFIX}{len(self.given) + 1}")
            ref = {"apiVersion": "v1", "kind": "Service", "metadata": svc["metadata"]}
            self.kube.patch(ref, {"status": {"loadBalancer": {"ingress": [{"ip": address}]}}}, subresource="status")
