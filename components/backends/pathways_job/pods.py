"""Pure builders of the ``PathwaysJob`` object (``pathways-job.pathways.domain/v1``) and the head's command."""

from collections.abc import Mapping

import pulumi_kubernetes as k8s

from ...common.podspec import container_security, pod_security, requests
from .args import PathwaysWorkloadArgs, client_jax_version
from .facts import HEAD_JOB, HEAD_POOL_LABEL, MAIN_CONTAINER


def _env(env: Mapping[str, str]) -> list[k8s.core.v1.EnvVarArgs] | None:
    return [k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()] or None


def worker_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """The one ``workers`` entry: machine type, topology and slices from the node pools."""
    spec: dict[str, object] = {
        "type": args.shape.machine_type.name,
        "topology": args.shape.topology,
        "numSlices": args.num_slices,
        "maxSliceRestarts": args.max_slice_restarts,
    }
    if args.termination_grace_period_seconds is not None:
        spec["terminationGracePeriodSeconds"] = args.termination_grace_period_seconds
    if args.priority_class_name is not None:
        spec["priorityClassName"] = args.priority_class_name
    return spec


def controller_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """``controller``: deployment mode, elasticity and, for batch, the user's pod."""
    spec: dict[str, object] = {"deploymentMode": args.deployment_mode}
    if args.elastic_slices is not None:
        spec["elasticSlices"] = args.elastic_slices
    if args.container is not None:
        c = args.container
        env = {**c.env, "PATHWAYS_JAX_VERSION": client_jax_version(args.pathways_version)}
        spec["template"] = k8s.core.v1.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(args.labels)) if args.labels else None,
            spec=k8s.core.v1.PodSpecArgs(
                service_account_name=args.service_account,
                node_selector={HEAD_POOL_LABEL: args.head_pool} if args.head_pool else None,
                security_context=pod_security(),
                # A JAX client of the Pathways proxy: it never calls the Kubernetes API.
                automount_service_account_token=False,
                containers=[
                    k8s.core.v1.ContainerArgs(
                        name=MAIN_CONTAINER,
                        image=c.image,
                        command=list(c.command) or None,
                        args=list(c.args) or None,
                        env=_env(env),
                        # On the CPU head pool beside other pods: memory limited to the request.
                        resources=requests(c.cpu, c.memory, memory_limit=True),
                        security_context=container_security(),
                    )
                ],
            ),
        )
    return spec


def pathways_job_spec(args: PathwaysWorkloadArgs) -> dict[str, object]:
    """``spec`` of the PathwaysJob."""
    spec: dict[str, object] = {
        "maxRestarts": args.max_restarts,
        "pathwaysDir": args.pathways_dir,
        "pathwaysVersion": args.pathways_version,
        "workers": [worker_spec(args)],
        "controller": controller_spec(args),
    }
    if args.custom_components:
        spec["customComponents"] = [
            {
                "componentType": c.component_type,
                **({"image": c.image} if c.image else {}),
                **({"customFlags": list(c.flags)} if c.flags else {}),
                **({"customEnv": [{"name": k, "value": v} for k, v in c.env.items()]} if c.env else {}),
            }
            for c in args.custom_components
        ]
    return spec


def head_pod_command(args: PathwaysWorkloadArgs) -> str:
    """Shell expression naming the head pod (its name has a random suffix)."""
    return (
        f"kubectl -n {args.namespace} get pods -o name -l "
        f"jobset.sigs.k8s.io/jobset-name={args.name},jobset.sigs.k8s.io/replicatedjob-name={HEAD_JOB}"
    )
