"""Edges the fourth mutation sample (make mutate SAMPLE=200 SEED=32, at bb48b6c) found untested: each test below
fails with the mutant its docstring names. (The sample's survivors that reworded a message are caught by the
message list, tests/messages.py.)"""

from __future__ import annotations

import copy

import pulumi
import pytest

from tests.conftest import ROOT, plan_of
from tests.fixtures.configs import VLLM, as_engine_config, load, plan_edited, two_slices
from tests.test_components import cluster_args_for_test
from tests.test_disagg import DISAGG, pair, problems_of, role
from tpu_serving import TpuCluster
from tpu_serving.backends.vllm.kv import KvRole
from tpu_serving.validation import argument_problems
from tpu_serving_tools.offline import PreviewMocks, kubernetes_objects, load_project, run_program


def test_edges_negotiated_prices_reach_the_cost_output():
    """derived.cost_estimate (mutmut_19): the stack's `prices` replace the list prices in the `cost` output."""
    stack = "vllm-llama33-70b-v5e16"
    listed = plan_of(stack).outputs["cost"]
    cheap = plan_edited(stack, prices=lambda p: p.update(tpuChipHour={"v5e": 0.01})).outputs["cost"]
    assert cheap["perHour"]["tpu"] < listed["perHour"]["tpu"] / 10, (cheap["perHour"], listed["perHour"])
    assert cheap["perHour"]["cpu"] == listed["perHour"]["cpu"]


def test_edges_a_pod_that_asks_exactly_what_is_left_fits():
    """machines.Machine.fits (mutmut_2): a request equal to what the node leaves after GKE's reservations fits."""
    from tpu_serving.machines import MACHINES, SYSTEM_CPU, SYSTEM_MEMORY_BYTES

    m = MACHINES["n2-standard-8"]
    cpu, memory = m.allocatable_cpu - SYSTEM_CPU, m.allocatable_memory - SYSTEM_MEMORY_BYTES
    assert m.fits(cpu, memory)
    assert not m.fits(cpu + 0.001, memory)
    assert not m.fits(cpu, memory + 1)


def _run(program):
    return run_program(program, {}, project="p", stack="s")


def test_edges_a_cluster_subnetwork_reaches_the_cluster():
    """cluster.cluster_args (mutmut_5): TpuClusterArgs.subnetwork is the GKE cluster's subnetwork."""
    plan = _run(lambda: TpuCluster("c", cluster_args_for_test(network="vpc-a", subnetwork="sub-a")))
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert (cluster.inputs["network"], cluster.inputs["subnetwork"]) == ("vpc-a", "sub-a")


def test_edges_an_existing_nat_is_read_through_the_clusters_provider(monkeypatch):
    """cloud_nat.look_up_existing_nat (mutmut_10): the lookup of an existing Cloud NAT is the component's child, so
    it uses the provider the component was given (another project's credentials), not the default one."""
    from pulumi_gcp import Provider

    calls: list[tuple[str, str]] = []
    answer = PreviewMocks.call

    def call(self, args):
        calls.append((args.token, args.provider))
        return answer(self, args)

    monkeypatch.setattr(PreviewMocks, "call", call)
    existing = {"cloud_nat": "existing", "existing_nat_router": "net-router", "existing_nat": "net-nat"}

    def program():
        gcp = Provider("other-project", project="p-654321")
        TpuCluster("c", cluster_args_for_test(**existing), opts=pulumi.ResourceOptions(providers=[gcp]))

    _run(program)
    (provider,) = [p for token, p in calls if token == "gcp:compute/getRouterNat:getRouterNat"]
    assert "pulumi:providers:gcp::other-project" in provider, provider


