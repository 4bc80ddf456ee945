package io.yarnam.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.deploy.security.HadoopDelegationTokenManager;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointAddress;
import org.apache.spark.scheduler.ExecutorProcessLost;
import org.apache.spark.scheduler.TaskSchedulerImpl;
import org.apache.spark.scheduler.cluster.CoarseGrainedSchedulerBackend;
import org.apache.spark.scheduler.cluster.SchedulerBackendUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's scheduler backend for master {@code yarn-am}: Spark keeps its own scheduling
 * (TaskSchedulerImpl, ExecutorAllocationManager, delay scheduling) and yarn-am is only its
 * ApplicationMaster, driven through the driver API.
 *
 * <ul>
 *   <li>start: {@code yarn-am submit} with executors that run Spark's
 *       CoarseGrainedExecutorBackend (ids assigned by yarn-am, host from YARN's NM_HOST), then
 *       waits for the AM to run and follows its executor events;
 *   <li>{@link #doRequestTotalExecutors}: {@code POST /v1/demand} with Spark's whole demand,
 *       one per resource profile, each other than the default an executor kind of its own
 *       ({@link Profiles});
 *   <li>{@link #doKillExecutors}: {@code POST /v1/executors/kill};
 *   <li>a lost executor is removed with the reason yarn-am gives ({@link LossReasons});
 *   <li>stop: {@code POST /v1/finish} with SUCCEEDED for exit code 0, else FAILED.
 * </ul>
 */
public class YarnAmSchedulerBackend extends CoarseGrainedSchedulerBackend {
  private static final Logger LOG = LoggerFactory.getLogger(YarnAmSchedulerBackend.class);
  /** How long a disconnected executor waits for yarn-am's verdict before Spark removes it. */
  private static final long LOSS_REASON_WAIT_MS = 60_000;

  private final SparkContext sc;
  private final TaskSchedulerImpl scheduler;
  private final Set<String> killedByDriver = ConcurrentHashMap.newKeySet();
  private final Set<String> removed = ConcurrentHashMap.newKeySet();
  /** Resource profiles declared to the AM as executor kinds ({@link Profiles}). */
  private final Set<Integer> declaredProfiles = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "yarn-am-loss-reasons");
    t.setDaemon(true);
    return t;
  });
  private volatile YarnAmApp app;
  private volatile AmClient am;
  private volatile boolean stopping;
  private volatile int exitCode;
  private volatile int initialExecutors;
  private final Object finishLock = new Object();
  private boolean finished;

  /** Cluster deploy mode: the driver runs in yarn-am's AM container (see {@link #startInAm}). */
  private final boolean clusterMode;
  /** Cluster mode: the application's id, from the AM. */
  private final String amAppId;

  public YarnAmSchedulerBackend(TaskSchedulerImpl scheduler, SparkContext sc) {
    super(scheduler, sc.env().rpcEnv());
    this.sc = sc;
    this.scheduler = scheduler;
    this.clusterMode = YarnAmClusterManager.inAmContainer(sc.conf());
    this.amAppId = clusterMode ? System.getenv("YARN_AM_APP_ID") : null;
  }

  @Override
  public void start() {
    super.start();
    Profiles.admitOnYarnAm(sc);
    SparkConf conf = sc.conf();
    initialExecutors = SchedulerBackendUtils.getInitialTargetExecutorNumber(conf, 2);
    String driverUrl = RpcEndpointAddress.apply(
        conf.get("spark.driver.host"), conf.getInt("spark.driver.port", 0),
        CoarseGrainedSchedulerBackend.ENDPOINT_NAME()).toString();
    if (clusterMode) {
      startInAm(driverUrl);
    } else {
      submit(conf, driverUrl);
    }
    Thread events = new Thread(this::followEvents, "yarn-am-events");
    events.setDaemon(true);
    events.start();
  }

  /** Client mode: {@code yarn-am submit}, then wait for the AM and its driver API. */
  private void submit(SparkConf conf, String driverUrl) {
    SubmitPlan plan = YarnAmSubmit.plan(conf);
    List<String> args;
    try {
      args = YarnAmSubmit.args(conf, plan, driverUrl, sc.appName());
    } catch (IOException e) {
      throw new IllegalStateException("making the zips of Spark's runtime for the executors: " + e, e);
    }
    if (conf.contains("spark.yarnam.am.memory")) {
      args.add("--am-memory");
      args.add(Long.toString(YarnAmSubmit.amMemoryMb(conf)));
    }
    args.addAll(SubmitPlan.amResources(YarnAmSubmit.settings(conf), false));
    String rmWeb = rmWebAddress(conf, sc.hadoopConfiguration());
    Duration timeout = Duration.ofSeconds(conf.getTimeAsSeconds("spark.yarnam.am.waitTimeout", "120s"));
    List<Path> secretFiles = new ArrayList<>();
    try {
      // The shuffle service's data: this driver's authentication secret, as Spark's YARN mode.
      args.addAll(ShuffleService.args(YarnAmSubmit.settings(conf),
          () -> sc.env().securityManager().getSecretKey(), secretFiles));
      LOG.info("submitting to yarn-am: {} executors ({} to {}), {} MB / {} vcores each, RM web {}",
          plan.initial, plan.min, plan.max, plan.containerMb, plan.cores, rmWeb);
      try {
        app = YarnAmApp.submit(YarnAmSubmit.binary(conf), args, rmWeb, timeout);
      } finally {
        ShuffleService.delete(secretFiles);
      }
      if (app.stagingLine != null) {
        LOG.info("yarn-am {}", app.stagingLine);
      }
      LOG.info("yarn-am application {} submitted; waiting for its AM", app.appId);
      am = app.awaitAm(secretFile(conf, app.appId), timeout);
      LOG.info("yarn-am AM of {} is running at {}", app.appId, am.url());
    } catch (IOException e) {
      throw new IllegalStateException("starting Spark on yarn-am failed: " + e.getMessage(), e);
    }
  }

  /**
   * Cluster mode: this driver runs in the AM's container ({@code yarn-am submit
   * --driver-command}), which tells it the driver API's URL and secret file; the executors,
   * started with the AM, wait for this driver's URL in the key-value store.
   */
  private void startInAm(String driverUrl) {
    String url = System.getenv("YARN_AM_DRIVER_URL");
    String secret = System.getenv("YARN_AM_SECRET_FILE");
    try {
      am = new AmClient(url, Paths.get(secret));
      am.kvPut(YarnAmSubmit.DRIVER_URL_KEY, driverUrl);
      LOG.info("driver in the AM container of {}: executors reach it at {}", amAppId, driverUrl);
    } catch (IOException e) {
      throw new IllegalStateException("reaching yarn-am's driver API from the AM container: " + e.getMessage(), e);
    }
  }

  /**
   * The RM web app's base URL: spark.yarnam.rmWeb, YARN_AM_RM_WEB, else yarn-site.xml's, as
   * every Hadoop client finds it: {@code https://} and yarn.resourcemanager.webapp.https.address
   * when yarn.http.policy is HTTPS_ONLY (the plain port is closed then). A bare host:port is
   * taken as {@code http://}, as the yarn-am CLI takes it.
   */
  static String rmWebAddress(SparkConf conf, Configuration hadoop) {
    if (conf.contains("spark.yarnam.rmWeb")) {
      return YarnAmApp.webUrl(conf.get("spark.yarnam.rmWeb"));
    }
    String env = System.getenv("YARN_AM_RM_WEB");
    if (env != null && !env.isEmpty()) {
      return YarnAmApp.webUrl(env);
    }
    Configuration c = new Configuration(hadoop);
    c.addResource("yarn-site.xml");
    for (String dir : new String[] {System.getenv("YARN_CONF_DIR"), System.getenv("HADOOP_CONF_DIR")}) {
      if (dir != null && Paths.get(dir, "yarn-site.xml").toFile().isFile()) {
        c.addResource(new org.apache.hadoop.fs.Path(Paths.get(dir, "yarn-site.xml").toString()));
      }
    }
    String host = c.get("yarn.resourcemanager.hostname", "0.0.0.0");
    if ("HTTPS_ONLY".equalsIgnoreCase(c.getTrimmed("yarn.http.policy", "HTTP_ONLY"))) {
      return "https://" + c.get("yarn.resourcemanager.webapp.https.address", host + ":8090");
    }
    return "http://" + c.get("yarn.resourcemanager.webapp.address", host + ":8088");
  }

  private static Path secretFile(SparkConf conf, String appId) {
    String dir = conf.get("spark.yarnam.secretDir", System.getenv().getOrDefault("YARN_AM_SECRET_DIR", ""));
    Path d = dir.isEmpty() ? Paths.get(System.getProperty("user.home"), ".yarn-am") : Paths.get(dir);
    return d.resolve(appId + ".secret");
  }

  /**
   * Spark's own delegation tokens, as its YARN backend has them, on a Kerberos cluster (Spark
   * calls this only when Hadoop security is on): the driver fetches tokens for the file
   * systems it is told of ({@code fs.defaultFS},
   * {@code spark.kerberos.access.hadoopFileSystems}; {@code spark.security.credentials.*.enabled}
   * switch providers off) and hands them to every executor as it registers; with
   * {@code spark.kerberos.principal}/{@code keytab} it logs in again and sends new ones to the
   * running executors before the old ones expire. This adds to yarn-am's tokens, which every
   * executor container already has in its token file (the HDFS delegation token of
   * {@code yarn-am submit}): a token of Spark's for the same NameNode replaces yarn-am's in the
   * executor's Hadoop user (same alias, the NameNode's address), both valid. In cluster mode
   * only with a keytab ({@link ClusterClient#driverCommand}: the one yarn-am staged for its AM);
   * without one the driver has the application's tokens and no login to fetch more with.
   */
  @Override
  public Option<HadoopDelegationTokenManager> createTokenManager() {
    if (clusterMode && sc.conf().get("spark.kerberos.keytab", "").isEmpty()) {
      return Option.empty();
    }
    return Option.apply(new HadoopDelegationTokenManager(sc.conf(), sc.hadoopConfiguration(), driverEndpoint()));
  }

  @Override
  public String applicationId() {
    if (amAppId != null) {
      return amAppId;
    }
    YarnAmApp a = app;
    return a != null ? a.appId : super.applicationId();
  }

  @Override
  public boolean sufficientResourcesRegistered() {
    double ratio = sc.conf().getDouble("spark.scheduler.minRegisteredResourcesRatio", 0.8);
    return totalRegisteredExecutors().get() >= initialExecutors * ratio;
  }

  /**
   * Spark's whole demand goes to the AM as one {@code /v1/demand} per resource profile: the
   * default profile's for the default kind, every other profile's for its own executor kind
   * ({@link Profiles}), declared ({@code POST /v1/kinds}) the first time it is asked for. Each
   * carries its profile's locality-aware tasks and hosts.
   */
  @Override
  public Future<Object> doRequestTotalExecutors(scala.collection.immutable.Map<ResourceProfile, Object> totals) {
    AmClient a = am;
    if (a == null) {
      return Future.successful(Boolean.FALSE);
    }
    int defaultId = ResourceProfile.DEFAULT_RESOURCE_PROFILE_ID();
    Map<Integer, Integer> targets = new java.util.TreeMap<>();
    targets.put(defaultId, 0);
    for (Map.Entry<ResourceProfile, Object> e : CollectionConverters.asJava(totals).entrySet()) {
      ResourceProfile rp = e.getKey();
      int n = (Integer) e.getValue();
      if (rp.id() != defaultId && !declaredProfiles.contains(rp.id())) {
        if (n == 0) {
          continue;
        }
        try {
          JsonNode r = a.declareKind(Profiles.declaration(rp, sc.conf(), plannedCores(), YarnAmSubmit.isPython(sc.conf())));
          declaredProfiles.add(rp.id());
          LOG.info("resource profile {} runs on yarn-am executor kind {}: {}", rp.id(), Profiles.kindName(rp.id()), r);
        } catch (IOException | RuntimeException ex) {
          LOG.warn("declaring resource profile {} to yarn-am failed: {}", rp.id(), ex.getMessage());
          return Future.successful(Boolean.FALSE);
        }
      }
      targets.put(rp.id(), n);
    }
    // Profiles asked for before and absent now want no executors.
    for (int id : declaredProfiles) {
      targets.putIfAbsent(id, 0);
    }
    List<String> excluded = new ArrayList<>(CollectionConverters.asJava(scheduler.excludedNodes()));
    try {
      for (Map.Entry<Integer, Integer> t : targets.entrySet()) {
        int id = t.getKey();
        Option<Object> aware = numLocalityAwareTasksPerResourceProfileId().get(id);
        int localityAware = aware.isDefined() ? (Integer) aware.get() : 0;
        Map<String, Integer> hosts = new HashMap<>();
        Option<scala.collection.immutable.Map<String, Object>> perHost = rpHostToLocalTaskCount().get(id);
        if (perHost.isDefined()) {
          CollectionConverters.asJava(perHost.get()).forEach((h, n) -> hosts.put(h, (Integer) n));
        }
        String kind = id == defaultId ? null : Profiles.kindName(id);
        a.demand(kind, t.getValue(), localityAware, hosts, excluded);
        LOG.debug("demand of profile {}: {} executors, {} locality-aware tasks on {}",
            id, t.getValue(), localityAware, hosts);
      }
      return Future.successful(Boolean.TRUE);
    } catch (IOException e) {
      LOG.warn("posting the demand to yarn-am failed: {}", e.getMessage());
      if (String.valueOf(e.getMessage()).contains("no executor kind")) {
        // A new AM attempt knows no kind declared with the one before: declare them again.
        declaredProfiles.clear();
      }
      return Future.successful(Boolean.FALSE);
    }
  }

  /** The default profile's executor cores, as submitted ({@code spark.executor.cores}). */
  private int plannedCores() {
    return sc.conf().getInt("spark.executor.cores", 1);
  }

  @Override
  public Future<Object> doKillExecutors(scala.collection.immutable.Seq<String> ids) {
    List<String> list = new ArrayList<>(CollectionConverters.asJava(ids));
    AmClient a = am;
    if (a == null || list.isEmpty()) {
      return Future.successful(Boolean.valueOf(list.isEmpty()));
    }
    killedByDriver.addAll(list);
    try {
      JsonNode r = a.kill(list);
      LOG.info("asked yarn-am to kill executors {}: {}", list, r);
      return Future.successful(Boolean.TRUE);
    } catch (IOException e) {
      LOG.warn("killing executors {} through yarn-am failed: {}", list, e.getMessage());
      return Future.successful(Boolean.FALSE);
    }
  }

  @Override
  public CoarseGrainedSchedulerBackend.DriverEndpoint createDriverEndpoint() {
    return new Endpoint();
  }

  /**
   * Spark's driver endpoint, except that an executor whose connection drops is only disabled
   * (no new tasks) until yarn-am says why its container ended, so the loss is reported with
   * the right reason (a preempted executor's tasks do not count as failures). Without a
   * verdict in {@link #LOSS_REASON_WAIT_MS} it is removed as a lost process.
   */
  private final class Endpoint extends CoarseGrainedSchedulerBackend.DriverEndpoint {
    Endpoint() {
      YarnAmSchedulerBackend.this.super();
    }

    @Override
    public void onDisconnected(RpcAddress address) {
      Option<String> id = addressToExecutorId().get(address);
      if (id.isEmpty()) {
        return;
      }
      String exec = id.get();
      if (am == null || stopping) {
        super.onDisconnected(address);
        return;
      }
      if (disableExecutor(exec)) {
        long deadline = System.currentTimeMillis() + LOSS_REASON_WAIT_MS;
        timers.schedule(() -> awaitVerdict(exec, deadline), 500, TimeUnit.MILLISECONDS);
      }
    }
  }

  /** Polls the loss reason of a disconnected executor until the AM knows it, or gives up. */
  private void awaitVerdict(String exec, long deadline) {
    if (removed.contains(exec) || stopping) {
      return;
    }
    try {
      JsonNode r = am.lossReason(exec);
      if (r != null && "exited".equals(r.path("state").asText())) {
        onExited(exec, r);
        return;
      }
    } catch (IOException e) {
      LOG.debug("loss reason of executor {}: {}", exec, e.getMessage());
    }
    if (System.currentTimeMillis() < deadline) {
      timers.schedule(() -> awaitVerdict(exec, deadline), 1, TimeUnit.SECONDS);
    } else if (removed.add(exec)) {
      removeExecutor(exec, new ExecutorProcessLost(
          "disconnected; yarn-am gave no exit status within " + LOSS_REASON_WAIT_MS / 1000 + " s",
          Option.empty(), true));
    }
  }

  /** An executor yarn-am reports as ended: Spark removes it with the mapped reason, once. */
  private void onExited(String exec, JsonNode view) {
    if (!removed.add(exec)) {
      return;
    }
    JsonNode status = view.path("exit_status");
    JsonNode counts = view.path("counts_against_app");
    Integer exit = status.isNumber() ? status.asInt() : null;
    Boolean byApp = counts.isBoolean() ? counts.asBoolean() : null;
    String reason = view.path("reason").isTextual() ? view.path("reason").asText() : null;
    var loss = LossReasons.of(exit, reason, byApp, killedByDriver.remove(exec));
    LOG.info("executor {} ended: {}", exec, loss);
    removeExecutor(exec, loss);
  }

  /** Follows /v1/events; a stream that breaks is reopened and missed exits are read from /v1/state. */
  private void followEvents() {
    int failures = 0;
    while (!stopping) {
      try {
        reconcile();
        am.followEvents((name, data) -> {
          if (name.equals("executor_removed")) {
            JsonNode e = data.path("executor");
            onExited(e.path("id").asText(), e);
          } else if (name.equals("lagged")) {
            try {
              reconcile();
            } catch (IOException ex) {
              LOG.warn("re-reading yarn-am's state after lag: {}", ex.getMessage());
            }
          }
        });
        failures = 0;
      } catch (IOException | RuntimeException e) {
        if (stopping) {
          return;
        }
        failures++;
        LOG.warn("yarn-am event stream: {}", e.getMessage());
        if (failures >= 30 && appEnded()) {
          LOG.error("yarn-am application {} has ended; stopping the SparkContext", applicationId());
          new Thread(sc::stop, "yarn-am-app-ended").start();
          return;
        }
      }
      try {
        Thread.sleep(1_000);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private boolean appEnded() {
    if (app == null) {
      return false; // cluster mode: the AM outlives this driver
    }
    try {
      return YarnAmApp.ended(app.report());
    } catch (IOException e) {
      return false;
    }
  }

  /** Removes every executor yarn-am lists as exited that Spark has not yet removed. */
  private void reconcile() throws IOException {
    for (JsonNode e : am.state().path("executors")) {
      if ("exited".equals(e.path("state").asText()) && !removed.contains(e.path("id").asText())) {
        onExited(e.path("id").asText(), e);
      }
    }
  }

  @Override
  public void stop(int code) {
    exitCode = code;
    super.stop(code);
    finish();
  }

  @Override
  public void stop() {
    stopping = true;
    super.stop();
    finish();
  }

  /** Ends the yarn-am application once, with Spark's outcome. */
  private void finish() {
    synchronized (finishLock) {
      if (finished) {
        return;
      }
      finished = true;
    }
    stopping = true;
    timers.shutdownNow();
    AmClient a = am;
    if (a == null) {
      return;
    }
    if (clusterMode) {
      // The driver's process exit ends the app (yarn-am's --driver-command): no more
      // executors meanwhile.
      try {
        a.demand(0, 0, Map.of(), List.of());
      } catch (IOException e) {
        LOG.warn("asking yarn-am for no more executors failed: {}", e.getMessage());
      }
      return;
    }
    String status = exitCode == 0 ? "succeeded" : "failed";
    String diagnostics = "Spark application '" + sc.appName() + "' (" + applicationId()
        + ") stopped with exit code " + exitCode;
    try {
      a.finish(status, diagnostics);
      LOG.info("yarn-am application {} finished: {}", applicationId(), status);
    } catch (IOException e) {
      LOG.warn("telling yarn-am to finish {} failed: {}", applicationId(), e.getMessage());
    }
  }
}
