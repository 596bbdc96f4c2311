"""``SaxmlServing``: Saxml over multi-host TPU slices, with declarative model publication.

The admin server keeps the cell's state in the stack's bucket; one JobSet replicated job
per slice runs the model servers (``hostNetwork``, ports 10001 and 8471); ``sax-http``
exposes the HTTP API behind an internal load balancer by default. The models listed in the
stack are published by a Job that reconciles the cell with the list (see
:mod:`tpu_serving.backends.saxml.publisher`).
"""

import pulumi
import pulumi_kubernetes as k8s

from ...common.naming import NODEPOOL_LABEL
from ...common.options import child_options
from ...common.validation import check_arguments
from .args import SaxmlServingArgs
from .facts import EXCLUSIVE_TOPOLOGY, HTTP_SERVICE, MODEL_SET, PUBLISHER
from .pods import (
    _load_balancer_ip,
    _meta,
    admin_deployment,
    admin_network_policy,
    http_deployment,
    http_disruption_budget,
    http_service_args,
    model_server_jobset_spec,
    publish_job_args,
    publisher_script,
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
    http_budget: k8s.policy.v1.PodDisruptionBudget
    """sax-http's disruption budget: one pod at a time."""
    service: k8s.core.v1.Service
    """The sax-http Service on port 8888."""
    publisher: k8s.batch.v1.Job | None
    """The publication Job (None when no model is listed)."""
    address: pulumi.Output[str | None]
    """Address of sax-http: the load balancer IP, or the in-cluster DNS name for ``cluster``
    ("" until the load balancer has an address; None if it reports only a hostname)."""

    def __init__(self, name: str, args: SaxmlServingArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"SaxmlServing {name!r}", args, SaxmlServingArgs)
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
        self.http_budget = k8s.policy.v1.PodDisruptionBudget(
            f"{name}-http-pdb", http_disruption_budget(args), opts=after
        )
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
