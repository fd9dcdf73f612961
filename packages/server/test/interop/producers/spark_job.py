"""A small PySpark application with the OpenLineage listener attached, for the interop suite.

Writes two parquet inputs, joins and aggregates them into a third, creates a table with CTAS, then runs a write
that fails at execution time (a division by zero under ANSI mode). Local mode, loopback only, small memory.
Usage: spark_job.py URL LISTENER_JAR WORK_DIR NAMESPACE
"""
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

url, jar, work, namespace = sys.argv[1:5]

spark = (
    SparkSession.builder.master("local[1]")
    .appName("headwater_interop")
    .config("spark.jars", jar)
    .config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
    .config("spark.openlineage.transport.type", "http")
    .config("spark.openlineage.transport.url", url)
    .config("spark.openlineage.namespace", namespace)
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.driver.memory", "512m")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "1")
    .config("spark.sql.warehouse.dir", f"{work}/warehouse")
    .config("spark.sql.ansi.enabled", "true")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("WARN")

orders_path = f"{work}/lake/orders"
customers_path = f"{work}/lake/customers"
revenue_path = f"{work}/lake/revenue_by_country"

spark.createDataFrame(
    [(1, 10, 120.0), (2, 10, 80.0), (3, 11, 50.0), (4, 12, 0.0)],
    "order_id INT, customer_id INT, amount DOUBLE",
).write.mode("overwrite").parquet(orders_path)
spark.createDataFrame(
    [(10, "NL"), (11, "DE"), (12, "NL")],
    "customer_id INT, country STRING",
).write.mode("overwrite").parquet(customers_path)

orders = spark.read.parquet(orders_path)
customers = spark.read.parquet(customers_path)
(
    orders.join(customers, "customer_id")
    .groupBy("country")
    .agg(F.sum("amount").alias("revenue"), F.count("order_id").alias("orders"))
    .write.mode("overwrite")
    .parquet(revenue_path)
)

spark.sql(
    f"""CREATE TABLE big_countries USING parquet AS
        SELECT country, revenue FROM parquet.`{revenue_path}` WHERE revenue > 100"""
)

failed = False
try:
    orders.select("order_id", (F.col("amount") / F.lit(0)).cast("int").alias("ratio")).write.mode(
        "overwrite"
    ).parquet(f"{work}/lake/ratios")
except Exception as error:  # the failure is the point: report it and carry on to a clean stop
    failed = True
    print(f"expected failure: {type(error).__name__}", file=sys.stderr)

spark.stop()
if not failed:
    sys.exit("the failing write did not fail")
