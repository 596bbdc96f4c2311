"""``ControllerInstall``: a pinned upstream controller release, applied server-side.

LeaderWorkerSet, JobSet and PathwaysJob are installed from their release manifests (CRDs,
RBAC, the controller Deployment and its webhook) with the Kubernetes provider's
``yaml/v2.ConfigGroup``, which applies with server-side apply and waits for the
Deployment to be available. Custom resources of the controller take the install in ``depends_on``.

Available is not serving: the webhooks fail closed (``failurePolicy: Fail``), so a custom resource created
before the webhook server serves is refused. JobSet's readiness check waits for its webhook server
(sigs.k8s.io/jobset@v0.12.0 main.go l.258-280: ``readyz`` is the webhook server's ``StartedChecker`` once the
certificates are ready); LeaderWorkerSet's is a ping (sigs.k8s.io/lws@v0.9.0 and v0.10.0 cmd/main.go l.258:
``AddReadyzCheck("readyz", healthz.Ping)``), which passes before the certificates are in place and the webhooks
registered (``setupControllers``, l.192-248, after ``<-certsReady``). So the LWS Deployment's readiness probe is
replaced (:class:`WebhookReadiness`): an HTTPS GET of the webhook path its release registers last. Seen in
``make e2e`` with the real LWS manager: without it, the first ``pulumi up`` fails with ``failed calling webhook
"mleaderworkerset.kb.io"``. PathwaysJob v0.1.4's manifest has no webhook.

A release manifest is read from the controller's upstream release URL, or from a source the caller names
(:attr:`ControllerInstallArgs.manifest`, the stack file's ``controllerManifests``): a local file or an
``https://`` mirror, for clusters that cannot reach GitHub. The provider reads an absolute URL over the network
and anything else as a file path, expanding glob patterns (pulumi/pulumi-kubernetes
provider/pkg/provider/yaml/v2/yaml.go ``Parse``), so a source is refused with a glob character or a leading ``~``,
which nothing expands.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from pydantic import AfterValidator

from ..catalog.versions import PINS
from ..common.spread import zone_spread
from ..common.validation import Choice, check_arguments


@dataclass(frozen=True)
class WebhookReadiness:
    """A readiness probe that passes once the controller's webhook server serves its last-registered path.

    controller-runtime's webhook server answers a GET of a registered webhook path with 200 and an AdmissionReview
    that says the body is empty (sigs.k8s.io/controller-runtime@v0.24.1 pkg/webhook/admission/http.go l.64-75 and
    l.123-125: the error goes into the review, not the HTTP status), a path not yet registered with 404, and
    nothing before it listens; the kubelet's HTTPS probe does not verify the certificate (a status of 200-399
    passes). Each probe logs the empty body as an error in the controller's log ("bad request"), once per period.
    """

    deployment: str
    """The Deployment's name in the release manifest."""
    container: str
    port: int
    """The webhook server's container port."""
    last_path: str
    """The webhook path the releases from :attr:`since` on register last."""
    since: str
    earlier_path: str
    """The path the releases before :attr:`since` register last."""

    def path(self, version: str) -> str:
        """The path ``version`` registers last."""
        return self.last_path if parse_version(version) >= parse_version(self.since) else self.earlier_path

    def probe(self, version: str, period: int = 10) -> dict[str, Any]:
        """The container's readiness probe for ``version``."""
        return {
            "httpGet": {"path": self.path(version), "port": self.port, "scheme": "HTTPS"},
            "initialDelaySeconds": 5,
            "periodSeconds": period,
        }

    def transform(
        self, version: str
    ) -> Callable[[pulumi.ResourceTransformArgs], pulumi.ResourceTransformResult | None]:
        """A Pulumi transform giving the release's Deployment this probe (its other children unchanged)."""

        def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
            if args.type_ != "kubernetes:apps/v1:Deployment" or not self.names(args.props):
                return None
            return pulumi.ResourceTransformResult(props=self.deployment_props(args.props, version), opts=args.opts)

        return transform

    def names(self, props: Mapping[str, Any]) -> bool:
        """Whether a Deployment's ``props`` are the controller's (a ConfigGroup's children arrive with plain values:
        the provider expanded the manifest)."""
        metadata = props.get("metadata")
        return isinstance(metadata, Mapping) and metadata.get("name") == self.deployment

    def installed(self, obj: Mapping[str, Any], version: str) -> Mapping[str, Any]:
        """One object of the release manifest as the install applies it: the controller's Deployment with this
        probe (what :meth:`transform` does to the ConfigGroup's child), anything else unchanged."""
        return self.deployment_props(obj, version) if obj.get("kind") == "Deployment" and self.names(obj) else obj

    def deployment_props(self, props: Mapping[str, Any], version: str) -> dict[str, Any]:
        """``props`` (a Deployment) with the probe on its container :attr:`container`."""
        spec = dict(props["spec"])
        template = dict(spec["template"])
        pod = dict(template["spec"])
        pod["containers"] = [
            {**c, "readinessProbe": self.probe(version)} if c.get("name") == self.container else c
            for c in pod["containers"]
        ]
        if not any(c.get("name") == self.container for c in pod["containers"]):
            raise ValueError(f"Deployment {self.deployment} has no container {self.container!r}")
        template["spec"] = pod
        spec["template"] = template
        return {**props, "spec": spec}


