"""Issue 22, a new user's review: inputs GKE, GCP or Kubernetes would refuse (or that silently break) are refused at
preview, by the stack file and by the components' Python arguments alike, each message naming the key (camelCase in
the stack file, the Python field for a caller), the bad value and what is valid."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, load, with_change, with_serving
from tests.fixtures.pools import cpu_pool_args, pool_args
from tpu_serving.backends.pathways_job.args import HeadPoolSettings
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError
from tpu_serving.operations.autoscaling import AutoscalingSettings
from tpu_serving.platform.cluster import CpuPoolArgs
from tpu_serving.tenancy.identity import WorkloadIdentityArgs


def stack_problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


def one(problems: list[str], start: str) -> str:
    found = [p for p in problems if p.startswith(start)]
    assert found, problems
    return found[0]


# --------------------------------------------------------------------------- 1. reserved namespaces


@pytest.mark.parametrize(
    "namespace", ["kube-system", "kube-public", "kube-node-lease", "gke-managed-cim", "gmp-system"]
)
def test_review_a_reserved_namespace_is_refused_naming_the_valid_ones(namespace):
    msg = one(
        stack_problems(with_change("tpu-serving:workloadIdentity/namespace", namespace, copy.deepcopy(VLLM))),
        "tpu-serving:workloadIdentity.namespace",
    )
    assert namespace in msg and "reserves" in msg and "kube-*" in msg and "gke-managed-*" in msg, msg
    args = WorkloadIdentityArgs(
        project="my-project-1",
        namespace=namespace,
        kubernetes_service_account="ksa",
        gcp_service_account_id="ns-workloads",
    )
    msg = one(argument_problems(args), f"WorkloadIdentityArgs.namespace = {namespace!r}")
    assert "reserves" in msg, msg


def test_review_an_ordinary_namespace_is_accepted():
    args = WorkloadIdentityArgs(
        project="my-project-1",
        namespace="kube-team",
        kubernetes_service_account="ksa",
        gcp_service_account_id="ns-workloads",
    )
    assert argument_problems(args)  # kube-* is Kubernetes' prefix
    assert not argument_problems(
        WorkloadIdentityArgs(
            project="my-project-1",
            namespace="serving",
            kubernetes_service_account="ksa",
            gcp_service_account_id="ns-workloads",
        )
    )


# --------------------------------------------------------------------------- 3. CPU machine types


def test_review_a_cpu_pool_machine_type_typo_lists_close_names():
    msg = one(
        stack_problems(
            with_change("tpu-serving:cluster/cpuPool", {"machineType": "n2-standrd-8"}, copy.deepcopy(VLLM))
        ),
        'tpu-serving:cluster.cpuPool.machineType = "n2-standrd-8"',
    )
    assert "did you mean n2-standard-8" in msg and "standard" in msg, msg
    msg = one(argument_problems(CpuPoolArgs(machine_type="n2-standrd-8")), "CpuPoolArgs.machine_type = 'n2-standrd-8'")
    assert "did you mean n2-standard-8" in msg, msg


@pytest.mark.parametrize("name", ["n2-standard-7", "n2standard8", "N2-standard-8"])
def test_review_a_machine_type_outside_the_catalog_family_or_grammar_is_refused(name):
    assert argument_problems(CpuPoolArgs(machine_type=name))


@pytest.mark.parametrize(
    "name", ["c3-standard-8", "n2d-highmem-16", "e2-medium", "n2-custom-8-32768", "c3-standard-8-lssd"]
)
def test_review_a_machine_type_of_another_family_stays_allowed(name):
    assert not argument_problems(CpuPoolArgs(machine_type=name))


def test_review_the_pathways_head_pool_machine_type_typo_is_refused():
    msg = one(
        stack_problems(with_serving(headPool={"machineType": "n2-highmme-32"})),
        'tpu-serving:serving.headPool.machineType = "n2-highmme-32"',
    )
    assert "did you mean n2-highmem-32" in msg, msg
    msg = one(argument_problems(HeadPoolSettings(machine_type="n2-highmme-32")), "HeadPoolSettings.machine_type")
    assert "n2-highmem-32" in msg, msg


# --------------------------------------------------------------------------- 4. node pool labels


@pytest.mark.parametrize("labels", [{"Team": "ml"}, {"team": "ML"}, {"team": "a" * 64}, {"-team": "ml"}])
def test_review_tpu_and_cpu_pool_labels_follow_gcp_label_rules(labels):
    msg = one(argument_problems(pool_args(labels=labels)), "TpuNodePoolArgs.labels")
    assert "lower-case letters, digits, '_' or '-'" in msg, msg
    one(argument_problems(cpu_pool_args(labels=labels)), "CpuNodePoolArgs.labels")
    assert not argument_problems(pool_args(labels={"team": "ml_1"}))


# --------------------------------------------------------------------------- 5. regions


@pytest.mark.parametrize("region", ["us-westt4", "us-west", "usa-west4"])
def test_review_a_region_that_is_no_gcp_region_name_is_refused(region):
    msg = one(stack_problems(with_change("gcp:region", region, copy.deepcopy(VLLM))), "gcp:region")
    assert "<continent>-<direction><n>" in msg, msg
    pool = pool_args(region=region, zone=f"{region}-b")
    one(argument_problems(pool), f"TpuNodePoolArgs.region = {region!r}")


# --------------------------------------------------------------------------- 6. autoscaling metrics
# An engine-prefixed name the engine's table does not know is not refused: the tables are not complete lists of
# what an engine exports (vLLM 0.29.0's loggers.py alone registers gauges such as vllm:engine_sleep_state).


def test_review_an_engine_gauge_the_table_lacks_is_not_refused():
    for metric in ("vllm:engine_sleep_state", "vllm:num_requests_waiting_by_reason"):
        assert not argument_problems(AutoscalingSettings(max_replicas=1, metric=metric)), metric


def test_review_a_metric_without_an_engine_prefix_stays_the_users_own():
    assert not argument_problems(AutoscalingSettings(max_replicas=1, metric="my_queue_depth"))
    assert not argument_problems(AutoscalingSettings(max_replicas=1, metric="vllm:num_requests_waiting"))
