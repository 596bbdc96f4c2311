"""tpu_serving_tools.preview.library: the capacity and cost lines of a program without a ``TpuServingDeployment``,
read off its node pools, against the stack's own estimate from its settings (two independent readings)."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.preview import library as library_preview
from tpu_serving_tools.preview import stack as preview
from tpu_serving_tools.preview.offline import Plan
from tpu_serving_tools.runtime import program_gaps

STACKS = ["vllm-llama33-70b-v6e8", "vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16", "saxml-175b-v5e32x2"]


def without_outputs(plan: Plan) -> Plan:
    """``plan`` as a program that builds the components itself makes it: no stack outputs."""
    bare = copy.copy(plan)
    bare.outputs = {}
    return bare


def boot_disks(cost: dict) -> float:
    (item,) = [i for i in cost["items"] if i["what"].startswith("boot disks")]
    return float(item["perHour"])


@pytest.mark.parametrize("stack", STACKS)
def test_library_preview_cost_agrees_with_the_stacks_estimate(stack: str):
    """User review 11, m3: a program's preview had no cost line. Its estimate from the node pools equals the stack's
    from its settings on TPU, CPU, boot disks, the cluster fee and the peak (buckets: the stack's expected sizes only)."""
    plan = plan_of(stack)
    ours, theirs = plan.outputs["cost"], library_preview.cost_lines(without_outputs(plan))
    assert theirs is not None
    for part in ("tpu", "cpu", "cluster"):
        assert theirs["perHour"][part] == pytest.approx(ours["perHour"][part], abs=0.011), part
    assert theirs["perHour"]["tpu"] > 0
    assert boot_disks(theirs) == pytest.approx(boot_disks(ours), abs=0.0002)
    bucket_hour = sum(i["perHour"] or 0 for i in ours["items"] if i["what"].startswith("bucket "))
    assert theirs["peakPerHour"] == pytest.approx(ours["peakPerHour"] - bucket_hour, abs=0.02)


def test_library_preview_summary_prints_capacity_and_cost_for_a_program():
    plan = without_outputs(plan_of("vllm-llama33-70b-v6e8"))
    text = preview.summary(plan)
    assert "Cost (estimate, USD): " in text and "  tpu " in text
    (head,) = [line for line in text.splitlines() if line.startswith("Capacity (read off the node pools")]
    slices = [line for line in text.splitlines() if line.startswith("  slices ")]
    assert slices and all("reservation" in line for line in slices), slices
    assert "vllm70bv6e-v6e8c" in " ".join(slices) and "the pool starts empty" in " ".join(slices)


def test_library_preview_pool_size_reads_counts_and_autoscaling():
    size = library_preview.pool_size
    assert size({"nodeCount": 2, "nodeLocations": ["a", "b"]}) == library_preview.PoolSize(4, 4)
    assert size({"initialNodeCount": 1}) == library_preview.PoolSize(1, 1)
    auto = {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 3}, "nodeLocations": ["a", "b", "c"]}
    assert size(auto) == library_preview.PoolSize(3, 9)
    assert size({"autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4}}) == library_preview.PoolSize(0, 4)
    # a capacity fallback's pool, created empty, runs the slice its standing groups bring; a pool of no class does not
    classed = {"nodeCount": 0, "autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4}}
    classed["nodeConfig"] = {"labels": {"cloud.google.com/compute-class": "c"}}
    assert size(classed) == library_preview.PoolSize(4, 4)
    assert size({**classed, "nodeConfig": {}}) == library_preview.PoolSize(0, 4)


def test_library_preview_cost_outside_the_us_says_the_tpu_prices_are_us_ones():
    """New-user review 10, m7: a europe-west4 stack was priced at US TPU prices without a word."""
    cost = {"cost": library_preview.cost_lines(without_outputs(plan_of("vllm-llama33-70b-v6e8")))}
    assert not [x for x in preview.cost_summary(cost, "us-east5") if "US-region" in x]
    (line,) = [x for x in preview.cost_summary(cost, "europe-west4") if "US-region" in x]
    assert "europe-west4's may differ: set prices.tpuChipHour" in line
    assert library_preview.region(plan_of("vllm-llama33-70b-v6e8")) == "us-east5"
    assert library_preview.region(without_outputs(plan_of("vllm-llama33-70b-v6e8"))) == "us-east5"


def test_library_preview_program_lines_say_what_a_program_adds_itself():
    """Library review 1, M4: a program lost the stack file's holds, alerts, quota and policies without a word."""
    assert library_preview.program_lines(plan_of("vllm-llama33-70b-v6e8")) == []  # a TpuServingDeployment
    bare = copy.copy(plan_of("vllm-llama33-70b-v6e8"))
    bare.resources = [r for r in bare.resources if r.type != library_preview.DEPLOYMENT]
    (line,) = library_preview.program_lines(bare)
    # the production example declares all of it (its cluster holds node upgrades): nothing said missing (review 2, M6)
    assert line.startswith("Program: built from the components") and "declares the components a stack file's" in line
    bare.resources = [r for r in bare.resources if r.type != "tpu-serving:index:Tenancy"]
    (line,) = library_preview.program_lines(bare)
    assert line.endswith(
        "and this program does not declare: a namespace with its quota, operators and NetworkPolicies (Tenancy)"
    )


def test_library_preview_program_lines_do_not_deny_the_alerts_line_of_a_program_with_observability():
    """Library review 3, m3: the Program: line said the preview had no Alerts line, above the Alerts line its
    Observability gives it."""
    bare = copy.copy(plan_of("vllm-llama33-70b-v6e8"))
    bare.resources = [r for r in bare.resources if r.type != library_preview.DEPLOYMENT]
    (line,) = library_preview.program_lines(bare)
    # library review 7, m5: its prober's Deployment gives it a Probe line, which the Program: line no longer denies
    assert "no Production, Upgrades, Rollout, Drain or Quota line" not in line
    assert "no Upgrades, Rollout, Drain, Quota or Verified line" in line
    bare.resources = [r for r in bare.resources if r.type != "tpu-serving:index:Observability"]
    bare.resources = [r for r in bare.resources if not r.name.endswith("-prober")]
    (line,) = library_preview.program_lines(bare)
    assert "no Upgrades, Rollout, Drain, Quota, Alerts, Probe or Verified line" in line


def test_preview_probe_summary_names_each_probe_of_a_program_with_several():
    """Library review 7, m5: two namespaces' probes, and the Probe line named the first only."""
    from types import SimpleNamespace

    from tests.fixtures.twin import twin_namespace
    from tpu_serving_tools.preview.stack import probe_summary

    plan = plan_of("vllm-llama33-70b-v6e8")
    twin = twin_namespace(plan.as_json(), "vllm-llama70b", "second")
    lines = probe_summary([SimpleNamespace(type=r["type"], inputs=r["inputs"]) for r in twin["resources"]])
    assert [x.split(":", 2)[:2] for x in lines] == [["Probe", " vllm-llama70b"], ["Probe", " second"]], lines
    assert len(probe_summary(plan.resources)) == 1 and not probe_summary(plan.resources)[0].startswith("Probe: vllm")


def test_library_preview_program_lines_name_a_second_namespace_left_bare():
    """Library review 5, M1: a second tenant with no Tenancy or Observability of its own was covered by the first
    one's component types."""
    from tests.fixtures.twin import twin_namespace
    from tpu_serving_tools.preview.offline import Plan, RecordedResource

    twin = twin_namespace(plan_of("vllm-llama33-70b-v6e8").as_json(), "vllm-llama70b", "second")
    bare_kinds = ("ResourceQuota", "PodMonitoring")
    twin["resources"] = [
        r
        for r in twin["resources"]
        if not (r["urn"].endswith("-second") and (r.get("inputs") or {}).get("kind") in bare_kinds)
    ]
    plan = copy.copy(plan_of("vllm-llama33-70b-v6e8"))
    plan.resources = [
        RecordedResource(
            urn=r["urn"],
            type=r["type"],
            name=r["name"],
            custom=True,
            parent=None,
            provider=None,
            dependencies=[],
            inputs=r["inputs"],
        )
        for r in twin["resources"]
        if r["type"] != library_preview.DEPLOYMENT
    ]
    assert isinstance(plan, Plan)
    (line,) = library_preview.program_lines(plan)
    assert "namespace second: its Tenancy (a quota and NetworkPolicies)" in line
    assert "namespace second: its Observability (scraping and alerts)" in line
    assert "namespace vllm-llama70b:" not in line


def test_library_preview_program_lines_name_what_a_programs_observability_leaves_unwatched():
    """Library review 6, M4: an Observability built the documented way had no serving probe and no controller,
    gateway or router alerts, and the Program: line said the program declared what a stack file adds."""
    bare = copy.copy(plan_of("vllm-llama33-70b-v6e8"))
    bare.resources = [r for r in bare.resources if r.type != library_preview.DEPLOYMENT]
    (line,) = library_preview.program_lines(bare)
    assert "declares the components a stack file's deployment adds" in line
    gone = ("probe_", "controller_unavailable", "gateway_", "router_")
    bare.resources = [
        r
        for r in bare.resources
        if not (r.type == program_gaps.ALERT_POLICY and any(g in json.dumps(r.inputs) for g in gone))
    ]
    (line,) = library_preview.program_lines(bare)
    for what in ("the serving probe", "alerts on the controllers", "alerts on the Gateway", "the endpoint picker"):
        assert what in line, line


def test_library_preview_fallback_lines_give_a_programs_class_in_the_stack_files_order():
    """New-user review of the capacity fallback, M3: a program's preview had no Fallback line. Read off the plan's
    ComputeClass, its steps are the stack file's ``serving.fallback`` after the pools, in that order."""
    import yaml

    from tests.conftest import ROOT

    for stack in ("vllm-llama31-405b-v6e16", "vllm-llama33-70b-v6e8"):
        plan = without_outputs(plan_of(stack))
        text = preview.summary(plan).splitlines()
        (at,) = [i for i, line in enumerate(text) if line.startswith("Fallback (ComputeClass ")]
        steps = [line for line in text[at + 1 :] if line.startswith("  ") and line[2].isdigit()]
        config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
        wanted = config["serving"]["fallback"]  # the project namespace is Pulumi.yaml's default
        assert steps[0].startswith("  1. the pools ") and len(steps) == 1 + len(wanted), (stack, steps)
        assert [s.split(". ", 1)[1].split(",")[0] for s in steps[1:]] == wanted, (stack, steps)
        # new-user review, M1: a first `pulumi up` on a new cluster may stop on the class
        assert text[at + 1 + len(steps)] == library_preview.NEW_CLUSTER_NOTE, text[at : at + 2 + len(steps)]
        stack_text = preview.summary(plan_of(stack)).splitlines()
        (own,) = [i for i, line in enumerate(stack_text) if line.startswith("Fallback: ")]
        assert stack_text[own + 1 + len(steps)] == library_preview.NEW_CLUSTER_NOTE, stack_text[own:]
    assert library_preview.fallback_lines(without_outputs(plan_of("vllm-llama33-70b-v5e16"))) == []
