/** The sink's database as an operator works it: the records set aside, a retention gap accepted. */
package dev.runlane.tools.sink;
