"""Edges the fifth mutation sample (make mutate SAMPLE=300 SEED=33, at 8d369c5) found untested: each test below
fails with the mutant its docstring names."""

from __future__ import annotations

import datetime

import pytest

from tests.fixtures.configs import PATHWAYS_JOB, as_engine_config, load, with_change
from tpu_serving.config import ConfigError
from tpu_serving.config.loading import load_stack_config, validate_stack


def test_edges_a_python_value_that_is_not_json_is_shown_as_text():
    """config.errors.describe (mutmut_116): validate_stack takes Python values; one that JSON cannot encode (a date)
    is shown as its text, with no traceback (json.dumps without `default` raised TypeError)."""
    with pytest.raises(ConfigError) as err:
        validate_stack({"project": "my-project-1", "region": "us-east5", "zone": datetime.date(2026, 1, 1)})
    assert 'tpu-serving:zone = "2026-01-01": Input should be a valid string' in err.value.problems


def test_edges_a_pathways_head_service_account_id_has_thirty_characters_at_most():
    """config.checks.derived_name_problems (mutmut_78): the head's node service account id `<cluster>-head` is a GCP
    service account id (30 characters at most), not a Kubernetes name (63)."""
    cluster = "pwjob-" + "a" * 21  # 27 characters: "<cluster>-head" has 32
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:cluster/name", cluster, PATHWAYS_JOB))
    assert err.value.problems == [
        f"tpu-serving:cluster.name = \"{cluster}\": the Pathways head's '{cluster}-head' must be 6 to 30 characters "
        "for a gcp service account id name, got 32"
    ]


def test_edges_a_program_of_another_name_hears_of_its_own_stack():
    """config.loading.load_stack_config (mutmut_33): a project of another name gets its problems under its own
    namespace and the message names the stack's configuration."""
    values = {k.replace("tpu-serving:", "myproj:"): v for k, v in as_engine_config(PATHWAYS_JOB).items()}
    values["myproj:zone"] = "europe-west4-a"
    with pytest.raises(ConfigError) as err:
        load_stack_config(values, "configuration of stack 'dev'", "myproj")
    text = str(err.value)
    assert text.startswith("invalid configuration of stack 'dev': "), text
    assert all(p.startswith(("myproj:", "gcp:")) for p in err.value.problems), err.value.problems


def test_edges_image_streaming_api_only_when_streaming():
    """services.required_apis (mutmut_7): the Container File System API is needed only with image streaming."""
    from tpu_serving.services import IMAGE_STREAMING_API, required_apis

    assert IMAGE_STREAMING_API in required_apis(image_streaming=True)
    assert IMAGE_STREAMING_API not in required_apis(image_streaming=False)


def test_edges_negotiated_vcpu_price_prices_the_cpu_nodes():
    """cost.cpu_lines (mutmut_37): a vcpuHour override by machine family replaces the list price of the CPU nodes."""
    from tpu_serving import cost
    from tpu_serving.prices import PriceOverrides

    (listed,) = cost.cpu_lines([cost.NodeUsage("cpu", "n2-standard-8", 2, 100)], PriceOverrides())
    (cheap,) = cost.cpu_lines([cost.NodeUsage("cpu", "n2-standard-8", 2, 100)], PriceOverrides(vcpu_hour={"n2": 0.0}))
    assert listed.usd_per_hour is not None and cheap.usd_per_hour is not None
    assert cheap.usd_per_hour < listed.usd_per_hour
    assert "stack setting prices (n2)" in cheap.basis, cheap.basis
