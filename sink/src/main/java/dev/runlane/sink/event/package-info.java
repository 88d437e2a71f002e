/** What the sink reads: a record of sume.events decoded into the fields its tables hold. */
package dev.runlane.sink.event;
