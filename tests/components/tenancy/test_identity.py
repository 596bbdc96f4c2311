"""tpu_serving.tenancy.identity: WorkloadIdentity, its arguments and what it refuses."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import STACKS, plan_of
from tests.fixtures.components import _components, _descendants, run
from tests.fixtures.configs import VLLM, one, stack_problems, with_change
from tpu_serving import BucketGrant, WorkloadIdentity, WorkloadIdentityArgs
from tpu_serving.common.validation import argument_problems


def test_identity_component_names_itself_and_the_expected_class():
    """identity.WorkloadIdentity (mutmut_9) and validation._fields_of (mutmut_11): a value that is neither the
    arguments' class nor a mapping is refused in the component's and the class's own names."""
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.tenancy.identity import WorkloadIdentity

    with pytest.raises(ArgumentsError) as err:
        WorkloadIdentity("wi", 5)  # type: ignore[arg-type]
    text = str(err.value)
    assert text.startswith("invalid arguments of WorkloadIdentity 'wi': 1 problem")
    assert "must be a WorkloadIdentityArgs or a mapping of its fields" in text


# Issue 22, a new user's review: a namespace Kubernetes or GKE reserves is refused, by the stack file and by the
# component's arguments alike.


@pytest.mark.parametrize(
    "namespace", ["kube-system", "kube-public", "kube-node-lease", "gke-managed-cim", "gmp-system"]
)
def test_identity_a_reserved_namespace_is_refused_naming_the_valid_ones(namespace):
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


def test_identity_an_ordinary_namespace_is_accepted():
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


def test_workload_identity_component():
    def program():
        WorkloadIdentity(
            "wi",
            WorkloadIdentityArgs(
                project="p-123456",
                namespace="serve",
                kubernetes_service_account="ksa",
                gcp_service_account_id="serve-wl",
                bucket_grants=[BucketGrant("ckpt", "bucket-a", "read"), BucketGrant("tmp", "bucket-b", "readWrite")],
            ),
        )

    plan = run(program)
    (gsa,) = plan.of_type("gcp:serviceaccount/account:Account")
    assert gsa.inputs["accountId"] == "serve-wl"
    (binding,) = plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs == {
        "member": "serviceAccount:p-123456.svc.id.goog[serve/ksa]",
        "role": "roles/iam.workloadIdentityUser",
        "serviceAccountId": "<unknown>",
    }
    grants = {g.inputs["bucket"]: g.inputs["role"] for g in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    assert grants == {"bucket-a": "roles/storage.objectViewer", "bucket-b": "roles/storage.objectUser"}
    (ksa,) = plan.of_type("kubernetes:core/v1:ServiceAccount")
    (ns,) = plan.of_type("kubernetes:core/v1:Namespace")
    assert ns.urn in ksa.dependencies and gsa.urn in ksa.dependencies
    assert ksa.inputs["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": "<unknown>"}


def test_workload_identity_without_namespace():
    def program():
        WorkloadIdentity(
            "wi",
            WorkloadIdentityArgs(
                project="p-123456",
                namespace="shared",
                kubernetes_service_account="k",
                gcp_service_account_id="shared-wl",
                create_namespace=False,
            ),
        )

    plan = run(program)
    assert plan.of_type("kubernetes:core/v1:Namespace") == []
    assert len(plan.of_type("kubernetes:core/v1:ServiceAccount")) == 1


def test_workload_identity_refuses_a_namespace_kubernetes_would_refuse():
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    args = WorkloadIdentityArgs(
        project="p-123456", namespace="Serving_NS", kubernetes_service_account="k", gcp_service_account_id="gsa-123"
    )
    with pytest.raises(ArgumentsError) as err:
        check_arguments("WorkloadIdentity", args, WorkloadIdentityArgs)
    assert "WorkloadIdentityArgs.namespace = 'Serving_NS': must consist of lower-case letters" in str(err.value)


# WorkloadIdentity's registered outputs, held to the resources of the same plan they name.


@pytest.mark.parametrize("stack", STACKS)
def test_workload_identity_outputs_are_its_namespace_and_service_account(stack: str):
    plan = plan_of(stack)
    for wi in _components(plan, "WorkloadIdentity"):
        out = wi.registered_outputs or {}
        (ksa,) = [r for r in _descendants(plan, wi) if r.type == "kubernetes:core/v1:ServiceAccount"]
        assert out["serviceAccount"] == ksa.inputs["metadata"]["name"]
        assert out["namespace"] == ksa.inputs["metadata"]["namespace"]
