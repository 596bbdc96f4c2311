"""A real controller standing in for its pod: JobSet v0.12.0's manager from the toolchain, with the install manifest
the toolchain built (kustomize over the JobSet module's ``config/default``, as its release does), applied as a stack
would apply it. Its webhooks answer through the harness's
route; without the stand-in (the planted break) the API server cannot call them. Marked ``e2e``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tpu_serving_tools.e2e import controllers, crds, nodes
from tpu_serving_tools.e2e.controlplane import ControlPlane, load_toolchain, toolchain_file, toolchain_files
from tpu_serving_tools.e2e.kube import ApiError, Obj, wait_for

pytestmark = pytest.mark.e2e

APPLY_FIRST = {"Namespace": 0}


@pytest.fixture(scope="module")
def manifest() -> Path:
    if not toolchain_file().is_file():
        pytest.skip(f"no e2e toolchain at {toolchain_file()}: run `make e2e-tools` (or set TPU_SERVING_E2E_TOOLCHAIN)")
    found = toolchain_files().get("jobset-manifests")
    if controllers.JOBSET.tool not in load_toolchain() or not found:
        pytest.skip(f"the e2e toolchain has no {controllers.JOBSET.tool} or no jobset-manifests")
    return Path(found)


@pytest.fixture
def cp(manifest: Path) -> Iterator[ControlPlane]:
    with ControlPlane(run_timeout=600) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a"))
        install_release(plane, manifest)
        yield plane


def install_release(cp: ControlPlane, manifest: Path) -> None:
    """The release's objects, server-side applied as a stack applies them: its CRDs first (until Established),
    then its Namespace, then the rest."""
    docs = [d for d in yaml.safe_load_all(manifest.read_text()) if d]
    crds.install(cp.kube, [(str(manifest), d) for d in docs if d["kind"] == "CustomResourceDefinition"])
    for doc in sorted(docs, key=lambda d: APPLY_FIRST.get(d["kind"], 1)):
        if doc["kind"] != "CustomResourceDefinition":
            cp.kube.apply(doc)


def jobset(name: str, job: str) -> Obj:
    pod = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "example.invalid/c:1"}]}
    template = {"spec": {"parallelism": 1, "completions": 1, "template": {"spec": pod}}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "work"},
        "spec": {"replicatedJobs": [{"name": job, "replicas": 1, "template": template}]},
    }


def create(cp: ControlPlane, obj: Obj) -> str:
    """ "" once ``obj`` is created, else the API server's refusal."""
    try:
        cp.kube.create(obj)
    except ApiError as err:
        return err.message
    return ""


def test_e2e_jobset_manager_stands_in_for_its_pod(cp: ControlPlane):
    controller = controllers.run_controller(cp, controllers.JOBSET, timeout=120)
    pod_ip = controller.pods[0].pod_ip
    assert pod_ip.startswith(cp.addresses.prefix)
    cp.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
    refusal = create(cp, jobset("bad", "Bad_Name"))
    assert refusal.startswith('admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "bad" is')
    assert create(cp, jobset("good", "rj")) == ""
    jobs = wait_for("the JobSet's Job", lambda: cp.kube.list("batch/v1", "Job", "work"), timeout=60)
    assert [j["metadata"]["name"] for j in jobs] == ["good-rj-0"]


def test_e2e_planted_jobset_webhook_without_its_stand_in(cp: ControlPlane):
    cp.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
    refusal = create(cp, jobset("good", "rj"))
    assert refusal.startswith('Internal error occurred: failed calling webhook "mjobset.kb.io"')
    assert "connection refused" in refusal
