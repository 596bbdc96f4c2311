"""PathwaysWorkload: batch and interactive PathwaysJobs, their installs and bad input."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from tests.conftest import CRDS, ROOT, plan_of
from tests.fixtures.configs import (
    PATHWAYS_JOB,
    load,
    plan_edited,
    with_change,
    with_serving,
)
from tpu_serving import catalog
from tpu_serving.backends.pathways_job.facts import PATHWAYS_JOB_MACHINE_TYPES
from tpu_serving.catalog.versions import PINS
from tpu_serving.config import ConfigError
from tpu_serving.platform.controllers import parse_version
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.stack_files import load_project
from tpu_serving_tools.reference import schema

BATCH, INTERACTIVE = "pathwaysjob-batch-v6e16", "pathwaysjob-interactive-v5e16"
PJ_TYPE = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"


def pathways_job(stack: str) -> dict:
    (obj,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == "PathwaysJob"]
    return obj


def test_pathways_job_machine_types_are_the_crd_enum(reference):
    # libyaml's loader, as test_verify_main reads the CRDs: the pure-Python one took 0.7 s over this 600 kB file
    crd = yaml.load(
        (CRDS / "pathwaysjob-v0.1.4-crd.yaml").read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    workers = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["workers"]
    assert tuple(workers["items"]["properties"]["type"]["enum"]) == PATHWAYS_JOB_MACHINE_TYPES


@pytest.mark.parametrize("stack", [BATCH, INTERACTIVE])
def test_pathways_job_validates_against_v0_1_4(stack, reference):
    schema.validate_custom(pathways_job(stack), "v0.1.4")


def test_pathways_job_batch_stack():
    spec = pathways_job(BATCH)["spec"]
    assert spec["workers"] == [
        {
            "type": "ct6e-standard-4t",
            "topology": "4x4",
            "numSlices": 1,
            "maxSliceRestarts": 1,
            "priorityClassName": "tpu-serving-batch",
        }
    ]
    plan = plan_of(BATCH)
    buckets = set(plan.outputs["buckets"].values())
    assert spec["pathwaysDir"].startswith("gs://") and spec["pathwaysDir"][5:].split("/")[0] in buckets
    pod = spec["controller"]["template"]["spec"]
    assert pod["serviceAccountName"] == plan.outputs["kubernetesServiceAccount"]
    (main,) = pod["containers"]
    # the stack file's python:3.11, an official Docker Hub image, through the stack's Docker Hub remote repository
    assert main["name"] == "main"
    assert main["image"] == "us-east5-docker.pkg.dev/tpu-serving-demo/pwbatch-dockerhub/library/python:3.11"
    assert "pathwaysutils.initialize()" in main["command"][-1]
    assert spec["controller"]["deploymentMode"] == "default"


def test_pathways_job_waits_for_both_installs_and_the_bucket():
    plan = plan_of(BATCH)
    (job,) = plan.of_type(PJ_TYPE)
    groups = {g.inputs["files"][0]: g for g in plan.of_type("kubernetes:yaml/v2:ConfigGroup")}
    assert set(groups) == {
        "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml",
    }
    assert {g.urn for g in groups.values()} <= set(job.dependencies)
    scratch = next(b for b in plan.of_type("gcp:storage/bucket:Bucket") if b.inputs["labels"]["purpose"] == "scratch")
    assert scratch.urn in job.dependencies
    jobset = plan.outputs["controllers"]["jobset.x-k8s.io"]
    assert parse_version(jobset) >= (0, 8, 0)
    assert plan.outputs["controllers"]["pathways-job.pathways.domain"] == "v0.1.4"
    # The PathwaysJob controller is applied after JobSet, whose CRDs it uses.
    installs = {r.name: r for r in plan.of_type("tpu-serving:index:ControllerInstall")}
    jobset_group = groups["https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"]
    assert jobset_group.urn in installs["pwbatch-pathways-job"].dependencies


def test_pathways_job_interactive_stack():
    spec = pathways_job(INTERACTIVE)["spec"]
    assert "template" not in spec["controller"]
    assert spec["workers"][0]["type"] == "ct5lp-hightpu-4t" and spec["workers"][0]["topology"] == "4x4"
    out = plan_of(INTERACTIVE).outputs
    assert out["clientEnv"] == {"JAX_PLATFORMS": "proxy", "JAX_BACKEND_TARGET": "grpc://127.0.0.1:29000"}
    assert "port-forward" in out["portForward"] and "29000:29000" in out["portForward"]
    assert "jobset.sigs.k8s.io/replicatedjob-name=pathways-head" in out["portForward"]
    assert "pathwaysutils.initialize()" in out["clientExample"]


def test_pathways_job_machine_type_outside_enum_rejected():
    cfg = copy.deepcopy(PATHWAYS_JOB)
    cfg["tpu-serving:tpuSlices"] = [{"name": "s", "slice": "v6e-1"}]
    with pytest.raises(ConfigError) as exc:
        load(cfg)
    (problem,) = exc.value.problems
    assert problem.startswith("tpu-serving:serving.slices: machine type 'ct6e-standard-1t' is not accepted")
    assert ", ".join(PATHWAYS_JOB_MACHINE_TYPES) in problem


@pytest.mark.parametrize(
    "changes, key, fragment",
    [
        ({"workload": "batch"}, "tpu-serving:serving.container", "required for a batch"),
        (
            {"container": {"image": "python:3.11"}},
            "tpu-serving:serving.container",
            "interactive workload has no container",
        ),
        ({"jobsetVersion": "v0.7.0"}, "tpu-serving:serving.jobsetVersion", "v0.8.0 or later"),
        ({"elasticSlices": 1}, "tpu-serving:serving.elasticSlices", "fewer than the 1 slice"),
        (
            {"maxSliceRestarts": 2},
            "tpu-serving:serving.maxSliceRestarts",
            "has no effect without elasticSlices",
        ),
        ({"pathwaysVersion": "0.5.3"}, "tpu-serving:serving.pathwaysVersion", "jax-"),
        ({"deploymentMode": "colocated"}, "tpu-serving:serving.deploymentMode", "colocate_head_with_workers"),
        (
            {"customComponents": [{"componentType": "sidecar"}]},
            "tpu-serving:serving.customComponents[0].componentType",
            "colocated_python_sidecar",
        ),
        (
            {"headPool": {"machineType": "n2-standard-8"}},
            "tpu-serving:serving.headPool.machineType",
            "n2-standard-8 has 7.91 CPU and 28.3 GiB allocatable; valid: n2-highmem-32",
        ),
        (
            {"headPool": {"machineType": "n2-standard-32"}},
            "tpu-serving:serving.headPool.machineType",
            "the head needs 24 CPU and 122.9 GiB",
        ),
        ({"headPool": {"machineType": "m9-huge"}}, "tpu-serving:serving.headPool.machineType", "unknown machine type"),
        ({"deploymentMode": "colocate_head_with_workers"}, "tpu-serving:serving.deploymentMode", "no toleration"),
        (
            {"container": {"image": "Python 3"}, "workload": "batch"},
            "tpu-serving:serving.container.image",
            "not an image reference",
        ),
    ],
)
def test_pathways_job_bad_input(changes, key, fragment):
    with pytest.raises(ConfigError) as exc:
        load(with_serving(**changes))
    assert any(p.startswith(key) and fragment in p for p in exc.value.problems), exc.value.problems


def test_pathways_job_custom_components_render():
    from tpu_serving import CustomComponent, PathwaysWorkloadArgs
    from tpu_serving.backends.pathways_job.pods import pathways_job_spec

    spec = pathways_job_spec(
        PathwaysWorkloadArgs(
            namespace="n",
            service_account="k",
            name="p",
            shape=catalog.slice_shape("ct5p-hightpu-4t", "2x2x2"),
            num_slices=2,
            pathways_dir="gs://b/p",
            elastic_slices=1,
            custom_components=[
                CustomComponent("worker", image="img", flags=("--a=1",), env={"K": "V"}),
                CustomComponent("proxy_server"),
            ],
        )
    )
    assert spec["customComponents"] == [
        {
            "componentType": "worker",
            "image": "img",
            "customFlags": ["--a=1"],
            "customEnv": [{"name": "K", "value": "V"}],
        },
        {"componentType": "proxy_server"},
    ]
    assert spec["controller"] == {"deploymentMode": "default", "elasticSlices": 1}
    assert spec["workers"][0]["topology"] == "2x2x2" and spec["workers"][0]["numSlices"] == 2


def test_pathways_job_interactive_head_must_not_fit_the_cpu_pool():
    cfg = with_serving()
    cfg["tpu-serving:cluster"] = {
        "name": "pwjob",
        "cpuPool": {"machineType": "n2-highmem-32"},
    }
    with pytest.raises(ConfigError) as exc:
        load(cfg)
    (problem,) = exc.value.problems
    assert problem.startswith('tpu-serving:cluster.cpuPool.machineType = "n2-highmem-32": an interactive Pathways head')


@pytest.mark.parametrize("stack", [BATCH, INTERACTIVE])
def test_pathways_job_head_gets_a_pool_that_fits_it(stack):
    from tpu_serving.backends.pathways_job.args import head_requests
    from tpu_serving.catalog import machines

    plan = plan_of(stack)
    cluster = plan.outputs["clusterName"]
    (head_pool,) = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == f"{cluster}-head"]
    machine = machines.machine(head_pool.inputs["nodeConfig"]["machineType"])
    assert machine is not None and machine.fits(*head_requests(0.25, 512 * 2**20))
    assert head_pool.inputs["autoscaling"] == {"minNodeCount": 0, "maxNodeCount": 1}
    (cpu_pool,) = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if p.inputs["name"] == f"{cluster}-cpu"]
    assert not machines.machine(cpu_pool.inputs["nodeConfig"]["machineType"]).fits(*head_requests())
    (job,) = plan.of_type(PJ_TYPE)
    assert head_pool.urn in job.dependencies


def test_pathways_job_batch_head_is_pinned_to_its_pool_with_the_matching_client():
    spec = pathways_job(BATCH)["spec"]
    pod = spec["controller"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "pwbatch-head"}
    (main,) = pod["containers"]
    assert {"name": "PATHWAYS_JAX_VERSION", "value": "0.9.0"} in main["env"]
    assert spec["pathwaysVersion"] == "jax-0.9.0" == PINS["pathways"].value
    assert '"jax==${PATHWAYS_JAX_VERSION}"' in main["command"][-1]


PATHWAYSUTILS_JAX_FLOOR = {"0.1.0": "0.4.26", "0.1.11": "0.8.3", "0.1.12": "0.8.3", "0.1.13": "0.10.0"}
"""pathwaysutils release -> the oldest JAX it installs with (PyPI requires_dist `jax>=`, read 2026-11-25)."""


def test_pathways_job_batch_stack_pins_a_pathwaysutils_that_admits_the_client_jax():
    (main,) = pathways_job(BATCH)["spec"]["controller"]["template"]["spec"]["containers"]
    (pinned,) = re.findall(r'"pathwaysutils==([\d.]+)"', main["command"][-1])
    client = next(e["value"] for e in main["env"] if e["name"] == "PATHWAYS_JAX_VERSION")
    assert _jax(PATHWAYSUTILS_JAX_FLOOR[pinned]) <= _jax(client), (pinned, client)
    # the newest release does not: it needs a newer Pathways release first
    assert _jax(PATHWAYSUTILS_JAX_FLOOR["0.1.13"]) > _jax(client)


def _jax(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def test_pathways_job_interactive_client_matches_the_pathways_release():
    outputs = plan_of(INTERACTIVE).outputs
    assert pathways_job(INTERACTIVE)["spec"]["pathwaysVersion"] == "jax-0.9.0"
    assert outputs["clientExample"].startswith("pip install pathwaysutils jax==0.9.0 && JAX_PLATFORMS=proxy")


def test_pathways_job_client_jax_follows_the_release_whatever_the_container_says():
    # The client's JAX is derived from pathwaysVersion, the one place a stack names it: a batch container
    # that sets another PATHWAYS_JAX_VERSION gets the release's, and the interactive example follows it.
    def older(serving):
        serving.update(pathwaysVersion="jax-0.5.3")
        serving["container"]["env"] = {"PATHWAYS_JAX_VERSION": "0.9.0", "K": "V"}

    plan = plan_edited(BATCH, serving=older)
    (obj,) = [o for o in kubernetes_objects(plan) if o["kind"] == "PathwaysJob"]
    (main,) = obj["spec"]["controller"]["template"]["spec"]["containers"]
    assert obj["spec"]["pathwaysVersion"] == "jax-0.5.3"
    assert main["env"] == [{"name": "PATHWAYS_JAX_VERSION", "value": "0.5.3"}, {"name": "K", "value": "V"}]
    newer = plan_edited(INTERACTIVE, serving=lambda s: s.update(pathwaysVersion="jax-0.10.2"))
    assert newer.outputs["clientExample"].startswith("pip install pathwaysutils jax==0.10.2 && ")


@pytest.mark.parametrize("stack", [BATCH, INTERACTIVE])
def test_pathways_job_is_replaced_not_updated(stack):
    (job,) = plan_of(stack).of_type(PJ_TYPE)
    assert job.replace_on_changes == ["spec"] and job.delete_before_replace is True


def test_pathways_job_batch_slices_bill_only_while_the_job_runs():
    """A batch job's slices start empty and autoscale to the whole slice (its VMs) when the workers wait, so the
    cluster autoscaler removes them once the job has finished; an interactive job's slices keep their VMs for the
    clients that attach. The slice's VMs come from the stack file's tpuSlices and the catalog."""
    from tpu_serving_tools.preview.stack_files import stack_config

    project = load_project(ROOT)
    for stack, from_zero in (("pathwaysjob-batch-v6e16", True), ("pathwaysjob-interactive-v5e16", False)):
        (declared,) = json.loads(stack_config(project, stack)["tpu-serving:tpuSlices"])
        shape = (
            catalog.resolve_slice_name(declared["slice"])
            if "slice" in declared
            else catalog.slice_shape(declared["machineType"], declared["topology"])
        )
        vms = shape.vms
        (pool,) = [
            r
            for r in plan_of(stack).resources
            if r.type == "gcp:container/nodePool:NodePool" and r.inputs["nodeConfig"]["machineType"].startswith("ct")
        ]
        if from_zero:
            assert pool.inputs["initialNodeCount"] == 0 and "nodeCount" not in pool.inputs, stack
            assert pool.inputs["autoscaling"]["totalMaxNodeCount"] == vms, stack
        else:
            assert pool.inputs["nodeCount"] == vms and "autoscaling" not in pool.inputs, stack


def test_pathways_job_interactive_mode_restarts_after_a_disruption_by_default():
    """An interactive PathwaysJob gets maxRestarts 3 unless the stack sets it, so one drain, node upgrade or host
    maintenance does not fail it for good (SRE review M8); a batch job keeps 0, and a stack's own value wins."""
    assert pathways_job(INTERACTIVE)["spec"]["maxRestarts"] == 3
    assert pathways_job(BATCH)["spec"]["maxRestarts"] == 0
    edited = plan_edited(INTERACTIVE, serving=lambda s: s.update(maxRestarts=0))
    (obj,) = [o for o in kubernetes_objects(edited) if o["kind"] == "PathwaysJob"]
    assert obj["spec"]["maxRestarts"] == 0


