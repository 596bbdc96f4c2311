"""What a first ``pulumi up`` does in order, as the plan records it: workloads wait for the grants their
identity needs at start, and Services in front of slow model servers do not make the update wait for them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import STACKS, plan_of, waits_for
from tpu_serving_policy.rules import pod_specs

WORKLOAD_KINDS = {"LeaderWorkerSet", "DisaggregatedSet", "JobSet", "PathwaysJob", "Deployment", "StatefulSet", "Job"}
WI_USER = "roles/iam.workloadIdentityUser"
SERVICE_AWAIT_SECONDS = 600
"""pulumi-kubernetes waits on a new Service with a selector until its endpoints have settled with no not-ready
address, for 10 minutes by default (v4.32.0 provider/pkg/await/service.go ``DefaultServiceTimeoutMins = 10``,
``checkAndLogStatus``), then fails the update; ``pulumi.com/skipAwait: "true"`` bypasses it
(provider/pkg/metadata/overrides.go)."""


def _k8s(plan, kinds: set[str]) -> list[Any]:
    return [
        r for r in plan.resources if r.custom and r.type.startswith("kubernetes:") and r.inputs.get("kind") in kinds
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_apply_order_workloads_wait_for_their_identity_and_its_bucket_grants(stack):
    plan = plan_of(stack)
    wi_users = {
        r.inputs["member"].rsplit("[", 1)[-1].rstrip("]"): r
        for r in plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
        if r.inputs.get("role") == WI_USER
    }
    checked = 0
    for w in _k8s(plan, WORKLOAD_KINDS):
        namespace = w.inputs["metadata"].get("namespace", "default")
        accounts = {p.get("serviceAccountName") for p in pod_specs(w.inputs)} - {None}
        for ksa in accounts:
            binding = wi_users.get(f"{namespace}/{ksa}")
            if binding is None:
                continue  # an account without a GCP identity (the endpoint picker's, the Sax publisher's)
            (gsa,) = binding.property_dependencies["serviceAccountId"]
            grants = [
                g.urn
                for g in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
                if gsa in g.property_dependencies.get("member", [])
            ]
            missing = {binding.urn, *grants} - waits_for(plan, w)
            assert not missing, f"{w.name} ({namespace}/{ksa}) starts before {sorted(missing)}"
            checked += 1
    if _k8s(plan, {"LeaderWorkerSet", "JobSet"}):  # a PathwaysJob's pods are its controller's, not the plan's
        assert checked, f"{stack}: no workload runs as a service account with a GCP identity"


def _slow_to_ready(pod: Any) -> bool:
    """Whether a pod may stay not ready for longer than the Service await: its startup probes' window."""
    for c in pod.get("containers", []):
        probe = c.get("startupProbe")
        if (
            probe
            and int(probe.get("failureThreshold", 3)) * int(probe.get("periodSeconds", 10)) > SERVICE_AWAIT_SECONDS
        ):
            return True
    return False


def _fronted(plan) -> list[tuple[dict[str, str], bool]]:
    """Each pod template a Service could select: the labels its pods carry, and whether they are slow to ready.
    A LeaderWorkerSet's pods also carry the labels its controller adds (the set's name; lws v0.10.0
    api/leaderworkerset/v1/leaderworkerset_types.go SetNameLabelKey)."""
    out = []
    for w in _k8s(plan, WORKLOAD_KINDS):
        spec = w.inputs.get("spec", {})
        if w.inputs["kind"] == "LeaderWorkerSet":
            lwt = spec["leaderWorkerTemplate"]
            extra = {"leaderworkerset.sigs.k8s.io/name": w.inputs["metadata"]["name"]}
            templates = [t for t in (lwt.get("leaderTemplate"), lwt.get("workerTemplate")) if t]
        elif w.inputs["kind"] == "DisaggregatedSet":
            # each role an inline LeaderWorkerSet spec, whose pods carry the set's and the role's labels (lws
            # v0.10.0 pkg/utils/disaggregatedset/utils.go l.93-111, l.144-169; the templates carry them too)
            extra = {}
            templates = [
                t
                for r in spec["roles"]
                for t in (r["spec"]["leaderWorkerTemplate"].get(k) for k in ("leaderTemplate", "workerTemplate"))
                if t
            ]
        else:
            extra, templates = {}, [spec["template"]] if "template" in spec else []
        out += [({**t["metadata"].get("labels", {}), **extra}, _slow_to_ready(t["spec"])) for t in templates]
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_apply_order_services_of_slow_model_servers_skip_pulumis_await(stack):
    plan = plan_of(stack)
    templates = _fronted(plan)
    for svc in _k8s(plan, {"Service"}):
        selector = svc.inputs["spec"].get("selector") or {}
        slow = [s for labels, s in templates if selector and all(labels.get(k) == v for k, v in selector.items())]
        annotations = svc.inputs["metadata"].get("annotations") or {}
        if any(slow):
            assert annotations.get("pulumi.com/skipAwait") == "true", f"{stack}: {svc.name} waits for model servers"
        else:  # a Service of quick pods keeps the await: the update then knows it serves
            assert "pulumi.com/skipAwait" not in annotations, f"{stack}: {svc.name}"
