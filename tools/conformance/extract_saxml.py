"""Extract Saxml's flags and environment from its source: ``python -m tpu_serving_tools.conformance.extract_saxml
--git-dir DIR`` (a git directory of google/saxml).

For each release in :data:`~tpu_serving_tools.conformance.saxml.RELEASES`: the absl flags the Python model server
defines (``flags.DEFINE_*('name'`` in ``saxml/server/**/*.py``, the modules it runs), the Go flags of the admin
server, sax-http and their shared packages (``flag.<Type>("name"`` in ``saxml/**/*.go``), and the environment
they read (``os.Getenv("NAME")``, and the variables the Dockerfiles' entrypoints expand, such as ``GSBUCKET``).
A flag name is a superset match: defined somewhere in the release's server code, not necessarily by the one
binary (the Python model server imports most of ``saxml/server``).
"""

from __future__ import annotations

import datetime
import re
import subprocess
import sys
from pathlib import Path

from tpu_serving_tools.cli import command_parser
from tpu_serving_tools.conformance.saxml import RELEASES
from tpu_serving_tools.conformance.table import Table, save

PY_FLAG = re.compile(r"""flags\.DEFINE_\w+\(\s*['"](\w+)['"]""")
GO_FLAG = re.compile(r"""\bflag\.\w+\(\s*"(\w+)\"""")
GETENV = re.compile(r"""os\.Getenv\(\s*"(\w+)"\s*\)""")
DOCKER_VAR = re.compile(r"\$\{(\w+)\}")


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, capture_output=True, text=True).stdout


def table(git_dir: Path, tag: str) -> Table:
    files = _git(git_dir, "ls-tree", "-r", "--name-only", tag, "saxml").split()
    py = [f for f in files if f.startswith("saxml/server/") and f.endswith(".py") and not f.endswith("_test.py")]
    go = [f for f in files if f.endswith(".go") and not f.endswith("_test.go")]
    docker = [f for f in files if f.startswith("saxml/tools/docker/Dockerfile")]
    flags: set[str] = set()
    env: set[str] = set()
    for f in py:
        flags |= {f"--{n}" for n in PY_FLAG.findall(_git(git_dir, "show", f"{tag}:{f}"))}
    for f in go:
        text = _git(git_dir, "show", f"{tag}:{f}")
        flags |= {f"--{n}" for n in GO_FLAG.findall(text)}
        env |= set(GETENV.findall(text))
    for f in docker:
        env |= set(DOCKER_VAR.findall(_git(git_dir, "show", f"{tag}:{f}")))
    source = {
        "artefact": f"google/saxml@{tag} ({_git(git_dir, 'rev-list', '-n1', tag).strip()})",
        "files": "saxml/server/**/*.py (absl flags), saxml/**/*.go (flags, os.Getenv), saxml/tools/docker/Dockerfile.* (${VAR})",
        "extracted": datetime.date.today().isoformat(),
        "by": "tools/conformance/extract_saxml.py",
    }
    return Table("saxml", tag, source, frozenset(flags), frozenset(env), frozenset())


def main(argv: list[str] | None = None) -> int:
    parser = command_parser(__name__, __doc__)
    parser.add_argument("--git-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    for tag in sorted(set(RELEASES.values())):
        print(save(table(args.git_dir, tag)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
