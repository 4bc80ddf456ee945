package yarnam.scale;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.yarn.api.records.ContainerExitStatus;
import org.apache.hadoop.yarn.api.records.ContainerId;
import org.apache.hadoop.yarn.api.records.ContainerState;
import org.apache.hadoop.yarn.api.records.ContainerStatus;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.api.ResourceTracker;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.NodeHeartbeatResponse;
import org.apache.hadoop.yarn.server.api.protocolrecords.RegisterNodeManagerRequest;
import org.apache.hadoop.yarn.server.api.protocolrecords.RegisterNodeManagerResponse;
import org.apache.hadoop.yarn.server.api.records.MasterKey;
import org.apache.hadoop.yarn.server.api.records.NodeAction;
import org.apache.hadoop.yarn.server.api.records.NodeHealthStatus;
import org.apache.hadoop.yarn.server.api.records.NodeStatus;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainerState;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AbstractYarnScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.util.YarnVersionInfo;

/**
 * Simulated NodeManagers: each registers with the ResourceTracker and heartbeats at the RM's
 * interval, echoing the master keys the RM gave it (container and NM token keys) and the
 * response id, as a real NodeManager does.
 *
 * Containers: nothing is launched. A node learns which containers the scheduler placed on it
 * from the scheduler in this JVM (a real NM learns it from the AM's startContainers call) and
 * reports each acquired one as RUNNING; a container the RM asks it to clean up (the AM released
 * it) or one older than the simulated lifetime is reported COMPLETE once and forgotten.
 */
final class SimNodes {
  static final int NM_PORT = 45454;
  static final int NM_HTTP_PORT = 8042;

  private final ResourceTracker tracker;
  private final AbstractYarnScheduler<?, ?> scheduler;
  private final List<Node> nodes = new ArrayList<>();
  private final long lifetimeMs;
  private final AtomicLong heartbeats = new AtomicLong();
  private final AtomicLong heartbeatNanos = new AtomicLong();
  private final AtomicLong maxHeartbeatNanos = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong reportedRunning = new AtomicLong();
  private final AtomicLong reportedComplete = new AtomicLong();
  /** Set before the heartbeat pool is stopped: calls it interrupts are not failures. */
  volatile boolean stopping;

  SimNodes(ResourceTracker tracker, AbstractYarnScheduler<?, ?> scheduler, int count, int racks,
      int mb, int vcores, long lifetimeMs) {
    this.tracker = tracker;
    this.scheduler = scheduler;
    this.lifetimeMs = lifetimeMs;
    for (int i = 0; i < count; i++) {
      // The RM resolves a node's host when it makes container and NM tokens; the simulated
      // hosts resolve to loopback in this JVM only (Hadoop's static resolution), so no
      // /etc/hosts entry is needed.
      NetUtils.addStaticResolution(hostName(i), address(i));
      nodes.add(new Node(NodeId.newInstance(hostName(i), NM_PORT), Resource.newInstance(mb, vcores)));
    }
  }

  /** The simulator's host names (src/sim.rs): nm00000, nm00001, ... */
  static String hostName(int i) {
    return String.format("nm%05d", i);
  }

  /** Node i's own loopback address, 127.1.x.y (the test cluster uses 127.0.0.x). */
  static String address(int i) {
    return "127.1." + (i / 256) + "." + (i % 256);
  }

  /** The simulator's racks: host i is on rack i mod racks. */
  static String rackName(int i, int racks) {
    return String.format("/rack%03d", i % racks);
  }

