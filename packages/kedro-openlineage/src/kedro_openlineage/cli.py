"""`kedro openlineage ...`: project commands (registered through the `kedro.project_commands` entry point)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click


@click.group(name="kedro-openlineage")
def commands() -> None:
    pass


@commands.group()
def openlineage() -> None:
    """OpenLineage: push the pipeline's structure, replay spooled events."""


@openlineage.command()
@click.option("--env", "-e", default=None, help="Kedro configuration environment.")
def replay(env: str | None) -> None:
    """Send the events spooled while the lineage server was down."""
    from .emitter import replay_spool
    from .project import load_settings

    settings = load_settings(Path.cwd(), env)
    if not settings.url:
        raise click.ClickException("No lineage server URL: set OPENLINEAGE_URL or url in conf/<env>/openlineage.yml.")
    stats = replay_spool(settings, Path.cwd())
    click.echo(f"replayed {stats['replayed']} event(s), {stats['spooled']} still spooled")


@openlineage.command()
@click.option("--pipeline", "-p", "pipeline_name", default=None, help="The registered pipeline (default __default__).")
@click.option("--env", "-e", default=None, help="Kedro configuration environment.")
def push(pipeline_name: str | None, env: str | None) -> None:
    """Send the pipeline's structure and catalog metadata without running it: a DatasetEvent per dataset and a
    JobEvent per node and for the pipeline, so the graph exists before the first run."""
    from kedro.framework.project import pipelines

    from .emitter import Emitter
    from .hooks import hooks
    from .model import describe_run
    from .project import load_context
    from .tracker import RunTracker

    project_path = Path.cwd()
    session, context = load_context(project_path, env)
    try:
        known = hooks._context  # noqa: SLF001 - filled by after_context_created
        if known is None:
            raise click.ClickException("The kedro-openlineage hooks are not registered in this project.")
        settings = known.settings
        if not settings.url:
            raise click.ClickException(
                "No lineage server URL: set OPENLINEAGE_URL or url in conf/<env>/openlineage.yml.")
        name = pipeline_name or "__default__"
        if name not in pipelines:
            raise click.ClickException(f"No pipeline named {name!r}; registered: {', '.join(sorted(pipelines))}.")
        info = describe_run({"pipeline_names": [pipeline_name] if pipeline_name else [], "run_id": "push"},
                            pipelines[name], context.catalog, project_path, settings.namespace,
                            known.package_name or project_path.name, {})
        tracker = RunTracker(info, lambda event: None)
        events = tracker.structure_events()
        jobs = len(info.nodes) + len(tracker.modular_pipelines()) + 1
    finally:
        session.close()
    # No file sink: the file holds the last run, and a push is not a run. Unsent events wait in the spool.
    emitter = Emitter(replace(settings, file_path=None), project_path)
    for event in events:
        emitter.emit(event)
    emitter.close()
    click.echo(f"pushed {jobs} job(s) and {len(info.datasets)} dataset(s) to {settings.url}: "
               f"{emitter.stats['sent']} event(s) sent, {emitter.stats['spooled']} spooled")
    if emitter.stats["spooled"]:
        raise click.ClickException("The lineage server did not take every event; run `kedro openlineage replay` later.")
