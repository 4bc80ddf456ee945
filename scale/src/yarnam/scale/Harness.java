package yarnam.scale;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.protocolrecords.GetNewApplicationRequest;
import org.apache.hadoop.yarn.api.protocolrecords.SubmitApplicationRequest;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.api.ResourceTracker;
import org.apache.hadoop.yarn.server.api.ServerRMProxy;
import org.apache.hadoop.yarn.server.resourcemanager.ResourceManager;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMAppState;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.attempt.RMAppAttemptState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.QueueMetrics;

/**
 * A real ResourceManager (CapacityScheduler, in this JVM) with N simulated NodeManagers that
 * register and heartbeat over the ResourceTracker protocol (Hadoop IPC on loopback), and one
 * unmanaged application whose AMRM token it writes to a Hadoop token file: the AM under test
 * (yarn-am's allocator in the rm_scale benchmark) registers and allocates against it for real.
 *
 * Nothing here launches anything: a node reports the containers the scheduler placed on it
 * as RUNNING, and COMPLETE when the RM tells it to clean them up (the AM released them) or
 * after an optional simulated lifetime, so capacity frees up as it would on a real cluster.
 *
 * Files in --dir: conf/ (the written configuration and rack table), tokens (the AMRM token),
 * ready (scheduler address, app id, token file; written once every node is registered and the
 * app's attempt is launched), stats (the scheduler's locality counters and the nodes'
 * heartbeat figures; written when the app has finished), grants.tsv (every container the
 * scheduler committed, with its request key and locality: {@link RecordingCapacityScheduler};
 * complete once stats exists). The JVM exits after writing stats,
 * or after --max-seconds whatever happens.
 */
public final class Harness {
  /** Jersey logs through java.util.logging at INFO; held here so the level set sticks. */
  private static final java.util.logging.Logger JERSEY =
      java.util.logging.Logger.getLogger("com.sun.jersey");

  private Harness() {}

