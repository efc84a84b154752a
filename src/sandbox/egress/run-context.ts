/**
 * What the request handlers of one run's endpoint share: the run, its policy (read
 * at each new connection), the proxy's options, and how a connection is reported.
 *
 * @module
 */

import type { EgressPolicy } from '../../contract/index.js';
import type { ConnectionTally } from './connection-tally.js';
import type { EgressProxyOptions } from './egress-types.js';
import type { TlsInterceptor } from './tls-intercept.js';

/** One run's view of the proxy, given to every handler. */
export interface RunContext {
  readonly runId: string;
  /** The run's policy now: each connection reads it once, when it arrives. */
  policy(): EgressPolicy;
  readonly options: EgressProxyOptions;
  /** A report for a new connection to `host:port`, finished by the handler. */
  tally(host: string, port: number): ConnectionTally;
  /** Terminates TLS for the hosts of a run's secrets. */
  readonly interceptor: TlsInterceptor;
}
