"""Edges the third mutation sample (make mutate SAMPLE=150 SEED=27, at 4c177ee) found untested: each test below
fails with the mutant its docstring names."""

from __future__ import annotations

import copy
import json
import re

import pytest

from tests.conftest import REFERENCE, plan_of
from tests.fixtures.configs import SERVING, load, plan_edited
from tpu_serving.config import ConfigError, validate_stack
from tpu_serving_tools.offline import kubernetes_objects


def test_edges_kubeconfig_exec_speaks_the_client_authentication_api():
    """cluster.kubeconfig (mutmut_46): kubectl runs the exec plugin only for an apiVersion it knows; GKE's plugin
    speaks client.authentication.k8s.io/v1beta1 (client-go pkg/apis/clientauthentication/v1beta1)."""
    from tpu_serving.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert exec_["command"] == "gke-gcloud-auth-plugin"


def test_edges_bucket_name_rule_is_spelled_out():
    """buckets.bucket_name_problem (mutmut_5): the message states Cloud Storage's naming rule."""
    from tpu_serving.buckets import bucket_name_problem

    assert bucket_name_problem("ok-bucket") == ""
    assert bucket_name_problem("Bad_Bucket").endswith("starting and ending with a letter or digit")


def test_edges_saxml_pins_are_the_images_their_source_names(reference):
    """versions._saxml (mutmut_20): each Saxml pin's source is a seed manifest that holds that very image."""
    from tpu_serving.versions import PINS

    for key in ("sax-admin-server", "sax-model-server", "sax-http"):
        pin = PINS[key]
        (path,) = re.findall(r"seed-manifests/[\w.-]+\.yaml", pin.source)
        assert f"image: {pin.value}\n" in (REFERENCE / path).read_text(), key


def test_edges_a_bucket_without_workload_access_gets_no_grant():
    """phases.build_identity (mutmut_34): `workloadAccess: none` means no grant to the workload identity."""
    plan = plan_edited(
        "llama31-405b-v6e16",
        buckets=lambda b: b.append({"purpose": "state", "workloadAccess": "none"}),
    )
    (state,) = [r for r in plan.resources if r.type == "gcp:storage/bucket:Bucket" and r.name.endswith("-state")]
    grants = [r for r in plan.resources if r.type.startswith("gcp:storage/bucketIAM") and "-wi-" in r.name]
    assert grants, "the workload identity has grants on the other buckets"
    assert not [g for g in grants if "state" in g.name], [g.name for g in grants]
    assert state.inputs["name"]


def test_edges_jetstream_refuses_a_checkpoint_bucket_the_workloads_cannot_read():
    """jetstream.checks.problems (mutmut_35): a checkpoints bucket with `workloadAccess: none` is as good as none."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:buckets"][0]["workloadAccess"] = "none"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert "tpu-serving:buckets: jetstream-pathways needs a `checkpoints` bucket the workloads can access" in (
        err.value.problems
    )


def test_edges_validate_stack_names_the_stack_configuration():
    """config.loading.validate_stack (mutmut_2): without a file name, the problems are the stack configuration's."""
    with pytest.raises(ConfigError) as err:
        validate_stack({"cluster": 5})
    assert str(err.value).startswith("invalid stack configuration: ")


def test_edges_not_ready_alert_window_is_given_in_whole_minutes():
    """config.checks.cluster_problems (mutmut_62): the startup window in the message is maxStartupSeconds // 60."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:serving"]["probes"] = {"maxStartupSeconds": 3600}
    cfg["tpu-serving:observability"] = {"notReadyMinutes": 30}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    (p,) = [p for p in err.value.problems if "notReadyMinutes" in p]
    assert "may take 60 minutes to start (serving.probes.maxStartupSeconds = 3600)" in p
    assert p.endswith("set it above 60")


def test_edges_only_a_head_pool_pins_the_batch_head():
    """pathways_job.backend.build (mutmut_103): the batch head pod is pinned to the head pool by its GKE pool
    label; a batch job whose head sits beside the workers (colocate_head_with_workers) has no head pool and names
    none."""
    plan = plan_of("pathwaysjob-batch-v6e16")
    (head_pool,) = [
        r.inputs["name"] for r in plan.resources if r.type == "gcp:container/nodePool:NodePool" and "head" in r.name
    ]
    (job,) = [o for o in kubernetes_objects(plan) if o["kind"] == "PathwaysJob"]
    assert f'"cloud.google.com/gke-nodepool": "{head_pool}"' in json.dumps(job)

    colocated = plan_edited(
        "pathwaysjob-batch-v6e16", serving=lambda s: s.update(deploymentMode="colocate_head_with_workers")
    )
    assert not [r for r in colocated.resources if r.type == "gcp:container/nodePool:NodePool" and "head" in r.name]
    (job,) = [o for o in kubernetes_objects(colocated) if o["kind"] == "PathwaysJob"]
    assert "-head" not in json.dumps(job.get("spec", {}).get("controller", {}))


def test_edges_pathways_workload_names_itself():
    """pathways_job.component.PathwaysWorkload (mutmut_2): its argument problems carry its own name."""
    from tpu_serving import PathwaysWorkload
    from tpu_serving.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        PathwaysWorkload("pw", 5)  # type: ignore[arg-type]
    assert str(err.value).startswith("invalid arguments of PathwaysWorkload: ")


def test_edges_saxml_in_cluster_address_is_the_services_dns_name():
    """saxml.component.SaxmlServing (mutmut_103): with `exposure: cluster` clients use the sax-http Service's
    cluster DNS name, `<service>.<namespace>.svc`, known at preview."""
    plan = plan_edited("saxml-175b-v5e32x2", serving=lambda s: s.update(http={"exposure": "cluster"}))
    services = [
        o
        for o in kubernetes_objects(plan)
        if o["kind"] == "Service" and o["spec"].get("selector") == {"app": "sax-http"}
    ]
    (svc,) = services
    name, namespace = svc["metadata"]["name"], svc["metadata"]["namespace"]
    assert plan.outputs["saxHttpAddress"] == f"{name}.{namespace}.svc"
