"""``pulumi up``, ``preview`` and ``destroy`` of one stack by the real Pulumi engine, against a local backend.

The engine is the Pulumi CLI built from its Go module (``make e2e-tools``), and the Kubernetes provider is
``pulumi-resource-kubernetes`` built from its Go module, found by the engine as an ambient plugin on ``PATH``.
The program is the project's own ``__main__.py``, unchanged.

One piece is not the one ``pulumi up`` starts: the Python language host (``pulumi-language-python``, a Go
module of its own that the module proxy does not serve). In its place the program runs as an Automation API
inline program: the Python SDK serves the LanguageRuntime itself (``pulumi.automation._server.LanguageServer``)
and the CLI reaches it with ``--client`` (the SDK's ``Stack.up``), so the engine, the resource monitor, the
provider and the SDK are the ones a user runs.

Nothing here reaches a cloud: state lives in a ``file://`` backend in the run's folder, secrets use a
passphrase, plugin downloads and update checks are off.
"""

from __future__ import annotations

import gc
import os
import runpy
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto

PASSPHRASE = "tpu-serving-e2e"
"""The local secrets provider's passphrase: the run's state holds no real secret."""


@dataclass(frozen=True)
class Engine:
    """Where the engine and the Kubernetes provider are."""

    pulumi: Path
    """The ``pulumi`` binary."""
    kubernetes_provider: Path
    """The ``pulumi-resource-kubernetes`` binary."""


@dataclass(frozen=True)
class Change:
    """What one ``up``, ``preview`` or ``destroy`` reported, by operation (``same``, ``create``, ``update``...)."""

    counts: Mapping[str, int]
    stdout: str

    @property
    def changed(self) -> dict[str, int]:
        """The operations other than ``same``, with their counts."""
        return {op: n for op, n in self.counts.items() if op != "same" and n}


def project_dir(root: Path, name: str, stack: str, config: Mapping[str, Any]) -> Path:
    """A project folder ``root`` holding ``Pulumi.yaml`` (project ``name``, Python runtime) and the stack file of
    ``stack`` with ``config`` (keys without a namespace belong to the project, as in the shipped stack files)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "Pulumi.yaml").write_text(yaml.safe_dump({"name": name, "runtime": "python"}, sort_keys=False))
    (root / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": dict(config)}, sort_keys=False))
    return root


def engine_env(engine: Engine, home: Path, backend: Path) -> dict[str, str]:
    """The engine's environment: a private PULUMI_HOME, a file backend, the provider on PATH, no downloads."""
    backend.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PULUMI_HOME": str(home),
        "PULUMI_BACKEND_URL": backend.resolve().as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        "PATH": os.pathsep.join((str(engine.kubernetes_provider.parent), os.environ.get("PATH", ""))),
    }


