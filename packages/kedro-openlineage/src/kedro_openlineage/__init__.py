"""kedro-openlineage: OpenLineage events for every `kedro run`."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def record_assertions(dataset: str, assertions: list[dict[str, Any]] | Any) -> bool:
    """Attaches data-quality results to a dataset in the current run, as the `dataQualityAssertions` facet.

    Call it from a node (the results travel on that node's COMPLETE or FAIL event, on the dataset when it is an input
    or output of the node, else as an extra input) or from a hook during the run (they travel on the run's final
    event). Each assertion is a dict with `assertion` (what was checked, e.g. "not_null") and `success`, and
    optionally `name`, `column`, `severity` ("error" or "warn"), `description`, `expected` and `actual`.

    `assertions` may instead be a Great Expectations (GX Core 1.x) result: what `ValidationDefinition.run()` or
    `Checkpoint.run()` returns; each expectation becomes an assertion (see `validation.assertions_from_gx`).

    Returns False when no run is active (the results are dropped); raises ValueError for a malformed assertion.

    Example:
        >>> record_assertions("companies", [{"assertion": "not_null", "column": "id", "success": True,
        ...                                  "severity": "error", "expected": "0", "actual": "0"}])
    """
    from .hooks import hooks

    return hooks.record_assertions(dataset, assertions)


__all__ = ["__version__", "record_assertions"]
