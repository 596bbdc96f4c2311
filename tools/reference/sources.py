"""The reference files the tests and tools read from ``../shared/reference``: where each comes from and its sha256.

The files themselves stay out of the repository (they are upstream's, or the seeds' manifests); this module records
the facts about them, so that ``make reference`` (:mod:`tpu_serving_tools.reference.fetch`) can fetch a missing file and
refuse one whose bytes differ from the copy the tests were written against.

Each :class:`Fetched` file names its upstream (GitHub repository, tag or commit, path: the raw URL) and, when that
repository is a Go module the Go module proxy serves, the module path, version and path inside the module zip
(``<proxy>/<module>/@v/<version>.zip``, https://go.dev/ref/mod#goproxy-protocol). The sources are those of the
reference folders' ``SOURCES.txt`` (``crds/``, ``upstream/``); the checksums were computed from those files
(``sha256sum``, 2026-11-29). The module routes were checked then: the module zips of sigs.k8s.io/jobset v0.2.3,
v0.10.1 and v0.12.0, sigs.k8s.io/lws v0.4.0, sigs.k8s.io/gateway-api v1.3.0,
sigs.k8s.io/gateway-api-inference-extension v1.6.0 and github.com/GoogleCloudPlatform/prometheus-engine v0.17.2 hold
byte-identical files at the paths below; proxy.golang.org answered 403 ("This module version is not available.")
for ``sigs.k8s.io/lws/@v/v0.10.0.zip``, so those files come from their GitHub URL while it does (the module is
still named, for a proxy that serves it). google/pathways-job is no module the proxy serves: its go.mod says
``module pathways-job`` (tools/e2e/toolchain.py, ``NOT_BUILT``). vllm-project/tpu-inference is a Python project and
datreeio/CRDs-catalog no Go module.

The :class:`Unpublished` files, the seeds' manifests, are the YAML of the Google Cloud guides the project started
from, re-indented with the seeds' facts as comments: no upstream publishes them as files, so they are copied from
the project's reference repository (the one CI checks out beside the checkout: the GitHub repository its Actions
variable ``TPU_SERVING_REFERENCE_REPOSITORY`` names, set in the GitHub project's settings, not in the environment).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REFERENCE_ENV = "TPU_SERVING_REFERENCE"
"""The environment variable that overrides where the reference folder is (``make ... REFERENCE_DIR=<dir>`` sets it)."""


def reference_dir(root: Path | None = None) -> Path:
    """The reference folder: ``$TPU_SERVING_REFERENCE``, else ``shared/reference`` beside ``root`` (the checkout;
    by default the working directory, as make runs the tools) when a ``shared`` folder is there, else ``.reference``
    inside the checkout (git ignores it): a fork or bare clone's ``make reference`` writes nothing outside it, where
    ``../shared`` would be every sibling checkout's (new-user review 10, m10)."""
    override = os.environ.get(REFERENCE_ENV)
    if override:
        return Path(override)
    checkout = root or Path.cwd()
    beside = checkout.parent / "shared"
    return beside / "reference" if beside.is_dir() else checkout / ".reference"


@dataclass(frozen=True)
class GoModule:
    """Where a file is inside a Go module's zip: ``<module>@<version>/<file>``."""

    module: str
    version: str
    file: str


@dataclass(frozen=True)
class Fetched:
    """A reference file with an upstream: ``name`` under the reference folder, from ``repository`` at ``ref``."""

    name: str
    sha256: str
    repository: str
    ref: str
    path: str
    module: GoModule | None
    read_by: tuple[str, ...] = ()
    """The tests and tools that read it (empty: kept to be read by people, cited by source comments)."""

    @property
    def url(self) -> str:
        return f"https://raw.githubusercontent.com/{self.repository}/{self.ref}/{self.path}"


@dataclass(frozen=True)
class Unpublished:
    """A reference file no upstream publishes as a file (a seed's manifest): ``origin`` says where it came from."""

    name: str
    sha256: str
    origin: str
    read_by: tuple[str, ...]


def _upstream(name: str, sha256: str, source: tuple[str, str, str, str], read_by: tuple[str, ...] = ()) -> Fetched:
    """A :class:`Fetched` from ``(repository, Go module or "", tag or commit, path)``."""
    repository, module, ref, path = source
    return Fetched(name, sha256, repository, ref, path, GoModule(module, ref, path) if module else None, read_by)


