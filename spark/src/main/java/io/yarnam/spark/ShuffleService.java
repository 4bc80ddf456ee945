package io.yarnam.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Spark's external shuffle service on the NodeManagers ({@code spark.shuffle.service.enabled}).
 * As Spark's YARN mode does (its {@code ExecutorRunnable}), every executor's launch context
 * carries service data for the NodeManagers' auxiliary service {@code spark.shuffle.service.name}
 * ({@code spark_shuffle} by default): the app's authentication secret as UTF-8 bytes when
 * {@code spark.authenticate} is on, else no bytes. The NodeManager registers the app with its
 * shuffle service from it; one that does not run a service of that name refuses the executor.
 *
 * <p>yarn-am takes service data from a file, never from its command line: the secret goes into
 * a file only this user can read, which the caller removes once {@code yarn-am submit} has
 * returned (submit reads it while parsing its arguments).
 */
final class ShuffleService {
  static final String DEFAULT_NAME = "spark_shuffle";

  private ShuffleService() {}

  /** The auxiliary service's name, or null when Spark's shuffle service is not enabled. */
  static String name(Map<String, String> conf) {
    if (!Boolean.parseBoolean(conf.getOrDefault("spark.shuffle.service.enabled", "false").trim())) {
      return null;
    }
    return conf.getOrDefault("spark.shuffle.service.name", DEFAULT_NAME).trim();
  }

  /**
   * The {@code --service-data} arguments for these settings (none when the service is off).
   * {@code secret} is asked only then (null: authentication off); a secret is written to a new
   * private file, added to {@code written} for the caller to delete.
   */
  static List<String> args(Map<String, String> conf, Supplier<String> secret, List<Path> written)
      throws IOException {
    List<String> a = new ArrayList<>();
    String name = name(conf);
    if (name == null) {
      return a;
    }
    String key = Boolean.parseBoolean(conf.getOrDefault("spark.authenticate", "false").trim())
        ? secret.get() : null;
    a.add("--service-data");
    if (key == null) {
      a.add(name);
      return a;
    }
    Path f = Files.createTempFile("yarn-am-shuffle-", ".secret",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    written.add(f);
    Files.write(f, key.getBytes(StandardCharsets.UTF_8));
    a.add(name + "=@" + f);
    return a;
  }

  /** Removes the files {@link #args} wrote. */
  static void delete(List<Path> written) {
    for (Path f : written) {
      try {
        Files.deleteIfExists(f);
      } catch (IOException e) {
        // Private to this user and in the temporary folder; nothing more to do.
      }
    }
  }
}
