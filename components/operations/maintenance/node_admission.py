"""A ValidatingAdmissionPolicy on node updates by some users: what the host-maintenance gate's ServiceAccount
(:mod:`tpu_serving.operations.maintenance.host_maintenance_job`) and a variant's operators (:mod:`tpu_serving.tenancy.operator_access`) may change
on a node. Kubernetes "Validating Admission Policy" (kubernetes.io/docs/reference/access-authn-authz/
validating-admission-policy/): GA and on by default from 1.30; ``object`` and ``oldObject`` in CEL,
``matchConditions`` on ``request.userInfo``; a merge patch reaches admission as an UPDATE of the node."""

from collections.abc import Sequence

import pulumi_kubernetes as k8s


def cel_list(values: Sequence[str]) -> str:
    """A CEL list of string literals."""
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def node_update_policy(
    metadata: k8s.meta.v1.ObjectMetaArgs, who: tuple[str, str], validations: Sequence[tuple[str, str]]
) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyInitArgs:
    """The policy: node UPDATEs by the users ``who`` (its match condition's name and CEL expression) must pass
    ``validations`` (``(expression, message)``); it fails closed."""
    v1 = k8s.admissionregistration.v1
    name, expression = who
    return v1.ValidatingAdmissionPolicyInitArgs(
        metadata=metadata,
        spec=v1.ValidatingAdmissionPolicySpecArgs(
            failure_policy="Fail",
            match_constraints=v1.MatchResourcesArgs(
                resource_rules=[
                    v1.NamedRuleWithOperationsArgs(
                        api_groups=[""], api_versions=["v1"], operations=["UPDATE"], resources=["nodes"]
                    )
                ]
            ),
            match_conditions=[v1.MatchConditionArgs(name=name, expression=expression)],
            validations=[v1.ValidationArgs(expression=e, message=m) for e, m in validations],
        ),
    )


def policy_binding(
    metadata: k8s.meta.v1.ObjectMetaArgs, policy: str
) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingInitArgs:
    """Binds ``policy``, denying what it refuses."""
    v1 = k8s.admissionregistration.v1
    return v1.ValidatingAdmissionPolicyBindingInitArgs(
        metadata=metadata,
        spec=v1.ValidatingAdmissionPolicyBindingSpecArgs(policy_name=policy, validation_actions=["Deny"]),
    )
