package io.yarnam.spark;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;

/**
 * Runs an application's main class with master {@code yarn-am}.
 *
 * <p>spark-submit accepts only the masters it knows ({@code yarn}, {@code spark://},
 * {@code k8s://}, {@code local}), so {@code spark/bin/spark-submit-yarn-am} runs
 * {@code spark-submit --master local --class io.yarnam.spark.Launcher <plugin jar> <main class>
 * <args>}: spark-submit does its usual client-mode work (classpath, --jars, --conf, driver
 * options), and this class sets {@code spark.master=yarn-am} before the application creates
 * its SparkContext, which reads the master from the system properties.
 */
public final class Launcher {
  private Launcher() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 1) {
      System.err.println("usage: Launcher <main class> [args...]");
      System.exit(2);
    }
    System.setProperty("spark.master", YarnAmClusterManager.MASTER);
    Class<?> main = Class.forName(args[0], true, Thread.currentThread().getContextClassLoader());
    Method m = main.getMethod("main", String[].class);
    if (!Modifier.isStatic(m.getModifiers())) {
      throw new IllegalArgumentException(args[0] + ".main is not static");
    }
    try {
      m.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    } catch (java.lang.reflect.InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
