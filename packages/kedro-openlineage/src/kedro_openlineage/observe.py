"""What a node's data tells: schemas, row counts and passthrough columns, as JSON-ready values.

This runs where the node runs (the main process, a thread or a ParallelRunner worker), so it only reads metadata
that is cheap: column names and types, and `len()` of a pandas frame. A Spark frame gives its schema (no count:
that would run a job).
"""

from __future__ import annotations

from typing import Any, Mapping

Schema = list[list[str]]  # [[column, type], ...]


def _is_pandas_frame(data: Any) -> bool:
    return type(data).__module__.startswith("pandas") and hasattr(data, "dtypes") and hasattr(data, "columns")


def _is_spark_frame(data: Any) -> bool:
    return type(data).__module__.startswith("pyspark") and hasattr(data, "schema")


def describe(data: Any) -> dict[str, Any] | None:
    """`{"schema": [[name, type], ...], "rows": n}` for a pandas frame, the schema alone for Spark, else None."""
    try:
        if _is_pandas_frame(data):
            return {
                "schema": [[str(column), str(dtype)] for column, dtype in data.dtypes.items()],
                "rows": int(len(data)),
            }
        if _is_spark_frame(data):
            return {"schema": [[f.name, f.dataType.simpleString()] for f in data.schema.fields]}
    except Exception:  # noqa: BLE001 - an odd frame must not break the run
        return None
    return None


def passthrough_columns(
    inputs: Mapping[str, dict[str, Any]], outputs: Mapping[str, dict[str, Any]]
) -> dict[str, dict[str, list[str]]]:
    """For each output column, the inputs holding a column of the same name and type: `{output: {column: [input]}}`.

    This is an inference (a renamed or recomputed column is missed, a coincidental match is kept), which is why
    the facet built from it says "inferred".
    """
    found: dict[str, dict[str, list[str]]] = {}
    typed_inputs = {
        name: {column: kind for column, kind in described.get("schema", [])} for name, described in inputs.items()
    }
    for output, described in outputs.items():
        columns: dict[str, list[str]] = {}
        for column, kind in described.get("schema", []):
            sources = [name for name, schema in typed_inputs.items() if schema.get(column) == kind]
            if sources:
                columns[column] = sources
        if columns:
            found[output] = columns
    return found
