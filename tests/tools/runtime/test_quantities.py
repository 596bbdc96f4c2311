"""Resource quantities in every requests field are refused at preview when Kubernetes would refuse them."""

from __future__ import annotations

from dataclasses import fields

import pytest

from tests.fixtures.configs import VLLM, load
from tpu_serving.backends.jetstream.args import PathwaysRequests
from tpu_serving.backends.vllm.args import VllmRequests
from tpu_serving.common.settings import quantity_problem
from tpu_serving.config import ConfigError
from tpu_serving_tools.runtime import quantities


@pytest.mark.parametrize("value", ["2", "500m", "4Gi", "1.5", ".5", "2e3", "30Gi", "128974848"])
def test_quantity_accepts_what_kubernetes_parses(value):
    assert quantity_problem(value) == ""


@pytest.mark.parametrize("value", ["96GB", "24 cores", "-1", "1Gii", "", "4gi", "0x10"])
def test_quantity_refuses_what_kubernetes_refuses(value):
    assert "is not a Kubernetes quantity" in quantity_problem(value)


@pytest.mark.parametrize("requests", [PathwaysRequests(), VllmRequests()], ids=["jetstream", "vllm"])
def test_quantity_defaults_parse_in_the_runtime_models_own_parser(requests):
    for f in fields(requests):
        value = getattr(requests, f.name)
        assert quantity_problem(value) == "" and quantities.parse_quantity(value) >= 0, f.name


def test_quantity_problems_name_the_stack_keys():
    serving = {**VLLM["tpu-serving:serving"], "requests": {"leaderMemory": "96GB", "workerCpu": "24 cores"}}
    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:serving": serving})
    assert [p.split(" = ")[0] for p in err.value.problems] == [
        "tpu-serving:serving.requests.leaderMemory",
        "tpu-serving:serving.requests.workerCpu",
    ]
