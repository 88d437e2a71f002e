/** Redis claim / done / release for request ids: the first, shared filter against duplicates. */
package dev.runlane.processor.dedup;
