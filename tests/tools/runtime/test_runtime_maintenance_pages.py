"""The host-maintenance pages against the plan's TPU pools (:mod:`tpu_serving_tools.runtime.maintenance_pages`):
two pages of a kind whose zones meet, and a page whose manual-start claim its zones' pools do not bear out (library
review 8, M1 and M4), through the ``objects`` category as ``tpu-serving check`` runs it."""

from __future__ import annotations

import copy
from typing import Any

from tests.conftest import plan_of
from tpu_serving import catalog
from tpu_serving.operations.maintenance import host_maintenance
from tpu_serving_tools.runtime import objects
from tpu_serving_tools.runtime.planview import PlanView

STACK = "vllm-llama33-70b-v6e8"
UNSCHEDULED = "vllm70bv6e-observability-host-maintenance-unscheduled"


def _objects(plan: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    return {f.subject: (f.ok, f.reason) for f in objects.check(PlanView(plan)).findings}


def _plan() -> dict[str, Any]:
    return copy.deepcopy(plan_of(STACK).as_json())


def _resource(plan: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in plan["resources"] if r["name"] == name)


def _second_namespace_page(plan: dict[str, Any], zones: str) -> str:
    """The unscheduled page of another namespace's Observability, on ``zones`` (a Logging filter's zone clause)."""
    page = copy.deepcopy(_resource(plan, UNSCHEDULED))
    page["urn"], page["name"] = page["urn"] + "-big", "big-obs-host-maintenance-unscheduled"
    c = page["inputs"]["conditions"][0]["conditionMatchedLog"]
    c["filter"] = c["filter"].split(" AND (resource.labels.zone=")[0] + f" AND ({zones})"
    page["inputs"]["displayName"] = "big: Unscheduled TPU host maintenance"
    plan["resources"].append(page)
    return str(page["name"])


def test_maintenance_pages_whose_zones_meet_fail_as_declared_twice():
    """Library review 8, M1: chat's page on us-east5-a and -b, big's on us-east5-a; the exact-JSON comparison passed
    them, one VM's notice paged twice with contradictory texts."""
    plan = _plan()
    other = _second_namespace_page(plan, 'resource.labels.zone="us-east5-a"')
    found = {s: v for s, v in _objects(plan).items() if s.startswith("declared twice AlertPolicy")}
    assert len(found) == 1, found
    ok, why = next(iter(found.values()))
    assert not ok and UNSCHEDULED in why and other in why and "VMs in us-east5-a:" in why, why
    assert "ObservabilityArgs.maintenance_zones" in why and "maintenance_shapes" in why, why


def test_maintenance_pages_in_other_zones_or_of_another_kind_pass():
    plan = _plan()
    _second_namespace_page(plan, 'resource.labels.zone="us-east5-c"')
    assert not [s for s in _objects(plan) if s.startswith("declared twice")]


def test_maintenance_page_claims_what_its_zones_pools_take():
    """Every page of the stack: single-host v6e pools take no manual start, and the pages say ``none``."""
    found = {s: v for s, v in _objects(_plan()).items() if s.startswith("maintenance page ") and "manual start" in s}
    assert len(found) == 2 and all(ok for ok, _ in found.values()), found
    assert all("says 'none', as pools vllm70bv6e-v6e8a" in why for _, why in found.values()), found


def test_maintenance_page_claiming_a_manual_start_single_host_v6e_lacks_fails():
    """Library review 8, M4 (obs-startable): ``maintenance_startable=True`` on single-host v6e passed every check."""
    plan = _plan()
    _resource(plan, UNSCHEDULED)["inputs"]["userLabels"][host_maintenance.MANUAL_START_LABEL] = "all"
    ok, why = _objects(plan)[f"maintenance page {UNSCHEDULED} (us-east5-a, us-east5-b): manual start"]
    assert not ok and "says 'all'" in why and "none take one" in why and "maintenance_startable=False" in why, why
    assert "ObservabilityArgs.maintenance_shapes" in why, why


def test_maintenance_page_over_pools_of_both_kinds_must_say_some():
    """A multi-host v5p pool in us-east5-a beside the v6e ones: the page says ``none``, the pools say ``some``."""
    plan = _plan()
    pool = copy.deepcopy(_resource(plan, "vllm70bv6e-v6e8a"))
    pool["urn"], pool["name"] = pool["urn"] + "-v5p", "big-v5p-0"
    pool["inputs"].update(name="big-v5p-0", placementPolicy={"type": "COMPACT", "tpuTopology": "2x2x2"})
    pool["inputs"]["nodeConfig"]["machineType"] = "ct5p-hightpu-4t"
    assert catalog.pool_slice("ct5p-hightpu-4t", "2x2x2") is not None
    plan["resources"].append(pool)
    ok, why = _objects(plan)[f"maintenance page {UNSCHEDULED} (us-east5-a, us-east5-b): manual start"]
    assert not ok and "some take one" in why and "ObservabilityArgs.maintenance_shapes" in why, why


def test_all_startable_is_true_false_or_none_for_some():
    v6e8 = catalog.pool_slice("ct6e-standard-8t", None)
    v5p = catalog.pool_slice("ct5p-hightpu-4t", "2x2x2")
    assert v6e8 is not None and v5p is not None
    assert host_maintenance.all_startable([v5p]) is True
    assert host_maintenance.all_startable([v6e8, v6e8]) is False
    assert host_maintenance.all_startable([v6e8, v5p]) is None


def test_unscheduled_page_over_pools_of_both_kinds_says_which_does_what():
    from tpu_serving.operations.observability_settings import ObservabilitySettings

    args = host_maintenance.unscheduled_policy_args("p", "c", ["us-east5-a"], ObservabilitySettings(), None)
    text = str(args.documentation.content)  # type: ignore[union-attr]
    assert f"if the node's pool takes a manual start ({host_maintenance.MANUAL_START_KINDS}), start it now" in text
    assert "if not (single-host v5e or v6e, TPU7x), Cloud TPU lists no manual start for it" in text
    assert args.user_labels == {host_maintenance.MANUAL_START_LABEL: "some"}
    ticket = host_maintenance.runbook(["us-east5-a"], False, None)
    assert "on a pool that takes a manual start" in ticket and "on the others" in ticket, ticket


def test_maintenance_gate_page_says_what_its_gate_does():
    """Library review 9, M5: the zone pages' claim and the gate's page came from one argument, so a namespace holding
    both zones' pages paged as a watching gate while its gate started maintenance; the check compares the page with
    the gate CronJob's STARTS."""
    plan = _plan()
    found = {s: v for s, v in _objects(plan).items() if s.endswith(": its gate")}
    assert found == {
        "maintenance page vllm70bv6e-observability-maintenance-gate: its gate": (True, "watches, as the page says")
    }
    (cron,) = [r for r in plan["resources"] if r["type"] == "kubernetes:batch/v1:CronJob"]
    spec = cron["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    env = next(e for c in spec["containers"] for e in c.get("env") or () if e["name"] == "STARTS")
    env["value"] = "true"
    ok, why = _objects(plan)["maintenance page vllm70bv6e-observability-maintenance-gate: its gate"]
    assert not ok and "only watches maintenance, but its CronJob's STARTS is true" in why, why
    assert "maintenance_startable=True" in why, why


def test_maintenance_pages_a_gate_or_a_pool_zone_without_its_pages_fails():
    """Library review 10, M1: ``maintenance_gate=False`` beside a running gate, or ``maintenance_zones=()``, dropped the
    gate's and the zones' pages, and the check passed."""
    import copy

    from tests.conftest import plan_of
    from tpu_serving.operations.maintenance.host_maintenance import GATE_TITLE, UPCOMING_METHOD, WATCH_TITLE
    from tpu_serving_tools.runtime import maintenance_pages
    from tpu_serving_tools.runtime.planview import PlanView

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())

    def found(p):  # type: ignore[no-untyped-def]
        return {f.subject: f for f in maintenance_pages.unpaged_findings(PlanView(p))}

    assert all(f.ok for f in found(plan).values()) and len(found(plan)) == 5  # the gate and four TPU pools
    gate = "maintenance page of the gate vllm-llama70b/host-maintenance-gate"
    no_gate = copy.deepcopy(plan)
    no_gate["resources"] = [
        r
        for r in no_gate["resources"]
        if not str(r["inputs"].get("displayName", "")).endswith((GATE_TITLE, WATCH_TITLE))
    ]
    assert not found(no_gate)[gate].ok and "maintenance_gate=True" in found(no_gate)[gate].reason
    no_zone = copy.deepcopy(plan)
    no_zone["resources"] = [
        r for r in no_zone["resources"] if UPCOMING_METHOD not in str(r["inputs"].get("conditions"))
    ]
    pool = found(no_zone)["maintenance page of TPU pool vllm70bv6e-v6e8a"]
    assert not pool.ok and "maintenance_zones" in pool.reason
    no_alerts = copy.deepcopy(plan)
    no_alerts["resources"] = [
        r for r in no_alerts["resources"] if r["type"] != "gcp:monitoring/alertPolicy:AlertPolicy"
    ]
    assert found(no_alerts) == {}  # the production category says it


def test_maintenance_pages_fallback_ticket_findings_pair_the_ticket_with_a_gate_that_watches_a_class():
    """SRE review of the capacity fallback, M1: the 70B stack's gate watches its ComputeClass and a ticket matches its
    run line's fallback field; without that ticket, or with it beside a gate that watches no class, the check fails."""
    from tpu_serving_tools.runtime import maintenance_pages

    plan = _plan()

    def found(p: dict[str, Any]) -> dict[str, Any]:
        return {f.subject: f for f in maintenance_pages.fallback_ticket_findings(PlanView(p))}

    subject = "maintenance page fallback ticket of the gate vllm-llama70b"
    assert [(s, f.ok) for s, f in found(plan).items()] == [(subject, True)]
    untold = copy.deepcopy(plan)
    untold["resources"] = [r for r in untold["resources"] if not r["name"].endswith(host_maintenance.FALLBACK_KEY)]
    assert not found(untold)[subject].ok and "maintenance_fallback=True" in found(untold)[subject].reason
    classless = copy.deepcopy(plan)
    for r in classless["resources"]:
        if r["type"] == "kubernetes:batch/v1:CronJob":
            for c in r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]:
                c["env"] = [e for e in c.get("env") or () if e["name"] != "COMPUTE_CLASS"]
    (orphan,) = found(classless).values()
    assert orphan.subject.endswith("of namespace vllm-llama70b") and not orphan.ok and "never fire" in orphan.reason
