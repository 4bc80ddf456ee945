package io.yarnam.spark;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
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
 *   <li>{@code spark.yarn.jars} (comma-separated local paths or globs, {@code hdfs://} URLs, or
 *       {@code local:} paths already on every node): each jar shipped as
 *       {@code __spark_libs__/NAME} (yarn-am's {@code --file}), the {@code local:} ones put on
 *       the classpath as they are, as Spark's YARN client does (see {@link #yarnJars});</li>
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
  /** The {@code --file} arguments ({@code spark.yarn.jars}' jars), maybe none. */
  final List<String> files;
  /** Classpath entries on every node, after {@code jarsDir/*} ("" for none). */
  final String nodeClasspath;

  private SparkRuntime(String jarsDir, String archive) {
    this(jarsDir, archive, List.of(), "");
  }

  private SparkRuntime(String jarsDir, String archive, List<String> files, String nodeClasspath) {
    this.jarsDir = jarsDir;
    this.archive = archive;
    this.files = files;
    this.nodeClasspath = nodeClasspath;
  }

  /** The runtime for these settings; may build the zip of {@code sparkHome/jars}. */
  static SparkRuntime choose(Map<String, String> conf, String sparkHome) throws IOException {
    String archive = conf.get("spark.yarn.archive");
    if (archive != null && !archive.isBlank()) {
      return new SparkRuntime(LINK, archive.trim() + "#" + LINK);
    }
    String jars = conf.get("spark.yarn.jars");
    if (jars != null && !jars.isBlank()) {
      return yarnJars(jars);
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

  /**
   * {@code spark.yarn.jars} as Spark's YARN client reads it ({@code Client.prepareLocalResources}
   * and {@code populateClasspath}): an entry with the {@code local:} scheme is a path on every
   * node, put on the classpath as it is ({@code local:/opt/spark/jars/*} too); an {@code hdfs://}
   * URL is shipped from where it is; anything else ({@code file:} or no scheme) is a local path
   * whose last part may be a glob, each regular file it matches shipped (yarn-am uploads it
   * through its content-addressed staging cache, so a second submit sends nothing). Each shipped
   * jar is linked as {@code __spark_libs__/NAME} in the containers, the layout of Spark's own
   * client (the NodeManager makes the folder), so the classpath stays {@code __spark_libs__/*}.
   * Not done: globs in folder names and in {@code hdfs://} URLs (list the jars), other schemes.
   */
  static SparkRuntime yarnJars(String setting) throws IOException {
    List<String> files = new ArrayList<>();
    List<String> node = new ArrayList<>();
    for (String raw : setting.split(",")) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      if (entry.startsWith("local:")) {
        node.add(URI.create(entry).getPath());
        continue;
      }
      int colon = entry.indexOf(':');
      String scheme = colon > 0 && entry.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")
          ? entry.substring(0, colon) : null;
      if ("hdfs".equals(scheme)) {
        if (hasGlob(entry)) {
          throw new IllegalArgumentException("spark.yarn.jars: " + entry + " is a glob on HDFS, which "
              + "the yarn-am plugin does not expand: list the jars, or zip them as spark.yarn.archive");
        }
        files.add(entry + "#" + LINK + "/" + entry.substring(entry.lastIndexOf('/') + 1));
        continue;
      }
      if (scheme != null && !scheme.equals("file")) {
        throw new IllegalArgumentException("spark.yarn.jars: " + entry + ": yarn-am ships local files, "
            + "hdfs:// URLs and local: paths on the nodes, not " + scheme + ":");
      }
      Path path = Paths.get(scheme == null ? entry : URI.create(entry).getPath());
      for (Path jar : expand(path)) {
        files.add(jar + "#" + LINK + "/" + jar.getFileName());
      }
    }
    if (files.isEmpty() && node.isEmpty()) {
      throw new IllegalArgumentException("spark.yarn.jars names no jar: " + setting);
    }
    return new SparkRuntime(LINK, null, List.copyOf(files), String.join(":", node));
  }

  /**
   * The {@code local:} entries of {@code spark.yarn.jars} as classpath ("" when none, or when
   * {@code spark.yarn.archive} takes precedence): for the cluster-mode driver's command.
   */
  static String nodeClasspath(Map<String, String> conf) {
    String archive = conf.get("spark.yarn.archive");
    String jars = conf.get("spark.yarn.jars");
    if ((archive != null && !archive.isBlank()) || jars == null) {
      return "";
    }
    List<String> node = new ArrayList<>();
    for (String raw : jars.split(",")) {
      if (raw.trim().startsWith("local:")) {
        node.add(URI.create(raw.trim()).getPath());
      }
    }
    return String.join(":", node);
  }

  private static boolean hasGlob(String s) {
    return s.chars().anyMatch(c -> c == '*' || c == '?' || c == '[' || c == '{');
  }

  /** The regular files a local path names: itself, or what a glob in its last part matches. */
  private static List<Path> expand(Path path) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    String last = path.getFileName() == null ? "" : path.getFileName().toString();
    if (parent != null && hasGlob(parent.toString())) {
      throw new IllegalArgumentException("spark.yarn.jars: " + path + ": only the file name may be a glob");
    }
    List<Path> out = new ArrayList<>();
    if (!hasGlob(last)) {
      if (!Files.isRegularFile(path)) {
        throw new java.io.FileNotFoundException("spark.yarn.jars: " + path + " is not a file");
      }
      out.add(path.toAbsolutePath());
      return out;
    }
    java.nio.file.PathMatcher m = parent.getFileSystem().getPathMatcher("glob:" + last);
    if (Files.isDirectory(parent)) {
      try (Stream<Path> s = Files.list(parent)) {
        s.filter(p -> Files.isRegularFile(p) && m.matches(p.getFileName())).sorted().forEach(out::add);
      }
    }
    if (out.isEmpty()) {
      throw new java.io.FileNotFoundException("spark.yarn.jars: " + path + " matches no file");
    }
    return out;
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
