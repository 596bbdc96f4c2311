"""``make e2e``'s lifecycle of a platform stack (``sharedPlatform``, docs/platform.md): no model, so none of a
serving stack's steps (scale, drain, rollout, HPA).

``pulumi up`` of the platform on the run's cluster (:func:`.overlay.platform_overlay`: its existing-cluster mode),
``tpu-serving verify``'s checks of the objects it declares, read from the API server (the library's checks of a
plan without stack settings, :func:`tpu_serving_tools.verify.expect.expectations_of_resources`: its controllers'
Deployments and the shared Gateway among them), a second ``preview --refresh`` with no change, a ``pulumi destroy``
the engine refuses (``sharedPlatform.protect``: :func:`refused_destroy`), ``pulumi state unprotect --all`` as
docs/platform.md says, and ``pulumi destroy`` leaving nothing behind.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from tpu_serving.config.platform_stack import is_platform_stack
from tpu_serving_tools.verify.checks import Finding
from tpu_serving_tools.verify.expect import Expectations

from .lifecycle import inventory, left_behind, retained, second_preview, up_finding
from .stack_run import StackRun


def is_platform(config: Mapping[str, Any]) -> bool:
    """Whether a stack file's ``config:`` is a platform stack's (it sets ``sharedPlatform``)."""
    return is_platform_stack({(k if ":" in k else f"tpu-serving:{k}"): v for k, v in config.items()})


POD_WORKLOADS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "LeaderWorkerSet", "JobSet"})
"""The kinds that make pods: a namespace the platform declares one in is judged by its pods' readiness."""


def with_pods(expect: Expectations) -> Expectations:
    """``expect`` with the pods' readiness judged only in the namespaces where the platform declares a workload: the
    shared Gateway's namespace holds the Gateway alone, which GKE serves with a managed load balancer, not with pods
    (the checks' "no pods" would fail it on every cluster)."""
    declared = {ns for _, kind, ns, _ in expect.declared if kind in POD_WORKLOADS}
    return dataclasses.replace(expect, namespaces=[ns for ns in expect.namespaces if ns in declared])


def platform_lifecycle(report: Any, run: StackRun, api: Any, config: Mapping[str, Any]) -> None:
    """``run_stack``'s lifecycle for a platform stack: up, verify, a second preview, destroy (``config`` unused: the
    checks are read off the deployed state)."""
    from tpu_serving_tools.verify import verify_expected
    from tpu_serving_tools.verify.expect import expectations_of_resources

    from .run import VERIFY_WAIT

    before = inventory(api)
    if not up_finding(report, run):
        return
    state = run.resources()
    expect = with_pods(expectations_of_resources(state))
    report.findings += report.step("verify", lambda: verify_expected(api, expect, wait=VERIFY_WAIT))
    report.findings.append(report.step("preview", lambda: second_preview(run)))
    report.findings += report.step("protect", lambda: refused_destroy(run, state))
    report.step("unprotect", run.unprotect_all)
    report.step("destroy", run.destroy)
    report.findings.append(left_behind(before, inventory(api), retained(state)))


PROTECTED_TYPES = (
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
    "kubernetes:gateway.networking.k8s.io/v1:Gateway",
)
"""What must be protected in the deployed state, as the engine recorded it: the controllers' CRDs (created by the
Kubernetes provider's ConfigGroup, a component of the provider's own) and the shared Gateway; the check fails when
the state holds none of a type."""


def refused_destroy(run: StackRun, state: list[dict[str, Any]]) -> list[Finding]:
    """``sharedPlatform.protect``, judged by the engine: the deployed state marks the CRDs and the Gateway protected,
    and ``pulumi destroy`` fails naming protection while deleting nothing."""
    of_type = {t: [r for r in state if r.get("type") == t] for t in PROTECTED_TYPES}
    protected = {t: sum(1 for r in typed if r.get("protect")) for t, typed in of_type.items()}
    # every one of each type protected, and at least one of each: a type the state lacks fails
    every = all(of_type[t] and protected[t] == len(of_type[t]) for t in PROTECTED_TYPES)
    detail = ", ".join(f"{t.rsplit(':', 1)[-1]}: {protected[t]} of {len(of_type[t])}" for t in PROTECTED_TYPES)
    found = [Finding("protect", "protected in state", every, detail)]
    try:
        run.destroy()
    except Exception as err:  # the engine's refusal, judged by its message and by the state it left
        left = {r["urn"] for r in run.resources()}
        # a default provider nothing uses any more may go (the engine makes it again): it holds nothing in a cloud
        gone = sorted(
            r["urn"].rsplit("::", 1)[-1]
            for r in state
            if r["urn"] not in left and not r["type"].startswith("pulumi:providers:")
        )
        refused = "protected" in str(err)
        detail = f"refused ({'names' if refused else 'does not name'} protection); {len(left)} of {len(state)} left"
        detail += f"; deleted: {', '.join(gone)}" if gone else ""
        return [*found, Finding("protect", "pulumi destroy refused", refused and not gone, detail)]
    return [
        *found,
        Finding("protect", "pulumi destroy refused", False, "pulumi destroy succeeded on a protected stack"),
    ]
