package io.yarnam.spark;

import java.io.IOException;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.launcher.JavaModuleOptions;
import scala.Tuple2;

/**
 * The client of cluster deploy mode: submits the application to yarn-am with the Spark driver
 * as the AM's driver command ({@code yarn-am submit --driver-command}), and (Spark's
 * {@code spark.yarn.submit.waitAppCompletion}, true by default) follows it until it ends,
 * exiting 0 only if it SUCCEEDED.
 *
 * <p>Run by {@code spark/bin/spark-submit-yarn-am --deploy-mode cluster} through spark-submit
 * (master local), so Spark's settings arrive resolved as usual (--conf, --properties-file,
 * spark-defaults.conf, --jars, --files, --archives, --driver-memory, ...). Arguments:
 * {@code --class MAIN app.jar [args]} or {@code --python app.py [args]}.
 *
 * <p>The driver runs in the AM container beside yarn-am, as in Spark's YARN cluster mode: it
 * starts with the AM (no second container to wait for), lives exactly as long as the app,
 * reaches the driver API on its own host, and its logs are the AM container's. The container
 * holds yarn-am ({@code spark.yarnam.am.memory}, 256 MB) plus the driver (its heap and
 * Spark's overhead, {@code spark.driver.memoryOverhead} or max(384 MB, 10%)).
 *
 * <p>Every file (the app, --jars, --py-files, --files, the driver's settings) and archive
 * (Spark's jars, PySpark's Python side, --archives) goes through yarn-am's staging to the AM
 * container and the executors, into their working directories; the driver is
 * {@code SparkSubmit --master local} with {@link Launcher}, as in client mode, started by
 * the AM with those names.
 */
public final class ClusterClient {
  /** The driver's Spark settings, a file beside it in the AM container. */
  static final String DRIVER_PROPERTIES = "__spark_driver__.properties";
  static final String PLUGIN_JAR = "yarn-am-spark.jar";
  /** The folder of the client's Hadoop configuration in the AM container (Spark's name for it). */
  static final String HADOOP_CONF = "__hadoop_conf__";
  /** Where {@code yarn-am submit --keytab} puts the keytab in the AM container (not in executors'). */
  static final String AM_KEYTAB = "yarn-am.keytab";
  /**
   * Settings the driver gets in another form (file names in its directory) or not at all. The
   * Kerberos login stays with the client: a driver in the AM container has the application's
   * delegation tokens, not the keytab (its path is this host's; yarn-am's AM refreshes the
   * tokens with it).
   */
  private static final Set<String> NOT_PASSED = Set.of(
      "spark.master", "spark.submit.deployMode", "spark.jars", "spark.files", "spark.archives",
      "spark.submit.pyFiles", "spark.yarnam.pyFiles", "spark.driver.host", "spark.driver.bindAddress",
      "spark.app.submitTime", "spark.yarn.isPython", "spark.yarnam.deployMode",
      "spark.kerberos.principal", "spark.kerberos.keytab");

  private ClusterClient() {}

