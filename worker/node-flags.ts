/**
 * Node flags of every worker process (npm start, npm run worker, the compose
 * file, the benchmarks). A batch's apply makes short-lived garbage by the
 * megabyte per group; with V8's default young generation on a large machine
 * the heap grew far beyond what stays alive (peak 690 MB for 100,000
 * entities, of which under 300 MB live). 8 MB semi-spaces keep the peak near
 * the live set (docs/performance.md).
 *
 * The old generation grows by a fixed 30% of what a full collection left
 * alive before the next one, instead of V8's own factor (up to 4×, 2× in a
 * large apply): a group's commands, records and COPY rows live through a
 * few young collections while the previous group's COPY is sent, so the old
 * generation fills with them, and the worker's peak followed the room V8
 * left for that garbage (a 500 MB batch: 934 MB). More full collections
 * instead; no cap, so no batch runs out of memory for it.
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=30'] as const;
