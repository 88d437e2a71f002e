package dev.runlane.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
