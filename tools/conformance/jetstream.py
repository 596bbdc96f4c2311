"""JetStream + Pathways LeaderWorkerSets: MaxText's settings in ``jax-tpu`` and the Pathways containers' flags and
environment, against the tables of the releases the images carry (tables/maxtext-*, tables/pathways-*).

What the slices are comes from the pods as the runtime model places them (their nodeSelector and the node pool they
land on, tools/runtime), never from the library: MaxText's disaggregated servers and the Pathways resource manager's
``--instance_type`` must describe those slices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tpu_serving_tools.conformance.table import Table, load
from tpu_serving_tools.runtime import facts as F
from tpu_serving_tools.runtime.machine_facts import TPU_MACHINES
from tpu_serving_tools.runtime.planview import PlanView, qualified_name
from tpu_serving_tools.runtime.pods import Pod, pods_of
from tpu_serving_tools.runtime.result import Finding
from tpu_serving_tools.runtime.scheduling import landing_pools, node_pools

MAXTEXT_IMAGES: Mapping[str, str] = {"jetstream-pathways:v0.2.0": "maxtext-jetstream-pathways-v0.2.0"}
"""Image (name:tag, us-docker.pkg.dev/cloud-tpu-images/inference/) -> the table of the MaxText it runs."""
PATHWAYS_RELEASE = "v0.1.4"
"""The PathwaysJob controller release whose flags are the Pathways tables (the stacks install it)."""
PATHWAYS_IMAGES = (
    "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:",
    "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server:",
)
"""The Pathways images (google/pathways-job v0.1.4 internal/controller/pathwaysjob_controller.go
DefaultPathwaysRMAndWorkerImage, DefaultPathwaysProxyImage)."""
CONTAINER_TABLES: Mapping[str, str] = {
    "pathways-rm": "pathways-rm",
    "pathways-proxy": "pathways-proxy",
    "worker": "pathways-worker",
}
"""Container name in the LWS (as in the seeds' manifests) -> the Pathways table for it."""

CONFIG_FILE = "config_file"
"""The table's choice of config files: MaxText reads its config file from the first argument
(MaxText/maxengine_server.py ``main(argv)`` -> ``pyconfig.initialize(argv)``, argv[1])."""

GENERATIONS: Mapping[str, str] = {"tpu-v5-lite-podslice": "v5e", "tpu-v6e-slice": "v6e", "tpu-v5p-slice": "v5p"}
"""GKE accelerator label -> TPU generation (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus,
"TPU versions"); MaxText names slices ``<generation>-<chips>`` (maxengine_config.py ``prefill_slices``)."""

OTHER_ENV: Mapping[str, str] = {
    "LOG_LEVEL": "read by JetStream's server in the jetstream-pathways image (the seeds set it on jax-tpu)",
}
"""Variables of ``jax-tpu`` read by something other than MaxText's config."""


@dataclass(frozen=True)
class Slices:
    """The TPU slices one LWS group's workers make, as the runtime model places them."""

    machine_type: str
    generation: str
    topology: str
    chips: int
    count: int

    @property
    def maxtext_name(self) -> str:
        return f"{self.generation}-{self.chips}"


def parses(value: str, kind: str) -> bool:
    """Whether MaxText's command line accepts ``value`` for a key whose default has type ``kind``
    (pyconfig.py ``_yaml_types_to_parser``: str, int(), float(), ``string_to_bool`` = true/false, any case)."""
    if kind == "str":
        return True
    if kind == "bool":
        return value.lower() in ("true", "false")
    try:
        {"int": int, "float": float}[kind](value)
    except (KeyError, ValueError):
        return False
    return True


def maxtext_problems(args: Sequence[str], table: Table, slices: Slices | None) -> list[str]:
    """What MaxText refuses, or runs on slices it was not written for, in the ``jax-tpu`` arguments."""
    if not args or args[0] not in table.choices.get(CONFIG_FILE, ()):
        return [f"first argument {args[0] if args else None!r}: not a config file of MaxText {table.version}"]
    out = []
    for arg in args[1:]:
        key, sep, value = arg.partition("=")
        if not sep:
            out.append(f"{arg!r}: not key=value")
        elif key not in table.config_keys:
            out.append(f"{key}: not a key of MaxText's base.yml (MaxText refuses it)")
        elif not parses(value, table.types.get(key, "null")):
            out.append(f"{key}={value}: not a {table.types.get(key)} (MaxText parses it by its default's type)")
        elif key in table.choices and value not in table.choices[key]:
            out.append(f"{key}={value}: not one of {', '.join(table.choices[key])}")
        elif key == "inference_server" and (want := table.facts.get(arg)) is not None:
            have = slices.maxtext_name if slices else "no slices"
            if want != have:
                out.append(f"{arg}: runs on two {want} slices, the workers make {have}")
    return out


def pathways_problems(container: Mapping[str, Any], table: Table, slices: Slices | None) -> list[str]:
    """Flags and variables no upstream passes to this Pathways container, and a resource manager whose
    ``--instance_type`` / ``--instance_count`` are not the slices the workers make."""
    args = [str(a) for a in container.get("args") or ()]
    given = dict(a.partition("=")[::2] for a in args if a.startswith("--"))
    out = [f"{f}: no such flag of {table.program} (PathwaysJob {table.version})" for f in given if f not in table.flags]
    out += [
        f"env {e['name']}: not passed to {table.program} by PathwaysJob {table.version} or the seeds"
        for e in container.get("env") or ()
        if e["name"] not in table.env
    ]
    if table.program == "pathways-rm" and slices is not None:
        version = table.facts.get(f"instance_type:{slices.machine_type}")
        want = {"--instance_type": f"{version}:{slices.topology}", "--instance_count": str(slices.count)}
        out += [f"{k}={given.get(k)}: the workers make {v}" for k, v in want.items() if given.get(k) != v]
    return out


def _slices(workers: Sequence[Pod], view: PlanView) -> Slices | None:
    """The slices of one group's TPU workers: the machine of the pool they land on, their topology label."""
    tpu = [p for p in workers if p.requests_tpu]
    if not tpu:
        return None
    pools = landing_pools(tpu[0], node_pools(view))
    topology = tpu[0].node_selector.get(F.TPU_TOPOLOGY_LABEL, "")
    machine = TPU_MACHINES.get(pools[0].machine_type) if pools else None
    if not pools or machine is None or not topology:
        return None
    chips = math.prod(int(d) for d in topology.split("x"))
    generation = GENERATIONS.get(machine.accelerator, machine.accelerator)
    return Slices(pools[0].machine_type, generation, topology, chips, len(tpu) * machine.chips // chips)


def _jetstream_lws(view: PlanView) -> Iterator[Mapping[str, Any]]:
    for lws in view.kubernetes_objects("LeaderWorkerSet"):
        template = lws["spec"]["leaderWorkerTemplate"]
        leader = (template.get("leaderTemplate") or {}).get("spec", {}).get("containers", ())
        if any(str(c.get("image", "")).rsplit("/", 1)[-1].startswith("jetstream-pathways:") for c in leader):
            yield lws


def _maxtext_finding(subject: str, c: Mapping[str, Any], image: str, slices: Slices | None) -> Finding:
    """The JetStream server container: MaxText's settings against its release's table, its variables known."""
    table_name = MAXTEXT_IMAGES.get(image.rsplit("/", 1)[-1])
    if table_name is None:
        return Finding(subject, False, f"image {image}: no MaxText table for it")
    args = [str(a) for a in c.get("args") or ()]
    problems = maxtext_problems(args, load(table_name), slices)
    problems += [f"env {e['name']}: read by nothing known" for e in c.get("env") or () if e["name"] not in OTHER_ENV]
    what = f"{len(args) - 1} MaxText settings, each a key of its type"
    return Finding(subject, not problems, "; ".join(problems) or what)


def _pathways_finding(subject: str, c: Mapping[str, Any], slices: Slices | None) -> Finding:
    """A Pathways container: its flags and variables against the PathwaysJob release's table for it."""
    if c["name"] not in CONTAINER_TABLES:
        return Finding(subject, False, f"no Pathways table for a container named {c['name']}")
    table = load(f"{CONTAINER_TABLES[c['name']]}-{PATHWAYS_RELEASE}")
    problems = pathways_problems(c, table, slices)
    what = f"{len(c.get('args') or ()) + len(c.get('env') or ())} flags and variables, each upstream's"
    return Finding(subject, not problems, "; ".join(problems) or what)


def _container_finding(subject: str, c: Mapping[str, Any], slices: Slices | None) -> Finding | None:
    """The finding for a JetStream server or Pathways container; None for any other container."""
    image = str(c.get("image", ""))
    if image.rsplit("/", 1)[-1].startswith("jetstream-pathways:"):
        return _maxtext_finding(subject, c, image, slices)
    if image.startswith(PATHWAYS_IMAGES):
        return _pathways_finding(subject, c, slices)
    return None


def findings(view: PlanView) -> list[Finding]:
    """Per container of every JetStream + Pathways LWS: MaxText's settings, Pathways' flags and variables."""
    out = []
    pods = pods_of(view)
    for lws in _jetstream_lws(view):
        name = lws["metadata"]["name"]
        owner = f"LeaderWorkerSet/{name}"
        group0 = [p for p in pods if p.owner == owner and p.group.endswith(f"{owner}/0") and p.role == "worker"]
        slices = _slices(group0, view)
        template = lws["spec"]["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            for c in (template.get(role) or {}).get("spec", {}).get("containers", ()):
                subject = f"engine {qualified_name(lws)} {role[: -len('Template')]} {c['name']}"
                found = _container_finding(subject, c, slices)
                if found is not None:
                    out.append(found)
    return out
