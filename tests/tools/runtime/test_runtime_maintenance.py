"""The runtime model's ``maintenance`` category (tools/runtime/maintenance.py): a plan with two or more standing
LeaderWorkerSet groups in different node pools and no host-maintenance gate CronJob is warned of, in ``tpu-serving
check`` and in a library program's preview, without failing the check; a gated plan is not; a plan with no
LeaderWorkerSet says so (new-user review: a library program lost the gate silently)."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from tests.conftest import plan_of
from tpu_serving_tools import check as cli
from tpu_serving_tools.preview.offline import run_program
from tpu_serving_tools.runtime import maintenance
from tpu_serving_tools.runtime.planview import PlanView

POOLS = ("serving-v6e8a", "serving-v6e8b")


def library_program(gate: bool) -> dict[str, Any]:
    """The new-user review's program, built from the components: two single-host v6e-8 pools in two zones and
    ``VllmServing(replicas=2, zones=2)``; with ``gate``, the host-maintenance gate beside it, ``starts`` as Cloud TPU
    lists the pools' shape."""
    from tpu_serving import (
        ControllerInstall,
        ControllerInstallArgs,
        HostMaintenanceGate,
        HostMaintenanceGateArgs,
        TpuCluster,
        TpuClusterArgs,
        TpuNodePool,
        TpuNodePoolArgs,
        VllmServing,
        VllmServingArgs,
        catalog,
    )
    from tpu_serving.operations.maintenance import host_maintenance
    from tpu_serving.platform import controllers

    def program() -> None:
        cluster = TpuCluster(
            "serving",
            TpuClusterArgs(
                project="my-project",
                region="us-east5",
                zone="us-east5-a",
                name="serving",
            ),
        )
        shape = catalog.slice_shape("ct6e-standard-8t", "2x4")
        pools = [
            TpuNodePool(
                name,
                TpuNodePoolArgs(
                    project="my-project",
                    region="us-east5",
                    zone=f"us-east5-{name[-1]}",
                    cluster=cluster.cluster.id,
                    service_account_id=name,
                    shape=shape,
                    pool_names=(name,),
                ),
            )
            for name in POOLS
        ]
        k8s = pulumi.ResourceOptions(providers={"kubernetes": cluster.provider})
        lws = ControllerInstall("lws", ControllerInstallArgs(controller=controllers.LWS, version="v0.10.0"), opts=k8s)
        depends = [lws, *(p for pool in pools for p in pool.node_pools)]
        VllmServing(
            "serving-vllm",
            VllmServingArgs(
                namespace="serving",
                service_account="server",
                shape=shape,
                model="llama-3.3-70b-instruct",
                served_model_name="meta-llama/Llama-3.3-70B-Instruct",
                weights_bucket="my-checkpoints",
                replicas=2,
                zones=2,
            ),
            opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=depends)),
        )
        if gate:
            HostMaintenanceGate(
                "serving-gate",
                HostMaintenanceGateArgs(
                    namespace="serving",
                    pools=POOLS,
                    leader_worker_sets=("vllm",),
                    starts=host_maintenance.manual_start_listed(shape),
                ),
                opts=k8s,
            )

    return run_program(program, {}, project="my-serving", stack="dev").as_json()


@pytest.fixture(scope="module")
def plans() -> dict[bool, dict[str, Any]]:
    return {gate: library_program(gate) for gate in (False, True)}


def test_maintenance_warns_of_two_groups_in_two_pools_without_a_gate(plans):
    result = maintenance.check(PlanView(plans[False]))
    [finding] = result.findings
    assert not finding.ok and finding.subject == "gate LeaderWorkerSet serving/vllm"
    assert "2 standing groups in 2 node pools, serving-v6e8a (us-east5-a), serving-v6e8b (us-east5-b)" in finding.reason
    assert "no host-maintenance gate CronJob" in finding.reason
    # a library program is told of the component, with what its plan says, not of a stack-file key
    assert "HostMaintenanceGateArgs(namespace='serving', pools=('serving-v6e8a', 'serving-v6e8b')" in finding.reason
    assert "leader_worker_sets=('vllm',), fewest_groups=2" in finding.reason and "hostMaintenance" not in finding.reason
    lines = cli.summary("dev", cli.run_checks(PlanView(plans[False])))
    assert "standing groups apart gated 0/1" in lines[0]
    assert [x for x in lines if x.startswith("  warning [maintenance] gate LeaderWorkerSet serving/vllm: 2 standing")]


