"""The namespace quota derived from the plan (tpu_serving.common.quota): every workload at its maximum replicas, one
rollout's surge, one restart unit held twice, the sidecars and the endpoint picker; a given figure below it refused."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, STACKS, plan_of
from tpu_serving.common.quota import ContainerRequests, PodSet, PodShape, derive
from tpu_serving.common.validation import ArgumentsError, check_arguments
from tpu_serving.config import ConfigError, load_stack_config
from tpu_serving.config.checks import namespace_pods
from tpu_serving.tenancy.tenant import TenancyArgs
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack_files import load_project, stack_config

DISAGG = "vllm-llama33-70b-disagg-v6e8x2"
SURGED = "vllm-llama33-70b-v5e16"


def quota_of(stack: str) -> dict[str, str]:
    (quota,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "ResourceQuota"]
    return quota["spec"]["hard"]


def config_of(stack: str) -> dict[str, str]:
    return stack_config(load_project(ROOT), stack)


def test_quota_pod_requests_count_sidecars_and_the_largest_init_container():
    app = ContainerRequests("app", "2", "1Gi")
    sidecar = ContainerRequests("side", "500m", "256Mi", sidecar=True)
    big_init = ContainerRequests("init", "4", "512Mi")
    # app + sidecar = 2.5 CPU; the plain init container runs alone (beside the sidecar started before it): 4.5 CPU
    pod = PodShape("p", 1, (app,), (sidecar, big_init))
    assert (pod.requests.cpu, pod.requests.memory) == (4500, (1024 + 256) * 2**20)


def test_quota_disaggregated_stack_holds_each_roles_surge_group():
    """Finding 1: at the HPAs' maxima a rollout adds a group to each role at once, above what the quota had. With the
    roles on one VM each (a group of one pod of 24 CPU and more): 6 pods, two groups and a surge group per role."""
    need = derive(namespace_pods(load_stack_config(config_of(DISAGG))))
    surge_of, surge = need.surge
    assert surge_of == "DisaggregatedSet vllm" and surge.cpu == 2 * 24_260 + 1000  # a group (one pod) per role
    assert need.total.cpu > 6 * 24_000
    hard = quota_of(DISAGG)
    assert hard["requests.cpu"] == need.total.cpu_text == "176"
    assert hard["requests.memory"] == need.total.memory_text


@pytest.mark.parametrize("stack", STACKS)
def test_quota_tpu_figure_agrees_with_the_derived_peak(stack):
    """The chips of the pods at their peak are the TPU quota the slices already gave (slices plus one restart unit)."""
    need = derive(namespace_pods(load_stack_config(config_of(stack))))
    assert str(need.total.tpu) == quota_of(stack)["requests.google.com/tpu"]


@pytest.mark.parametrize("stack", STACKS)
def test_quota_each_stack_holds_its_peak(stack):
    need = derive(namespace_pods(load_stack_config(config_of(stack))))
    hard = quota_of(stack)
    assert float(hard["requests.cpu"]) * 1000 >= need.total.cpu
    assert int(hard["requests.memory"].removesuffix("Gi")) * 2**30 >= need.total.memory


def test_quota_stack_file_below_the_peak_is_refused_with_both_figures():
    config = config_of(SURGED)
    config["tpu-serving:tenancy"] = config["tpu-serving:tenancy"].replace('"520"', '"250"')
    with pytest.raises(ConfigError) as err:
        load_stack_config(config)
    (problem,) = [p for p in err.value.problems if "tenancy.quota" in p]
    assert problem.startswith("tpu-serving:tenancy.quota.cpu = '250': below the 488 the plan's pods need")
    assert "a rollout's surge of LeaderWorkerSet vllm" in problem and "LeaderWorkerSet vllm: 3 groups" in problem


def test_quota_stack_file_at_the_peak_is_kept():
    config = config_of(SURGED)
    config["tpu-serving:tenancy"] = config["tpu-serving:tenancy"].replace('"520"', '"488"')
    assert load_stack_config(config).tenancy.quota.cpu == "488"


def test_quota_tenancy_args_below_the_peak_are_refused():
    pods = [PodSet("LeaderWorkerSet w", (PodShape("leader", 2, (ContainerRequests("c", "24", "96Gi"),)),), 2, 1)]
    args = TenancyArgs(namespace="ns", tpu_chips=16, cpu="100", memory="100Gi", pods=pods)
    with pytest.raises(ArgumentsError) as err:
        check_arguments("Tenancy", args, TenancyArgs)
    text = str(err.value)
    # 2 groups + 1 surge + 1 restart = 4 groups of 48 CPU, 192Gi
    assert "cpu = '100': below the 192 the plan's pods need" in text
    assert "memory = '100Gi': below the 768Gi" in text
    assert TenancyArgs(namespace="ns", tpu_chips=16, pods=pods).quota_cpu == "192"


@pytest.mark.parametrize("stack", STACKS)
def test_quota_counts_every_deployment_replica_the_plan_renders(stack):
    """The derivation's Deployments against the rendered plan's (read from the objects, not the derivation): as many
    pods of Deployments in the serving namespace as the plan asks for. A merge once left sax-http at one replica in
    the derivation while the plan ran two."""
    cfg = load_stack_config(config_of(stack))
    hard = quota_of(stack)
    namespace = next(
        o["metadata"]["namespace"] for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "ResourceQuota"
    )
    rendered = sum(
        int(o["spec"].get("replicas", 1))
        for o in kubernetes_objects(plan_of(stack))
        if o["kind"] == "Deployment" and o["metadata"].get("namespace") == namespace
    )
    derived = sum(s.groups * s.pods for s in namespace_pods(cfg) if s.name.startswith("Deployment"))
    assert derived == rendered, (stack, derived, rendered, hard)
