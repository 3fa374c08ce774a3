// Builds the workflow bundle once, in its own process: webpack's memory peak
// then never counts against a worker, and N workers share one build.
//   node scripts/bundle-workflows.ts OUT_FILE
import { buildWorkflowBundle } from '../worker/bundle.ts';

const [out] = process.argv.slice(2);
if (!out) {
  process.stderr.write('usage: node scripts/bundle-workflows.ts OUT_FILE\n');
  process.exit(2);
}
await buildWorkflowBundle(out);
