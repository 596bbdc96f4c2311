"""Which identity a bucket-using pod really acts as (tools.runtime.identity)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.runtime.identity import check, pod_needs
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import pods_of

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"
NODE_SA, WL_SA = "urn:acct:nodes", "urn:acct:wl"


def _r(urn: str, type_: str, inputs: dict[str, Any], deps: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {
        "urn": urn,
        "type": type_,
        "name": urn.rsplit(":", 1)[1],
        "custom": True,
        "inputs": inputs,
        "propertyDependencies": deps or {},
    }


def _base(*, wi_binding: bool = True, annotated: bool = True) -> list[dict[str, Any]]:
    meta: dict[str, Any] = {"name": "ksa", "namespace": "ns"}
    if annotated:
        meta["annotations"] = {"iam.gke.io/gcp-service-account": "<unknown>"}
    res = [
        _r(
            "urn:cluster:c",
            "gcp:container/cluster:Cluster",
            {"workloadIdentityConfig": {"workloadPool": "p.svc.id.goog"}},
        ),
        _r(NODE_SA, "gcp:serviceaccount/account:Account", {"accountId": "nodes"}),
        _r(WL_SA, "gcp:serviceaccount/account:Account", {"accountId": "wl"}),
        _r(
            "urn:pool:cpu",
            "gcp:container/nodePool:NodePool",
            {
                "name": "cpu",
                "nodeCount": 1,
                "nodeConfig": {"machineType": "n2-standard-8", "serviceAccount": "<unknown>"},
            },
            {"nodeConfig": [NODE_SA]},
        ),
        _r("urn:bucket:b", "gcp:storage/bucket:Bucket", {"name": "bkt"}),
        _r(
            "urn:ksa:ksa",
            "kubernetes:core/v1:ServiceAccount",
            {"kind": "ServiceAccount", "metadata": meta},
            {"metadata": [WL_SA]} if annotated else {},
        ),
    ]
    if wi_binding:
        res.append(
            _r(
                "urn:wi:u",
                "gcp:serviceaccount/iAMMember:IAMMember",
                {
                    "role": "roles/iam.workloadIdentityUser",
                    "member": "serviceAccount:p.svc.id.goog[ns/ksa]",
                    "serviceAccountId": "<unknown>",
                },
                {"serviceAccountId": [WL_SA]},
            )
        )
    return res


def _grant(member_urn: str, role: str) -> dict[str, Any]:
    return _r(
        f"urn:bim:{role}",
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        {"bucket": "<unknown>", "member": "<unknown>", "role": role},
        {"bucket": ["urn:bucket:b"], "member": [member_urn]},
    )


def _pod(args: list[str], host_network: bool = False, env: dict[str, str] | None = None) -> dict[str, Any]:
    c = {"name": "c", "image": "i", "args": args, "env": [{"name": k, "value": v} for k, v in (env or {}).items()]}
    return _r(
        "urn:k8s:pod",
        "kubernetes:core/v1:Pod",
        {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"serviceAccountName": "ksa", "hostNetwork": host_network, "containers": [c]},
        },
    )


def _result(*resources: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    return {f.subject: (f.ok, f.reason) for f in check(PlanView({"stack": "t", "resources": list(resources)})).findings}


SUBJECT_RW = "pod-role ns/p p -> gs://bkt (read/write)"
SUBJECT_R = "pod-role ns/p p -> gs://bkt (read)"


def test_needs_classify_uses():
    view = PlanView(
        {"stack": "t", "resources": [_pod(["load_parameters_path=gs://bkt/x", "--gcs_scratch_location=gs://s/y"])]}
    )
    needs = {n.bucket: n.access for n in pod_needs(pods_of(view)[0])}
    assert needs == {"bkt": "read", "s": "read/write"}


def test_identity_workload_identity_with_role():
    res = _result(*_base(), _grant(WL_SA, "roles/storage.objectUser"), _pod(["--gcs_scratch_location=gs://bkt/s"]))
    assert res[SUBJECT_RW][0] and "KSA ns/ksa -> GSA wl (Workload Identity)" in res[SUBJECT_RW][1]


def test_identity_read_role_is_not_enough_for_write():
    res = _result(*_base(), _grant(WL_SA, "roles/storage.objectViewer"), _pod(["--gcs_scratch_location=gs://bkt/s"]))
    assert not res[SUBJECT_RW][0] and "holds read on gs://bkt" in res[SUBJECT_RW][1]
    assert _result(*_base(), _grant(WL_SA, "roles/storage.objectViewer"), _pod(["load_parameters_path=gs://bkt/c"]))[
        SUBJECT_R
    ][0]


def test_identity_ksa_without_wi_binding_has_no_google_identity():
    res = _result(
        *_base(wi_binding=False), _grant(WL_SA, "roles/storage.objectUser"), _pod(["--gcs_scratch_location=gs://bkt/s"])
    )
    assert not res[SUBJECT_RW][0] and "lacks roles/iam.workloadIdentityUser" in res[SUBJECT_RW][1]


def test_identity_ksa_without_annotation_has_no_google_identity():
    res = _result(
        *_base(annotated=False), _grant(WL_SA, "roles/storage.objectUser"), _pod(["--gcs_scratch_location=gs://bkt/s"])
    )
    assert not res[SUBJECT_RW][0] and "has no iam.gke.io/gcp-service-account annotation" in res[SUBJECT_RW][1]


def test_identity_host_network_acts_as_node_sa():
    pod = _pod(["--gcs_scratch_location=gs://bkt/s"], host_network=True)
    res = _result(*_base(), _grant(WL_SA, "roles/storage.objectUser"), pod)
    assert not res[SUBJECT_RW][0] and "node SA of pool cpu (GSA nodes) holds no storage role" in res[SUBJECT_RW][1]
    assert _result(*_base(), _grant(NODE_SA, "roles/storage.objectUser"), pod)[SUBJECT_RW][0]


def test_identity_project_level_storage_role_counts():
    grant = _r(
        "urn:pim:x",
        "gcp:projects/iAMMember:IAMMember",
        {"role": "roles/storage.objectAdmin", "member": "<unknown>"},
        {"member": [WL_SA]},
    )
    assert _result(*_base(), grant, _pod(["--gcs_scratch_location=gs://bkt/s"]))[SUBJECT_RW][0]


def test_identity_sax_env_uses():
    res = _result(
        *_base(), _grant(WL_SA, "roles/storage.objectViewer"), _pod([], env={"SAX_ROOT": "gs://bkt/sax-root"})
    )
    assert res[SUBJECT_R][0]


def test_identity_finds_host_network_defects_before_fix():
    view = PlanView(json.loads((FIXTURES / "saxml-identity-before-fix.plan.json").read_text()))
    failures = {f.subject: f.reason for f in check(view).failures()}
    subject = "pod-role saxml/sax-model-server-set sax-model-server -> gs://tpu-serving-demo-saxml175b-state (read)"
    assert list(failures) == [subject] and "host network: node SA of pool saxml175b-v5e32-0" in failures[subject]
    view = PlanView(json.loads((FIXTURES / "pathwaysjob-batch-before-fix.plan.json").read_text()))
    assert {f.subject.split(" -> ")[0] for f in check(view).failures()} == {
        "pod-role pathways-batch/pathways-device-check pathways-head",
        "pod-role pathways-batch/pathways-device-check pathways-worker",
    }


def test_identity_ray_workers_read_what_their_leaders_engine_names():
    def container(name: str, script: str) -> dict[str, Any]:
        return {"name": name, "image": "i", "command": ["/bin/sh", "-c"], "args": [script]}

    lws = _r(
        "urn:k8s:lws",
        "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet",
        {
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "vllm", "namespace": "ns"},
            "spec": {
                "leaderWorkerTemplate": {
                    "size": 2,
                    "leaderTemplate": {
                        "spec": {
                            "serviceAccountName": "ksa",
                            "containers": [
                                container("l", "exec vllm serve gs://bkt/model --load-format=runai_streamer")
                            ],
                        }
                    },
                    "workerTemplate": {
                        "spec": {
                            "serviceAccountName": "ksa",
                            "containers": [container("w", "exec bash s.sh worker --ray_address=$(LWS_LEADER_ADDRESS)")],
                        }
                    },
                }
            },
        },
    )
    res = _result(*_base(), _grant(WL_SA, "roles/storage.objectViewer"), lws)
    worker = res["pod-role ns/vllm worker -> gs://bkt (read)"]
    assert worker[0] and "Ray worker of vllm-0" in worker[1]
    no_grant = _result(*_base(), lws)
    assert not no_grant["pod-role ns/vllm worker -> gs://bkt (read)"][0]


def _conditioned(expression: str) -> dict[str, Any]:
    grant = _grant(WL_SA, "roles/storage.objectUser")
    grant["inputs"]["condition"] = {"title": "t", "expression": expression}
    return grant


@pytest.mark.parametrize(
    ("expression", "granted"),
    [
        ('resource.name.startsWith("projects/_/buckets/bkt")', True),
        ('resource.name.startsWith("projects/_/buckets/bkt/")', True),
        # only some objects: the pod's bucket-wide use (and listing) is refused
        ('resource.name.startsWith("projects/_/buckets/bkt/objects/checkpoints/")', False),
        ('resource.name.startsWith("projects/_/buckets/other")', False),
        ('request.time < timestamp("2020-01-01T00:00:00Z")', False),
        ('request.time < timestamp("2999-01-01T00:00:00Z")', True),
        (
            'resource.name.startsWith("projects/_/buckets/bkt") && request.time < timestamp("2020-01-01T00:00:00Z")',
            False,
        ),
        # a condition the model cannot read never counts as access
        ('resource.type == "storage.googleapis.com/Object"', False),
    ],
)
def test_identity_iam_conditions_are_honoured(expression, granted):
    res = _result(*_base(), _conditioned(expression), _pod(["--gcs_scratch_location=gs://bkt/s"]))
    assert res[SUBJECT_RW][0] is granted, res[SUBJECT_RW][1]
