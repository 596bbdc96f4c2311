"""The node-upgrade and host-maintenance lines of a runbook whose workload restarts as a whole, a JobSet (Saxml) or a
PathwaysJob (:mod:`tpu_serving_tools.runbook.command`; SRE review 30, M2): a disruption of any of its slices restarts every
slice (the preview's ``Drain:`` line: "a JobSet restart recreates all its Jobs"), so one pool at a time, the
LeaderWorkerSet stacks' way, stops the service once per pool. These take every pool in one window instead, GKE's
parallel strategy ("Perform host maintenance for nodes running training and inference workloads",
https://cloud.google.com/kubernetes-engine/docs/how-to/perform-host-maintenance-accelerators, read in its stored
English copy: "Use the parallel strategy for the nodes of workloads where you can have one single period of
downtime", also for "workloads where the least disruptive method of performing changes is to have a single window of
complete downtime for all nodes"). Its steps, read in the page's zh-CN copy (the English excerpt found stops before
them), label all the selected nodes at once and wait until the maintenance is done on all of them; they are written
for one node pool and may be adapted to several at the same time."""

from __future__ import annotations

import textwrap

from tpu_serving_tools.runbook.names import POOL_LABEL, Names
from tpu_serving_tools.runbook.waits import STARTED, serving_again, until_back

WHOLE: dict[str, str] = {
    "jobset": "No LeaderWorkerSet: a JobSet restarts as a whole, any slice's upgrade or maintenance restarts every "
    "slice",
    "pathwaysjob": "No LeaderWorkerSet: a PathwaysJob restarts as a whole, any of its VMs' upgrade or maintenance "
    "restarts the whole job and spends one of its restarts (serving.maxRestarts)",
}
"""The workloads that restart as a whole, by kubectl kind, and what a disruption does to them (the preview's
``Drain:`` line)."""
PENDING_POOLS = '"cloud.google.com/gke-nodepool in ($P)"'
"""The nodes of the pools the maintenance block starts (``$P``: those with maintenance pending)."""
STRATEGY = "GKE's parallel strategy, 'Perform host maintenance for nodes running training and inference workloads'"
CPU_POOLS = {
    "jobset": "# The CPU pools in the same window, while the workload is down anyway:",
    "pathwaysjob": "# The CPU pools in the same window: the PathwaysJob's head runs on one, and its upgrade restarts the "
    "job too:",
}


def restarts_as_a_whole(n: Names) -> bool:
    return n.kind in WHOLE


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, width=118, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)


def whole_upgrades(n: Names, tpu: list[str], cpu: list[str]) -> list[str]:
    """The upgrade lines ``tpu`` (the workload's pools') and ``cpu`` (the CPU pools') back to back, then one wait for
    the workload: the CPU pools inside the window too, since a PathwaysJob's head runs on one and its upgrade restarts
    the job as a slice's does."""
    lines = _comment(
        f"{WHOLE[n.kind]}, so one pool at a time would stop the service once per pool. Upgrade them back to back "
        f"instead and wait once, at the end: the workload is down for the whole window ({STRATEGY})."
    )
    lines += tpu
    if cpu:
        lines += [CPU_POOLS[n.kind], *cpu]
    elif n.existing:
        lines.append("# The cluster's CPU pools are not the stack's: upgrade them as the cluster's owner does.")
    return [*lines, *serving_again(n)]


def whole_maintenance(n: Names) -> list[str]:
    """Every pool of the workload with maintenance pending started at once (``$P``, read off the nodes' scheduled
    maintenance label: a pool with none pending would never go down, and the loop that waits for its nodes to come
    back would never end), one wait for all their nodes, then one for the workload."""
    pools = f"{POOL_LABEL} in ({','.join(p.name for p in n.tpu_pools)})"
    column = "'{range .items[*]}{.metadata.labels." + POOL_LABEL.replace(".", "\\.") + '}{"\\n"}{end}\''
    return [
        *_comment(
            f"{WHOLE[n.kind]}, so one pool at a time would stop the service once per pool. Start every pool with "
            f"maintenance pending (the list above) at once instead, one window of downtime for all ({STRATEGY}); the "
            "workload is down until it serves again, at the end."
        ),
        f"P=$(kubectl get nodes -l '{pools},cloud.google.com/scheduled-maintenance-time' -o jsonpath={column} | sort -u"
        " | paste -sd, -)   # the pools with maintenance pending",
        'echo "starting: ${P:?no pool has maintenance pending}"',
        f"{STARTED}   # when the pools are labelled",
        f"kubectl label nodes -l {PENDING_POOLS} cloud.google.com/perform-maintenance=true --overwrite",
        until_back(PENDING_POOLS, "those pools"),
        *serving_again(n),
    ]
