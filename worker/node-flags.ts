/**
 * Node flags of every worker process (npm start, npm run worker, the compose
 * file, the benchmarks). A batch's apply makes short-lived garbage by the
 * megabyte per group; with V8's default young generation on a large machine
 * the heap grew far beyond what stays alive (peak 690 MB for 100,000
 * entities, of which under 300 MB live). 8 MB semi-spaces keep the peak near
 * the live set (docs/performance.md).
 */
export const WORKER_NODE_FLAGS = ['--max-semi-space-size=8'] as const;
