"""Real controllers standing in for their pods: the JobSet v0.12.0 and LWS v0.10.0 managers from the toolchain,
with the install manifests the toolchain built (kustomize over each module's ``config/default``, as their releases
do), applied as a stack would apply them. Their webhooks answer through the harness's route; without the stand-in
(the planted break) the API server cannot call them. Marked ``e2e``; a controller the toolchain lacks is skipped."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import require_toolchain
from tpu_serving.platform import controllers as library_controllers
from tpu_serving_tools.e2e import controllers, nodes
from tpu_serving_tools.e2e.controlplane import (
    ControlPlane,
    load_toolchain,
    toolchain_file,
    toolchain_files,
    toolchain_stages,
)
from tpu_serving_tools.e2e.kube import ApiError, Obj, wait_for
from tpu_serving_tools.e2e.processes import log_tail

pytestmark = pytest.mark.e2e

POD = {"containers": [{"name": "c", "image": "example.invalid/c:1"}]}


def jobset(name: str, job: str) -> Obj:
    template = {"spec": {"parallelism": 1, "completions": 1, "template": {"spec": {**POD, "restartPolicy": "Never"}}}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "work"},
        "spec": {"replicatedJobs": [{"name": job, "replicas": 1, "template": template}]},
    }


def leaderworkerset(name: str, annotations: dict[str, str]) -> Obj:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": "work", "annotations": annotations},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": {"spec": POD}}},
    }


@dataclass(frozen=True)
class Case:
    spec: controllers.ControllerSpec
    manifest: str
    """The toolchain's file of the controller's install manifest."""
    good: Obj
    bad: Obj
    refusal: str
    """The start of the controller's webhook's refusal of ``bad``."""
    creates: tuple[str, str, str]
    """(apiVersion, kind, name) of what the controller makes of ``good``."""
    mutating: str
    """The mutating webhook the API server calls first for ``good``."""
    library: library_controllers.Controller
    """The library's install of it."""