@contextmanager
def collected_outside_the_run() -> Iterator[None]:
    """One engine command with no garbage collection while its inline program runs.

    A failed ``up`` can leave the SDK's ``run_in_stack`` coroutine unfinished (tests/conftest.py,
    ``INLINE_PROGRAM_LEFT_RUNNING``). When the collector closes it, its ``finally`` awaits ``_shutdown_callbacks``,
    which stops every callback server of the loop running in that thread (pulumi 3.272.0,
    ``runtime/_callbacks.py`` l.103-115, ``_CallbackServicer.shutdown``: ``asyncio.get_running_loop()``). A
    collection that fell in a later program's thread stopped that program's server, and the engine's next
    transform was refused (CI of stop 68: ``invoke transform: ... dial tcp 127.0.0.1:39895: connect: connection
    refused``, 3.2 s into the zone-outage test's ``up``). So the earlier programs' garbage is collected here, in
    the caller's thread where no loop runs (their ``finally`` then raises, an unraisable exception the e2e tests
    ignore), and the collector is off until the command returns."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _counts(changes: Mapping[Any, int] | None) -> dict[str, int]:
    return {str(getattr(op, "value", op)): n for op, n in (changes or {}).items()}


class StackRun:
    """One stack of a project folder, driven through the engine."""

    def __init__(self, engine: Engine, project: Path, stack: str, main: Path, work: Path) -> None:
        self._main = main
        self.work = work
        self.kubeconfig: Path | None = None
        """The cluster's kubeconfig, where the caller knows it (for ``tpu-serving verify``)."""
        env = engine_env(engine, work / "pulumi-home", work / "state")
        self._cli, self._env, self._project, self._name = engine.pulumi, env, project, stack
        for key, value in env.items():
            # The inline program's LanguageServer runs in this process: the provider lookup and the SDK read
            # the same environment as the CLI.
            os.environ[key] = value
        workspace = auto.LocalWorkspace(
            work_dir=str(project),
            pulumi_command=auto.PulumiCommand(root=str(engine.pulumi.parent.parent), skip_version_check=True),
            env_vars=env,
            program=self._program,
        )
        self.stack = auto.Stack.create_or_select(stack, workspace)

    def _program(self) -> None:
        runpy.run_path(str(self._main), run_name="__main__")

    def up(self, message: str = "", *, refresh: bool = False) -> Change:
        """``pulumi up``; with ``refresh``, ``pulumi up --refresh`` (the live objects read first)."""
        with collected_outside_the_run():
            result = self.stack.up(message=message or None, color="never", refresh=refresh)
        return Change(_counts(result.summary.resource_changes), result.stdout)

    def preview(self, *, refresh: bool = False) -> Change:
        """``pulumi preview --diff``; with ``refresh``, against the live objects."""
        with collected_outside_the_run():
            result = self.stack.preview(color="never", diff=True, refresh=refresh)
        return Change(_counts(result.change_summary), result.stdout)

    def destroy(self) -> Change:
        """``pulumi destroy``. When it fails, the error names what holds the namespaces still being deleted (their
        conditions, as the namespace controller sets them), the evidence a timed-out namespace delete otherwise
        leaves behind with the control plane."""
        try:
            with collected_outside_the_run():
                result = self.stack.destroy(color="never")
        except auto.CommandError as err:
            held = terminating_namespaces(self.kubeconfig) if self.kubeconfig is not None else ""
            if held:
                raise RuntimeError(f"{err}\n{held}") from err
            raise
        return Change(_counts(result.summary.resource_changes), result.stdout)

    def unprotect_all(self) -> str:
        """``pulumi state unprotect --all --yes``, the CLI's own command (what docs/platform.md tells a user to run
        before destroying a platform); its output."""
        done = subprocess.run(
            [str(self._cli), "state", "unprotect", "--all", "--yes", "--non-interactive", "--stack", self._name],
            cwd=self._project,
            env={**os.environ, **self._env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pulumi state unprotect --all failed ({done.returncode}): {done.stderr[-2000:]}")
        return done.stdout

    def resources(self) -> list[dict[str, Any]]:
        """The stack's state: every resource with its URN, type and outputs."""
        deployment = self.stack.export_stack().deployment
        return list(deployment.get("resources", []) if deployment else [])

    def write_stack_file(self, config: Mapping[str, Any]) -> None:
        """Replace the stack file's ``config:`` (as a user edits ``Pulumi.<stack>.yaml`` before ``pulumi up``)."""
        folder = Path(self.stack.workspace.work_dir or ".")
        (folder / f"Pulumi.{self.stack.name}.yaml").write_text(
            yaml.safe_dump({"config": dict(config)}, sort_keys=False)
        )

    def set_config(self, key: str, value: str) -> None:
        self.stack.set_config(key, auto.ConfigValue(value))


def engine_errors(text: str) -> str:
    """The engine's diagnostics (its ``Diagnostics:`` block without the warnings), else its error lines."""
    if "Diagnostics:" in text:
        block = text.split("Diagnostics:", 1)[1].split("\nResources:", 1)[0]
        keep = [line.rstrip() for line in block.splitlines() if line.strip() and "warning:" not in line]
        return "\n".join(keep)
    keep = [line.strip() for line in text.splitlines() if "error" in line.lower() or line.strip().startswith("* ")]
    return "\n".join(dict.fromkeys(keep))


def terminating_namespaces(kubeconfig: Path) -> str:
    """Each namespace being deleted, with its True conditions (``NamespaceDeletionDiscoveryFailure``,
    ``NamespaceContentRemaining``, ``NamespaceFinalizersRemaining``, ...: k8s.io/api v0.36.3 core/v1 types.go,
    ``NamespaceConditionType``) and messages; "" when none is, or the API cannot be read."""
    from kubernetes import client
    from kubernetes import config as kube_config

    try:
        api = client.CoreV1Api(kube_config.new_client_from_config(config_file=str(kubeconfig)))  # type: ignore[no-untyped-call]
        found = api.list_namespace().items
    except Exception as err:  # the diagnosis must not hide the destroy's own error
        return f"namespaces not read: {type(err).__name__}: {err}"
    lines = []
    for ns in found:
        if ns.metadata is None or ns.metadata.deletion_timestamp is None:
            continue
        conditions = [c for c in (ns.status.conditions if ns.status else None) or [] if c.status == "True"]
        said = "; ".join(f"{c.type}: {c.message}" for c in conditions) or "no condition set"
        lines.append(f"namespace {ns.metadata.name} still being deleted: {said}")
    return "\n".join(lines)
