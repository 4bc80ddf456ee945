package io.yarnam.spark;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Checks that {@link AmClient} pins the AM's certificate: against a yarn-am driver
 * API served over TLS on loopback by tests/cluster/it_spark.rs, a client with the secret file's pin
 * reads {@code /v1/state}, and one whose file pins another certificate is refused in the
 * handshake with an error naming both fingerprints. Also the secret file's two versions.
 * Args: url, good secret file, wrong secret file, the served certificate's hex SHA-256, the
 * wrong pin's. Prints "N passed, 0 failed" or exits 1 naming the first failure.
 */
public final class PinCheck {
  private static int passed;

  private static void check(boolean ok, String what) {
    if (!ok) {
      System.err.println("FAILED: " + what);
      System.exit(1);
    }
    passed++;
  }

  private static String messages(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      s.append(c).append(" / ");
    }
    return s.toString();
  }

  public static void main(String[] args) throws Exception {
    String url = args[0];
    Path good = Path.of(args[1]);
    Path wrong = Path.of(args[2]);
    String served = args[3];
    String wrongPin = args[4];

    AmClient ok = new AmClient(url, good);
    check(ok.state().path("app_id").asText().equals("application_1_0001"), "the pinned client reads /v1/state");

    try {
      new AmClient(url, wrong).state();
      check(false, "a client pinning another certificate was served");
    } catch (IOException e) {
      String m = messages(e);
      check(m.contains(served) && m.contains(wrongPin), "the refusal names both fingerprints: " + m);
    }

    try {
      new AmClient(url.replace("https://", "http://"), good);
      check(false, "an http:// URL was accepted with a pinned secret file");
    } catch (IOException e) {
      check(e.getMessage().contains("not https://"), "http:// refused: " + e.getMessage());
    }

    AmClient.SecretFile v1 = AmClient.SecretFile.parse("abc123\n", "v1");
    check(v1.secret.equals("abc123") && v1.pin == null, "a version 1 file reads, without a pin");
    try {
      AmClient.SecretFile.parse("yarn-am driver secret v2\nsecret s3cr3t\n", "bad");
      check(false, "a v2 file without tls-sha256 was accepted");
    } catch (IOException e) {
      check(!e.getMessage().contains("s3cr3t"), "the error does not show the secret");
    }
    System.out.println(passed + " passed, 0 failed");
  }
}