def test_pathways_job_preview_says_what_a_disruption_does_to_each_mode():
    interactive = plan_of(INTERACTIVE).as_json()["outputs"]["rollout"]
    assert interactive["drain"].startswith(
        "maxRestarts 3: a drain, node upgrade, host maintenance or repair of any of the job's VMs (its slices' or "
        "the head's) restarts the whole JobSet"
    )
    assert (
        "the 4th fails it for good; a failed PathwaysJob stays failed: nothing recreates it" in (interactive["drain"])
    )
    batch = plan_of(BATCH).as_json()["outputs"]["rollout"]
    assert batch["drain"].startswith("maxRestarts 0: a drain, node upgrade, host maintenance or repair")
    assert "fails the batch job for good" in batch["drain"]
    # SRE review M9: nothing recreates a failed job, and it is not under a serving SLO
    for drain in (interactive["drain"], batch["drain"]):
        assert "nothing recreates it, and a later pulumi up sees no change (delete it, then pulumi up --refresh)" in (
            drain
        )
        assert "the job is not under a serving SLO" in drain
    assert "maintenance exclusions do not stop them" in batch["upgrade"]


def test_pathways_job_interactive_preview_says_an_idle_slice_bills_on():
    assert any(
        "bill at the Cost line's rate whether or not a client is connected" in c
        for c in plan_of(INTERACTIVE).as_json()["outputs"]["caveats"]
    )
    assert "caveats" not in plan_of(BATCH).as_json()["outputs"]


