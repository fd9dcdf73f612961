"""What a Kedro project tells before anything runs: its pipeline's nodes, its catalog entries, its git checkout.

Both the hooks (at the start of a run) and `kedro openlineage push` (without a run) describe a project this way.
"""

from __future__ import annotations

import functools
import inspect
import os
import subprocess
from pathlib import Path
from typing import Any

from .naming import dataset_name, dataset_type, is_memory, is_parameter, local_file, storage_name
from .tracker import DatasetInfo, NodeInfo, RunInfo
from .viz_compat import viz_id


def git_info(project_path: Path, timeout_s: float = 2.0) -> dict[str, str] | None:
    """The git checkout holding the project (remote, commit, branch, path), or None outside git."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(project_path), *args], capture_output=True, text=True,
                                  timeout=timeout_s, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None

    top = git("rev-parse", "--show-toplevel")
    version = git("rev-parse", "HEAD")
    if top is None or version is None:
        return None
    remote = git("remote", "get-url", "origin")
    info = {"top": top, "version": version, "url": remote or Path(top).as_uri()}
    if remote:
        info["repoUrl"] = remote
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    if branch and branch != "HEAD":
        info["branch"] = branch
    relative = os.path.relpath(project_path.resolve(), Path(top).resolve())
    info["path"] = "" if relative == "." else relative
    return info


def _source_path(func: Any, top: str | None) -> str | None:
    if top is None:
        return None
    try:
        target = func.func if isinstance(func, functools.partial) else inspect.unwrap(func)
        source = inspect.getsourcefile(target)
    except (TypeError, OSError):
        return None
    if source is None:
        return None
    relative = os.path.relpath(Path(source).resolve(), Path(top).resolve())
    return None if relative.startswith("..") else relative


def describe_entry(datasets: dict[str, DatasetInfo], catalog: Any, entry: str, project_path: Path) -> None:
    name = dataset_name(entry)
    try:
        dataset = catalog.get(entry)
    except Exception:  # noqa: BLE001 - an entry that cannot be built is still a name in the graph
        dataset = None
    info = datasets.get(name)
    if info is None:
        info = datasets[name] = DatasetInfo(name=name, type="kedro.io.MemoryDataset" if dataset is None else "")
    info.catalog_names = sorted({*info.catalog_names, entry})
    if dataset is None:
        info.memory = True
        return
    if not info.type or info.memory:
        info.type = dataset_type(dataset)
    info.memory = is_memory(dataset)
    found = storage_name(dataset, project_path)
    if found and info.storage is None:
        info.storage = (found.namespace, found.name)
        info.local_file = local_file(dataset, project_path)
    metadata = getattr(dataset, "metadata", None) or {}
    # metadata.kedro is published; metadata.kedro-viz (layer, preview, styling) never leaves the project.
    kedro_meta = metadata.get("kedro") if isinstance(metadata, dict) else None
    if isinstance(kedro_meta, dict):
        if kedro_meta.get("owner"):
            info.owner = str(kedro_meta["owner"])
        if kedro_meta.get("description"):
            info.description = str(kedro_meta["description"])
        if isinstance(kedro_meta.get("consumers"), list):
            info.consumers = [str(c) for c in kedro_meta["consumers"]]


def describe_run(run_params: dict[str, Any], pipeline: Any, catalog: Any, project_path: Path, namespace: str | None,
                 project: str, parameters: dict[str, Any]) -> RunInfo:
    """The run's jobs and datasets: the parent job `<project>.<pipeline>`, one job per node, one dataset per entry."""
    pipelines = list(run_params.get("pipeline_names") or [])
    job_name = f"{project}.{'+'.join(pipelines) if pipelines else '__default__'}"
    git = git_info(project_path)
    nodes: dict[str, NodeInfo] = {}
    datasets: dict[str, DatasetInfo] = {}
    for node in pipeline.nodes:
        for entry in [n for n in [*node.inputs, *node.outputs] if not is_parameter(n)]:
            describe_entry(datasets, catalog, entry, project_path)
        nodes[node.name] = NodeInfo(
            name=node.name,
            inputs=list(dict.fromkeys(dataset_name(n) for n in node.inputs if not is_parameter(n))),
            outputs=list(dict.fromkeys(dataset_name(n) for n in node.outputs)),
            source_path=_source_path(node.func, git["top"] if git else None),
            namespace=node.namespace or None,
            viz_id=viz_id(str(node)),
        )
    from kedro import __version__ as kedro_version

    return RunInfo(
        namespace=namespace or project,
        job_name=job_name,
        kedro_run_id=str(run_params.get("run_id") or run_params.get("session_id")),
        kedro_version=str(run_params.get("kedro_version") or kedro_version),
        run_params=dict(run_params),
        nodes=nodes,
        datasets=datasets,
        parameters={**parameters, **(run_params.get("runtime_params") or {})},
        git=git,
    )
