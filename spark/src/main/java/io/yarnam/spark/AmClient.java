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
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The driver API of one running yarn-am AM (README "The driver API"). Every call carries the
 * application's secret as a Bearer token; the secret is read from the 0600 file {@code submit}
 * wrote and is never logged, put in an exception message or passed on.
 *
 * <p>The AM serves the API over TLS with a self-signed certificate made for the application;
 * the secret file carries its SHA-256 fingerprint (format: yarn-am's
 * {@code src/protocol/driver_secret.rs}), and this client trusts exactly that certificate
 * ({@link PinnedTrustManager}), so the secret is never sent to anyone else nor in clear.
 */
public final class AmClient {
  static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CALL_TIMEOUT = Duration.ofSeconds(15);

  private final String url;
  private final String secret;
  private final HttpClient http;

  public AmClient(String url, Path secretFile) throws IOException {
    this.url = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    SecretFile file = SecretFile.read(secretFile);
    this.secret = file.secret;
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    if (file.pin != null) {
      if (!this.url.startsWith("https://")) {
        throw new IOException("the AM of " + secretFile + " serves TLS; " + this.url + " is not https://");
      }
      b.sslContext(PinnedTrustManager.context(file.pin));
    }
    this.http = b.build();
  }

  /** A client for the AM at {@code host:port}: https when the secret file has a pin (v2). */
  public static AmClient at(String hostPort, Path secretFile) throws IOException {
    String scheme = SecretFile.read(secretFile).pin != null ? "https://" : "http://";
    return new AmClient(scheme + hostPort, secretFile);
  }

  /**
   * The driver's secret file. Version 2: {@code yarn-am driver secret v2}, then
   * {@code secret <hex>} and {@code tls-sha256 <hex>} lines (unknown lines skipped); version 1
   * (an AM without TLS): the secret alone.
   */
  static final class SecretFile {
    static final String HEADER_V2 = "yarn-am driver secret v2";
    final String secret;
    /** The certificate's SHA-256; null for a version 1 file. */
    final byte[] pin;

    private SecretFile(String secret, byte[] pin) {
      this.secret = secret;
      this.pin = pin;
    }

    static SecretFile read(Path path) throws IOException {
      return parse(Files.readString(path, StandardCharsets.UTF_8), path.toString());
    }

    /** Errors name the file and the line's kind, never a value (it may be the secret). */
    static SecretFile parse(String text, String where) throws IOException {
      String[] lines = text.strip().split("\\R");
      if (!lines[0].strip().equals(HEADER_V2)) {
        String only = text.strip();
        if (only.isEmpty() || only.startsWith("yarn-am driver secret") || only.matches("(?s).*\\s.*")) {
          throw new IOException("the driver-API secret file " + where + " is empty or in an unknown format");
        }
        return new SecretFile(only, null);
      }
      String secret = null;
      byte[] pin = null;
      for (int i = 1; i < lines.length; i++) {
        String line = lines[i].strip();
        if (line.startsWith("secret ")) {
          secret = line.substring(7).strip();
        } else if (line.startsWith("tls-sha256 ")) {
          pin = PinnedTrustManager.unhex(line.substring(11).strip().replace(":", ""));
          if (pin == null || pin.length != 32) {
            throw new IOException("the driver-API secret file " + where + ": tls-sha256 is not 64 hex digits");
          }
        }
      }
      if (secret == null || secret.isEmpty() || pin == null) {
        throw new IOException("the driver-API secret file " + where + " lacks its secret or tls-sha256 line");
      }
      return new SecretFile(secret, pin);
    }
  }

  /**
   * Trusts exactly the server certificate whose SHA-256 is the pin, whatever its name or dates
   * (the AM runs on whichever node YARN picked; the pin fixes the certificate). Extending
   * {@link X509ExtendedTrustManager} keeps the JDK from adding its own host-name check; the
   * handshake's signature is still verified with the certificate's key by JSSE, so only the
   * holder of the application's key can complete a handshake.
   */
  static final class PinnedTrustManager extends X509ExtendedTrustManager {
    private final byte[] pin;

    PinnedTrustManager(byte[] pin) {
      this.pin = pin.clone();
    }

    static SSLContext context(byte[] pin) throws IOException {
      try {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, new TrustManager[] {new PinnedTrustManager(pin)}, null);
        return ctx;
      } catch (GeneralSecurityException e) {
        throw new IOException("cannot set up TLS for the driver API", e);
      }
    }

    static String hex(byte[] b) {
      StringBuilder s = new StringBuilder();
      for (byte x : b) {
        s.append(String.format("%02x", x));
      }
      return s.toString();
    }

    static byte[] unhex(String h) {
      if (h.length() % 2 != 0 || !h.matches("[0-9a-fA-F]*")) {
        return null;
      }
      byte[] out = new byte[h.length() / 2];
      for (int i = 0; i < out.length; i++) {
        out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
      }
      return out;
    }

    private void checkPinned(X509Certificate[] chain) throws CertificateException {
      if (chain == null || chain.length == 0) {
        throw new CertificateException("the driver API presented no certificate");
      }
      byte[] seen;
      try {
        seen = MessageDigest.getInstance("SHA-256").digest(chain[0].getEncoded());
      } catch (GeneralSecurityException e) {
        throw new CertificateException("cannot hash the driver API's certificate", e);
      }
      if (!MessageDigest.isEqual(seen, pin)) {
        throw new CertificateException("the driver API's certificate has SHA-256 " + hex(seen)
            + ", not the pinned " + hex(pin) + ": this is not the ApplicationMaster the secret is for");
      }
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      checkPinned(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
        throws CertificateException {
      checkPinned(chain);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      checkPinned(chain);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      throw new CertificateException("the driver API client takes no client certificates");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, java.net.Socket socket)
        throws CertificateException {
      throw new CertificateException("the driver API client takes no client certificates");
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      throw new CertificateException("the driver API client takes no client certificates");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  public String url() {
    return url;
  }

  /** {@code POST /v1/demand}: the whole demand, replacing the previous one. */
  public void demand(int target, int localityAwareTasks, Map<String, Integer> hostToLocalTaskCount,
      Collection<String> excludedHosts) throws IOException {
    demand(null, target, localityAwareTasks, hostToLocalTaskCount, excludedHosts);
  }

  /** {@code POST /v1/kinds}: declares an executor kind (idempotent); returns the AM's answer. */
  public JsonNode declareKind(ObjectNode declaration) throws IOException {
    return post("/v1/kinds", declaration);
  }

  /** As above, for executor kind {@code kind} (null: the default kind). */
  public void demand(String kind, int target, int localityAwareTasks, Map<String, Integer> hostToLocalTaskCount,
      Collection<String> excludedHosts) throws IOException {
    ObjectNode body = JSON.createObjectNode();
    if (kind != null) {
      body.put("kind", kind);
    }
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

  /** {@code PUT /v1/kv/{key}}: stores {@code value} in the app's key-value store. */
  public void kvPut(String key, String value) throws IOException {
    HttpRequest req = request("/v1/kv/" + key)
        .header("Content-Type", "text/plain; charset=utf-8")
        .PUT(HttpRequest.BodyPublishers.ofString(value, StandardCharsets.UTF_8))
        .build();
    check("PUT /v1/kv/" + key, send(req));
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