@dataclass(frozen=True)
class WatchedDeployment:
    """A controller's Deployment the stack relies on: its namespace, its name and the controller's name (what the
    controller alert watches, :mod:`tpu_serving.operations.alerts.controller_alerts`)."""

    namespace: str
    name: str
    controller: str


@dataclass(frozen=True)
class Availability:
    """How the install keeps a controller serving through a node drain or upgrade: two replicas under leader
    election, spread over nodes, and a disruption budget that lets a drain take one at a time.

    Without it a drained node takes the controller's only pod, and while its replacement schedules and starts, the
    webhooks that fail closed (LWS's pod webhook ``mpod.kb.io``, JobSet's) refuse every pod of a serving group that
    its StatefulSets or Jobs try to create: a group recreation or a scale-up waits on the controller. Every replica
    serves the webhooks; one leader reconciles (the release manifests' ``leaderElection: leaderElect: true``). The
    JobSet chart offers the same, off by default (sigs.k8s.io/jobset@v0.12.0 charts/jobset/values.yaml l.35
    ``controller.replicas: 1``; templates/controller/pod_disruption_budget.yaml: ``minAvailable: 1`` over the
    controller's selector labels); the LWS release runs two replicas already (v0.9.0 and v0.10.0
    config/manager/manager.yaml l.31) and has no budget."""

    deployment: str
    """The Deployment's name in the release manifest."""
    namespace: str
    selector: Mapping[str, str]
    """The Deployment's ``spec.selector.matchLabels`` in the release manifest."""
    replicas: int = 2

    def installed(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """One object of the release manifest as the install applies it: the controller's Deployment with
        :attr:`replicas` and its pods on different nodes (``DoNotSchedule``: two replicas on one VM would both go
        with it, so a replica waits for a second node rather than share one; the CPU pool keeps at least two nodes,
        :func:`tpu_serving.config.checks.cpu_pool_spread_problem`) and, preferred, in different zones
        (:func:`tpu_serving.common.spread.zone_spread`: a zone outage leaves one; the release manifests set no spread and no
        affinity of their own: lws v0.9.0 and main at 060ab4d, jobset v0.12.0, config/manager/manager.yaml and
        config/components/manager/manager.yaml l.39-58, the ``affinity`` block commented out), anything else
        unchanged."""
        metadata = obj.get("metadata")
        if (
            obj.get("kind") != "Deployment"
            or not isinstance(metadata, Mapping)
            or metadata.get("name") != self.deployment
        ):
            return obj
        spec = dict(obj["spec"])
        template = dict(spec["template"])
        pod = dict(template["spec"])
        pod["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": dict(self.selector)},
            },
            zone_spread(self.selector),
        ]
        template["spec"] = pod
        spec.update(replicas=self.replicas, template=template)
        return {**obj, "spec": spec}

    def budget(self) -> dict[str, Any]:
        """The controller's PodDisruptionBudget: a drain evicts one replica, then waits until it is back
        (``minAvailable: 1`` of :attr:`replicas`, as the JobSet chart's)."""
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": self.deployment, "namespace": self.namespace},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": dict(self.selector)}},
        }


