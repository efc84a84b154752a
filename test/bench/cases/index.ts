/**
 * The cases of issue 7, in order.
 *
 * @module
 */

import type { BenchContext } from '../context.js';
import type { Row } from '../harness.js';
import { bulkFiles } from './bulk-files.js';
import { computeSdk } from './computesdk.js';
import { cpuBomb } from './cpu-bomb.js';
import { docker } from './docker.js';
import { egress } from './egress.js';
import { execInProcess } from './exec-in-process.js';
import { execMesh } from './exec-mesh.js';
import { filesMesh } from './files-mesh.js';
import { hydrate } from './hydrate.js';
import { idleWorkspaces } from './idle-workspaces.js';
import { memory } from './memory.js';
import { ports } from './ports.js';
import { processes } from './processes.js';
import { queue } from './queue.js';
import { queueAtScale } from './queue-at-scale.js';
import { syncScaling } from './sync-scaling.js';
import { throughput } from './throughput.js';
import { tti } from './tti.js';
import { versions } from './versions.js';

/** One benchmark case. */
export interface BenchCase {
  id: number;
  name: string;
  run: (ctx: BenchContext) => Promise<Row[]>;
}

export const CASES: readonly BenchCase[] = [
  { id: 1, name: 'exec in-process', run: execInProcess },
  { id: 2, name: 'exec via mesh', run: execMesh },
  { id: 3, name: 'files via mesh', run: filesMesh },
  { id: 4, name: 'throughput', run: throughput },
  { id: 5, name: 'sync scaling', run: syncScaling },
  { id: 6, name: 'cold hydrate', run: hydrate },
  { id: 7, name: 'queue', run: queue },
  { id: 8, name: 'memory', run: memory },
  { id: 9, name: 'docker', run: docker },
  { id: 10, name: 'cpu bomb', run: cpuBomb },
  { id: 11, name: 'bulk files', run: bulkFiles },
  { id: 12, name: 'egress', run: egress },
  { id: 13, name: 'processes', run: processes },
  { id: 14, name: 'port route', run: ports },
  { id: 15, name: 'versions', run: versions },
  { id: 16, name: 'computesdk', run: computeSdk },
  { id: 17, name: 'tti', run: tti },
  { id: 18, name: 'queue-at-scale', run: queueAtScale },
  { id: 19, name: 'idle workspaces', run: idleWorkspaces },
];
