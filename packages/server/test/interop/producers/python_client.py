"""The openlineage-python client's http transport against Headwater, for the interop suite.

A loader job reads the customers parquet the Spark application wrote and loads them into the PostgreSQL table
the dbt project reads as a source (it really creates the table), reporting its schema, column lineage, an input
assertion, output metrics and statistics. A second job fails with an errorMessage facet.
Usage: python_client.py URL COMPRESSION(none|gzip) JOB_NAMESPACE CUSTOMERS_PATH DSN DATABASE
"""
import sys
from datetime import datetime, timezone

import psycopg2
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    data_quality_assertions_dataset,
    data_quality_metrics_dataset,
    error_message_run,
    output_statistics_output_dataset,
    schema_dataset,
)
from openlineage.client.transport.http import HttpCompression, HttpConfig, HttpTransport
from openlineage.client.uuid import generate_new_uuid

url, compression, namespace, customers_path, dsn, database = sys.argv[1:7]
PRODUCER = "https://headwater.invalid/interop/python_client"
config = HttpConfig(url=url, timeout=10)
if compression == "gzip":
    config.compression = HttpCompression.GZIP
client = OpenLineageClient(transport=HttpTransport(config))

CUSTOMERS = [(10, "nl"), (11, "de"), (12, "nl")]


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def emit(state: RunState, run: Run, job: Job, inputs=(), outputs=()) -> None:
    client.emit(
        RunEvent(
            eventType=state, eventTime=now(), run=run, job=job, producer=PRODUCER,
            inputs=list(inputs), outputs=list(outputs),
        )
    )


schema = schema_dataset.SchemaDatasetFacet(
    fields=[
        schema_dataset.SchemaDatasetFacetFields(name="customer_id", type="integer"),
        schema_dataset.SchemaDatasetFacetFields(name="country", type="text"),
    ]
)
source = InputDataset(
    namespace="file",
    name=customers_path,
    inputFacets={
        "dataQualityAssertions": data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
            assertions=[
                data_quality_assertions_dataset.Assertion(
                    assertion="not_null", success=True, column="customer_id", name="customer_id_present"
                )
            ]
        )
    },
)
target_name = f"{database}.raw.customers"


def column(name: str) -> column_lineage_dataset.Fields:
    return column_lineage_dataset.Fields(
        inputFields=[column_lineage_dataset.InputField(namespace="file", name=customers_path, field=name)]
    )


target = OutputDataset(
    namespace="postgres://127.0.0.1:5432",
    name=target_name,
    facets={
        "schema": schema,
        "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={"customer_id": column("customer_id"), "country": column("country")}
        ),
        "dataQualityMetrics": data_quality_metrics_dataset.DataQualityMetricsDatasetFacet(
            rowCount=len(CUSTOMERS),
            columnMetrics={
                "customer_id": data_quality_metrics_dataset.ColumnMetrics(nullCount=0, distinctCount=3),
                "country": data_quality_metrics_dataset.ColumnMetrics(nullCount=0, distinctCount=2),
            },
        ),
    },
    outputFacets={
        "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
            rowCount=len(CUSTOMERS)
        )
    },
)

load = Job(namespace=namespace, name="load_customers")
run = Run(runId=str(generate_new_uuid()))
emit(RunState.START, run, load, [source], [target])
with psycopg2.connect(dsn) as connection, connection.cursor() as cursor:
    cursor.execute("CREATE SCHEMA IF NOT EXISTS raw")
    cursor.execute("DROP TABLE IF EXISTS raw.customers")
    cursor.execute("CREATE TABLE raw.customers (customer_id integer, country text)")
    cursor.executemany("INSERT INTO raw.customers VALUES (%s, %s)", CUSTOMERS)
connection.close()
emit(RunState.COMPLETE, run, load, [source], [target])

broken = Job(namespace=namespace, name="export_customers")
failed = Run(runId=str(generate_new_uuid()))
emit(RunState.START, failed, broken, [InputDataset(namespace="postgres://127.0.0.1:5432", name=target_name)])
try:
    raise ConnectionRefusedError("export target refused the connection")
except ConnectionRefusedError as error:
    failed = Run(
        runId=failed.runId,
        facets={
            "errorMessage": error_message_run.ErrorMessageRunFacet(
                message=str(error), programmingLanguage="python", stackTrace=repr(error)
            )
        },
    )
emit(RunState.FAIL, failed, broken, [InputDataset(namespace="postgres://127.0.0.1:5432", name=target_name)])
client.close(10)
