/** Processor generations: which input and application id run, replay ranges, the control topic. */
package dev.runlane.common.generation;
