"""Project and cluster prerequisites: APIs, group RBAC, Cloud NAT, second apply."""

from __future__ import annotations

import copy
import json

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.runtime import prereqs
from tpu_serving_tools.runtime.planview import PlanView

FIXTURES = ROOT / "tests" / "fixtures" / "runtime"


def _view(name: str) -> PlanView:
    return PlanView(json.loads((FIXTURES / name).read_text()))


def _by_subject(name: str) -> dict:
    return {f.subject: f for f in prereqs.check(_view(name)).findings}


def test_prereqs_missing_plan_fails_every_prerequisite() -> None:
    result = prereqs.check(_view("prereq-missing.plan.json"))
    assert result.category == "prerequisites" and result.passed == 0
    subjects = {f.subject for f in result.findings}
    assert {
        "api container.googleapis.com",
        "api containerfilesystem.googleapis.com",
        "group rbac saxml175b-cluster",
        "cloud nat saxml175b-cluster",
    } <= subjects
    # the second apply is a category of its own now, over every resource of the plan
    from tpu_serving_tools.runtime import second_apply

    assert "second apply Cluster saxml175b-cluster" in {
        f.subject for f in second_apply.check(_view("prereq-missing.plan.json")).failures()
    }


def test_prereqs_ok_plan_passes_every_prerequisite() -> None:
    result = prereqs.check(_view("prereq-ok.plan.json"))
    assert result.ok, result.failures()
    assert "api compute.googleapis.com" in {f.subject for f in result.findings}


def test_prereqs_api_must_be_a_dependency() -> None:
    plan = json.loads((FIXTURES / "prereq-ok.plan.json").read_text())
    for r in plan["resources"]:
        if r["type"] == "gcp:container/cluster:Cluster":
            r["dependencies"] = []
    found = {f.subject: f for f in prereqs.check(PlanView(plan)).findings}
    assert not found["api container.googleapis.com"].ok
    assert "not a dependency" in found["api container.googleapis.com"].reason


def test_prereqs_api_disable_on_destroy_must_be_false() -> None:
    plan = json.loads((FIXTURES / "prereq-ok.plan.json").read_text())
    plan["resources"][0]["inputs"]["disableOnDestroy"] = True
    found = {f.subject: f for f in prereqs.check(PlanView(plan)).findings}
    assert not found[f"api {plan['resources'][0]['inputs']['service']}"].ok


def test_prereqs_group_rbac_needs_security_group() -> None:
    assert not _by_subject("prereq-missing.plan.json")["group rbac saxml175b-cluster"].ok
    assert _by_subject("prereq-ok.plan.json")["group rbac saxml175b-cluster"].ok


def test_prereqs_private_nodes_need_router_nat() -> None:
    assert not _by_subject("prereq-missing.plan.json")["cloud nat saxml175b-cluster"].ok
    assert _by_subject("prereq-ok.plan.json")["cloud nat saxml175b-cluster"].ok


def test_prereqs_workload_identity_binding_waits_for_the_cluster_that_makes_the_pool():
    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.prereqs import workload_pool_findings

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v5e16").as_json())  # the session's plan is shared
    (ok,) = workload_pool_findings(PlanView(plan))
    assert ok.ok and ok.reason == "waits for the cluster that makes tpu-serving-demo.svc.id.goog"
    binding = next(r for r in plan["resources"] if r["name"] == "vllm70b-wi-wi-user")
    cluster = next(r["urn"] for r in plan["resources"] if r["type"] == "gcp:container/cluster:Cluster")
    binding["dependencies"] = [d for d in binding["dependencies"] if d != cluster]
    binding["propertyDependencies"] = {}
    (bad,) = workload_pool_findings(PlanView(plan))
    assert not bad.ok and "Identity Pool does not exist" in bad.reason