  public static void main(String[] args) throws Exception {
    boolean python = args.length >= 2 && args[0].equals("--python");
    boolean jvm = args.length >= 3 && args[0].equals("--class");
    if (!python && !jvm) {
      System.err.println("usage: ClusterClient --class MAIN app.jar [args] | --python app.py [args]");
      System.exit(2);
    }
    SparkConf conf = new SparkConf();
    if (python) {
      conf.set("spark.yarn.isPython", "true");
    }
    String mainClass = python ? null : args[1];
    String primary = python ? args[1] : args[2];
    // spark-submit names an app without --name after its main class, which here is this one.
    if (conf.get("spark.app.name", "").equals(ClusterClient.class.getName())) {
      conf.set("spark.app.name", python ? Paths.get(primary).getFileName().toString() : mainClass);
    }
    String[] appArgs = Arrays.copyOfRange(args, python ? 2 : 3, args.length);

    // name in the containers' working directory -> what to ship
    Map<String, String> files = new LinkedHashMap<>();
    List<String> jarNames = new ArrayList<>();
    List<String> pyNames = new ArrayList<>();
    // The plugin is this class's jar (spark-submit's primary resource here), whatever its name.
    Path plugin = Paths.get(ClusterClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    files.put(PLUGIN_JAR, plugin.toString());
    String primaryName = ship(files, primary);
    for (String jar : list(conf, "spark.jars")) {
      if (location(jar).equals(plugin.toString())) {
        continue;
      }
      String name = ship(files, jar);
      if (!name.equals(primaryName)) {
        jarNames.add(name);
      }
    }
    for (String f : list(conf, "spark.yarnam.pyFiles")) {
      pyNames.add(ship(files, f));
    }
    for (String f : list(conf, "spark.files")) {
      ship(files, f);
    }
    List<String> archives = new ArrayList<>();
    for (String a : list(conf, "spark.archives")) {
      archives.add(location(a));
    }
    Path hadoopConf = hadoopConfZip();
    if (hadoopConf != null) {
      archives.add(hadoopConf + "#" + HADOOP_CONF);
    }
    files.put(DRIVER_PROPERTIES, driverProperties(conf).toString());

    SubmitPlan plan = YarnAmSubmit.plan(conf);
    String name = conf.get("spark.app.name", primaryName);
    List<String> submit = YarnAmSubmit.args(conf, plan, YarnAmSubmit.DRIVER_URL_FROM_KV, name);
    for (Map.Entry<String, String> f : files.entrySet()) {
      submit.add("--file");
      submit.add(f.getValue() + "#" + f.getKey());
    }
    for (String a : archives) {
      submit.add("--archive");
      submit.add(a);
    }
    for (Tuple2<String, String> kv : conf.getAllWithPrefix("spark.yarn.appMasterEnv.")) {
      submit.add("--env");
      submit.add(kv._1() + "=" + kv._2());
    }
    Map<String, String> settings = YarnAmSubmit.settings(conf);
    long driverHeap = SubmitPlan.sizeMb(settings, "spark.driver.memory", "1g");
    long driverMb = driverHeap + (conf.contains("spark.driver.memoryOverhead")
        ? SubmitPlan.sizeMb(settings, "spark.driver.memoryOverhead", "0")
        : Math.max(SubmitPlan.sizeMb(settings, "spark.driver.minMemoryOverhead", "384"),
            (long) (conf.getDouble("spark.driver.memoryOverheadFactor", 0.1) * driverHeap)));
    submit.add("--am-memory");
    submit.add(Long.toString(YarnAmSubmit.amMemoryMb(conf) + driverMb));
    submit.add("--am-vcores");
    submit.add(Integer.toString(conf.getInt("spark.driver.cores", 1)));
    submit.addAll(SubmitPlan.amResources(settings, true));
    submit.add("--driver-command");
    submit.add(driverCommand(conf, driverHeap, mainClass, primaryName, jarNames, pyNames, appArgs));
    boolean wait = conf.getBoolean("spark.yarn.submit.waitAppCompletion", true);
    if (wait) {
      submit.add("--wait");
    }
    // The shuffle service's data: the secret the driver will use (with master yarn-am, Spark's
    // SecurityManager takes it from spark.authenticate.secret, as here).
    List<Path> secretFiles = new ArrayList<>();
    submit.addAll(ShuffleService.args(settings, () -> new org.apache.spark.SecurityManager(conf,
        org.apache.spark.SecurityManager.$lessinit$greater$default$2(),
        org.apache.spark.SecurityManager.$lessinit$greater$default$3()).getSecretKey(), secretFiles));
    List<String> cmd = new ArrayList<>();
    cmd.add(YarnAmSubmit.binary(conf));
    cmd.addAll(submit);
    Process p = new ProcessBuilder(cmd).inheritIO().start();
    int code;
    try {
      code = p.waitFor();
    } finally {
      ShuffleService.delete(secretFiles);
    }
    Files.deleteIfExists(Paths.get(files.get(DRIVER_PROPERTIES)));
    if (hadoopConf != null) {
      Files.deleteIfExists(hadoopConf);
    }
    if (code != 0) {
      System.err.println("spark-submit-yarn-am: yarn-am submit" + (wait ? " --wait" : "") + " exited " + code
          + (wait ? " (1: the application FAILED, 3: KILLED, 2: it was not submitted)" : ""));
    }
    System.exit(code);
  }

  /**
   * The AM's driver command: Spark's SparkSubmit (master local, client deploy mode: the
   * driver is this process) with the Launcher, Spark's jars from the shipped runtime, the
   * app's files by their names in the working directory, and the host YARN gave the
   * container as the driver's host. It travels as a file (yarn-am's --driver-command), so the
   * arguments are single-quoted for bash.
   */
  static String driverCommand(SparkConf conf, long heapMb, String mainClass, String primary,
      List<String> jars, List<String> pyFiles, String[] appArgs) {
    boolean python = mainClass == null;
    String javaHome = conf.get("spark.yarnam.executor.javaHome", "");
    String java = (javaHome.isEmpty() ? "${JAVA_HOME}" : quote(javaHome)) + "/bin/java";
    String extraCp = conf.get("spark.driver.extraClassPath", "");
    List<String> c = new ArrayList<>();
    if (python) {
      c.add("export SPARK_HOME=\"$PWD/" + SparkRuntime.PYTHON_LINK + "\";");
    }
    // Kerberos (spark-submit's --principal/--keytab): the driver logs in from the keytab
    // yarn-am staged for its AM, when it did (WebHDFS staging), and Spark's token manager
    // then renews the tokens of the driver and its executors, as in Spark's YARN cluster mode.
    String principal = conf.get("spark.kerberos.principal", "").trim();
    boolean kerberos = !principal.isEmpty() && !conf.get("spark.kerberos.keytab", "").trim().isEmpty();
    if (kerberos) {
      c.add("if [ -f " + AM_KEYTAB + " ]; then set -- --principal " + quote(principal) + " --keytab "
          + AM_KEYTAB + "; fi;");
    }
    c.add("exec " + java);
    c.add("-Xmx" + heapMb + "m");
    c.add(JavaModuleOptions.defaultModuleOptions());
    if (kerberos) {
      // The JVM finds the KDC through java.security.krb5.conf (else /etc/krb5.conf), not KRB5_CONFIG.
      c.add("${KRB5_CONFIG:+\"-Djava.security.krb5.conf=$KRB5_CONFIG\"}");
    }
    String opts = (conf.get("spark.driver.defaultJavaOptions", "") + " "
        + conf.get("spark.driver.extraJavaOptions", "")).trim();
    if (!opts.isEmpty()) {
      c.add(opts); // options as the user wrote them, for the shell to split (as spark-submit does)
    }
    c.add("-cp");
    String nodeCp = SparkRuntime.nodeClasspath(YarnAmSubmit.settings(conf));
    c.add("'" + HADOOP_CONF + ":" + (extraCp.isEmpty() ? "" : extraCp + ":") + SparkRuntime.LINK + "/*"
        + (nodeCp.isEmpty() ? "" : ":" + nodeCp) + "'");
    c.add("org.apache.spark.deploy.SparkSubmit --master local --deploy-mode client");
    c.add("--properties-file " + DRIVER_PROPERTIES);
    if (kerberos) {
      c.add("\"$@\"");
    }
    c.add("--conf \"spark.driver.host=$NM_HOST\"");
    c.add("--conf spark.yarnam.deployMode=cluster");
    if (!pyFiles.isEmpty()) {
      c.add("--conf " + quote("spark.yarnam.pyFiles=" + String.join(",", pyFiles)));
    }
    // A PySpark driver's primary resource is the plugin (on the classpath that way).
    List<String> allJars = new ArrayList<>();
    if (!python) {
      allJars.add(PLUGIN_JAR);
    }
    allJars.addAll(jars);
    if (!allJars.isEmpty()) {
      c.add("--jars " + quote(String.join(",", allJars)));
    }
    c.add("--class io.yarnam.spark.Launcher");
    if (python) {
      c.add(PLUGIN_JAR + " --python " + quote(primary));
    } else {
      c.add(quote(primary) + " " + quote(mainClass));
    }
    for (String a : appArgs) {
      c.add(quote(a));
    }
    return String.join(" ", c);
  }

  /**
   * The client's Hadoop configuration for the driver (a zip, unpacked in the AM container as
   * {@link #HADOOP_CONF}, first on its classpath), as Spark's YARN mode ships
   * {@code __hadoop_conf__}: the driver then reaches HDFS as the client does (its NameNode,
   * {@code dfs.client.use.datanode.hostname}, {@code hadoop.security.authentication}) and, as
   * with Spark's HadoopRDD, its executors get that configuration from it. The {@code *.xml} of
   * {@code HADOOP_CONF_DIR}, then {@code YARN_CONF_DIR} (a name already taken is skipped), but
   * {@code ssl-server.xml} (a server's keystore passwords). Null when neither is set.
   */
  static Path hadoopConfZip() throws IOException {
    java.util.TreeMap<String, Path> found = new java.util.TreeMap<>();
    for (String env : new String[] {"HADOOP_CONF_DIR", "YARN_CONF_DIR"}) {
      String dir = System.getenv(env);
      if (dir == null || dir.isEmpty() || !Files.isDirectory(Paths.get(dir))) {
        continue;
      }
      try (java.util.stream.Stream<Path> s = Files.list(Paths.get(dir))) {
        s.filter(f -> Files.isRegularFile(f) && f.getFileName().toString().endsWith(".xml")
                && !f.getFileName().toString().equals("ssl-server.xml"))
            .forEach(f -> found.putIfAbsent(f.getFileName().toString(), f));
      }
    }
    if (found.isEmpty()) {
      return null;
    }
    Path zip = Files.createTempFile("yarn-am-spark-hadoop-conf-", ".zip");
    try (java.util.zip.ZipOutputStream out = new java.util.zip.ZipOutputStream(Files.newOutputStream(zip))) {
      for (Map.Entry<String, Path> f : found.entrySet()) {
        java.util.zip.ZipEntry e = new java.util.zip.ZipEntry(f.getKey());
        // The files' own times, so an unchanged configuration makes the same bytes (staged once).
        e.setTime(Files.getLastModifiedTime(f.getValue()).toMillis());
        out.putNextEntry(e);
        Files.copy(f.getValue(), out);
        out.closeEntry();
      }
    }
    return zip;
  }

  /** A word for bash, single-quoted. */
  static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }

