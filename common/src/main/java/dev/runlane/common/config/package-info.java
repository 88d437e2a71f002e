/** Typed configuration from environment variables: every problem collected, secrets never shown. */
package dev.runlane.common.config;