def test_maintenance_warning_does_not_fail_the_check(plans):
    """A warning: ``hostMaintenance.mode: ticket`` is a stack's choice, so the category never fails the command."""
    results = cli.run_checks(PlanView(plans[False]))
    others = [r for r in results if r.category != maintenance.CATEGORY]
    assert not next(r for r in results if r.category == maintenance.CATEGORY).ok
    assert cli.passed(results) == all(r.ok for r in others)


def test_maintenance_passes_a_gated_library_plan_and_says_what_the_gate_does(plans):
    [finding] = maintenance.check(PlanView(plans[True])).findings
    assert finding.ok, finding.reason
    assert finding.reason == (
        "2 standing groups in serving-v6e8a (us-east5-a), serving-v6e8b (us-east5-b); CronJob "
        "serving/host-maintenance-gate watches them (starts nothing)"  # single-host v6e: no manual start listed
    )
    lines = cli.summary("dev", cli.run_checks(PlanView(plans[True])))
    assert "standing groups apart gated 1/1" in lines[0]
    assert not [x for x in lines if "warning [maintenance]" in x]


def test_maintenance_warns_of_a_gate_that_leaves_out_a_pool(plans):
    plan = copy.deepcopy(plans[True])
    for r in plan["resources"]:
        if r["type"] == "kubernetes:batch/v1:CronJob":
            pod = r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
            for e in pod["containers"][0]["env"]:
                if e["name"] == "POOLS":
                    e["value"] = "serving-v6e8a"
    [finding] = maintenance.check(PlanView(plan)).findings
    assert not finding.ok and "leaves out pool(s) serving-v6e8b" in finding.reason


def test_maintenance_a_gate_that_names_another_leader_worker_set_is_named_not_asked_for(plans):
    """Library review 13, m4: a gate of the namespace whose LEADER_WORKER_SETS misses the serving was reported as no
    gate at all, with the advice to add one (a second, beside the misnamed first)."""
    plan = copy.deepcopy(plans[True])
    for r in plan["resources"]:
        if r["type"] == "kubernetes:batch/v1:CronJob":
            for e in r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]:
                if e["name"] == "LEADER_WORKER_SETS":
                    e["value"] = "vllm-server"
    [finding] = maintenance.check(PlanView(plan)).findings
    assert not finding.ok
    assert (
        "the host-maintenance gate CronJob serving/host-maintenance-gate names LeaderWorkerSets vllm-server, not "
        in (finding.reason)
    )
    assert "add 'vllm' to that gate's leader_worker_sets" in finding.reason
    assert "HostMaintenanceGateArgs(" not in finding.reason  # not told to add a second gate


