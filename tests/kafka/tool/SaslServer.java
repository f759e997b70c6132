// The broker side of a SASL exchange, run by Kafka's own server classes (the ones a broker
// uses), without a broker: the oracle for kseek's SASL mechanisms (tests/sasl_interop.rs).
// Run it through tests/kafka/saslserver.
//
//   SaslServer SCRAM-SHA-256|SCRAM-SHA-512 USER PASSWORD ITERATIONS
//   SaslServer PLAIN USER PASSWORD
//   SaslServer OAUTHBEARER          (the broker's default unsecured-JWT validator)
//
// It reads one client message per line on stdin, in hex, and answers each with one line:
//   OK <hex>        the server's answer (empty for none)
//   ERR <message>   the server refused (what a broker puts in SaslAuthenticate's error message)
// and, once the server considers the exchange complete, a line COMPLETE <authorization id>.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.security.auth.login.AppConfigurationEntry;
import org.apache.kafka.common.security.authenticator.CredentialCache;
import org.apache.kafka.common.security.oauthbearer.internals.OAuthBearerSaslServer;
import org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler;
import org.apache.kafka.common.security.plain.internals.PlainSaslServer;
import org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;
import org.apache.kafka.common.security.scram.internals.ScramServerCallbackHandler;
import org.apache.kafka.common.security.token.delegation.internals.DelegationTokenCache;

public class SaslServer {
    public static void main(String[] args) throws Exception {
        javax.security.sasl.SaslServer server = create(args);
        HexFormat hex = HexFormat.of();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                byte[] answer = server.evaluateResponse(hex.parseHex(line.trim()));
                System.out.println("OK " + hex.formatHex(answer));
            } catch (Exception e) {
                System.out.println("ERR " + e.getMessage());
            }
            if (server.isComplete()) {
                System.out.println("COMPLETE " + server.getAuthorizationID());
            }
            System.out.flush();
        }
    }

    private static javax.security.sasl.SaslServer create(String[] args) throws Exception {
        String mechanism = args[0];
        if (mechanism.startsWith("SCRAM-")) {
            ScramMechanism scram = ScramMechanism.forMechanismName(mechanism);
            ScramCredential credential =
                new ScramFormatter(scram).generateCredential(args[2], Integer.parseInt(args[3]));
            CredentialCache.Cache<ScramCredential> cache =
                new CredentialCache().createCache(mechanism, ScramCredential.class);
            cache.put(args[1], credential);
            return new ScramSaslServer(scram, new HashMap<>(), new ScramServerCallbackHandler(
                cache, new DelegationTokenCache(ScramMechanism.mechanismNames())));
        }
        if (mechanism.equals("PLAIN")) {
            PlainServerCallbackHandler handler = new PlainServerCallbackHandler();
            handler.configure(new HashMap<>(), mechanism, List.of(jaas(
                "org.apache.kafka.common.security.plain.PlainLoginModule",
                Map.of("user_" + args[1], args[2]))));
            return new PlainSaslServer(handler);
        }
        if (mechanism.equals("OAUTHBEARER")) {
            OAuthBearerUnsecuredValidatorCallbackHandler handler =
                new OAuthBearerUnsecuredValidatorCallbackHandler();
            handler.configure(new HashMap<>(), mechanism, List.of(jaas(
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule", Map.of())));
            return new OAuthBearerSaslServer(handler);
        }
        throw new IllegalArgumentException("unknown mechanism " + mechanism);
    }

    private static AppConfigurationEntry jaas(String module, Map<String, String> options) {
        return new AppConfigurationEntry(
            module, AppConfigurationEntry.LoginModuleControlFlag.REQUIRED, options);
    }
}
