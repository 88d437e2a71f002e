/**
 * Real infrastructure in-process (KRaft broker, Redis launcher) and the JUnit 5 extension for ITs.
 */
package dev.runlane.embedded;
