"""Extract the endpoint picker's flags from its source: ``python -m tpu_serving_tools.conformance.extract_epp
--epp-git-dir DIR --runtime-git-dir DIR``.

The EPP (kubernetes-sigs/gateway-api-inference-extension at :data:`~tpu_serving_tools.conformance.epp.EPP_TAG`)
registers its flags in ``pkg/epp/server/options.go`` (``Options.AddFlags``: ``fs.<Type>Var(&..., "name", ...)``)
and adds controller-runtime's zap flags (``opts.ZapOptions.BindFlags``, ``pkg/log/zap/zap.go`` of the
controller-runtime release its ``go.mod`` requires). Both are read from local git directories of the two
repositories; the table records the tags, commits and files.
"""

from __future__ import annotations

import argparse
import datetime
import re
import subprocess
import sys
from pathlib import Path

from tpu_serving_tools.conformance.epp import CONTROLLER_RUNTIME_TAG, EPP_TAG
from tpu_serving_tools.conformance.table import Table, save

FLAG = re.compile(r'\bfs\.\w*Var\w*\(\s*&[^,]+,\s*"([a-z][a-z0-9-]*)"')

EPP_FILE = "pkg/epp/server/options.go"
ZAP_FILE = "pkg/log/zap/zap.go"


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def flags(source: str) -> set[str]:
    return {f"--{name}" for name in FLAG.findall(source)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--epp-git-dir", type=Path, required=True)
    parser.add_argument("--runtime-git-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    epp = _git(args.epp_git_dir, "show", f"{EPP_TAG}:{EPP_FILE}")
    requires = _git(args.epp_git_dir, "show", f"{EPP_TAG}:go.mod")
    if f"sigs.k8s.io/controller-runtime {CONTROLLER_RUNTIME_TAG}" not in requires:
        raise SystemExit(f"the EPP at {EPP_TAG} does not require controller-runtime {CONTROLLER_RUNTIME_TAG}")
    zap = _git(args.runtime_git_dir, "show", f"{CONTROLLER_RUNTIME_TAG}:{ZAP_FILE}")
    source = {
        "artefact": f"kubernetes-sigs/gateway-api-inference-extension@{EPP_TAG} "
        f"({_git(args.epp_git_dir, 'rev-list', '-n1', EPP_TAG).strip()}) {EPP_FILE}; "
        f"kubernetes-sigs/controller-runtime@{CONTROLLER_RUNTIME_TAG} "
        f"({_git(args.runtime_git_dir, 'rev-list', '-n1', CONTROLLER_RUNTIME_TAG).strip()}) {ZAP_FILE}",
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_epp.py",
    }
    print(save(Table("epp", EPP_TAG, source, frozenset(flags(epp) | flags(zap)), frozenset(), frozenset())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
