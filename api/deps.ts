import type { ServiceDeps } from '../services/deps.ts';
import type { TokenRegistry } from './auth/tokens.ts';

/** Everything the HTTP layer needs, built by the entry point (or a test) and passed in: the services' deps and what only HTTP uses. */
export interface AppDeps extends ServiceDeps {
  /** Bearer tokens, or 'disabled' when AUTH_DISABLED=true opened the service on purpose. */
  tokens: TokenRegistry | 'disabled';
}
