package io.yarnam.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * The driver API of one running yarn-am AM (README "The driver API"). Every call carries the
 * application's secret as a Bearer token; the secret is read from the 0600 file {@code submit}
 * wrote and is never logged, put in an exception message or passed on.
 */
public final class AmClient {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(15);

  private final String url;
  private final String secret;
  private final HttpClient http;

  public AmClient(String url, Path secretFile) throws IOException {
    this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.secret = Files.readString(secretFile, StandardCharsets.UTF_8).trim();
    if (secret.isEmpty()) {
      throw new IOException("the driver-API secret file " + secretFile + " is empty");
    }
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  }

  public String url() {
    return url;
  }

  /** {@code POST /v1/demand}: the whole demand, replacing the previous one. */
  public void demand(int target, int localityAwareTasks, Map<String, Integer> hostToLocalTaskCount,
      Collection<String> excludedHosts) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    body.put("target_executors", Math.max(0, target));
    body.put("locality_aware_tasks", Math.max(0, localityAwareTasks));
    ObjectNode hosts = body.putObject("host_to_local_task_count");
    hostToLocalTaskCount.forEach((h, n) -> hosts.put(h, Math.max(0, n)));
    excludedHosts.forEach(body.putArray("excluded_hosts")::add);
    post("/v1/demand", body);
  }

  /** {@code POST /v1/executors/kill}; returns the AM's answer (killed / unknown ids). */
  public JsonNode kill(Collection<String> executorIds) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    executorIds.forEach(body.putArray("executor_ids")::add);
    return post("/v1/executors/kill", body);
  }

  /** {@code GET /v1/executors/{id}/loss-reason}; null when the AM does not know the id. */
  public JsonNode lossReason(String executorId) throws IOException {
    HttpResponse<String> r = send(request("/v1/executors/" + executorId + "/loss-reason").GET().build());
    if (r.statusCode() == 404) {
      return null;
    }
    return check("GET loss-reason of " + executorId, r);
  }

  /** {@code GET /v1/state}. */
  public JsonNode state() throws IOException {
    return check("GET /v1/state", send(request("/v1/state").GET().build()));
  }

  /** {@code POST /v1/finish}: the AM unregisters with this final status and stops. */
  public void finish(String status, String diagnostics) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    body.put("status", status);
    body.put("diagnostics", diagnostics);
    post("/v1/finish", body);
  }

  /**
   * Follows {@code GET /v1/events} (server-sent events) and hands each event's name and JSON
   * data to {@code onEvent} until the stream ends; throws when it cannot be opened.
   */
  public void followEvents(BiConsumer<String, JsonNode> onEvent) throws IOException {
    HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/v1/events"))
        .header("Authorization", "Bearer " + secret)
        .header("Accept", "text/event-stream")
        .GET()
        .build();
    HttpResponse<Stream<String>> r;
    try {
      r = http.send(req, HttpResponse.BodyHandlers.ofLines());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted opening " + url + "/v1/events");
    }
    if (r.statusCode() != 200) {
      r.body().close();
      throw new IOException("GET /v1/events at " + url + ": HTTP " + r.statusCode());
    }
    try (Stream<String> lines = r.body()) {
      String[] name = {"message"};
      StringBuilder data = new StringBuilder();
      lines.forEach(line -> {
        if (line.isEmpty()) {
          if (data.length() > 0) {
            try {
              onEvent.accept(name[0], JSON.readTree(data.toString()));
            } catch (IOException e) {
              onEvent.accept("malformed", JSON.createObjectNode().put("error", e.getMessage()));
            }
          }
          name[0] = "message";
          data.setLength(0);
        } else if (line.startsWith("event:")) {
          name[0] = line.substring(6).trim();
        } else if (line.startsWith("data:")) {
          data.append(line.substring(5).trim());
        }
      });
    }
  }

  private JsonNode post(String path, JsonNode body) throws IOException {
    HttpRequest req = request(path)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
        .build();
    return check("POST " + path, send(req));
  }

  private HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create(url + path))
        .timeout(CALL_TIMEOUT)
        .header("Authorization", "Bearer " + secret);
  }

  private HttpResponse<String> send(HttpRequest req) throws IOException {
    try {
      return http.send(req, HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted calling " + req.uri());
    }
  }

  private JsonNode check(String what, HttpResponse<String> r) throws IOException {
    if (r.statusCode() / 100 != 2) {
      throw new IOException(what + " at " + url + ": HTTP " + r.statusCode() + " " + r.body());
    }
    String b = r.body();
    return b == null || b.isBlank() ? JSON.createObjectNode() : JSON.readTree(b);
  }
}
