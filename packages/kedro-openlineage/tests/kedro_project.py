"""A small Kedro project written from code: pandas CSV and Parquet datasets, a namespaced modular pipeline,
parameters, a MemoryDataset, a transcoded dataset, catalog metadata, a node that records assertions and a catalog
validator (Kedro's own `validator:`) on model_input, and a pipeline `gx` whose node validates companies with Great
Expectations (imported only when that node runs), and a pipeline `spark` whose node outputs a Spark DataFrame (a local
Spark session started by that node)."""

from __future__ import annotations

import textwrap
from pathlib import Path

PACKAGE = "lineage_demo"

FILES = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "lineage-demo"
        version = "0.1"

        [tool.kedro]
        package_name = "lineage_demo"
        project_name = "lineage-demo"
        kedro_init_version = "1.7.0"
        source_dir = "src"
        """,
    "conf/base/catalog.yml": """
        companies:
          type: pandas.CSVDataset
          filepath: data/01_raw/companies.csv
          metadata:
            kedro:
              owner: raw-data@example.com
              description: Companies as the CRM exports them
            kedro-viz:
              layer: raw

        reviews:
          type: pandas.CSVDataset
          filepath: data/01_raw/reviews.csv

        "ingestion.typed_companies@pandas":
          type: pandas.ParquetDataset
          filepath: data/02_intermediate/typed_companies.parquet

        "ingestion.typed_companies@raw":
          type: pandas.ParquetDataset
          filepath: data/02_intermediate/typed_companies.parquet

        model_input:
          type: pandas.ParquetDataset
          filepath: data/03_primary/model_input.parquet
          validator:
            class: lineage_demo.validators.ratings_at_least_2
            "on": [save]
          metadata:
            kedro:
              owner: data-team@example.com
              description: Features fed into training
              consumers: [training]
            kedro-viz:
              layer: primary
              preview_args:
                nrows: 5

        report:
          type: pandas.CSVDataset
          filepath: data/08_reporting/report.csv
        """,
    "conf/base/parameters.yml": """
        ingestion:
          min_rating: 3
        fail: false
        """,
    "conf/local/.gitkeep": "",
    # Kedro's telemetry plugin would try to reach its service; tests talk only to loopback.
    ".telemetry": "consent: false\n",
    "conf/base/logging.yml": """
        version: 1
        disable_existing_loggers: false
        handlers:
          console:
            class: logging.StreamHandler
            level: INFO
            stream: ext://sys.stderr
        root:
          level: INFO
          handlers: [console]
        """,
    "data/01_raw/companies.csv": """
        id,name,rating
        1,Acme,5
        2,Globex,2
        3,Initech,4
        4,Umbrella,3
        5,Hooli,1
        """,
    "data/01_raw/reviews.csv": """
        id,stars
        1,5
        3,4
        4,2
        """,
    f"src/{PACKAGE}/__init__.py": "",
    f"src/{PACKAGE}/settings.py": "",
    f"src/{PACKAGE}/pipeline_registry.py": """
        from kedro.pipeline import Pipeline

        from .pipelines import gx_check, ingestion, reporting, spark


        def register_pipelines() -> dict[str, Pipeline]:
            pipelines = {"ingestion": ingestion.create_pipeline(), "reporting": reporting.create_pipeline(),
                         "gx": gx_check.create_pipeline(), "spark": spark.create_pipeline()}
            pipelines["__default__"] = pipelines["ingestion"] + pipelines["reporting"]
            # Namespaces nest: the ingestion modular pipeline inside another, for the static push.
            pipelines["nested"] = Pipeline(pipelines["ingestion"], namespace="outer",
                                           inputs={"companies", "reviews"}, outputs={"model_input"})
            return pipelines
        """,
    f"src/{PACKAGE}/validators.py": """
        from kedro.validation.exceptions import CheckFailure, DataValidationError


        def ratings_at_least_2(data):
            low = data[data["rating"] < 2]
            if len(low):
                raise DataValidationError(
                    "ratings below 2",
                    failures=[CheckFailure(message="rating below 2", check="greater_than_or_equal_to(2)",
                                           column="rating", failure_count=len(low),
                                           failure_examples=low["rating"].tolist())],
                )
            return data
        """,
    f"src/{PACKAGE}/pipelines/__init__.py": "",
    f"src/{PACKAGE}/pipelines/ingestion.py": """
        import pandas as pd
        from kedro.pipeline import Node, Pipeline


        def type_companies(companies: pd.DataFrame) -> pd.DataFrame:
            typed = companies.copy()
            typed["rating"] = typed["rating"].astype("float64")
            return typed


        def filter_rated(typed: pd.DataFrame, min_rating: float) -> pd.DataFrame:
            return typed[typed["rating"] >= min_rating]


        def join_reviews(rated: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
            return rated.merge(reviews, on="id", how="left")


        def create_pipeline() -> Pipeline:
            return Pipeline(
                [
                    Node(type_companies, "companies", "typed_companies@pandas", name="type_companies"),
                    Node(filter_rated, ["typed_companies@raw", "params:min_rating"], "rated", name="filter_rated"),
                    Node(join_reviews, ["rated", "reviews"], "model_input", name="join_reviews"),
                ],
                namespace="ingestion",
                inputs={"companies", "reviews"},
                outputs={"model_input"},
            )
        """,
    f"src/{PACKAGE}/pipelines/gx_check.py": """
        import os

        import pandas as pd
        from kedro.pipeline import Node, Pipeline

        from kedro_openlineage import record_assertions


        def gx_check(companies: pd.DataFrame) -> None:
            os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
            import great_expectations as gx

            context = gx.get_context(mode="ephemeral")
            batch = (context.data_sources.add_pandas("crm").add_dataframe_asset("companies")
                     .add_batch_definition_whole_dataframe("all"))
            suite = context.suites.add(gx.ExpectationSuite(name="companies_suite"))
            suite.add_expectation(gx.expectations.ExpectColumnValuesToNotBeNull(column="name"))
            suite.add_expectation(gx.expectations.ExpectColumnValuesToBeBetween(
                column="rating", min_value=2, max_value=5, severity="warning", meta={"name": "rating_in_range"}))
            suite.add_expectation(gx.expectations.ExpectTableRowCountToBeBetween(min_value=10))
            validation = context.validation_definitions.add(
                gx.ValidationDefinition(name="companies", data=batch, suite=suite))
            record_assertions("companies", validation.run(batch_parameters={"dataframe": companies}))


        def create_pipeline() -> Pipeline:
            return Pipeline([Node(gx_check, "companies", None, name="gx_check")])
        """,
    f"src/{PACKAGE}/pipelines/spark.py": """
        import pandas as pd
        from kedro.pipeline import Node, Pipeline


        def to_spark(companies: pd.DataFrame):
            from pyspark.sql import SparkSession

            spark = (SparkSession.builder.master("local[1]").appName("lineage-demo")
                     .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                     .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
            rows = [(int(r.id), str(r.name), float(r.rating)) for r in companies.itertuples()]
            return spark.createDataFrame(rows, "id long, name string, rating double")


        def summarise_spark(frame) -> pd.DataFrame:
            rows = frame.count()
            frame.sparkSession.stop()
            return pd.DataFrame({"rows": [rows]})


        def create_pipeline() -> Pipeline:
            return Pipeline([
                Node(to_spark, "companies", "spark_companies", name="to_spark"),
                Node(summarise_spark, "spark_companies", "spark_summary", name="summarise_spark"),
            ])
        """,
    f"src/{PACKAGE}/pipelines/reporting.py": """
        import pandas as pd
        from kedro.pipeline import Node, Pipeline

        from kedro_openlineage import record_assertions


        def check(model_input: pd.DataFrame, fail: bool) -> pd.DataFrame:
            missing = int(model_input["stars"].isna().sum())
            record_assertions(
                "model_input",
                [
                    {"assertion": "not_null", "name": "stars_present", "column": "stars", "success": missing == 0,
                     "severity": "warn", "expected": "0", "actual": str(missing)},
                    {"assertion": "row_count_min", "name": "enough_rows", "success": len(model_input) >= 1,
                     "severity": "error", "expected": ">= 1", "actual": str(len(model_input))},
                ],
            )
            if fail:
                raise ValueError("check failed on purpose: the fail parameter is set")
            return model_input


        def summarise(checked: pd.DataFrame) -> pd.DataFrame:
            return pd.DataFrame({"companies": [len(checked)], "mean_rating": [float(checked["rating"].mean())]})


        def create_pipeline() -> Pipeline:
            return Pipeline(
                [
                    Node(check, ["model_input", "params:fail"], "checked", name="check", tags=["quality"]),
                    Node(summarise, "checked", "report", name="summarise"),
                ]
            )
        """,
}


def write_project(root: Path) -> Path:
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root
