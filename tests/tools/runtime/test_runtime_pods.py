"""The pods the runtime model derives from controller objects (tools.runtime.pods)."""

from __future__ import annotations

from typing import Any

import pytest

from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import parse_quantity, pods_of

GI = 2**30


def _plan(*objects: dict[str, Any]) -> PlanView:
    res = [
        {
            "urn": f"urn:k8s:{i}",
            "type": f"kubernetes:x:{o['kind']}",
            "name": str(i),
            "custom": True,
            "inputs": o,
            "propertyDependencies": {},
        }
        for i, o in enumerate(objects)
    ]
    return PlanView({"stack": "t", "resources": res})


def _container(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "img", **extra}


def _lws(size: int = 3, replicas: int = 1, annotations: dict[str, str] | None = None, **tmpl: Any) -> dict[str, Any]:
    tpu = {"resources": {"limits": {"google.com/tpu": "4"}}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws", "namespace": "ns", "annotations": annotations or {}},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {
                "size": size,
                "leaderTemplate": {"spec": {"containers": [_container("lead")]}},
                "workerTemplate": {"spec": {"containers": [_container("w", **tpu)]}},
                **tmpl,
            },
        },
    }


def test_parse_quantity_suffixes():
    assert parse_quantity("500m") == 0.5
    assert parse_quantity("32Gi") == 32 * GI
    assert parse_quantity("32000000000") == 32e9
    assert parse_quantity("1.5") == 1.5
    assert parse_quantity(2) == 2.0
    with pytest.raises(ValueError):
        parse_quantity("12 cores")


def test_lws_names_roles_groups_and_env():
    pods = pods_of(_plan(_lws(size=3, replicas=2)))
    assert [p.name for p in pods] == ["lws-0", "lws-0-1", "lws-0-2", "lws-1", "lws-1-1", "lws-1-2"]
    assert [p.role for p in pods[:3]] == ["leader", "worker", "worker"]
    assert {p.group for p in pods[3:]} == {"ns/LeaderWorkerSet/lws/1"}
    w = pods[2].containers[0].env
    assert w["LWS_LEADER_ADDRESS"] == "lws-0.lws.ns" and w["LWS_GROUP_SIZE"] == "3" and w["LWS_WORKER_INDEX"] == "2"
    # the leader requests no TPU: it is not in the host list and worker ids start at 0
    assert w["TPU_WORKER_HOSTNAMES"] == "lws-0-1.lws,lws-0-2.lws" and w["TPU_WORKER_ID"] == "1"
    assert "TPU_WORKER_ID" not in pods[0].containers[0].env


def test_lws_exclusive_topology_whole_group():
    pods = pods_of(
        _plan(_lws(annotations={"leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}))
    )
    assert {p.exclusive_set for p in pods} == {"ns/LeaderWorkerSet/lws/0"}
    assert pods_of(_plan(_lws()))[0].exclusive_topology is None


def test_lws_subgroups_leader_in_subgroup_zero():
    ann = {"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "cloud.google.com/gke-nodepool"}
    pods = pods_of(_plan(_lws(size=5, annotations=ann, subGroupPolicy={"subGroupSize": 2})))
    sets = [p.exclusive_set.rsplit("/", 1)[1] for p in pods]
    assert sets == ["subgroup-0", "subgroup-0", "subgroup-0", "subgroup-1", "subgroup-1"]
    assert pods[3].containers[0].env["TPU_WORKER_HOSTNAMES"] == "lws-0-3.lws,lws-0-4.lws"


def test_requests_default_from_limits_and_limitrange():
    lr = {
        "kind": "LimitRange",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "250m", "memory": "512Mi"}}]},
    }
    job = {
        "kind": "Job",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        _container("a", resources={"limits": {"cpu": "2", "memory": "1Gi"}}),
                        _container("b"),
                    ]
                }
            }
        },
    }
    (pod,) = pods_of(_plan(lr, job))
    assert pod.containers[0].requests.cpu == 2 and pod.containers[0].requests.memory == GI
    assert pod.containers[1].requests.cpu == 0.25 and pod.containers[1].requests.memory == 512 * 2**20
    assert pod.requests.cpu == 2.25


