// Known-answer vectors for yarn-client's DIGEST-MD5 security layer, made by the JDK's own
// DIGEST-MD5 client and server (the implementation a Hadoop server uses), run in-process
// with Hadoop's parameters: protocol "", server id "default", user name and password the
// Base64 of the token's identifier and password bytes.
//
//   javac -d /tmp DigestVectors.java && java -cp /tmp DigestVectors auth-conf
//
// Prints the challenge, the JDK client's response, the server's rspauth, then messages
// wrapped by each side. Nonces are random, so every run gives new (equally valid) vectors.
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.security.auth.callback.*;
import javax.security.sasl.*;

public class DigestVectors {
    static final byte[] ID = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static final byte[] PW = {(byte) 0xa0, (byte) 0xb1, (byte) 0xc2, 0x13, 0x24, 0x35, 0x46, 0x57};

    static String hex(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static byte[] msg(int len, int seed) {
        byte[] m = new byte[len];
        for (int i = 0; i < len; i++) m[i] = (byte) (seed + 7 * i);
        return m;
    }

    public static void main(String[] args) throws Exception {
        String qop = args.length > 0 ? args[0] : "auth-conf";
        String user = Base64.getEncoder().encodeToString(ID);
        char[] pass = Base64.getEncoder().encodeToString(PW).toCharArray();
        Map<String, String> props = new HashMap<>();
        props.put(Sasl.QOP, qop);
        CallbackHandler clientCb = cbs -> {
            for (Callback c : cbs) {
                if (c instanceof NameCallback) ((NameCallback) c).setName(user);
                else if (c instanceof PasswordCallback) ((PasswordCallback) c).setPassword(pass);
                else if (c instanceof RealmCallback) ((RealmCallback) c).setText(((RealmCallback) c).getDefaultText());
            }
        };
        CallbackHandler serverCb = cbs -> {
            for (Callback c : cbs) {
                if (c instanceof PasswordCallback) ((PasswordCallback) c).setPassword(pass);
                else if (c instanceof AuthorizeCallback) ((AuthorizeCallback) c).setAuthorized(true);
                else if (c instanceof RealmCallback) ((RealmCallback) c).setText(((RealmCallback) c).getDefaultText());
            }
        };
        SaslServer server = Sasl.createSaslServer("DIGEST-MD5", "", "default", props, serverCb);
        SaslClient client = Sasl.createSaslClient(new String[] {"DIGEST-MD5"}, null, "", "default", props, clientCb);
        byte[] challenge = server.evaluateResponse(new byte[0]);
        byte[] response = client.evaluateChallenge(challenge);
        byte[] rspauth = server.evaluateResponse(response);
        client.evaluateChallenge(rspauth);
        System.out.println("qop " + client.getNegotiatedProperty(Sasl.QOP) + " / " + server.getNegotiatedProperty(Sasl.QOP));
        System.out.println("identifier " + hex(ID));
        System.out.println("password " + hex(PW));
        System.out.println("challenge " + new String(challenge, StandardCharsets.UTF_8));
        System.out.println("response " + new String(response, StandardCharsets.UTF_8));
        System.out.println("rspauth " + new String(rspauth, StandardCharsets.UTF_8));
        int[][] script = {{0, 1}, {0, 6}, {1, 3}, {0, 14}, {1, 30}, {0, 100}, {1, 16}};
        int seed = 11;
        for (int[] step : script) {
            byte[] m = msg(step[1], seed++);
            boolean fromClient = step[0] == 0;
            byte[] w = fromClient ? client.wrap(m, 0, m.length) : server.wrap(m, 0, m.length);
            byte[] back = fromClient ? server.unwrap(w, 0, w.length) : client.unwrap(w, 0, w.length);
            if (!java.util.Arrays.equals(back, m)) throw new IllegalStateException("JDK round trip failed");
            System.out.println((fromClient ? "c2s " : "s2c ") + hex(m) + " " + hex(w));
        }
    }
}
