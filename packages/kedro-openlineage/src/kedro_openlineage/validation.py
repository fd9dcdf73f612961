"""Validation results as `dataQualityAssertions`: Kedro's own catalog validation, and `record_assertions()`.

Kedro 1.x validates catalog entries that declare a `validator:` (a callable, a Validator class or a pandera model,
which Kedro adapts). A failure with `severity: error` raises `DataValidationError` (dataset name, load or save, the
validator, and each failed check with its column, count and examples). The plugin turns that error, wherever it
surfaces (a node's error or the run's), into failed assertions on the dataset. A failure with `severity: warn` is only
logged by Kedro and passes unseen; call `record_assertions` for results you want on the stream.
"""

from __future__ import annotations

from typing import Any

from .naming import dataset_name

ASSERTION_KEYS = ("assertion", "success", "column", "severity", "name", "description", "expected", "actual")


def normalise_assertion(item: Any) -> dict[str, Any]:
    """One assertion as the facet wants it; raises ValueError naming what is missing or wrong."""
    if not isinstance(item, dict):
        item = {key: getattr(item, key, None) for key in ASSERTION_KEYS}
    if "assertion" not in item or "success" not in item:
        raise ValueError("Each assertion needs at least 'assertion' (what was checked) and 'success' (a bool).")
    severity = item.get("severity")
    if severity is not None and severity not in ("error", "warn"):
        raise ValueError(f"An assertion's severity is 'error' or 'warn'; got {severity!r}.")
    return {key: item.get(key) for key in ASSERTION_KEYS if item.get(key) is not None}


def assertions_from_error(error: BaseException | None) -> dict[str, list[dict[str, Any]]]:
    """The failed checks of a Kedro `DataValidationError` in `error` or its causes: `{dataset: [assertion]}`."""
    seen: set[int] = set()
    current = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        name = getattr(current, "dataset_name", None)
        if type(current).__name__ == "DataValidationError" and name:
            validator = getattr(current, "validator", None)
            mode = getattr(current, "mode", None)
            items = []
            for failure in getattr(current, "failures", None) or []:
                examples = list(getattr(failure, "failure_examples", None) or [])
                count = getattr(failure, "failure_count", 1)
                actual = f"{count} failing case{'s' if count != 1 else ''}"
                if examples:
                    actual += f" (e.g. {', '.join(str(e) for e in examples[:5])})"
                items.append({
                    "assertion": failure.check or failure.message or "validation", "success": False,
                    "column": failure.column, "severity": "error", "name": validator,
                    "description": f"{failure.message} (on {mode})" if mode else failure.message,
                    "expected": "0 failing cases", "actual": actual,
                })
            if not items:
                items.append({"assertion": validator or "validation", "success": False, "severity": "error",
                              "name": validator, "description": str(getattr(current, "message", current))})
            return {dataset_name(name): [normalise_assertion(i) for i in items]}
        current = current.__cause__ or current.__context__
    return {}
