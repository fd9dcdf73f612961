"""Settings: `conf/<env>/openlineage.yml` (over `conf/base/`), then the OPENLINEAGE_* variables, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

#: The config-loader key and file pattern the plugin adds to the project's config loader.
CONFIG_KEY = "openlineage"
CONFIG_PATTERNS = ["openlineage*", "openlineage*/**", "**/openlineage*"]


class ConfigError(ValueError):
    """A setting has a value the plugin cannot use; the message names the setting and its source."""


@dataclass(frozen=True)
class Settings:
    """What the plugin needs to emit; built once per `kedro run` and never changed."""

    #: Namespace of the jobs and the catalog datasets. Default: the project's package name.
    namespace: str | None = None
    #: Base URL of the lineage server (e.g. http://127.0.0.1:5000). No URL, no HTTP sink.
    url: str | None = None
    #: Path of the lineage endpoint on that server.
    endpoint: str = "api/v1/lineage"
    #: Sent as `Authorization: Bearer <api_key>`.
    api_key: str | None = None
    #: Seconds one HTTP request may take (connect and read) before it counts as failed.
    timeout_s: float = 2.0
    #: Most seconds the end of a run waits for the queue to drain; what is left goes to the spool.
    shutdown_timeout_s: float = 5.0
    #: Seconds the HTTP sink stays marked down after a failure (events go straight to the spool meanwhile).
    retry_after_s: float = 10.0
    #: The file sink, relative to the project; rewritten at the start of every run. None turns it off.
    file_path: str | None = ".viz/lineage_events.json"
    #: Where events that could not be sent wait for the next run (or `kedro openlineage replay`).
    spool_path: str = ".viz/openlineage_spool.ndjson"
    #: Turns the plugin off entirely.
    disabled: bool = False
    #: Requests in flight at once, for events of different runs (the events of one run are sent in order).
    concurrency: int = 4
    #: Write Kedro-Viz 12.x's `.viz/kedro_pipeline_events.json`: "auto" (when Kedro-Viz's own hook skips the run),
    #: "always" or "never". See viz_compat.py.
    viz_file: str = "auto"
    #: Extra headers for every HTTP request.
    headers: Mapping[str, str] = field(default_factory=dict)

    def resolve(self, project_path: Path, relative: str) -> Path:
        path = Path(relative)
        return path if path.is_absolute() else project_path / path


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _boolean(value: Any, source: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{source} must be true or false; got {value!r}.")


def _seconds(value: Any, source: str) -> float:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{source} must be a number of seconds; got {value!r}.") from None
    if not 0 < seconds <= 600:
        raise ConfigError(f"{source} must be more than 0 and at most 600 seconds; got {value!r}.")
    return seconds


def settings_from(file_config: Mapping[str, Any] | None, env: Mapping[str, str] | None = None) -> Settings:
    """Builds the settings from the parsed `openlineage.yml` (may be empty) and the environment.

    The file accepts the plugin's own keys (`url`, `endpoint`, `api_key`, `namespace`, `timeout`,
    `shutdown_timeout`, `retry_after`, `concurrency`, `viz_file`, `file`, `spool`, `disabled`, `headers`) and, so that a file written for the
    OpenLineage Python client keeps working, its `transport: {type: http, url, endpoint, timeout, auth: {apiKey}}`
    block. Variables win over the file: OPENLINEAGE_URL, OPENLINEAGE_ENDPOINT, OPENLINEAGE_API_KEY,
    OPENLINEAGE_NAMESPACE and OPENLINEAGE_DISABLED, as the Python client reads them.
    """
    env = os.environ if env is None else env
    conf = dict(file_config or {})
    where = "openlineage.yml"
    known = {
        "url", "endpoint", "api_key", "namespace", "timeout", "shutdown_timeout", "retry_after", "file", "spool",
        "disabled", "headers", "transport", "concurrency", "viz_file",
    }
    unknown = sorted(set(conf) - known)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known keys are {', '.join(sorted(known))}.")
    values: dict[str, Any] = {}
    transport = conf.get("transport") or {}
    if transport:
        if not isinstance(transport, Mapping):
            raise ConfigError(f"{where}: transport must be a mapping; got {transport!r}.")
        kind = transport.get("type", "http")
        if kind != "http":
            raise ConfigError(
                f"{where}: transport.type {kind!r} is not supported; the plugin sends over http (and always writes "
                "its file sink). Use transport.type: http or the top-level url key."
            )
        for key, target in (("url", "url"), ("endpoint", "endpoint")):
            if transport.get(key) is not None:
                values[target] = str(transport[key])
        if transport.get("timeout") is not None:
            values["timeout_s"] = _seconds(transport["timeout"], f"{where}: transport.timeout")
        auth = transport.get("auth") or {}
        key = auth.get("apiKey") or auth.get("api_key") if isinstance(auth, Mapping) else None
        if key:
            values["api_key"] = str(key)
    for key, target in (("url", "url"), ("endpoint", "endpoint"), ("api_key", "api_key"), ("namespace", "namespace")):
        if conf.get(key) is not None:
            values[target] = str(conf[key])
    for key, target in (("timeout", "timeout_s"), ("shutdown_timeout", "shutdown_timeout_s"),
                        ("retry_after", "retry_after_s")):
        if conf.get(key) is not None:
            values[target] = _seconds(conf[key], f"{where}: {key}")
    if conf.get("concurrency") is not None:
        value = conf["concurrency"]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 32:
            raise ConfigError(f"{where}: concurrency must be a whole number from 1 to 32; got {value!r}.")
        values["concurrency"] = value
    if conf.get("viz_file") is not None:
        value = conf["viz_file"]
        mapped = {"auto": "auto", True: "always", False: "never", "always": "always", "never": "never"}.get(value)
        if mapped is None:
            raise ConfigError(f"{where}: viz_file must be auto, true or false; got {value!r}.")
        values["viz_file"] = mapped
    if "file" in conf:
        values["file_path"] = None if conf["file"] in (None, False) else str(conf["file"])
    if conf.get("spool") is not None:
        values["spool_path"] = str(conf["spool"])
    if conf.get("disabled") is not None:
        values["disabled"] = _boolean(conf["disabled"], f"{where}: disabled")
    if conf.get("headers") is not None:
        if not isinstance(conf["headers"], Mapping):
            raise ConfigError(f"{where}: headers must be a mapping of header name to value.")
        values["headers"] = {str(k): str(v) for k, v in conf["headers"].items()}

    for variable, target in (("OPENLINEAGE_URL", "url"), ("OPENLINEAGE_ENDPOINT", "endpoint"),
                             ("OPENLINEAGE_API_KEY", "api_key"), ("OPENLINEAGE_NAMESPACE", "namespace")):
        if env.get(variable):
            values[target] = env[variable]
    if env.get("OPENLINEAGE_DISABLED") is not None:
        values["disabled"] = _boolean(env["OPENLINEAGE_DISABLED"], "OPENLINEAGE_DISABLED")

    settings = replace(Settings(), **values)
    if settings.url is not None and not settings.url.startswith(("http://", "https://")):
        raise ConfigError(f"The lineage server URL must start with http:// or https://; got {settings.url!r}.")
    return settings
