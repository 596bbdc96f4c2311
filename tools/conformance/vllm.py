"""vLLM TPU containers: their ``vllm serve`` flags, Ray bootstrap flags and environment, against the image's release."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving.backends.vllm.facts import UNVERIFIED_ENGINE
from tpu_serving_tools.conformance.table import TABLES, Table, load
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.result import Finding


@dataclass(frozen=True)
class Pins:
    """What the vLLM TPU image of a tag carries, and where that is written."""

    image: str
    vllm_tpu: str
    tpu_inference: str
    ray: str
    source: str


PINS = Pins(
    image="vllm/vllm-tpu:v0.29.0",
    vllm_tpu="0.29.0",
    tpu_inference="0.29.0",
    ray="2.60.0",
    source=(
        "the image is vLLM TPU's release v0.29.0 (tag = the vllm-tpu wheel's version; the tag is referenced by "
        "AI-Hypercomputer/tpu-recipes inference/ironwood/vLLM/Qwen3-32B/llm-d/README.md @88193151, not read from a "
        "registry); PyPI vllm_tpu-0.29.0 METADATA: Requires-Dist tpu-inference==0.29.0, nixl==0.3.0 and "
        "ray[default] without a version, so the image's Ray is whatever pip resolved when the image was built, "
        "which no public source states (no Dockerfile in the wheels, no v0.29.0 tag in the tpu-inference mirror). "
        "The table stays Ray 2.60.0, the newest on PyPI when extracted (2026-11-23); Ray 2.58.0, the newest on "
        "PyPI when the wheel was uploaded (2026-09-10), names every RAY_* variable the pods set as well (checked "
        "2026-11-25), but reads two variables 2.60.0 does not (RAY_DATA_EAGER_FREE, "
        "RAY_SERVE_HAPROXY_TIMEOUT_CONNECT_S): a RAY_* name outside the table is refused even if the image's "
        "Ray reads it"
    ),
)
"""The release chain of the vLLM TPU image the model checks against (tables/*-<version>.json)."""

ENGINE_CONTAINERS = frozenset({"vllm-leader", "vllm-worker"})
"""The vLLM containers the library builds (tpu_serving.backends.vllm.pods)."""

RAY_BOOTSTRAP_FLAGS = frozenset({"--ray_port", "--ray_cluster_size", "--ray_address", "--ray_init_timeout"})
"""Flags of vLLM's ``multi-node-serving.sh`` (``leader`` and ``worker``): vllm-project/vllm
examples/online_serving/multi-node-serving.sh (the ``case "$1"`` arms of both subcommands); others are
passed on to ``ray start``."""

OTHER_ENV: Mapping[str, str] = {
    "HF_HUB_OFFLINE": "huggingface_hub reads it (src/huggingface_hub/constants.py; docs: package_reference/environment_variables)",
    "HF_TOKEN": "huggingface_hub reads it (src/huggingface_hub/constants.py; docs: package_reference/environment_variables)",
    "LWS_GROUP_INDEX": (
        "not read by a program: the kubelet expands $(LWS_GROUP_INDEX) in later variables of the container "
        "(kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables)"
    ),
    "NODE_NAME": (
        "not read by a program: the kubelet expands $(NODE_NAME) in later variables of the container "
        "(kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables)"
    ),
}
"""Variables of vLLM containers read by something other than vLLM, tpu-inference or Ray, with the reader."""


@dataclass(frozen=True)
class Tables:
    vllm: Table
    tpu_inference: Table
    ray: Table


def tables() -> Tables:
    return Tables(load(f"vllm-{PINS.vllm_tpu}"), load(f"tpu-inference-{PINS.tpu_inference}"), load(f"ray-{PINS.ray}"))


def _templates(view: PlanView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(name, LeaderWorkerSet spec) of the plan's LeaderWorkerSets and of each DisaggregatedSet role (an inline
    LeaderWorkerSet spec, kubernetes-sigs/lws@v0.10.0 api/disaggregatedset/v1/disaggregatedset_types.go l.46-94)."""
    for lws in view.kubernetes_objects("LeaderWorkerSet"):  # namespaced: two default-named ones are two (review 4, m4)
        yield qualified_name(lws), lws["spec"]
    for ds in view.kubernetes_objects("DisaggregatedSet"):
        for role in ds["spec"].get("roles") or ():
            yield f"{qualified_name(ds)}/{role['name']}", role.get("spec") or {}


def _containers(view: PlanView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(label, container) of every vLLM TPU container in the plan's LeaderWorkerSets and DisaggregatedSet roles."""
    for name, spec in _templates(view):
        template = spec["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            for c in (template.get(role) or {}).get("spec", {}).get("containers", ()):
                # by the library's container names too: an image of another name (an unverified one) is still
                # checked, not left out of the count (library review 1, M2)
                if "vllm/vllm-tpu:" in str(c.get("image", "")) or c.get("name") in ENGINE_CONTAINERS:
                    yield f"{name} {role[: -len('Template')]} {c['name']}", c


def known_flag(flag: str, flags: frozenset[str]) -> bool:
    """Whether ``vllm serve`` takes ``flag``: a flag of the table, or ``--no-<flag>`` of one. vLLM gives every bool
    engine setting ``argparse.BooleanOptionalAction``, which "Creates --no-<name> and --<name> flags" (vllm-tpu 0.29.0
    vllm/engine/arg_utils.py l.352-354; ``--no-enable-prefix-caching`` is the ``enable_prefix_caching: bool`` of
    vllm/config/cache.py l.139). The table lists the ``--<name>`` only; a ``--no-`` form of a flag that is no bool
    passes too (the table does not hold the flags' types)."""
    return flag in flags or (flag.startswith("--no-") and f"--{flag[len('--no-') :]}" in flags)


def reader(name: str, t: Tables) -> str | None:
    """Which program of the image reads environment variable ``name`` (None: nothing known does)."""
    if name in t.vllm.env:
        return f"vllm {t.vllm.version}"
    if name in t.tpu_inference.env:
        return f"tpu-inference {t.tpu_inference.version}"
    if name.startswith("RAY_") and (name in t.ray.env or name[4:] in t.ray.config_keys):
        return f"ray {t.ray.version}"
    return OTHER_ENV.get(name)


def _serve_flags(script: str) -> tuple[list[str], list[str]]:
    """(``vllm serve`` flags, Ray bootstrap flags) of a container's shell script."""
    serve, bootstrap = [], []
    for part in script.split("&&"):
        words = shlex.split(part.replace("$(", "(").replace(";", " ; "))
        flags = [w.split("=", 1)[0] for w in words if w.startswith("--")]
        if "serve" in words and "vllm" in words:
            serve += flags
        elif any(w in ("leader", "worker") for w in words):
            bootstrap += flags
    return serve, bootstrap


def kv_connector_problems(script: str, t: Tables) -> list[str]:
    """The ``kv_connector`` of each ``--kv-transfer-config=<json>`` in ``script`` that the pinned tpu-inference does
    not start: one whose ``__init__`` skips ``KVConnectorBase_V1``'s (tpu-inference 0.27.0 to 0.29.0
    ``TPUConnectorHMA``: EngineCore fails at start; tpu-inference issue 3468, PR 3566), or one the table does not
    know (the table's ``connector <class>`` facts, read from the wheel by extract_vllm.connector_inits)."""
    problems = []
    for word in shlex.split(script.replace("$(", "(")):
        if not word.startswith("--kv-transfer-config="):
            continue
        name = str(json.loads(word.split("=", 1)[1]).get("kv_connector", ""))
        fact = t.tpu_inference.facts.get(f"connector {name}", "")
        if not fact.startswith("base initialized"):
            why = fact or "no such connector in the table's files"
            problems.append(f"--kv-transfer-config kv_connector {name}: does not start in tpu-inference "
                            f"{t.tpu_inference.version} ({why})")  # fmt: skip
    return problems


def unverified_images(view: PlanView) -> frozenset[str]:
    """The images a serving component registered as run unverified (its ``engine`` output:
    :func:`tpu_serving.backends.vllm.facts.unverified_engine`, ``images.unverified_vllm``)."""
    found = set()
    for r in view.resources:
        text = (r.get("registeredOutputs") or {}).get("engine")
        if isinstance(text, str) and text.startswith(UNVERIFIED_ENGINE):
            found.add(text.split(": ", 1)[1].split(" ", 1)[0])
    return frozenset(found)


def release_of(image: str) -> str | None:
    """The vLLM TPU release an image's tag names (``...:v0.21.0`` -> ``0.21.0``), or None."""
    m = re.search(r":v?(\d+\.\d+\.\d+)(?:@|$)", image)
    return m.group(1) if m else None


def release_differences(image: str, serve: Sequence[str]) -> tuple[list[str], str]:
    """For an unverified image: the ``vllm serve`` flags the pods pass that its own release's table lacks (problems),
    and what was checked (a note): the tables know few releases, and for another the differences are unknown."""
    release = release_of(image)
    known = sorted(p.stem.removeprefix("vllm-") for p in TABLES.glob("vllm-*.json"))
    if release is None or release not in known:
        return [], (
            f"image {image} unverified (images.unverifiedVllm): no conformance table for its release "
            f"({release or 'no release tag'}; tables: {', '.join(known)}), so its differences from "
            f"{PINS.vllm_tpu} are unknown; checked against {PINS.image}'s"
        )
    table = load(f"vllm-{release}")
    lacking = [f"vllm serve {f}: no such flag in vllm {release}, the unverified image's" for f in serve
               if not known_flag(f, table.flags)]  # fmt: skip
    return lacking, f"image {image} unverified (images.unverifiedVllm): its release {release}'s table checked too"


def findings(view: PlanView) -> list[Finding]:
    """Per vLLM container: its image is the pinned release (or one the program runs unverified, checked against
    its own release's table where there is one), and every flag and variable it sets is read."""
    t = tables()
    unverified = unverified_images(view)
    out = []
    for label, c in _containers(view):
        subject = f"engine {label}"
        problems: list[str] = []
        notes: list[str] = []
        tag = str(c["image"]).rsplit("/", 2)[-2:]
        script = " ".join(str(x) for x in [*(c.get("command") or [])[2:], *(c.get("args") or [])])
        if "/".join(tag) != PINS.image and c["image"] in unverified:
            lacking, note = release_differences(str(c["image"]), _serve_flags(script)[0])
            problems += lacking
            notes.append(note)
        elif "/".join(tag) != PINS.image:
            problems.append(f"image {c['image']} is not {PINS.image}, the release the tables describe")
        for e in c.get("env") or ():
            if reader(str(e["name"]), t) is None:
                problems.append(f"env {e['name']}: read by nothing in vllm, tpu-inference or ray of {PINS.image}")
        serve, bootstrap = _serve_flags(script)
        problems += [
            f"vllm serve {f}: no such flag in vllm {t.vllm.version}" for f in serve if not known_flag(f, t.vllm.flags)
        ]
        problems += [f"{f}: not a flag of multi-node-serving.sh" for f in bootstrap if f not in RAY_BOOTSTRAP_FLAGS]
        problems += kv_connector_problems(script, t)
        n = len(c.get("env") or ()) + len(serve) + len(bootstrap)
        read = "; ".join([*notes, f"{n} flags and variables, each read by the image"])
        out.append(Finding(subject, not problems, "; ".join(problems) or read))
    return out


def engine_lines(view: PlanView) -> list[str]:
    """The preview's ``Engine:`` lines: each serving that runs an engine image unverified, what its flags were built
    and checked for, and what the tables know of its own release's differences (new-user review, issue point 3)."""
    lines = []
    for r in view.resources:
        text = (r.get("registeredOutputs") or {}).get("engine")
        if isinstance(text, str) and text.startswith(UNVERIFIED_ENGINE):
            lines.append(f"Engine: {text}")
    said: set[str] = set()
    unverified = unverified_images(view)
    for _, c in _containers(view):
        image = str(c["image"])
        if image in said or image not in unverified:
            continue
        said.add(image)
        script = " ".join(str(x) for x in [*(c.get("command") or [])[2:], *(c.get("args") or [])])
        lacking, note = release_differences(image, _serve_flags(script)[0])
        lines += [f"  {note}", *(f"  {x}" for x in lacking)]
    return lines
