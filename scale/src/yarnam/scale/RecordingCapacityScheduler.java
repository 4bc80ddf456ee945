package yarnam.scale;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerApplicationAttempt;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerAllocationProposal;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ResourceCommitRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.SchedulerContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * The stock CapacityScheduler, recording every container it commits (one tab-separated line
 * each in {@code grants.tsv}): which request key it filled (priority, allocation request id),
 * the locality the scheduler assigned it with, and that key's state just before the commit:
 * missed scheduling opportunities, outstanding ANY count, unique location asks (the size of
 * the key's location map, zero-count entries included: what the off-switch wait reads) and
 * the locations still asked for. The off-switch wait of Hadoop 3.4.1's
 * {@code RegularContainerAllocator} is {@code min(nodes, outstanding x min(1, (unique - 1) /
 * nodes)) < missed}, and no wait at all when the key's map holds ANY only (unique == 1): these
 * columns are what it decided on. Nothing else changes: every call goes to the stock code.
 */
public final class RecordingCapacityScheduler extends CapacityScheduler {
  static final String HEADER = "t_ms\tcontainer\tpriority\talloc_id\ttype\trequest_type\tnode"
      + "\tmissed\toutstanding\tunique\tasked_locations\tnode_asked\tnodes\tsmall_map";
  private static volatile PrintWriter out;
  private static volatile long startNanos = System.nanoTime();

  /** Starts recording into {@code file} (truncated), times counted from now. */
  static synchronized void record(File file) throws IOException {
    PrintWriter w = new PrintWriter(file, StandardCharsets.UTF_8);
    w.println(HEADER);
    w.flush();
    startNanos = System.nanoTime();
    out = w;
  }

  /** Restarts the clock (the app's attempt launched: the AM is about to register). */
  static void restartClock() {
    startNanos = System.nanoTime();
  }

  static synchronized void stopRecording() {
    if (out != null) {
      out.flush();
      out.close();
      out = null;
    }
  }

  @Override
  @SuppressWarnings({"rawtypes", "unchecked"})
  public boolean tryCommit(Resource cluster, ResourceCommitRequest request, boolean updatePending) {
    PrintWriter w = out;
    List<String> lines = null;
    List<RMContainer> made = null;
    if (w != null && request != null && request.getContainersToAllocate() != null) {
      lines = new ArrayList<>();
      made = new ArrayList<>();
      for (Object o : request.getContainersToAllocate()) {
        ContainerAllocationProposal p = (ContainerAllocationProposal) o;
        if (p.getAllocateFromReservedContainer() != null) {
          continue;
        }
        lines.add(describe(p));
        made.add(p.getAllocatedOrReservedContainer().getRmContainer());
      }
    }
    boolean committed = super.tryCommit(cluster, request, updatePending);
    if (committed && lines != null && !lines.isEmpty()) {
      synchronized (RecordingCapacityScheduler.class) {
        // The container id is assigned by the commit itself.
        for (int i = 0; i < lines.size(); i++) {
          w.println(lines.get(i).replace("\u0000", String.valueOf(made.get(i).getContainerId())));
        }
        w.flush();
      }
    }
    return committed;
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private String describe(ContainerAllocationProposal p) {
    SchedulerContainer sc = p.getAllocatedOrReservedContainer();
    SchedulerRequestKey key = sc.getSchedulerRequestKey();
    SchedulerApplicationAttempt app = sc.getSchedulerApplicationAttempt();
    SchedulerNode node = sc.getSchedulerNode();
    String host = node.getNodeName();
    String small = "-";
    long missed = -1;
    long outstanding = -1;
    int unique = -1;
    int asked = -1;
    int nodeAsked = 0;
    if (app != null && key != null) {
      missed = app.getSchedulingOpportunities(key);
      outstanding = app.getOutstandingAsksCount(key);
      AppPlacementAllocator ap = app.getAppSchedulingInfo().getAppPlacementAllocator(key);
      if (ap != null) {
        unique = ap.getUniqueLocationAsks();
        Map<String, ResourceRequest> m = ap.getResourceRequests();
        asked = 0;
        for (ResourceRequest r : m.values()) {
          if (r.getNumContainers() > 0) {
            asked++;
          }
        }
        if (unique <= 4) {
          StringBuilder b = new StringBuilder();
          for (Map.Entry<String, ResourceRequest> e : m.entrySet()) {
            b.append(b.length() == 0 ? "" : ",").append(e.getKey()).append('=')
                .append(e.getValue().getNumContainers());
          }
          small = b.toString();
        }
        ResourceRequest here = m.get(host);
        nodeAsked = here == null ? 0 : here.getNumContainers();
      }
    }
    long t = (System.nanoTime() - startNanos) / 1_000_000;
    return t + "\t\u0000\t"
        + (key == null ? -1 : key.getPriority().getPriority()) + "\t"
        + (key == null ? 0 : key.getAllocationRequestId()) + "\t" + p.getAllocationLocalityType()
        + "\t" + p.getRequestLocalityType() + "\t" + host + "\t" + missed + "\t" + outstanding
        + "\t" + unique + "\t" + asked + "\t" + nodeAsked + "\t" + getNumClusterNodes() + "\t" + small;
  }
}
