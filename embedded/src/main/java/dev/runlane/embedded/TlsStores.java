package dev.runlane.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for {@code localhost} / {@code 127.0.0.1} in a PKCS12 key store, and a
 * trust store holding it, made with the running JDK's {@code keytool}: TLS for test servers with
 * nothing but a JDK.
 *
 * @param keyStore the server's key store (PKCS12)
 * @param trustStore a trust store with the server's certificate (PKCS12)
 * @param password the password of both stores and of the key
 */
public record TlsStores(Path keyStore, Path trustStore, String password) {

  private static final Object SHARED_LOCK = new Object();
  private static TlsStores shared; // guarded by SHARED_LOCK

  /**
   * One set of stores for every test in this JVM that needs only some certificate (the Redis TLS
   * tests): made once, in a temp dir deleted at exit, as each {@code keytool} run is a JVM start.
   */
  public static TlsStores shared() {
    synchronized (SHARED_LOCK) {
      if (shared == null) {
        try {
          Path dir = Files.createTempDirectory("runlane-tls-");
          dir.toFile().deleteOnExit();
          shared = generate(dir);
          for (Path file :
              List.of(
                  shared.keyStore,
                  shared.trustStore,
                  shared.certificatePem(),
                  shared.privateKeyPem())) {
            file.toFile().deleteOnExit();
          }
        } catch (IOException e) {
          throw new IllegalStateException("cannot make a temp dir for TLS stores", e);
        }
      }
      return shared;
    }
  }

  /** Generates the stores in {@code dir} (created if missing). */
  public static TlsStores generate(Path dir) {
    try {
      Files.createDirectories(dir);
      String password = "runlane-test-" + Long.toHexString(System.nanoTime());
      Path keyStore = dir.resolve("server.p12");
      Path cert = dir.resolve("server.crt");
      Path trustStore = dir.resolve("trust.p12");
      keytool(
          "-genkeypair",
          "-alias",
          "server",
          "-keyalg",
          "RSA",
          "-keysize",
          "2048",
          "-validity",
          "7",
          "-dname",
          "CN=localhost",
          "-ext",
          "SAN=IP:127.0.0.1,DNS:localhost",
          "-storetype",
          "PKCS12",
          "-keystore",
          keyStore.toString(),
          "-storepass",
          password,
          "-keypass",
          password);
      keytool(
          "-exportcert",
          "-alias",
          "server",
          "-keystore",
          keyStore.toString(),
          "-storepass",
          password,
          "-rfc",
          "-file",
          cert.toString());
      keytool(
          "-importcert",
          "-noprompt",
          "-alias",
          "server",
          "-file",
          cert.toString(),
          "-storetype",
          "PKCS12",
          "-keystore",
          trustStore.toString(),
          "-storepass",
          password);
      return new TlsStores(keyStore, trustStore, password);
    } catch (IOException e) {
      throw new IllegalStateException("cannot make TLS stores in " + dir, e);
    }
  }

  /** What {@link #trustedByThisJvm()} returns: closing it puts the earlier trust store back. */
  public interface JvmTrust extends AutoCloseable {
    @Override
    void close();
  }

  private static final List<String> TRUST_PROPERTIES =
      List.of(
          "javax.net.ssl.trustStore",
          "javax.net.ssl.trustStorePassword",
          "javax.net.ssl.trustStoreType");

  /**
   * Makes {@link #trustStore()} this JVM's default trust store until closed, for clients that check
   * a server against the JDK's trust store (the processor's {@code rediss://}): the JDK reads these
   * properties again whenever a trust manager is made with the default store.
   */
  public JvmTrust trustedByThisJvm() {
    List<String> before = TRUST_PROPERTIES.stream().map(System::getProperty).toList();
    System.setProperty(TRUST_PROPERTIES.get(0), trustStore.toString());
    System.setProperty(TRUST_PROPERTIES.get(1), password);
    System.setProperty(TRUST_PROPERTIES.get(2), "PKCS12");
    return () -> {
      for (int i = 0; i < TRUST_PROPERTIES.size(); i++) {
        if (before.get(i) == null) {
          System.clearProperty(TRUST_PROPERTIES.get(i));
        } else {
          System.setProperty(TRUST_PROPERTIES.get(i), before.get(i));
        }
      }
    };
  }

  /** The server's certificate as PEM, for servers that read PEM files such as redis-server. */
  public Path certificatePem() {
    return keyStore.resolveSibling("server.crt");
  }

  /**
   * The server's private key as unencrypted PKCS#8 PEM, for servers that read PEM files such as
   * redis-server; written next to the key store on the first call.
   */
  public synchronized Path privateKeyPem() {
    Path pem = keyStore.resolveSibling("server.key");
    if (Files.exists(pem)) {
      return pem;
    }
    try (InputStream in = Files.newInputStream(keyStore)) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(in, password.toCharArray());
      Key key = store.getKey("server", password.toCharArray());
      String body =
          Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
              .encodeToString(key.getEncoded());
      Files.writeString(
          pem, "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n");
      return pem;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot write the private key of " + keyStore, e);
    }
  }

  private static void keytool(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("keytool " + args[0] + " did not finish within 60 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running keytool", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IOException("keytool " + args[0] + " failed: " + out);
    }
  }
}
