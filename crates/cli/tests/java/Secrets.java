import java.nio.charset.StandardCharsets;
import java.security.KeyPairGenerator;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;

/** Plants 20 credentials of the kinds `leakscope secrets` knows in PLANTED (as String, char[]
 *  and byte[], one inside a Config object's field), and 200 decoys shaped like them in DECOYS:
 *  random base64, numbers that fail Luhn's check, JWT-shaped text whose header is not JSON,
 *  PEM armour around bytes that are no key, GitHub-shaped tokens with a wrong checksum, URLs
 *  without a password. Prints READY, then waits to be dumped. */
public class Secrets {
    static final List<Object> PLANTED = new ArrayList<>();
    static final List<Object> DECOYS = new ArrayList<>();
    static final Random RANDOM = new Random(20261124);
    static final String ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    static final String UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

    static class Config {
        final String name;
        final String jdbcUrl;
        Config(String name, String jdbcUrl) { this.name = name; this.jdbcUrl = jdbcUrl; }
    }

    static String random(String alphabet, int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) b.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        return b.toString();
    }

    static String b64url(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** GitHub's and npm's checksum: CRC-32 of the random part, six base-62 digits. */
    static String crc(String random) {
        CRC32 c = new CRC32();
        c.update(random.getBytes(StandardCharsets.US_ASCII));
        long n = c.getValue();
        char[] out = new char[6];
        for (int i = 5; i >= 0; i--) { out[i] = ALNUM.charAt((int) (n % 62)); n /= 62; }
        return new String(out);
    }

    static boolean luhn(String digits) {
        int sum = 0;
        for (int i = 0; i < digits.length(); i++) {
            int d = digits.charAt(digits.length() - 1 - i) - '0';
            if (i % 2 == 1) { d *= 2; if (d > 9) d -= 9; }
            sum += d;
        }
        return sum % 10 == 0;
    }

    /** A card number with this prefix and length, whose last digit passes (or fails) Luhn. */
    static String card(String prefix, int length, boolean valid) {
        String body = prefix + random("0123456789", length - prefix.length() - 1);
        for (int d = 0; d <= 9; d++) {
            if (luhn(body + d) == valid) return body + d;
        }
        throw new IllegalStateException();
    }

    static String pem(String label, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(der);
        return "-----BEGIN " + label + "-----\n" + body + "\n-----END " + label + "-----\n";
    }

    static String jwt() {
        String header = b64url("{\"alg\":\"HS256\",\"typ\":\"JWT\"}");
        String payload = b64url("{\"sub\":\"" + random(ALNUM, 8) + "\",\"iat\":1764000000}");
        return header + "." + payload + "." + random(ALNUM + "-_", 43);
    }

    /**
     * A credential written in the code and never used: the string is never made, so it is in
     * no heap object, only in the JVM's symbol table, which HotSpot writes into the dump.
     */
    static String fallbackPassword() {
        return "literal-only-Fallback-Passw0rd-4c1d";
    }

    public static void main(String[] args) throws Exception {
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(1024);
        PLANTED.add(pem("PRIVATE KEY", rsa.generateKeyPair().getPrivate().getEncoded()));
        KeyPairGenerator ec = KeyPairGenerator.getInstance("EC");
        ec.initialize(256);
        PLANTED.add(pem("PRIVATE KEY", ec.generateKeyPair().getPrivate().getEncoded()).toCharArray());
        PLANTED.add("session=" + jwt());
        PLANTED.add(jwt().getBytes(StandardCharsets.UTF_8));
        PLANTED.add(jwt().toCharArray());
        PLANTED.add("AKIA" + random(UPPER32, 16));
        PLANTED.add(("aws_access_key_id = ASIA" + random(UPPER32, 16)).getBytes(StandardCharsets.UTF_8));
        String gh = random(ALNUM, 30);
        PLANTED.add("ghp_" + gh + crc(gh));
        String gho = random(ALNUM, 30);
        PLANTED.add(("token gho_" + gho + crc(gho)).toCharArray());
        String npm = random(ALNUM, 30);
        PLANTED.add("//registry.npmjs.org/:_authToken=npm_" + npm + crc(npm));
        PLANTED.add("glpat-" + random(ALNUM + "-_", 20));
        PLANTED.add("xoxb-" + random("0123456789", 11) + "-" + random("0123456789", 12) + "-" + random(ALNUM, 24));
        PLANTED.add("sk_live_" + random(ALNUM, 24));
        PLANTED.add("AIza" + random(ALNUM + "-_", 35));
        PLANTED.add(new Config("billing", "jdbc:postgresql://db.internal:5432/billing?user=app&password=" + random(ALNUM, 12)));
        PLANTED.add("postgres://report:" + random(ALNUM, 14) + "@10.0.0.7:5432/reports");
        PLANTED.add("Authorization: Bearer " + random(ALNUM + "-_.", 40));
        PLANTED.add("Authorization: Basic " + Base64.getEncoder().encodeToString(("svc-batch:" + random(ALNUM, 16)).getBytes()));
        PLANTED.add("card " + card("4", 16, true).replaceAll("(\\d{4})(?=\\d)", "$1 ") + " exp 09/29");
        PLANTED.add(card("54", 16, true).getBytes(StandardCharsets.US_ASCII));

        for (int i = 0; i < 60; i++) DECOYS.add(Base64.getEncoder().encodeToString(random(ALNUM, 30).getBytes()));
        for (int i = 0; i < 40; i++) DECOYS.add(card(i % 2 == 0 ? "4" : "53", 16, false));
        for (int i = 0; i < 40; i++) {
            DECOYS.add("eyJ" + b64url("not json: " + random(ALNUM, 12)) + "." + b64url(random(ALNUM, 20)) + "." + random(ALNUM, 30));
        }
        for (int i = 0; i < 20; i++) {
            byte[] junk = random(ALNUM, 48).getBytes();
            DECOYS.add(i % 2 == 0 ? pem("PRIVATE KEY", junk) : "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----");
        }
        for (int i = 0; i < 20; i++) {
            String r = random(ALNUM, 30);
            DECOYS.add("ghp_" + r + random(ALNUM, 6));
        }
        for (int i = 0; i < 20; i++) {
            DECOYS.add(i % 2 == 0 ? "https://" + random(ALNUM, 6) + "@example.com/" + random(ALNUM, 10)
                                  : "jdbc:postgresql://db:5432/app?user=" + random(ALNUM, 6) + "&ssl=true");
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(600_000);
    }
}
