package io.yarnam.spark;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs an application with master {@code yarn-am}: a JVM main class, or ({@code --python})
 * a PySpark program.
 *
 * <p>spark-submit accepts only the masters it knows ({@code yarn}, {@code spark://},
 * {@code k8s://}, {@code local}), so {@code spark/bin/spark-submit-yarn-am} runs
 * {@code spark-submit --master local --class io.yarnam.spark.Launcher <plugin jar> <main class>
 * <args>} (or {@code ... <plugin jar> --python app.py <args>}): spark-submit does its usual
 * client-mode work (classpath, --jars, --conf, driver options), and this class sets
 * {@code spark.master=yarn-am} before the application creates its SparkContext, which reads
 * the master from the system properties. A PySpark program's SparkConf reads them too (through
 * Py4J), so {@code SparkSession.builder.getOrCreate()} gets master yarn-am.
 *
 * <p>PySpark ({@code spark.yarn.isPython}, Spark's own key): Spark's {@code PythonRunner} runs
 * the program with the driver's PYTHONPATH; the {@code --py-files} (given as
 * {@code spark.yarnam.pyFiles}, since spark-submit takes --py-files only with a .py primary
 * resource) go on it, into {@code spark.submit.pyFiles} (PySpark adds them to its workers'
 * path) and, in client mode, into {@code spark.files} (the executors fetch them from the
 * driver; in cluster mode YARN has put them in every container's working directory).
 *
 * <p>In cluster mode (the driver in yarn-am's AM container), the application's failure is
 * written to {@code $YARN_AM_DRIVER_DIAGNOSTICS}, which the AM puts in the app's diagnostics.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 1 || (args[0].equals("--python") && args.length < 2)) {
      System.err.println("usage: Launcher <main class> [args...] | Launcher --python <app.py> [args...]");
      System.exit(2);
    }
    System.setProperty("spark.master", YarnAmClusterManager.MASTER);
    boolean python = args[0].equals("--python");
    String what = python ? "Python application " + args[1] : "User class " + args[0];
    try {
      if (python) {
        runPython(args[1], Arrays.copyOfRange(args, 2, args.length));
      } else {
        runMain(args[0], Arrays.copyOfRange(args, 1, args.length));
      }
    } catch (Throwable t) {
      diagnose(what, t);
      throw t;
    }
  }

  private static void runMain(String className, String[] args) throws Throwable {
    Class<?> main = Class.forName(className, true, Thread.currentThread().getContextClassLoader());
    Method m = main.getMethod("main", String[].class);
    if (!Modifier.isStatic(m.getModifiers())) {
      throw new IllegalArgumentException(className + ".main is not static");
    }
    try {
      m.invoke(null, (Object) args);
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static void runPython(String program, String[] args) {
    String pyFiles = System.getProperty("spark.yarnam.pyFiles", "").trim();
    System.setProperty("spark.yarn.isPython", "true");
    if (!pyFiles.isEmpty()) {
      System.setProperty("spark.submit.pyFiles", pyFiles);
      if (!"cluster".equals(System.getProperty("spark.yarnam.deployMode", "client"))) {
        String files = System.getProperty("spark.files", "").trim();
        System.setProperty("spark.files", files.isEmpty() ? pyFiles : files + "," + pyFiles);
      }
    }
    List<String> a = new ArrayList<>();
    a.add(program);
    a.add(pyFiles);
    a.addAll(Arrays.asList(args));
    org.apache.spark.deploy.PythonRunner.main(a.toArray(new String[0]));
  }

  /** Cluster mode: the failure, in a line, for the app's diagnostics (as Spark's YARN AM). */
  private static void diagnose(String what, Throwable t) {
    String path = System.getenv("YARN_AM_DRIVER_DIAGNOSTICS");
    if (path == null || path.isEmpty()) {
      return;
    }
    String text = t instanceof org.apache.spark.SparkUserAppException u
        ? what + " exited with code " + u.exitCode()
        : what + " threw an exception: " + t;
    try {
      Files.writeString(Paths.get(path), text + "\n", StandardCharsets.UTF_8);
    } catch (IOException e) {
      System.err.println("could not write the diagnostics file " + path + ": " + e);
    }
  }
}
