"""Loading a Kedro project from a command: its settings and its pipelines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import Settings


def load_context(project_path: Path, env: str | None) -> Any:
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    bootstrap_project(project_path)
    session = KedroSession.create(project_path=project_path, env=env)
    return session, session.load_context()


def load_settings(project_path: Path, env: str | None) -> Settings:
    """The plugin's settings as a run in this project and environment would see them."""
    from .hooks import hooks

    session, _ = load_context(project_path, env)
    session.close()
    if hooks._context is None:  # noqa: SLF001 - filled by after_context_created
        raise RuntimeError("The kedro-openlineage hooks are not registered in this project (see DISABLE_HOOKS_FOR_PLUGINS).")
    return hooks._context.settings  # noqa: SLF001
