"""Validation results as `dataQualityAssertions`: Kedro's own catalog validation, `record_assertions()`, and Great
Expectations (GX Core 1.x) results passed to it.

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


#: Expectation arguments that say how GX runs a check, not what it expects.
_GX_RUN_KWARGS = {"batch_id", "column", "result_format", "include_config", "catch_exceptions", "meta", "row_condition",
                  "condition_parser", "windows"}
#: GX severities: a failed critical expectation is an error, the others warnings.
_GX_SEVERITY = {"critical": "error", "warning": "warn", "info": "warn"}


def _is_gx_suite_result(value: Any) -> bool:
    results = getattr(value, "results", None)
    return isinstance(results, list) and all(hasattr(r, "expectation_config") for r in results) and hasattr(
        value, "suite_name")


def expand_assertions(value: Any) -> list[Any]:
    """The assertions in `value`: a list of assertions (dicts), or a Great Expectations result (a
    CheckpointResult, an ExpectationSuiteValidationResult, or one ExpectationValidationResult), converted."""
    if hasattr(value, "run_results") and isinstance(value.run_results, dict):
        return [a for result in value.run_results.values() for a in assertions_from_gx(result)]
    if _is_gx_suite_result(value) or hasattr(value, "expectation_config"):
        return assertions_from_gx(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ValueError("Assertions are a list of dicts or a Great Expectations validation result; "
                     f"got {type(value).__name__}.")


def _gx_value(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _gx_one(result: Any, suite: str | None) -> dict[str, Any]:
    config = result.expectation_config
    kwargs = dict(getattr(config, "kwargs", None) or {})
    outcome = getattr(result, "result", None) or {}
    severity = getattr(config, "severity", None)
    severity = getattr(severity, "value", severity)
    expected = ", ".join(f"{key}={_gx_value(value)}" for key, value in kwargs.items()
                         if key not in _GX_RUN_KWARGS and value is not None)
    exception = getattr(result, "exception_info", None) or {}
    if exception.get("raised_exception"):
        actual = f"error: {exception.get('exception_message')}"
    elif "observed_value" in outcome:
        actual = _gx_value(outcome["observed_value"])
    elif "unexpected_count" in outcome:
        count = outcome["unexpected_count"]
        actual = f"{count} unexpected of {outcome.get('element_count')}"
        examples = [e for e in outcome.get("partial_unexpected_list") or [] if e == e]  # NaN is not an example
        if examples:
            actual += f" (e.g. {', '.join(_gx_value(e) for e in examples[:5])})"
    else:
        actual = "passed" if result.success else "failed"
    meta = getattr(config, "meta", None) or {}
    return {
        "assertion": config.type,
        "success": bool(result.success),
        "column": kwargs.get("column"),
        "severity": _GX_SEVERITY.get(str(severity).lower(), "error") if severity is not None else "error",
        # Servers tell assertions apart by name, else by type and column: only a name the user gave (meta name,
        # description) is one; the suite's would make every expectation of the suite the same assertion.
        "name": meta.get("name") or getattr(config, "description", None),
        "description": f"Great Expectations suite {suite}" if suite else "Great Expectations",
        "expected": expected or "true",
        "actual": actual,
    }


def assertions_from_gx(result: Any) -> list[dict[str, Any]]:
    """The assertions of a GX Core 1.x ExpectationSuiteValidationResult (or of one ExpectationValidationResult):
    the expectation type as the assertion, its column, its severity (critical: error; warning, info: warn), the name
    from the expectation's meta or description (none otherwise), the suite in the description, the expected
    arguments and the observed value or unexpected count (with examples) as actual."""
    if hasattr(result, "expectation_config"):
        return [_gx_one(result, None)]
    suite = getattr(result, "suite_name", None)
    return [_gx_one(item, suite) for item in result.results]
