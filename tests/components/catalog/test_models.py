"""tpu_serving.catalog.models: model sizes, their weights' precision and attention shape, and the HBM fit of a slice."""

from __future__ import annotations


def test_edges_maxtext_float32_weights_are_fp32():
    """models.maxtext_precision: unquantized float32 weights take four bytes a parameter."""
    from tpu_serving.catalog.models import maxtext_precision

    assert maxtext_precision(None, "float32") == "fp32"
    assert maxtext_precision(None, "bfloat16") == "bf16"
