import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { hostSuite } from './host-suite.js';

// Real bubblewrap; scripts/setup/install-sandbox.sh installs it.
await hostSuite(t, new BwrapRunner());
