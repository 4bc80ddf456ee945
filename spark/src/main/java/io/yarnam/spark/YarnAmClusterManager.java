package io.yarnam.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.ExternalClusterManager;
import org.apache.spark.scheduler.SchedulerBackend;
import org.apache.spark.scheduler.TaskScheduler;
import org.apache.spark.scheduler.TaskSchedulerImpl;

/**
 * Spark's hook for master URL {@code yarn-am} (found through META-INF/services): Spark's own
 * task scheduler with {@link YarnAmSchedulerBackend}. Spark's own deploy mode is always client
 * (the driver runs in this JVM); in yarn-am's cluster mode this JVM runs in the AM's container.
 */
public final class YarnAmClusterManager implements ExternalClusterManager {
  public static final String MASTER = "yarn-am";

  @Override
  public boolean canCreate(String masterUrl) {
    return MASTER.equals(masterUrl);
  }

  @Override
  public TaskScheduler createTaskScheduler(SparkContext sc, String masterUrl) {
    if (!"client".equals(sc.conf().get("spark.submit.deployMode", "client"))) {
      throw new IllegalArgumentException("master yarn-am takes deploy mode client in Spark's settings; "
          + "for cluster mode use spark/bin/spark-submit-yarn-am --deploy-mode cluster");
    }
    inAmContainer(sc.conf()); // a cluster-mode driver outside an AM fails here, clearly
    return new TaskSchedulerImpl(sc);
  }

  /**
   * Whether this driver runs in yarn-am's AM container (cluster deploy mode: the wrapper sets
   * {@code spark.yarnam.deployMode=cluster}, the AM gives the driver API's address).
   */
  static boolean inAmContainer(org.apache.spark.SparkConf conf) {
    if (!"cluster".equals(conf.get("spark.yarnam.deployMode", "client"))) {
      return false;
    }
    String url = System.getenv("YARN_AM_DRIVER_URL");
    String secret = System.getenv("YARN_AM_SECRET_FILE");
    if (url == null || url.isEmpty() || secret == null || secret.isEmpty()) {
      throw new IllegalStateException("spark.yarnam.deployMode=cluster: this driver must run in yarn-am's "
          + "AM container (YARN_AM_DRIVER_URL and YARN_AM_SECRET_FILE are not set); submit with "
          + "spark/bin/spark-submit-yarn-am --deploy-mode cluster");
    }
    return true;
  }

  @Override
  public SchedulerBackend createSchedulerBackend(SparkContext sc, String masterUrl, TaskScheduler scheduler) {
    return new YarnAmSchedulerBackend((TaskSchedulerImpl) scheduler, sc);
  }

  @Override
  public void initialize(TaskScheduler scheduler, SchedulerBackend backend) {
    ((TaskSchedulerImpl) scheduler).initialize(backend);
  }
}
