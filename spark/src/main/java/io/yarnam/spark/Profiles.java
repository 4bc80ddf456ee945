package io.yarnam.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.resource.ExecutorResourceRequest;
import org.apache.spark.resource.ResourceProfile;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's resource profiles (stage-level scheduling) as yarn-am executor kinds: each profile
 * but the default is declared to the AM ({@code POST /v1/kinds}) as kind {@code rp<id>}, sized
 * as Spark's YARN mode sizes its containers, and its executors are told their profile id, cores
 * and heap in environment variables that the executor command reads (see
 * {@link SubmitPlan#executorCommand}), so that one command serves every profile.
 */
public final class Profiles {
  /** The profile id the executor passes to Spark ({@code --resourceProfileId}). */
  public static final String PROFILE_VAR = "SPARK_YARNAM_PROFILE_ID";
  /** The profile's executor cores ({@code --cores}). */
  public static final String CORES_VAR = "SPARK_YARNAM_CORES";
  /** The profile's executor heap in MiB ({@code -Xmx}). */
  public static final String HEAP_VAR = "SPARK_YARNAM_HEAP_MB";

  private static final ObjectMapper JSON = new ObjectMapper();

  private Profiles() {}

  /**
   * The executor kinds the app reserves room for ({@code spark.yarnam.maxExecutorKinds}, 8 by
   * default): the default profile and up to 7 others at a time in one application.
   */
  static int maxKinds(SparkConf conf) {
    return Math.max(1, Math.min(64, conf.getInt("spark.yarnam.maxExecutorKinds", 8)));
  }

  /**
   * Lets Spark accept resource profiles on master {@code yarn-am}. Spark's
   * {@code ResourceProfileManager.isSupported} refuses any profile but the default unless the
   * master is {@code yarn}, {@code k8s://}, standalone or local-cluster (it decides from the
   * master string when the SparkContext starts); marking it as YARN's applies YARN's rule
   * instead, which is right here: profiles need dynamic allocation. The flag is a private field
   * of Spark 4.0's manager; on a Spark without it, profiles stay refused (logged).
   */
  static void admitOnYarnAm(org.apache.spark.SparkContext sc) {
    try {
      Object rpm = sc.resourceProfileManager();
      java.lang.reflect.Field f = rpm.getClass().getDeclaredField("isYarn");
      f.setAccessible(true);
      f.setBoolean(rpm, true);
    } catch (ReflectiveOperationException | RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(Profiles.class)
          .warn("cannot let Spark accept resource profiles on yarn-am: {}", e.toString());
    }
  }

  /** The kind's name for profile {@code id}. */
  public static String kindName(int id) {
    return "rp" + id;
  }

  /**
   * Spark resource names as YARN's: {@code gpu} and {@code fpga} as Spark's YARN mode maps them
   * ({@code spark.yarn.resourceGpuDeviceName}, {@code spark.yarn.resourceFpgaDeviceName}),
   * others by {@code spark.yarnam.resourceName.<name>} (such as
   * {@code spark.yarnam.resourceName.acc=example.com/accelerator}), else unchanged, as Spark's
   * YARN mode passes them.
   */
  static Map<String, String> resourceNames(SparkConf conf) {
    Map<String, String> m = new HashMap<>();
    m.put("gpu", conf.get("spark.yarn.resourceGpuDeviceName", "yarn.io/gpu"));
    m.put("fpga", conf.get("spark.yarn.resourceFpgaDeviceName", "yarn.io/fpga"));
    for (scala.Tuple2<String, String> kv : conf.getAllWithPrefix("spark.yarnam.resourceName.")) {
      m.put(kv._1(), kv._2());
    }
    return m;
  }

  /**
   * The {@code POST /v1/kinds} body for {@code rp}: memory as Spark's YarnAllocator asks for a
   * profile (heap + overhead + off-heap + PySpark memory, from
   * {@code ResourceProfile.getResourcesForClusterManager} with the executor's overhead
   * settings), its cores ({@code defaultCores} when it names none), its custom resources by
   * YARN name, and the variables its executors read.
   */
  public static ObjectNode declaration(ResourceProfile rp, SparkConf conf, int defaultCores, boolean isPython) {
    long minOverhead = JavaUtils.byteStringAsMb(conf.get("spark.executor.minMemoryOverhead", "384m"));
    double factor = conf.getDouble("spark.executor.memoryOverheadFactor", 0.1);
    ResourceProfile.ExecutorResourcesOrDefaults r = org.apache.spark.resource.ResourceProfile$.MODULE$.getResourcesForClusterManager(
        rp.id(), rp.executorResources(), minOverhead, factor, conf, isPython,
        scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(resourceNames(conf))));
    int cores = r.cores().isDefined() ? (Integer) r.cores().get() : defaultCores;
    ObjectNode body = JSON.createObjectNode();
    body.put("name", kindName(rp.id()));
    body.put("memory_mb", r.totalMemMiB());
    body.put("vcores", cores);
    ObjectNode resources = body.putObject("resources");
    for (Map.Entry<String, ExecutorResourceRequest> e
        : CollectionConverters.asJava(r.customResources()).entrySet()) {
      resources.put(e.getKey(), e.getValue().amount());
    }
    ObjectNode env = body.putObject("env");
    env.put(PROFILE_VAR, Integer.toString(rp.id()));
    env.put(CORES_VAR, Integer.toString(cores));
    env.put(HEAP_VAR, Long.toString(r.executorMemoryMiB()));
    return body;
  }
}
