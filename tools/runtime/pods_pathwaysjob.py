"""The pods of a PathwaysJob: the JobSet its controller creates (head and workers), expanded as a JobSet."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.pods_jobset import expand_jobset
from tpu_serving_tools.runtime.pods_model import LimitDefaults, Pod

# --------------------------------------------------------------------------- PathwaysJob


def _pw_tpu_selector(worker: Mapping[str, Any]) -> dict[str, str]:
    selector = dict(worker.get("nodeSelector") or {})
    selector[F.TPU_ACCELERATOR_LABEL] = F.PW_GKE_ACCELERATOR.get(worker["type"], "")
    selector[F.TPU_TOPOLOGY_LABEL] = worker["topology"]
    return selector


def _pw_vms(machine_type: str, topology: str) -> tuple[int, int]:
    """(VMs per slice, chips per VM) as ``calculateVMsFromMachineTypeAndTopology`` computes them."""
    chips = math.prod(int(p) for p in topology.split("x"))
    per_vm = F.PW_CHIPS_PER_VM.get(machine_type, F.PW_DEFAULT_CHIPS_PER_VM)
    return (chips // per_vm if chips >= per_vm else 1), per_vm


def _pw_head_containers(pw: Mapping[str, Any], as_init: bool) -> list[dict[str, Any]]:
    spec = pw["spec"]
    worker = spec["workers"][0]
    pdir = spec.get("pathwaysDir", "")
    tag = spec.get("pathwaysVersion") or "latest"
    instance = f"{F.PW_TPU_VERSION.get(worker['type'], '')}:{worker['topology']}"
    coordinator = {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}
    rm = {
        "name": "pathways-rm",
        "image": f"{F.PW_RM_AND_WORKER_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
            "--node_type=resource_manager",
            f"--instance_count={int(worker.get('numSlices', 1))}",
            f"--instance_type={instance}",
        ],
        "env": [{"name": "HOST_ADDRESS", "valueFrom": coordinator}, {"name": "TPU_SKIP_MDS_QUERY", "value": "true"}],
        "ports": [{"containerPort": F.PW_RM_PORT}, {"containerPort": F.PW_RM_EXTRA_PORT}],
        "resources": {"limits": dict(F.PW_RM_LIMITS)},
    }
    proxy = {
        "name": "pathways-proxy",
        "image": f"{F.PW_PROXY_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_PROXY_PORT}",
            f"--resource_manager_address=$(PATHWAYS_HEAD):{F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
        ],
        "env": [{"name": "PATHWAYS_HEAD", "valueFrom": coordinator}],
        "ports": [{"containerPort": F.PW_PROXY_PORT}],
        "resources": {"limits": dict(F.PW_PROXY_LIMITS)},
    }
    if as_init:
        rm["restartPolicy"] = proxy["restartPolicy"] = F.SIDECAR_RESTART_POLICY
    return [rm, proxy]


def pathwaysjob_to_jobset(pw: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet the PathwaysJob v0.1.4 controller creates for ``pw`` (``createJobSet``)."""
    meta, spec = pw.get("metadata") or {}, pw.get("spec") or {}
    controller = spec.get("controller") or {}
    worker = spec["workers"][0]
    mode = controller.get("deploymentMode", "default")
    user = controller.get("template")
    coordinator = {"fieldRef": {"fieldPath": "metadata.labels['jobset.sigs.k8s.io/coordinator']"}}
    if user:
        head_spec = dict(user.get("spec") or {})
        main = controller.get("mainContainerName", F.PW_DEFAULT_MAIN_CONTAINER)
        jax_env = [
            {"name": "PATHWAYS_HEAD", "valueFrom": coordinator},
            {"name": "JAX_PLATFORMS", "value": "proxy"},
            {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
            {"name": "JAX_BACKEND_TARGET", "value": f"grpc://$(PATHWAYS_HEAD):{F.PW_PROXY_PORT}"},
        ]
        head_spec["containers"] = [
            {**c, "env": list(c.get("env") or []) + jax_env} if c.get("name") == main else c
            for c in head_spec.get("containers") or []
        ]
        head_spec["initContainers"] = list(head_spec.get("initContainers") or []) + _pw_head_containers(pw, True)
    else:
        head_spec = {"containers": _pw_head_containers(pw, False)}
    head_spec["hostNetwork"] = True
    head_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    head_annotations = dict(meta.get("annotations") or {})
    if mode == F.PW_COLOCATE_MODE:
        head_spec["nodeSelector"] = _pw_tpu_selector(worker)
    else:
        head_annotations[F.JOBSET_EXCLUSIVE_ANNOTATION] = F.PW_HEAD_DEFAULT_EXCLUSIVE_TOPOLOGY
    vms, chips = _pw_vms(worker["type"], worker["topology"])
    tag = spec.get("pathwaysVersion") or "latest"
    pdir = spec.get("pathwaysDir", "")
    worker_container = {
        "name": "pathways-worker",
        "image": f"{F.PW_RM_AND_WORKER_IMAGE}:{tag}",
        "args": [
            f"--server_port={F.PW_WORKER_PORT}",
            f"--resource_manager_address=$(PATHWAYS_HEAD):{F.PW_RM_PORT}",
            f"--gcs_scratch_location={pdir}",
        ],
        "env": [
            {"name": "PATHWAYS_HEAD", "valueFrom": coordinator},
            {"name": "MEGASCALE_COORDINATOR_ADDRESS", "valueFrom": coordinator},
        ],
        "ports": [{"containerPort": p} for p in F.PW_WORKER_PORTS],
        "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
        "resources": {"limits": {F.TPU_RESOURCE: str(chips)}},
    }
    worker_pod = {
        "metadata": {"annotations": {F.JOBSET_EXCLUSIVE_ANNOTATION: F.PW_WORKER_EXCLUSIVE_TOPOLOGY}},
        "spec": {
            "priorityClassName": worker.get("priorityClassName"),
            "containers": [worker_container],
            "nodeSelector": _pw_tpu_selector(worker),
            "volumes": [{"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}],
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
        },
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": meta["name"],
            "namespace": meta.get("namespace", "default"),
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
        },
        "spec": {
            "replicatedJobs": [
                {
                    "name": F.PW_HEAD_JOB_NAME,
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": head_annotations},
                        "spec": {
                            "parallelism": 1,
                            "completions": 1,
                            "template": {"metadata": {"annotations": head_annotations}, "spec": head_spec},
                        },
                    },
                },
                {
                    "name": F.PW_WORKER_JOB_NAME,
                    "replicas": int(worker.get("numSlices", 1)),
                    "template": {"spec": {"parallelism": vms, "completions": vms, "template": worker_pod}},
                },
            ]
        },
    }


def expand_pathwaysjob(obj: Mapping[str, Any], defaults: LimitDefaults) -> list[Pod]:
    """Every pod of a PathwaysJob: the head and the workers of the JobSet its controller creates."""
    roles = {F.PW_HEAD_JOB_NAME: "pathways-head", F.PW_WORKER_JOB_NAME: "pathways-worker"}
    return expand_jobset(
        pathwaysjob_to_jobset(obj), defaults, owner=f"PathwaysJob/{obj['metadata']['name']}", roles=roles
    )
