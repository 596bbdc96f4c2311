"""Unit tests of the TPU catalog (pure data plus maths)."""

import pulumi
import pytest

from tpu_serving import catalog
from tpu_serving.catalog import CatalogError, SliceShape, resolve_slice_name, slice_shape


@pytest.mark.parametrize(
    "machine_type, topology, vms, chips, multi_host",
    [
        ("ct6e-standard-4t", "4x4", 4, 16, True),
        ("ct6e-standard-4t", "2x4", 2, 8, True),
        ("ct6e-standard-8t", "2x4", 1, 8, False),
        ("ct6e-standard-4t", "2x2", 1, 4, False),
        ("ct6e-standard-1t", "1x1", 1, 1, False),
        ("ct5lp-hightpu-4t", "4x8", 8, 32, True),
        ("ct5lp-hightpu-4t", "16x16", 64, 256, True),
        ("ct5p-hightpu-4t", "2x2x1", 1, 4, False),
        ("ct5p-hightpu-4t", "2x4x4", 8, 32, True),
        ("tpu7x-standard-4t", "2x2x1", 1, 4, False),
        ("tpu7x-standard-1t", "1x1x1", 1, 1, False),
    ],
)
def test_catalog_shape_maths(machine_type, topology, vms, chips, multi_host):
    shape = slice_shape(machine_type, topology)
    assert (shape.vms, shape.chips, shape.multi_host) == (vms, chips, multi_host)
    assert shape.vms * shape.chips_per_vm == shape.chips


def test_catalog_same_topology_differs_by_machine_type():
    # The reason the catalog is keyed by (machine type, topology).
    assert slice_shape("ct6e-standard-8t", "2x4").vms == 1
    assert slice_shape("ct6e-standard-4t", "2x4").vms == 2


@pytest.mark.parametrize(
    "generation, accelerator, hbm, chip",
    [
        (catalog.V5E, "tpu-v5-lite-podslice", 16, "tpuv5e"),
        (catalog.V6E, "tpu-v6e-slice", 32, "tpuv6e"),
        (catalog.V5P, "tpu-v5p-slice", 95, "tpuv5"),
        (catalog.TPU7X, "tpu7x", 192, "tpu7x"),
    ],
)
def test_catalog_generation_facts(generation, accelerator, hbm, chip):
    assert (generation.gke_accelerator, generation.hbm_gib_per_chip, generation.chip_name) == (accelerator, hbm, chip)


@pytest.mark.parametrize(
    "name, machine_type, topology",
    [
        ("v6e-16", "ct6e-standard-4t", "4x4"),
        ("v6e-8", "ct6e-standard-8t", "2x4"),
        ("v5litepod-8", "ct5lp-hightpu-8t", "2x4"),
        ("v6e-4", "ct6e-standard-4t", "2x2"),
        ("v6e-1", "ct6e-standard-1t", "1x1"),
        ("v5litepod-32", "ct5lp-hightpu-4t", "4x8"),
        ("v5e-32", "ct5lp-hightpu-4t", "4x8"),
        ("v5p-8", "ct5p-hightpu-4t", "2x2x1"),
        ("v5p-128", "ct5p-hightpu-4t", "4x4x4"),
        ("tpu7x-8", "tpu7x-standard-4t", "2x2x1"),
    ],
)
def test_catalog_resolves_slice_names(name, machine_type, topology):
    shape = resolve_slice_name(name)
    assert (shape.machine_type.name, shape.topology) == (machine_type, topology)


def test_catalog_slice_name_round_trips():
    names = {SliceShape(mt, topo).slice_name for mt in catalog.MACHINE_TYPES.values() for topo in mt.topologies}
    assert len(names) > 20, "every machine type's slices"
    for name in names:
        assert resolve_slice_name(name).slice_name == name


def test_catalog_instance_type_and_description():
    shape = slice_shape("ct6e-standard-4t", "4x4")
    assert shape.instance_type == "tpuv6e:4x4"
    assert shape.hbm_gib == 512
    assert shape.describe() == "v6e-16 (ct6e-standard-4t 4x4: 4 VMs x 4 chips, 512 GiB HBM)"


@pytest.mark.parametrize(
    "call, choice",
    [
        (lambda: slice_shape("ct6e-standard-8t", "4x4"), "2x4"),
        (lambda: slice_shape("ct9-hightpu-4t", "4x4"), "ct6e-standard-4t"),
        (lambda: resolve_slice_name("v6e-12"), "v6e-16"),
        (lambda: resolve_slice_name("v7x-8"), "v6e-16"),
    ],
)
def test_catalog_errors_list_valid_choices(call, choice):
    with pytest.raises(CatalogError) as exc:
        call()
    assert choice in exc.value.choices
    assert f"; valid: {', '.join(exc.value.choices)}" in str(exc.value)
    assert isinstance(exc.value, pulumi.RunError)  # a program stops with the message, no traceback


@pytest.mark.parametrize("topology", ["4", "4x", "x4", "4by4", "0x4", "4x4x4x4"])
def test_catalog_rejects_malformed_topology(topology):
    with pytest.raises(CatalogError, match="not of the form"):
        catalog.parse_topology(topology)