  /** Registers every node, `threads` at a time (the RM handles registrations in parallel). */
  void registerAll(int threads) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (Node n : nodes) {
        done.add(pool.submit(() -> {
          n.register();
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** Heartbeats every node every intervalMs, their phases spread over the interval. */
  void start(ScheduledExecutorService pool, int intervalMs) {
    for (int i = 0; i < nodes.size(); i++) {
      Node n = nodes.get(i);
      long offset = (long) intervalMs * i / nodes.size();
      pool.scheduleWithFixedDelay(n::heartbeatSafely, offset, intervalMs, TimeUnit.MILLISECONDS);
    }
  }

  void appendStats(StringBuilder s) {
    long n = Math.max(1, heartbeats.get());
    s.append("nm_heartbeats=").append(heartbeats.get()).append('\n');
    s.append("nm_heartbeat_mean_us=").append(heartbeatNanos.get() / n / 1000).append('\n');
    s.append("nm_heartbeat_max_ms=").append(maxHeartbeatNanos.get() / 1_000_000).append('\n');
    s.append("nm_heartbeat_failures=").append(failures.get()).append('\n');
    s.append("nm_reported_running=").append(reportedRunning.get()).append('\n');
    s.append("nm_reported_complete=").append(reportedComplete.get()).append('\n');
  }

  private final class Node {
    final NodeId id;
    final Resource capability;
    int responseId;
    MasterKey containerKey;
    MasterKey nmKey;
    /** Containers reported RUNNING, with the time they were first seen. */
    final Map<ContainerId, Long> running = new HashMap<>();
    /** To report COMPLETE on the next heartbeat, with their exit status. */
    final Map<ContainerId, Integer> completing = new HashMap<>();
    /** Reported COMPLETE: never reported again even while the scheduler still lists them. */
    final Set<ContainerId> done = new HashSet<>();

    Node(NodeId id, Resource capability) {
      this.id = id;
      this.capability = capability;
    }

    void register() throws Exception {
      RegisterNodeManagerRequest req = RegisterNodeManagerRequest.newInstance(id, NM_HTTP_PORT,
          capability, YarnVersionInfo.getVersion(), Collections.emptyList(),
          Collections.emptyList());
      RegisterNodeManagerResponse resp = tracker.registerNodeManager(req);
      if (resp.getNodeAction() != NodeAction.NORMAL) {
        throw new IllegalStateException("registering " + id + ": " + resp.getNodeAction() + " "
            + resp.getDiagnosticsMessage());
      }
      containerKey = resp.getContainerTokenMasterKey();
      nmKey = resp.getNMTokenMasterKey();
      responseId = 0;
      running.clear();
      completing.clear();
    }

    void heartbeatSafely() {
      try {
        heartbeat();
      } catch (Throwable t) {
        if (stopping) {
          return;
        }
        if (failures.incrementAndGet() <= 10) {
          Harness.log("heartbeat of " + id + " failed: " + t);
        }
      }
    }

    void heartbeat() throws Exception {
      long now = System.currentTimeMillis();
      SchedulerNode sn = scheduler.getSchedulerNode(id);
      if (sn != null) {
        for (RMContainer c : sn.getCopiedListOfRunningContainers()) {
          RMContainerState st = c.getState();
          ContainerId cid = c.getContainerId();
          if ((st == RMContainerState.ACQUIRED || st == RMContainerState.RUNNING)
              && !done.contains(cid) && !completing.containsKey(cid)) {
            running.putIfAbsent(cid, now);
          }
        }
      }
      if (lifetimeMs > 0) {
        running.entrySet().removeIf(e -> {
          if (now - e.getValue() < lifetimeMs) {
            return false;
          }
          completing.put(e.getKey(), ContainerExitStatus.SUCCESS);
          return true;
        });
      }
      List<ContainerStatus> statuses = new ArrayList<>(running.size() + completing.size());
      for (ContainerId c : running.keySet()) {
        statuses.add(ContainerStatus.newInstance(c, ContainerState.RUNNING, "", ContainerExitStatus.INVALID));
      }
      for (Map.Entry<ContainerId, Integer> e : completing.entrySet()) {
        statuses.add(ContainerStatus.newInstance(e.getKey(), ContainerState.COMPLETE,
            "simulated container ended", e.getValue()));
      }
      NodeStatus status = NodeStatus.newInstance(id, responseId, statuses, Collections.emptyList(),
          NodeHealthStatus.newInstance(true, "", now), null, null, null);
      NodeHeartbeatRequest req = NodeHeartbeatRequest.newInstance(status, containerKey, nmKey, null);
      long t0 = System.nanoTime();
      NodeHeartbeatResponse resp = tracker.nodeHeartbeat(req);
      long took = System.nanoTime() - t0;
      heartbeats.incrementAndGet();
      heartbeatNanos.addAndGet(took);
      maxHeartbeatNanos.accumulateAndGet(took, Math::max);
      reportedRunning.addAndGet(running.size());
      reportedComplete.addAndGet(completing.size());
      done.addAll(completing.keySet());
      completing.clear();
      if (resp.getNodeAction() == NodeAction.RESYNC) {
        Harness.log(id + ": the RM asked for a resync; registering again");
        register();
        return;
      }
      if (resp.getNodeAction() == NodeAction.SHUTDOWN) {
        throw new IllegalStateException(id + ": the RM shut this node down: "
            + resp.getDiagnosticsMessage());
      }
      responseId = resp.getResponseId();
      if (resp.getContainerTokenMasterKey() != null) {
        containerKey = resp.getContainerTokenMasterKey();
      }
      if (resp.getNMTokenMasterKey() != null) {
        nmKey = resp.getNMTokenMasterKey();
      }
      for (ContainerId c : resp.getContainersToCleanup()) {
        if (running.remove(c) != null || !done.contains(c)) {
          completing.put(c, ContainerExitStatus.KILLED_BY_APPMASTER);
        }
      }
    }
  }
}
