"""A real controller standing in for its pod: JobSet v0.12.0's manager from the toolchain, its release manifest
rendered by the toolchain's kustomize from the JobSet module's own ``config/default`` (what the release's
``manifests.yaml`` is built from), applied as a stack would apply it. Its webhooks answer through the harness's
route; without the stand-in (the planted break) the API server cannot call them. Marked ``e2e``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tpu_serving_tools.e2e import controllers, nodes
from tpu_serving_tools.e2e.controlplane import ControlPlane, go_mod_dir, load_toolchain, toolchain_file
from tpu_serving_tools.e2e.kube import ApiError, Obj, wait_for

pytestmark = pytest.mark.e2e

APPLY_FIRST = {"CustomResourceDefinition": 0, "Namespace": 1}


@pytest.fixture(scope="module")
def tools() -> dict[str, Path]:
    try:
        found = load_toolchain()
    except FileNotFoundError:
        pytest.skip(f"no e2e toolchain at {toolchain_file()}: run `make e2e-tools` (or set TPU_SERVING_E2E_TOOLCHAIN)")
    missing = [t for t in ("kustomize", controllers.JOBSET.tool) if t not in found]
    if missing:
        pytest.skip(f"the e2e toolchain has no {', '.join(missing)}")
    return found


@pytest.fixture
def cp(tools: dict[str, Path]) -> Iterator[ControlPlane]:
    with ControlPlane(tools=tools, run_timeout=600) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a"))
        install_release(plane, tools["kustomize"])
        yield plane


def install_release(cp: ControlPlane, kustomize: Path) -> None:
    """JobSet v0.12.0's release objects, server-side applied, CRDs and the Namespace first."""
    config = go_mod_dir("sigs.k8s.io/jobset", "v0.12.0") / "config" / "default"
    rendered = subprocess.run([str(kustomize), "build", str(config)], capture_output=True, text=True, check=True)
    docs = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    for doc in sorted(docs, key=lambda d: APPLY_FIRST.get(d["kind"], 2)):
        cp.kube.forget_discovery()
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
    assert pod_ip.startswith("127.1.")
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