def test_requests_sidecars_add_init_containers_peak():
    spec = {
        "initContainers": [
            _container("init-big", resources={"requests": {"cpu": "10"}}),
            _container("side", restartPolicy="Always", resources={"requests": {"cpu": "1"}}),
            _container("init-after", resources={"requests": {"cpu": "5"}}),
        ],
        "containers": [_container("app", resources={"requests": {"cpu": "2"}})],
    }
    (pod,) = pods_of(_plan({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}))
    assert [c.sidecar for c in pod.init_containers] == [False, True, False]
    assert pod.requests.cpu == 10  # max(2 + 1, 10, 5 + 1)
    spec["initContainers"] = spec["initContainers"][1:]
    (pod,) = pods_of(_plan({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}))
    assert pod.requests.cpu == 6


def test_jobset_jobs_pods_and_exclusive_per_job():
    js = {
        "kind": "JobSet",
        "metadata": {
            "name": "js",
            "namespace": "ns",
            "annotations": {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"},
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": "slice",
                    "replicas": 2,
                    "template": {
                        "spec": {
                            "parallelism": 3,
                            "template": {
                                "spec": {
                                    "hostNetwork": True,
                                    "containers": [_container("s", ports=[{"containerPort": 8471}])],
                                }
                            },
                        }
                    },
                }
            ]
        },
    }
    pods = pods_of(_plan(js))
    assert len(pods) == 6 and pods[0].name == "js-slice-0-0" and pods[0].role == "slice"
    assert {p.exclusive_set for p in pods} == {"ns/JobSet/js/slice-0", "ns/JobSet/js/slice-1"}
    assert {p.restart_unit for p in pods} == {"ns/JobSet/js"}
    assert pods[0].host_ports == {8471}


def _pathwaysjob(mode: str = "default", template: bool = True) -> dict[str, Any]:
    controller: dict[str, Any] = {"deploymentMode": mode}
    if template:
        controller["template"] = {"spec": {"serviceAccountName": "sa", "containers": [_container("main")]}}
    return {
        "kind": "PathwaysJob",
        "metadata": {"name": "pw", "namespace": "ns"},
        "spec": {
            "controller": controller,
            "pathwaysDir": "gs://b/p",
            "workers": [{"type": "ct6e-standard-4t", "topology": "4x4", "numSlices": 2}],
        },
    }


def test_pathwaysjob_head_with_user_template():
    pods = pods_of(_plan(_pathwaysjob()))
    head = pods[0]
    assert head.role == "pathways-head" and head.owner == "PathwaysJob/pw" and head.host_network
    assert [c.name for c in head.init_containers] == ["pathways-rm", "pathways-proxy"]
    assert all(c.sidecar for c in head.init_containers)
    assert head.containers[0].env["JAX_PLATFORMS"] == "proxy"
    assert head.containers[0].env["JAX_BACKEND_TARGET"] == "grpc://$(PATHWAYS_HEAD):29000"
    assert head.requests.cpu == 24 and head.requests.memory == 132e9  # limits -> requests; main has no request
    assert head.exclusive_topology == "kubernetes.io/hostname" and not head.node_selector
    assert head.service_account == "sa"
    assert "--gcs_scratch_location=gs://b/p" in head.init_containers[0].args


def test_pathwaysjob_workers_and_headless_and_colocate():
    pods = pods_of(_plan(_pathwaysjob(template=False)))
    workers = [p for p in pods if p.role == "pathways-worker"]
    assert len(workers) == 8 and {p.exclusive_set for p in workers} == {
        "ns/PathwaysJob/pw/worker-0",
        "ns/PathwaysJob/pw/worker-1",
    }
    w = workers[0]
    assert w.containers[0].limits.tpu == 4 and w.host_ports == {29005, 29006, 8471, 8080}
    assert w.node_selector == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "4x4",
    }
    head = pods[0]
    assert [c.name for c in head.containers] == ["pathways-rm", "pathways-proxy"] and not head.init_containers
    colocated = pods_of(_plan(_pathwaysjob(mode="colocate_head_with_workers")))[0]
    assert (
        colocated.node_selector["cloud.google.com/gke-tpu-topology"] == "4x4" and colocated.exclusive_topology is None
    )


