"""Small pod-spec builders shared by the workload components."""

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pulumi_kubernetes as k8s

from .settings import described


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


@dataclass(frozen=True)
class ProbeSettings:
    """Health probes of a model server (an HTTP health endpoint on its serving port).

    The startup probe starts at once and keeps trying for ``max_startup_seconds``, so a
    server that loads in 5 minutes is Ready after about 5 minutes, and a slow checkpoint
    load is still tolerated for an hour: readiness never waits on a fixed initial delay.
    """

    max_startup_seconds: int = described(
        "Longest tolerated checkpoint load and warm-up, in seconds.", default=3600, ge=60, le=86400
    )
    startup_period_seconds: int = described(
        "Seconds between startup checks (the readiness granularity).", default=5, ge=1, le=300
    )
    readiness_period_seconds: int = described("Seconds between readiness checks once started.", default=10, ge=1)
    readiness_failure_threshold: int = described("Failed readiness checks before leaving the Service.", default=3, ge=1)
    liveness_period_seconds: int = described("Seconds between liveness checks once started.", default=60, ge=1)
    liveness_failure_threshold: int = described("Failed liveness checks before a restart.", default=10, ge=1)

    @property
    def startup_failure_threshold(self) -> int:
        """Startup checks allowed: enough to cover ``max_startup_seconds``."""
        return math.ceil(self.max_startup_seconds / self.startup_period_seconds)

    @property
    def imposed_seconds_to_ready(self) -> int:
        """Worst-case delay the probes add after the server first answers."""
        return self.startup_period_seconds + self.readiness_period_seconds


def http_probes(
    path: str, port: int, p: ProbeSettings
) -> tuple[k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs, k8s.core.v1.ProbeArgs]:
    """Startup, readiness and liveness probes, all ``GET path`` on ``port``, timed by ``p``."""

    def probe(period: int, failures: int) -> k8s.core.v1.ProbeArgs:
        return k8s.core.v1.ProbeArgs(
            http_get=k8s.core.v1.HTTPGetActionArgs(path=path, port=port, scheme="HTTP"),
            period_seconds=period,
            failure_threshold=failures,
        )

    return (
        probe(p.startup_period_seconds, p.startup_failure_threshold),
        probe(p.readiness_period_seconds, p.readiness_failure_threshold),
        probe(p.liveness_period_seconds, p.liveness_failure_threshold),
    )
