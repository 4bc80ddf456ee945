package io.yarnam.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.resource.ExecutorResourceRequests;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.resource.ResourceProfileBuilder;
import org.apache.spark.resource.TaskResourceRequests;

/**
 * The integration test's stage-level scheduling job: a stage of the default profile, then a
 * stage of a resource profile with other executor cores and memory ({@code rdd.withResources}).
 * Each task reports its executor and that JVM's maximum heap, with the executor's profile as
 * Spark learned it when the executor registered ({@code ExecutorInfo.resourceProfileId}); one line {@code RESULT <json>} at the end, with
 * {@code APP_ID <id>} at start.
 *
 * <p>Args: [profile executor cores] [profile executor memory].
 */
public final class ProfileJob {
  static final ObjectMapper JSON = new ObjectMapper();

  /** Each executor's resource profile as Spark learned it when the executor registered. */
  public static final class Recorder extends org.apache.spark.scheduler.SparkListener {
    static final java.util.Map<String, Integer> PROFILES = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void onExecutorAdded(org.apache.spark.scheduler.SparkListenerExecutorAdded e) {
      PROFILES.put(e.executorId(), e.executorInfo().resourceProfileId());
    }
  }

  /** One task's view: "stage executor heapMb value". */
  static String where(int value) {
    TaskContext tc = TaskContext.get();
    return tc.stageId() + " " + SparkEnv.get().executorId() + " "
        + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " " + value;
  }

  public static void main(String[] args) throws Exception {
    int cores = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    String memory = args.length > 1 ? args[1] : "1g";
    JavaSparkContext sc = new JavaSparkContext(new SparkConf().setAppName("yarn-am-profile-job")
        .set("spark.extraListeners", Recorder.class.getName()));
    System.out.println("APP_ID " + sc.sc().applicationId());
    List<Integer> data = new ArrayList<>();
    for (int i = 1; i <= 40; i++) {
      data.add(i);
    }
    JavaRDD<Integer> rdd = sc.parallelize(data, 4);
    List<String> plain = rdd.map(i -> where(i * 2)).collect();
    ResourceProfile rp = new ResourceProfileBuilder()
        .require(new ExecutorResourceRequests().cores(cores).memory(memory))
        .require(new TaskResourceRequests().cpus(1))
        .build();
    List<String> profiled = rdd.withResources(rp).map(i -> where(i * 3)).collect();
    ObjectNode out = JSON.createObjectNode();
    out.put("app_id", sc.sc().applicationId());
    out.put("profile_id", rp.id());
    add(out.putArray("plain"), plain);
    add(out.putArray("profiled"), profiled);
    System.out.println("RESULT " + JSON.writeValueAsString(out));
    sc.stop();
  }

  private static void add(ArrayNode to, List<String> lines) {
    for (String l : lines) {
      String[] f = l.split(" ");
      to.addObject().put("stage", Integer.parseInt(f[0])).put("executor", f[1])
          .put("executor_profile", Recorder.PROFILES.getOrDefault(f[1], -1))
          .put("heap_mb", Long.parseLong(f[2])).put("value", Integer.parseInt(f[3]));
    }
  }
}
