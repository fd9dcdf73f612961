"""One emitter, two outputs: the file sink (always) and the HTTP sink (when a URL is set).

Best effort by construction: `emit()` only puts the event on a queue; one background thread writes the file and
posts over HTTP. An HTTP failure marks the sink down for a while and sends events to the spool file instead, so a
dead backend costs one failed connection, not one per event. `close()` waits at most `shutdown_timeout_s`; whatever
is still queued then is spooled (a local append), so a run never waits on the network for longer than that bound.
Spooled events are replayed, oldest first, when the next emitter with the same spool starts (or by
`kedro openlineage replay`).
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from .config import Settings

log = logging.getLogger(__name__)

_STOP = object()


def _append_lines(path: Path, events: list[dict[str, Any]]) -> None:
    if not events:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(event, sort_keys=True) + "\n" for event in events))


def read_spool(path: Path) -> list[dict[str, Any]]:
    """The events waiting in a spool file; a torn last line (a crash mid-write) is skipped."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                log.warning("kedro-openlineage: skipping an unreadable line in the spool %s", path)
    return events


class HttpSink:
    """Posts one event per request with openlineage-python's HTTP transport; returns whether it was accepted."""

    def __init__(self, settings: Settings) -> None:
        from openlineage.client.transport.http import HttpConfig

        auth = {"type": "api_key", "apiKey": settings.api_key} if settings.api_key else {}
        config = HttpConfig.from_dict(
            {
                "url": settings.url,
                "endpoint": settings.endpoint,
                "timeout": settings.timeout_s,
                "auth": auth,
                "custom_headers": dict(settings.headers),
                # One quick retry for a dropped connection; a real outage is handled by the spool, not by waiting.
                "retry": {"total": 1, "connect": 1, "read": 0, "backoff_factor": 0.05,
                          "status_forcelist": [502, 503, 504]},
            }
        )
        self._config = config
        self._local = threading.local()
        self._transports: list[Any] = []
        self._lock = threading.Lock()

    def _transport(self) -> Any:
        # One transport (one requests.Session) per sending thread: a Session is not documented as thread-safe.
        transport = getattr(self._local, "transport", None)
        if transport is None:
            from openlineage.client.transport.http import HttpTransport

            transport = self._local.transport = HttpTransport(self._config)
            with self._lock:
                self._transports.append(transport)
        return transport

    def send(self, event: dict[str, Any]) -> None:
        """Raises on any failure (refused, timed out, 4xx/5xx)."""
        # The transport serialises with openlineage-python's Serde, which takes the event as a dict too.
        self._transport().emit(event)

    def close(self) -> None:
        with self._lock:
            transports, self._transports = self._transports, []
        for transport in transports:
            transport.close()


