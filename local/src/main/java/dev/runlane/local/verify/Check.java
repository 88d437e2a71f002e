package dev.runlane.local.verify;

/**
 * One verification check.
 *
 * @param name what is checked, e.g. "no acked event lost"
 * @param passed whether it held
 * @param detail the numbers behind it, and examples when it failed
 */
public record Check(String name, boolean passed, String detail) {}