def test_catalog_smallest_fitting_topology():
    # Seed 002's sizing: 175B parameters x 2 bytes = 350 GB -> 4x8 of v5e (512 GiB).
    assert catalog.smallest_fitting_topology("ct5lp-hightpu-4t", 350).topology == "4x8"
    assert catalog.smallest_fitting_topology("ct5lp-hightpu-8t", 350) is None


def test_catalog_tpu7x_multi_host_slices_are_placed_by_a_workload_policy():
    """xpk's tpu7x-standard-4t topologies: 2x2x1 (one VM), 2x2x2, 2x2x4, 2x4x4, then cubes of 4 up to 144 of them."""
    topologies = catalog.machine_type("tpu7x-standard-4t").topologies
    assert topologies[:5] == ("2x2x1", "2x2x2", "2x2x4", "2x4x4", "4x4x4")
    assert "12x12x16" in topologies and "4x4x256" in topologies  # 36 and 64 cubes
    assert "16x16x48" not in topologies and "4x8x4" not in topologies  # 192 cubes; A <= B <= C
    one, two = slice_shape("tpu7x-standard-4t", "2x2x1"), resolve_slice_name("tpu7x-16")
    assert (one.vms, one.workload_policy) == (1, False)
    assert (two.topology, two.vms, two.chips, two.devices, two.workload_policy) == ("2x2x2", 2, 8, 16, True)
    assert slice_shape("ct6e-standard-4t", "4x4").workload_policy is False
    assert slice_shape("ct6e-standard-4t", "4x4").devices == 16
    assert catalog.TPU7X.min_gke == "1.34.0-gke.2201000"


def test_catalog_slice_names_mean_the_shape_on_the_fewest_vms():
    """New-user review 20, M1: ``v6e-8`` is one 8-chip VM (ct6e-standard-8t 2x4), as Cloud TPU's accelerator type
    and this project's own docs mean it; it resolved to two 4-chip VMs, a Ray group. The two-VM 2x4 is chosen by its
    machine type; on a tie of VMs the 4-chip machine type is the name's."""
    shape = resolve_slice_name("v6e-8")
    assert (shape.machine_type.name, shape.topology, shape.vms) == ("ct6e-standard-8t", "2x4", 1)
    two = slice_shape("ct6e-standard-4t", "2x4")
    assert two.describe() == "v6e-8 (ct6e-standard-4t 2x4: 2 VMs x 4 chips, 256 GiB HBM)"
    assert "4 VMs x 4 chips" in resolve_slice_name("v6e-16").describe()
    assert resolve_slice_name("v6e-4").machine_type.name == "ct6e-standard-4t"  # one VM either way: the 4-chip type


def test_catalog_errors_say_what_is_wrong_and_list_choices_in_order():
    with pytest.raises(CatalogError) as exc:
        resolve_slice_name("v6e-15")
    assert str(exc.value) == (
        "no v6e slice has 15 chips ('v6e-15'); valid: v6e-1, v6e-4, v6e-8, v6e-16, v6e-32, v6e-64, v6e-128, v6e-256"
    )
    with pytest.raises(CatalogError, match=r"^no v5p slice has 12 TensorCores \('v5p-12'\); valid: v5p-8, v5p-16, "):
        resolve_slice_name("v5p-12")
    with pytest.raises(
        CatalogError, match=r"^unknown TPU slice name 'x9-4'; valid: tpu7x-2, tpu7x-8, tpu7x-16, tpu7x-32, "
    ):
        resolve_slice_name("x9-4")
    with pytest.raises(CatalogError, match=r"^unknown TPU machine type 'ct9-x'; valid: ct5lp-hightpu-1t, "):
        catalog.machine_type("ct9-x")
    with pytest.raises(CatalogError) as exc:
        catalog.parse_topology("4by4")
    assert str(exc.value) == (  # no choices
        "topology '4by4' is not of the form AxB or AxBxC with positive integers and a lower-case x"
    )
    with pytest.raises(CatalogError) as exc:  # new-user review 19, m4: no suggestion for a capital X
        catalog.parse_topology("2X4")
    assert str(exc.value).endswith("(did you mean '2x4'?)")


def test_catalog_smallest_fitting_topology_takes_an_exact_fit():
    exact = slice_shape("ct5lp-hightpu-4t", "4x8").hbm_gib
    assert catalog.smallest_fitting_topology("ct5lp-hightpu-4t", exact).topology == "4x8"
    assert catalog.smallest_fitting_topology("ct5lp-hightpu-4t", exact + 0.5).topology != "4x8"


@pytest.mark.parametrize(("typo", "meant"), [("v6e8", "v6e-8"), ("v5e16", "v5e-16"), ("v5litepod16", "v5litepod-16")])
def test_catalog_a_slice_name_without_its_dash_names_the_one_meant(typo, meant):
    with pytest.raises(catalog.CatalogError, match=f"did you mean '{meant}'"):
        catalog.resolve_slice_name(typo)
    assert catalog.resolve_slice_name(meant).chips == int(meant.rsplit("-", 1)[1])


def test_catalog_smallest_fitting_slice_of_an_equal_generation():
    """A component's validated arguments hold copies of their slice shape, its generation included: the smallest
    fitting slice is found for a generation equal to the catalog's, not only for the catalog's own object."""
    import dataclasses

    copy = dataclasses.replace(catalog.V5E)
    assert copy is not catalog.V5E
    fit = catalog.smallest_fitting_slice(copy, 145)
    assert fit is not None and fit.slice_name == "v5litepod-16"
