"""``network``: would the flows each backend needs get through the namespace's NetworkPolicies?

The flows come from :mod:`.network_flows`, their verdict from :mod:`.network_policy`; this module
joins them into the category and re-exports their public names.
"""

from __future__ import annotations

from tpu_serving_tools.runtime import network_kv, network_pd
from tpu_serving_tools.runtime.backend_facts import FACT_FLOWS, FactFlow
from tpu_serving_tools.runtime.network_flows import (
    ADDRESS_ARG,
    ADDRESS_VARS,
    COLLECTOR,
    IMPLIED_PORTS,
    SUBNETWORK_TYPE,
    URL,
    needed_flows,
    serving_service,
)
from tpu_serving_tools.runtime.network_policy import (
    POLICY_KIND,
    Flow,
    Peer,
    Workload,
    evaluate,
    peer_of,
    selector_matches,
    workloads,
)
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.result import CategoryResult

__all__ = [
    "ADDRESS_ARG",
    "ADDRESS_VARS",
    "COLLECTOR",
    "FACT_FLOWS",
    "IMPLIED_PORTS",
    "POLICY_KIND",
    "SUBNETWORK_TYPE",
    "URL",
    "FactFlow",
    "Flow",
    "Peer",
    "Workload",
    "check",
    "evaluate",
    "needed_flows",
    "peer_of",
    "selector_matches",
    "serving_service",
    "workloads",
]


def check(view: PlanView) -> CategoryResult:
    """One finding per needed flow, then the KV transfer between disaggregated roles (:mod:`.network_kv`) and the
    picker's prefill/decode routing (:mod:`.network_pd`)."""
    ws = workloads(view)
    needed = [evaluate(view, f) for f in needed_flows(view, ws)]
    return CategoryResult("network", [*needed, *network_kv.findings(view, ws), *network_pd.findings(view, ws)])