@dataclass(frozen=True)
class Controller:
    """An upstream controller whose releases publish one install manifest."""

    name: str
    """Short name, e.g. ``lws``."""
    api_group: str
    """API group of its custom resources."""
    manifest_url: str
    """Release manifest URL with ``{version}`` in place of the release tag."""
    default_version: str
    """The release installed when a stack names none."""
    min_version: str | None = None
    """Oldest release the library's objects are valid for."""
    newest_version: str | None = None
    """Newest release known to the version set: a newer one's manifest and CRDs were not read, so the library's
    objects are not known to be valid for it (and its manifest URL may not exist)."""
    webhook_readiness: WebhookReadiness | None = None
    """When its own readiness check passes before its webhooks serve: the probe that passes once they do."""
    availability: Availability | None = None
    """When a down controller stops serving pods (its webhooks fail closed): replicas and a disruption budget."""
    pages_when_down: bool = True
    """Its Deployment is watched by the controller alert, which pages (:mod:`tpu_serving.operations.alerts.controller_alerts`): False
    for a controller whose outage only holds the HPAs' size, which the autoscaler alert tickets."""

    def installed(self, obj: Mapping[str, Any], version: str) -> Mapping[str, Any]:
        """One object of the release manifest as :class:`ControllerInstall` applies it (its transforms)."""
        if self.webhook_readiness is not None:
            obj = self.webhook_readiness.installed(obj, version)
        return self.availability.installed(obj) if self.availability is not None else obj

    def transforms(self, version: str) -> list[pulumi.ResourceTransform]:
        """The Pulumi transforms that make the release's children what :meth:`installed` says."""
        found: list[pulumi.ResourceTransform] = []
        if self.webhook_readiness is not None:
            found.append(self.webhook_readiness.transform(version))
        availability = self.availability
        if availability is not None:

            def spread(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
                if args.type_ != "kubernetes:apps/v1:Deployment":
                    return None
                changed = availability.installed(args.props)
                return (
                    None
                    if changed is args.props
                    else pulumi.ResourceTransformResult(props=dict(changed), opts=args.opts)
                )

            found.append(spread)
        return found

    def extra_objects(self) -> list[dict[str, Any]]:
        """Objects the install adds to the release manifest's: the controller's disruption budget."""
        return [self.availability.budget()] if self.availability is not None else []

    def newer_problem(self, version: str) -> str:
        """Why ``version`` (a well-formed release) is newer than the version set knows, or ``""``."""
        if self.newest_version and parse_version(version) > parse_version(self.newest_version):
            return (
                f"{self.name} {version} is newer than the newest release known to the version set, "
                f"{self.newest_version} (tpu-serving versions --sources): its manifest and CRDs were not read here"
            )
        return ""

    def url(self, version: str) -> str:
        """The release manifest of ``version``."""
        return self.manifest_url.format(version=version)


LWS = Controller(
    name="lws",
    api_group="leaderworkerset.x-k8s.io",
    manifest_url="https://github.com/kubernetes-sigs/lws/releases/download/{version}/manifests.yaml",
    default_version=PINS["lws"].value,
    newest_version=PINS["lws"].newest,
    min_version="v0.4.0",
    # The release manifest (config/default, namePrefix lws-) names the Deployment lws-controller-manager and its
    # container manager, webhook port 9443 (config/default/manager_webhook_patch.yaml, v0.4.0 to v0.10.0).
    # cmd/main.go setupControllers registers the LWS webhooks, then the pod webhook (mutating, then validating),
    # then from v0.9.0 the DisaggregatedSet one (v0.4.0 l.185-189, v0.9.0 and v0.10.0 l.235-244); the paths are
    # config/webhook/manifests.yaml's.
    webhook_readiness=WebhookReadiness(
        "lws-controller-manager",
        "manager",
        9443,
        last_path="/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset",
        since="v0.9.0",
        earlier_path="/validate--v1-pod",
    ),
    # v0.9.0 and v0.10.0 config/default/kustomization.yaml l.2 (namespace lws-system), l.9 (namePrefix lws-),
    # l.12-14 (commonLabels, selectors included) over config/manager/manager.yaml l.30 (control-plane); the
    # selector as kustomize v5.8.2 builds the v0.9.0 release.
    availability=Availability(
        "lws-controller-manager",
        "lws-system",
        {"app.kubernetes.io/instance": "lws", "app.kubernetes.io/name": "lws", "control-plane": "controller-manager"},
    ),
)
JOBSET = Controller(
    name="jobset",
    api_group="jobset.x-k8s.io",
    manifest_url="https://github.com/kubernetes-sigs/jobset/releases/download/{version}/manifests.yaml",
    default_version=PINS["jobset"].value,
    newest_version=PINS["jobset"].newest,
    min_version="v0.2.3",
    # v0.12.0 config/default/kustomization.yaml l.2 (namespace jobset-system), l.9 (namePrefix jobset-), l.13-15
    # (commonLabels) over config/components/manager/manager.yaml (control-plane: controller-manager; replicas: 1,
    # l.31); the selector as kustomize v5.8.2 builds the release.
    availability=Availability(
        "jobset-controller-manager",
        "jobset-system",
        {
            "app.kubernetes.io/instance": "jobset",
            "app.kubernetes.io/managed-by": "kustomize",
            "app.kubernetes.io/name": "jobset",
            "control-plane": "controller-manager",
        },
    ),
)
PATHWAYS_JOB = Controller(
    name="pathways-job",
    api_group="pathways-job.pathways.domain",
    manifest_url="https://github.com/google/pathways-job/releases/download/{version}/install.yaml",
    default_version=PINS["pathways-job"].value,
    newest_version=PINS["pathways-job"].newest,
    min_version="v0.1.4",
)

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def parse_version(version: str) -> tuple[int, int, int]:
    """``"v0.10.0"`` -> ``(0, 10, 0)``; :class:`ValueError` for anything else."""
    m = _VERSION.match(version)
    if not m:
        raise ValueError(f"release {version!r} is not of the form vMAJOR.MINOR.PATCH")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_GLOB = re.compile(r"[*?\[]")


def version_problem(version: str) -> str:
    """Why ``version`` is not a release tag (``vMAJOR.MINOR.PATCH``, e.g. ``v0.10.0``), or ``""`` (library review 6,
    m2: a tag without its ``v`` raised a bare ValueError, a traceback under ``pulumi up``)."""
    return "" if _VERSION.match(version) else "a release tag vMAJOR.MINOR.PATCH, e.g. v0.10.0"


def manifest_problem(source: str | None) -> str:
    """Why ``source`` cannot name a release manifest (an ``https://`` URL or a local file path), or ``""``."""
    if source is None:
        return ""
    if not source.strip() or "\n" in source:
        return "must be an https:// URL or the path of a local file holding the release manifest"
    if _SCHEME.match(source):
        return "" if source.startswith("https://") else "a URL must be https:// (or give the path of a local file)"
    if source.startswith("~"):
        return "~ is not expanded here: give the file's absolute path, or a path relative to the program's folder"
    if _GLOB.search(source):
        return "holds a glob character (*, ? or [), which the Kubernetes provider would expand to several files"
    return ""


class ManifestSource(Choice):
    """Where a release manifest is read from, as the preview and the plan name it."""

    UPSTREAM = "upstream"
    MIRROR = "mirror"
    LOCAL_FILE = "local file"


def manifest_source(manifest: str | None) -> ManifestSource:
    """``upstream`` (no source named), ``mirror`` (an https:// URL) or ``local file``."""
    if manifest is None:
        return ManifestSource.UPSTREAM
    return ManifestSource.MIRROR if manifest.startswith("https://") else ManifestSource.LOCAL_FILE


@dataclass(frozen=True)
class ControllerInstallArgs:
    """Arguments of :class:`ControllerInstall`."""

    controller: Controller
    """Which controller."""
    version: str = field(metadata={"check": version_problem})
    """Its release tag, e.g. ``v0.10.0``."""
    manifest: str | None = field(default=None, metadata={"check": manifest_problem})
    """Where the release manifest of ``version`` is read from: an ``https://`` mirror or a local file (absolute, or
    relative to the program's folder); None: the controller's upstream release URL. It must hold that release."""
    owned: bool = True
    """Whether the stack installs and owns the release; False: the cluster runs it already (a shared cluster's
    platform controller), and the component creates nothing: it records the release the workloads expect, which
    must be served (its CRDs and webhooks) before ``pulumi up``."""
    runs: pulumi.Input[str] | None = None
    """When ``owned`` is False and the cluster's release is known (a platform stack's output): a statement that it is
    ``version``, whose output fails when it is not (:meth:`~tpu_serving.platform.platform_cluster.PlatformCluster.expects`)."""


def _source(controller: str) -> Any:
    """A field naming where ``controller``'s release manifest is read from (declared as ``described`` declares a
    setting, which this module cannot import)."""
    text = (
        f"Where the {controller} release manifest is read from: an `https://` mirror or a local file (absolute, or "
        "relative to the program's folder), holding the release the stack names; unset: the upstream release URL."
    )
    return field(default=None, metadata={"description": text, "check": manifest_problem})


@dataclass(frozen=True)
class ControllerManifests:
    """Where each controller's release manifest is read from, for mirrors and clusters without internet access
    (a controller left unset: its upstream release URL). The preview names the source of each install."""

    lws: str | None = _source("LeaderWorkerSet")
    jobset: str | None = _source("JobSet")
    pathways_job: str | None = _source("PathwaysJob")
    metrics_adapter: str | None = _source("Custom Metrics Stackdriver Adapter")

    def of(self, controller: Controller) -> str | None:
        """The source named for ``controller`` (None: its upstream release URL)."""
        return {
            "lws": self.lws,
            "jobset": self.jobset,
            "pathways-job": self.pathways_job,
            "metrics-adapter": self.metrics_adapter,
        }.get(controller.name)


class ControllerInstall(pulumi.ComponentResource):
    """One controller release, applied server-side from its pinned release manifest.

    Pass the cluster's Kubernetes provider in ``opts.providers`` and whatever must exist
    first (the CPU node pool that runs the controller) in ``opts.depends_on``.
    """

    manifests: k8s.yaml.v2.ConfigGroup | None
    """The release manifest's objects (expanded by the provider); None when the cluster runs the controller
    (``owned`` False)."""
    version: str
    """The installed release."""
    api_group: str
    """API group of the controller's custom resources."""

    def __init__(self, name: str, args: ControllerInstallArgs, opts: pulumi.ResourceOptions | None = None):
        args = check_arguments(f"ControllerInstall {name!r}", args, ControllerInstallArgs)
        super().__init__("tpu-serving:index:ControllerInstall", name, None, opts)
        parse_version(args.version)
        self.version = args.version
        self.api_group = args.controller.api_group
        kept = args.controller.availability
        self.watched = (
            WatchedDeployment(kept.namespace, kept.deployment, args.controller.name)
            if kept is not None and args.controller.pages_when_down
            else None
        )
        """The controller's Deployment, which the stack's controller alert watches (None: not watched)."""
        upstream = args.controller.url(args.version)
        self.source = manifest_source(args.manifest)
        """Where the manifest is read from: ``upstream``, ``mirror`` or ``local file``."""
        readiness = args.controller.webhook_readiness
        if not args.owned:
            self.manifests = None
            self.register_outputs(
                {
                    "controller": args.controller.name,
                    "version": args.version,
                    "owned": False,
                    "expects": args.runs
                    or f"expects the cluster to run {args.controller.name} {args.version} (custom resources "
                    f"of {args.controller.api_group}; not checked offline: without them pulumi up fails with no "
                    "matches for kind); the stack installs none of it and does not own it",
                    "upstream": upstream,
                }
            )
            return
        transforms = args.controller.transforms(args.version)
        self.manifests = k8s.yaml.v2.ConfigGroup(
            f"{name}-manifests",
            files=[args.manifest or upstream],
            objs=args.controller.extra_objects() or None,
            opts=pulumi.ResourceOptions(parent=self, transforms=transforms or None),
        )
        # A named source records the upstream release it stands for (readers of the plan recognise the release
        # by its upstream address); the upstream install records its URL alone, as before.
        named = {"source": self.source, "upstream": upstream} if args.manifest else {}
        ready = {"readyWhenServing": readiness.path(args.version)} if readiness else {}
        self.register_outputs({"version": args.version, "url": args.manifest or upstream, **named, **ready})


def installs_by_group(installs: Sequence[ControllerInstall]) -> dict[str, str]:
    """API group -> installed release, for stack outputs and schema checks."""
    return {i.api_group: i.version for i in installs}


def release_validator(controller: Controller) -> AfterValidator:
    def check(value: str) -> str:
        if parse_version(value) < parse_version(controller.min_version or "v0.0.0"):
            raise ValueError(f"{controller.name} {value} is older than the oldest supported, {controller.min_version}")
        newer = controller.newer_problem(value)
        if newer:
            raise ValueError(newer)
        return value

    return AfterValidator(check)
