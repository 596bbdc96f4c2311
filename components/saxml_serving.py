"""``SaxmlServing``: Saxml over multi-host TPU slices, with declarative model publication.

The admin server keeps the cell's state in the stack's bucket; one JobSet replicated job
per slice runs the model servers (``hostNetwork``, ports 10001 and 8471); ``sax-http``
exposes the HTTP API behind an internal load balancer by default. The models listed in the
stack are published by a Job that reconciles the cell with the list (see
:mod:`components.saxml_publisher`).
"""

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from .catalog import SliceShape
from .images import image_problem
from .node_identity import Access
from .nodepool import NODEPOOL_LABEL, TPU_RESOURCE, node_selector
from .options import child_options
from .podspec import requests, tcp_probe
from .settings import described
from .validation import Choice, check_arguments

ADMIN_PORT = 10000
"""Sax admin server port."""
MODEL_PORT = 10001
"""Sax model server port."""
MEGASCALE_PORT = 8471
"""Default port for VM-to-VM communication within a slice."""
HTTP_PORT = 8888
"""sax-http port."""
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
MODEL_SERVER_BUCKETS: dict[str, Access] = {"state": Access.READ}
"""Bucket access of the model servers by bucket purpose. They run on the host network (as in
the Saxml guide), so they act as their TPU nodes' service account, not the KSA's: they read
the cell's location under ``SAX_ROOT`` in the state bucket to find the admin server."""
INTERNAL_LB = {"networking.gke.io/load-balancer-type": "Internal"}
"""Annotation that makes a GKE LoadBalancer Service internal to the VPC."""
PUBLISHER_SCRIPT = Path(__file__).with_name("saxml_publisher.py")


@functools.cache
def publisher_script() -> str:
    """Source of the publication reconciler, shipped to the Job in a ConfigMap."""
    return PUBLISHER_SCRIPT.read_text()


class Exposure(Choice):
    """How sax-http is exposed."""

    INTERNAL = "internal"
    PUBLIC = "public"
    CLUSTER = "cluster"


@dataclass(frozen=True)
class SaxmlImages:
    """Container images of the Saxml servers and the publisher."""

    admin: str = described(
        "Sax admin server image.",
        default="us-docker.pkg.dev/cloud-tpu-images/inference/sax-admin-server:v1.1.0",
        check=image_problem,
    )
    model_server: str = described(
        "Sax model server image.",
        default="us-docker.pkg.dev/cloud-tpu-images/inference/sax-model-server:v1.1.0",
        check=image_problem,
    )
    http: str = described(
        "sax-http image.", default="us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0", check=image_problem
    )
    publisher: str = described(
        "Image of the publication Job (any Python 3).", default="python:3.12-slim", check=image_problem
    )


@dataclass(frozen=True)
class SaxModel:
    """A model the cell serves, as ``/publish`` takes it."""

    model: str
    """Model path in the cell, e.g. ``/sax/test/spmd``."""
    model_path: str
    """Saxml model class, e.g. ``saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test``."""
    checkpoint: str = "None"
    """Checkpoint path, or ``None`` for random weights."""
    replicas: int = 1
    """Model server replicas (one slice each)."""


@dataclass(frozen=True)
class SaxmlServingArgs:
    """Arguments of :class:`SaxmlServing`."""

    namespace: str
    """Namespace of the workload."""
    service_account: str
    """Kubernetes service account of every Sax pod (workload identity, bucket-scoped roles)."""
    shape: SliceShape
    """Shape of each model-server slice."""
    num_slices: int
    """Model servers: one replicated job (one slice) each."""
    state_bucket: str
    """Bucket holding the admin state (``GSBUCKET``) and ``SAX_ROOT``."""
    cell: str = "/sax/test"
    """The Sax cell (``--sax_cell``)."""
    models: Sequence[SaxModel] = ()
    """Models to publish."""
    images: SaxmlImages = field(default_factory=SaxmlImages)
    """Container images."""
    max_restarts: int = 4
    """JobSet ``failurePolicy.maxRestarts``."""
    privileged: bool = False
    """Run the model servers privileged (TPU access on GKE before 1.28)."""
    exposure: Exposure = Exposure.INTERNAL
    """sax-http Service: ``internal`` LoadBalancer, ``public`` LoadBalancer, or ``cluster`` (ClusterIP)."""
    source_ranges: Sequence[str] = ()
    """``loadBalancerSourceRanges`` (required for ``public``)."""
    publish_timeout_seconds: int = 1800
    """How long the publication Job waits for sax-http and the replicas."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Labels on the objects and pods."""
    priority_class_name: str | None = None
    """PriorityClass of the Sax pods."""

    @property
    def sax_root(self) -> str:
        """``SAX_ROOT``: the cell's root in the state bucket."""
        return f"gs://{self.state_bucket}/sax-root"


