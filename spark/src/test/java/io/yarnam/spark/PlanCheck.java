package io.yarnam.spark;

import java.util.List;
import java.util.Map;
import org.apache.spark.scheduler.ExecutorExited;
import org.apache.spark.scheduler.ExecutorKilled$;
import org.apache.spark.scheduler.ExecutorLossReason;

/**
 * Checks of the plugin's pure parts (no cluster): Spark settings to yarn-am submit flags and
 * the executor command, and yarn-am's loss verdicts to Spark's loss reasons. Run by
 * tests/cluster/it_spark.rs; prints "N passed, 0 failed" or exits 1 naming the first failure.
 */
public final class PlanCheck {
  private static int passed;

  /** spark.shuffle.service.enabled: the --service-data arguments. */
  private static void shuffleService() throws Exception {
    java.util.function.Supplier<String> noSecret = () -> {
      throw new AssertionError("the secret is asked only with spark.authenticate");
    };
    List<java.nio.file.Path> written = new java.util.ArrayList<>();
    check(ShuffleService.args(Map.of(), noSecret, written).isEmpty(), "no shuffle service, no service data");
    check(ShuffleService.args(Map.of("spark.shuffle.service.enabled", "true"), noSecret, written)
        .equals(List.of("--service-data", "spark_shuffle")), "no authentication: empty data for spark_shuffle");
    List<String> a = ShuffleService.args(Map.of("spark.shuffle.service.enabled", "true",
        "spark.shuffle.service.name", "spark_shuffle_4", "spark.authenticate", "true"), () -> "s3cret", written);
    check(a.size() == 2 && a.get(0).equals("--service-data") && a.get(1).startsWith("spark_shuffle_4=@")
        && !a.get(1).contains("s3cret"), "the secret from a file, not the command line: " + a);
    java.nio.file.Path f = java.nio.file.Paths.get(a.get(1).substring("spark_shuffle_4=@".length()));
    check(written.equals(List.of(f)) && java.nio.file.Files.readString(f).equals("s3cret"),
        "the file holds the secret's UTF-8 bytes");
    check(java.nio.file.attribute.PosixFilePermissions.toString(java.nio.file.Files.getPosixFilePermissions(f))
        .equals("rw-------"), "the secret file is the user's alone");
    ShuffleService.delete(written);
    check(!java.nio.file.Files.exists(f), "the secret file is removed after submit");
  }

