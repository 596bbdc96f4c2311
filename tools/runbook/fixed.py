"""The zone-outage lines of a runbook for a LeaderWorkerSet no HPA scales (:mod:`tpu_serving_tools.runbook.command`)."""

from __future__ import annotations

from tpu_serving_tools.runbook.names import Names


def fixed_zone_lines(n: Names, group_map: list[str], wait: list[str]) -> list[str]:
    """A zone outage of a LeaderWorkerSet no HPA scales (library review 4, M8): its lost groups wait Pending for
    their zone while the others serve; a group more in the surviving zone is a patch of ``spec.replicas``, which the
    next ``pulumi up`` sets back unless the program or stack file says the same. ``group_map`` and ``wait`` are the
    runbook's lines that show the groups' pools and wait for them to serve (:mod:`tpu_serving_tools.runbook.command`)."""
    return [
        *group_map,
        "# No HPA: the groups are fixed at the LeaderWorkerSet's spec.replicas. The lost zone's groups wait Pending for",
        "# their zone (the spread keeps them there); the surviving zone's serve. Only if a pool of the surviving zone",
        "# holds no group (a free slice): add one group now, and give the program (or stack file) the same count",
        "# before any pulumi up, which sets spec.replicas back:",
        f"N=$(kubectl -n {n.namespace} get leaderworkerset {n.workload} -o jsonpath='{{.spec.replicas}}')",
        f"kubectl -n {n.namespace} patch leaderworkerset {n.workload} --type merge "
        '-p "{\\"spec\\":{\\"replicas\\":$((N+1))}}"',
        "# After the outage, once every group serves again: the same patch back to N, and the program's count too.",
        *wait,
    ]
