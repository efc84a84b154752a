/**
 * The stand-in internet in a process of its own, for case 12: the proxy under
 * measurement then does not share an event loop with the server it reaches. Prints
 * one JSON line (`port`, `caPath`, `caPem`) once it serves, and exits when its
 * standard input ends.
 *
 *   node internet-child.js <blob bytes>
 *
 * @module
 */

import { startTestInternet } from '../support/internet.js';

const internet = await startTestInternet({ blobBytes: Number(process.argv[2] ?? 1024) });
process.stdout.write(
  `${JSON.stringify({ port: internet.port, caPath: internet.caPath, caPem: internet.caPem })}\n`,
);
process.stdin.resume();
process.stdin.on('end', () => {
  void internet.close().then(() => process.exit(0));
});
