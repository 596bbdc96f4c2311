"""tpu_serving_tools.verify.checks: each check passes on a healthy snapshot and fails on each planted break."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tpu_serving_tools.verify.checks import (
    Pool,
    declared,
    placement,
    pods_ready,
    scaling_active,
    selectors,
    selects,
    workloads,
    zones,
)
from tpu_serving_tools.verify.snapshot import Snapshot, descendants

NS = "serving"
POOLS = {"c-v5e16": Pool("c-v5e16", "tpu-v5-lite-podslice", "4x4", 4, 4)}


def _obj(kind: str, name: str, uid: str, owner: str | None = None, **rest: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "uid": uid, "labels": rest.pop("labels", {})}
    if owner:
        metadata["ownerReferences"] = [{"uid": owner}]
    return {"kind": kind, "metadata": metadata, **rest}


def _pod(i: int, node: str, chips: int = 4, ready: bool = True) -> dict[str, Any]:
    labels = {"app": "vllm", "leaderworkerset.sigs.k8s.io/name": "vllm", "leaderworkerset.sigs.k8s.io/group-index": "0"}
    return _obj(
        "Pod",
        f"vllm-0-{i}",
        f"pod{i}",
        owner="sts",
        labels=labels,
        spec={"nodeName": node, "containers": [{"resources": {"requests": {"google.com/tpu": str(chips)}}}]},
        status={"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    )


def _node(i: int, pool: str = "c-v5e16", topology: str = "4x4") -> dict[str, Any]:
    labels = {
        "cloud.google.com/gke-nodepool": pool,
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": topology,
    }
    return {
        "kind": "Node",
        "metadata": {"name": f"n{i}", "uid": f"node{i}", "labels": labels},
        "status": {"allocatable": {"google.com/tpu": "4"}},
    }


def healthy() -> dict[str, list[dict[str, Any]]]:
    lws = _obj("LeaderWorkerSet", "vllm", "lws", spec={"replicas": 1, "leaderWorkerTemplate": {"size": 4}})
    return {
        "LeaderWorkerSet": [lws],
        "StatefulSet": [_obj("StatefulSet", "vllm", "sts", owner="lws")],
        "Service": [
            _obj("Service", "vllm", "hsvc", owner="lws", spec={"clusterIP": "None"}),
            _obj("Service", "vllm-api", "svc", spec={"selector": {"app": "vllm"}}),
        ],
        "Pod": [_pod(i, f"n{i}") for i in range(4)],
        "Node": [_node(i) for i in range(4)],
        "InferencePool": [_obj("InferencePool", "pool", "ip", spec={"selector": {"matchLabels": {"app": "vllm"}}})],
        "HorizontalPodAutoscaler": [
            _obj(
                "HorizontalPodAutoscaler",
                "vllm",
                "hpa",
                spec={"scaleTargetRef": {"kind": "LeaderWorkerSet", "name": "vllm"}},
                status={
                    "currentReplicas": 1,
                    "conditions": [{"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound"}],
                },
            )
        ],
    }


def failed(findings: list[Any]) -> list[str]:
    return [f.line() for f in findings if not f.ok]


def test_descendants_follow_the_owner_chain_through_the_statefulset() -> None:
    snap = Snapshot(healthy())
    assert [p["metadata"]["name"] for p in descendants(snap, snap.of("LeaderWorkerSet")[0], "Pod")] == [
        f"vllm-0-{i}" for i in range(4)
    ]


def test_workloads_healthy_then_service_named_like_the_leaderworkerset() -> None:
    objects = healthy()
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == []
    objects["Service"][0] = _obj("Service", "vllm", "user-svc", spec={"clusterIP": "10.0.0.9"})
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == [
        "FAIL controller Service serving/vllm: not owned by the LeaderWorkerSet (another object took its name); "
        "clusterIP '10.0.0.9', not headless"
    ]


def test_headless_services_of_a_jobset_by_its_subdomain_only_with_dns_hostnames() -> None:
    job_spec = {"replicas": 1, "template": {"spec": {"parallelism": 1}}}
    network = {"enableDNSHostnames": True, "subdomain": "sax"}
    js = _obj("JobSet", "sax-set", "js", spec={"network": network, "replicatedJobs": [job_spec]})
    pod = _obj("Pod", "sax-set-0-0", "p0", owner="job", status={"phase": "Running"})
    objects = {"JobSet": [js], "Job": [_obj("Job", "sax-set-0", "job", owner="js")], "Pod": [pod]}
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == [
        "FAIL controller Service serving/sax: the JobSet's headless Service does not exist"
    ]
    objects["Service"] = [_obj("Service", "sax", "hsvc", owner="js", spec={"clusterIP": "None"})]
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == []
    network["enableDNSHostnames"] = False  # no Service is made, none is asked for
    del objects["Service"]
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == []


def test_workloads_fail_on_missing_pods_and_on_no_workload() -> None:
    objects = healthy()
    objects["Pod"] = objects["Pod"][:3]
    assert failed(workloads(Snapshot(objects), [NS], serving=True)) == [
        "FAIL controller LeaderWorkerSet serving/vllm: 3 pods of 4"
    ]
    assert failed(workloads(Snapshot({}), [NS], serving=True)) == [
        "FAIL controller serving: no LeaderWorkerSet, DisaggregatedSet, JobSet or PathwaysJob"
    ]


def test_placement_healthy_then_half_the_chips() -> None:
    objects = healthy()
    assert failed(placement(Snapshot(objects), [NS], POOLS)) == []
    objects["Pod"] = [_pod(i, f"n{i // 2}", chips=2) for i in range(4)]
    lines = failed(placement(Snapshot(objects), [NS], POOLS))
    assert "FAIL placement  Pod serving/vllm-0-0: asks for 2 of the VM's 4 chips" in lines
    assert "FAIL placement  group serving/vllm/0: two pods share a VM" in lines


def test_placement_fails_off_the_pools_and_on_another_topology_and_without_tpu_pods() -> None:
    objects = healthy()
    objects["Node"][3] = _node(3, pool="other")
    objects["Node"][2] = _node(2, topology="2x4")
    lines = failed(placement(Snapshot(objects), [NS], POOLS))
    assert "FAIL placement  Pod serving/vllm-0-3: on pool 'other', not one of ['c-v5e16']" in lines
    assert "FAIL placement  Pod serving/vllm-0-2: node is tpu-v5-lite-podslice 2x4" in lines
    assert (
        "FAIL placement  group serving/vllm/0: 3 pods on pool c-v5e16, a slice of 4 VMs; "
        "1 pods on 'other', not a pool of the stack"
    ) in lines
    assert failed(placement(Snapshot({}), [NS], POOLS)) == ["FAIL placement  TPU pods: no pod requests google.com/tpu"]


def test_placement_jobset_jobs_each_fill_a_slice_and_fail_split_across_two() -> None:
    """Two child Jobs of a JobSet, four VMs each, on two 4-VM pools: one Job per pool passes; each split 2+2 fails."""
    pools = {p: Pool(p, "tpu-v5-lite-podslice", "4x4", 4, 4) for p in ("a", "b")}

    def job_pod(job: int, i: int, node: str) -> dict[str, Any]:
        labels = {
            "jobset.sigs.k8s.io/jobset-name": "sax",
            "jobset.sigs.k8s.io/replicatedjob-name": "server",
            "jobset.sigs.k8s.io/job-index": str(job),
        }
        spec = {"nodeName": node, "containers": [{"resources": {"requests": {"google.com/tpu": "4"}}}]}
        return _obj("Pod", f"sax-server-{job}-{i}", f"p{job}{i}", labels=labels, spec=spec)

    nodes = [_node(i, pool="a") for i in range(4)] + [_node(i, pool="b") for i in range(4, 8)]
    whole = [job_pod(j, i, f"n{4 * j + i}") for j in (0, 1) for i in range(4)]
    assert failed(placement(Snapshot({"Pod": whole, "Node": nodes}), [NS], pools)) == []
    halves = {0: ("n0", "n1", "n4", "n5"), 1: ("n2", "n3", "n6", "n7")}
    split = [job_pod(j, i, node) for j, on in halves.items() for i, node in enumerate(on)]
    assert failed(placement(Snapshot({"Pod": split, "Node": nodes}), [NS], pools)) == [
        "FAIL placement  group serving/sax/server/0: 2 pods on pool a, a slice of 4 VMs; 2 pods on pool b, a slice "
        "of 4 VMs",
        "FAIL placement  group serving/sax/server/1: 2 pods on pool a, a slice of 4 VMs; 2 pods on pool b, a slice "
        "of 4 VMs",
    ]


def test_placement_group_over_two_whole_slices_passes_and_over_a_half_slice_fails() -> None:
    """A Pathways group holds several slices: whole slices pass, a part of one fails."""
    objects = healthy()
    pools = {**POOLS, "c-v5e16-b": Pool("c-v5e16-b", "tpu-v5-lite-podslice", "4x4", 4, 4)}
    objects["Node"] += [_node(i, pool="c-v5e16-b") for i in range(4, 8)]
    objects["Pod"] = [_pod(i, f"n{i}") for i in range(8)]
    findings = placement(Snapshot(objects), [NS], pools)
    assert failed(findings) == []
    assert [f.line() for f in findings if "group" in f.subject] == [
        "ok   placement  group serving/vllm/0: 8 VMs of 2 whole slices"
    ]
    objects["Pod"] = [_pod(i, f"n{i}") for i in range(6)]
    assert "FAIL placement  group serving/vllm/0: 2 pods on pool c-v5e16-b, a slice of 4 VMs" in failed(
        placement(Snapshot(objects), [NS], pools)
    )


def test_pods_ready_fails_on_an_unready_and_an_unscheduled_pod_and_an_empty_namespace() -> None:
    objects = healthy()
    assert failed(pods_ready(Snapshot(objects), [NS])) == []
    objects["Pod"][0] = _pod(0, "n0", ready=False)
    pending = copy.deepcopy(objects["Pod"][1])
    pending["spec"].pop("nodeName")
    pending["status"]["conditions"] = [
        {"type": "PodScheduled", "status": "False", "message": "0/4 nodes are available: 4 node(s) didn't match"}
    ]
    objects["Pod"][1] = pending
    assert failed(pods_ready(Snapshot(objects), [NS])) == [
        "FAIL ready      Pod serving/vllm-0-0: on n0, not Ready",
        "FAIL ready      Pod serving/vllm-0-1: not scheduled: 0/4 nodes are available: 4 node(s) didn't match",
    ]
    assert failed(pods_ready(Snapshot({}), [NS])) == ["FAIL ready      namespace serving: no pods"]
    done = healthy()
    done["Pod"][2]["status"]["phase"] = "Succeeded"
    assert failed(pods_ready(Snapshot(done), [NS])) == ["FAIL ready      Pod serving/vllm-0-2: on n2, phase Succeeded"]
    one_off = _obj("Pod", "publish", "pub", spec={"nodeName": "n0"}, status={"phase": "Succeeded"})
    one_off["metadata"]["ownerReferences"] = [{"uid": "job", "kind": "Job"}]
    assert failed(pods_ready(Snapshot({"Pod": [one_off]}), [NS])) == []
    one_off["metadata"]["labels"] = {"jobset.sigs.k8s.io/jobset-name": "servers"}
    assert failed(pods_ready(Snapshot({"Pod": [one_off]}), [NS])) == [
        "FAIL ready      Pod serving/publish: on n0, phase Succeeded"
    ]


def test_selectors_fail_on_a_selector_that_selects_nothing_and_a_missing_hpa_target() -> None:
    objects = healthy()
    assert failed(selectors(Snapshot(objects), [NS])) == []
    objects["Service"][1]["spec"]["selector"] = {"app": "vlm"}
    objects["InferencePool"][0]["spec"]["selector"]["matchLabels"] = {"app": "vlm"}
    objects["HorizontalPodAutoscaler"][0]["spec"]["scaleTargetRef"]["name"] = "gone"
    assert failed(selectors(Snapshot(objects), [NS])) == [
        "FAIL selects    Service serving/vllm-api: 0 pods",
        "FAIL selects    InferencePool serving/pool: 0 pods",
        "FAIL selects    HorizontalPodAutoscaler serving/vllm: target LeaderWorkerSet gone does not exist",
    ]


def test_scaling_active_fails_when_the_hpa_reads_no_metric_or_has_not_synced() -> None:
    hpa = healthy()["HorizontalPodAutoscaler"][0]
    assert scaling_active(hpa).ok
    hpa["status"]["conditions"] = [
        {
            "type": "ScalingActive",
            "status": "False",
            "reason": "FailedGetPodsMetric",
            "message": "the HPA was unable to compute the replica count: no metrics returned",
        }
    ]
    assert failed(selectors(Snapshot({**healthy(), "HorizontalPodAutoscaler": [hpa]}), [NS])) == [
        "FAIL scales     HorizontalPodAutoscaler serving/vllm: ScalingActive False (FailedGetPodsMetric): "
        "the HPA was unable to compute the replica count: no metrics returned"
    ]
    del hpa["status"]["conditions"]
    assert scaling_active(hpa).line() == (
        "FAIL scales     HorizontalPodAutoscaler serving/vllm: no ScalingActive condition: the HPA controller has "
        "not synced it"
    )


def test_selects_match_expressions() -> None:
    labels = {"role": "decode", "app": "vllm"}
    assert selects({"matchExpressions": [{"key": "role", "operator": "In", "values": ["decode"]}]}, labels)
    assert not selects({"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["decode"]}]}, labels)
    assert selects({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, labels)
    assert not selects({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, labels)
    assert not selects(None, labels)


def test_declared_fails_on_an_absent_object_and_on_an_empty_plan() -> None:
    key = ("apps/v1", "Deployment", NS, "epp")
    assert failed(declared(Snapshot(present={key: True}), [key])) == []
    assert failed(declared(Snapshot(present={key: False}), [key])) == [
        "FAIL declared   Deployment serving/epp: not found on the API server"
    ]
    assert failed(declared(Snapshot(), [])) == ["FAIL declared   plan: the plan declares no Kubernetes object"]


def _spread_world(leader_zones: list[str], spread: bool = True) -> Snapshot:
    """Two-zone LeaderWorkerSet ``vllm``: one single-host leader per zone given, on a node of that zone."""
    standing = {"key": "leaderworkerset.sigs.k8s.io/group-index", "operator": "In", "values": ["0", "1"]}
    constraint = {
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "minDomains": 2,
        "labelSelector": {"matchLabels": {"role": "leader"}, "matchExpressions": [standing]},
    }
    leader = {"spec": {"topologySpreadConstraints": [constraint] if spread else []}}
    lws = _obj(
        "LeaderWorkerSet",
        "vllm",
        "lws",
        spec={"replicas": len(leader_zones), "leaderWorkerTemplate": {"leaderTemplate": leader}},
    )
    nodes, pods = [], []
    for g, zone in enumerate(leader_zones):
        node = _node(g)
        node["metadata"]["labels"]["topology.kubernetes.io/zone"] = zone
        nodes.append(node)
        pod = _pod(g, f"n{g}")
        pod["metadata"]["labels"].update(
            {
                "leaderworkerset.sigs.k8s.io/group-index": str(g),
                "leaderworkerset.sigs.k8s.io/worker-index": "0",
                "role": "leader",
            }
        )
        pods.append(pod)
    return Snapshot({"LeaderWorkerSet": [lws], "Node": nodes, "Pod": pods})


def test_verify_checks_zones_pass_when_the_leaders_span_the_required_zones() -> None:
    (finding,) = zones(_spread_world(["us-east5-a", "us-east5-b"]), [NS])
    assert finding.ok, finding.line()
    assert "2 leaders in 2 zones (us-east5-a, us-east5-b), 2 wanted" in finding.detail


def test_verify_checks_zones_fail_when_a_scale_down_left_the_leaders_in_one_zone() -> None:
    (finding,) = zones(_spread_world(["us-east5-a", "us-east5-a"]), [NS])
    assert not finding.ok
    assert "2 leaders in 1 zones" in finding.detail


def test_verify_checks_zones_count_only_the_standing_groups_the_rule_selects() -> None:
    """SRE review round 45, M3: the HPA's third group may take the surviving zone's free slice; it is not a standing
    group, and the check does not count it."""
    (finding,) = zones(_spread_world(["us-east5-a", "us-east5-b", "us-east5-b"]), [NS])
    assert finding.ok, finding.line()
    assert "2 leaders in 2 zones" in finding.detail
    (crowded,) = zones(_spread_world(["us-east5-b", "us-east5-b", "us-east5-a"]), [NS])
    assert not crowded.ok
    assert "2 leaders in 1 zones (us-east5-b)" in crowded.detail


def test_verify_checks_zones_one_leader_needs_one_zone_and_no_leader_fails() -> None:
    (one,) = zones(_spread_world(["us-east5-b"]), [NS])
    assert one.ok, one.line()
    (none,) = zones(_spread_world([]), [NS])
    assert (none.ok, none.detail) == (False, "no leader on a node")


def test_verify_checks_zones_skip_a_leaderworkerset_without_the_rule() -> None:
    assert zones(_spread_world(["us-east5-a", "us-east5-a"], spread=False), [NS]) == []


@pytest.mark.parametrize(
    ("selector", "labels", "picked"),
    [
        ({}, {}, True),
        (None, {"a": "1"}, False),
        ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
        ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
        ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {}, False),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {}, True),
        ({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]}, {"a": "1"}, False),
    ],
)
def test_selects_follows_the_label_selector_rules(selector, labels, picked) -> None:
    assert selects(selector, labels) is picked


def _class_node(i: int, pool: str, compute_class: str | None) -> dict[str, Any]:
    node = _node(i, pool=pool)
    if compute_class is not None:
        node["metadata"]["labels"]["cloud.google.com/compute-class"] = compute_class
    return node


CLASSES = {"c-serving": Pool("c-serving", "tpu-v5-lite-podslice", "4x4", 4, 4)}


def test_placement_a_group_on_a_pool_gke_made_for_the_stacks_compute_class_passes() -> None:
    objects = healthy()
    objects["Node"] = [_class_node(i, "gke-made-np-1", "c-serving") for i in range(4)]
    assert failed(placement(Snapshot(objects), [NS], POOLS, CLASSES)) == []


def test_placement_a_pool_of_another_class_or_none_is_not_the_stacks() -> None:
    objects = healthy()
    objects["Node"] = [_class_node(i, "gke-made-np-1", "other-class" if i < 2 else None) for i in range(4)]
    lines = failed(placement(Snapshot(objects), [NS], POOLS, CLASSES))
    assert "FAIL placement  Pod serving/vllm-0-0: on pool 'gke-made-np-1', not one of ['c-v5e16']" in lines
    assert "FAIL placement  Pod serving/vllm-0-3: on pool 'gke-made-np-1', not one of ['c-v5e16']" in lines