ADMIN, MODEL_SET, MODEL_JOB, HTTP, HTTP_SERVICE, PUBLISHER = (
    "sax-admin-server",
    "sax-model-server-set",
    "sax-model-server",
    "sax-http",
    "sax-http-lb",
    "sax-publisher",
)


def _meta(
    args: SaxmlServingArgs, name: str, *, annotations: Mapping[str, str] | None = None
) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name, namespace=args.namespace, labels=dict(args.labels), annotations=annotations
    )


def _server_deployment(
    args: SaxmlServingArgs, name: str, image: str, port: int, env: Mapping[str, str]
) -> k8s.apps.v1.DeploymentInitArgs:
    """One Sax server on the CPU pool: one replica, TCP probes on its port, CPU/memory requests."""
    container = k8s.core.v1.ContainerArgs(
        name=name,
        image=image,
        ports=[k8s.core.v1.ContainerPortArgs(container_port=port)],
        env=[k8s.core.v1.EnvVarArgs(name=k, value=v) for k, v in env.items()],
        resources=requests("500m", "1Gi"),
        readiness_probe=tcp_probe(port, 10, 3),
        liveness_probe=tcp_probe(port, 30, 5),
    )
    return k8s.apps.v1.DeploymentInitArgs(
        metadata=_meta(args, name),
        spec=k8s.apps.v1.DeploymentSpecArgs(
            replicas=1,
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels={"app": name}),
            template=k8s.core.v1.PodTemplateSpecArgs(
                metadata=k8s.meta.v1.ObjectMetaArgs(labels={**args.labels, "app": name}),
                spec=k8s.core.v1.PodSpecArgs(
                    host_network=False,
                    service_account_name=args.service_account,
                    priority_class_name=args.priority_class_name,
                    containers=[container],
                ),
            ),
        ),
    )


