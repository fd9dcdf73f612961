"""The Kedro hooks: registered through the `kedro.hooks` entry point, so installing the package is the set-up.

Every hook body is guarded: a problem in the plugin is logged and never reaches the run.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TypeVar

from kedro.framework.hooks import hook_impl

from .config import CONFIG_KEY, CONFIG_PATTERNS, ConfigError, Settings, settings_from
from .emitter import Emitter
from .model import describe_run
from .naming import dataset_name, is_parameter
from .observe import describe, passthrough_columns
from .outbox import OutboxReader, OutboxWriter, outbox_dir
from .tracker import RunTracker, _format_value, now
from .validation import assertions_from_error, expand_assertions, normalise_assertion
from .viz_compat import viz_events, viz_skips, write_viz_file

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def _guarded(method: F) -> F:
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except Exception:  # noqa: BLE001 - lineage is best effort; the run comes first
            log.exception("kedro-openlineage: %s failed; the run goes on without this lineage", method.__name__)
            return None

    return wrapper  # type: ignore[return-value]


@dataclass
class _Context:
    settings: Settings
    project_path: Path
    package_name: str | None
    parameters: dict[str, Any]


@dataclass
class _ActiveRun:
    kedro_run_id: str
    owner_pid: int
    tracker: RunTracker
    emitter: Emitter
    reader: OutboxReader
    project_path: Path


class OpenLineageHooks:
    """Emits OpenLineage events for each `kedro run`; see the package README for the mapping."""

    def __init__(self) -> None:
        self._context: _Context | None = None
        self._run: _ActiveRun | None = None
        self._writers: dict[str, OutboxWriter] = {}
        self._local = threading.local()
        self._pending: dict[str, dict[str, Any]] = {}
        self._pending_lock = threading.Lock()

    # -- context and run ---------------------------------------------------------------------------------------

    @hook_impl
    @_guarded
    def after_context_created(self, context: Any) -> None:
        file_config: dict[str, Any] = {}
        loader = context.config_loader
        try:
            loader.config_patterns.setdefault(CONFIG_KEY, CONFIG_PATTERNS)
            file_config = dict(loader[CONFIG_KEY] or {})
        except Exception as error:  # noqa: BLE001 - MissingConfigException: no openlineage.yml, use the defaults
            if type(error).__name__ != "MissingConfigException":
                raise
        try:
            settings = settings_from(file_config)
        except ConfigError as error:
            log.error("kedro-openlineage is off for this run: %s", error)
            settings = Settings(disabled=True)
        package_name = getattr(context, "_package_name", None)
        if not package_name:
            from kedro.framework.project import PACKAGE_NAME

            package_name = PACKAGE_NAME
        try:
            parameters = dict(context.params or {})
        except Exception:  # noqa: BLE001
            parameters = {}
        self._context = _Context(settings, Path(context.project_path), package_name, parameters)

    @hook_impl
    @_guarded
    def before_pipeline_run(self, run_params: dict[str, Any], pipeline: Any, catalog: Any) -> None:
        if self._run is not None and self._run.owner_pid == os.getpid():
            self._close(None)
        project_path = Path(run_params.get("project_path") or (self._context.project_path if self._context else "."))
        if self._context is None:
            try:
                settings = settings_from({})
            except ConfigError as error:
                log.error("kedro-openlineage is off for this run: %s", error)
                return
            from kedro.framework.project import PACKAGE_NAME

            self._context = _Context(settings, project_path, PACKAGE_NAME, {})
        context = self._context
        if context.settings.disabled:
            return
        info = describe_run(run_params, pipeline, catalog, project_path, context.settings.namespace,
                            context.package_name or project_path.name, context.parameters)
        viz = context.settings.viz_file
        write_viz = viz == "always" or (viz == "auto" and viz_skips(run_params))
        emitter = Emitter(context.settings, project_path)
        tracker = RunTracker(info, emitter.emit, keep_events=write_viz)
        reader = OutboxReader(outbox_dir(info.kedro_run_id), tracker.handle)
        self._run = _ActiveRun(info.kedro_run_id, os.getpid(), tracker, emitter, reader, project_path)
        with self._pending_lock:
            self._pending.clear()
        tracker.start()

    @hook_impl
    @_guarded
    def after_pipeline_run(self, run_params: dict[str, Any], run_result: Any, pipeline: Any, catalog: Any) -> None:
        self._close(None)

    @hook_impl
    @_guarded
    def on_pipeline_error(self, error: BaseException, run_params: dict[str, Any], pipeline: Any, catalog: Any) -> None:
        self._close(error)

    def _close(self, error: BaseException | None) -> None:
        active = self._run
        if active is None or active.owner_pid != os.getpid():
            return
        self._run = None
        try:
            active.reader.drain()
            with self._pending_lock:
                unfinished = list(self._pending.values())
                self._pending.clear()
            text = "".join(traceback.format_exception(error)) if error is not None else None
            failed_checks = assertions_from_error(error)
            if failed_checks and not unfinished:
                # A load failed validation: the run's final event carries the failed checks.
                active.tracker.handle({"kind": "assertions", "node": "", "assertions": failed_checks})
            for entry in unfinished:
                # after_node_run came but a save did not: the node failed while saving.
                record = {**entry["record"], "kind": "fail" if error else "complete", "time": now()}
                if error is not None:
                    record["error"] = f"Saving the outputs failed: {type(error).__name__}: {error}"
                    record["traceback"] = text
                    record["assertions"] = _merged(record.get("assertions") or {}, failed_checks)
                active.tracker.handle(record)
            active.tracker.finish(error, text)
            if active.tracker.events is not None:
                node_ids = {name: node.viz_id or name for name, node in active.tracker.info.nodes.items()}
                write_viz_file(active.project_path, viz_events(active.tracker.events, active.tracker.run_id, node_ids))
        finally:
            active.emitter.close()

    # -- nodes and datasets ------------------------------------------------------------------------------------

    def _deliver(self, kedro_run_id: str, record: dict[str, Any]) -> None:
        active = self._run
        if active is not None and active.owner_pid == os.getpid() and active.kedro_run_id == kedro_run_id:
            active.tracker.handle(record)
            return
        # A ParallelRunner worker: the process that owns the run made the outbox folder in before_pipeline_run.
        folder = outbox_dir(kedro_run_id)
        if not folder.is_dir():
            return
        writer = self._writers.get(kedro_run_id)
        if writer is None:
            writer = self._writers[kedro_run_id] = OutboxWriter(folder)
        writer.write(record)

    def _owns_run(self) -> bool:
        active = self._run
        return active is not None and active.owner_pid == os.getpid()

    @hook_impl
    @_guarded
    def before_dataset_loaded(self, dataset_name: str, node: Any) -> None:
        if self._owns_run():
            self._run.tracker.handle({"kind": "loading", "node": node.name})  # type: ignore[union-attr]

    @hook_impl
    @_guarded
    def before_node_run(self, node: Any, catalog: Any, inputs: dict[str, Any], is_async: bool, run_id: str) -> None:
        self._local.node = node.name
        self._local.assertions = {}
        params = {
            key.removeprefix("params:"): _format_value(value) for key, value in inputs.items() if is_parameter(key)
        }
        self._deliver(run_id, {"kind": "start", "node": node.name, "time": now(), "params": params})

    def _described_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        described = {}
        for key, value in inputs.items():
            if not is_parameter(key):
                found = describe(value)
                if found:
                    described[key] = found
        return described

    def _take_assertions(self, node_name: str) -> dict[str, list[dict[str, Any]]]:
        assertions = getattr(self._local, "assertions", None) or {}
        if getattr(self._local, "node", None) == node_name:
            self._local.node = None
            self._local.assertions = {}
        return assertions

    @hook_impl
    @_guarded
    def after_node_run(self, node: Any, catalog: Any, inputs: dict[str, Any], outputs: dict[str, Any],
                       is_async: bool, run_id: str) -> None:
        described_inputs = self._described_inputs(inputs)
        described_outputs = {key: found for key, value in outputs.items() if (found := describe(value))}
        record = {
            "kind": "complete",
            "node": node.name,
            "inputs": described_inputs,
            "outputs": described_outputs,
            "columns": passthrough_columns(described_inputs, described_outputs),
            "assertions": self._take_assertions(node.name),
        }
        remaining = set(node.outputs)
        if not remaining:
            self._deliver(run_id, {**record, "time": now()})
            return
        # The node is done when its outputs are saved (Kedro calls after_node_run before saving them).
        with self._pending_lock:
            self._pending[node.name] = {"record": record, "remaining": remaining, "run_id": run_id}

    @hook_impl
    @_guarded
    def after_dataset_saved(self, dataset_name: str, data: Any, node: Any) -> None:
        with self._pending_lock:
            entry = self._pending.get(node.name)
            if entry is None:
                return
            entry["remaining"].discard(dataset_name)
            if entry["remaining"]:
                return
            del self._pending[node.name]
        self._deliver(entry["run_id"], {**entry["record"], "time": now()})

    @hook_impl
    @_guarded
    def on_node_error(self, error: BaseException, node: Any, catalog: Any, inputs: dict[str, Any], is_async: bool,
                      run_id: str) -> None:
        self._deliver(run_id, {
            "kind": "fail",
            "node": node.name,
            "time": now(),
            "error": f"{type(error).__name__}: {error}",
            "traceback": "".join(traceback.format_exception(error)),
            "inputs": self._described_inputs(inputs),
            "assertions": _merged(self._take_assertions(node.name), assertions_from_error(error)),
        })

    # -- validation ----------------------------------------------------------------------------------------------

    def record_assertions(self, dataset: str, assertions: Any) -> bool:
        """See `kedro_openlineage.record_assertions`."""
        items = [normalise_assertion(item) for item in expand_assertions(assertions)]
        name = dataset_name(dataset)
        if getattr(self._local, "node", None):
            self._local.assertions.setdefault(name, []).extend(items)
            return True
        if self._owns_run():
            self._run.tracker.handle({"kind": "assertions", "node": "", "assertions": {name: items}})  # type: ignore[union-attr]
            return True
        log.warning("kedro-openlineage: record_assertions(%r) was called outside a kedro run; ignored", dataset)
        return False


def _merged(*parts: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    merged: dict[str, list[dict[str, Any]]] = {}
    for part in parts:
        for dataset, items in part.items():
            merged.setdefault(dataset, []).extend(items)
    return merged


#: The instance Kedro registers through the `kedro.hooks` entry point.
hooks = OpenLineageHooks()