def test_maintenance_a_gate_whose_priority_class_the_plan_lacks_never_runs(plans):
    """Library review 2, M5: a gate at the serving PriorityClass in a program without ``Tenancy`` was counted gated,
    but the API server refuses each of its runs' pods."""
    plan = copy.deepcopy(plans[True])
    for r in plan["resources"]:
        if r["type"] == "kubernetes:batch/v1:CronJob":
            r["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["priorityClassName"] = "tpu-serving-online"
    [finding] = maintenance.check(PlanView(plan)).findings
    assert not finding.ok
    assert finding.reason.startswith(
        "the host-maintenance gate CronJob serving/host-maintenance-gate never runs: its pod's PriorityClass "
        "tpu-serving-online is not in the plan"
    )
    failed = [f.subject for r in cli.run_checks(PlanView(plan)) for f in r.failures()]
    assert "priority class tpu-serving-online of CronJob serving/host-maintenance-gate" in failed


def test_maintenance_says_so_when_the_plan_has_no_leaderworkerset():
    """No vacuous pass: a plan with nothing to gate says it had nothing, on the summary line too."""
    view = PlanView(plan_of("saxml-175b-v5e32x2").as_json())
    [finding] = maintenance.check(view).findings
    assert finding.ok and finding.reason.startswith("no LeaderWorkerSet in the plan")
    assert "host-maintenance gate: no LeaderWorkerSet" in cli.summary("saxml", cli.run_checks(view))[0]


def test_maintenance_shipped_stacks_with_groups_apart_are_gated():
    """The stack file's path runs the gate (components/derived.py::maintenance_gate_args) on the stacks of two
    standing groups: the check, reading their plans alone, agrees, and names the stack-file key where one lacks it."""
    for stack, does in (("vllm-llama33-70b-v5e16", "starts"), ("vllm-llama33-70b-v6e8", "watches")):
        findings = maintenance.check(PlanView(plan_of(stack).as_json())).findings
        assert [f.ok for f in findings] == [True] and f"host-maintenance-gate {does}" in findings[0].reason, stack
    plan = plan_of("vllm-llama33-70b-v6e8").as_json()
    plan["resources"] = [r for r in plan["resources"] if r["type"] != "kubernetes:batch/v1:CronJob"]
    [finding] = maintenance.check(PlanView(plan)).findings
    assert (
        not finding.ok
        and "hostMaintenance.mode: start" in finding.reason
        and "HostMaintenanceGate" not in finding.reason
    )


def test_maintenance_preview_lines_of_a_library_program(plans):
    """A library program's preview has a ``Maintenance:`` line (a stack's comes from its ``rollout`` output)."""
    [line] = maintenance.preview_lines(PlanView(plans[False]))
    assert line.startswith("Maintenance: warning: LeaderWorkerSet serving/vllm: 2 standing groups in 2 node pools")
    [line] = maintenance.preview_lines(PlanView(plans[True]))
    assert line.startswith("Maintenance: LeaderWorkerSet serving/vllm: 2 standing groups") and "watches" in line
    assert maintenance.preview_lines(PlanView(plan_of("vllm-llama33-70b-v6e8").as_json())) == []


def test_maintenance_standing_groups_are_on_the_pools_as_they_start(plans):
    """Library review 3, M3: a pool that scales from zero, first in the plan, was named as holding a standing group
    (and the warning's suggested gate left a serving pool out)."""
    plan = copy.deepcopy(plans[True])
    pools = [r for r in plan["resources"] if r["type"] == "gcp:container/nodePool:NodePool"]
    first = next(r for r in pools if r["inputs"]["name"] == POOLS[0])
    spare = copy.deepcopy(first)
    spare["urn"] += "-spare"
    spare["inputs"]["name"] = "serving-v6e8a-spare"
    spare["inputs"]["autoscaling"] = {"totalMinNodeCount": 0, "totalMaxNodeCount": 1, "locationPolicy": "ANY"}
    spare["inputs"].pop("nodeCount", None)  # as TpuNodePoolArgs.scale_from_zero creates it
    spare["inputs"]["initialNodeCount"] = 0
    plan["resources"].insert(plan["resources"].index(pools[0]), spare)
    standing = maintenance.standing_pools(PlanView(plan))
    assert sorted(standing[("serving", "vllm")]) == sorted(POOLS)


def test_maintenance_advice_names_the_hpas_own_bounds() -> None:
    """SRE review round 29, M3: a library program's gate is told of its HPA's bounds, which the cover gives back."""
    hpa = {
        "type": "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
        "name": "vllm-hpa",
        "urn": "urn:hpa",
        "custom": True,
        "inputs": {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "vllm", "namespace": "serving"},
            "spec": {"minReplicas": 2, "maxReplicas": 3, "scaleTargetRef": {"kind": "LeaderWorkerSet", "name": "vllm"}},
        },
    }
    advice = maintenance._advice(PlanView({"stack": "t", "resources": [hpa]}), "serving", "vllm", POOLS, len(POOLS))
    assert "autoscalers=('vllm',), autoscaler_bounds={'vllm': (2, 3)}, starts=" in advice


def test_maintenance_a_gate_must_read_the_pools_a_group_may_move_to():
    """Library review 12, M1: a gate whose POOLS held the standing groups' pools as they start, but not the pool that
    scales from zero, passed; a group recreated after a repair, or one the HPA adds, lands there, and the gate reads
    no node of it. The production example's gate reads its four pools; without one of the two that start empty it
    fails, naming it."""
    from tests.conftest import plan_of

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    plan["resources"] = [r for r in plan["resources"] if r["type"] != maintenance.DEPLOYMENT]
    (cron,) = [r for r in plan["resources"] if r["type"] == "kubernetes:batch/v1:CronJob"]
    (env,) = [
        e
        for e in cron["inputs"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
        if e["name"] == "POOLS"
    ]
    pools = env["value"].split(",")
    reach = maintenance.reachable_pools(PlanView(plan))[("vllm-llama70b", "vllm")]
    standing = maintenance.standing_pools(PlanView(plan))[("vllm-llama70b", "vllm")]
    assert len(pools) == 4 and sorted(reach) == sorted(pools) and len(set(standing)) == 2, (pools, reach, standing)
    [ok] = maintenance.check(PlanView(plan)).findings
    assert ok.ok, ok.reason
    spare = next(p for p in pools if p not in standing)
    env["value"] = ",".join(p for p in pools if p != spare)
    [finding] = maintenance.check(PlanView(plan)).findings
    assert not finding.ok and f"leaves out pool(s) {spare} its groups may run on" in finding.reason