LWS, JOBSET = "kubernetes-sigs/lws", "kubernetes-sigs/jobset"
GATEWAY, INFERENCE = "kubernetes-sigs/gateway-api", "kubernetes-sigs/gateway-api-inference-extension"
GMP, PATHWAYS_JOB = "GoogleCloudPlatform/prometheus-engine", "google/pathways-job"
CATALOG, TPU_INFERENCE = "datreeio/CRDs-catalog", "vllm-project/tpu-inference"
CATALOG_COMMIT = "7b1e26ef"
"""datreeio/CRDs-catalog's commit in crds/SOURCES.txt (abbreviated there; GitHub resolves an abbreviated commit)."""

_SCHEMA = ("tools/reference/schema.py", "tests/tools/verify/test_verify_main.py")
"""Every ``*-crd.yaml``: the objects' schema validation (tools/reference/schema.py ``CRD_FILES``) and the served-version test."""
_LWS_CRD = "config/crd/bases/leaderworkerset.x-k8s.io_leaderworkersets.yaml"
_JOBSET_CRD = "config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
_DS_CRDS = "config/crd/bases/disaggregatedset.x-k8s.io_"
_GATEWAY_CRDS = "config/crd/standard/gateway.networking.k8s.io_"

CRDS: tuple[Fetched, ...] = (
    _upstream(
        "crds/lws-v0.4.0-leaderworkersets-crd.yaml",
        "7f70cfa306d4ee46bea57d3caae987d0dca75d0b31f0967e13031cb56afdf24d",
        (LWS, "sigs.k8s.io/lws", "v0.4.0", _LWS_CRD),
        _SCHEMA,
    ),
    _upstream(
        "crds/lws-v0.10.0-leaderworkersets-crd.yaml",
        "c5dcad8ed943e495490241f00b9a1b45d51203b6d484020db3636d5bf553568e",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", _LWS_CRD),
        (*_SCHEMA, "tools/e2e/crds.py"),
    ),
    _upstream(
        "crds/lws-v0.10.0-disaggregatedsets-crd.yaml",
        "6dc06e630cc88c28ba5406dc4a15ac593f4ec1af89ef439e1bdb770d4a7e74a8",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", _DS_CRDS + "disaggregatedsets.yaml"),
        (*_SCHEMA, "tools/e2e/crds.py"),
    ),
    _upstream(
        "crds/lws-v0.10.0-disaggregatedsetrolescalers-crd.yaml",
        "3650e4cd42d12e14569ec8042d0c797c803e05eff9a3959b3406184d39cfef9f",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", _DS_CRDS + "disaggregatedsetrolescalers.yaml"),
        (*_SCHEMA, "tools/e2e/crds.py"),
    ),
    _upstream(
        "crds/jobset-v0.2.3-jobsets-crd.yaml",
        "4ef8e64b93bd9908ee24fbef3dd18d7bbfd6518e6e4bcb71131390979f10a149",
        (JOBSET, "sigs.k8s.io/jobset", "v0.2.3", _JOBSET_CRD),
        _SCHEMA,
    ),
    _upstream(
        "crds/jobset-v0.10.1-jobsets-crd.yaml",
        "dd2d5dbb3186ea36f6815b19d9bc18c0f59ce50e28348d11d2a0888e0b5d0f16",
        (JOBSET, "sigs.k8s.io/jobset", "v0.10.1", _JOBSET_CRD),
        _SCHEMA,
    ),
    _upstream(
        "crds/jobset-v0.12.0-jobsets-crd.yaml",
        "d022b87624512cf0b6741b31b24a2bea9945b5a838b50713af29332c878bb6fe",
        (JOBSET, "sigs.k8s.io/jobset", "v0.12.0", _JOBSET_CRD),
        _SCHEMA,
    ),
    _upstream(
        "crds/pathwaysjob-v0.1.4-crd.yaml",
        "bb223015f2ec178cdb01cd4baebe50d6f2013f945aa7816f93d926b6d4ab5d02",
        (PATHWAYS_JOB, "", "v0.1.4", "config/crd/bases/pathways-job.pathways.domain_pathwaysjobs.yaml"),
        (*_SCHEMA, "tests/components/backends/test_pathways_job.py", "tools/e2e/crds.py"),
    ),
    _upstream(
        "crds/pathwaysjob-v0.1.4-install.yaml",
        "0583f9387c8fc564695c11761fa87148c12c5be210b33ef9e1f231e008f34bf5",
        (PATHWAYS_JOB, "", "v0.1.4", "release/install.yaml"),
        ("tools/e2e/run.py",),
    ),
    _upstream(
        "crds/gmp-v0.17.2-podmonitorings-crd.yaml",
        "d344029bc7754e0254d7c253db9d6400b344d5837e121b42790946757bc79f1f",
        (
            GMP,
            "github.com/GoogleCloudPlatform/prometheus-engine",
            "v0.17.2",
            "charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml",
        ),
        _SCHEMA,
    ),
    _upstream(
        "crds/inference-extension-v1.6.0-inferencepools-crd.yaml",
        "55e0dbf39c50c4bbdd60106493a4573df4bb44479f9ce46762f1af718883e5cd",
        (
            INFERENCE,
            "sigs.k8s.io/gateway-api-inference-extension",
            "v1.6.0",
            "config/crd/bases/inference.networking.k8s.io_inferencepools.yaml",
        ),
        (*_SCHEMA, "tests/components/catalog/test_versions.py"),
    ),
    _upstream(
        "crds/gateway-api-v1.3.0-gatewayclasses-crd.yaml",
        "7c8ee2c1878d9dcc6ba106181e3d14d7eaa520ec070233d62f3aa0d674d19450",
        (GATEWAY, "sigs.k8s.io/gateway-api", "v1.3.0", _GATEWAY_CRDS + "gatewayclasses.yaml"),
        _SCHEMA,
    ),
    _upstream(
        "crds/gateway-api-v1.3.0-gateways-crd.yaml",
        "c949e7c3951227b92a582817a7a660558ce0fb94c081da264b4e2bbe4a1e5387",
        (GATEWAY, "sigs.k8s.io/gateway-api", "v1.3.0", _GATEWAY_CRDS + "gateways.yaml"),
        _SCHEMA,
    ),
    _upstream(
        "crds/gateway-api-v1.3.0-httproutes-crd.yaml",
        "a4ecf600c7e0bfd3cdb24e6411938d9b330117a26675f303cc6d9a407cb257d1",
        (GATEWAY, "sigs.k8s.io/gateway-api", "v1.3.0", _GATEWAY_CRDS + "httproutes.yaml"),
        _SCHEMA,
    ),
    _upstream(
        "crds/gke-computeclass-v1.schema.json",
        "8f8aa0f0b68ce40059deab247089440eafc6e475f1edc1b1dfec30e27cd2c632",
        (CATALOG, "", CATALOG_COMMIT, "cloud.google.com/computeclass_v1.json"),
        ("tools/e2e/crds.py", "tests/e2e/test_e2e_nodes.py"),
    ),
    _upstream(
        "crds/gke-networking-gcpbackendpolicy-v1.schema.json",
        "4bb2e81acc26055b2a55472940a30c09f32dbf065a6174fa7e71ff9bd20f4ba0",
        (CATALOG, "", CATALOG_COMMIT, "networking.gke.io/gcpbackendpolicy_v1.json"),
        ("tools/e2e/crds.py", "tests/components/traffic/test_gateway.py"),
    ),
    _upstream(
        "crds/gke-networking-healthcheckpolicy-v1.schema.json",
        "a78437ed95d100b202896c8fdd4bac80f5bcd3282d876fcbce39dc0a68cbc6ed",
        (CATALOG, "", CATALOG_COMMIT, "networking.gke.io/healthcheckpolicy_v1.json"),
        ("tools/e2e/crds.py",),
    ),
)
"""``crds/``: the upstream CRDs (and GKE's CRDs' JSON schemas) the objects are validated against."""

