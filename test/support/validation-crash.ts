// A validation thread that crashes on demand, for the tests of a thread lost
// with the uploads it held: a pool started with `crashingThreadEntry` runs
// the real thread, which dies of an uncaught error on a chunk holding CRASH_MARKER.

export const CRASH_MARKER = '<!-- crash the validation thread -->';

export const crashingThreadEntry = new URL('./crashing-validation-thread.ts', import.meta.url);
