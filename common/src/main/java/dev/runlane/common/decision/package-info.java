/** The decision log: one record per input record's decision, its settings and its format. */
package dev.runlane.common.decision;
