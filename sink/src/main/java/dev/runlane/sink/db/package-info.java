/** The sink's database: pool and migrations, one transaction per batch, stored offsets. */
package dev.runlane.sink.db;
