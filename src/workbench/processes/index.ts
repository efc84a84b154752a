/**
 * A workbench node's background processes between the sandbox and the store: their
 * start within the run's cap, their output pumped to the store as it comes, their end
 * recorded once that output is stored, and the processes an earlier process of the
 * node left marked lost; and the `process_*` actions over them.
 *
 * @module
 */

export {
  ProcessActions,
  type ProcessActionsOptions,
  type ProcessCommand,
  processView,
} from './process-actions.js';
export { ProcessOutput, type ProcessOutputOptions } from './process-output.js';
export {
  type ProcessRequest,
  ProcessSupervisor,
  type ProcessSupervisorOptions,
  type SupervisedStart,
} from './process-supervisor.js';
