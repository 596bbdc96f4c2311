"""``PlatformAlerts``: the alert policies of a platform stack's own controllers (its observability base).

The cluster itself carries the rest of the base: Managed Prometheus and system-component logging
(:class:`~tpu_serving.platform.cluster.TpuCluster`). A platform stack has no serving of its own, so it has none of
:class:`~tpu_serving.operations.observability.Observability`'s serving alerts; it pages when a controller it installs and owns
is unavailable (:func:`tpu_serving.operations.alerts.alert_policies.controller_policies`, the same policies a serving stack has on the
controllers it relies on), notified as the stack file's ``observability`` says.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from ...common.options import child_options
from ...common.settings import CreateOrExisting
from ...common.validation import check_arguments
from ...platform.controllers import WatchedDeployment
from ..observability_settings import ObservabilitySettings, Severity
from . import cluster_notices, gateway_alerts
from .alert_policies import Alert, alert_policy_args, controller_policies


@dataclass(frozen=True)
class PlatformAlertsArgs:
    """Arguments of :class:`PlatformAlerts`."""

    project: str
    """The project of the alert policies."""
    cluster: str
    """The cluster whose controllers they watch (the ``cluster`` label of the series)."""
    controllers: Sequence[WatchedDeployment] = ()
    """The controllers' Deployments (``ControllerInstall.watched``)."""
    settings: ObservabilitySettings = field(default_factory=ObservabilitySettings)
    """Who is notified (``notification_channels``, ``ticket_channels``, ``unpaged``), and whether the stack creates
    the policies (``cloud_resources``: ``existing``, none is created nor listed)."""
    gateway: tuple[str, str] | None = None
    """The shared Gateway's ``(namespace, name)``: its load balancer's server-error rate pages the platform's channels
    (:func:`tpu_serving.operations.alerts.gateway_alerts.gateway_alerts`; SRE review: a Gateway outage paged nobody who owns it). The
    model stacks' own alerts on it page their on-call too (:mod:`tpu_serving.operations.alerts.platform_gateway_alerts`)."""
    upgrade_notices: bool = False
    """The cluster holds node upgrades back (the ``platform`` output's ``nodeUpgradesHeld``): GKE's end-of-support and
    security-bulletin notifications of the cluster open a ticket (:mod:`tpu_serving.operations.alerts.cluster_notices`), the
    platform's, once for the cluster, as a self-contained stack's is its own (GKE review M1)."""


class PlatformAlerts(pulumi.ComponentResource):
    """An alert policy per watched controller of the platform; pass the project's APIs in ``opts.depends_on``."""

    alert_policies: list[str]
    """The policies' display names."""

    def __init__(self, name: str, args: PlatformAlertsArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"PlatformAlerts {name!r}", args, PlatformAlertsArgs)
        super().__init__("tpu-serving:index:PlatformAlerts", name, None, opts)
        child = child_options(self, opts)
        policies = controller_policies(args.cluster, tuple(args.controllers), args.settings)
        if args.gateway is not None:
            found = gateway_alerts.gateway_alerts(args.cluster, *args.gateway, None, args.settings)
            policies += [Alert(*a[:5], severity=Severity(a[5])) for a in found]
        if args.settings.cloud_resources != CreateOrExisting.CREATE:  # managed elsewhere: the stack creates none
            policies = []
        for alert in policies:
            policy = alert_policy_args(alert, args.cluster, args.settings, args.project)
            gcp.monitoring.AlertPolicy(f"{name}-{alert.key}", policy, opts=child)
        self.alert_policies = [f"{args.cluster}: {a.title}" for a in policies]
        if args.upgrade_notices and args.settings.cloud_resources == CreateOrExisting.CREATE:
            notices = cluster_notices.policy_args(args.project, args.cluster, args.settings)
            gcp.monitoring.AlertPolicy(f"{name}-{cluster_notices.KEY}", notices, opts=child)
            self.alert_policies.append(str(notices.display_name))
        self.register_outputs({"alertPolicies": self.alert_policies})