def test_edges_the_deployment_exposes_its_controller_installs():
    """deployment.TpuServingDeployment.__init__ (mutmut_89): `installs` holds the controllers the stack installs."""
    from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
    from tpu_serving.config.loading import load_stack_config

    built = []
    project = load_project(ROOT)

    def program():
        settings = load_stack_config(as_engine_config(VLLM))
        built.append(TpuServingDeployment("d", TpuServingDeploymentArgs(settings)))

    plan = run_program(program, as_engine_config(VLLM), project=project.name, stack="s")
    (deployment,) = built
    installs = [r.name for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"]
    assert installs == ["d-lws"], installs
    assert [(type(i).__name__, i._name) for i in deployment.installs] == [("ControllerInstall", "d-lws")]


def test_edges_a_reserved_slice_consumes_its_reservation():
    """phases.build_pools (mutmut_42): a slice's `reservation` reaches its node pools' reservation affinity."""

    def reserve(slices):
        slices[0].update(capacity="reservation", reservation="tpu-res")

    plan = plan_edited("vllm-llama33-70b-v5e16", tpuSlices=reserve)
    pools = [
        p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["nodeConfig"]["machineType"][:2] == "ct"
    ]
    affinities = [p.inputs["nodeConfig"].get("reservationAffinity") for p in pools]
    assert [a["values"] for a in affinities if a] == [["tpu-res"]], affinities  # the first of three slice kinds


def test_edges_pathways_workers_get_their_grace_period():
    """pathways_job.pods.worker_spec (mutmut_16): terminationGracePeriodSeconds is the workers' field of the CRD."""
    plan = plan_edited("pathwaysjob-batch-v6e16", serving=lambda s: s.update(terminationGracePeriodSeconds=120))
    (job,) = [o for o in kubernetes_objects(plan) if o["kind"] == "PathwaysJob"]
    assert [w.get("terminationGracePeriodSeconds") for w in job["spec"]["workers"]] == [120]


def test_edges_jetstream_rollout_setting_reaches_the_leader_worker_set():
    """jetstream.backend.build (mutmut_46): `serving.rollout: surge` rolls JetStream's groups out with a surge."""
    stack = "llama31-405b-v6e16"

    surge = plan_edited(stack, tpuSlices=two_slices, serving=lambda s: s.update(rollout="surge"))
    strategies = [o["spec"]["rolloutStrategy"] for o in kubernetes_objects(surge) if o["kind"] == "LeaderWorkerSet"]
    # in place (the default the mutant falls back to) has maxSurge 0
    assert [r["rollingUpdateConfiguration"].get("maxSurge") for r in strategies] == [1], strategies


def test_edges_an_unlisted_role_slice_is_named_with_the_valid_ones():
    """vllm.disagg_checks.problems (mutmut_47): the message quotes the role's slice and lists the valid ones."""
    found = problems_of(lambda d, _c: d["decode"].update(slice="v6e-elsewhere"))
    want = 'tpu-serving:serving.disaggregation.decode.slice = "v6e-elsewhere": not one of serving.slices; valid: '
    assert any(p.startswith(want + "prefill, decode") for p in found), found


def test_edges_roles_in_another_namespace_are_named():
    """vllm.disagg_args.problems (mutmut_15): a role in a namespace other than the set's is refused by name."""
    import dataclasses

    other = dataclasses.replace(role(KvRole.DECODE), namespace="elsewhere")
    found = argument_problems(pair(decode=other))
    assert "VllmDisaggregatedArgs.decode.namespace = 'elsewhere': must be the DisaggregatedSet's, 'pd'" in found, found


def test_edges_a_role_autoscaling_metric_that_is_not_a_gauge_is_named():
    """vllm.disagg_checks._group_problems (mutmut_37): the refusal names vLLM as the server whose metric it is."""
    found = problems_of(
        lambda d, _c: d["decode"].update(autoscaling={"maxReplicas": 2, "metric": "vllm:e2e_request_latency_seconds"})
    )
    assert any(": vllm:e2e_request_latency_seconds is a histogram of vLLM; the HPA reads a gauge: " in p for p in found)


def test_edges_an_image_without_tag_or_digest_is_refused():
    """images.image_problem (mutmut_19): an image with neither tag nor digest is refused, in these words."""
    from tpu_serving.images import image_problem

    assert image_problem("us-docker.pkg.dev/p/r/vllm-tpu", pinned=True) == (
        "has no tag or digest; pin a release tag or a sha256 digest"
    )
    assert image_problem("us-docker.pkg.dev/p/r/vllm-tpu") == ""


@pytest.mark.parametrize("component", ["Buckets", "ServingAutoscaler"])
def test_edges_components_name_themselves_in_their_refusals(component):
    """buckets.Buckets.__init__ (mutmut_9), autoscaling.ServingAutoscaler.__init__ (mutmut_10): the refusal names
    the component as Python spells it."""
    import tpu_serving
    from tpu_serving.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        _run(lambda: getattr(tpu_serving, component)("x", {"no_such_argument": 1}))
    assert str(err.value).startswith(f"invalid arguments of {component}: ")


def test_edges_one_problem_is_one_problem():
    """validation.ArgumentsError.__init__ (mutmut_6): "1 problem", not "1 problems"."""
    from tpu_serving.validation import ArgumentsError

    assert str(ArgumentsError("C", ["a"])).splitlines()[0] == "invalid arguments of C: 1 problem"
    assert str(ArgumentsError("C", ["a", "b"])).splitlines()[0] == "invalid arguments of C: 2 problems"


def test_edges_disagg_fixture_is_the_stack_shape():
    """The disaggregated fixture above loads (the refusals are of the edit alone)."""
    assert load(copy.deepcopy(DISAGG)).serving is not None
