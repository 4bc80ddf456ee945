package io.yarnam.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * One yarn-am application as the submitting side sees it: started with the {@code yarn-am}
 * binary ({@code submit} prints the application id), followed through the RM's REST app report
 * until the AM is RUNNING and has published its driver-API address ({@code amRPCAddress}).
 * A Kerberized RM (401 with {@code Negotiate}) is asked as the driver's Kerberos user
 * ({@link RmSpnego}).
 */
public final class YarnAmApp {
  private static final Pattern STAGED = Pattern.compile("(?m)^staged \\d+ file\\(s\\): .*$");
  private static final Pattern SUBMITTED = Pattern.compile("(?m)^submitted (application_\\d+_\\d+)\\s*$");

  public final String appId;
  /** What submit staged ("staged N file(s): K uploaded ..."), or null if it did not say. */
  public final String stagingLine;
  /** The RM web app's base URL ({@code http://} or {@code https://}). */
  private final String rmWeb;
  private final HttpClient http;
  /** The RM's trust under https (YARN_AM_CA_FILE), or null. */
  private final SSLContext tls;
  /** Set once the RM has asked for Kerberos: every later call negotiates (SPNEGO). */
  private volatile RmSpnego spnego;

  private YarnAmApp(String appId, String rmWeb, String stagingLine) throws IOException {
    this.appId = appId;
    this.stagingLine = stagingLine;
    this.rmWeb = webUrl(rmWeb);
    HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
    String ca = System.getenv("YARN_AM_CA_FILE");
    if (this.rmWeb.startsWith("https://") && ca != null && !ca.isEmpty()) {
      this.tls = caContext(Paths.get(ca));
      b.sslContext(tls);
    } else {
      this.tls = null;
    }
    this.http = b.build();
  }

  /** A web address as a base URL: {@code host:port} is {@code http://host:port}. */
  static String webUrl(String address) {
    String a = address.endsWith("/") ? address.substring(0, address.length() - 1) : address;
    return a.contains("://") ? a : "http://" + a;
  }

  /**
   * Trust for an https RM: only the CA certificates of the PEM file YARN_AM_CA_FILE names (as
   * the yarn-am CLI trusts them), not the JVM's store; host names are checked as usual.
   */
  static SSLContext caContext(Path pem) throws IOException {
    try (InputStream in = Files.newInputStream(pem)) {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int n = 0;
      for (Certificate cert : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca-" + n++, cert);
      }
      if (n == 0) {
        throw new IOException("the CA file " + pem + " (YARN_AM_CA_FILE) holds no PEM certificate");
      }
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new IOException("reading the CA file " + pem + " (YARN_AM_CA_FILE): " + e.getMessage(), e);
    }
  }

  /**
   * Runs {@code binary args...} (the environment, with HADOOP_CONF_DIR / YARN_CONF_DIR, is the
   * driver's) and returns the application it submitted. The command's output is returned in
   * the exception when it fails; it holds no secret ({@code submit} prints only the secret
   * file's path).
   */
  public static YarnAmApp submit(String binary, List<String> args, String rmWeb, Duration timeout)
      throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary);
    cmd.addAll(args);
    Process p;
    try {
      p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IOException("cannot run the yarn-am binary '" + binary
          + "' (set spark.yarnam.binary or YARN_AM_BIN, or put yarn-am on PATH): " + e.getMessage(), e);
    }
    p.getOutputStream().close();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader = new Thread(() -> copy(p.getInputStream(), out), "yarn-am-submit-output");
    reader.setDaemon(true);
    reader.start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException("yarn-am submit did not finish within " + timeout.toSeconds() + " s");
      }
      reader.join(5_000);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted waiting for yarn-am submit");
    }
    String text;
    synchronized (out) {
      text = out.toString(StandardCharsets.UTF_8);
    }
    Matcher m = SUBMITTED.matcher(text);
    if (p.exitValue() != 0 || !m.find()) {
      throw new IOException("yarn-am submit failed (exit " + p.exitValue() + "):\n" + text.trim());
    }
    Matcher staged = STAGED.matcher(text);
    return new YarnAmApp(m.group(1), rmWeb, staged.find() ? staged.group() : null);
  }

  private static void copy(InputStream in, ByteArrayOutputStream out) {
    byte[] buf = new byte[8192];
    try (in) {
      int n;
      while ((n = in.read(buf)) > 0) {
        synchronized (out) {
          out.write(buf, 0, n);
        }
      }
    } catch (IOException ignored) {
      // The process ended; what was read is what there is.
    }
  }

  /** The RM's report of the app ({@code /ws/v1/cluster/apps/{id}}, its "app" object). */
  public JsonNode report() throws IOException {
    String address = rmWeb + "/ws/v1/cluster/apps/" + appId;
    int status;
    String body;
    if (spnego != null) {
      RmSpnego.Reply r = spnego.get(address);
      status = r.status();
      body = r.body();
    } else {
      HttpRequest req = HttpRequest.newBuilder(URI.create(address))
          .timeout(Duration.ofSeconds(15))
          .header("Accept", "application/json")
          .GET()
          .build();
      HttpResponse<String> r;
      try {
        r = http.send(req, HttpResponse.BodyHandlers.ofString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted asking the RM about " + appId);
      }
      if (r.statusCode() == 401 && r.headers().allValues("WWW-Authenticate").stream()
          .anyMatch(v -> v.regionMatches(true, 0, "Negotiate", 0, 9))) {
        // A Kerberized RM: from now on as the driver's Kerberos user.
        spnego = new RmSpnego(tls, 15_000);
        return report();
      }
      status = r.statusCode();
      body = r.body();
    }
    if (status != 200) {
      throw new IOException("RM " + rmWeb + " about " + appId + ": HTTP " + status + " " + body);
    }
    return AmClient.JSON.readTree(body).path("app");
  }

  /** Whether the RM says the app has ended (FINISHED, FAILED or KILLED). */
  public static boolean ended(JsonNode report) {
    String s = report.path("state").asText("");
    return s.equals("FINISHED") || s.equals("FAILED") || s.equals("KILLED");
  }

  /**
   * Waits until the AM is RUNNING with its address, and returns the driver-API client; fails
   * with the RM's diagnostics if the app ends first, or after {@code timeout}.
   */
  public AmClient awaitAm(Path secretFile, Duration timeout) throws IOException {
    long deadline = System.nanoTime() + timeout.toNanos();
    String last = "no report yet";
    while (System.nanoTime() < deadline) {
      try {
        JsonNode app = report();
        String state = app.path("state").asText("");
        String addr = app.path("amRPCAddress").asText("");
        last = "state " + state + ", amRPCAddress '" + addr + "'";
        if (ended(app)) {
          throw new IOException("yarn-am application " + appId + " ended (" + state + ", final status "
              + app.path("finalStatus").asText() + ") before its AM ran: " + app.path("diagnostics").asText());
        }
        if (state.equals("RUNNING") && addr.contains(":") && !addr.startsWith("N/A")) {
          AmClient am = AmClient.at(addr, secretFile);
          am.state(); // the AM answers with our secret
          return am;
        }
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().contains("ended (")) {
          throw e;
        }
        last = e.getMessage();
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for the AM of " + appId);
      }
    }
    throw new IOException("the AM of " + appId + " was not RUNNING with a driver API within "
        + timeout.toSeconds() + " s (last: " + last + ")");
  }
}