def test_prereqs_monitoring_that_filters_on_another_cluster_fails():
    """Library review 3, M4: ``ObservabilityArgs.cluster`` named not the cluster, and every alert watched nothing."""
    import copy

    from tests.conftest import plan_of
    from tpu_serving_tools.runtime.planview import PlanView

    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    [(subject, ok)] = [(f.subject, f.ok) for f in prereqs.monitored_cluster_findings(PlanView(plan))]
    assert (subject, ok) == ("monitored cluster vllm70bv6e", True)
    (cluster,) = [r for r in plan["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    cluster["inputs"]["name"] = "llm-prod"
    [finding] = list(prereqs.monitored_cluster_findings(PlanView(plan)))
    assert not finding.ok and "but the plan's cluster is llm-prod: they watch nothing" in finding.reason


def test_prereqs_an_hpa_on_a_pods_metric_needs_the_metrics_adapter():
    """Library review 6, M3: a program without the Custom Metrics Stackdriver Adapter passed, its scale steps
    green, and its HPA never read its metric."""
    import copy

    from tests.conftest import plan_of
    from tpu_serving_tools.runtime import metrics_adapter
    from tpu_serving_tools.runtime.planview import PlanView

    subject = "metrics adapter for HorizontalPodAutoscaler vllm-llama70b/vllm"
    plan = copy.deepcopy(plan_of("vllm-llama33-70b-v6e8").as_json())
    assert [(f.subject, f.ok) for f in prereqs.check(PlanView(plan)).findings if f.subject == subject] == [
        (subject, True)
    ]
    adapter = [r for r in plan["resources"] if "metrics-adapter" in r["name"] and not r["type"].startswith("gcp:")]
    assert adapter
    plan["resources"] = [r for r in plan["resources"] if r not in adapter]
    (gone,) = [f for f in prereqs.check(PlanView(plan)).findings if f.subject == subject]
    assert not gone.ok and gone.reason.startswith("no Custom Metrics Stackdriver Adapter in the plan")
    # a program's record that the cluster runs it (ControllerInstall owned=False) is the precondition it names
    plan["resources"].append(
        {
            "urn": "urn:pulumi:dev::p::tpu-serving:index:ControllerInstall::adapter",
            "type": "tpu-serving:index:ControllerInstall",
            "name": "adapter",
            "custom": False,
            "inputs": {},
            "registeredOutputs": {"owned": False, "upstream": "https://example/custom-metrics-stackdriver-adapter/x"},
        }
    )
    assert next(metrics_adapter.findings(PlanView(plan))).ok
    # the existing-cluster stack leaves the install to the cluster (adapterInstall unset on an existing cluster)
    existing = PlanView(plan_of("vllm-llama33-70b-existing").as_json())
    assert [f.ok for f in metrics_adapter.findings(existing)] == [True]


def test_prereqs_missing_api_names_the_required_apis_argument_that_adds_it() -> None:
    """Library review 9, m3: the finding did not say which ``required_apis`` argument lists the API."""
    found = _by_subject("prereq-missing.plan.json")
    assert found["api containerfilesystem.googleapis.com"].reason.endswith(
        "; a program's ProjectServices gets it from tpu_serving.platform.services.required_apis(..., image_streaming=True)"
    )
    assert found["api container.googleapis.com"].reason.endswith("required_apis(...), whatever its arguments")


def test_prereqs_a_model_stacks_apis_and_adapter_grant_are_its_platforms() -> None:
    """GKE review m2, m3: a model stack enables no API (projectApis existing by default) and makes no adapter grant;
    both are its platform stack's, which the findings name."""
    from tests.conftest import plan_of

    plan = PlanView(plan_of("vllm-llama33-70b-platform").as_json())
    found = {f.subject: f for f in prereqs.check(plan).findings}
    api = found["api container.googleapis.com"]
    assert api.ok and "platform stack my-org/tpu-serving/platform-us-east5's" in api.reason
    assert found["metrics adapter for HorizontalPodAutoscaler vllm-llama70b/vllm"].ok


def test_runtime_prereqs_security_a_declared_existing_nat_satisfies_the_prerequisite_and_nothing_else_does():
    view = PlanView(plan_of("vllm-llama31-405b-v6e16").as_json())
    (nat,) = [f for f in prereqs.check(view).findings if f.subject.startswith("cloud nat")]
    assert nat.ok and "cloudNat: existing" in nat.reason
    plan = copy.deepcopy(view.plan)
    plan["config"] = {k: v for k, v in plan["config"].items() if not k.endswith(":cluster")}
    (nat,) = [f for f in prereqs.check(PlanView(plan)).findings if f.subject.startswith("cloud nat")]
    assert not nat.ok and "private nodes without a RouterNat" in nat.reason
