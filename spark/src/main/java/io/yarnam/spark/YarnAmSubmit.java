package io.yarnam.spark;

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.launcher.JavaModuleOptions;
import org.apache.spark.scheduler.cluster.SchedulerBackendUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The {@code yarn-am submit} arguments both deploy modes share: the executors (size, count,
 * command, Spark's runtime and, for PySpark, its Python side), the failure limits and the
 * environments. Client mode's backend runs them as they are; cluster mode's
 * {@link ClusterClient} adds the driver.
 */
final class YarnAmSubmit {
  private static final Logger LOG = LoggerFactory.getLogger(YarnAmSubmit.class);

  /**
   * In cluster mode the executors are started before the driver knows its port: each reads
   * the driver's URL from the app's key-value store, where the driver puts it at start.
   */
  static final String DRIVER_URL_KEY = "spark/driver-url";
  /** The executor command's driver URL in cluster mode (see {@link #DRIVER_URL_KEY}). */
  static final String DRIVER_URL_FROM_KV =
      "$(./yarn-am kv wait " + DRIVER_URL_KEY + " --wait-timeout 600)";

  private YarnAmSubmit() {}

  static Map<String, String> settings(SparkConf conf) {
    Map<String, String> settings = new HashMap<>();
    for (Tuple2<String, String> kv : conf.getAll()) {
      settings.put(kv._1(), kv._2());
    }
    return settings;
  }

  /** Whether the application is a PySpark one (Spark's own key for it, set by the Launcher). */
  static boolean isPython(SparkConf conf) {
    return conf.getBoolean("spark.yarn.isPython", false);
  }

  static SubmitPlan plan(SparkConf conf) {
    return SubmitPlan.of(settings(conf), SchedulerBackendUtils.getInitialTargetExecutorNumber(conf, 2));
  }

  /**
   * The shared arguments for an app named {@code name} whose executors reach the driver at
   * {@code driverUrl} (a literal, or {@link #DRIVER_URL_FROM_KV}).
   */
  static List<String> args(SparkConf conf, SubmitPlan plan, String driverUrl, String name) throws IOException {
    Map<String, String> settings = settings(conf);
    String sparkHome = sparkHome(conf);
    SparkRuntime runtime = SparkRuntime.choose(settings, sparkHome);
    if (runtime.archive != null) {
      LOG.info("executors get Spark's jars from {}", runtime.archive);
    } else if (!runtime.files.isEmpty() || !runtime.nodeClasspath.isEmpty()) {
      LOG.info("executors get Spark's jars from spark.yarn.jars: {} shipped, on the nodes: {}",
          runtime.files.size(), runtime.nodeClasspath);
    }
    String pythonArchive = null;
    if (isPython(conf)) {
      pythonArchive = SparkRuntime.pythonArchive(sparkHome, SparkRuntime.cacheDir(settings));
      LOG.info("executors get PySpark's Python side from {}", pythonArchive);
    }
    String command = plan.executorCommand(
        driverUrl,
        runtime.jarsDir,
        conf.get("spark.yarnam.executor.javaHome", ""),
        JavaModuleOptions.defaultModuleOptions(),
        conf.get("spark.executor.extraJavaOptions", ""),
        conf.get("spark.executor.extraClassPath", ""),
        pythonArchive == null ? null : "export SPARK_HOME=$PWD/" + SparkRuntime.PYTHON_LINK,
        runtime.nodeClasspath);
    List<String> args = plan.submitArgs(
        name,
        conf.get("spark.yarn.queue", "default"),
        conf.getInt("spark.yarn.maxAppAttempts", 1),
        command);
    if (runtime.archive != null) {
      args.add("--archive");
      args.add(runtime.archive);
    }
    for (String f : runtime.files) {
      args.add("--file");
      args.add(f);
    }
    if (pythonArchive != null) {
      args.add("--archive");
      args.add(pythonArchive);
    }
    // Spark's YARN mode's executor failure limit and its validity window, as yarn-am's.
    if (conf.contains("spark.executor.maxNumFailures")) {
      args.add("--max-executor-failures");
      args.add(Integer.toString(conf.getInt("spark.executor.maxNumFailures", 3)));
    }
    if (conf.contains("spark.executor.failuresValidityInterval")) {
      args.add("--executor-failures-validity-interval");
      args.add(Long.toString(conf.getTimeAsMs("spark.executor.failuresValidityInterval")));
    }
    // Hosts where executors keep failing: yarn-am excludes them by default (Spark's YARN mode
    // only with spark.yarn.executor.launch.excludeOnFailure.enabled); an explicit false turns
    // it off, and Spark's per-node limit and timeout carry over.
    if (!conf.getBoolean("spark.yarn.executor.launch.excludeOnFailure.enabled", true)) {
      args.add("--host-exclusion-failures");
      args.add("0");
    } else if (conf.contains("spark.excludeOnFailure.application.maxFailedExecutorsPerNode")) {
      args.add("--host-exclusion-failures");
      args.add(Integer.toString(conf.getInt("spark.excludeOnFailure.application.maxFailedExecutorsPerNode", 2)));
    }
    if (conf.contains("spark.excludeOnFailure.timeout")) {
      args.add("--host-exclusion-timeout");
      args.add(Long.toString(Math.max(1, conf.getTimeAsSeconds("spark.excludeOnFailure.timeout"))));
    }
    args.addAll(SubmitPlan.appSettings(settings, org.apache.spark.util.Utils.getCurrentUserName()));
    for (Tuple2<String, String> kv : conf.getAllWithPrefix("spark.executorEnv.")) {
      args.add("--executor-env");
      args.add(kv._1() + "=" + kv._2());
    }
    for (Tuple2<String, String> kv : conf.getAllWithPrefix("spark.yarnam.am.env.")) {
      args.add("--env");
      args.add(kv._1() + "=" + kv._2());
    }
    args.addAll(kerberosLogin(settings));
    // Room for Spark's resource profiles, each an executor kind declared as it is first
    // asked for (fixed at submit: every kind numbers its executors in its own id stripe).
    args.add("--max-executor-kinds");
    args.add(Integer.toString(Profiles.maxKinds(conf)));
    return args;
  }

  /**
   * spark-submit's {@code --principal}/{@code --keytab} ({@code spark.kerberos.principal} and
   * {@code spark.kerberos.keytab}) as yarn-am's: submit logs in with them (not with the ticket
   * cache) and ships the keytab to the AM, which fetches new HDFS delegation tokens before the
   * first ones reach their maximum lifetime, as Spark's YARN mode does for its AM. Only the
   * keytab's path is passed, never its bytes. Nothing when either is missing.
   */
  static List<String> kerberosLogin(Map<String, String> settings) {
    String principal = settings.getOrDefault("spark.kerberos.principal", "").trim();
    String keytab = settings.getOrDefault("spark.kerberos.keytab", "").trim();
    if (principal.isEmpty() || keytab.isEmpty()) {
      return List.of();
    }
    if (keytab.startsWith("file:")) {
      keytab = java.nio.file.Paths.get(java.net.URI.create(keytab)).toString();
    }
    return List.of("--principal", principal, "--keytab", keytab);
  }

  /** yarn-am's own AM memory ({@code spark.yarnam.am.memory}, 256 MB by default). */
  static long amMemoryMb(SparkConf conf) {
    return SubmitPlan.sizeMb(settings(conf), "spark.yarnam.am.memory", "256m");
  }

  static String sparkHome(SparkConf conf) {
    return conf.get("spark.yarnam.sparkHome", System.getenv().getOrDefault("SPARK_HOME", ""));
  }

  static String binary(SparkConf conf) {
    return conf.get("spark.yarnam.binary", System.getenv().getOrDefault("YARN_AM_BIN", "yarn-am"));
  }
}
