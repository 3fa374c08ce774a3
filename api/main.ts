import cluster from 'node:cluster';
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { runApiCluster } from './cluster.ts';
import { prepareApi, serveApi } from './serve.ts';

// `npm run api`: API_PROCESSES processes on PORT (api/cluster.ts), or with
// API_PROCESSES=1 this process alone. A process of the cluster runs this file
// too, and serves.
const config = loadConfig();
const log = createLogger(config.LOG_LEVEL, 'api', { flushEveryMs: 200 });
if (cluster.isWorker) {
  await serveApi(config, log, { inCluster: true, sweep: config.API_PROCESS_SLOT === 0 });
} else {
  try {
    await prepareApi(config, log);
  } catch (error) {
    // A configuration the database cannot serve (or one that cannot be checked): one clear line, no stack.
    log.fatal((error as Error).message);
    log.flush?.();
    process.exit(1);
  }
  if (config.API_PROCESSES === 1) await serveApi(config, log, { inCluster: false, sweep: true });
  else await runApiCluster(config, log);
}