def test_pathways_job_only_a_head_pool_pins_the_batch_head():
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


def test_pathways_job_workload_names_itself():
    """pathways_job.component.PathwaysWorkload (mutmut_2): its argument problems carry its own name."""
    from tpu_serving import PathwaysWorkload
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        PathwaysWorkload("pw", 5)  # type: ignore[arg-type]
    assert str(err.value).startswith("invalid arguments of PathwaysWorkload 'pw': ")


def test_pathways_job_workers_get_their_grace_period():
    """pathways_job.pods.worker_spec (mutmut_16): terminationGracePeriodSeconds is the workers' field of the CRD."""
    plan = plan_edited("pathwaysjob-batch-v6e16", serving=lambda s: s.update(terminationGracePeriodSeconds=120))
    (job,) = [o for o in kubernetes_objects(plan) if o["kind"] == "PathwaysJob"]
    assert [w.get("terminationGracePeriodSeconds") for w in job["spec"]["workers"]] == [120]


def test_pathways_job_head_service_account_id_has_thirty_characters_at_most():
    """config.checks.derived_name_problems (mutmut_78): the head's node service account id `<cluster>-head` is a GCP
    service account id (30 characters at most), not a Kubernetes name (63)."""
    cluster = "pwjob-" + "a" * 21  # 27 characters: "<cluster>-head" has 32
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:cluster/name", cluster, PATHWAYS_JOB))
    assert err.value.problems == [
        f"tpu-serving:cluster.name = \"{cluster}\": the Pathways head's '{cluster}-head' must be 6 to 30 characters, "
        "got 32"
    ]


