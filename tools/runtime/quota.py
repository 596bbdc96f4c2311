"""Would the namespace quota admit the pods? The quota part of the ``scheduling`` category.

Per ResourceQuota: do all the pods' requests fit, does every container carry the requests the quota
requires, and is there headroom to recreate each restart unit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import Pod, Resources, parse_quantity
from tpu_serving_tools.runtime.result import Finding

# --------------------------------------------------------------------------- quota


@dataclass(frozen=True)
class Quota:
    """A ResourceQuota's hard request limits (cpu cores, memory bytes, TPU chips); None = not limited."""

    namespace: str
    name: str
    cpu: float | None
    memory: float | None
    tpu: float | None


def quotas(view: PlanView) -> list[Quota]:
    """The plan's ResourceQuotas (requests.* and the bare cpu/memory spellings)."""
    out = []
    for q in view.kubernetes_objects("ResourceQuota"):
        hard = (q.get("spec") or {}).get("hard") or {}

        def get(*keys: str, hard: Mapping[str, Any] = hard) -> float | None:
            return next((parse_quantity(hard[k]) for k in keys if k in hard), None)

        meta = q.get("metadata") or {}
        out.append(
            Quota(
                meta.get("namespace", "default"),
                meta["name"],
                get("requests.cpu", "cpu"),
                get("requests.memory", "memory"),
                get(f"requests.{F.TPU_RESOURCE}"),
            )
        )
    return out


def _fmt_cpu(x: float) -> str:
    return f"{x:g} CPU"


def _fmt_memory(x: float) -> str:
    return f"{x / F.GIB:.1f} GiB"


def _fmt_tpu(x: float) -> str:
    return f"{x:g} TPU"


def _over(used: Resources, quota: Quota) -> list[str]:
    out = []
    for res, limit, fmt in (
        ("cpu", quota.cpu, _fmt_cpu),
        ("memory", quota.memory, _fmt_memory),
        ("tpu", quota.tpu, _fmt_tpu),
    ):
        value = getattr(used, res)
        if limit is not None and value > limit + 1e-6:
            out.append(f"{fmt(value)} > {fmt(limit)}")
    return out


QUOTA_ADVICE = (
    "; a program's TenancyArgs.pods counts every pod of the namespace: the serving's pod_sets (its neighbours', the "
    "probe's among them) and the PodSets of the endpoint picker (tpu_serving.traffic.epp.epp_pods) and the gate "
    '(tpu_serving.operations.maintenance.host_maintenance_job.gate_pods) beside it (docs/library-api.md, "Tenancy")'
)
"""What a failing quota finding adds: how a program sizes the quota it derives."""


def quota_findings(pods: Sequence[Pod], quota_list: Sequence[Quota]) -> list[Finding]:
    """Per quota: do all pods fit and may each be admitted; is there headroom to recreate each restart unit."""
    findings: list[Finding] = []
    for q in quota_list:
        mine = [p for p in pods if p.namespace == q.namespace]
        total = sum((p.requests for p in mine), Resources())
        subject = f"quota {q.namespace}/{q.name}"
        missing = [
            f"{p.name}/{c.name} ({res})"
            for p in mine
            for c in p.all_containers
            for res, limit in (("cpu", q.cpu), ("memory", q.memory))
            if limit is not None and res not in c.requested
        ]
        over = _over(total, q)
        if missing:
            findings.append(
                Finding(subject, False, "containers without a request the quota requires: " + ", ".join(missing))
            )
        else:
            findings.append(
                Finding(subject, not over, "; ".join(over) + QUOTA_ADVICE if over else f"uses {total.describe()}")
            )
        units: dict[str, Resources] = {}
        for p in mine:
            units[p.restart_unit] = units.get(p.restart_unit, Resources()) + p.requests
        # Quota is charged when a pod is created, and a terminating pod still counts
        # (https://kubernetes.io/docs/concepts/policy/resource-quotas/: quota tracks pods in a
        # non-terminal phase): while a restart unit is recreated, its old and new pods are both
        # charged, TPU included. Without that headroom the controller's creates are refused and
        # retried with back-off, delaying the restart.
        worst = [(u, _over(total + r, q)) for u, r in units.items()]
        bad = [(u, o) for u, o in worst if o]
        findings.append(
            Finding(
                f"{subject} recreate headroom",
                not bad,
                "; ".join(f"recreating {u} holds old+new pods: {', '.join(o)}" for u, o in bad) + QUOTA_ADVICE
                if bad
                else f"largest restart unit fits twice ({len(units)} units)",
            )
        )
    return findings
