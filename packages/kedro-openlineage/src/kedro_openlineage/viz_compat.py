"""Keeps Kedro-Viz 12.x's Workflow view working during the move to OpenLineage.

Kedro-Viz 12.x does not read `.viz/lineage_events.json`. Its Workflow view (`GET /api/run-status`) reads
`.viz/kedro_pipeline_events.json`, a JSON array written by its own `PipelineRunStatusHook`, and that hook writes
nothing for runs with another runner than SequentialRunner or with a filter (kedro-viz#2443). This module rebuilds
that array from the run's OpenLineage events, so that those runs show too.

Policy (`viz_file` in openlineage.yml): `auto` (default) writes the file only when Kedro-Viz is installed and its own
hook skips the run (decided by Kedro-Viz's own checks, so the two never write the same run); `true` always writes
(for projects that disable Kedro-Viz's hook); `false` never does.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

VIZ_FILE = ".viz/kedro_pipeline_events.json"


def viz_id(text: str) -> str:
    """Kedro-Viz's ids: the first 8 hex digits of sha1 of `str(node)` for a node, of the dataset name for a dataset."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]  # noqa: S324 - an id, as Kedro-Viz computes it


def viz_skips(run_params: dict[str, Any]) -> bool:
    """Whether Kedro-Viz's own hook leaves this run out (so the plugin should write the file in `auto` mode)."""
    try:
        from kedro_viz.integrations.kedro.hooks_utils import is_default_run, is_sequential_runner
    except ImportError:
        return False  # no Kedro-Viz (or a version without these checks): nobody reads the file
    try:
        return not (is_default_run(run_params) and is_sequential_runner(run_params))
    except Exception:  # noqa: BLE001
        return False


def _seconds_between(start: str | None, end: str | None) -> float:
    import datetime as dt

    if not start or not end:
        return 0.0
    try:
        return max(0.0, (dt.datetime.fromisoformat(end) - dt.datetime.fromisoformat(start)).total_seconds())
    except ValueError:
        return 0.0


def viz_events(events: list[dict[str, Any]], parent_run_id: str, node_ids: dict[str, str]) -> list[dict[str, Any]]:
    """The Kedro-Viz event array for one run, from its OpenLineage events (in emission order).

    `node_ids` maps a node's name to its Kedro-Viz id (sha1 of `str(node)`).
    """
    out: list[dict[str, Any]] = []
    started: dict[str, str] = {}
    failed_node: str | None = None
    aborted: list[str] = []
    for event in events:
        job = event["job"]["name"]
        kind = event.get("eventType")
        time = event.get("eventTime")
        facets = event["run"].get("facets") or {}
        if event["run"]["runId"] == parent_run_id:
            if kind == "START":
                out.append({"event": "before_pipeline_run", "timestamp": time})
            elif kind == "COMPLETE":
                out.append({"event": "after_pipeline_run", "timestamp": time})
            elif kind in ("FAIL", "ABORT"):
                error = facets.get("errorMessage") or {}
                record: dict[str, Any] = {"event": "on_pipeline_error", "error": error.get("message", ""),
                                          "timestamp": time, "traceback": error.get("stackTrace") or ""}
                if failed_node:
                    record.update({"node": failed_node, "node_id": node_ids.get(failed_node, viz_id(failed_node))})
                elif aborted:
                    record.update({"node": aborted[0], "node_id": node_ids.get(aborted[0], viz_id(aborted[0])),
                                   "status": "not_started"})
                out.append(record)
            continue
        node_id = node_ids.get(job, viz_id(job))
        if kind == "START":
            started[job] = time
        elif kind == "COMPLETE":
            for dataset in event.get("inputs", []):
                out.append({"event": "after_dataset_loaded", "dataset": dataset["name"],
                            "node_id": viz_id(dataset["name"]), "status": "Available"})
            out.append({"event": "after_node_run", "node": job, "node_id": node_id,
                        "duration": _seconds_between(started.get(job), time), "status": "success"})
            for dataset in event.get("outputs", []):
                saved: dict[str, Any] = {"event": "after_dataset_saved", "dataset": dataset["name"],
                                         "node_id": viz_id(dataset["name"]), "status": "Available"}
                size = ((dataset.get("outputFacets") or {}).get("outputStatistics") or {}).get("size")
                if size is not None:
                    saved["size"] = size
                out.append(saved)
        elif kind == "FAIL":
            error = facets.get("errorMessage") or {}
            failed_node = failed_node or job
            out.append({"event": "on_node_error", "node": job, "node_id": node_id,
                        "error": error.get("message", ""), "timestamp": time,
                        "traceback": error.get("stackTrace") or ""})
        elif kind == "ABORT":
            aborted.append(job)
    return out


def write_viz_file(project_path: Path, records: list[dict[str, Any]]) -> None:
    path = project_path / VIZ_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records, indent=2), encoding="utf-8")
    except OSError:
        log.exception("kedro-openlineage: could not write %s", path)
