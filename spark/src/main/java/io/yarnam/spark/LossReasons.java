package io.yarnam.spark;

import org.apache.spark.scheduler.ExecutorExited;
import org.apache.spark.scheduler.ExecutorKilled$;
import org.apache.spark.scheduler.ExecutorLossReason;

/**
 * Turns what yarn-am says about an ended executor (its exit status, reason and whether the
 * exit counts against the application) into Spark's {@link ExecutorLossReason}.
 *
 * <p>The AM already classifies YARN's exit statuses (preemption -102, lost node -100, disk
 * failure -101 do not count against the app; a crash does), so the plugin keeps that verdict:
 * an exit not caused by the app does not count towards a task's failures
 * ({@code spark.task.maxFailures}), as in Spark's YARN mode. An executor the driver asked to
 * kill is Spark's {@code ExecutorKilled}.
 */
public final class LossReasons {
  private LossReasons() {}

  /**
   * @param exitStatus the container's exit status, null when it never ran (launch failure)
   * @param reason the AM's words for it
   * @param countsAgainstApp the AM's verdict; null means unknown, taken as the app's fault
   * @param killedByDriver whether the driver asked yarn-am to kill this executor
   */
  public static ExecutorLossReason of(
      Integer exitStatus, String reason, Boolean countsAgainstApp, boolean killedByDriver) {
    if (killedByDriver) {
      return ExecutorKilled$.MODULE$;
    }
    int code = exitStatus == null ? -1 : exitStatus;
    boolean byApp = countsAgainstApp == null || countsAgainstApp;
    String text = "yarn-am: " + (reason == null ? "executor ended" : reason)
        + (exitStatus == null ? "" : " (exit status " + exitStatus + ")");
    return new ExecutorExited(code, byApp, text);
  }
}
