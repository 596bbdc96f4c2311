"""The ``tpu-serving`` command line: help on stdout, ``--version``, plain-text help of every command (issue "A
platform team adopts it", item 10)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.cli import COMMANDS, main


def test_cli_help_goes_to_stdout_and_succeeds(capsys):
    assert main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: tpu-serving {preview,check,") and err == ""
    assert all(f"  {name} " in out for name in COMMANDS)
    assert main(["-h"]) == 0 and capsys.readouterr().out == out


def test_cli_version_is_the_packages(capsys):
    import tomllib

    assert main(["--version"]) == 0
    written = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out == f"tpu-serving {written}\n"


def test_cli_an_unknown_or_missing_command_is_a_usage_error(capsys):
    assert main(["previwe"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: unknown command 'previwe'\nusage: tpu-serving")
    assert main([]) == 2
    assert capsys.readouterr().err.startswith("usage: tpu-serving")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_each_commands_help_is_plain_text_under_its_name(capsys, command):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: tpu-serving {command} [-h]")
    assert "`" not in out and "python -m" not in out


def test_cli_a_quiet_preview_starts_with_a_header_naming_the_stack(capsys, monkeypatch):
    """`make previews` runs one quiet preview per stack: each block, a failing one too, starts with its stack."""
    from tpu_serving_tools.preview import stack as preview

    monkeypatch.setattr(preview, "close_event_loop", lambda: None)  # this worker's loop runs further programs
    assert preview.main(["no-such-stack", "--quiet", "--root", str(ROOT)]) == 2
    out, err = capsys.readouterr()
    assert out == "== no-such-stack\n"
    assert err.startswith("error: no stack file stacks/Pulumi.no-such-stack.yaml")
