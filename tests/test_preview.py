"""tpu_serving_tools.preview's summary lines that are not a library component's own."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving_tools import preview


def test_preview_borrowed_nat_is_said_as_a_prerequisite():
    """New-user review 10, m13: a stack that names another's Cloud NAT did not say so in its preview."""
    (line,) = preview.borrowed_nat(plan_of("llama2-70b-disagg-v6e8x2"))
    assert line.startswith("Prerequisite: the Cloud NAT llama405b-nat-router/llama405b-nat of network default in ")
    assert preview.borrowed_nat(plan_of("vllm-llama33-70b-v6e8")) == []  # it makes its own
