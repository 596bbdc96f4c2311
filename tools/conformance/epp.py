"""The endpoint picker's containers: their flags and configuration file against the EPP release the image is."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml

from tpu_serving_tools.conformance.table import Table, load
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.result import Finding

EPP_TAG = "v0.10.0"
CONTROLLER_RUNTIME_TAG = "v0.23.3"
"""The llm-d/llm-d-router release the table describes, and the controller-runtime its go.mod requires (l.58), whose
zap flags it adds."""
EPP_IMAGE = f"ghcr.io/llm-d/llm-d-router-endpoint-picker:{EPP_TAG}"
"""The release's image: ``IMAGE_REGISTRY ?= ghcr.io/llm-d`` and ``EPP_IMAGE_NAME ?= llm-d-router-endpoint-picker``
(llm-d/llm-d-router@v0.10.0 Makefile l.21, l.26), tagged with the git tag on release
(.github/workflows/ci-release.yaml l.29, l.37-39)."""
EPP_PATH = EPP_IMAGE.removeprefix("ghcr.io")
"""The release's image path and tag, as a mirror of ghcr.io serves it too: an Artifact Registry remote repository keeps
the upstream's path (``<location>-docker.pkg.dev/<project>/<repository>/llm-d/...``, tpu_serving.platform.image_mirror)."""


def is_release_image(image: str) -> bool:
    """Whether ``image`` is the tabled release: from ghcr.io or a mirror of it, with or without a digest."""
    return image.split("@", 1)[0].endswith(EPP_PATH)


PICKER_IMAGES: Sequence[str] = ("/llm-d-router-endpoint-picker:", "/gateway-api-inference-extension/epp:")
"""What marks an endpoint picker image: llm-d-router's, and gateway-api-inference-extension's of the releases
before the EPP moved (v1.5.0 and earlier), which is not the tabled release and fails as such."""


def _flag_values(args: Sequence[str]) -> dict[str, str]:
    """``--name`` -> value of ``--name=value`` and ``--name value`` arguments (``""`` for a bare flag)."""
    out: dict[str, str] = {}
    for i, arg in enumerate(args):
        if not arg.startswith("--"):
            continue
        name, eq, value = arg.partition("=")
        follows = i + 1 < len(args) and not args[i + 1].startswith("--")
        out[name] = value if eq else (args[i + 1] if follows else "")
    return out


def _config_text(
    ns: str, pod: Mapping[str, Any], c: Mapping[str, Any], given: Mapping[str, str], view: PlanView
) -> str | None:
    """The configuration the picker reads: ``--config-text``, or the ``--config-file`` as the ConfigMap volume
    mounted over its directory holds it (``""``: no ConfigMap of the plan holds it; None: neither flag, so the
    release's default configuration)."""
    if "--config-text" in given:
        return given["--config-text"]
    path = given.get("--config-file")
    if not path:
        return None
    folder, _, key = path.rpartition("/")
    volume = next((m["name"] for m in c.get("volumeMounts") or () if m["mountPath"].rstrip("/") == folder), None)
    source = next((v.get("configMap") or {} for v in pod.get("volumes") or () if v["name"] == volume), {})
    for cm in view.kubernetes_objects("ConfigMap"):
        meta = cm["metadata"]
        if meta["name"] == source.get("name") and meta.get("namespace", "default") == ns:
            return str((cm.get("data") or {}).get(key, ""))
    return ""


def config_problems(text: str, table: Table, given: Mapping[str, str]) -> list[str]:
    """What the release would refuse, or has deprecated, in an EndpointPickerConfig."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"config: not YAML ({e})"]
    if not isinstance(doc, dict):
        return ["config: not an EndpointPickerConfig (empty, or not a mapping)"]
    out = []
    api = doc.get("apiVersion")
    if api == table.facts["apiVersion deprecated"]:
        out.append(f"config apiVersion {api}: deprecated in the EPP {table.version}, use {table.facts['apiVersion']}")
    elif api != table.facts["apiVersion"]:
        out.append(f"config apiVersion {api}: not {table.facts['apiVersion']}")
    if doc.get("kind") != table.facts["kind"]:
        out.append(f"config kind {doc.get('kind')}: not {table.facts['kind']}")
    out += [f"config key {k}: no such key in the EPP {table.version}" for k in doc if k not in table.config_keys]
    types = [str(p.get("type")) for p in doc.get("plugins") or () if isinstance(p, dict)]
    out += [
        f"plugin type {t}: not registered in the EPP {table.version}"
        for t in types
        if t not in table.choices["plugins.type"]
    ]
    if "--allow-experimental-plugins" not in given:
        alpha = table.choices["plugins.type alpha"]
        out += [f"plugin type {t}: alpha, refused without --allow-experimental-plugins" for t in types if t in alpha]
    return out


def _pickers(view: PlanView) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any], Mapping[str, Any]]]:
    """(Deployment, its pod spec, container) of every endpoint picker container."""
    for dep in view.kubernetes_objects("Deployment"):
        pod = dep["spec"]["template"]["spec"]
        for c in pod.get("containers") or ():
            if any(mark in str(c.get("image", "")) for mark in PICKER_IMAGES):
                yield dep, pod, c


def findings(view: PlanView) -> list[Finding]:
    """Per EPP container of the plan's Deployments: the image is the tabled release, every flag exists in it and is
    not one it refuses, and its configuration is the release's current format with registered plugin types."""
    table = load(f"epp-{EPP_TAG}")
    out = []
    for dep, pod, c in _pickers(view):
        problems = (
            [] if is_release_image(str(c["image"])) else [f"image {c['image']} is not {EPP_IMAGE}, the tabled release"]
        )
        args = [str(a) for a in c.get("args") or ()]
        given = _flag_values(args)
        problems += [f"{f}: no such flag in the EPP {EPP_TAG}" for f in given if f not in table.flags]
        problems += [
            f"{f}: refused by the EPP {EPP_TAG} when set" for f in given if f in table.choices["rejected flags"]
        ]
        text = _config_text(dep["metadata"].get("namespace", "default"), pod, c, given, view)
        if text == "":
            problems.append(f"config file {given.get('--config-file')}: no mounted ConfigMap of the plan holds it")
        elif text is not None:
            problems += config_problems(text, table, given)
        subject = f"engine {qualified_name(dep)} {c['name']}"
        reason = f"{len(given)} flags, each the EPP's; its configuration the {EPP_TAG} format"
        out.append(Finding(subject, not problems, "; ".join(problems) or reason))
    return out
