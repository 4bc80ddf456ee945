package io.yarnam.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The integration test's JVM job with shuffles (tests/cluster/it_spark.rs): a reduceByKey to fewer
 * partitions, a join, and a SQL groupBy, on data whose answers are known. Prints
 * {@code APP_ID <id>} and one {@code RESULT <json>} line; the test checks the numbers.
 * It creates its own SparkSession (the master comes from the Launcher).
 */
public final class ShuffleJob {
  private ShuffleJob() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    SparkSession spark = SparkSession.builder().appName("yarn-am shuffle job").getOrCreate();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    System.out.println("APP_ID " + jsc.sc().applicationId());
    List<Integer> nums = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      nums.add(i);
    }
    // reduceByKey from 12 partitions into 4.
    JavaPairRDD<String, Integer> counts = jsc.parallelize(nums, 12)
        .mapToPair(i -> new Tuple2<>("k" + (i % 50), 1))
        .reduceByKey(Integer::sum, 4);
    Map<String, Integer> byKey = new TreeMap<>(counts.collectAsMap());
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; k < 60; k++) {
      keys.add(k);
    }
    // A join with a second shuffled RDD: keys k0..k59, of which k0..k49 have counts.
    JavaPairRDD<String, String> names = jsc.parallelize(keys, 3).mapToPair(k -> new Tuple2<>("k" + k, "name" + k));
    long joined = counts.join(names, 5).filter(t -> t._2()._2().equals("name" + t._1().substring(1))).count();
    // A SQL groupBy.
    spark.range(0, 10_000).selectExpr("id % 7 AS g", "id AS v").createOrReplaceTempView("t");
    List<Row> rows = spark.sql("SELECT g, count(*) AS n, sum(v) AS s FROM t GROUP BY g ORDER BY g").collectAsList();
    StringBuilder groups = new StringBuilder("[");
    for (Row r : rows) {
      groups.append(groups.length() > 1 ? "," : "")
          .append("[").append(r.getLong(0)).append(",").append(r.getLong(1)).append(",").append(r.getLong(2)).append("]");
    }
    groups.append("]");
    int total = byKey.values().stream().mapToInt(Integer::intValue).sum();
    System.out.println("RESULT {\"keys\":" + byKey.size() + ",\"total\":" + total + ",\"k7\":" + byKey.get("k7")
        + ",\"reduce_partitions\":" + counts.getNumPartitions() + ",\"joined\":" + joined
        + ",\"groups\":" + groups + "}");
    spark.stop();
  }
}
