/** The report: rows, latency summaries, and the table, JSON and Markdown they are written as. */
package dev.runlane.bench.report;
