/** Load generation: open-loop HTTP loads, signed webhooks, pre-filled topics, the bare harness. */
package dev.runlane.bench.load;
