"""Pure builders of the Saxml objects: the admin and HTTP Deployments, the model servers' JobSet,
the admin NetworkPolicy, the HTTP Service and the publication Job (its script is :mod:`.publisher`)."""

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

import pulumi_kubernetes as k8s

from ...catalog import node_selector
from ...common.podspec import container_security, pod_security, requests, tcp_probe
from ...common.spread import zone_spread_args
from ...pools.nodepool import TPU_RESOURCE
from .args import SaxmlServingArgs
from .facts import (
    ADMIN,
    ADMIN_PORT,
    DISRUPTION_RULE,
    DISRUPTION_TARGET,
    HTTP,
    HTTP_PORT,
    HTTP_REPLICAS,
    HTTP_SERVICE,
    INTERNAL_LB,
    MEGASCALE_PORT,
    MODEL_JOB,
    MODEL_PORT,
    POD_FAILURE_POLICY_REASON,
    PUBLISHER,
    PUBLISHER_TTL_SECONDS,
)

PUBLISHER_SCRIPT = Path(__file__).with_name("publisher.py")

NOBODY = 65534
"""The ``nobody`` user, for the images that need no user of their own."""


@functools.cache
def publisher_script() -> str:
    """Source of the publication reconciler, shipped to the Job in a ConfigMap."""
    return PUBLISHER_SCRIPT.read_text()


SERVER_REQUESTS: tuple[str, str] = ("500m", "1Gi")
"""CPU and memory requests of sax-admin-server and sax-http."""
PUBLISHER_REQUESTS: tuple[str, str] = ("100m", "128Mi")
"""CPU and memory requests of the publication Job's container."""


def _meta(
    args: SaxmlServingArgs, name: str, *, annotations: Mapping[str, str] | None = None
) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name, namespace=args.namespace, labels=dict(args.labels), annotations=annotations
    )


def _server_deployment(
    args: SaxmlServingArgs,
    name: str,
    image: str,
    port: int,
    env: Mapping[str, str],
    *,
    run_as_user: int | None,
    replicas: int = 1,
) -> k8s.apps.v1.DeploymentInitArgs:
    """One Sax server on the CPU pool: ``replicas`` pods, TCP probes on its port, CPU/memory requests, memory
    limited, hardened (``run_as_user``: a fixed non-root user where the image allows it); more than one replica
    spread over zones, preferred (:func:`tpu_serving.common.spread.zone_spread`), so a zone outage leaves one."""
    selector = {"app": name}
    container = k8s.core.v1.ContainerArgs(
        name=name,
        image=image,
        ports=[k8s.core.v1.ContainerPortArgs(container_port=port)],
        env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()],
        resources=requests(*SERVER_REQUESTS, memory_limit=True),
        readiness_probe=tcp_probe(port, 10, 3),
        liveness_probe=tcp_probe(port, 30, 5),
        security_context=container_security(run_as_user=run_as_user),
    )
    return k8s.apps.v1.DeploymentInitArgs(
        metadata=_meta(args, name),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=replicas,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=selector),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, **selector}),
                spec=k8s.core.v1.PodSpecArgs(
                    host_network=False,
                    topology_spread_constraints=[zone_spread_args(selector)] if replicas > 1 else None,
                    service_account_name=args.service_account,
                    priority_class_name=args.priority_class_name,
                    containers=[container],
                    security_context=pod_security(),
                    automount_service_account_token=False,  # the Sax servers never call the Kubernetes API
                ),
            ),
        ),
    )


