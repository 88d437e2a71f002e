/** The consumer loop: positions from the database, batches, waiting out a database outage. */
package dev.runlane.sink.consume;
