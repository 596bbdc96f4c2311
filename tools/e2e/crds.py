"""The CustomResourceDefinitions a stack expects: those GKE provides, and optionally the controllers' own.

From pinned Go modules in the module cache (``go mod download -json <module>@<version>`` gives the directory),
wherever the module holds them:

- Gateway API ``sigs.k8s.io/gateway-api`` v1.3.0, standard channel (``config/crd/standard``);
- InferencePool, ``sigs.k8s.io/gateway-api-inference-extension`` v1.6.0 (``config/crd/bases``);
- Google Cloud Managed Service for Prometheus, ``github.com/GoogleCloudPlatform/prometheus-engine`` v0.17.2
  (``charts/operator/crds``: PodMonitoring and the rest GKE installs with it);
- JobSet ``sigs.k8s.io/jobset`` v0.12.0 (``config/components/crd/bases``), LeaderWorkerSet ``sigs.k8s.io/lws``
  v0.10.0 (``config/crd/bases``: leaderworkersets, disaggregatedsets, disaggregatedsetrolescalers).

Not published as modules, from ``../shared/reference/crds`` (skipped, with a message naming them, when that folder
is missing):

- GKE's ComputeClass (``cloud.google.com/v1``), GCPBackendPolicy and HealthCheckPolicy (``networking.gke.io/v1``):
  GKE installs these itself and publishes no CRD file; their CRDs are built here from the JSON schemas a public
  CRD catalog extracted from GKE's CRDs (``*.schema.json``), with names and scope from GKE's documentation
  (ComputeClass is cluster-scoped: https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes;
  the two policies are namespaced: https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources);
- PathwaysJob v0.1.4 (``pathwaysjob-v0.1.4-crd.yaml``): its Go module is not served by the module proxy;
- LeaderWorkerSet v0.10.0 when its module cannot be had: the module proxy answered 403 ("This module version is
  not available") for ``sigs.k8s.io/lws@v0.10.0`` when this was written, so its three CRDs fall back to the same
  files of the release in ``../shared/reference/crds`` (``lws-v0.10.0-*-crd.yaml``).

GKE's own CRDs are always installed; the controllers' (LWS, JobSet, PathwaysJob) only when asked, since the stacks
install them with their controllers' release manifests.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tpu_serving_tools.reference.sources import reference_dir

from .controlplane import go_mod_dir
from .kube import ApiError, Kube, Obj, wait_for

SHARED_CRDS = Path(os.environ.get("TPU_SERVING_CRDS") or reference_dir() / "crds")
"""``../shared/reference/crds`` beside the checkout (``$TPU_SERVING_CRDS``, ``$TPU_SERVING_REFERENCE/crds``), as
:mod:`tpu_serving_tools.reference.schema` finds it."""


@dataclass(frozen=True)
class ModuleCrds:
    """CRD files of a pinned Go module: ``files`` (globs) under the module's directory."""

    module: str
    version: str
    files: Sequence[str]
    fallback: Sequence[str] = ()
    """File names in ``../shared/reference/crds`` to use when the module cannot be downloaded."""


@dataclass(frozen=True)
class SchemaCrd:
    """A CRD built from a JSON schema of ``../shared/reference/crds``."""

    schema: str
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


GKE_MODULES = (
    ModuleCrds("sigs.k8s.io/gateway-api", "v1.3.0", ("config/crd/standard/*.yaml",)),
    ModuleCrds("sigs.k8s.io/gateway-api-inference-extension", "v1.6.0", ("config/crd/bases/*.yaml",)),
    ModuleCrds("github.com/GoogleCloudPlatform/prometheus-engine", "v0.17.2", ("charts/operator/crds/*.yaml",)),
)
GKE_SCHEMAS = (
    SchemaCrd("gke-computeclass-v1.schema.json", "cloud.google.com", "v1", "ComputeClass", "computeclasses", False),
    SchemaCrd("gke-networking-gcpbackendpolicy-v1.schema.json", "networking.gke.io", "v1", "GCPBackendPolicy",
              "gcpbackendpolicies", True),
    SchemaCrd("gke-networking-healthcheckpolicy-v1.schema.json", "networking.gke.io", "v1", "HealthCheckPolicy",
              "healthcheckpolicies", True),
)  # fmt: skip
CONTROLLER_MODULES = (
    ModuleCrds("sigs.k8s.io/jobset", "v0.12.0", ("config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml",)),
    ModuleCrds(
        "sigs.k8s.io/lws",
        "v0.10.0",
        (
            "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
            "config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml",
            "config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsetrolescalers.yaml",
        ),
        fallback=(
            "lws-v0.10.0-leaderworkersets-crd.yaml",
            "lws-v0.10.0-disaggregatedsets-crd.yaml",
            "lws-v0.10.0-disaggregatedsetrolescalers-crd.yaml",
        ),
    ),
)
CONTROLLER_SHARED_FILES = ("pathwaysjob-v0.1.4-crd.yaml",)


@dataclass
class CrdReport:
    """What was installed, from where, and what was skipped (with why)."""

    installed: list[str]
    skipped: list[str]
    sources: dict[str, str]
    """CRD name -> where it was read (module@version/path, or the shared file)."""


def _documents(path: Path) -> list[Obj]:
    return [
        d
        for d in yaml.safe_load_all(path.read_text())
        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
    ]


