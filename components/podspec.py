"""Small pod-spec builders shared by the workload components."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi_kubernetes as k8s


def tcp_probe(port: int, period_seconds: int = 10, failure_threshold: int = 3) -> k8s.core.v1.ProbeArgs:
    """A probe that passes once ``port`` accepts TCP connections."""
    return k8s.core.v1.ProbeArgs(
        tcp_socket=k8s.core.v1.TCPSocketActionArgs(port=port),
        period_seconds=period_seconds,
        failure_threshold=failure_threshold,
    )


def requests(cpu: str, memory: str, extended: Mapping[str, str] | None = None) -> k8s.core.v1.ResourceRequirementsArgs:
    """CPU/memory requests; extended resources (``google.com/tpu``) are requested and limited alike."""
    return k8s.core.v1.ResourceRequirementsArgs(
        requests={"cpu": cpu, "memory": memory, **(extended or {})},
        limits=dict(extended) if extended else None,
    )
