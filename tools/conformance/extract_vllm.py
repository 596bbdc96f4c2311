"""Extract the vLLM TPU image's engine tables from the published wheels: ``python -m tpu_serving_tools.conformance.extract_vllm``.

Downloads (``pip download --no-deps``) the wheels of :data:`tpu_serving_tools.conformance.vllm.PINS` and
writes ``tables/vllm-<v>.json``, ``tables/tpu-inference-<v>.json`` and ``tables/ray-<v>.json``:

- vLLM: the ``--flags`` of ``vllm serve`` (every string literal given to an ``add_argument`` call in
  ``vllm/engine/arg_utils.py`` and the front end's ``cli_args.py``, and the fields of the
  ``*FrontendArgs`` config classes, which vLLM turns into ``--kebab-case`` flags) and the environment
  variables of ``vllm/envs.py`` (the keys of ``environment_variables``), and the Prometheus metrics of vLLM's v1
  metrics logger (``vllm/v1/metrics/loggers.py``, :data:`METRICS_FILE`: the ``name="vllm:..."`` of each
  ``Gauge``/``Counter``/``Histogram`` it constructs, with the kind, under ``metrics``). The front end's file is
  ``vllm/entrypoints/openai/cli_args.py`` up to vllm-tpu 0.27.0 and ``vllm/entrypoints/launchers/cli_args.py``
  from 0.29.0 (:data:`CLI_ARGS`); the table's ``files`` names the one read;
- tpu-inference: the keys of ``environment_variables`` in ``tpu_inference/envs.py``;
- Ray: the ``RAY_*`` variables its Python reads (``os.environ``/``os.getenv`` string literals) and, for the
  ``RAY_<name>`` overrides of its C++ ``RayConfig``, every snake_case identifier in ``ray/_raylet.so``: a
  config the binary does not name is certainly not read (presence is necessary, not sufficient).

Files are parsed, never imported (vLLM needs torch and a TPU to import). Each table records the wheel's
file name, sha256, the files read and the date.
"""

from __future__ import annotations

import ast
import datetime
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

from tpu_serving_tools.conformance.table import Table, save
from tpu_serving_tools.conformance.vllm import PINS

SNAKE = re.compile(rb"(?<=\x00)[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?=\x00)")
"""A whole NUL-terminated snake_case string literal of the binary."""


IMAGE_PYTHON = ("--python-version", "3.12", "--platform", "manylinux_2_24_x86_64")
"""The image's interpreter (tpu-inference@v0.27.0 docker/Dockerfile: ``python:3.12-slim-bookworm``): vllm-tpu
wheels are ``cp312-cp312-manylinux_2_24_x86_64`` from 0.25.0 on (``py3-none-any`` before), so pip must fetch them
for that platform whatever Python runs the extractor."""


def download(requirement: str, dest: Path, *extra: str) -> Path:
    """The wheel of ``requirement`` (``name==version``), fetched from PyPI by pip."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            *extra,
            "-d",
            str(dest),
            requirement,
        ],
        check=True,
        capture_output=True,
    )
    name = requirement.split("==")[0].replace("-", "_")
    (wheel,) = [p for p in dest.glob("*.whl") if p.name.lower().startswith(name.lower())]
    return wheel


def _source(wheel: Path, files: list[str]) -> dict[str, str]:
    return {
        "artefact": f"PyPI {wheel.name}",
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "files": ", ".join(files),
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_vllm.py",
    }


def _dict_keys(source: str, variable: str) -> set[str]:
    """String keys of the module-level dict literal assigned to ``variable``."""
    for node in ast.walk(ast.parse(source)):
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id == variable and isinstance(value, ast.Dict):
            return {k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    raise ValueError(f"no dict literal {variable}")


def _cli_flags(source: str) -> set[str]:
    """``--flags`` given to ``add_argument`` and the fields of ``*FrontendArgs`` classes, as flags."""
    flags: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags |= {str(a.value) for a in node.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")}
        if isinstance(node, ast.ClassDef) and node.name.endswith("FrontendArgs"):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    flags.add("--" + item.target.id.replace("_", "-"))
    return flags


CLI_ARGS = ("vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/launchers/cli_args.py")
"""Where the front end's flags (``FrontendArgs``) live: ``openai/`` up to vllm-tpu 0.27.0, ``launchers/`` from
0.29.0 (the vllm_tpu-0.29.0 wheel has no ``openai/cli_args.py``; 0.28.0 was not read)."""


def cli_args_files(names: Iterable[str]) -> list[str]:
    """The front-end flag files of :data:`CLI_ARGS` a wheel holds (every one, should a release carry both)."""
    present = set(names)
    found = [f for f in CLI_ARGS if f in present]
    if not found:
        raise ValueError(f"none of {', '.join(CLI_ARGS)} in the wheel: where do the front end's flags live now?")
    return found


METRICS_FILE = "vllm/v1/metrics/loggers.py"
"""vLLM's v1 Prometheus logger (``PrometheusStatLogger``): the server's own metrics, registered through
``self._gauge_cls``/``_counter_cls``/``_histogram_cls`` (``prometheus_client``'s ``Gauge``, ``Counter`` and
``Histogram``). Metrics registered elsewhere are not read: the KV connectors' (``kv_connector/v1/*``, tpu-inference's
``vllm:tpu_kv_transfer_time_ms``), speculative decoding's (``vllm/v1/spec_decode/metrics.py``), ``perf.py``'s and the
realtime speech endpoint's."""

