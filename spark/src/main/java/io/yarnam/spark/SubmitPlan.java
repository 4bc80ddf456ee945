package io.yarnam.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.network.util.JavaUtils;

/**
 * What the backend asks {@code yarn-am submit} for, computed from Spark's settings alone (no
 * I/O), so the mapping of Spark's executor sizes and counts onto yarn-am's flags is testable.
 *
 * <p>Sizes follow Spark's YARN mode: the container holds the executor heap
 * ({@code spark.executor.memory}) plus the overhead ({@code spark.executor.memoryOverhead},
 * else {@code max(spark.executor.minMemoryOverhead, factor x heap)} with factor
 * {@code spark.executor.memoryOverheadFactor}, 0.1 and 384 MB by default), plus PySpark
 * memory and off-heap memory when set; vcores are {@code spark.executor.cores} (1 by default,
 * as on YARN).
 */
public final class SubmitPlan {
  /** Spark's executor entry point; yarn-am runs it directly in each executor container. */
  public static final String EXECUTOR_MAIN =
      "org.apache.spark.executor.CoarseGrainedExecutorBackend";

  /** An upper bound for yarn-am's pool when Spark's own maximum is "unbounded". */
  public static final int UNBOUNDED_MAX = 10_000;

  public final long heapMb;
  public final long containerMb;
  public final int cores;
  public final int initial;
  public final int min;
  public final int max;

  private SubmitPlan(long heapMb, long containerMb, int cores, int initial, int min, int max) {
    this.heapMb = heapMb;
    this.containerMb = containerMb;
    this.cores = cores;
    this.initial = initial;
    this.min = min;
    this.max = max;
  }

  /**
   * The plan for these settings ({@code conf}: Spark's keys with their raw string values;
   * {@code initial}: Spark's initial executor target, from
   * {@code SchedulerBackendUtils.getInitialTargetExecutorNumber}).
   */
  public static SubmitPlan of(Map<String, String> conf, int initial) {
    long heap = sizeMb(conf, "spark.executor.memory", "1g");
    long overhead;
    if (conf.containsKey("spark.executor.memoryOverhead")) {
      overhead = sizeMb(conf, "spark.executor.memoryOverhead", "0");
    } else {
      double factor = Double.parseDouble(conf.getOrDefault("spark.executor.memoryOverheadFactor", "0.1"));
      long floor = sizeMb(conf, "spark.executor.minMemoryOverhead", "384");
      overhead = Math.max(floor, (long) (factor * heap));
    }
    long extra = 0;
    if (conf.containsKey("spark.executor.pyspark.memory")) {
      extra += sizeMb(conf, "spark.executor.pyspark.memory", "0");
    }
    if (Boolean.parseBoolean(conf.getOrDefault("spark.memory.offHeap.enabled", "false"))) {
      extra += sizeMb(conf, "spark.memory.offHeap.size", "0");
    }
    int cores = Integer.parseInt(conf.getOrDefault("spark.executor.cores", "1"));
    if (cores < 1) {
      throw new IllegalArgumentException("spark.executor.cores must be at least 1, not " + cores);
    }
    int min;
    int max;
    if (Boolean.parseBoolean(conf.getOrDefault("spark.dynamicAllocation.enabled", "false"))) {
      min = Integer.parseInt(conf.getOrDefault("spark.dynamicAllocation.minExecutors", "0"));
      String m = conf.get("spark.dynamicAllocation.maxExecutors");
      max = m == null ? UNBOUNDED_MAX : (int) Math.min(Long.parseLong(m), UNBOUNDED_MAX);
    } else {
      min = initial;
      max = initial;
    }
    max = Math.max(max, Math.max(min, initial));
    return new SubmitPlan(heap, heap + overhead + extra, cores, initial, min, max);
  }

  /**
   * The shell command each executor container runs: Spark's executor backend, told the
   * executor id and host that yarn-am and YARN give the container (so Spark's executor ids
   * are yarn-am's and kills by id reach the right container). Expanded by the container's
   * shell: {@code $YARN_AM_EXECUTOR_ID}, {@code $YARN_AM_APP_ID}, {@code $NM_HOST},
   * {@code $JAVA_HOME} (unless {@code javaHome} is given).
   *
   * <p>YARN wraps the command in {@code bash -c "..."}, so it must not hold a double quote;
   * options that do are refused with a message naming them.
   */
  public String executorCommand(
      String driverUrl, String sparkJars, String javaHome, String moduleOptions, String extraJavaOptions,
      String extraClassPath) {
    return executorCommand(driverUrl, sparkJars, javaHome, moduleOptions, extraJavaOptions, extraClassPath, null);
  }

