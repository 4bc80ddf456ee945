package io.yarnam.spark;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The Kerberos integration test's job (tests/cluster/it_spark.rs, secure profile): a word count that
 * reads an HDFS file and writes its counts to HDFS with {@code saveAsTextFile}, one
 * {@code word<TAB>count} line each. Arguments: the input and output URLs (and, by hand, seconds
 * to wait before reading the input again, past the first tokens' lifetime). Prints
 * {@code APP_ID <id>} and {@code RESULT <json>}: the number of distinct words, how the
 * driver's Hadoop login looks, and what each task saw of its delegation tokens (whether
 * {@code HADOOP_TOKEN_FILE_LOCATION} names a file, the token kinds of its Hadoop user), so the
 * test can tell where the tokens came from. No token's bytes are printed.
 */
public final class HdfsWordCount {
  private HdfsWordCount() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2 && args.length != 3) {
      throw new IllegalArgumentException("usage: HdfsWordCount <input url> <output url> [<seconds>]");
    }
    SparkSession spark = SparkSession.builder().appName("yarn-am hdfs word count").getOrCreate();
    JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    System.out.println("APP_ID " + jsc.sc().applicationId());
    JavaPairRDD<String, Integer> counts = jsc.textFile(args[0], 3)
        .flatMap(line -> Arrays.asList(line.trim().split("\\s+")).iterator())
        .filter(w -> !w.isEmpty())
        .mapToPair(w -> new Tuple2<>(w, 1))
        .reduceByKey(Integer::sum, 2);
    counts.map(t -> t._1() + "\t" + t._2()).saveAsTextFile(args[1]);
    long words = counts.count();
    // What the tasks saw: one line per partition of a small RDD, run on the executors.
    List<String> seen = jsc.parallelize(Arrays.asList(0, 1, 2, 3), 4).map(i -> taskView()).collect();
    // By hand, renewal: wait past the first tokens' maximum lifetime, then read again in tasks.
    long again = -1;
    if (args.length == 3) {
      Thread.sleep(Long.parseLong(args[2]) * 1000);
      again = jsc.textFile(args[0], 3).count();
    }
    UserGroupInformation driver = UserGroupInformation.getCurrentUser();
    System.out.println("RESULT {\"words\":" + words + ",\"lines_read_again\":" + again
        + ",\"driver_security\":" + UserGroupInformation.isSecurityEnabled()
        + ",\"driver_kerberos\":" + driver.hasKerberosCredentials()
        + ",\"driver_token_kinds\":" + kinds(driver)
        + ",\"tasks\":[" + String.join(",", seen) + "]}");
    spark.stop();
  }

  /** In a task: the token file and the token kinds of the task's Hadoop user, as JSON. */
  private static String taskView() throws Exception {
    String file = System.getenv("HADOOP_TOKEN_FILE_LOCATION");
    boolean present = file != null && new File(file).isFile();
    return "{\"token_file\":" + present + ",\"kinds\":" + kinds(UserGroupInformation.getCurrentUser()) + "}";
  }

  private static String kinds(UserGroupInformation ugi) {
    TreeSet<String> kinds = new TreeSet<>();
    for (Token<?> t : ugi.getCredentials().getAllTokens()) {
      kinds.add(t.getKind().toString());
    }
    List<String> quoted = new ArrayList<>();
    for (String k : kinds) {
      quoted.add("\"" + k + "\"");
    }
    return "[" + String.join(",", quoted) + "]";
  }
}
