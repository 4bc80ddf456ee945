package io.yarnam.spark;

import org.apache.spark.SparkContext;
import org.apache.spark.scheduler.ExternalClusterManager;
import org.apache.spark.scheduler.SchedulerBackend;
import org.apache.spark.scheduler.TaskScheduler;
import org.apache.spark.scheduler.TaskSchedulerImpl;

/**
 * Spark's hook for master URL {@code yarn-am} (found through META-INF/services): Spark's own
 * task scheduler with {@link YarnAmSchedulerBackend}. Client deploy mode only: the driver runs
 * where the application was started.
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
      throw new IllegalArgumentException("master yarn-am supports client deploy mode only");
    }
    return new TaskSchedulerImpl(sc);
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
