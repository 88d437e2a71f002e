/** The processor service: configuration, lifecycle and entry point. */
package dev.runlane.processor;
