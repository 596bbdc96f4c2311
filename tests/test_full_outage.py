"""``serving.singleGroup``: a stack whose every disruption is a full outage says so (SRE review B2)."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import SAX_CONFIG, VLLM, load
from tpu_serving.config import ConfigError


def _without_acknowledgement(base: dict) -> dict:
    cfg = copy.deepcopy(base)
    cfg["tpu-serving:serving"].pop("singleGroup")
    return cfg


def test_full_outage_problems_refuse_one_group_without_a_spare_slice_unacknowledged():
    with pytest.raises(ConfigError) as exc:
        load(_without_acknowledgement(VLLM))
    assert str(exc.value).count("singleGroup") == 1
    assert (
        "tpu-serving:serving.singleGroup = null: the serving is one group (replicas 1) with no spare slice (rollout "
        "in-place), so a node failure, a repair, TPU host maintenance, a node upgrade or a rollout stops the whole "
        'service until the slice is back and the model has reloaded; set it to "accepted" to say so (valid: '
        "accepted); or set replicas to 2 with a slice each"
    ) in str(exc.value)


def test_full_outage_problems_refuse_a_saxml_cell_unacknowledged():
    with pytest.raises(ConfigError, match=r"serving\.singleGroup = null: the Saxml cell is one JobSet"):
        load(_without_acknowledgement(SAX_CONFIG))


def test_full_outage_problems_accept_the_acknowledgement_and_two_groups_without_it():
    assert load(VLLM).serving.single_group == "accepted"
    two = _without_acknowledgement(VLLM)
    two["tpu-serving:tpuSlices"][0]["count"] = 2
    two["tpu-serving:serving"]["replicas"] = 2
    assert load(two).serving.single_group is None


def test_full_outage_problems_refuse_a_value_other_than_accepted():
    cfg = copy.deepcopy(VLLM)
    cfg["tpu-serving:serving"]["singleGroup"] = "yes"
    with pytest.raises(ConfigError, match=r"tpu-serving:serving\.singleGroup.*'accepted'"):
        load(cfg)
