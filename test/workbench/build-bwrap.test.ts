import t from 'tap';
import { BwrapRunner } from '../../src/sandbox/bwrap/index.js';
import { buildSuite } from './build-suite.js';

// Real bubblewrap; the sandbox sees this machine's /usr, which carries node, npm and git.
await buildSuite(t, new BwrapRunner(), 'empty');
