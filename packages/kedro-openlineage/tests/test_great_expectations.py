"""A real Great Expectations (GX Core 1.x) validation, converted to `dataQualityAssertions`."""

from __future__ import annotations

import pandas as pd

from conftest import great_expectations
from kedro_openlineage.validation import expand_assertions, normalise_assertion

COMPANIES = pd.DataFrame({"name": ["Acme", None, "Initech"], "rating": [5.0, 1.0, 0.0]})


def _validation(gx):
    context = gx.get_context(mode="ephemeral")
    batch = context.data_sources.add_pandas("crm").add_dataframe_asset("companies").add_batch_definition_whole_dataframe(
        "all")
    suite = context.suites.add(gx.ExpectationSuite(name="companies_suite"))
    suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(column="name"))
    suite.add_expectation(gx.expectations.ExpectColumnValuesToBeBetween(
        column="rating", min_value=1, max_value=5, mostly=0.5, severity="warning", description="rating in range"))
    suite.add_expectation(gx.expectations.ExpectTableRowCountToBeBetween(min_value=1, max_value=2))
    suite.add_expectation(gx.expectations.ExpectColumnToExist(column="id", severity="info", meta={"name": "has_id"}))
    return context, context.validation_definitions.add(gx.ValidationDefinition(name="companies", data=batch,
                                                                               suite=suite))


EXPECTED = [
    {"assertion": "expect_column_values_to_not_be_null", "success": False, "column": "name", "severity": "error",
     "description": "Great Expectations suite companies_suite", "expected": "true",
     "actual": "1 unexpected of 3"},
    {"assertion": "expect_column_values_to_be_between", "success": True, "column": "rating", "severity": "warn",
     "name": "rating in range", "description": "Great Expectations suite companies_suite",
     "expected": "mostly=0.5, min_value=1, max_value=5", "actual": "1 unexpected of 3 (e.g. 0)"},
    {"assertion": "expect_table_row_count_to_be_between", "success": False, "severity": "error",
     "description": "Great Expectations suite companies_suite", "expected": "min_value=1, max_value=2",
     "actual": "3"},
    {"assertion": "expect_column_to_exist", "success": False, "column": "id", "severity": "warn", "name": "has_id",
     "description": "Great Expectations suite companies_suite", "expected": "true", "actual": "failed"},
]


def test_a_validation_result_becomes_one_assertion_per_expectation() -> None:
    gx = great_expectations()
    _, validation = _validation(gx)
    result = validation.run(batch_parameters={"dataframe": COMPANIES})
    assert result.success is False
    assert [normalise_assertion(a) for a in expand_assertions(result)] == EXPECTED
    # One expectation's result alone.
    assert [normalise_assertion(a) for a in expand_assertions(result.results[2])] == [
        {**EXPECTED[2], "description": "Great Expectations"}]


def test_a_checkpoint_result_gives_the_assertions_of_each_validation() -> None:
    gx = great_expectations()
    context, validation = _validation(gx)
    checkpoint = context.checkpoints.add(gx.Checkpoint(name="nightly", validation_definitions=[validation]))
    result = checkpoint.run(batch_parameters={"dataframe": COMPANIES})
    assert [normalise_assertion(a) for a in expand_assertions(result)] == EXPECTED


def test_anything_else_is_refused_saying_what_is_accepted() -> None:
    import pytest

    with pytest.raises(ValueError, match="a list of dicts or a Great Expectations validation result; got str"):
        expand_assertions("not_null")
