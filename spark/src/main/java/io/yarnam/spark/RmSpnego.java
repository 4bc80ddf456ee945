package io.yarnam.spark;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authentication.client.AuthenticatedURL;
import org.apache.hadoop.security.authentication.client.AuthenticationException;
import org.apache.hadoop.security.authentication.client.KerberosAuthenticator;

/**
 * GETs from a Kerberized RM's REST API (SPNEGO) as the driver's Hadoop user: the login Spark
 * made from the ticket cache or from {@code spark.kerberos.principal}/{@code keytab}. A
 * Kerberized RM answers 401 to anything else, so the client-mode driver could not see its
 * yarn-am AM start. Hadoop's own {@link AuthenticatedURL} does the handshake and keeps the
 * RM's {@code hadoop.auth} cookie, so later polls do not negotiate again. The JDK's
 * {@code java.net.http} client has no SPNEGO; this is why these calls use
 * {@link HttpURLConnection}.
 */
final class RmSpnego {
  private volatile AuthenticatedURL.Token cookie = new AuthenticatedURL.Token();
  private final AuthenticatedURL url;

  /** {@code tls}: the trust for an https RM (YARN_AM_CA_FILE), or null for the JVM's. */
  RmSpnego(SSLContext tls, int timeoutMs) {
    this.url = new AuthenticatedURL(new KerberosAuthenticator(), conn -> {
      conn.setConnectTimeout(timeoutMs);
      conn.setReadTimeout(timeoutMs);
      if (tls != null && conn instanceof HttpsURLConnection https) {
        https.setSSLSocketFactory(tls.getSocketFactory());
      }
      return conn;
    });
  }

  /**
   * The status and body of GET {@code address} (JSON asked for). A 401 with a cookie (it
   * expired, or the RM restarted with a new signing secret) negotiates once more.
   */
  Reply get(String address) throws IOException {
    UserGroupInformation ugi = UserGroupInformation.getCurrentUser();
    try {
      Reply r = ugi.doAs((PrivilegedExceptionAction<Reply>) () -> fetch(address));
      if (r.status() == 401) {
        cookie = new AuthenticatedURL.Token();
        r = ugi.doAs((PrivilegedExceptionAction<Reply>) () -> fetch(address));
      }
      return r;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted asking " + address);
    }
  }

  private Reply fetch(String address) throws IOException {
    HttpURLConnection conn;
    try {
      conn = url.openConnection(new URL(address), cookie);
    } catch (AuthenticationException e) {
      throw new IOException("the RM at " + address + " asks for Kerberos (SPNEGO) and the login of "
          + UserGroupInformation.getCurrentUser().getUserName() + " was not accepted: " + e.getMessage()
          + " (kinit first, or give spark.kerberos.principal and spark.kerberos.keytab; the driver JVM "
          + "finds the KDC through java.security.krb5.conf, which spark-submit-yarn-am sets from KRB5_CONFIG)", e);
    }
    conn.setRequestProperty("Accept", "application/json");
    int code = conn.getResponseCode();
    try (InputStream in = code >= 400 ? conn.getErrorStream() : conn.getInputStream()) {
      String body = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return new Reply(code, body);
    }
  }

  record Reply(int status, String body) {}
}
