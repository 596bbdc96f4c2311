"""tpu_serving.common.naming: the names, labels, regions and zones that GCP, GKE and Kubernetes accept, checked where a
stack file or a component's arguments give them."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load, one, stack_problems, with_change
from tests.fixtures.configs import stack_problems as problems
from tests.fixtures.pools import cpu_pool_args, pool_args
from tpu_serving.common import gcp_zones, naming
from tpu_serving.common.validation import argument_problems


def test_naming_dns_name_honours_its_limit():
    """naming.dns_name passes ``limit`` on (a GKE cluster name is at most 40 characters, a label 63)."""
    from tpu_serving.common.naming import NameError_, NameLimit, dns_name

    assert dns_name("a" * 41) == "a" * 41
    with pytest.raises(NameError_):
        dns_name("a" * 41, limit=NameLimit.GKE_CLUSTER)


# Issue 22, a new user's review: node pool labels follow GCP's label rules, regions GCP's region names.


@pytest.mark.parametrize("labels", [{"Team": "ml"}, {"team": "ML"}, {"team": "a" * 64}, {"-team": "ml"}])
def test_naming_tpu_and_cpu_pool_labels_follow_gcp_label_rules(labels):
    msg = one(argument_problems(pool_args(labels=labels)), "TpuNodePoolArgs.labels")
    assert "lower-case letters, digits, '_' or '-'" in msg, msg
    one(argument_problems(cpu_pool_args(labels=labels)), "CpuNodePoolArgs.labels")
    assert not argument_problems(pool_args(labels={"team": "ml_1"}))


@pytest.mark.parametrize("region", ["us-westt4", "us-west", "usa-west4"])
def test_naming_a_region_that_is_no_gcp_region_name_is_refused(region):
    msg = one(stack_problems(with_change("gcp:region", region, copy.deepcopy(VLLM))), "gcp:region")
    assert "<continent>-<direction><n>" in msg, msg
    pool = pool_args(region=region, zone=f"{region}-b")
    one(argument_problems(pool), f"TpuNodePoolArgs.region = {region!r}")


def test_naming_zones_a_region_without_an_a_zone_names_its_own():
    # us-east1 has b, c and d; us-central1 a, b, c and f
    assert naming.zone_problem("us-east1-a", "us-east1").endswith("valid: us-east1-b, us-east1-c, us-east1-d")
    assert naming.zone_problem("us-east1-d", "us-east1") == ""
    assert naming.zone_problem("us-central1-f", "us-central1") == ""
    assert "valid: us-central1-a, us-central1-b, us-central1-c, us-central1-f" in naming.zone_problem(
        "us-east5-b", "us-central1"
    )


def test_naming_zones_a_region_the_table_does_not_hold_is_checked_for_the_form_only():
    # a region opened after the table was read is not refused; its zone's form still is
    assert gcp_zones.zones_of("us-west9") is None
    assert naming.zone_problem("us-west9-q", "us-west9") == ""
    assert "zones of the form us-west9-<letter>" in naming.zone_problem("us-west4-a", "us-west9")


# Labels a cloud API would refuse later are refused at preview: the GCP label limit (issue "A platform team adopts
# it", item 9).


def test_naming_labels_at_most_64_with_the_deployments_own():
    many = {f"k{i}": "v" for i in range(62)}
    (problem,) = [p for p in problems(with_change("tpu-serving:labels", many)) if "labels" in p]
    assert "62 labels and the deployment's own 3 (app, deployment, managed-by) make 65" in problem
    assert "at most 64" in problem
    assert len(load(with_change("tpu-serving:labels", {f"k{i}": "v" for i in range(61)})).labels) == 61
