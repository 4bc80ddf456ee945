package io.yarnam.spark;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * Where the executors find Spark's jars, as Spark's YARN mode decides it:
 * <ol>
 *   <li>{@code spark.yarn.archive} (a local path or an {@code hdfs://} URL of a zip of the
 *       jars): shipped as an archive the NodeManager unpacks into {@code __spark_libs__};</li>
 *   <li>{@code spark.yarnam.executor.jars}: a folder every NodeManager host already has
 *       (Spark installed on the nodes), nothing shipped;</li>
 *   <li>otherwise a zip of {@code SPARK_HOME/jars}, made once per set of jars in
 *       {@code spark.yarnam.cacheDir} (default {@code ~/.cache/yarn-am}) and shipped like
 *       {@code spark.yarn.archive}.</li>
 * </ol>
 * yarn-am stages archives through its content-addressed cache (with {@code --webhdfs}), so a
 * second submit uploads none of it, and the NodeManagers reuse their unpacked copy.
 */
final class SparkRuntime {
  /** The folder the archive is unpacked to in each executor's working directory (Spark's name). */
  static final String LINK = "__spark_libs__";

  /** The folder whose {@code *} is the executors' classpath. */
  final String jarsDir;
  /** The {@code --archive} argument, or null when nothing is shipped. */
  final String archive;

  private SparkRuntime(String jarsDir, String archive) {
    this.jarsDir = jarsDir;
    this.archive = archive;
  }

  /** The runtime for these settings; may build the zip of {@code sparkHome/jars}. */
  static SparkRuntime choose(Map<String, String> conf, String sparkHome) throws IOException {
    String archive = conf.get("spark.yarn.archive");
    if (archive != null && !archive.isBlank()) {
      return new SparkRuntime(LINK, archive.trim() + "#" + LINK);
    }
    String installed = conf.get("spark.yarnam.executor.jars");
    if (installed != null && !installed.isBlank()) {
      return new SparkRuntime(installed.trim(), null);
    }
    if (sparkHome == null || sparkHome.isEmpty()) {
      throw new IllegalStateException("SPARK_HOME is not set (nor spark.yarnam.sparkHome): the "
          + "executors' Spark jars are shipped from <SPARK_HOME>/jars unless spark.yarn.archive "
          + "or spark.yarnam.executor.jars names them");
    }
    Path zip = libsZip(Paths.get(sparkHome, "jars"), cacheDir(conf));
    return new SparkRuntime(LINK, zip + "#" + LINK);
  }

  /** Where the plugin keeps the zips it ships ({@code spark.yarnam.cacheDir}). */
  static Path cacheDir(Map<String, String> conf) {
    return Paths.get(conf.getOrDefault("spark.yarnam.cacheDir",
        Paths.get(System.getProperty("user.home"), ".cache", "yarn-am").toString()));
  }

  /**
   * The zip of the jars in {@code jars}, named by a digest of their names, sizes and mtimes:
   * made when no zip of this set exists yet (written aside, then moved into place), so its
   * bytes, and so yarn-am's staged copy, stay the same from one submit to the next.
   */
  static Path libsZip(Path jars, Path cacheDir) throws IOException {
    List<Path> files = new ArrayList<>();
    try (Stream<Path> s = Files.list(jars)) {
      s.filter(Files::isRegularFile).sorted().forEach(files::add);
    }
    if (files.isEmpty()) {
      throw new IllegalStateException(jars + " holds no jars to ship to the executors");
    }
    return storedZip(files, "", cacheDir, "spark-libs-");
  }

  /** The folder PySpark's Python side is unpacked to (its {@code SPARK_HOME} on the nodes). */
  static final String PYTHON_LINK = "__pyspark__";

  /**
   * The {@code --archive} argument of PySpark's Python side for the nodes (Spark's YARN mode
   * ships the same two files when {@code spark.yarn.isPython}): a zip of
   * {@code <SPARK_HOME>/python/lib/pyspark.zip} and {@code py4j-*-src.zip} under
   * {@code python/lib/}, so that with {@code SPARK_HOME=$PWD/__pyspark__} Spark's own
   * {@code PythonUtils.sparkPythonPath} finds them, on the executors and for a driver run by
   * the AM. Made once per version of the two files in {@code cacheDir}.
   */
  static String pythonArchive(String sparkHome, Path cacheDir) throws IOException {
    Path lib = Paths.get(sparkHome, "python", "lib");
    List<Path> files = new ArrayList<>();
    if (Files.isDirectory(lib)) {
      try (Stream<Path> s = Files.list(lib)) {
        s.filter(p -> {
          String n = p.getFileName().toString();
          return n.equals("pyspark.zip") || (n.startsWith("py4j-") && n.endsWith(".zip"));
        }).sorted().forEach(files::add);
      }
    }
    if (files.size() != 2) {
      throw new IllegalStateException("PySpark needs " + lib + "/pyspark.zip and py4j-*-src.zip on "
          + "the executors; found " + files);
    }
    return storedZip(files, "python/lib/", cacheDir, "spark-python-") + "#" + PYTHON_LINK;
  }

  /** A zip of {@code files} (entries {@code prefix + name}), named by their digest, made once. */
  private static Path storedZip(List<Path> files, String prefix, Path cacheDir, String namePrefix)
      throws IOException {
    MessageDigest md;
    try {
      md = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    for (Path f : files) {
      String line = prefix + f.getFileName() + "\0" + Files.size(f) + "\0"
          + Files.getLastModifiedTime(f).toMillis() + "\n";
      md.update(line.getBytes(StandardCharsets.UTF_8));
    }
    String key = HexFormat.of().formatHex(md.digest()).substring(0, 16);
    Path zip = cacheDir.resolve(namePrefix + key + ".zip");
    if (Files.isRegularFile(zip)) {
      return zip;
    }
    Files.createDirectories(cacheDir);
    Path tmp = Files.createTempFile(cacheDir, namePrefix, ".zip.part");
    try {
      try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 20);
          ZipOutputStream out = new ZipOutputStream(os)) {
        // Jars are compressed already: store them, which is also fast to unpack.
        out.setLevel(Deflater.NO_COMPRESSION);
        for (Path f : files) {
          ZipEntry e = new ZipEntry(prefix + f.getFileName());
          e.setTime(Files.getLastModifiedTime(f).toMillis());
          out.putNextEntry(e);
          Files.copy(f, out);
          out.closeEntry();
        }
      }
      Files.move(tmp, zip, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
    return zip;
  }
}
