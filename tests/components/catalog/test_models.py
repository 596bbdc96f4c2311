"""tpu_serving.catalog.models: model sizes, their weights' precision and attention shape, and the HBM fit of a slice."""

from __future__ import annotations

from tpu_serving import catalog
from tpu_serving.catalog.models import Attention, hbm_fit_problem


def test_models_maxtext_float32_weights_are_fp32():
    """models.maxtext_precision: unquantized float32 weights take four bytes a parameter."""
    from tpu_serving.catalog.models import maxtext_precision

    assert maxtext_precision(None, "float32") == "fp32"
    assert maxtext_precision(None, "bfloat16") == "bf16"


def test_models_sizing_hbm_fit_names_the_generations_smallest_slice_past_a_single_host_machine_type():
    """The JetStream and Saxml check (models.hbm_fit_problem) alike: 405B in int8 on a v6e 2x4 VM."""
    problem = hbm_fit_problem("k", 405, "int8", catalog.slice_shape("ct6e-standard-8t", "2x4"))
    assert problem.endswith(
        "no ct6e-standard-8t topology fits; the smallest v6e slice that does is v6e-16 (ct6e-standard-4t, "
        "topology 4x4: 512 GiB)"
    )
    assert catalog.smallest_fitting_slice(catalog.V5E, 10_000) is None


def test_models_sizing_attention_kv_gib_replicates_heads_and_pads_lanes():
    """KV heads fewer than the tensor parallelism are replicated up to it, a head is padded to 128 lanes."""
    llama = Attention(layers=80, kv_heads=8, head_dim=128)
    assert llama.kv_gib(2**20, 8) == 80 * 2 * 8 * 128 * 2 / 2**10
    assert llama.kv_gib(1, 16) == 2 * llama.kv_gib(1, 8) == 2 * llama.kv_gib(1, 1)
    assert Attention(layers=1, kv_heads=1, head_dim=64).kv_gib(2**30, 1) == 2 * 128 * 2