def admin_deployment(args: SaxmlServingArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """The admin server: cell state in the stack's bucket, on the CPU pool, never privileged, not root.

    Its image (google/saxml ``saxml/tools/docker/Dockerfile.admin`` @ 61b7b4c) is an Ubuntu base with the
    Go binaries in ``/usr/bin`` and an entrypoint script that writes state only to Cloud Storage and logs to
    stderr (``--alsologtostderr``; glog's files go to ``/tmp``, writable by all), serving on port 10000:
    nothing needs root, so it runs as ``nobody`` (65534).
    """
    # The image defaults SAX_CELL to /sax/test (Dockerfile.admin l.41 at v1.1.0 and v1.2.0; its entrypoint passes
    # --sax_cell=${SAX_CELL} to admin_config and admin_server, l.46-56): the stack's cell is set, or a cell other
    # than /sax/test would have no admin server for the model servers to join.
    env = {"GSBUCKET": args.state_bucket, "SAX_CELL": args.cell}
    return _server_deployment(args, ADMIN, args.images.admin, ADMIN_PORT, env, run_as_user=NOBODY)


def http_deployment(args: SaxmlServingArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """sax-http, the HTTP API (publish, listcell, generate, unpublish) on port 8888.

    It keeps the image's user: google/saxml publishes no Dockerfile for the HTTP server image, so nothing
    shows that it runs without root (the scan baseline says so).

    Two replicas (:data:`~.facts.HTTP_REPLICAS`) behind the Service, under :func:`http_disruption_budget`: sax-http
    holds no state of its own, each call is a call of the Python Sax client, which finds the cell's servers from
    ``SAX_ROOT`` (the Saxml HTTP server tutorial, GoogleCloudPlatform/ai-on-gke
    tutorials-and-examples/tpu-examples/saxml/http-server/README.md: "The HTTP server uses the Python Sax client
    in order to communicate with the Sax cluster"), so either replica answers any request.
    """
    env = {"SAX_ROOT": args.sax_root}
    return _server_deployment(args, HTTP, args.images.http, HTTP_PORT, env, run_as_user=None, replicas=HTTP_REPLICAS)


def http_disruption_budget(args: SaxmlServingArgs) -> k8s.policy.v1.PodDisruptionBudgetInitArgs:
    """sax-http's budget: one of its two pods may be evicted at a time, so a drain takes one, and the next
    eviction waits (429) until the Deployment's replacement is Ready. A budget of ``maxUnavailable: 0`` (or
    ``minAvailable: 1`` over one replica) would refuse every eviction, and a drain would wait for ever
    (k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/storage/eviction.go l.433-436: 429 while
    ``disruptionsAllowed`` is 0)."""
    return k8s.policy.v1.PodDisruptionBudgetInitArgs(
        metadata=_meta(args, HTTP),
        spec=k8s.policy.v1.PodDisruptionBudgetSpecArgs(
            max_unavailable=1, selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"app": HTTP})
        ),
    )


def admin_network_policy(args: SaxmlServingArgs) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """Lets the model servers join the cell: the admin server's port from any source.

    The model servers run on the host network, so they connect from their node's address,
    which the namespace's pod-only policy does not admit. On GKE Dataplane V2 (Cilium) an
    ``ipBlock`` of the node range does not match node addresses either: Cilium gives them the
    reserved ``host``/``remote-node`` identities and matches CIDR peers against nodes only with
    ``--policy-cidr-match-mode=nodes``, off by default and not exposed by GKE
    (cilium/cilium Documentation/security/policy/language.rst, "Selecting nodes with CIDR /
    ipBlock"; cilium/cilium#12277, #10405). An ingress rule with ports and no ``from`` admits
    every source, so this policy opens exactly one port of one pod, and nothing else. The VPC firewall
    admits to it every pod of the cluster and the node range (10.128.0.0/9 on an auto-mode network:
    GKE's ``gke-<cluster>-<hash>-vms`` and ``-all`` rules,
    https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules); docs/security.md says so.
    """
    return k8s.networking.v1.NetworkPolicyInitArgs(
        metadata=_meta(args, f"{ADMIN}-from-model-servers"),
        spec=k8s.networking.v1.NetworkPolicySpecArgs(
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"app": ADMIN}),
            policy_types=["Ingress"],
            ingress=[
                k8s.networking.v1.NetworkPolicyIngressRuleArgs(
                    ports=[k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=ADMIN_PORT)]
                )
            ],
        ),
    )


