"""tpu_serving.tenancy.identity: WorkloadIdentity, its arguments and what it refuses."""

from __future__ import annotations

import copy

import pytest

from tests.fixtures.configs import VLLM, one, stack_problems, with_change
from tpu_serving.common.validation import argument_problems
from tpu_serving.tenancy.identity import WorkloadIdentityArgs


def test_edges_component_names_itself_and_the_expected_class():
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