def module_crds(source: ModuleCrds, shared: Path, skipped: list[str]) -> list[tuple[str, Obj]]:
    """(origin, CRD) of a module's files, or of its fallback files when the module cannot be downloaded."""
    try:
        root = go_mod_dir(source.module, source.version)
    except FileNotFoundError as err:
        if not source.fallback:
            raise
        return _shared_files(source.fallback, shared, skipped, because=str(err))
    paths = sorted(p for pattern in source.files for p in root.glob(pattern))
    if not paths:
        raise FileNotFoundError(f"{source.module}@{source.version} holds no {', '.join(source.files)}")
    return [(f"{source.module}@{source.version}/{p.relative_to(root)}", crd) for p in paths for crd in _documents(p)]


def _shared_files(names: Iterable[str], shared: Path, skipped: list[str], because: str = "") -> list[tuple[str, Obj]]:
    found: list[tuple[str, Obj]] = []
    for name in names:
        path = shared / name
        if not path.is_file():
            skipped.append(f"{name}: {path} is missing" + (f" (and {because})" if because else ""))
            continue
        found += [(f"../shared/reference/crds/{name}", crd) for crd in _documents(path)]
    return found


def structural(schema: Any) -> Any:
    """A JSON schema made a structural OpenAPI schema: ``additionalProperties: false`` (which the catalog adds
    beside ``properties``; a CRD may not have both) dropped, everything else kept."""
    if isinstance(schema, list):
        return [structural(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: structural(v) for k, v in schema.items() if k not in ("$schema", "$id")}
    if out.get("additionalProperties") is False:
        del out["additionalProperties"]
    return out


def schema_crd(spec: SchemaCrd, shared: Path) -> Obj:
    """The CRD of ``spec`` from its JSON schema."""
    schema = structural(json.loads((shared / spec.schema).read_text()))
    schema["properties"]["metadata"] = {"type": "object"}
    version: Obj = {"name": spec.version, "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    if "status" in schema.get("properties", {}):
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{spec.plural}.{spec.group}"},
        "spec": {
            "group": spec.group,
            "names": {"kind": spec.kind, "listKind": f"{spec.kind}List", "plural": spec.plural,
                      "singular": spec.kind.lower()},
            "scope": "Namespaced" if spec.namespaced else "Cluster",
            "versions": [version],
        },
    }  # fmt: skip


def gke_crds(shared: Path, skipped: list[str]) -> list[tuple[str, Obj]]:
    """(origin, CRD) of every CRD GKE provides."""
    found = [item for source in GKE_MODULES for item in module_crds(source, shared, skipped)]
    for spec in GKE_SCHEMAS:
        if (shared / spec.schema).is_file():
            found.append(
                (f"../shared/reference/crds/{spec.schema} (JSON schema, CRD built here)", schema_crd(spec, shared))
            )
        else:
            skipped.append(f"{spec.kind} ({spec.group}/{spec.version}): {shared / spec.schema} is missing")
    return found


def controller_crds(shared: Path, skipped: list[str]) -> list[tuple[str, Obj]]:
    """(origin, CRD) of the controllers' CRDs: JobSet, LeaderWorkerSet, PathwaysJob."""
    found = [item for source in CONTROLLER_MODULES for item in module_crds(source, shared, skipped)]
    return found + _shared_files(CONTROLLER_SHARED_FILES, shared, skipped)


def install(kube: Kube, crds: Sequence[tuple[str, Obj]], *, timeout: float = 60.0) -> list[str]:
    """Create (or replace) each CRD and wait until every one is Established; their names."""
    names = []
    for origin, crd in crds:
        body = copy.deepcopy(crd)
        body.setdefault("metadata", {}).setdefault("annotations", {})["tpu-serving.dev/e2e-source"] = origin[:250]
        try:
            kube.apply(body)
        except ApiError as err:
            raise ApiError("APPLY", f"CRD {crd['metadata']['name']} from {origin}", err.status, err.message) from err
        names.append(str(crd["metadata"]["name"]))
    for name in names:
        wait_for(f"CRD {name} Established", functools.partial(_established, kube, name), timeout=timeout)
    # Established is not "discovery lists it": the API server's CRD handler and its discovery controller do not
    # sync (kubernetes/kubernetes issue #130235, open), and a read of discovery at once can get a 404 (SRE review
    # round 25, m1). Wait until each served version lists the CRD's plural.
    for _, crd in crds:
        wait_for(
            f"CRD {crd['metadata']['name']} in discovery", functools.partial(_discovered, kube, crd), timeout=timeout
        )
    kube.forget_discovery()
    return names


def _discovered(kube: Kube, crd: Obj) -> bool:
    """Every served version of ``crd`` lists its plural in discovery (``GET /apis/<group>/<version>``)."""
    spec = crd["spec"]
    for version in (v["name"] for v in spec["versions"] if v.get("served", True)):
        try:
            served = kube.request("GET", f"/apis/{spec['group']}/{version}")
        except ApiError as err:
            if err.status == 404:
                return False
            raise
        if spec["names"]["plural"] not in {r["name"] for r in served.get("resources", [])}:
            return False
    return True


def _established(kube: Kube, name: str) -> bool:
    crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install_crds(kube: Kube, *, controllers: bool = False, shared: Path = SHARED_CRDS) -> CrdReport:
    """Install GKE's CRDs and, with ``controllers``, the controllers'; the report says what was skipped."""
    skipped: list[str] = []
    wanted = gke_crds(shared, skipped) + (controller_crds(shared, skipped) if controllers else [])
    sources = {str(crd["metadata"]["name"]): origin for origin, crd in wanted}
    return CrdReport(install(kube, wanted), skipped, sources)
