"""The cost model, the price table and the capacity report (pure), and what every stack exports."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT, STACKS, STACKS_ROOT, plan_of
from tests.fixtures.configs import ZONES_STACK as STACK
from tests.fixtures.configs import plan_edited, plan_edited_once
from tpu_serving import catalog
from tpu_serving.catalog import machines, prices
from tpu_serving.catalog.capacity import Capacity
from tpu_serving.catalog.models import ModelSize
from tpu_serving.catalog.prices import PriceOverrides
from tpu_serving.cost import estimate as cost
from tpu_serving.cost.allocation import allocation
from tpu_serving_tools.docgen import cost_table
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview.stack import summary

V6E16 = catalog.resolve_slice_name("v6e-16")


def slices(capacity: Capacity = Capacity.ON_DEMAND, shape=V6E16, count: int = 1) -> list[cost.SliceUsage]:
    return [cost.SliceUsage("s", shape, count, capacity, 200)]


def test_cost_tpu_is_chips_times_the_chip_hour_price():
    estimate = cost.estimate(slices(count=2), [], [])
    assert estimate.per_hour("tpu") == pytest.approx(2 * 16 * 2.70)
    assert estimate.per_month("tpu") == pytest.approx(2 * 16 * 2.70 * 730)


def test_cost_flex_start_v6e_uses_the_dws_price():
    assert cost.estimate(slices(Capacity.FLEX_START), [], []).per_hour("tpu") == pytest.approx(16 * 1.35)


def test_cost_spot_without_a_figure_says_it_used_on_demand():
    (line,) = cost.estimate(slices(Capacity.SPOT), [], []).lines[:1]
    assert line.usd_per_hour == pytest.approx(16 * 2.70)
    assert "no spot figure found" in line.basis


def test_cost_override_specific_key_wins_over_generation_key():
    overrides = PriceOverrides(tpu_chip_hour={"v6e": 2.0, "v6e/spot": 1.0})
    assert cost.estimate(slices(Capacity.SPOT), [], [], overrides).per_hour("tpu") == pytest.approx(16.0)
    assert cost.estimate(slices(), [], [], overrides).per_hour("tpu") == pytest.approx(32.0)
    assert "stack setting prices (v6e)" in cost.estimate(slices(), [], [], overrides).lines[0].basis


def test_cost_unpriced_generation_is_listed_not_guessed():
    estimate = cost.estimate(slices(shape=catalog.resolve_slice_name("tpu7x-8")), [], [])
    assert [x.what for x in estimate.unpriced] == ["s: 1 x tpu7x-8 on-demand"]
    assert estimate.per_hour("tpu") == 0
    priced = cost.estimate(
        slices(shape=catalog.resolve_slice_name("tpu7x-8")), [], [], PriceOverrides(tpu_chip_hour={"tpu7x": 5.0})
    )
    assert priced.unpriced == () and priced.per_hour("tpu") == pytest.approx(20.0)


def test_cost_cpu_nodes_are_vcpus_and_memory_at_family_prices():
    estimate = cost.estimate([], [cost.NodeUsage("cpu", "n2-standard-8", 2, 100)], [])
    assert estimate.per_hour("cpu") == pytest.approx(2 * (8 * 0.031611 + 32 * 0.004237))
    unknown = cost.estimate([], [cost.NodeUsage("cpu", "c4-standard-8", 1, 100)], [])
    assert unknown.unpriced and unknown.per_hour("cpu") == 0


def test_cost_storage_counts_boot_disks_and_bucket_estimates():
    estimate = cost.estimate(
        slices(), [cost.NodeUsage("cpu", "n2-standard-8", 1, 100)], [cost.BucketUsage("ckpt", "STANDARD", 500)]
    )
    # 4 TPU VMs x 200 GB + 1 x 100 GB of pd-balanced, 500 GB in Standard storage, per month.
    assert estimate.per_month("storage") == pytest.approx(900 * 0.10 + 500 * 0.020)
    assert estimate.per_hour("cluster") == pytest.approx(0.10)


def test_cost_price_table_entries_carry_source_and_date():
    for table in (prices.TPU_CHIP_HOUR, prices.VCPU_HOUR, prices.MEMORY_GIB_HOUR, prices.STORAGE_GIB_MONTH):
        for key, price in table.items():
            assert price.source.startswith("https://") and price.as_of, key
            assert price.usd is not None or price.note, key
    for generation in catalog.GENERATIONS:
        for capacity in Capacity:
            assert (generation.name, capacity) in prices.TPU_CHIP_HOUR


def test_cost_price_overrides_refuse_unknown_keys_and_negative_prices():
    assert PriceOverrides(tpu_chip_hour={"v6e/flex-start": 1.2}, vcpu_hour={"n2": 0.03}).problems() == []
    (problem,) = PriceOverrides(storage_gb_month={"hdd": 0.1}).problems()
    assert "unknown key(s) hdd" in problem and "pd-balanced" in problem


def test_allocation_ratio_shows_over_provisioning():
    # Llama 2 70B in int8 (65 GiB) fits one v6e 2x2 (128 GiB); two 2x4 slices hold it twice.
    sized = allocation(
        [(catalog.slice_shape("ct6e-standard-4t", "2x4"), 2)],
        catalog.slice_shape("ct6e-standard-4t", "2x4"),
        2,
        ModelSize(70, "int8"),
    )
    assert (sized.chips, sized.vms, sized.hbm_gib) == (16, 4, 512)
    assert sized.smallest_fit.topology == "2x2" and sized.chips_needed == 8 and sized.ratio == 2.0


def test_allocation_without_a_model_size_has_no_ratio():
    sized = allocation([(V6E16, 1)], V6E16, 1, None)
    assert sized.chips == 16 and sized.chips_needed is None and sized.ratio is None


@pytest.mark.parametrize("stack", STACKS)
def test_cost_every_stack_exports_and_previews_its_cost(stack):
    plan = plan_of(stack)
    c = plan.outputs["cost"]
    # A slice of a generation with no list price (TPU7x) is unpriced, never guessed; every other item is priced. The
    # generations are the plan's TPU node pools'.
    generations = {
        catalog.MACHINE_TYPES[mt].generation
        for mt in (p.inputs.get("nodeConfig", {}).get("machineType") for p in plan.of_type(NODE_POOL))
        if mt in catalog.MACHINE_TYPES
    }
    unlisted = {
        g.slice_name_prefixes[0] for g in generations if prices.TPU_CHIP_HOUR[(g.name, Capacity.ON_DEMAND)].usd is None
    }
    assert {u.split(" x ")[1].split("-")[0] for u in c["unpriced"]} == unlisted
    # The TPUs cost something at peak; while idle they may cost nothing (a batch job's slices scale from zero).
    tpu_peak = sum(i.get("peakPerHour", i["perHour"]) or 0 for i in c["items"] if i["part"] == "tpu")
    assert (tpu_peak > 0) is (not unlisted) and c["peakPerHour"] >= c["perHour"]["total"]
    assert c["perHour"]["total"] == pytest.approx(sum(c["perHour"][p] for p in cost.PARTS), abs=0.02)
    text = summary(plan)
    assert f"${c['perHour']['total']:,.2f}/hour" in text and "Capacity: " in text


def test_cost_table_page_is_current():
    page = (ROOT / cost_table.PAGE).read_text()
    assert page.count("<!-- generated: cost -->") == 1
    outputs = {stack: plan_of(stack).outputs for stack in STACKS}
    assert cost_table.render(page, outputs) == page, f"{cost_table.PAGE} cost table is stale: run `make readme`"


def test_cost_slices_that_scale_from_zero_count_only_at_peak():
    usage = [cost.SliceUsage("s", V6E16, 2, Capacity.ON_DEMAND, 200, running=1)]
    estimate = cost.estimate(usage, [], [])
    assert estimate.per_hour("tpu") == pytest.approx(16 * 2.70)
    assert estimate.per_hour("tpu", peak=True) == pytest.approx(2 * 16 * 2.70)
    disks = estimate.lines[1]
    assert disks.usd_per_hour == pytest.approx(4 * 200 * 0.10 / 730)
    assert disks.peak_usd_per_hour == pytest.approx(8 * 200 * 0.10 / 730)
    assert "(1 from zero)" in estimate.lines[0].what


def test_cost_reserved_slices_bill_their_chips_empty_or_not_but_not_their_disks():
    """GKE and SRE reviews round 42, M2: a specific reservation bills its VMs whether a pool uses them or not, so
    reserved slices that scale from zero cost their chips all along; their boot disks exist only with their VMs."""
    usage = [cost.SliceUsage("s", V6E16, 2, Capacity.RESERVATION, 200, running=1)]
    estimate = cost.estimate(usage, [], [])
    reserved = cost.TPU_CHIP_HOUR[("v6e", Capacity.RESERVATION)].usd
    assert estimate.per_hour("tpu") == pytest.approx(2 * 16 * reserved)
    assert estimate.lines[0].peak_usd_per_hour is None
    assert "(1 from zero, billed by the reservation while empty)" in estimate.lines[0].what
    assert estimate.lines[1].usd_per_hour == pytest.approx(4 * 200 * 0.10 / 730)
    assert plan_of("vllm-llama33-70b-v6e8").outputs["cost"]["perHour"]["tpu"] == pytest.approx(4 * 8 * reserved)


def test_cost_autoscaled_stack_bills_its_minimum_and_shows_its_peak():
    out = plan_of("vllm-llama33-70b-v5e16").outputs["cost"]
    # two groups at the least (autoscaling.minReplicas: 2): two v5e-16 slices bill all along
    assert out["perHour"]["tpu"] == pytest.approx(2 * 16 * 1.20)
    # the HPA's third slice and the surge rollout's spare start empty: their 2 x 16 chips and their 2 x 4 VMs'
    # 300 GB boot disks count at peak only; the two kept slices, which may go down to zero, bill all along
    peak_only = 2 * (16 * 1.20 + 4 * 300 * 0.10 / 730)
    assert out["peakPerHour"] == pytest.approx(out["perHour"]["total"] + peak_only, abs=0.01)
    assert "up to $" in summary(plan_of("vllm-llama33-70b-v5e16"))


@pytest.mark.parametrize("stack", ["pathwaysjob-batch-v6e16", "pathwaysjob-interactive-v5e16"])
def test_cost_pathways_job_bills_the_head_pool_node_while_the_job_runs(stack):
    """The PathwaysJob head (resource manager and IFRT proxy) holds one node of its own CPU pool
    (`<cluster>-head`, scaled from zero to it) for as long as the job runs: all along for an interactive job,
    which runs until it is deleted; only at peak for a batch job, whose head node goes with the job."""
    plan = plan_of(stack)
    batch = stack_settings(stack)["serving"]["workload"] == "batch"
    (pool,) = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"].endswith("-head")]
    assert pool.inputs["autoscaling"]["minNodeCount"] == 0 and pool.inputs["initialNodeCount"] == 0
    machine_type = pool.inputs["nodeConfig"]["machineType"]
    items = plan.outputs["cost"]["items"]
    (head,) = [x for x in items if x["what"].startswith("pathways head pool")]
    assert head["what"] == f"pathways head pool (while the job runs): 1 x {machine_type}" + (
        " (1 from zero)" if batch else ""
    )
    m = machines.machine(machine_type)
    family = machine_type.split("-")[0]
    expected = m.vcpus * prices.VCPU_HOUR[family].usd + m.memory_gib * prices.MEMORY_GIB_HOUR[family].usd
    if batch:
        assert head["perHour"] == 0 and head["peakPerHour"] == pytest.approx(expected, abs=1e-3)
    else:
        assert head["perHour"] == pytest.approx(expected, abs=1e-3) and head.get("peakPerHour") is None
    # its boot disk is billed with the other boot disks, while it runs
    (disks,) = [x for x in items if x["what"].startswith("boot disks")]
    assert disks["basis"].startswith(f"{_boot_disk_gb(plan, head_nodes=0 if batch else 1)} GB")


def stack_settings(stack: str) -> dict:
    """The stack file's config, as written (not as the library reads it)."""
    return dict(yaml.safe_load((STACKS_ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"])


def _boot_disk_gb(plan, head_nodes: int) -> int:
    """Boot-disk GB the estimate should bill: the running TPU VMs, the CPU pool's minimum and the head node."""
    total = 0
    for pool in plan.of_type("gcp:container/nodePool:NodePool"):
        # an autoscaled pool's minimum counts in each of its zones (the CPU pool spans several)
        zones = len(pool.inputs.get("nodeLocations") or [None])
        nodes = pool.inputs.get("nodeCount", pool.inputs.get("autoscaling", {}).get("minNodeCount", 0) * zones)
        if pool.inputs["name"].endswith("-head"):
            nodes = head_nodes
        total += int(nodes) * int(pool.inputs["nodeConfig"]["diskSizeGb"])
    return total


def test_cost_other_backends_bill_no_head_pool():
    for stack in ("llama31-405b-v6e16", "vllm-llama33-70b-v5e16", "saxml-175b-v5e32x2"):
        assert not [x for x in plan_of(stack).outputs["cost"]["items"] if x["what"].startswith("pathways head")]


def test_cost_summary_says_what_is_an_upper_bound_and_what_is_left_out():
    from tpu_serving_tools.preview.cost_summary import COST_LEFT_OUT, cost_summary

    cost = {
        "currency": "USD",
        "perHour": {"tpu": 10.0, "total": 10.0},
        "perMonth": {"tpu": 7300.0, "total": 7300.0},
        "items": [
            {
                "what": "v6e16: 1 x v6e-16 spot",
                "basis": "16 chips x $2.7 (...; no spot figure found; the on-demand price is used as an upper bound)",
            },
            {"what": "v5e16: 1 x v5litepod-16 on-demand", "basis": "16 chips x $1.2 (...)"},
        ],
    }
    lines = cost_summary({"cost": cost})
    assert "  upper bound, priced on demand for want of a figure: v6e16: 1 x v6e-16 spot" in lines
    assert lines[-1] == f"  {COST_LEFT_OUT}" and "Cloud NAT" in COST_LEFT_OUT
    assert not any("upper bound" in line for line in cost_summary({"cost": {**cost, "items": cost["items"][1:]}}))


def test_cost_negotiated_prices_reach_the_cost_output():
    """derived.cost_estimate (mutmut_19): the stack's `prices` replace the list prices in the `cost` output."""
    stack = "vllm-llama33-70b-v5e16"
    listed = plan_of(stack).outputs["cost"]
    cheap = plan_edited(stack, prices=lambda p: p.update(tpuChipHour={"v5e": 0.01})).outputs["cost"]
    assert cheap["perHour"]["tpu"] < listed["perHour"]["tpu"] / 10, (cheap["perHour"], listed["perHour"])
    assert cheap["perHour"]["cpu"] == listed["perHour"]["cpu"]


def test_cost_negotiated_vcpu_price_prices_the_cpu_nodes():
    """cost.cpu_lines (mutmut_37): a vcpuHour override by machine family replaces the list price of the CPU nodes."""
    from tpu_serving.catalog.prices import PriceOverrides
    from tpu_serving.cost import estimate as cost

    (listed,) = cost.cpu_lines([cost.NodeUsage("cpu", "n2-standard-8", 2, 100)], PriceOverrides())
    (cheap,) = cost.cpu_lines([cost.NodeUsage("cpu", "n2-standard-8", 2, 100)], PriceOverrides(vcpu_hour={"n2": 0.0}))
    assert listed.usd_per_hour is not None and cheap.usd_per_hour is not None
    assert cheap.usd_per_hour < listed.usd_per_hour
    assert "stack setting prices (n2)" in cheap.basis, cheap.basis


def test_cost_table_says_a_slice_without_a_list_price_is_unpriced():
    """The TPU7x stack's slice has no list price: its row does not show $0.00 TPU, and its totals are lower bounds."""
    row = cost_table.table({"s": plan_of("vllm-llama31-405b-tpu7x16").outputs}).splitlines()[-1]
    assert "| unpriced (no list price) |" in row and "**at least $" in row and "$0.00" not in row
    priced = cost_table.table({"s": plan_of("vllm-llama33-70b-v6e8").outputs}).splitlines()[-1]
    assert "unpriced" not in priced and "at least" not in priced
    assert "Cost (estimate, USD): at least $" in summary(plan_of("vllm-llama31-405b-tpu7x16"))  # the headline too
    assert "at least" not in summary(plan_of("vllm-llama33-70b-v6e8")).split("Cost (estimate", 1)[1].split("\n")[0]


def test_cost_zones_cost_bills_the_cpu_pools_other_zones_on_their_own_line():
    items = plan_edited_once(STACK).outputs["cost"]["items"]
    (more,) = [i for i in items if i["what"].startswith("cpu pool (minimum, ")]
    assert more["what"] == "cpu pool (minimum, 2 more zones: us-west4-b, us-west4-c): 2 x n2-standard-8"