def test_deployment_and_env_value_from():
    dep = {
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {
                    "containers": [
                        _container(
                            "c", env=[{"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]
                        )
                    ]
                }
            },
        },
    }
    pods = pods_of(_plan(dep))
    assert len(pods) == 2 and pods[0].owner == "Deployment/d"
    assert pods[0].containers[0].env["NS"] == "<fieldRef:metadata.namespace>"


def test_pods_gcs_fuse_annotation_injects_the_sidecar_request():
    annotated = {"metadata": {"annotations": {"gke-gcsfuse/volumes": "true", "gke-gcsfuse/cpu-request": "2"}}}
    lws = _lws(size=2, leaderTemplate={**annotated, "spec": {"containers": [_container("lead")]}})
    leader, worker = pods_of(_plan(lws))
    (sidecar,) = leader.init_containers
    assert sidecar.name == "gke-gcsfuse-sidecar" and sidecar.sidecar
    assert sidecar.requests.cpu == 2 and sidecar.requests.memory == 256 * 2**20
    assert leader.requests.cpu == 2 and worker.init_containers == ()


def test_pods_gcs_fuse_metadata_prefetch_volume_adds_its_sidecar():
    volume = {
        "name": "model",
        "csi": {"driver": "gcsfuse.csi.storage.gke.io", "volumeAttributes": {"bucketName": "b"}},
    }
    prefetching = {
        **volume,
        "csi": {**volume["csi"], "volumeAttributes": {"bucketName": "b", "gcsfuseMetadataPrefetchOnMount": "true"}},
    }
    annotated = {"metadata": {"annotations": {"gke-gcsfuse/volumes": "true"}}}
    plain = _lws(
        size=1, leaderTemplate={**annotated, "spec": {"containers": [_container("lead")], "volumes": [volume]}}
    )
    (pod,) = pods_of(_plan(plain))
    assert [c.name for c in pod.init_containers] == ["gke-gcsfuse-sidecar"]
    asked = _lws(
        size=1, leaderTemplate={**annotated, "spec": {"containers": [_container("lead")], "volumes": [prefetching]}}
    )
    (pod,) = pods_of(_plan(asked))
    fuse, prefetch = pod.init_containers
    assert prefetch.name == "gke-gcsfuse-metadata-prefetch" and prefetch.sidecar
    assert prefetch.requests.cpu == pytest.approx(0.01) and prefetch.requests.memory == 10 * 2**20


def test_make_container_takes_a_limitrange_default_limit_also_as_its_request():
    """A LimitRange default limit for a resource the container does not limit becomes its limit and, when it requests
    none, its request too; a request it gives stays; defaultRequest fills what is still unrequested."""
    from tpu_serving_tools.runtime.pods_model import LimitDefaults, make_container

    defaults = LimitDefaults(default_limits={"cpu": 2.0, "memory": 4.0 * GI}, default_requests={"cpu": 1.0})
    c = make_container({"name": "c", "resources": {"requests": {"memory": "1Gi"}}}, defaults)
    assert (c.limits.cpu, c.limits.memory) == (2.0, 4.0 * GI)
    assert (c.requests.cpu, c.requests.memory) == (2.0, 1.0 * GI)
    assert c.requested == frozenset({"cpu", "memory"})
    kept = make_container({"name": "c", "resources": {"limits": {"cpu": "3"}}}, defaults)
    assert (kept.limits.cpu, kept.requests.cpu) == (3.0, 3.0)


def test_lws_same_named_sets_in_two_namespaces_are_two_sets():
    """Library review 1, M1: two VllmServing at the default name ``vllm`` in two namespaces shared their groups'
    keys, so the model placed one set's groups as the other's and failed the check."""
    import copy as _copy

    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.planview import PlanView

    plan = _copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    (lws,) = [r for r in plan["resources"] if r["type"].endswith(":LeaderWorkerSet")]
    twin = _copy.deepcopy(lws)
    twin["urn"] += "-twin"
    twin["inputs"]["metadata"]["namespace"] = "other"
    plan["resources"].append(twin)
    pods = pods_of(PlanView(plan))
    by_ns = {ns: {p.exclusive_set for p in pods if p.namespace == ns} for ns in {p.namespace for p in pods}}
    assert by_ns["other"] and not by_ns["other"] & by_ns[lws["inputs"]["metadata"]["namespace"]]
