"""Strict schema validation of the Kubernetes objects a plan declares.

- Built-in kinds: ``kubernetes-validate`` in strict mode (unknown fields rejected) for a
  pinned Kubernetes minor.
- Custom resources: ``jsonschema`` against the ``openAPIV3Schema`` of the upstream CRD of
  the exact controller version the stack installs. CRD schemas allow unknown fields unless
  told otherwise, so every object schema that lists ``properties`` is closed here
  (``additionalProperties: false``), except where the CRD itself says
  ``x-kubernetes-preserve-unknown-fields``. ``x-kubernetes-int-or-string`` becomes
  ``integer | string``, as the API server treats it.

The CRD files are read in place (``../shared/reference/crds`` by default, or the ``crds`` folder of
``$TPU_SERVING_REFERENCE``); ``make reference`` fetches the same pinned files (docs/development.md, Reference schemas).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from tpu_serving.operations.observability import GMP_RELEASE, POD_MONITORING_API
from tpu_serving_tools.reference.sources import reference_dir

KUBERNETES_VERSION = "1.34.0"
"""Kubernetes minor whose built-in schemas the objects are checked against (GKE REGULAR channel)."""

CRD_DIR = Path(os.environ.get("TPU_SERVING_CRDS") or reference_dir() / "crds")
"""Where the upstream CRD files are read: ``$TPU_SERVING_CRDS``, else ``$TPU_SERVING_REFERENCE/crds``, else
``../shared/reference/crds`` beside the project (``make reference`` fetches the same pinned files)."""

CRD_FILES: dict[tuple[str, str], str | tuple[str, ...]] = {
    ("leaderworkerset.x-k8s.io", "v0.4.0"): "lws-v0.4.0-leaderworkersets-crd.yaml",
    ("leaderworkerset.x-k8s.io", "v0.10.0"): "lws-v0.10.0-leaderworkersets-crd.yaml",
    ("jobset.x-k8s.io", "v0.2.3"): "jobset-v0.2.3-jobsets-crd.yaml",
    ("jobset.x-k8s.io", "v0.10.1"): "jobset-v0.10.1-jobsets-crd.yaml",
    ("jobset.x-k8s.io", "v0.12.0"): "jobset-v0.12.0-jobsets-crd.yaml",
    ("disaggregatedset.x-k8s.io", "v0.10.0"): (
        "lws-v0.10.0-disaggregatedsets-crd.yaml",
        "lws-v0.10.0-disaggregatedsetrolescalers-crd.yaml",
    ),
    ("pathways-job.pathways.domain", "v0.1.4"): "pathwaysjob-v0.1.4-crd.yaml",
    ("monitoring.googleapis.com", "v0.17.2"): "gmp-v0.17.2-podmonitorings-crd.yaml",
    ("inference.networking.k8s.io", "v1.6.0"): "inference-extension-v1.6.0-inferencepools-crd.yaml",
    ("gateway.networking.k8s.io", "v1.3.0"): (
        "gateway-api-v1.3.0-gatewayclasses-crd.yaml",
        "gateway-api-v1.3.0-gateways-crd.yaml",
        "gateway-api-v1.3.0-httproutes-crd.yaml",
    ),
}
"""Upstream CRD file(s) of each (API group, controller release); a group with several kinds lists one file each."""

PLATFORM_RELEASES: dict[str, str] = {
    # GKE's Gateway controller installs the Gateway API CRDs itself (cluster gateway_api_config
    # CHANNEL_STANDARD); the version depends on the GKE version, so the objects are checked against the
    # standard channel of v1.3.0, the release in ../shared/reference/crds.
    "gateway.networking.k8s.io": "v1.3.0",
    "networking.gke.io": "gke",
    # GKE serves the InferencePool v1 CRD itself from 1.34.0-gke.1626000 (tpu_serving.traffic.gateway.INFERENCE_POOL_MIN_GKE);
    # checked against gateway-api-inference-extension v1.6.0's CRD (../shared/reference/crds).
    "inference.networking.k8s.io": "v1.6.0",
    # GKE installs Managed Prometheus' PodMonitoring CRD when the cluster has it on; checked against
    # the pinned release (GoogleCloudPlatform/prometheus-engine@v0.17.2, the CRD file above).
    POD_MONITORING_API.partition("/")[0]: GMP_RELEASE,
    # GKE serves the ComputeClass CRD itself from 1.30.3-gke.1451000 (tpu_serving.pools.compute_class.CUSTOM_CLASS_MIN_GKE);
    # checked against the schema in ../shared/reference/crds (REFERENCE_SCHEMAS).
    "cloud.google.com": "gke",
}
"""Releases of API groups GKE itself serves on the cluster (the stack installs no controller for them)."""

BUNDLED_WITH: dict[str, str] = {
    # LeaderWorkerSet's release manifest (manifests.yaml) installs the DisaggregatedSet CRDs, RBAC and webhook
    # since v0.9.0 (kubernetes-sigs/lws@v0.10.0 site/content/en/docs/installation/_index.md l.198-204): its objects
    # are checked against the LWS release the stack installs.
    "disaggregatedset.x-k8s.io": "leaderworkerset.x-k8s.io",
}
"""API group -> the group of the controller whose release installs it."""

_TARGET_REF: dict[str, Any] = {
    "type": "object",
    "required": ["group", "kind", "name"],
    "properties": {"group": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}},
}


def _gke_policy(kind: str, default: dict[str, Any]) -> dict[str, Any]:
    """A GKE policy object (``networking.gke.io/v1``): ``spec.default`` settings for ``spec.targetRef``."""
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"enum": ["networking.gke.io/v1"]},
            "kind": {"enum": [kind]},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["default", "targetRef"],
                "properties": {"default": default, "targetRef": _TARGET_REF},
            },
        },
    }


HEALTH_CHECK_POLICY_SCHEMA: dict[str, Any] = _gke_policy(
    "HealthCheckPolicy",
    {
        "type": "object",
        "properties": {
            "checkIntervalSec": {"type": "integer", "minimum": 1, "maximum": 300},
            "timeoutSec": {"type": "integer", "minimum": 1, "maximum": 300},
            "healthyThreshold": {"type": "integer", "minimum": 1, "maximum": 10},
            "unhealthyThreshold": {"type": "integer", "minimum": 1, "maximum": 10},
            "logConfig": {"type": "object", "properties": {"enabled": {"type": "boolean"}}},
            "config": {
                "type": "object",
                "required": ["type"],
                "properties": {
                    "type": {"enum": ["TCP", "HTTP", "HTTPS", "HTTP2", "GRPC"]},
                    "httpHealthCheck": {
                        "type": "object",
                        "properties": {
                            "portSpecification": {"enum": ["USE_FIXED_PORT", "USE_NAMED_PORT", "USE_SERVING_PORT"]},
                            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                            "portName": {"type": "string"},
                            "host": {"type": "string"},
                            "requestPath": {"type": "string", "pattern": "^/"},
                            "response": {"type": "string"},
                            "proxyHeader": {"enum": ["NONE", "PROXY_V1"]},
                        },
                    },
                },
            },
        },
    },
)
"""GKE's HealthCheckPolicy, written from its documentation, since GKE publishes no CRD file to read in place
(https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources, "Configure health
check": spec.default.{checkIntervalSec, timeoutSec, healthyThreshold, unhealthyThreshold, logConfig,
config.{type, httpHealthCheck.{portSpecification, port, portName, host, requestPath, response,
proxyHeader}}} and spec.targetRef.{group, kind, name}; as gateway-api-inference-extension@v1.3.1
config/charts/inferencepool/templates/gke.yaml uses it). Closed like the CRD schemas: weaker than an
upstream CRD, it still refuses unknown and misspelt fields."""


GCP_BACKEND_POLICY_SCHEMA: dict[str, Any] = _gke_policy(
    "GCPBackendPolicy",
    {
        "type": "object",
        "properties": {
            "timeoutSec": {"type": "integer", "minimum": 1},
            "logging": {
                "type": "object",
                "properties": {"enabled": {"type": "boolean"}, "sampleRate": {"type": "integer"}},
            },
            "connectionDraining": {
                "type": "object",
                "properties": {"drainingTimeoutSec": {"type": "integer", "minimum": 0}},
            },
            "securityPolicy": {"type": "string"},
        },
    },
)
"""GKE's GCPBackendPolicy, written from its documentation (no CRD file is published to read in place:
https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources, "Configure backend
service timeout", "access logging", "connection draining", "Cloud Armor": spec.default.{timeoutSec,
logging.{enabled, sampleRate}, connectionDraining.drainingTimeoutSec, securityPolicy} and spec.targetRef;
gateway-api-inference-extension config/charts/inferencepool/templates/gke.yaml sets timeoutSec 300 and
logging on an InferencePool). Closed: unknown and misspelt fields are refused."""

LOCAL_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("networking.gke.io", "HealthCheckPolicy"): HEALTH_CHECK_POLICY_SCHEMA,
    ("networking.gke.io", "GCPBackendPolicy"): GCP_BACKEND_POLICY_SCHEMA,
}
"""Kinds with no published CRD file, by (API group, kind): checked against the schemas written here."""

REFERENCE_SCHEMAS: dict[tuple[str, str], str] = {
    # datreeio/CRDs-catalog 7b1e26ef cloud.google.com/computeclass_v1.json: the openAPIV3Schema of GKE's CRD, already
    # closed (additionalProperties false); its CEL rules (x-kubernetes-validations) are the API server's to run (make e2e)
    ("cloud.google.com", "ComputeClass"): "gke-computeclass-v1.schema.json",
}
"""Kinds whose schema the reference folder holds as a bare JSON schema (no CRD around it), by (API group, kind)."""


class SchemaError(AssertionError):
    """An object that its schema rejects."""


JUNCTORS = ("oneOf", "anyOf", "allOf", "not")
"""A structural schema's value validations: their branches may not declare fields of their own that the structural
part does not (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/
#specifying-a-structural-schema, rule 3: within allOf, anyOf, oneOf and not, no field the outer schema lacks), so the
API server prunes by the structural part alone. A branch is therefore never closed: the Gateway API v1.3.0 CRD's
``spec.addresses[]`` has a ``oneOf`` whose second branch names only ``type``, and an object with a ``value`` passes it
on the API server."""


def closed(schema: Any, *, in_junctor: bool = False) -> Any:
    """A copy of an OpenAPI v3 schema that rejects unknown fields, as described above (not inside a value
    validation's branches: :data:`JUNCTORS`)."""
    if isinstance(schema, list):
        return [closed(s, in_junctor=in_junctor) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed(v, in_junctor=in_junctor or k in JUNCTORS) for k, v in schema.items()}
    if out.pop("x-kubernetes-int-or-string", False):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (
        not in_junctor
        and "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


@functools.cache
def crd_schema(
    group: str, release: str, version: str, crd_dir: Path = CRD_DIR, kind: str | None = None
) -> dict[str, Any]:
    """The closed ``openAPIV3Schema`` of API ``version`` in the CRD of ``kind`` (default: the only one) of
    ``group`` at ``release``."""
    try:
        filename = CRD_FILES[(group, release)]
    except KeyError:
        known = sorted(r for g, r in CRD_FILES if g == group)
        raise SchemaError(f"no CRD of {group} at {release}; have: {known}") from None
    crds = []
    for name in (filename,) if isinstance(filename, str) else filename:
        path = crd_dir / name
        if not path.is_file():
            raise SchemaError(f"CRD file missing: {path}")
        docs = [d for d in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d]
        crds += [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    crd = next((c for c in crds if kind is None or c["spec"]["names"]["kind"] == kind), None)
    if crd is None:
        raise SchemaError(
            f"no {kind} in the {group} {release} CRDs; have: {[c['spec']['names']['kind'] for c in crds]}"
        )
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            if not v.get("served", True):
                raise SchemaError(f"{group}/{version} is not served by the {release} CRD")
            schema: dict[str, Any] = closed(v["schema"]["openAPIV3Schema"])
            return schema
    raise SchemaError(
        f"{group}/{version} not in the {release} CRD; versions: {[v['name'] for v in crd['spec']['versions']]}"
    )


@functools.cache
def reference_schema(name: str, crd_dir: Path = CRD_DIR) -> dict[str, Any]:
    """A bare JSON schema of the reference folder (:data:`REFERENCE_SCHEMAS`), closed as the CRD schemas are."""
    path = crd_dir / name
    if not path.is_file():
        raise SchemaError(f"schema file missing: {path}")
    schema: dict[str, Any] = closed(json.loads(path.read_text()))
    return schema


def validate_custom(obj: dict[str, Any], release: str, crd_dir: Path = CRD_DIR) -> None:
    """Validate a custom resource against its CRD at controller ``release``; raise :class:`SchemaError`."""
    import jsonschema

    group, _, version = obj["apiVersion"].partition("/")
    local = LOCAL_SCHEMAS.get((group, str(obj.get("kind"))))
    bare = REFERENCE_SCHEMAS.get((group, str(obj.get("kind"))))
    if local is not None:
        schema: dict[str, Any] = closed(local)
    elif bare is not None:
        schema = reference_schema(bare, crd_dir)
    else:
        schema = crd_schema(group, release, version, crd_dir, obj.get("kind"))
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        raise SchemaError(
            f"{obj['kind']} {obj.get('metadata', {}).get('name')} against {group} {release}:\n"
            + "\n".join(f"  {'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:300]}" for e in errors[:20])
        )


@functools.cache
def _read_schemas_once() -> None:
    """Make kubernetes-validate read each schema file once per process.

    Its ``validate`` opens and parses the kind's schema and the 1.5 MB ``_definitions.json`` on every call
    (kubernetes-validate 1.37.0, ``utils.py`` l.71-86 ``schema_contents``, called at l.111 and l.118): most of a
    stack's validation time. The parsed schemas are only read (by ``referencing`` and ``jsonschema``), so one parse
    per file serves every object.
    """
    from kubernetes_validate import utils

    utils.schema_contents = functools.cache(utils.schema_contents)


def validate_builtin(obj: dict[str, Any], kubernetes_version: str = KUBERNETES_VERSION) -> None:
    """Validate a built-in kind strictly with kubernetes-validate; raise :class:`SchemaError`."""
    import kubernetes_validate

    _read_schemas_once()
    try:
        kubernetes_validate.validate(obj, kubernetes_version, strict=True)
    except kubernetes_validate.ValidationError as err:
        raise SchemaError(
            f"{obj['kind']} {obj.get('metadata', {}).get('name')}: {'.'.join(map(str, err.path))}: {err.message}"
        ) from None


def is_custom(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is of a kind the CRD table covers."""
    group = obj["apiVersion"].partition("/")[0]
    return any(g == group for g, _ in CRD_FILES) or group in PLATFORM_RELEASES


def validate_all(objects: Iterable[dict[str, Any]], releases: dict[str, str]) -> list[str]:
    """Validate every object; ``releases`` maps API group -> installed controller release.

    Returns the problems (empty when every object passes).
    """
    problems = []
    for obj in objects:
        try:
            if is_custom(obj):
                group = obj["apiVersion"].partition("/")[0]
                release = (
                    releases.get(group) or releases.get(BUNDLED_WITH.get(group, "")) or PLATFORM_RELEASES.get(group)
                )
                if release is None:
                    raise SchemaError(f"{obj['kind']}: the stack installs no controller for {group}")
                validate_custom(obj, release)
            else:
                validate_builtin(obj)
        except SchemaError as err:
            problems.append(str(err))
    return problems