METRIC_KINDS = {"gauge": "gauge", "counter": "counter", "histogram": "histogram"}
"""A constructor's name (``Gauge``, ``_gauge_cls``...) -> the kind of the metric it makes (matched lower-case)."""


def _kind(func: ast.expr) -> str | None:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return next((kind for word, kind in METRIC_KINDS.items() if word in name.lower()), None)


def _strings(scope: ast.AST, variable: str) -> set[str]:
    """The string literals assigned to ``variable`` in ``scope`` (``name = "vllm:cache_config_info"``)."""
    return {
        str(node.value.value)
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def logger_metrics(source: str) -> dict[str, str]:
    """Metric name -> kind of every ``vllm:`` metric ``source`` constructs: a call of a ``Gauge``, ``Counter`` or
    ``Histogram`` (or ``_gauge_cls``...) whose ``name=`` is a literal, or a variable of its function assigned
    literals."""
    out: dict[str, str] = {}
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            if not isinstance(node, ast.Call) or (kind := _kind(node.func)) is None:
                continue
            for k in node.keywords:
                if k.arg != "name":
                    continue
                if isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
                    names = {k.value.value}
                else:
                    names = _strings(function, k.value.id) if isinstance(k.value, ast.Name) else set()
                out |= {n: kind for n in names if n.startswith("vllm:")}
    return out


def vllm_table(wheel: Path, version: str) -> Table:
    with zipfile.ZipFile(wheel) as z:
        files = ["vllm/engine/arg_utils.py", *cli_args_files(z.namelist()), "vllm/envs.py"]
        text = {f: z.read(f).decode() for f in [*files, METRICS_FILE]}
    flags: set[str] = set()
    for f in files[:-1]:
        flags |= _cli_flags(text[f])
    env = _dict_keys(text[files[-1]], "environment_variables")
    source = _source(wheel, [*files, METRICS_FILE])
    metrics = logger_metrics(text[METRICS_FILE])
    return Table("vllm", version, source, frozenset(flags), frozenset(env), frozenset(), metrics=metrics)


GETENV_FILES = ("tpu_inference/distributed/utils.py",)
"""tpu-inference modules that read variables with ``os.getenv`` outside ``envs.py``: the TPU KV connector's ports,
channels, timeouts and switches (``TPU_KV_TRANSFER_PORT``, ``TPU_SIDE_CHANNEL_PORT``...), which the disaggregated
vLLM mode sets (docs/design/disaggregated-vllm.md section 1.2)."""
_GETENV = re.compile(r"""os\.getenv\(\s*["']([A-Z][A-Z0-9_]*)["']\s*(?:,\s*([^)]*?))?\s*\)""")


def getenv_reads(source: str, path: str) -> dict[str, str]:
    """Variable -> where ``source`` (the file ``path``) reads it with ``os.getenv``: its line and default."""
    out: dict[str, str] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        for m in _GETENV.finditer(line):
            default = f", default {m.group(2)}" if m.group(2) else ""
            out.setdefault(m.group(1), f"{path} l.{number} (os.getenv{default})")
    return out


CONNECTOR_FILES = ("tpu_inference/distributed/tpu_connector.py", "tpu_inference/distributed/tpu_connector_hma.py")
"""tpu-inference's KV connectors (``--kv-transfer-config`` ``kv_connector``). vLLM's scheduler reads state that
only ``KVConnectorBase_V1.__init__`` sets (``_kv_transfer_config``, through ``requires_kv_delivery``): a connector
whose ``__init__`` skips it fails EngineCore at start (tpu-inference issue 3468, fixed by PR 3566 after 0.29.0;
llm-d/llm-d PR 2533 pins its TPU prefill/decode guide back to vllm-tpu v0.26.0 for TPUConnectorHMA)."""


def _calls_base_init(init: ast.FunctionDef) -> bool:
    """Whether ``init`` calls ``super().__init__(...)`` or ``<Base>.__init__(self, ...)``."""
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "__init__"
        and (isinstance(node.func.value, (ast.Call, ast.Name)))
        for node in ast.walk(init)
    )