def model_server_jobset_spec(args: SaxmlServingArgs) -> dict[str, object]:
    """``spec`` of the model-server JobSet: one replicated job per slice, one pod per VM.

    A disruption spends no restart. A slice's Job fails at its first failed pod (``backoffLimit: 0``), and every
    failure restarts the JobSet (all slices) through its default action ``RestartJobSet``, which counts against
    ``maxRestarts``; once the count reaches it, the JobSet is Failed and the controller deletes its Jobs, and the
    count never goes down (kubernetes-sigs/jobset@v0.12.0 pkg/controllers/failure_policy.go l.45, l.225-232;
    jobset_controller.go l.163-166). So a pod the cluster removes (:data:`~.facts.DISRUPTION_TARGET`: a drain, a
    node upgrade, host maintenance, preemption) fails its Job through the Job's ``podFailurePolicy`` rule
    ``FailJob`` (Job condition reason ``PodFailurePolicy``, message "Pod <ns>/<pod> has condition DisruptionTarget
    matching FailJob rule at index 0": k8s.io/kubernetes v1.36.3 pkg/controller/job/pod_failure_policy.go
    l.61-75), and the JobSet's rule :data:`~.facts.DISRUPTION_RULE` restarts on that reason with
    ``RestartJobSetAndIgnoreMaxRestarts``, which counts only in ``status.restarts``, not in
    ``restartsCountTowardsMax`` (failure_policy.go l.266-297; jobset_types.go l.210-218, l.421-423; the upstream
    example site/static/examples/failure-policy/host-maintenance-event-model.yaml). A crash of the model server
    (any other failure) still takes the default action and counts. ``FailJob``, not ``Ignore``: the hosts of a
    multi-host slice start together, so one replaced pod cannot rejoin its slice's running servers; the whole
    JobSet restarts (``RestartJob``, per slice, needs the Alpha feature gate RestartJob, off by default:
    pkg/features/features.go l.48, l.73, and the webhook refuses it without: jobset_webhook.go l.440-442).

    A Job with a ``podFailurePolicy`` must have ``restartPolicy: Never`` (k8s.io/kubernetes v1.36.3
    pkg/apis/batch/validation/validation.go l.287-289); JobSet's default would be ``OnFailure``
    (jobset_webhook.go l.124-126), under which a container restart counts towards ``backoffLimit: 0`` too.
    """
    chips = str(args.shape.chips_per_vm)
    vms = args.shape.vms
    container = k8s.core.v1.ContainerArgs(
        name=MODEL_JOB,
        image=args.images.model_server,
        # --platform_topology: the slice's, which the server registers with the admin and prices each query's chips
        # by (google/saxml v1.1.0 saxml/server/model_service_main.py l.54: default '1'; model_service_base.py l.793,
        # l.853, l.1427; the Saxml README passes it, e.g. --platform_topology=2x2x1) (GKE review 71, m1)
        args=[
            f"--port={MODEL_PORT}",
            f"--sax_cell={args.cell}",
            f"--platform_chip={args.shape.generation.chip_name}",
            f"--platform_topology={args.shape.topology}",
        ],
        ports=[
            k8s.core.v1.ContainerPortArgs(container_port=MODEL_PORT),
            k8s.core.v1.ContainerPortArgs(container_port=MEGASCALE_PORT),
        ],
        # Privileged only on request (GKE before 1.28); the API refuses allowPrivilegeEscalation false beside it.
        security_context=(
            k8s.core.v1.SecurityContextArgs(privileged=True) if args.privileged else container_security()
        ),
        env=[
            k8s.core.v1.EnvVarArgs(name="SAX_ROOT", value=args.sax_root),
            k8s.core.v1.EnvVarArgs(name="MEGASCALE_NUM_SLICES", value=""),  # each slice is its own server
        ],
        resources=k8s.core.v1.ResourceRequirementsArgs(requests={TPU_RESOURCE: chips}, limits={TPU_RESOURCE: chips}),
        readiness_probe=tcp_probe(MODEL_PORT, 10, 3),
    )
    pod = k8s.core.v1.PodTemplateSpecArgs(
        metadata=k8s.meta.v1.ObjectMetaArgs(labels=dict(args.labels)) if args.labels else None,
        spec=k8s.core.v1.PodSpecArgs(
            service_account_name=args.service_account,
            priority_class_name=args.priority_class_name,
            host_network=True,
            dns_policy="ClusterFirstWithHostNet",
            node_selector=node_selector(args.shape),
            containers=[container],
            security_context=pod_security(),
            automount_service_account_token=False,  # the model servers never call the Kubernetes API
            restart_policy="Never",
        ),
    )
    disrupted = k8s.batch.v1.PodFailurePolicyRuleArgs(
        action="FailJob",
        on_pod_conditions=[
            k8s.batch.v1.PodFailurePolicyOnPodConditionsPatternArgs(type=DISRUPTION_TARGET, status="True")
        ],
    )
    job = k8s.batch.v1.JobSpecArgs(
        parallelism=vms,
        completions=vms,
        backoff_limit=0,
        pod_failure_policy=k8s.batch.v1.PodFailurePolicyArgs(rules=[disrupted]),
        template=pod,
    )
    rule = {
        "name": DISRUPTION_RULE,
        "action": "RestartJobSetAndIgnoreMaxRestarts",
        "onJobFailureReasons": [POD_FAILURE_POLICY_REASON],
    }
    return {
        "failurePolicy": {"maxRestarts": args.max_restarts, "rules": [rule]},
        "replicatedJobs": [{"name": MODEL_JOB, "replicas": args.num_slices, "template": {"spec": job}}],
    }