  /**
   * As above, with {@code setup} (a shell statement such as an {@code export}, or null) run
   * before the executor: PySpark's {@code SPARK_HOME} on the node.
   */
  public String executorCommand(
      String driverUrl, String sparkJars, String javaHome, String moduleOptions, String extraJavaOptions,
      String extraClassPath, String setup) {
    return executorCommand(driverUrl, sparkJars, javaHome, moduleOptions, extraJavaOptions, extraClassPath,
        setup, null);
  }

  /**
   * As above, with {@code nodeClasspath} (entries on every node, from {@code spark.yarn.jars}'
   * {@code local:} paths, or null) after {@code sparkJars/*}, where Spark's YARN mode puts them.
   */
  public String executorCommand(
      String driverUrl, String sparkJars, String javaHome, String moduleOptions, String extraJavaOptions,
      String extraClassPath, String setup, String nodeClasspath) {
    String java = (javaHome == null || javaHome.isEmpty() ? "${JAVA_HOME}" : javaHome) + "/bin/java";
    String cp = (extraClassPath == null || extraClassPath.isEmpty() ? "" : extraClassPath + ":")
        + sparkJars + "/*"
        + (nodeClasspath == null || nodeClasspath.isEmpty() ? "" : ":" + nodeClasspath);
    List<String> parts = new ArrayList<>();
    if (setup != null && !setup.isBlank()) {
      parts.add(setup.trim() + ";");
    }
    parts.add("exec");
    parts.add(java);
    parts.add("-server");
    // A resource profile's executors (a kind the backend declared, see Profiles) are told
    // their heap, cores and profile id in these variables; the default profile's have none.
    parts.add("-Xmx${" + Profiles.HEAP_VAR + ":-" + heapMb + "}m");
    parts.add(moduleOptions);
    if (extraJavaOptions != null && !extraJavaOptions.isBlank()) {
      parts.add(extraJavaOptions.trim());
    }
    parts.add("-cp");
    parts.add("'" + cp + "'");
    parts.add(EXECUTOR_MAIN);
    parts.add("--driver-url");
    parts.add(driverUrl);
    parts.add("--executor-id");
    parts.add("$YARN_AM_EXECUTOR_ID");
    parts.add("--hostname");
    parts.add("$NM_HOST");
    parts.add("--cores");
    parts.add("${" + Profiles.CORES_VAR + ":-" + cores + "}");
    parts.add("--app-id");
    parts.add("$YARN_AM_APP_ID");
    parts.add("--resourceProfileId");
    parts.add("${" + Profiles.PROFILE_VAR + ":-0}");
    String cmd = String.join(" ", parts);
    if (cmd.contains("\"")) {
      throw new IllegalArgumentException(
          "the executor command may not contain a double quote (YARN runs it in bash -c \"...\"): "
              + "check spark.executor.extraJavaOptions and spark.executor.extraClassPath");
    }
    if (cp.contains("'")) {
      throw new IllegalArgumentException("the executor classpath may not contain a single quote: " + cp);
    }
    return cmd;
  }

  /** The arguments after {@code yarn-am} for {@code submit}. */
  public List<String> submitArgs(String name, String queue, int maxAttempts, String executorCommand) {
    List<String> a = new ArrayList<>();
    a.add("submit");
    a.add("--name");
    a.add(name);
    a.add("--queue");
    a.add(queue);
    a.add("--max-attempts");
    a.add(Integer.toString(maxAttempts));
    a.add("--tag");
    a.add("spark");
    a.add("--executor-command");
    a.add(executorCommand);
    a.add("--executor-memory");
    a.add(Long.toString(containerMb));
    a.add("--executor-vcores");
    a.add(Integer.toString(cores));
    a.add("--executors");
    a.add(Integer.toString(initial));
    a.add("--min-executors");
    a.add(Integer.toString(min));
    a.add("--max-executors");
    a.add(Integer.toString(max));
    return a;
  }