  /** spark.yarn.jars: each jar shipped under __spark_libs__/, local: ones on the classpath. */
  private static void yarnJars() throws Exception {
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("plancheck-jars");
    for (String n : List.of("a.jar", "b.jar", "notes.txt")) {
      java.nio.file.Files.writeString(dir.resolve(n), n);
    }
    java.nio.file.Files.createDirectory(dir.resolve("sub.jar"));
    SparkRuntime r = SparkRuntime.choose(Map.of("spark.yarn.jars", dir + "/*.jar, local:/opt/spark/jars/*,"
        + "hdfs://nn:8020/jars/c.jar,file://" + dir + "/notes.txt"), null);
    check(r.archive == null && r.jarsDir.equals("__spark_libs__"), "nothing zipped: " + r.archive);
    check(r.files.equals(List.of(dir + "/a.jar#__spark_libs__/a.jar", dir + "/b.jar#__spark_libs__/b.jar",
        "hdfs://nn:8020/jars/c.jar#__spark_libs__/c.jar", dir + "/notes.txt#__spark_libs__/notes.txt")),
        "globs expanded (files only), hdfs in place, each under __spark_libs__/: " + r.files);
    check(r.nodeClasspath.equals("/opt/spark/jars/*"), "local: on the node: " + r.nodeClasspath);
    SubmitPlan p = SubmitPlan.of(Map.of(), 1);
    String cmd = p.executorCommand("spark://x@h:1", r.jarsDir, "", "", "", "/x.jar", null, r.nodeClasspath);
    check(cmd.contains("-cp '/x.jar:__spark_libs__/*:/opt/spark/jars/*' "), "classpath order as Spark's: " + cmd);
    check(SparkRuntime.choose(Map.of("spark.yarn.archive", "hdfs:///z.zip", "spark.yarn.jars", dir + "/a.jar"), null)
        .archive.equals("hdfs:///z.zip#__spark_libs__"), "spark.yarn.archive wins over spark.yarn.jars");
    SparkRuntime onlyLocal = SparkRuntime.choose(Map.of("spark.yarn.jars", "local:/opt/s/jars/*"), null);
    check(onlyLocal.files.isEmpty() && onlyLocal.nodeClasspath.equals("/opt/s/jars/*"), "only local: ships nothing");
    for (String bad : List.of("hdfs:///jars/*.jar", "s3a://b/x.jar", dir + "/missing.jar", dir + "/*.war", " , ")) {
      try {
        SparkRuntime.choose(Map.of("spark.yarn.jars", bad), null);
        check(false, "spark.yarn.jars " + bad + " is refused");
      } catch (IllegalArgumentException | java.io.IOException e) {
        check(e.getMessage().contains("spark.yarn.jars"), "the error names the key: " + e.getMessage());
      }
    }
    org.apache.spark.SparkConf dc = new org.apache.spark.SparkConf(false)
        .set("spark.yarn.jars", dir + "/a.jar,local:/opt/s/jars/*");
    String drv = ClusterClient.driverCommand(dc, 512, "com.x.Main", "app.jar", List.of(), List.of(), new String[0]);
    check(drv.contains("-cp '__hadoop_conf__:__spark_libs__/*:/opt/s/jars/*' "), "the cluster-mode driver's classpath: " + drv);
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("FAILED: " + what);
      System.exit(1);
    }
    passed++;
  }

  public static void main(String[] args) throws Exception {
    // Spark's YARN sizing: heap + max(384, 10% of heap).
    SubmitPlan p = SubmitPlan.of(Map.of("spark.executor.memory", "512m", "spark.executor.cores", "2"), 2);
    check(p.heapMb == 512 && p.containerMb == 896 && p.cores == 2, "512m heap -> 896 MB container, 2 cores");
    check(p.initial == 2 && p.min == 2 && p.max == 2, "static allocation: min = max = initial");
    SubmitPlan big = SubmitPlan.of(Map.of("spark.executor.memory", "8g"), 1);
    check(big.containerMb == 8192 + 819, "8g heap -> 10% overhead");
    SubmitPlan set = SubmitPlan.of(Map.of("spark.executor.memory", "1g", "spark.executor.memoryOverhead", "100m",
        "spark.memory.offHeap.enabled", "true", "spark.memory.offHeap.size", "256m"), 1);
    check(set.containerMb == 1024 + 100 + 256, "explicit overhead plus off-heap");
    SubmitPlan dyn = SubmitPlan.of(Map.of("spark.dynamicAllocation.enabled", "true",
        "spark.dynamicAllocation.minExecutors", "1", "spark.dynamicAllocation.maxExecutors", "5"), 1);
    check(dyn.min == 1 && dyn.max == 5 && dyn.initial == 1, "dynamic allocation bounds");
    SubmitPlan unbounded = SubmitPlan.of(Map.of("spark.dynamicAllocation.enabled", "true"), 0);
    check(unbounded.max == SubmitPlan.UNBOUNDED_MAX, "no maxExecutors -> yarn-am's cap");
    try {
      SubmitPlan.of(Map.of("spark.executor.memory", "lots"), 1);
      check(false, "a bad size is refused");
    } catch (IllegalArgumentException e) {
      check(e.getMessage().contains("spark.executor.memory"), "the error names the key: " + e.getMessage());
    }

    String cmd = p.executorCommand("spark://CoarseGrainedScheduler@drv:7077", "/opt/spark/jars", "",
        "--add-opens=java.base/java.lang=ALL-UNNAMED", "-Dx=1", "");
    check(cmd.startsWith("exec ${JAVA_HOME}/bin/java -server -Xmx${SPARK_YARNAM_HEAP_MB:-512}m "),
        "java and heap (a profile's from its kind's env): " + cmd);
    check(cmd.contains("-cp '/opt/spark/jars/*' " + SubmitPlan.EXECUTOR_MAIN), "classpath quoted: " + cmd);
    check(cmd.contains("--executor-id $YARN_AM_EXECUTOR_ID --hostname $NM_HOST --cores ${SPARK_YARNAM_CORES:-2}"
        + " --app-id $YARN_AM_APP_ID --resourceProfileId ${SPARK_YARNAM_PROFILE_ID:-0}"),
        "ids, host, cores and profile from the container's environment: " + cmd);
    // A resource profile as an executor kind: Spark's YARN sizes (heap + max(384, 10%) +
    // PySpark memory), the profile's cores, gpu as yarn.io/gpu, a mapped custom name.
    org.apache.spark.SparkConf pc = new org.apache.spark.SparkConf(false)
        .set("spark.yarnam.resourceName.acc", "example.com/accelerator");
    // (The default profile takes id 0, as in a SparkContext; a profile gets the next.)
    org.apache.spark.resource.ResourceProfile$.MODULE$.getOrCreateDefaultProfile(pc);
    org.apache.spark.resource.ExecutorResourceRequests er = new org.apache.spark.resource.ExecutorResourceRequests()
        .cores(3).memory("2g").pysparkMemory("100m").resource("gpu", 1, "/bin/true", "")
        .resource("acc", 2, "/bin/true", "");
    org.apache.spark.resource.ResourceProfile rp = new org.apache.spark.resource.ResourceProfileBuilder()
        .require(er).require(new org.apache.spark.resource.TaskResourceRequests().cpus(1)).build();
    com.fasterxml.jackson.databind.node.ObjectNode kind = Profiles.declaration(rp, pc, 2, true);
    check(kind.path("name").asText().equals("rp" + rp.id()), "kind name: " + kind);
    check(kind.path("memory_mb").asLong() == 2048 + 384 + 100 && kind.path("vcores").asInt() == 3,
        "profile size: " + kind);
    check(kind.path("resources").path("yarn.io/gpu").asLong() == 1
        && kind.path("resources").path("example.com/accelerator").asLong() == 2, "resources: " + kind);
    check(kind.path("env").path("SPARK_YARNAM_PROFILE_ID").asText().equals(Integer.toString(rp.id()))
        && kind.path("env").path("SPARK_YARNAM_CORES").asText().equals("3")
        && kind.path("env").path("SPARK_YARNAM_HEAP_MB").asText().equals("2048"), "env: " + kind);
    check(cmd.contains("--driver-url spark://CoarseGrainedScheduler@drv:7077"), "driver URL");
    try {
      p.executorCommand("spark://x@h:1", "/j", "", "", "-Dname=\"a b\"", "");
      check(false, "a double quote is refused");
    } catch (IllegalArgumentException e) {
      check(e.getMessage().contains("double quote"), "double quote named");
    }
    List<String> a = p.submitArgs("app", "q", 1, cmd);
    check(a.get(0).equals("submit") && a.contains("--executor-memory") && a.contains("896")
        && a.get(a.indexOf("--executor-command") + 1).equals(cmd) && a.get(a.indexOf("--queue") + 1).equals("q"),
        "submit args: " + a);

    String setup = p.executorCommand("$(./yarn-am kv wait k)", "__spark_libs__", "", "", "", "",
        "export SPARK_HOME=$PWD/__pyspark__");
    check(setup.startsWith("export SPARK_HOME=$PWD/__pyspark__; exec "), "PySpark's setup first: " + setup);

    // Cluster mode: the AM's driver command.
    check(ClusterClient.quote("it's").equals("'it'\\''s'"), "single quotes for bash");
    org.apache.spark.SparkConf dc = new org.apache.spark.SparkConf(false)
        .set("spark.driver.extraJavaOptions", "-Dx=1");
    String drv = ClusterClient.driverCommand(dc, 512, "com.x.Main", "app.jar", List.of("dep.jar"),
        List.of(), new String[] {"a b"});
    check(drv.startsWith("exec ${JAVA_HOME}/bin/java -Xmx512m ") && drv.contains(" -Dx=1 ")
        && drv.contains("-cp '__hadoop_conf__:__spark_libs__/*' org.apache.spark.deploy.SparkSubmit --master local")
        && !drv.contains("--principal") && !drv.contains("\"$@\"")
        && drv.contains("--jars 'yarn-am-spark.jar,dep.jar' --class io.yarnam.spark.Launcher 'app.jar' 'com.x.Main' 'a b'")
        && drv.contains("spark.yarnam.deployMode=cluster"), "JVM driver command: " + drv);
    // With spark-submit's --principal/--keytab: the keytab yarn-am staged for the AM, if it is there.
    org.apache.spark.SparkConf kc = new org.apache.spark.SparkConf(false)
        .set("spark.kerberos.principal", "alice@R").set("spark.kerberos.keytab", "/home/alice/a.keytab");
    String kDrv = ClusterClient.driverCommand(kc, 512, "com.x.Main", "app.jar", List.of(), List.of(), new String[0]);
    check(kDrv.startsWith("if [ -f yarn-am.keytab ]; then set -- --principal 'alice@R' --keytab yarn-am.keytab; fi; exec ")
        && kDrv.contains("${KRB5_CONFIG:+\"-Djava.security.krb5.conf=$KRB5_CONFIG\"}")
        && kDrv.contains("--properties-file __spark_driver__.properties \"$@\" ")
        && !kDrv.contains("a.keytab"), "Kerberos driver command: " + kDrv);
    check(YarnAmSubmit.kerberosLogin(Map.of("spark.kerberos.principal", "alice@R",
            "spark.kerberos.keytab", "file:/k/a.keytab"))
        .equals(List.of("--principal", "alice@R", "--keytab", "/k/a.keytab"))
        && YarnAmSubmit.kerberosLogin(Map.of("spark.kerberos.principal", "alice@R")).isEmpty(),
        "spark-submit's --principal/--keytab go to yarn-am submit");
    String pyDrv = ClusterClient.driverCommand(dc, 512, null, "job.py", List.of(), List.of("lib.py"), new String[0]);
    check(pyDrv.startsWith("export SPARK_HOME=\"$PWD/__pyspark__\"; exec ")
        && pyDrv.contains("'spark.yarnam.pyFiles=lib.py'")
        && pyDrv.contains("yarn-am-spark.jar --python 'job.py'") && !pyDrv.contains("--jars"),
        "PySpark driver command: " + pyDrv);

    ExecutorLossReason killed = LossReasons.of(-106, "released by the AM (killed by the driver)", false, true);
    check(killed == ExecutorKilled$.MODULE$, "a kill the driver asked for is ExecutorKilled");
    ExecutorExited pre = (ExecutorExited) LossReasons.of(-102, "preempted", false, false);
    check(!pre.exitCausedByApp() && pre.exitCode() == -102 && pre.reason().contains("preempted"),
        "preemption is not the app's fault");
    ExecutorExited crash = (ExecutorExited) LossReasons.of(137, "exited with 137", true, false);
    check(crash.exitCausedByApp() && crash.reason().contains("exit status 137"), "a crash is the app's fault");
    ExecutorExited unknown = (ExecutorExited) LossReasons.of(null, null, null, false);
    check(unknown.exitCausedByApp() && unknown.exitCode() == -1, "no verdict counts against the app");
    List<String> app = SubmitPlan.appSettings(Map.of("spark.yarn.priority", "5", "spark.yarn.tags", "etl, nightly",
        "spark.yarn.am.attemptFailuresValidityInterval", "1h", "spark.yarn.rolledLog.includePattern", "stdout",
        "spark.acls.enable", "true", "spark.admin.acls", "root", "spark.ui.view.acls", "bob",
        "spark.ui.view.acls.groups", "ops", "spark.yarn.executor.nodeLabelExpression", "gpu"), "alice");
    check(app.equals(List.of("--priority", "5", "--tag", "etl", "--tag", "nightly",
        "--attempt-failures-validity-interval", "3600000", "--rolled-log-include-pattern", "stdout",
        "--node-label", "gpu",
        "--view-acl", "alice,root,bob ops", "--modify-acl", "alice,root ")), "application settings: " + app);
    check(SubmitPlan.appSettings(Map.of(), "alice").isEmpty(), "no settings, no flags");
    check(SubmitPlan.appSettings(Map.of("spark.executor.resource.gpu.amount", "2",
        "spark.yarn.executor.resource.example.com/accelerator.amount", "1"), "a")
        .equals(List.of("--executor-resource", "example.com/accelerator=1", "--executor-resource", "yarn.io/gpu=2")),
        "executor resources");
    Map<String, String> am = Map.of("spark.yarn.am.resource.example.com/accelerator.amount", "1",
        "spark.yarn.driver.resource.yarn.io/gpu.amount", "1", "spark.driver.resource.fpga.amount", "2",
        "spark.executor.resource.gpu.amount", "4");
    check(SubmitPlan.amResources(am, false).equals(List.of("--am-resource", "example.com/accelerator=1")),
        "client mode: the AM's own keys only: " + SubmitPlan.amResources(am, false));
    check(SubmitPlan.amResources(am, true).equals(List.of("--am-resource", "yarn.io/fpga=2",
        "--am-resource", "yarn.io/gpu=1")), "cluster mode: the driver's: " + SubmitPlan.amResources(am, true));
    check(!SubmitPlan.appSettings(am, "a").contains("--am-resource"), "no AM resource among the app settings");
    check(SubmitPlan.appSettings(Map.of("spark.acls.enable", "true", "spark.modify.acls", "*"), "a")
        .contains("*"), "a * ACL stays *");
    shuffleService();
    yarnJars();
    System.out.println(passed + " passed, 0 failed");
  }
}