def admin_deployment(args: SaxmlServingArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """The admin server: cell state in the stack's bucket, on the CPU pool, never privileged."""
    return _server_deployment(args, ADMIN, args.images.admin, ADMIN_PORT, {"GSBUCKET": args.state_bucket})


def http_deployment(args: SaxmlServingArgs) -> k8s.apps.v1.DeploymentInitArgs:
    """sax-http, the HTTP API (publish, listcell, generate, unpublish) on port 8888."""
    return _server_deployment(args, HTTP, args.images.http, HTTP_PORT, {"SAX_ROOT": args.sax_root})


def admin_network_policy(args: SaxmlServingArgs) -> k8s.networking.v1.NetworkPolicyInitArgs:
    """Lets the model servers join the cell: the admin server's port from any source.

    The model servers run on the host network, so they connect from their node's address,
    which the namespace's pod-only policy does not admit. On GKE Dataplane V2 (Cilium) an
    ``ipBlock`` of the node range does not match node addresses either: Cilium gives them the
    reserved ``host``/``remote-node`` identities and matches CIDR peers against nodes only with
    ``--policy-cidr-match-mode=nodes``, off by default and not exposed by GKE
    (cilium/cilium Documentation/security/policy/language.rst, "Selecting nodes with CIDR /
    ipBlock"; cilium/cilium#12277, #10405). An ingress rule with ports and no ``from`` admits
    every source, so this policy opens exactly one port of one pod, and nothing else. The VPC
    firewall still admits only the cluster's node and pod ranges
    (https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules).
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
    """``spec`` of the model-server JobSet: one replicated job per slice, one pod per VM."""
    chips = str(args.shape.chips_per_vm)
    vms = args.shape.vms
    container = k8s.core.v1.ContainerArgs(
        name=MODEL_JOB,
        image=args.images.model_server,
        args=[f"--port={MODEL_PORT}", f"--sax_cell={args.cell}", f"--platform_chip={args.shape.generation.chip_name}"],
        ports=[
            k8s.core.v1.ContainerPortArgs(container_port=MODEL_PORT),
            k8s.core.v1.ContainerPortArgs(container_port=MEGASCALE_PORT),
        ],
        security_context=k8s.core.v1.SecurityContextArgs(privileged=True) if args.privileged else None,
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
        ),
    )
    job = k8s.batch.v1.JobSpecArgs(parallelism=vms, completions=vms, backoff_limit=0, template=pod)
    return {
        "failurePolicy": {"maxRestarts": args.max_restarts},
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


PUBLISHER_TTL_SECONDS = 3600
"""How long the finished publication Job (and its pods, with their logs) stays before it is deleted."""


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
        resources=requests("100m", "128Mi"),
        security_context=k8s.core.v1.SecurityContextArgs(
            run_as_non_root=True,
            run_as_user=65534,
            allow_privilege_escalation=False,
            read_only_root_filesystem=True,
            capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
        ),
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


class SaxmlServing(pulumi.ComponentResource):
    """Saxml on multi-host TPU slices: admin server, model-server JobSet, sax-http and its Service,
    and the Job that publishes the stack's models.

    Pass the cluster's Kubernetes provider in ``opts.providers``; the JobSet waits for
    its ``opts.depends_on`` (the JobSet install and the slices).
    """

    admin: k8s.apps.v1.Deployment
    """The admin server."""
    admin_policy: k8s.networking.v1.NetworkPolicy
    """Admits the host-network model servers to the admin port."""
    http: k8s.apps.v1.Deployment
    """sax-http."""
    service: k8s.core.v1.Service
    """The sax-http Service on port 8888."""
    publisher: k8s.batch.v1.Job | None
    """The publication Job (None when no model is listed)."""
    address: pulumi.Output[str | None]
    """Address of sax-http: the load balancer IP, or the in-cluster DNS name for ``cluster``
    ("" until the load balancer has an address; None if it reports only a hostname)."""

    def __init__(self, name: str, args: SaxmlServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments("SaxmlServing", args, SaxmlServingArgs)
        super().__init__("tpu-serving:index:SaxmlServing", name, None, opts)
        after = child_options(self, opts)
        self.admin = k8s.apps.v1.Deployment(f"{name}-admin", admin_deployment(args), opts=after)
        self.admin_policy = k8s.networking.v1.NetworkPolicy(
            f"{name}-admin-from-model-servers", admin_network_policy(args), opts=after
        )
        self.model_servers = k8s.apiextensions.CustomResource(
            f"{name}-model-servers",
            api_version="jobset.x-k8s.io/v1alpha2",
            kind="JobSet",
            metadata=_meta(args, MODEL_SET, annotations={EXCLUSIVE_TOPOLOGY: NODEPOOL_LABEL}),
            spec=model_server_jobset_spec(args),
            # JobSet's webhook refuses changes to replicatedJobs, and its CRD marks
            # failurePolicy, successPolicy, network and startupPolicy immutable
            # (kubernetes-sigs/jobset@v0.12.0): any spec change replaces the JobSet.
            opts=pulumi.ResourceOptions.merge(
                child_options(self, opts),
                pulumi.ResourceOptions(
                    depends_on=[self.admin, self.admin_policy], replace_on_changes=["spec"], delete_before_replace=True
                ),
            ),
        )
        self.http = k8s.apps.v1.Deployment(f"{name}-http", http_deployment(args), opts=after)
        self.service = k8s.core.v1.Service(f"{name}-http-svc", http_service_args(args), opts=after)
        if args.exposure == "cluster":
            self.address = pulumi.Output.from_input(f"{HTTP_SERVICE}.{args.namespace}.svc")
        else:
            self.address = self.service.status.apply(_load_balancer_ip)
        self.publisher = self._publisher(name, args, after) if args.models else None
        self.register_outputs({"address": self.address})

    def _publisher(self, name: str, args: SaxmlServingArgs, child: pulumi.ResourceOptions) -> k8s.batch.v1.Job:
        """The publication Job with its script, state ConfigMap and least-privilege RBAC."""
        state_name = f"{PUBLISHER}-state"
        script = k8s.core.v1.ConfigMap(
            f"{name}-publisher-script",
            metadata=_meta(args, f"{PUBLISHER}-script"),
            data={"saxml_publisher.py": publisher_script()},
            opts=child,
        )
        state = k8s.core.v1.ConfigMap(
            f"{name}-publisher-state",
            metadata=_meta(args, state_name),
            data={"published": "[]"},
            # The Job records what it published here; Pulumi must not reset it.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(ignore_changes=["data"])),
        )
        account = k8s.core.v1.ServiceAccount(f"{name}-publisher-ksa", metadata=_meta(args, PUBLISHER), opts=child)
        role = k8s.rbac.v1.Role(
            f"{name}-publisher-role",
            metadata=_meta(args, PUBLISHER),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""], resources=["configmaps"], resource_names=[state_name], verbs=["get", "patch"]
                )
            ],
            opts=child,
        )
        binding = k8s.rbac.v1.RoleBinding(
            f"{name}-publisher-binding",
            metadata=_meta(args, PUBLISHER),
            role_ref=k8s.rbac.v1.RoleRefArgs(api_group="rbac.authorization.k8s.io", kind="Role", name=PUBLISHER),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=PUBLISHER, namespace=args.namespace)],
            opts=child,
        )
        return k8s.batch.v1.Job(
            f"{name}-publish",
            publish_job_args(args),
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[self.http, self.service, self.model_servers, script, state, account, role, binding],
                custom_timeouts=pulumi.CustomTimeouts(create=f"{args.publish_timeout_seconds // 60 + 10}m"),
                # A Job's pod template is immutable: a changed Job is a new Job.
                replace_on_changes=["spec"],
                delete_before_replace=True,
            ),
        )
