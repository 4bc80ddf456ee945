package io.yarnam.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorAdded;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;

/**
 * The integration test's Spark job: N partitions (default 60), partition i preferring host
 * nm(1 + i % 3), each task sleeping a little. A SparkListener records every task's locality,
 * host and executor, and executors added and removed; at the end (after waiting for idle
 * executors to be removed, when asked) it prints one line {@code RESULT <json>}. It prints
 * {@code APP_ID <id>} at start and {@code TASK_END <n>} after each task, for the test to act
 * mid-job.
 *
 * <p>Args: [partitions] [task millis] [seconds to wait for executors to be removed after].
 */
public final class LocalityJob {
  /** Records tasks and executor events; times are epoch milliseconds. */
  public static final class Recorder extends SparkListener {
    static final ObjectMapper JSON = new ObjectMapper();
    static volatile Recorder instance;
    final ConcurrentLinkedQueue<ObjectNode> tasks = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<ObjectNode> execEvents = new ConcurrentLinkedQueue<>();
    final Map<String, Boolean> live = new ConcurrentHashMap<>();
    final AtomicInteger ended = new AtomicInteger();

    public Recorder() {
      instance = this;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd e) {
      ObjectNode t = JSON.createObjectNode();
      t.put("partition", e.taskInfo().index());
      t.put("attempt", e.taskInfo().attemptNumber());
      t.put("locality", e.taskInfo().taskLocality().toString());
      t.put("host", e.taskInfo().host());
      t.put("executor", e.taskInfo().executorId());
      t.put("successful", e.taskInfo().successful());
      t.put("reason", e.reason().toString());
      tasks.add(t);
      System.out.println("TASK_END " + ended.incrementAndGet());
    }

    @Override
    public void onExecutorAdded(SparkListenerExecutorAdded e) {
      live.put(e.executorId(), true);
      execEvents.add(JSON.createObjectNode().put("event", "added").put("executor", e.executorId())
          .put("host", e.executorInfo().executorHost()).put("time", e.time()));
    }

    @Override
    public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
      live.remove(e.executorId());
      execEvents.add(JSON.createObjectNode().put("event", "removed").put("executor", e.executorId())
          .put("reason", e.reason()).put("time", e.time()));
    }
  }

  public static void main(String[] args) throws Exception {
    int partitions = args.length > 0 ? Integer.parseInt(args[0]) : 60;
    long taskMs = args.length > 1 ? Long.parseLong(args[1]) : 1500;
    int idleWaitS = args.length > 2 ? Integer.parseInt(args[2]) : 30;
    // The recorder is registered through spark.extraListeners, so it sees the executors that
    // register while the SparkContext starts, too.
    SparkContext sc = new SparkContext(new SparkConf().setAppName("yarn-am-locality-job")
        .set("spark.extraListeners", Recorder.class.getName()));
    long ctxReady = System.currentTimeMillis();
    System.out.println("APP_ID " + sc.applicationId());
    Recorder rec = Recorder.instance;
    ObjectMapper json = Recorder.JSON;
    List<Tuple2<Integer, scala.collection.immutable.Seq<String>>> data = new ArrayList<>();
    for (int i = 0; i < partitions; i++) {
      data.add(new Tuple2<>(i, CollectionConverters.asScala(List.of("nm" + (1 + i % 3))).toList()));
    }
    RDD<Integer> rdd = sc.makeRDD(CollectionConverters.asScala(data).toList(), ClassTag$.MODULE$.apply(Integer.class));
    long jobStart = System.currentTimeMillis();
    List<String> hosts = rdd.toJavaRDD().map(i -> {
      Thread.sleep(taskMs);
      return System.getenv("NM_HOST") + "/" + i;
    }).collect();
    long jobMs = System.currentTimeMillis() - jobStart;
    // Executors idle past spark.dynamicAllocation.executorIdleTimeout are removed by Spark's
    // ExecutorAllocationManager through yarn-am: wait for that to show.
    long deadline = System.currentTimeMillis() + idleWaitS * 1000L;
    while (!rec.live.isEmpty() && System.currentTimeMillis() < deadline) {
      Thread.sleep(250);
    }
    Thread.sleep(500);
    ObjectNode out = json.createObjectNode();
    out.put("app_id", sc.applicationId());
    out.put("results", hosts.size());
    out.put("job_ms", jobMs);
    Map<String, Integer> byLocality = new TreeMap<>();
    ArrayNode ts = out.putArray("tasks");
    for (ObjectNode t : rec.tasks) {
      ts.add(t);
      if (t.get("successful").asBoolean()) {
        byLocality.merge(t.get("locality").asText(), 1, Integer::sum);
      }
    }
    byLocality.forEach(out.putObject("by_locality")::put);
    rec.execEvents.forEach(out.putArray("executor_events")::add);
    out.put("live_executors_at_end", rec.live.size());
    out.put("jvm_start_ms", ManagementFactory.getRuntimeMXBean().getStartTime());
    out.put("context_ready_ms", ctxReady);
    System.out.println("RESULT " + json.writeValueAsString(out));
    sc.stop();
  }
}
