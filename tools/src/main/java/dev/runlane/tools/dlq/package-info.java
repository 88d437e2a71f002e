/** The dead-letter topic as an operator works it: list by reason, show one, re-drive. */
package dev.runlane.tools.dlq;
