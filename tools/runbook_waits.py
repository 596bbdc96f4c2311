"""The runbooks' waits: loops that end by themselves, so that a procedure pasted as a script goes on only once the
cluster has done what the step waited for (a ``get -w`` never ends: GKE review round 62)."""

from __future__ import annotations


def ready_again(namespace: str, workload: str) -> str:
    """A loop that ends once the LeaderWorkerSet's Ready groups are back to its replicas (a ``get -w`` never ends, and
    a procedure pasted as a script stopped at it: GKE review round 62)."""
    read = f"kubectl -n {namespace} get leaderworkerset {workload} -o jsonpath='{{.status.readyReplicas}} {{.spec.replicas}}'"
    return f'until R=$({read}) && [ "${{R% *}}" -ge "${{R#* }}" ] 2>/dev/null; do sleep 30; done   # wait: READY back to the replicas'


def grown(namespace: str, workload: str) -> str:
    """A loop that ends once the LeaderWorkerSet holds more groups than ``$N``: the HPA acts on a raised minimum at
    its next sync, not at once (kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go ``updateHPA`` ->
    ``enqueueHPA`` -> ``queue.AddRateLimited``, a 15 s resync by default; measured 12 s on the e2e control plane by SRE
    review 29), so a READY loop read at once sees the old replicas all Ready and ends before the group exists."""
    read = f"kubectl -n {namespace} get leaderworkerset {workload} -o jsonpath='{{.spec.replicas}}'"
    return f'until [ "$({read})" -gt "$N" ] 2>/dev/null; do sleep 5; done   # wait: the HPA has added the group'