UPSTREAM: tuple[Fetched, ...] = (
    _upstream(
        "upstream/lws-v0.10.0-vllm-tpu-example.yaml",
        "5a5e9994675bd9a0699e70b0ba75cbdad8566bb53865045255da8f766a85a057",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", "docs/examples/vllm/TPU/lws.yaml"),
        ("tests/components/backends/test_vllm.py",),
    ),
    _upstream(
        "upstream/lws-v0.10.0-leaderworkerset_webhook.go",
        "eff5bde8a5f8a5dfff7692e709dd50d87caadbb8a8a479427aba3a9541f1a911",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", "pkg/webhooks/leaderworkerset_webhook.go"),
    ),
    _upstream(
        "upstream/lws-v0.10.0/controller_utils.go",
        "fa4db6c8681896c4067a5ecd5033a0d9b4018781f2afded71f827e0266181af0",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", "pkg/utils/controller/controller_utils.go"),
    ),
    _upstream(
        "upstream/lws-v0.10.0/disaggregatedset_v1_disaggregatedset.yaml",
        "d5a90a3f61fcb1d1fadee36eb2f6e292385dddfe8d94acada643a646fc4b3d1e",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", "config/samples/disaggregatedset_v1_disaggregatedset.yaml"),
    ),
    _upstream(
        "upstream/lws-v0.10.0/disaggregatedset_v1_3role.yaml",
        "7a881108167897e5fe775100370448014b48582f35fd469aa40ccd2540b2f3c3",
        (LWS, "sigs.k8s.io/lws", "v0.10.0", "config/samples/disaggregatedset_v1_3role.yaml"),
    ),
    _upstream(
        "upstream/tpu-inference-v0.27.0-multihost-deploy-baseline.yaml",
        "c151a1b8457bc1405b685c06e7f471f4d8c1e5a041abddcbc658dc2cc9afcc72",
        (TPU_INFERENCE, "", "v0.27.0", "examples/offload/gke/benchmarks/multi-host/deploy-baseline.yaml"),
    ),
    _upstream(
        "upstream/tpu-inference-v0.27.0-multihost-service.yaml",
        "5e7ac5e80fd0e6b300a976e5156d645670232845e4ca5a429c1ba61725db33c4",
        (TPU_INFERENCE, "", "v0.27.0", "examples/offload/gke/benchmarks/multi-host/service.yaml"),
    ),
    _upstream(
        "upstream/pathways-job-v0.1.4-pathwaysjob_controller.go",
        "e81646636c3510cc1e99dff0c4882b8286d736703b01a53c908ae4cbb0d320e4",
        (PATHWAYS_JOB, "", "v0.1.4", "internal/controller/pathwaysjob_controller.go"),
    ),
)
"""``upstream/``: upstream files some tests compare with, and those the source comments cite."""

