"""``coverage``: a plan that gives the other categories nothing to examine fails, rather than passing empty.

An empty plan, a serving stack whose TPU slices no pod would use (no serving pods, zero replicas), or a
category that examined nothing would otherwise report "all passed" over zero subjects.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.runtime.existing import EXISTING_CLUSTER, EXISTING_TPU_POOLS
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, pods_of
from tpu_serving_tools.runtime.result import CategoryResult, Finding
from tpu_serving_tools.runtime.scheduling import candidate_pools, node_pools
from tpu_serving_tools.runtime.second_apply import READ_BACK_TYPES

EXAMINING: tuple[str, ...] = (
    "scheduling",
    "network",
    "ports",
    "identity",
    "prerequisites",
    "second apply",
    "admission",
)
"""Categories that must examine at least one subject in any plan that declares resources."""

TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
PLATFORM = "tpu-serving:index:TpuPlatform"
POD_CATEGORIES = ("scheduling", "network", "ports", "identity")
"""What a platform stack (:class:`tpu_serving.platform.tpu_platform.TpuPlatform`) gives nothing to: it runs no pod of its own, and
its controllers' pods are in their release manifests, which the provider expands when it deploys."""


def _tpu_pools(view: PlanView) -> list[str]:
    """Node pools of TPU machine types (``ct*``: the Cloud TPU VM families) in the plan, created or existing."""
    return [
        str(r["inputs"].get("name") or r["name"])  # GKE's name, as node_pools has it
        for r in view.of_type(NODE_POOL)
        if str((r["inputs"].get("nodeConfig") or {}).get("machineType", "")).startswith("ct")
    ] + [str(p) for r in view.of_type(EXISTING_TPU_POOLS) for p in r["inputs"].get("poolNames") or ()]


def _all_existing(view: PlanView) -> bool:
    """Whether the plan deploys onto an existing cluster and names every cloud resource existing: no GCP resource to
    admit (an empty plan is no such plan)."""
    return bool(view.of_type(EXISTING_CLUSTER)) and not any(str(r["type"]).startswith("gcp:") for r in view.resources)


def check(view: PlanView, results: Sequence[CategoryResult]) -> CategoryResult:
    """What the other categories examined, judged: nothing examined is a failure."""
    found = [Finding("coverage resources", bool(view.resources), f"{len(view.resources)} resource(s) in the plan")]
    by_name = {r.category: r for r in results}
    for name in EXAMINING:
        total = by_name[name].total if name in by_name else 0
        if name == "admission" and _all_existing(view):
            found.append(Finding(f"coverage {name}", True, "an existing cluster, every cloud resource existing"))
            continue
        if name in POD_CATEGORIES and view.of_type(PLATFORM):
            found.append(Finding(f"coverage {name}", True, "a platform stack: no pod of its own but its controllers'"))
            continue
        if name == "second apply" and not any(r["type"] in READ_BACK_TYPES for r in view.resources):
            found.append(Finding(f"coverage {name}", True, "no resource of a type with a known read-back"))
            continue
        found.append(
            Finding(f"coverage {name}", total > 0, f"{total} subject(s) examined" if total else "examined nothing")
        )
    tpu_pools = _tpu_pools(view)
    if tpu_pools:
        tpu_pods = [p for p in pods_of(view) if any(c.requests.tpu > 0 for c in p.containers)]
        found.append(
            Finding(
                "coverage tpu pods",
                bool(tpu_pods),
                f"{len(tpu_pods)} pod(s) use the TPU slices"
                if tpu_pods
                else f"{len(tpu_pools)} TPU node pool(s) ({', '.join(tpu_pools)}) but no pod requests google.com/tpu "
                "(no serving workload, or zero replicas)",
            )
        )
        if tpu_pods:
            found += _pool_findings(view, tpu_pools, tpu_pods)
    return CategoryResult("coverage", found)


def _pool_findings(view: PlanView, tpu_pools: Sequence[str], tpu_pods: Sequence[Pod]) -> list[Finding]:
    """One finding per TPU node pool: some pod that requests google.com/tpu may land on it (its nodeSelector,
    node affinity and tolerations admit the pool's nodes). A slice no pod can use bills for nothing (new-user
    review 11, M2: a program's leftover v6e-16 beside the two v6e-8 pools it served on)."""
    pools = {p.name: p for p in node_pools(view)}
    found = []
    for name in tpu_pools:
        pool = pools.get(name)
        if pool is None:
            continue  # an existing pool the plan names without its labels
        users = sorted({f"{p.namespace}/{p.owner}" for p in tpu_pods if candidate_pools(p, [pool])})
        found.append(
            Finding(
                f"coverage tpu pool {name}",
                bool(users),
                f"{len(users)} workload(s) may land on it"
                if users
                else f"no pod that requests google.com/tpu selects it ({pool.machine_type}, "
                f"{pool.labels.get(TOPOLOGY_LABEL, 'no topology')}): a slice no pod uses bills for nothing; "
                "serve on it, or remove the pool",
            )
        )
    return found
