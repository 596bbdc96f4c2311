"""A count's noun agrees with it wherever the tools print one: "1 VM", never "1 VMs" (issue "A platform team adopts
it", item 10)."""

from __future__ import annotations

from tpu_serving import catalog
from tpu_serving_tools.gcp_types import NODE_POOL
from tpu_serving_tools.preview.offline import Plan, RecordedResource
from tpu_serving_tools.preview.stack import capacity_summary, summary
from tpu_serving_tools.text import counted


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


def test_words_a_single_host_slice_is_one_vm_in_the_preview_summary():
    text = summary(one_pool_plan("ct6e-standard-8t"))
    assert "  one: ct6e-standard-8t 2x4 (1 VM, 8 chips, 256 GiB HBM)" in text
    assert "1 VMs" not in text
    assert "(1 VM, 1 chip, 32 GiB HBM)" in summary(one_pool_plan("ct6e-standard-1t"))


def test_words_the_capacity_line_counts_one_vm_and_one_chip():
    (line,) = capacity_summary({"capacity": {"chips": 1, "vms": 1, "hbmGib": 32, "allocatedToNeeded": None}})
    assert line.startswith("Capacity: 1 chip, 1 VM, 32 GiB HBM;")
    (line,) = capacity_summary({"capacity": {"chips": 16, "vms": 4, "hbmGib": 512, "allocatedToNeeded": None}})
    assert line.startswith("Capacity: 16 chips, 4 VMs, 512 GiB HBM;")


def test_words_a_slice_description_and_the_helper():
    assert "1 VM x 1 chip, 32 GiB HBM" in catalog.slice_shape("ct6e-standard-1t", "1x1").describe()
    assert "4 VMs x 4 chips" in catalog.slice_shape("ct6e-standard-4t", "4x4").describe()
    assert (counted(1, "VM"), counted(2, "VM"), counted(0, "VM")) == ("1 VM", "2 VMs", "0 VMs")


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
