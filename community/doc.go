// Package community finds communities in a user's entity graph and
// summarises them without an LLM. Detect runs label propagation over the
// weighted edges of one connected component at a time, in a fixed order
// (sorted ids, ties to the current label, then to the smallest), with a
// cap on a label's size; because every component is labelled on its own,
// recomputing only the components that changed gives exactly what a full
// recomputation gives, which is what makes an incremental refresh safe.
// Summaries are extractive: the most central members' names and the
// sentences of their memories that name the most members. Data flows one
// way: edges and texts in, groups and summaries out; the engine reads and
// stores them.
package community
