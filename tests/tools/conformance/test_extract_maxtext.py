"""tools/conformance/extract_maxtext.py: the MaxText table from the tags of a git directory, read through a fake of
its two git calls (no process is spawned): what holds at every tag of the window is kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpu_serving_tools.conformance import extract_maxtext as X

PYCONFIG = """
def validate_model_name(s):
  valid_model_names = ("llama2-7b", "llama2-70b"{extra})
  if s not in valid_model_names:
    raise ValueError(s)

def validate_compute_axis_order(s):
  valid_compute_axis_order = ("0,1,2,3", "0,2,1,3")
  if s not in valid_compute_axis_order:
    raise ValueError(s)
"""
SERVERS = """
def get_server_config(name):
  match name:
    case "MaxtextInterleavedServer":
      return a
    case "ExperimentalMaxtextDisaggregatedServer_8":
      return b(prefill_slices=("v5e-8",), generate_slices=("v5e-8",))
{extra}"""
REPO: dict[str, dict[str, str]] = {
    "v1": {
        X.BASE: "steps: 10\nmodel_name: default\nrate: 0.5\nflag: true\ngone: 1\n",
        X.PYCONFIG: PYCONFIG.format(extra=', "gemma-7b"'),
        X.SERVER_CONFIG: SERVERS.format(extra='    case "Old":\n      return c\n'),
        "MaxText/configs/v5e/llama2_70b.yml": "",
        "MaxText/configs/old.yml": "",
    },
    "v2": {
        X.BASE: "steps: 10\nmodel_name: default\nrate: 0.5\nflag: true\ngone: one\nnew: 2\n",
        X.PYCONFIG: PYCONFIG.format(extra=""),
        X.SERVER_CONFIG: SERVERS.format(extra=""),
        "MaxText/configs/v5e/llama2_70b.yml": "",
        "MaxText/configs/README.md": "",
    },
    "v3-src-layout": {X.SERVER_CONFIG: SERVERS.format(extra="")},
}


def _git(git_dir: Path, *args: str) -> str:
    if args == ("tag",):
        return "\n".join(REPO)
    if args[:3] == ("ls-tree", "-r", "--name-only"):
        return "\n".join(f for f in REPO[args[3]] if f.startswith(args[4]))
    assert args[:2] == ("rev-list", "-n1"), args
    return f"{args[2]:0<40}\n"


def _show(git_dir: Path, tag: str, path: str) -> str | None:
    return REPO[tag].get(path)


@pytest.fixture
def fake_git(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(X, "_git", _git)
    monkeypatch.setattr(X, "_show", _show)


def test_table_keeps_what_holds_at_every_tag_of_the_window(fake_git: None):
    t = X.table(Path("maxtext.git"))
    assert (t.program, t.version, t.flags, t.env) == ("maxtext", X.IMAGE, frozenset(), frozenset())
    assert t.types == {"steps": "int", "model_name": "str", "rate": "float", "flag": "bool"}
    assert list(t.types) == ["steps", "model_name", "rate", "flag"]
    assert t.config_keys == frozenset(t.types)
    assert t.choices == {
        "model_name": ["llama2-70b", "llama2-7b"],
        "compute_axis_order": ["0,1,2,3", "0,2,1,3"],
        "inference_server": ["ExperimentalMaxtextDisaggregatedServer_8", "MaxtextInterleavedServer"],
        "config_file": ["MaxText/configs/base.yml", "MaxText/configs/v5e/llama2_70b.yml"],
    }
    assert t.facts == {"inference_server=ExperimentalMaxtextDisaggregatedServer_8": "v5e-8"}
    assert t.source["artefact"] == (
        f"AI-Hypercomputer/maxtext, the tags matching the seeds: v1 ({'v1':0<12}), v2 ({'v2':0<12})"
    )
    assert t.source["by"] == "tools/conformance/extract_maxtext.py"
    assert set(t.source) == {"artefact", "why", "files", "extracted", "by"}
    assert f"inference_server={X.SEED_SERVER}" in t.source["why"]


def test_table_refuses_a_repository_with_no_tag_in_the_window(fake_git: None, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(X, "_show", lambda git_dir, tag, path: None)
    with pytest.raises(SystemExit, match="no tag of the repository matches the seeds' MaxText"):
        X.table(Path("maxtext.git"))
