"""Time the offline preview against the bare import of the Pulumi modules it uses.

``python -m tpu_serving_tools.preview.bench <stack> [--runs N]``: runs the preview N times in fresh processes
and, as the baseline, a process that only imports the ``pulumi``, ``pulumi_gcp`` and
``pulumi_kubernetes`` modules that the preview process had loaded. Prints both medians and
their ratio.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time

from tpu_serving_tools.cli import command_parser

PACKAGES = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")

_LIST_MODULES = """
import json, sys, runpy
sys.argv = ["tpu_serving_tools.preview.stack", {stack!r}, "--quiet", "--out", {out!r}]
try:
    runpy.run_module("tpu_serving_tools.preview.stack", run_name="__main__")
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {packages!r})))
"""


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def used_modules(stack: str, out: str) -> list[str]:
    code = _LIST_MODULES.format(stack=stack, out=out, packages=set(PACKAGES))
    proc = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    modules: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return modules


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("stack")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as out:
        modules = used_modules(args.stack, out)
        importer = "import importlib\nfor m in " + repr(modules) + ":\n    importlib.import_module(m)"
        baseline, preview = [], []
        for _ in range(args.runs):  # interleaved, so drift in machine load hits both alike
            baseline.append(_timed([sys.executable, "-c", importer]))
            preview.append(
                _timed([sys.executable, "-m", "tpu_serving_tools.preview.stack", args.stack, "--quiet", "--out", out])
            )
    b, p = statistics.median(baseline), statistics.median(preview)
    print(f"stack {args.stack}: {len(modules)} pulumi/pulumi_gcp/pulumi_kubernetes modules")
    print(f"import only: median {b:.2f} s over {args.runs} runs")
    print(f"preview:     median {p:.2f} s over {args.runs} runs")
    print(f"ratio:       {p / b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