  /**
   * The application settings of Spark's YARN mode that yarn-am takes as submit flags:
   * {@code spark.yarn.priority}, {@code spark.yarn.tags} (comma-separated),
   * {@code spark.yarn.am.attemptFailuresValidityInterval}, the executors' and the AM's node
   * label expressions, the rolled-log patterns
   * ({@code spark.yarn.rolledLog.includePattern} / {@code excludePattern}) and, with
   * {@code spark.acls.enable}, the app's view and modify ACLs as Spark's YARN client makes them
   * (the admins, the listed users and {@code user}, then a space and the groups).
   */
  public static List<String> appSettings(Map<String, String> conf, String user) {
    List<String> a = new ArrayList<>();
    if (conf.containsKey("spark.yarn.priority")) {
      a.add("--priority");
      a.add(Integer.toString(Integer.parseInt(conf.get("spark.yarn.priority").trim())));
    }
    for (String tag : conf.getOrDefault("spark.yarn.tags", "").split(",")) {
      if (!tag.isBlank()) {
        a.add("--tag");
        a.add(tag.trim());
      }
    }
    if (conf.containsKey("spark.yarn.am.attemptFailuresValidityInterval")) {
      a.add("--attempt-failures-validity-interval");
      a.add(Long.toString(JavaUtils.timeStringAsMs(conf.get("spark.yarn.am.attemptFailuresValidityInterval"))));
    }
    String[][] patterns = {
      {"spark.yarn.rolledLog.includePattern", "--rolled-log-include-pattern"},
      {"spark.yarn.rolledLog.excludePattern", "--rolled-log-exclude-pattern"},
      {"spark.yarn.executor.nodeLabelExpression", "--node-label"},
      {"spark.yarn.am.nodeLabelExpression", "--am-node-label"},
    };
    for (String[] p : patterns) {
      if (conf.containsKey(p[0])) {
        a.add(p[1]);
        a.add(conf.get(p[0]));
      }
    }
    a.addAll(resources(conf, "spark.executor.resource.", "spark.yarn.executor.resource.", "--executor-resource"));
    if (Boolean.parseBoolean(conf.getOrDefault("spark.acls.enable", "false"))) {
      a.add("--view-acl");
      a.add(acl(conf, user, "spark.ui.view.acls"));
      a.add("--modify-acl");
      a.add(acl(conf, user, "spark.modify.acls"));
    }
    return a;
  }

  /**
   * The resources of the AM's own container, as Spark's YARN client asks them: in client mode
   * {@code spark.yarn.am.resource.<yarn name>.amount}; in cluster mode, where the driver runs
   * in that container, {@code spark.yarn.driver.resource.<yarn name>.amount} and the driver's
   * {@code spark.driver.resource.gpu|fpga.amount}. yarn-am submits such an app over the RM's
   * client port (its REST submission drops them).
   */
  public static List<String> amResources(Map<String, String> conf, boolean clusterMode) {
    return clusterMode
        ? resources(conf, "spark.driver.resource.", "spark.yarn.driver.resource.", "--am-resource")
        : resources(conf, null, "spark.yarn.am.resource.", "--am-resource");
  }

  /**
   * Spark's resource scheduling as {@code flag NAME=COUNT} pairs: gpu and fpga under
   * {@code sparkPrefix} are YARN's own types, other resources are named to YARN under
   * {@code yarnPrefix} ({@code <yarn name>.amount}).
   */
  private static List<String> resources(Map<String, String> conf, String sparkPrefix, String yarnPrefix, String flag) {
    java.util.TreeMap<String, String> resources = new java.util.TreeMap<>();
    if (sparkPrefix != null) {
      for (String kind : new String[] {"gpu", "fpga"}) {
        String amount = conf.get(sparkPrefix + kind + ".amount");
        if (amount != null) {
          resources.put("yarn.io/" + kind, amount.trim());
        }
      }
    }
    for (Map.Entry<String, String> e : conf.entrySet()) {
      String k = e.getKey();
      if (k.startsWith(yarnPrefix) && k.endsWith(".amount")) {
        resources.put(k.substring(yarnPrefix.length(), k.length() - ".amount".length()), e.getValue().trim());
      }
    }
    List<String> a = new ArrayList<>();
    for (Map.Entry<String, String> r : resources.entrySet()) {
      a.add(flag);
      a.add(r.getKey() + "=" + r.getValue());
    }
    return a;
  }

  /** One YARN ACL from Spark's admin and per-kind user and group lists. */
  private static String acl(Map<String, String> conf, String user, String key) {
    java.util.LinkedHashSet<String> users = new java.util.LinkedHashSet<>();
    java.util.LinkedHashSet<String> groups = new java.util.LinkedHashSet<>();
    users.add(user);
    for (String k : new String[] {"spark.admin.acls", key}) {
      for (String u : conf.getOrDefault(k, "").split(",")) {
        if (!u.isBlank()) users.add(u.trim());
      }
      for (String g : conf.getOrDefault(k + ".groups", "").split(",")) {
        if (!g.isBlank()) groups.add(g.trim());
      }
    }
    if (users.contains("*") || groups.contains("*")) {
      return "*";
    }
    return String.join(",", users) + " " + String.join(",", groups);
  }

  /** A Spark size ("512m", "2g"; a bare number is MiB, as Spark reads these keys) in MiB. */
  static long sizeMb(Map<String, String> conf, String key, String dflt) {
    String v = conf.getOrDefault(key, dflt).trim();
    try {
      return JavaUtils.byteStringAsMb(v);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(key + " is not a size such as 512m or 2g: " + v, e);
    }
  }
}
