/** Webhook signature schemes (Sume, Standard Webhooks) verified over the raw body bytes. */
package dev.runlane.common.signature;
