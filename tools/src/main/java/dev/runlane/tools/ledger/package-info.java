/** What happened to a webhook: {@code runlane trace} and the ledger {@code runlane audit}. */
package dev.runlane.tools.ledger;
