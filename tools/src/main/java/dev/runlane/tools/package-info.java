/** The operator CLI: its commands, settings, exit codes and step-by-step output. */
package dev.runlane.tools;