def connector_inits(source: str, path: str) -> dict[str, str]:
    """``connector <class>`` -> whether the ``__init__`` of each ``*Connector*`` class of ``source`` (the file
    ``path``) runs its base class's: ``base initialized: <path> l.<n>`` or ``base not initialized: <path> l.<n>``.
    A class without an ``__init__`` of its own inherits one and is left out."""
    out: dict[str, str] = {}
    for cls in ast.parse(source).body:
        if not isinstance(cls, ast.ClassDef) or "Connector" not in cls.name or not cls.bases:
            continue
        for init in cls.body:
            if isinstance(init, ast.FunctionDef) and init.name == "__init__":
                word = "base initialized" if _calls_base_init(init) else "base not initialized"
                out[f"connector {cls.name}"] = f"{word}: {path} l.{init.lineno}"
    return out


def tpu_inference_table(wheel: Path, version: str) -> Table:
    files = ["tpu_inference/envs.py", *GETENV_FILES, *CONNECTOR_FILES]
    with zipfile.ZipFile(wheel) as z:
        env = _dict_keys(z.read(files[0]).decode(), "environment_variables")
        read = {k: v for f in GETENV_FILES for k, v in getenv_reads(z.read(f).decode(), f).items()}
        inits = {k: v for f in CONNECTOR_FILES for k, v in connector_inits(z.read(f).decode(), f).items()}
    facts = {f"env {k}": v for k, v in read.items()} | inits
    return Table(
        "tpu-inference",
        version,
        _source(wheel, files),
        frozenset(),
        frozenset(env) | frozenset(read),
        frozenset(),
        facts=facts,
    )


def ray_table(wheel: Path, version: str) -> Table:
    env: set[str] = set()
    configs: set[str] = set()
    read = re.compile(r"""(?:environ\.get|getenv|environ\[)\(?\s*["'](RAY_[A-Za-z0-9_]+)["']""")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("ray/") and name.endswith(".py"):
                env |= set(read.findall(z.read(name).decode(errors="replace")))
        configs = {m.decode() for m in SNAKE.findall(z.read("ray/_raylet.so"))}
    files = ["ray/**/*.py (RAY_* reads)", "ray/_raylet.so (RayConfig names)"]
    return Table("ray", version, _source(wheel, files), frozenset(), frozenset(env), frozenset(configs))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        tables = [
            vllm_table(download(f"vllm-tpu=={PINS.vllm_tpu}", d, *IMAGE_PYTHON), PINS.vllm_tpu),
            tpu_inference_table(download(f"tpu-inference=={PINS.tpu_inference}", d), PINS.tpu_inference),
            ray_table(
                download(f"ray=={PINS.ray}", d, "--python-version", "3.11", "--platform", "manylinux2014_x86_64"),
                PINS.ray,
            ),
        ]
    for t in tables:
        print(save(t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