CASES = {
    "jobset": Case(
        controllers.JOBSET,
        "jobset-manifests",
        jobset("good", "rj"),
        jobset("bad", "Bad_Name"),
        'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "bad" is invalid',
        ("batch/v1", "Job", "good-rj-0"),
        "mjobset.kb.io",
        library_controllers.JOBSET,
    ),
    "lws": Case(
        controllers.LWS,
        "lws-manifests",
        leaderworkerset("good", {}),
        leaderworkerset("bad", {"leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "kubernetes.io/hostname"}),
        'admission webhook "vleaderworkerset.kb.io" denied the request:',
        ("apps/v1", "StatefulSet", "good"),
        "mleaderworkerset.kb.io",
        library_controllers.LWS,
    ),
}


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    found: Case = CASES[request.param]
    require_toolchain()
    if found.spec.tool not in load_toolchain() or not toolchain_files().get(found.manifest):
        pytest.skip(f"the e2e toolchain has no {found.spec.tool} or no {found.manifest}")
    return found


@pytest.fixture
def cp(case: Case, tmp_path: Path) -> Iterator[ControlPlane]:
    stages = controllers.kubelet_stages(toolchain_stages(), tmp_path / "stages", [case.spec.namespace])
    with ControlPlane(run_timeout=600, tools=load_toolchain(), stages=stages) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a", initial_nodes=2, max_nodes=2))
        controllers.install_release(plane, Path(toolchain_files()[case.manifest]), case.library)
        plane.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
        yield plane


def create(cp: ControlPlane, obj: Obj) -> str:
    """ "" once ``obj`` is created, else the API server's refusal."""
    try:
        cp.kube.create(obj)
    except ApiError as err:
        return err.message
    return ""


def test_e2e_controller_stands_in_for_its_pods(cp: ControlPlane, case: Case):
    controller = controllers.run_controller(cp, case.spec, timeout=120)
    assert all(pod.pod_ip.startswith(cp.addresses.prefix) for pod in controller.pods)
    assert create(cp, case.bad).startswith(case.refusal)
    assert create(cp, case.good) == ""
    api_version, kind, name = case.creates
    made = wait_for(f"{kind} {name}", lambda: cp.kube.find(api_version, kind, name, "work"), timeout=60)
    assert made["metadata"]["ownerReferences"][0]["kind"] == case.good["kind"]


def test_e2e_planted_webhook_without_its_stand_in(cp: ControlPlane, case: Case):
    refusal = create(cp, case.good)
    assert refusal.startswith(f'Internal error occurred: failed calling webhook "{case.mutating}"')
    assert "connection refused" in refusal


def _condition(pod: Obj, kind: str) -> str:
    return next((c["status"] for c in pod["status"].get("conditions") or () if c["type"] == kind), "")


def _pods(cp: ControlPlane, case: Case) -> list[Obj]:
    return [p for p in cp.kube.list("v1", "Pod", case.spec.namespace) if p["status"].get("phase") == "Running"]


def _every_replica(cp: ControlPlane, case: Case) -> list[Obj]:
    """The controller's Running pods once there are as many as its Deployment's replicas (else []): the release's
    LWS Deployment has two, and a wait on the first pod alone then expects one available replica of two."""
    replicas = cp.kube.get("apps/v1", "Deployment", case.spec.deployment, case.spec.namespace)["spec"]["replicas"]
    pods = _pods(cp, case)
    return pods if len(pods) == int(replicas) else []


def _available(cp: ControlPlane, case: Case) -> int:
    found = cp.kube.get("apps/v1", "Deployment", case.spec.deployment, case.spec.namespace)
    return int(found.get("status", {}).get("availableReplicas") or 0)


def _seen(cp: ControlPlane, case: Case, controller: controllers.Controller) -> str:
    """What a wait on the controller's Deployment last saw: its status, its pods' phase and readiness, and each
    stand-in process (running or not, and its log's last lines)."""
    status = cp.kube.get("apps/v1", "Deployment", case.spec.deployment, case.spec.namespace).get("status", {})
    pods = [
        f"{p['metadata']['name']} {p['status'].get('phase')} Ready={_condition(p, 'Ready')}"
        for p in cp.kube.list("v1", "Pod", case.spec.namespace)
    ]
    processes = [
        f"{pod.process.name} running={pod.process.running()}: {log_tail(pod.process.log, 10)}"
        for pod in controller.pods
    ]
    return f"Deployment status {status}; pods {pods}; processes {processes}"


def test_e2e_controller_pod_ready_only_while_its_probe_passes(cp: ControlPlane, case: Case):
    """As a kubelet: kwok starts the controller's pod, which is not Ready until the binary's readiness probe passes,
    so its Deployment is not available before (what ``pulumi up`` waits for before it creates a custom resource);
    once the process is gone (planted), the pod is reported unready again."""
    pods = wait_for("every replica of the controller Running", lambda: _every_replica(cp, case), timeout=60)
    assert {_condition(p, "Ready") for p in pods} == {"False"}
    assert _available(cp, case) == 0
    controller = controllers.run_controller(cp, case.spec, timeout=120)
    seen = functools.partial(_seen, cp, case, controller)
    assert wait_for("the Deployment available", lambda: _available(cp, case) == len(pods), timeout=60, seen=seen)
    assert {_condition(p, "Ready") for p in _pods(cp, case)} == {"True"}
    # available means serving: the webhooks answer at once (LWS: through the library's probe)
    assert create(cp, case.bad).startswith(case.refusal)
    for pod in controller.pods:
        pod.process.stop()
    assert wait_for(
        "the pods unready", lambda: {_condition(p, "Ready") for p in _pods(cp, case)} == {"False"}, timeout=60
    )
    # the Deployment controller counts the pods after the kubelet reports them: its status follows, not at once
    assert wait_for("the Deployment unavailable", lambda: _available(cp, case) == 0, timeout=30)


@pytest.fixture
def lws_plane(tmp_path: Path) -> Iterator[ControlPlane]:
    """A control plane with the LWS release applied as its upstream manifest is (its own readiness probe)."""
    case = CASES["lws"]
    if not toolchain_file().is_file() or case.spec.tool not in load_toolchain():
        pytest.skip("the e2e toolchain has no lws-manager")
    stages = controllers.kubelet_stages(toolchain_stages(), tmp_path / "stages", [case.spec.namespace])
    with ControlPlane(run_timeout=600, tools=load_toolchain(), stages=stages) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a", initial_nodes=2, max_nodes=2))
        plane.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
        yield plane


@pytest.mark.parametrize("probe", ["upstream ping", "library"])
def test_e2e_lws_webhook_serves_when_its_deployment_is_available(lws_plane: ControlPlane, probe: str):
    """The certificate reaches the pod's volume at the kubelet's next sync (20 s here; a minute by default): until
    then LWS's webhooks do not serve. Its own readiness probe (a ping) makes the pod Ready before that, so a
    LeaderWorkerSet created once the Deployment is available (what ``pulumi up`` does) is refused (planted); with
    the library's probe the pod is Ready only once the webhook serves, and the same create is admitted."""
    case = CASES["lws"]
    manifest = Path(toolchain_files()[case.manifest])
    controllers.install_release(lws_plane, manifest, case.library if probe == "library" else None)
    controllers.run_controller(lws_plane, case.spec, timeout=180, volume_sync=20.0)
    assert wait_for("the Deployment available", lambda: _available(lws_plane, case) >= 1, timeout=60)
    refusal = create(lws_plane, case.good)
    print(f"{probe}: {refusal or 'admitted'}")
    if probe == "library":
        assert refusal == ""
    else:
        assert refusal.startswith('Internal error occurred: failed calling webhook "mleaderworkerset.kb.io"'), refusal


def _evict(cp: ControlPlane, pod: Obj) -> str:
    """Evict ``pod`` as a node drain does; ``""`` when allowed, else the API server's status and message."""
    meta = pod["metadata"]
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
    }
    try:
        cp.kube.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/eviction", body)
    except ApiError as err:
        return f"{err.status} {err.message}"
    return ""


@pytest.fixture(params=["library", "upstream"])
def install(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_e2e_controller_serves_its_webhooks_through_a_drain(case: Case, install: str, tmp_path: Path):
    """A node drain evicts the controller's pods. As the library installs it (two replicas, a disruption budget of
    ``minAvailable: 1``), the first eviction is allowed and the second refused while the first is not back, and the
    webhooks still answer from the other replica. As upstream ships it (planted: JobSet one replica, LWS two, no
    budget), every eviction is allowed, and with the evicted stand-ins gone the API server cannot call the webhooks:
    no custom resource, and no pod the webhooks admit, can be created until the controller is back."""
    stages = controllers.kubelet_stages(toolchain_stages(), tmp_path / "stages", [case.spec.namespace])
    with ControlPlane(run_timeout=600, tools=load_toolchain(), stages=stages) as plane:
        nodes.create_nodes(plane, nodes.Pool("cpu", "n2-standard-8", "us-west4-a", initial_nodes=2, max_nodes=2))
        manifest = Path(toolchain_files()[case.manifest])
        controllers.install_release(plane, manifest, case.library if install == "library" else None)
        plane.kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "work"}})
        controller = controllers.run_controller(plane, case.spec, timeout=180)
        budgets = plane.kube.list("policy/v1", "PodDisruptionBudget", case.spec.namespace)
        if install == "library":
            assert len(controller.pods) == 2 and len(budgets) == 1
            wait_for(
                "the budget counts both replicas healthy",
                lambda: plane.kube.list("policy/v1", "PodDisruptionBudget", case.spec.namespace)[0]
                .get("status", {})
                .get("disruptionsAllowed") == 1,
                timeout=60,
            )  # fmt: skip
        else:
            assert budgets == []
        answers = []
        for stand_in in controller.pods:
            answer = _evict(plane, stand_in.pod)
            answers.append(answer)
            if answer == "":
                stand_in.process.stop()  # as the kubelet stops an evicted pod's containers
        print(f"{install}: evictions {answers}")
        refusal = create(plane, case.bad)
        print(f"{install}: then {case.bad['kind']} bad: {refusal}")
        if install == "library":
            assert answers[0] == ""
            assert answers[1].startswith("429 Cannot evict pod as it would violate the pod's disruption budget")
            assert refusal.startswith(case.refusal)  # the other replica answers
        else:
            assert answers == [""] * len(controller.pods)
            assert refusal.startswith(f'Internal error occurred: failed calling webhook "{case.mutating}"')