  public static void main(String[] args) throws Exception {
    JERSEY.setLevel(java.util.logging.Level.WARNING);
    Map<String, String> opt = parse(args);
    File dir = new File(opt.getOrDefault("dir", "/tmp/yarn-am-scale"));
    String host = opt.getOrDefault("host", "127.0.0.40");
    int base = Integer.parseInt(opt.getOrDefault("port-base", "18030"));
    int nodes = Integer.parseInt(opt.getOrDefault("nodes", "10"));
    int racks = Integer.parseInt(opt.getOrDefault("racks", "1"));
    int nodeMb = Integer.parseInt(opt.getOrDefault("node-mb", "4096"));
    int nodeVcores = Integer.parseInt(opt.getOrDefault("node-vcores", "4"));
    int heartbeatMs = Integer.parseInt(opt.getOrDefault("heartbeat-ms", "1000"));
    int delay = Integer.parseInt(opt.getOrDefault("node-locality-delay", "20"));
    int threads = Integer.parseInt(opt.getOrDefault("threads", "8"));
    long lifetimeMs = Long.parseLong(opt.getOrDefault("container-lifetime-ms", "0"));
    long maxSeconds = Long.parseLong(opt.getOrDefault("max-seconds", "900"));
    if (nodes < 1 || racks < 1 || heartbeatMs < 10 || threads < 1) {
      throw new IllegalArgumentException("--nodes, --racks, --threads >= 1 and --heartbeat-ms >= 10");
    }
    // Never outlive a benchmark that died: exit after max-seconds whatever the state.
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(maxSeconds * 1000);
      } catch (InterruptedException e) {
        return;
      }
      log("--max-seconds " + maxSeconds + " passed; exiting");
      Runtime.getRuntime().halt(3);
    });
    watchdog.setDaemon(true);
    watchdog.start();

    File confDir = new File(dir, "conf");
    confDir.mkdirs();
    new File(dir, "ready").delete();
    new File(dir, "stats").delete();
    // With -Djdk.net.hosts.file (scripts/scale-bench.sh sets it) this JVM resolves names from
    // that file only: written here, before the first lookup, every simulated host gets its own
    // loopback address and nothing waits on DNS (the RM resolves each registering node, and a
    // failing system lookup costs ~0.1 s here, 1,000 times over).
    String hostsFile = System.getProperty("jdk.net.hosts.file");
    if (hostsFile != null) {
      try (PrintWriter w = new PrintWriter(hostsFile, StandardCharsets.UTF_8)) {
        w.println("127.0.0.1 localhost " + machineName());
        w.println(host + " " + host);
        for (int i = 0; i < nodes; i++) {
          w.println(SimNodes.address(i) + " " + SimNodes.hostName(i));
        }
      }
    }
    // The rack table names each node by host and by address: the RM's rack resolver looks a
    // node up by its address when the name resolves.
    File table = new File(confDir, "topology.table");
    try (PrintWriter w = new PrintWriter(table, StandardCharsets.UTF_8)) {
      for (int i = 0; i < nodes; i++) {
        w.println(SimNodes.hostName(i) + " " + SimNodes.rackName(i, racks));
        w.println(SimNodes.address(i) + " " + SimNodes.rackName(i, racks));
      }
    }
    Configuration conf = rmConf(host, base, table, delay, heartbeatMs, nodeMb, nodeVcores);
    File written = new File(confDir, "yarn-site.xml");
    try (FileOutputStream out = new FileOutputStream(written)) {
      conf.writeXml(out);
    }

    long t0 = System.nanoTime();
    ResourceManager rm = new ResourceManager();
    rm.init(conf);
    rm.start();
    log("ResourceManager up on " + host + " in " + ms(t0) + " ms");

    ResourceTracker tracker = ServerRMProxy.createRMProxy(conf, ResourceTracker.class);
    AbstractYarnScheduler<?, ?> scheduler = (AbstractYarnScheduler<?, ?>) rm.getResourceScheduler();
    SimNodes sim = new SimNodes(tracker, scheduler, nodes, racks, nodeMb, nodeVcores, lifetimeMs);
    long t1 = System.nanoTime();
    sim.registerAll(threads);
    ScheduledExecutorService pool = Executors.newScheduledThreadPool(threads);
    sim.start(pool, heartbeatMs);
    while (scheduler.getNumClusterNodes() < nodes) {
      Thread.sleep(50);
    }
    log(nodes + " NodeManagers registered on " + racks + " racks in " + ms(t1) + " ms");

    RecordingCapacityScheduler.record(new File(dir, "grants.tsv"));
    ApplicationId app = submitUnmanaged(rm);
    RMAppAttempt attempt = waitForAttempt(rm, app);
    Token<?> amrm = attempt.getAMRMToken();
    amrm.setService(new Text(host + ":" + base));
    Credentials creds = new Credentials();
    creds.addToken(new Text("YARN_AM_RM_TOKEN"), amrm);
    File tokens = new File(dir, "tokens");
    try (DataOutputStream out = new DataOutputStream(new FileOutputStream(tokens))) {
      creds.writeTokenStorageToStream(out);
    }
    RecordingCapacityScheduler.restartClock();
    writeAtomically(new File(dir, "ready"),
        "scheduler=" + host + ":" + base + "\napp=" + app + "\ntokens=" + tokens + "\nnodes=" + nodes
            + "\nracks=" + racks + "\n");
    log("unmanaged app " + app + " launched; token in " + tokens);

    RMApp rmApp = rm.getRMContext().getRMApps().get(app);
    while (!isFinal(rmApp.getState())) {
      Thread.sleep(200);
    }
    QueueMetrics m = scheduler.getRootQueueMetrics();
    Runtime rt = Runtime.getRuntime();
    StringBuilder s = new StringBuilder();
    s.append("app_state=").append(rmApp.getState()).append('\n');
    s.append("containers_allocated=").append(m.getAggregateAllocatedContainers()).append('\n');
    s.append("node_local=").append(m.getAggregateNodeLocalContainersAllocated()).append('\n');
    s.append("rack_local=").append(m.getAggregateRackLocalContainersAllocated()).append('\n');
    s.append("off_switch=").append(m.getAggregateOffSwitchContainersAllocated()).append('\n');
    sim.appendStats(s);
    s.append("rm_heap_used_mb=").append((rt.totalMemory() - rt.freeMemory()) >> 20).append('\n');
    RecordingCapacityScheduler.stopRecording();
    writeAtomically(new File(dir, "stats"), s.toString());
    log("app " + app + " " + rmApp.getState() + "; stats written");
    sim.stopping = true;
    pool.shutdownNow();
    rm.stop();
    Runtime.getRuntime().halt(0);
  }

  static Configuration rmConf(String host, int base, File table, int delay, int heartbeatMs,
      int nodeMb, int nodeVcores) {
    YarnConfiguration conf = new YarnConfiguration();
    conf.set(YarnConfiguration.RM_HOSTNAME, host);
    conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, host + ":" + base);
    conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, host + ":" + (base + 1));
    conf.set(YarnConfiguration.RM_ADDRESS, host + ":" + (base + 2));
    conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, host + ":" + (base + 3));
    conf.set(YarnConfiguration.RM_WEBAPP_ADDRESS, host + ":" + (base + 58));
    // The stock CapacityScheduler, recording each container it commits (grants.tsv).
    conf.set(YarnConfiguration.RM_SCHEDULER, RecordingCapacityScheduler.class.getName());
    conf.set("yarn.scheduler.capacity.root.queues", "default");
    conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
    conf.set("yarn.scheduler.capacity.root.default.maximum-capacity", "100");
    conf.set("yarn.scheduler.capacity.root.default.user-limit-factor", "1");
    conf.set("yarn.scheduler.capacity.root.default.acl_submit_applications", "*");
    conf.set("yarn.scheduler.capacity.maximum-am-resource-percent", "0.5");
    conf.set("yarn.scheduler.capacity.resource-calculator",
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator");
    conf.setInt("yarn.scheduler.capacity.node-locality-delay", delay);
    conf.setInt("yarn.scheduler.capacity.rack-locality-additional-delay", -1);
    conf.setInt(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, heartbeatMs);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, nodeMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, nodeVcores);
    conf.set("net.topology.node.switch.mapping.impl", "org.apache.hadoop.net.TableMapping");
    conf.set("net.topology.table.file.name", table.getAbsolutePath());
    conf.setBoolean(YarnConfiguration.RECOVERY_ENABLED, false);
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    conf.setBoolean(YarnConfiguration.SYSTEM_METRICS_PUBLISHER_ENABLED, false);
    conf.setBoolean(YarnConfiguration.RM_WEBAPP_UI_ACTIONS_ENABLED, false);
    // 1,000 nodes heartbeat once a second over one connection: enough handlers for that.
    conf.setInt(YarnConfiguration.RM_RESOURCE_TRACKER_CLIENT_THREAD_COUNT, 16);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_CLIENT_THREAD_COUNT, 4);
    conf.setInt(YarnConfiguration.RM_CLIENT_THREAD_COUNT, 4);
    // A node that stops heartbeating is lost after this; the simulated ones never stop.
    conf.setLong(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, 600_000L);
    return conf;
  }

  static ApplicationId submitUnmanaged(ResourceManager rm) throws Exception {
    var client = rm.getClientRMService();
    ApplicationId app = client.getNewApplication(GetNewApplicationRequest.newInstance())
        .getApplicationId();
    ContainerLaunchContext clc = ContainerLaunchContext.newInstance(Collections.emptyMap(),
        Collections.emptyMap(), Collections.emptyList(), Collections.emptyMap(), null,
        Collections.emptyMap());
    ApplicationSubmissionContext ctx = ApplicationSubmissionContext.newInstance(app,
        "yarn-am-scale", "default", Priority.newInstance(0), clc, true, false, 1,
        Resource.newInstance(1024, 1), "YARN-AM-SCALE");
    client.submitApplication(SubmitApplicationRequest.newInstance(ctx));
    return app;
  }

  static RMAppAttempt waitForAttempt(ResourceManager rm, ApplicationId app) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      RMApp a = rm.getRMContext().getRMApps().get(app);
      RMAppAttempt at = a == null ? null : a.getCurrentAppAttempt();
      if (at != null && at.getAppAttemptState() == RMAppAttemptState.LAUNCHED) {
        return at;
      }
      if (a != null && isFinal(a.getState())) {
        throw new IllegalStateException("app " + app + " ended before its attempt launched: "
            + a.getState() + " " + a.getDiagnostics());
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("the unmanaged attempt of " + app + " did not launch in 60 s");
  }

  static boolean isFinal(RMAppState s) {
    return s == RMAppState.FINISHED || s == RMAppState.FAILED || s == RMAppState.KILLED;
  }

  static void writeAtomically(File f, String text) throws IOException {
    File tmp = new File(f.getPath() + ".tmp");
    Files.writeString(tmp.toPath(), text);
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.ATOMIC_MOVE);
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --name value pairs, got '" + args[i] + "'");
      }
      m.put(args[i].substring(2), args[++i]);
    }
    return m;
  }

  /** This machine's name (the RM looks itself up), without asking the resolver. */
  static String machineName() {
    try {
      return Files.readString(new File("/proc/sys/kernel/hostname").toPath()).trim();
    } catch (IOException e) {
      return "localhost";
    }
  }

  static long ms(long since) {
    return (System.nanoTime() - since) / 1_000_000;
  }

  static void log(String msg) {
    System.err.println("[harness " + java.time.LocalTime.now().withNano(0) + "] " + msg);
  }
}
