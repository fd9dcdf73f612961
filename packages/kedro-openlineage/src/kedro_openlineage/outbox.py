"""How node records travel from ParallelRunner workers to the process that owns the run.

Each worker appends its records, one JSON line each, to `<outbox>/<pid>.ndjson`; the owner's reader thread picks up
complete lines every `poll_s` and a final `drain()` at the end of the run takes the rest. The folder is derived from
Kedro's run id alone, which every node hook receives, so a worker needs no state from the parent (it works with the
fork, spawn and forkserver start methods alike).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)


def outbox_dir(kedro_run_id: str) -> Path:
    digest = hashlib.sha1(kedro_run_id.encode("utf-8")).hexdigest()[:20]  # noqa: S324 - a name, not security
    return Path(tempfile.gettempdir()) / "kedro-openlineage-outbox" / digest


class OutboxWriter:
    """The worker side: appends records to this process's file in the run's outbox."""

    def __init__(self, folder: Path) -> None:
        self._path = folder / f"{os.getpid()}.ndjson"
        self._lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, default=str) + "\n"
        with self._lock, self._path.open("a", encoding="utf-8") as handle:
            handle.write(line)


class OutboxReader:
    """The owner side: polls the outbox folder and hands each record to `handle`, in file order per worker."""

    def __init__(self, folder: Path, handle: Callable[[dict[str, Any]], None], poll_s: float = 0.2) -> None:
        self.folder = folder
        self._handle = handle
        self._poll_s = poll_s
        self._offsets: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        folder.mkdir(parents=True, exist_ok=True)
        self._thread = threading.Thread(target=self._loop, name="kedro-openlineage-outbox", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self._poll_s):
            self.read_new()

    def read_new(self) -> None:
        with self._lock:
            try:
                files = sorted(self.folder.glob("*.ndjson"))
            except OSError:
                return
            for path in files:
                offset = self._offsets.get(path.name, 0)
                try:
                    with path.open("rb") as handle:
                        handle.seek(offset)
                        chunk = handle.read()
                except OSError:
                    continue
                end = chunk.rfind(b"\n")
                if end < 0:
                    continue
                self._offsets[path.name] = offset + end + 1
                for line in chunk[: end + 1].splitlines():
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        log.warning("kedro-openlineage: skipping an unreadable record in %s", path)
                        continue
                    try:
                        self._handle(record)
                    except Exception:  # noqa: BLE001
                        log.exception("kedro-openlineage: a worker record could not be turned into an event")

    def drain(self) -> None:
        """Stops polling, reads what is left and removes the folder."""
        self._stop.set()
        self._thread.join(2.0)
        self.read_new()
        shutil.rmtree(self.folder, ignore_errors=True)