class Emitter:
    """Queue plus background thread feeding the file sink and the HTTP sink; see the module docstring."""

    def __init__(
        self,
        settings: Settings,
        project_path: Path,
        *,
        http: HttpSink | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._file = settings.resolve(project_path, settings.file_path) if settings.file_path else None
        self._spool = settings.resolve(project_path, settings.spool_path)
        self._http = http if http is not None else (HttpSink(settings) if settings.url else None)
        self._clock = clock
        self._queue: queue.Queue[Any] = queue.Queue()
        self._down_until = 0.0
        self._lock = threading.Lock()
        self._file_handle = None
        self._closed = False
        self._abandoned = False
        self._undelivered: list[dict[str, Any]] = []
        self._replaying: Path | None = None
        self._backlog: list[dict[str, Any]] = []  # spooled events after the chunk being replayed
        self.stats = {"sent": 0, "spooled": 0, "replayed": 0, "written": 0}
        if self._file is not None:
            # Rewritten every run: Kedro-Viz's workflow view shows the last run only; the server keeps the history.
            self._file.parent.mkdir(parents=True, exist_ok=True)
            self._file_handle = self._file.open("w", encoding="utf-8")
        self._pool = (
            ThreadPoolExecutor(settings.concurrency, thread_name_prefix="kedro-openlineage-http")
            if self._http is not None and settings.concurrency > 1
            else None
        )
        self._thread = threading.Thread(target=self._work, name="kedro-openlineage-emitter", daemon=True)
        self._thread.start()

    def emit(self, event: dict[str, Any]) -> None:
        """Queues one event (already a JSON-ready dict); never blocks on I/O and never raises."""
        if self._closed:
            log.warning("kedro-openlineage: an event arrived after the emitter closed; it goes to the spool")
            self._spool_events([event])
            return
        self._queue.put(event)

    def close(self) -> None:
        """Stops the thread within `shutdown_timeout_s`; anything not sent by then is spooled."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join(self._settings.shutdown_timeout_s)
        if self._thread.is_alive():
            # The thread is stuck in a request. Take over: what it has not delivered and what is still queued go to
            # the spool now, and the thread gives up when its request returns. The event in flight may arrive and be
            # spooled as well; the server deduplicates identical events.
            with self._lock:
                self._abandoned = True
                undelivered, self._undelivered = self._undelivered, []
            leftover = []
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not _STOP:
                    leftover.append(item)
            with self._lock:
                self._write_file(leftover)
            self._spool_events(undelivered + leftover, force=True)
            with self._lock:
                replaying, self._replaying = self._replaying, None
            if replaying is not None:
                replaying.unlink(missing_ok=True)
            log.warning(
                "kedro-openlineage: the lineage server did not answer within %.1fs; %d event(s) spooled to %s",
                self._settings.shutdown_timeout_s, len(undelivered) + len(leftover), self._spool,
            )
        with self._lock:
            if self._file_handle is not None:
                self._file_handle.close()
                self._file_handle = None
        if self._pool is not None:
            self._pool.shutdown(wait=not self._thread.is_alive(), cancel_futures=True)
        if self._http is not None and not self._thread.is_alive():
            self._http.close()

    # -- background thread -------------------------------------------------------------------------------------

    def _work(self) -> None:
        try:
            self._replay()
        except Exception:  # noqa: BLE001 - a broken spool must not stop live events
            log.exception("kedro-openlineage: replaying the spool failed")
        while True:
            item = self._queue.get()
            batch = [item]
            # Take what else is waiting, so the file is written in one go under load.
            while len(batch) < 500:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(event is _STOP for event in batch)
            events = [event for event in batch if event is not _STOP]
            try:
                with self._lock:
                    self._write_file(events)
                self._deliver(events)
            except Exception:  # noqa: BLE001 - the thread must survive anything a sink does
                log.exception("kedro-openlineage: emitting %d event(s) failed", len(events))
            if stop:
                return

    def _write_file(self, events: list[dict[str, Any]]) -> None:
        if self._file_handle is None or not events:
            return
        self._file_handle.write("".join(json.dumps(event, sort_keys=True) + "\n" for event in events))
        self._file_handle.flush()
        self.stats["written"] += len(events)

    def _deliver(self, events: list[dict[str, Any]]) -> None:
        if self._http is None or not events:
            return
        with self._lock:
            if self._abandoned:
                return
            self._undelivered = list(events) + self._backlog
        # Events of one run go in order over one connection (a server that keeps the last state it received, as
        # Marquez does, must see START before COMPLETE); different runs go in parallel, since one request at a time
        # makes the end of a run wait for the server's latency once per event.
        groups: dict[Any, list[dict[str, Any]]] = {}
        for event in events:
            groups.setdefault((event.get("run") or {}).get("runId"), []).append(event)
        if len(groups) == 1 or self._pool is None:
            unsent = [e for group in groups.values() for e in self._send_in_order(group)]
        else:
            futures = [self._pool.submit(self._send_in_order, group) for group in groups.values()]
            unsent = [e for future in futures for e in future.result()]
        if unsent:
            keep = {id(e) for e in unsent}
            self._spool_events([e for e in events if id(e) in keep])
        with self._lock:
            self._undelivered = list(self._backlog)

    def _send_in_order(self, group: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Sends the events of one run in order; returns those not sent (the sink is down, or went down)."""
        assert self._http is not None
        for index, event in enumerate(group):
            if self._abandoned or self._clock() < self._down_until:
                return group[index:]
            try:
                self._http.send(event)
                with self._lock:
                    self.stats["sent"] += 1
            except Exception as error:  # noqa: BLE001
                with self._lock:
                    already_down = self._clock() < self._down_until
                    self._down_until = self._clock() + self._settings.retry_after_s
                if not already_down:
                    log.warning(
                        "kedro-openlineage: could not send to %s (%s); spooling to %s and retrying in %.0fs",
                        self._settings.url, error, self._spool, self._settings.retry_after_s,
                    )
                return group[index:]
        return []

    def _spool_events(self, events: list[dict[str, Any]], force: bool = False) -> None:
        if not events or self._http is None:
            return
        try:
            with self._lock:
                if self._abandoned and not force:
                    return  # close() has spooled these already
                self._undelivered = []
                _append_lines(self._spool, events)
            self.stats["spooled"] += len(events)
        except OSError:
            log.exception("kedro-openlineage: could not write the spool %s; %d event(s) lost", self._spool, len(events))

    def _replay(self) -> None:
        if self._http is None:
            return
        replaying = self._spool.with_suffix(self._spool.suffix + f".replay-{os.getpid()}")
        try:
            # Claim the spool atomically so that events spooled from now on start a fresh file.
            os.replace(self._spool, replaying)
        except FileNotFoundError:
            return
        self._replaying = replaying
        pending = read_spool(replaying)
        sent_before = self.stats["sent"]
        for start in range(0, len(pending), 500):
            if self._abandoned:
                return  # close() spooled the rest and removed the claimed file
            chunk = pending[start : start + 500]
            with self._lock:
                self._backlog = pending[start + 500 :]
            if self._clock() < self._down_until:
                self._spool_events(chunk)  # the sink went down during the replay: keep the rest, in order
            else:
                self._deliver(chunk)
        self.stats["replayed"] = self.stats["sent"] - sent_before
        self.stats["sent"] = sent_before
        with self._lock:
            self._undelivered, self._backlog = [], []
            self._replaying = None
        replaying.unlink(missing_ok=True)
        if self.stats["replayed"]:
            log.info("kedro-openlineage: replayed %d spooled event(s) to %s", self.stats["replayed"], self._settings.url)


def replay_spool(settings: Settings, project_path: Path) -> dict[str, int]:
    """Sends the spooled events now (the `kedro openlineage replay` command); returns the counts."""
    # No file sink: the file holds the last run and must not be rewritten by a replay.
    emitter = Emitter(replace(settings, file_path=None), project_path)
    emitter.close()
    return dict(emitter.stats)
