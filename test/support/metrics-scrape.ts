import { metricsToken } from '../../api/metrics.ts';
import type { Config } from '../../config.ts';

/** The header a scraper of the API's GET /metrics sends: its token (METRICS_TOKEN, else the one in DATA_DIR). */
export function metricsAuthorization(config: Pick<Config, 'METRICS_TOKEN' | 'DATA_DIR'>): { authorization: string } {
  return { authorization: `Bearer ${metricsToken(config)}` };
}
