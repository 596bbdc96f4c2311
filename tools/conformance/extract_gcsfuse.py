"""Extract Cloud Storage FUSE's options from its source: ``python -m tpu_serving_tools.conformance.extract_gcsfuse
--git-dir DIR`` (a git directory of GoogleCloudPlatform/gcsfuse).

``cfg/params.yaml`` at :data:`~tpu_serving_tools.conformance.gcsfuse.GCSFUSE_TAG` declares every parameter: its
CLI ``flag-name`` and its ``config-path`` in the config file. The GKE Cloud Storage FUSE CSI driver passes a
volume's ``mountOptions`` to gcsfuse as flags (``implicit-dirs``, ``only-dir=...``) or config entries written
``section:key:value`` (``metadata-cache:ttl-secs:-1``), so both sets are kept.
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance.gcsfuse import GCSFUSE_TAG
from tpu_serving_tools.conformance.table import Table, save

PARAMS = "cfg/params.yaml"
FLAG_NAME = re.compile(r'^\s*-?\s*flag-name:\s*"([^"]+)"', re.M)
CONFIG_PATH = re.compile(r'^\s*-?\s*config-path:\s*"([^"]+)"', re.M)


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--git-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    params = _git(args.git_dir, "show", f"{GCSFUSE_TAG}:{PARAMS}")
    source = {
        "artefact": f"GoogleCloudPlatform/gcsfuse@{GCSFUSE_TAG} ({_git(args.git_dir, 'rev-list', '-n1', GCSFUSE_TAG).strip()}) {PARAMS}",
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_gcsfuse.py",
    }
    flags = frozenset(FLAG_NAME.findall(params))
    keys = frozenset(CONFIG_PATH.findall(params))
    print(save(Table("gcsfuse", GCSFUSE_TAG, source, flags, frozenset(), keys)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