WITHOUT_SEEDS_ENV = "TPU_SERVING_WITHOUT_SEEDS"
"""Set to 1 (``WITHOUT_SEEDS=1`` on a make command line) by a checkout that cannot have the seeds' manifests, a fork:
``make reference`` and ``make reference-check`` then do not require them, and the tests that read them are skipped,
each saying so. The project's CI sets it only for a fork's code without the reference repository (ci.yml)."""

_GUIDES = (
    "the project's reference repository (the GitHub repository CI's Actions variable TPU_SERVING_REFERENCE_REPOSITORY "
    "names: docs/development.md, Reference schemas), reformatted from "
)
SEEDS: tuple[Unpublished, ...] = (
    Unpublished(
        "seed-manifests/jetstream-pathways-llama31-405b-v6e16.yaml",
        "36e15999639373105b0ed2dfd79b211e36e2df8470bdee552ad66a0bc1c14d5a",
        _GUIDES + "seed 001 (JetStream batch inference with Pathways on a v6e-16 slice: "
        "https://cloud.google.com/ai-hypercomputer/docs/workloads/pathways-on-cloud/multihost-inference)",
        ("tests/components/backends/test_jetstream.py",),
    ),
    Unpublished(
        "seed-manifests/jetstream-pathways-disagg-llama2-70b-2xv6e8.yaml",
        "25de79f860928d1b1b669b9830d4ad0a19bf8ba4c3634ae12ab0d70906529214",
        _GUIDES + "seed 001 (disaggregated JetStream inference with Pathways on two v6e-8 slices)",
        ("tests/components/backends/test_jetstream.py",),
    ),
    Unpublished(
        "seed-manifests/saxml-lmcloudspmd175b-2xv5e-4x8.yaml",
        "ba7c958e4b185896d11d1b62a334ca818181883a2330112d35df9041687d07f7",
        _GUIDES + "seed 002 (Saxml with multi-host TPU v5e: "
        "https://cloud.google.com/kubernetes-engine/docs/tutorials/tpu-multihost-saxml)",
        ("tests/components/backends/test_saxml.py",),
    ),
    Unpublished(
        "seed-manifests/pathwaysjob-and-components.yaml",
        "5309b23fa55685700d256774112ed40be4c8d6cfb517663bd2dacf26f273ed30",
        _GUIDES + "seed 003 (Pathways on GKE: the PathwaysJob API and each Pathways component's container)",
        ("tools/conformance/extract_pathways.py",),
    ),
)
"""``seed-manifests/``: the seeds' manifests the conformance tests compare the rendered workloads with."""

PROXY_REFUSED = frozenset({("sigs.k8s.io/lws", "v0.10.0")})
"""(module, version) the Go module proxy does not serve: ``https://proxy.golang.org/sigs.k8s.io/lws/@v/v0.10.0.zip``
answered 403 "This module version is not available." (2026-11-29; tools/e2e/crds.py saw the same). Its files are
fetched from GitHub; the proxy is still asked first, should it serve the version later."""

SOURCES: tuple[Fetched | Unpublished, ...] = (*CRDS, *UPSTREAM, *SEEDS)
"""Every reference file, by its path under the reference folder."""
