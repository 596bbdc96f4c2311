"""tpu_serving_tools.preview.stack's summary lines that are not a library component's own."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving import catalog
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview import stack as preview
from tpu_serving_tools.preview.offline import Plan, RecordedResource
from tpu_serving_tools.preview.stack import capacity_summary, single_host_equivalent, sizing_notes, summary


def test_preview_borrowed_nat_is_said_as_a_prerequisite():
    """New-user review 10, m13: a stack that names another's Cloud NAT did not say so in its preview."""
    (line,) = preview.borrowed_nat(plan_of("llama2-70b-disagg-v6e8x2"))
    assert line.startswith("Prerequisite: the Cloud NAT llama405b-nat-router/llama405b-nat of network default in ")
    assert preview.borrowed_nat(plan_of("vllm-llama33-70b-v6e8")) == []  # it makes its own


def test_summary_says_a_programs_warnings_once():
    """New-user review 17, m11: the multi-host Caution: line twice in one preview."""
    import copy

    plan = copy.copy(plan_of("vllm-llama31-405b-v6e16"))
    caution = next(line for line in preview.summary(plan).splitlines() if line.startswith("Caution: "))
    plan.warnings = [caution, "a program's own warning"]
    lines = preview.summary(plan).splitlines()
    assert lines.count(caution) == 1
    assert lines[-1] == "warning: a program's own warning"


def test_published_summary_prints_every_serving_stacks_time_to_serve_and_cost_per_token() -> None:
    lines = preview.summary(plan_of("vllm-llama33-70b-v6e8")).splitlines()
    time_line = next(line for line in lines if line.startswith("Time to serve: "))
    cost_line = next(line for line in lines if line.startswith("Cost per token: "))
    assert "LeaderWorkerSet vllm: the published terms add up to about 3-6 minutes, so at least 3" in time_line
    assert "https://github.com/vllm-project/tpu-inference/pull/2517" in time_line
    assert "$1.69 at concurrency 128" in cost_line


def test_published_summary_of_a_program_without_the_outputs_says_none_is_given() -> None:
    assert preview.published_summary({}) == [
        "Time to serve: not computed for this program (it has no timeToServe output: a TpuServingDeployment's)",
        "Cost per token: not computed for this program (it has no tokenCost output: a TpuServingDeployment's)",
    ]
    two = preview.published_summary({"timeToServe": ["a", "b"], "tokenCost": ["c"]})
    assert two == ["Time to serve: a", "  b", "Cost per token: c"]


def test_time_to_serve_streams_the_image_only_from_artifact_registry_on_the_stacks_own_pools() -> None:
    def time_line(stack: str) -> str:
        return next(x for x in preview.summary(plan_of(stack)).splitlines() if x.startswith("Time to serve: "))

    # through the stack's own Artifact Registry mirror, on its own pools
    assert "the streamed pull" in time_line("vllm-llama33-70b-v6e8")
    # Docker Hub on an existing cluster, and on a platform's cluster: pulled whole, at no published rate
    for stack in ("vllm-llama33-70b-existing", "vllm-llama31-8b-platform"):
        line = time_line(stack)
        assert "the pull rate of 19.5 GB" in line and "the streamed pull" not in line, stack


# A count's noun agrees with it wherever the tools print one: "1 VM", never "1 VMs" (issue "A platform team
# adopts it", item 10).


def one_pool_plan(machine_type: str) -> Plan:
    pool = RecordedResource(
        urn=f"urn:pulumi:s::p::{NODE_POOL}::one",
        type=NODE_POOL,
        name="one",
        custom=True,
        parent=None,
        provider=None,
        dependencies=[],
        inputs={"name": "one", "nodeConfig": {"machineType": machine_type}},
    )
    return Plan(stack="s", project="p", resources=[pool], outputs={})


def test_stack_a_single_host_slice_is_one_vm_in_the_preview_summary():
    text = summary(one_pool_plan("ct6e-standard-8t"))
    assert "  one: ct6e-standard-8t 2x4 (1 VM, 8 chips, 256 GiB HBM)" in text
    assert "1 VMs" not in text
    assert "(1 VM, 1 chip, 32 GiB HBM)" in summary(one_pool_plan("ct6e-standard-1t"))


def test_stack_the_capacity_line_counts_one_vm_and_one_chip():
    (line,) = capacity_summary({"capacity": {"chips": 1, "vms": 1, "hbmGib": 32, "allocatedToNeeded": None}})
    assert line.startswith("Capacity: 1 chip, 1 VM, 32 GiB HBM;")
    (line,) = capacity_summary({"capacity": {"chips": 16, "vms": 4, "hbmGib": 512, "allocatedToNeeded": None}})
    assert line.startswith("Capacity: 16 chips, 4 VMs, 512 GiB HBM;")


def test_capacity_notes_a_machine_type_of_the_generation_that_holds_the_weights_on_fewer_chips():
    """allocated/needed counts slices of the chosen machine type; the note names a smaller fit (new-user review 3)."""
    one_host = {
        "chips": 8, "vms": 1, "hbmGib": 256, "modelGib": 14.9, "smallestFittingSlice": "ct6e-standard-8t 2x4 (8 chips)",
        "servingSlices": 1, "chipsNeeded": 8, "allocatedToNeeded": 1.0,
    }  # fmt: skip
    line, note = capacity_summary({"capacity": one_host})
    assert line.endswith("x 1 serving slice(s) = 8 chips needed; allocated/needed 1.00x")
    assert note == (
        "  note: the weights also fit ct6e-standard-1t 1x1 (1 chip), another v6e machine type; allocated/needed "
        "counts slices of ct6e-standard-8t only (KV cache and throughput may still call for more)"
    )
    big = {**one_host, "modelGib": 130.4, "smallestFittingSlice": "ct5lp-hightpu-4t 4x4 (16 chips)", "chipsNeeded": 16}
    assert len(capacity_summary({"capacity": big})) == 1  # no v5e machine type holds 130 GiB on fewer chips


# Sizing notes: a single-host machine type named where a slice name means a multi-host one (issue "A platform team
# adopts it").


def test_stack_sizing_single_host_equivalent_of_a_multi_host_slice_name():
    v6e8 = catalog.slice_shape("ct6e-standard-4t", "2x4")  # the two-VM 2x4 (slice name v6e-8 is the one VM)
    assert (v6e8.machine_type.name, v6e8.vms) == ("ct6e-standard-4t", 2)
    one = single_host_equivalent(v6e8)
    assert one is not None and (one.machine_type.name, one.topology, one.vms) == ("ct6e-standard-8t", "2x4", 1)
    # a slice no single VM holds, and a slice that is one VM already, have none
    assert single_host_equivalent(catalog.resolve_slice_name("v6e-16")) is None
    assert single_host_equivalent(catalog.slice_shape("ct6e-standard-8t", "2x4")) is None


def test_stack_sizing_preview_note_names_the_single_host_machine_type_once_per_shape():
    v6e8 = catalog.slice_shape("ct6e-standard-4t", "2x4")
    (note,) = sizing_notes([("a", v6e8), ("b", v6e8), ("c", catalog.resolve_slice_name("v6e-16"))])
    assert note == (
        "  note: a, b are each 2 ct6e-standard-4t VMs (multi-host); one ct6e-standard-8t VM holds the same 8 chips "
        "(tpuSlices: machineType: ct6e-standard-8t, topology: 2x4) if the workload wants one host"
    )
