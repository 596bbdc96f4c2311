"""A shipped stack in existing-cluster mode, with every cloud resource named existing: for the local end-to-end run.

:func:`existing_cluster_overlay` takes one stack file's ``config:`` mapping (as loaded from
``stacks/Pulumi.<stack>.yaml``), a kubeconfig path and a local release manifest per controller, and returns the
same stack on an existing cluster reached through that kubeconfig: the cluster, its node pools (under the names the
stack would give them), the project's APIs, the buckets, the workloads' GCP service account, the Cloud Monitoring
resources, the metrics adapter's grant, the gateway's proxy-only subnet and address, and the image mirror's repositories all named
existing, and each controller's
manifest read from its local file. Such a stack previews with no ``gcp:`` resource and no GCP call, so ``pulumi up``
needs only the Kubernetes provider. Pure: it reads nothing and writes nothing.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic.alias_generators import to_camel

from tpu_serving.backends.rollout import NODE_UPGRADE_HOLDING_SCOPES
from tpu_serving.common.naming import (
    cpu_service_account_id,
    mirror_repository_id,
    pool_name,
    service_account_email,
    workload_service_account_id,
)
from tpu_serving.common.settings import PROJECT_NAMESPACE
from tpu_serving.config.existing_checks import CREATE_ONLY_BUCKET_KEYS, CREATE_ONLY_CLUSTER_KEYS
from tpu_serving.config.models import TpuSliceConfig
from tpu_serving.platform.image_mirror import UPSTREAMS, MirrorMode, repository_path

CONTROLLER_KEYS: Mapping[str, str] = {
    "lws": "lws",
    "jobset": "jobset",
    "pathways-job": "pathwaysJob",
    "metrics-adapter": "metricsAdapter",
}
"""Controller (``Controller.name``) -> its key under ``controllerManifests``."""

CLUSTER_NAT_KEYS = ("cloudNat", "existingNatRouter", "existingNat")
"""The Cloud NAT keys: left out, an existing cluster's NAT is its owner's and is not looked up."""

EXISTING = "existing"


class OverlayError(ValueError):
    """A stack config the overlay cannot convert (a controller it does not know, a config without a cluster)."""


def _key(config: Mapping[str, Any], name: str) -> str:
    """The key under which ``config`` holds setting ``name`` of the project: bare, or ``tpu-serving:<name>``."""
    namespaced = f"{PROJECT_NAMESPACE}:{name}"
    return namespaced if namespaced in config else name


def existing_cluster_overlay(
    config: Mapping[str, Any], kubeconfig: str, manifests: Mapping[str, str], context: str | None = None
) -> dict[str, Any]:
    """``config`` (a stack file's ``config:``) in existing-cluster mode with every cloud resource named existing.

    ``kubeconfig`` is the path the Kubernetes provider reads (and ``context`` one of its contexts); ``manifests``
    maps a controller (``lws``, ``jobset``, ``pathways-job``, ``metrics-adapter``) to the local file holding the
    release manifest the stack installs.
    """
    unknown = sorted(set(manifests) - set(CONTROLLER_KEYS))
    if unknown:
        raise OverlayError(
            f"manifests: unknown controller(s) {', '.join(unknown)}; valid: {', '.join(CONTROLLER_KEYS)}"
        )
    if _key(config, "sharedPlatform") in config:
        return platform_overlay(config, kubeconfig, manifests, context)
    if _key(config, "platform") in config:
        return model_overlay(config, kubeconfig, context)
    out = copy.deepcopy(dict(config))
    cluster = _existing_cluster(out, kubeconfig, context)
    _existing_buckets(out)
    _existing_identity(out, str(cluster["name"]))
    _existing_mirror(out, str(cluster["name"]), created="existing" not in cluster)
    out[_key(out, "projectApis")] = EXISTING
    obs_key = _key(out, "observability")
    out[obs_key] = {**(out.get(obs_key) or {}), "cloudResources": EXISTING}
    gateway_key = _key(out, "gateway")
    if isinstance(out.get(gateway_key), dict):
        out[gateway_key] = {**out[gateway_key], "createProxyOnlySubnet": False, **gateway_address(str(cluster["name"]))}
    serving_key = _key(out, "serving")
    if isinstance(out.get(serving_key), dict):
        out[serving_key] = _adapter_grant_existing(out[serving_key])
    if manifests:
        _installed_from(out, manifests)
    return out


PLATFORM_INSTALLS = ("lws", "jobset")
"""The controllers a platform stack installs from a release manifest (``tpu_serving.platform.tpu_platform.platform_controllers``,
less the metrics adapter, which the run names the cluster's)."""


def platform_overlay(
    config: Mapping[str, Any], kubeconfig: str, manifests: Mapping[str, str], context: str | None = None
) -> dict[str, Any]:
    """``config`` (a platform stack's ``config:``, ``sharedPlatform``) on an existing cluster reached through
    ``kubeconfig``: the APIs, the alert policies, the proxy-only subnet and the Gateway's address named existing, the
    metrics adapter named the cluster's (``metricsAdapterInstall: existing``: :data:`ADAPTER_EXISTING`'s reason), and
    the controllers it installs read from the local files ``manifests``. The existing cluster's node account
    (``cluster.existing.nodeServiceAccount``, required of a platform) is the one the created cluster would have had,
    and no model deployer is granted its use (``sharedPlatform.modelDeployers: []``: a grant is a GCP resource). A
    platform has no bucket, workload identity, image mirror nor ``controllerInstalls``: it owns its controllers.
    Pure."""
    out = copy.deepcopy(dict(config))
    cluster = _existing_cluster(out, kubeconfig, context)
    node_account = service_account_email(cpu_service_account_id(str(cluster["name"])), str(out["gcp:project"]))
    out[_key(out, "cluster")]["existing"]["nodeServiceAccount"] = node_account
    out[_key(out, "projectApis")] = EXISTING
    obs_key = _key(out, "observability")
    out[obs_key] = {**(out.get(obs_key) or {}), "cloudResources": EXISTING}
    gateway_key = _key(out, "gateway")
    out[gateway_key] = {
        **(out.get(gateway_key) or {}),
        "createProxyOnlySubnet": False,
        **gateway_address(str(cluster["name"])),
    }
    shared_key = _key(out, "sharedPlatform")
    out[shared_key] = {**(out.get(shared_key) or {}), "metricsAdapterInstall": EXISTING, "modelDeployers": []}
    owned = {c: path for c, path in sorted(manifests.items()) if c in PLATFORM_INSTALLS}
    if owned:
        out[_key(out, "controllerManifests")] = {CONTROLLER_KEYS[c]: path for c, path in owned.items()}
    return out


def model_overlay(config: Mapping[str, Any], kubeconfig: str, context: str | None = None) -> dict[str, Any]:
    """``config`` (a model stack's ``config:``, ``platform``) on its platform's cluster reached through ``kubeconfig``
    (``platform.kubeconfig``: no ``getCluster`` call), its platform named in the local backend
    (:func:`local_platform_reference`), each slice's node pools named existing under the names the stack would give
    them (``existingNodePools``: the run's Nodes carry them), and its buckets, workload account, image mirror and
    Cloud Monitoring resources named existing, as :func:`existing_cluster_overlay` names a self-contained stack's. Its
    controllers and the metrics adapter are the platform's: nothing of them is set. Pure."""
    out = local_platform_reference(config, LOCAL_PROJECT)
    platform_key = _key(out, "platform")
    out[platform_key] = {**out[platform_key], "kubeconfig": kubeconfig, **({"context": context} if context else {})}
    _, cluster = _named_cluster(out)
    name = str(cluster["name"])
    slices_key = _key(out, "tpuSlices")
    out[slices_key] = [
        {**s, "existingNodePools": s.get("existingNodePools") or _pool_names(name, s)}
        for s in out.get(slices_key) or []
    ]
    _existing_buckets(out)
    _existing_identity(out, name)
    _existing_mirror(out, name, created=False)
    obs_key = _key(out, "observability")
    out[obs_key] = {**(out.get(obs_key) or {}), "cloudResources": EXISTING}
    return out


def _pool_names(cluster: str, tpu_slice: Mapping[str, Any]) -> list[str]:
    """The node pools the stack would create for a slice kind (``TpuSliceConfig.pool_names``, named by
    :func:`tpu_serving.common.naming.pool_name`)."""
    return [pool_name(cluster, n) for n in TpuSliceConfig.model_validate(tpu_slice).pool_names]


LOCAL_PROJECT = "tpu-serving"
"""The Pulumi project the run's stacks belong to (the project file's ``name``)."""


GATEWAY_ADDRESS_IP = "192.0.2.10"
"""The Gateway's address named existing: from TEST-NET-1, reserved for documentation and never routed (RFC 5737 §3).
The local run has no load balancer behind any address; its Gateway is an object of the API, not a proxy."""


def gateway_address(cluster: str) -> dict[str, str]:
    """The gateway's address named existing (the stack reserves one otherwise): a name and an IP."""
    return {"existingAddress": f"{cluster}-gateway", "existingAddressIp": GATEWAY_ADDRESS_IP}


def _named_cluster(out: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The key of ``out``'s cluster and the cluster, which has a name in a config with a ``gcp:project``."""
    cluster_key = _key(out, "cluster")
    cluster = out.get(cluster_key)
    if not isinstance(cluster, dict) or "name" not in cluster or "gcp:project" not in out:
        raise OverlayError("the stack config has no cluster with a name, or no gcp:project")
    return cluster_key, cluster


def _existing_cluster(out: dict[str, Any], kubeconfig: str, context: str | None) -> dict[str, Any]:
    """The stack's cluster, in ``out``, named existing by ``kubeconfig`` (and ``context``), without the keys only a
    created cluster has; the cluster's settings as the stack file gave them."""
    cluster_key, cluster = _named_cluster(out)
    dropped = {to_camel(k) for k in CREATE_ONLY_CLUSTER_KEYS} | set(CLUSTER_NAT_KEYS)
    existing: dict[str, Any] = {"kubeconfig": kubeconfig, **({"context": context} if context else {})}
    exclusions = (cluster.get("maintenance") or {}).get("exclusions") or []
    if any(e.get("scope") in NODE_UPGRADE_HOLDING_SCOPES for e in exclusions if isinstance(e, dict)):
        # The created cluster's exclusion held node upgrades: the existing one says its owner holds them.
        existing["nodeUpgradesHeld"] = True
    out[cluster_key] = {**{k: v for k, v in cluster.items() if k not in dropped}, "existing": existing}
    return cluster


def _existing_buckets(out: dict[str, Any]) -> None:
    """Every bucket of ``out`` named existing, without the keys only a created bucket has."""
    bucket_keys = {to_camel(k) for k in CREATE_ONLY_BUCKET_KEYS}
    buckets_key = _key(out, "buckets")
    out[buckets_key] = [
        {**{k: v for k, v in b.items() if k not in bucket_keys}, "existing": True} for b in out.get(buckets_key) or []
    ]


def _existing_identity(out: dict[str, Any], cluster: str) -> None:
    """The workloads' GCP service account of ``out`` named existing (the one the stack would create)."""
    wi_key = _key(out, "workloadIdentity")
    wi = dict(out.get(wi_key) or {})
    account = workload_service_account_id(cluster, wi.pop("gcpServiceAccount", None))
    wi["existingGcpServiceAccount"] = service_account_email(account, str(out["gcp:project"]))
    out[wi_key] = wi


def _existing_mirror(out: dict[str, Any], cluster: str, created: bool) -> None:
    """The image mirror's repositories of ``out`` named existing (those the stack would create), when the stack creates
    them (``imageMirror.mode`` ``create``, or unset with a cluster the stack creates, ``created``); its images are
    then the same paths as the stack's."""
    mirror_key = _key(out, "imageMirror")
    given = dict(out.get(mirror_key) or {})
    default = MirrorMode.CREATE.value if created else MirrorMode.NONE.value
    if given.get("mode", default) != MirrorMode.CREATE.value:
        return
    project, region = str(out["gcp:project"]), str(out.get("gcp:region", ""))
    out[mirror_key] = {
        "mode": MirrorMode.EXISTING.value,
        **{
            to_camel(u.key): repository_path(region, project, mirror_repository_id(cluster, u.suffix))
            for u in UPSTREAMS
        },
    }


def _installed_from(out: dict[str, Any], manifests: Mapping[str, str]) -> None:
    """The controllers' release manifests read from the local files ``manifests``, each installed by the stack: in
    existing-cluster mode a controller defaults to `existing` (the platform's); the local control plane runs none, so
    the stack installs each one the run has a manifest for, as on a cluster it creates."""
    out[_key(out, "controllerManifests")] = {CONTROLLER_KEYS[c]: path for c, path in sorted(manifests.items())}
    out[_key(out, "controllerInstalls")] = {
        CONTROLLER_KEYS[c]: "create" for c in sorted(manifests) if c in INSTALL_MODE_CONTROLLERS
    }


INSTALL_MODE_CONTROLLERS = ("lws", "jobset", "pathways-job")
"""The controllers of the stack file's ``controllerInstalls`` (the metrics adapter's is ``adapterInstall``)."""


ADAPTER_EXISTING = {"adapterIam": EXISTING, "adapterInstall": EXISTING}
"""The metrics adapter's grant and its install named existing: its release manifest has no source the e2e run can
read (its module, github.com/GoogleCloudPlatform/k8s-stackdriver, is not served by the Go module proxy), and it
serves Cloud Monitoring's metrics, which no local run has."""


def _adapter_grant_existing(serving: Mapping[str, Any]) -> dict[str, Any]:
    """``serving`` with the metrics adapter's grant and install named existing wherever it autoscales (the engine,
    or each disaggregated role)."""
    out = dict(serving)
    if isinstance(out.get("autoscaling"), dict):
        out["autoscaling"] = {**out["autoscaling"], **ADAPTER_EXISTING}
    roles = out.get("disaggregation")
    if isinstance(roles, dict):
        out["disaggregation"] = {
            name: {**role, "autoscaling": {**role["autoscaling"], **ADAPTER_EXISTING}}
            if isinstance(role, dict) and isinstance(role.get("autoscaling"), dict)
            else role
            for name, role in roles.items()
        }
    return out


LOCAL_ORGANIZATION = "organization"
"""The one organization of a local (``file://``) backend. The Pulumi CLI the harness runs (pkg/v3 v3.274.1,
``backend/diy/store.go``) parses a stack reference in ``projectReferenceStore.ParseReference`` (l.138): the
three-part form is ``<org-name>/<project-name>/<stack-name>`` (l.159), and any organization but ``organization``
is refused, "organization name must be 'organization'" (l.173); ``diyBackendReference.FullyQualifiedName``
(``backend/diy/backend.go`` l.190-194) names a stack ``organization/<project>/<stack>``. The SDK's
``StackReference`` (pulumi 3.272.0 ``pulumi/stack_reference.py`` l.88-100) sends the name as it is given."""


def local_platform_reference(config: Mapping[str, Any], project: str) -> dict[str, Any]:
    """``config`` (a model stack's ``config:``) with ``platform.stack`` naming its platform stack in the local
    backend: ``organization/<project>/<the platform stack's own name>`` (:data:`LOCAL_ORGANIZATION`), where a
    shipped stack file names its own organization (``my-org/...``), which a local backend refuses. A config
    without ``platform`` is returned as it is. Pure."""
    out = copy.deepcopy(dict(config))
    key = _key(out, "platform")
    platform = out.get(key)
    if not isinstance(platform, dict) or not isinstance(platform.get("stack"), str):
        return out
    stack = platform["stack"].rsplit("/", 1)[-1]
    out[key] = {**platform, "stack": f"{LOCAL_ORGANIZATION}/{project}/{stack}"}
    return out