def _load_balancer_ip(status: k8s.core.v1.outputs.ServiceStatus | None) -> str | None:
    """The IP of the Service's load balancer (None if it reports only a hostname), or "" before it has one."""
    if status and status.load_balancer and status.load_balancer.ingress:
        return status.load_balancer.ingress[0].ip
    return ""


def http_service_args(args: SaxmlServingArgs) -> k8s.core.v1.ServiceInitArgs:
    """The sax-http Service: internal LoadBalancer unless the stack asks otherwise."""
    annotations = INTERNAL_LB if args.exposure == "internal" else None
    spec = k8s.core.v1.ServiceSpecArgs(
        type="ClusterIP" if args.exposure == "cluster" else "LoadBalancer",
        selector={"app": HTTP},
        ports=[k8s.core.v1.ServicePortArgs(protocol="TCP", port=HTTP_PORT, target_port=HTTP_PORT)],
        load_balancer_source_ranges=list(args.source_ranges) or None if args.exposure != "cluster" else None,
    )
    return k8s.core.v1.ServiceInitArgs(metadata=_meta(args, HTTP_SERVICE, annotations=annotations), spec=spec)


def models_json(args: SaxmlServingArgs) -> str:
    """The models as ``/publish`` bodies, in a stable order."""
    return json.dumps([asdict(m) for m in sorted(args.models, key=lambda m: m.model)], sort_keys=True)


def publish_job_args(args: SaxmlServingArgs) -> k8s.batch.v1.JobInitArgs:
    """The publication Job; its name changes with the model list, so any change runs it again."""
    digest = hashlib.sha256((models_json(args) + publisher_script()).encode()).hexdigest()[:8]
    env = {
        "SAX_HTTP": f"http://{HTTP_SERVICE}.{args.namespace}.svc:{HTTP_PORT}",
        "SAX_MODELS": models_json(args),
        "STATE_CONFIGMAP": f"{PUBLISHER}-state",
        "WAIT_SECONDS": str(args.publish_timeout_seconds),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    container = k8s.core.v1.ContainerArgs(
        name="publish",
        image=args.images.publisher,
        command=["python3", "/scripts/saxml_publisher.py"],
        env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()]
        + [
            k8s.core.v1.EnvVarArgs(
                name="POD_NAMESPACE",
                value_from=k8s.core.v1.EnvVarSourceArgs(
                    field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="metadata.namespace")
                ),
            )
        ],
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name="scripts", mount_path="/scripts", read_only=True)],
        resources=requests(*PUBLISHER_REQUESTS, memory_limit=True),
        security_context=container_security(run_as_user=NOBODY, read_only_root=True),
    )
    return k8s.batch.v1.JobInitArgs(
        metadata=_meta(args, f"{PUBLISHER}-{digest}"),
        spec=k8s.batch.v1.JobSpecArgs(
            backoff_limit=2,
            active_deadline_seconds=args.publish_timeout_seconds + 300,
            # A finished Job's pods stay (Ready=False) until the Job goes: the TTL controller deletes it an
            # hour after it finishes, time enough to read its logs
            # (https://kubernetes.io/docs/concepts/workloads/controllers/ttlafterfinished/). A `pulumi up
            # --refresh` then finds it gone and creates it again; the reconciler is idempotent, so a rerun
            # publishes nothing new.
            ttl_seconds_after_finished=PUBLISHER_TTL_SECONDS,
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, "app": PUBLISHER}),
                spec=k8s.core.v1.PodSpecArgs(
                    restart_policy="Never",
                    security_context=pod_security(),
                    # It reads and writes its state ConfigMap through the API: the one pod with a token.
                    automount_service_account_token=True,
                    service_account_name=PUBLISHER,
                    containers=[container],
                    volumes=[
                        k8s.core.v1.VolumeArgs(
                            name="scripts", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(name=f"{PUBLISHER}-script")
                        )
                    ],
                ),
            ),
        ),
    )
