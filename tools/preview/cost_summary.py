"""The preview's cost lines: a plan's ``cost`` output per hour and month by part, and a model stack's share of its
platform's cost (``platformShare``, :mod:`tpu_serving.cost.platform_cost`)."""

from __future__ import annotations

from typing import Any


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def cost_summary(outputs: dict[str, Any], region: str | None = None) -> list[str]:
    """The cost estimate of a plan whose program exports ``cost``: per hour and month, by part; outside the US
    (``region``), that its TPU prices are US-region list prices (new-user review 10, m7)."""
    c = outputs.get("cost")
    if not isinstance(c, dict):
        return []
    hour, month = c["perHour"], c["perMonth"]
    least = "at least " if c.get("unpriced") else ""  # an unpriced part (a TPU7x slice) is left out of the sums
    lines = [
        f"Cost (estimate, {c['currency']}): {least}{_usd(hour['total'])}/hour, {least}{_usd(month['total'])}/month"
        + (" (some parts unpriced: see below)" if least else "")
    ]
    lines += [
        f"  {part:<8} {_usd(hour[part]):>12}/hour {_usd(month[part]):>14}/month"
        for part in ("tpu", "cpu", "storage", "cluster")
        if part in hour
    ]
    peak = c.get("peakPerHour")
    if isinstance(peak, (int, float)) and round(peak - hour["total"], 2) > 0:
        lines.append(
            f"  up to {_usd(peak)}/hour with every slice up (slices that scale from zero cost nothing while empty, but for a reservation's)"
        )
    if c.get("unpriced"):
        lines.append(f"  unpriced (no price found; set prices): {', '.join(c['unpriced'])}")
    bounds = [str(i["what"]) for i in c.get("items", []) if "upper bound" in str(i.get("basis", ""))]
    if bounds:
        lines.append(f"  upper bound, priced on demand for want of a figure: {'; '.join(bounds)}")
    lines.append(f"  {COST_LEFT_OUT}")
    if region and not region.startswith("us-"):
        lines.append(f"  TPU chip-hour prices are US-region list prices; {region}'s may differ: set prices.tpuChipHour")
    lines += share_summary(c.get("platformShare"))
    if outputs.get("cloudResources"):
        lines.append("  nor, on an existing cluster, its management fee and CPU nodes (its owner's)")
    return lines


COST_LEFT_OUT = (
    "not included: the load balancer, Cloud NAT, Managed Prometheus samples, logging and network egress; "
    "CPU, disk and bucket prices are us-central1 list prices in every region (set prices to yours)"
)
"""What the estimate leaves out (components/cost/estimate.py prices TPU chips, CPU nodes, disks, buckets and the
cluster fee; components/catalog/prices.py quotes us-central1 for the CPU and storage figures)."""


def share_summary(share: object) -> list[str]:
    """A model stack's share of its platform's cost, with the rule that set it; nothing without one."""
    if not isinstance(share, dict):
        return []
    lines = [
        f"  platform share: {_usd(share['perHour'])}/hour, {_usd(share['perMonth'])}/month "
        f"(of the platform's {_usd(share['platformPerHour'])}/hour, {_usd(share['platformPerMonth'])}/month)",
        f"    rule: {share['rule']}",
        f"  with the platform share: {_usd(share['withShare']['perHour'])}/hour, "
        f"{_usd(share['withShare']['perMonth'])}/month",
    ]
    if share.get("platformUnpriced"):
        lines.append(f"  the platform's unpriced items: {', '.join(share['platformUnpriced'])}")
    return lines
