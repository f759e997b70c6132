// Capture driver for golden SASL traffic: drives Kafka's own Java client (kafka-clients) through
// the recording proxy in front of a SASL_PLAINTEXT listener, so that the proxy sees SaslHandshake
// and SaslAuthenticate exchanges of a real client with a real broker: PLAIN and SCRAM-SHA-512
// logins that succeed, the same with a wrong password, and a mechanism the listener doesn't
// enable.
//
// Run with the source launcher:
//   java -cp <kafka-clients classpath> CaptureSasl.java <plaintext bootstrap> <proxy bootstrap>
// The plaintext bootstrap (not recorded) is only used to wait until the broker is ready. Every
// phase uses its own client.id, so the frame selector (pick_sasl_frames.py) can tell the
// phases apart from the request headers.
//
// The users and passwords are test-only values set up by tests/golden/capture-sasl; they are
// written into the golden frames on purpose (PLAIN sends its password in clear), so a test can
// check the bytes.

import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.UnsupportedSaslMechanismException;

public class CaptureSasl {
    static final String PLAIN_USER = "golden_plain";
    static final String PLAIN_PASSWORD = "golden-plain-test-password";
    static final String SCRAM_USER = "golden_scram";
    static final String SCRAM_PASSWORD = "golden-scram-test-password";
    static final String PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule";
    static final String SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule";

    public static void main(String[] args) throws Exception {
        waitReady(args[0]);
        String proxy = args[1];
        login(proxy, "golden-sasl-plain", "PLAIN", PLAIN_MODULE, PLAIN_USER, PLAIN_PASSWORD);
        login(proxy, "golden-sasl-scram", "SCRAM-SHA-512", SCRAM_MODULE, SCRAM_USER, SCRAM_PASSWORD);
        refused(proxy, "golden-sasl-plain-bad-password", "PLAIN", PLAIN_MODULE, PLAIN_USER,
                "wrong-password", SaslAuthenticationException.class);
        refused(proxy, "golden-sasl-scram-bad-password", "SCRAM-SHA-512", SCRAM_MODULE, SCRAM_USER,
                "wrong-password", SaslAuthenticationException.class);
        // The listener enables PLAIN and SCRAM-SHA-512 only.
        refused(proxy, "golden-sasl-unsupported-mechanism", "SCRAM-SHA-256", SCRAM_MODULE, SCRAM_USER,
                SCRAM_PASSWORD, UnsupportedSaslMechanismException.class);
        System.out.println("CAPTURE_DONE");
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("capture check failed: " + what);
        }
    }

    /** Waits (up to two minutes) until the broker answers on its plaintext listener. */
    static void waitReady(String bootstrap) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "golden-sasl-ready");
        p.put("default.api.timeout.ms", "5000");
        p.put("request.timeout.ms", "4000");
        try (Admin admin = Admin.create(p)) {
            while (true) {
                try {
                    if (admin.describeCluster().nodes().get().size() == 1) {
                        return;
                    }
                } catch (ExecutionException e) {
                    if (System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                }
                Thread.sleep(200);
            }
        }
    }

    static Properties sasl(String bootstrap, String clientId, String mechanism, String module,
            String user, String password) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        p.put("security.protocol", "SASL_PLAINTEXT");
        p.put("sasl.mechanism", mechanism);
        p.put("sasl.jaas.config",
                module + " required username=\"" + user + "\" password=\"" + password + "\";");
        p.put("default.api.timeout.ms", "15000");
        p.put("request.timeout.ms", "10000");
        return p;
    }

    /** Logs in and asks the broker for the cluster: SaslHandshake, SaslAuthenticate, Metadata. */
    static void login(String bootstrap, String clientId, String mechanism, String module,
            String user, String password) throws Exception {
        try (Admin admin = Admin.create(sasl(bootstrap, clientId, mechanism, module, user, password))) {
            check(admin.describeCluster().nodes().get().size() == 1, clientId + ": one node");
        }
    }

    /** Tries to log in and requires the broker to refuse with an exception of type `expected`. */
    static void refused(String bootstrap, String clientId, String mechanism, String module,
            String user, String password, Class<? extends Exception> expected) throws Exception {
        try (Admin admin = Admin.create(sasl(bootstrap, clientId, mechanism, module, user, password))) {
            admin.describeCluster().nodes().get();
            check(false, clientId + ": the broker accepted the login");
        } catch (ExecutionException e) {
            check(expected.isInstance(e.getCause()),
                    clientId + ": expected " + expected.getSimpleName() + ", got " + e.getCause());
        }
    }
}
