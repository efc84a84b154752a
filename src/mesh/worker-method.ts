/** The method of a call an agent sends down a worker host's stream (a `workbenchHost` envelope). */
export const WORKER_DISPATCH_METHOD = 'worker.dispatch';
