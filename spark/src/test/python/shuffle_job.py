"""The integration test's PySpark job (tests/cluster/it_spark.rs): a word count with reduceByKey and
a DataFrame aggregation, on data whose answers are known; the workers use wordlib (shipped
with --py-files). Creates its own SparkSession (the master comes from yarn-am's Launcher).
Prints "APP_ID <id>" and one "RESULT <json>" line."""
import collections
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import wordlib

spark = SparkSession.builder.appName("yarn-am pyspark job").getOrCreate()
sc = spark.sparkContext
print("APP_ID", sc.applicationId, flush=True)

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
lines = [" ".join("w%d" % ((i * j) % 37) for j in range(10)) for i in range(n)]
counts = (sc.parallelize(lines, 8).flatMap(wordlib.words)
          .map(lambda w: (w, 1)).reduceByKey(lambda a, b: a + b, 3))
got = dict(counts.collect())
expected = collections.Counter(w for line in lines for w in line.split())
pythons = sorted(set(sc.parallelize(range(6), 6).map(wordlib.interpreter).collect()))

df = spark.createDataFrame([(i % 5, i) for i in range(1000)], ["g", "v"])
agg = (df.groupBy("g").agg(F.count("*").alias("n"), F.sum("v").alias("s"))
       .orderBy("g").collect())
print("RESULT " + json.dumps({
    "words": len(got),
    "total": sum(got.values()),
    "matches": got == dict(expected),
    "reduce_partitions": counts.getNumPartitions(),
    "groups": [[r["g"], r["n"], r["s"]] for r in agg],
    "worker_pythons": pythons,
    "driver_python": "%d.%d" % sys.version_info[:2],
}), flush=True)
spark.stop()