def test_pathways_job_pathways_batch_head_adds_the_namespace_default_container():
    """pathways_job.checks._head_fit_problems (mutmut_11): the batch head also holds the user's container, which
    the namespace's LimitRange sizes (its defaults, read from a previewed plan)."""
    import re

    from tests.conftest import plan_of
    from tests.fixtures.configs import with_serving
    from tpu_serving_tools.preview.offline import kubernetes_objects

    def need(**serving: object) -> tuple[float, float]:
        with pytest.raises(ConfigError) as err:
            load(with_serving(headPool={"machineType": "e2-small"}, **serving))
        (p,) = [p for p in err.value.problems if "headPool.machineType" in p]
        m = re.search(r"the head needs ([\d.]+) CPU and ([\d.]+) GiB", p)
        assert m, p
        return float(m.group(1)), float(m.group(2))

    (limit_range,) = [o for o in kubernetes_objects(plan_of("pathwaysjob-batch-v6e16")) if o["kind"] == "LimitRange"]
    (default,) = [lim["defaultRequest"] for lim in limit_range["spec"]["limits"] if lim["type"] == "Container"]
    assert (default["cpu"], default["memory"]) == ("250m", "512Mi")
    interactive = need()
    batch = need(workload="batch", container={"image": "python:3.11", "command": ["python", "-c", "1"]})
    assert batch[0] - interactive[0] == pytest.approx(0.25)
    assert batch[1] - interactive[1] == pytest.approx(0.5, abs=0.06)
