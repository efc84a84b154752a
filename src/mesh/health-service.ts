/**
 * `grpc.health.v1.Health`, served on every node for Kubernetes probes and any gRPC
 * tool. It needs no mesh token: probes carry none, and a status reveals nothing.
 *
 * Statuses are kept per service name; `''` is the node as a whole. A node reports
 * SERVING while it takes calls and NOT_SERVING once it starts shutting down.
 *
 * @module
 */

import {
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';

/** A service's status, as the health protocol names it. */
export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface CheckRequest {
  service?: string;
}

interface CheckResponse {
  status: ServingStatus;
}

/** The statuses a node reports, and the watchers waiting for changes. */
export class HealthStatusTable {
  private readonly statuses = new Map<string, ServingStatus>();
  private readonly watchers = new Set<ServerWritableStream<CheckRequest, CheckResponse>>();

  /** Sets one service's status and tells its watchers. */
  set(service: string, next: ServingStatus): void {
    if (this.statuses.get(service) === next) return;
    this.statuses.set(service, next);
    for (const w of this.watchers) {
      if ((w.request.service ?? '') === service) w.write({ status: next });
    }
  }

  /** Sets every known service's status. */
  setAll(next: ServingStatus): void {
    for (const service of [...this.statuses.keys()]) this.set(service, next);
  }

  /** One service's status; `undefined` for a service this node does not serve. */
  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Ends every Watch stream (the server is stopping). */
  endWatches(): void {
    for (const w of this.watchers) w.end();
    this.watchers.clear();
  }

  /** The Check and Watch handlers. */
  implementation(): UntypedServiceImplementation {
    return {
      Check: (
        call: ServerUnaryCall<CheckRequest, CheckResponse>,
        callback: sendUnaryData<CheckResponse>,
      ) => {
        const service = call.request.service ?? '';
        const current = this.get(service);
        if (current === undefined) {
          callback({
            code: status.NOT_FOUND,
            details: `unknown service ${JSON.stringify(service)}`,
          });
        } else {
          callback(null, { status: current });
        }
      },
      Watch: (call: ServerWritableStream<CheckRequest, CheckResponse>) => {
        const service = call.request.service ?? '';
        this.watchers.add(call);
        const forget = () => this.watchers.delete(call);
        call.on('cancelled', forget);
        call.on('close', forget);
        call.write({ status: this.get(service) ?? 'SERVICE_UNKNOWN' });
      },
    };
  }
}
