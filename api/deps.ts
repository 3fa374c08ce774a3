import type { Tracer } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { ServiceDeps } from '../services/deps.ts';
import type { TokenRegistry } from './auth/tokens.ts';

/** Everything the HTTP layer needs, built by the entry point (or a test) and passed in: the services' deps and what only HTTP uses. */
export interface AppDeps extends ServiceDeps {
  /** Bearer tokens, or 'disabled' when AUTH_DISABLED=true opened the service on purpose. */
  tokens: TokenRegistry | 'disabled';
  /** What GET /metrics answers from, given this process's registry; default: that registry (api/cluster.ts gathers every process's). */
  metricsSource?: (local: Registry) => Pick<Registry, 'contentType' | 'metrics'>;
  /** With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): every request a server span (api/middleware/tracing.ts). */
  tracer?: Tracer;
}
