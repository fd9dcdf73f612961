"""`kedro openlineage ...`: project commands."""

from __future__ import annotations

import click


@click.group(name="kedro-openlineage")
def commands() -> None:
    pass


@commands.group()
def openlineage() -> None:
    """OpenLineage: replay spooled events, push the pipeline's structure."""


@openlineage.command()
@click.option("--env", "-e", default=None, help="Kedro configuration environment.")
def replay(env: str | None) -> None:
    """Send the events spooled while the lineage server was down."""
    from pathlib import Path

    from .emitter import replay_spool
    from .project import load_settings

    settings = load_settings(Path.cwd(), env)
    stats = replay_spool(settings, Path.cwd())
    click.echo(f"replayed {stats['replayed']} event(s), {stats['spooled']} still spooled")