  /** The driver's settings: Spark's, minus those it gets as names here or must not have. */
  private static Path driverProperties(SparkConf conf) throws IOException {
    Properties props = new Properties();
    for (Tuple2<String, String> kv : conf.getAll()) {
      if (!NOT_PASSED.contains(kv._1())) {
        props.setProperty(kv._1(), kv._2());
      }
    }
    Path f = Files.createTempFile("yarn-am-spark-driver-", ".properties");
    try (Writer w = Files.newBufferedWriter(f, StandardCharsets.UTF_8)) {
      props.store(w, "Spark settings of a cluster-mode driver on yarn-am");
    }
    return f;
  }

  /** Adds {@code uri} to {@code files} under its file name; returns the name. */
  private static String ship(Map<String, String> files, String uri) {
    String loc = location(uri);
    String name = Paths.get(URI.create(loc.contains("://") ? loc : "file:" + loc).getPath()).getFileName().toString();
    String before = files.putIfAbsent(name, loc);
    if (before != null && !before.equals(loc)) {
      throw new IllegalArgumentException("two files named " + name + " to ship: " + before + " and " + loc);
    }
    return name;
  }

  /** A local path for {@code file:} URIs and plain paths; other URLs (hdfs://) as they are. */
  private static String location(String uri) {
    String u = uri.trim();
    if (u.startsWith("file:")) {
      String frag = "";
      int hash = u.indexOf('#');
      if (hash >= 0) {
        frag = u.substring(hash);
        u = u.substring(0, hash);
      }
      return Paths.get(URI.create(u)).toString() + frag;
    }
    if (u.startsWith("local:")) {
      throw new IllegalArgumentException("local: URIs (files already on every node) are not supported: " + uri);
    }
    return u;
  }

  private static List<String> list(SparkConf conf, String key) {
    List<String> out = new ArrayList<>();
    for (String s : conf.get(key, "").split(",")) {
      if (!s.isBlank()) {
        out.add(s.trim());
      }
    }
    return out;
  }
}
