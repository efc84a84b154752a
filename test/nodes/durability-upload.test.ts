import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import { DurableMesh, okPayload } from '../support/durable-mesh.js';

/**
 * Uploads across replicas, with real processes and kills (one agent, two workbench
 * processes, Postgres and s3rver): a stage lost with its replica is never placed
 * half, the caller is told to start again, and an upload once acknowledged survives
 * the replica that placed it.
 */

const MiB = 1024 * 1024;
const PART = 8 * MiB;
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

t.test('a stage lost with its replica, then a placed upload that survives a kill', async (t) => {
  const mesh = await DurableMesh.start(t, {
    store: 's3',
    env: { MEMQL_NODE_LIVENESS_MS: '2000' },
  });
  const run = await mesh.run('run-upload', 'wb-a');
  const bytes = randomBytes(2 * PART + 123_457);
  const part = (offset: number, complete = false) =>
    mesh.dispatch(run, 'fs_write', {
      path: 'data/big.bin',
      content: bytes.subarray(offset, Math.min(offset + PART, bytes.length)).toString('base64'),
      encoding: 'base64',
      upload: { id: 'upload-big', offset, complete, ...(complete ? { size: bytes.length } : {}) },
    });
  const staged = await part(0);
  t.match(staged.route, { nodeId: 'wb-a' });
  t.match(okPayload(t, staged, 'first part'), { upload: { staged: PART, complete: false } });

  await mesh.replica('wb-a').proc.stop('SIGKILL');

  // The next part reaches the replica that takes the workspace over, which holds no
  // stage: it says so, and nothing of the upload is in the workspace.
  const lost = await part(PART);
  t.match(lost.route, { nodeId: 'wb-b' });
  t.match(lost.result, {
    ok: false,
    errorCode: 'invalid_arguments',
    payload: { uploadId: 'upload-big', staged: 0 },
  });
  const listing = await mesh.dispatch(run, 'fs_list', { recursive: true });
  t.same(okPayload<{ entries: unknown[] }>(t, listing, 'listing').entries, [], 'no partial file');

  // Again from the start, on the new holder: placed whole and acknowledged.
  for (let offset = 0; offset < bytes.length; offset += PART) {
    const last = offset + PART >= bytes.length;
    const answer = await part(offset, last);
    t.match(answer.route, { nodeId: 'wb-b' });
    okPayload(t, answer, `part at ${offset}`);
    if (last) t.match(answer.result, { ok: true, payload: { size: bytes.length } });
  }

  // The replica that placed it is killed; the restarted first one serves it whole.
  await mesh.replica('wb-b').proc.stop('SIGKILL');
  await mesh.restart('wb-a');
  await mesh.untilHealthy(['wb-a']);
  // Checked on the replica (the harness's replies are small): the manifest's hash, and
  // the bytes of the copy the restarted replica made from the object store.
  const [row] = await mesh.db.query<{ hash: string; size: string }>(
    'select hash, size from workspace_file where run_id = $1 and path = $2',
    [run, 'data/big.bin'],
  );
  t.equal(row?.hash, sha(bytes), 'the durable manifest holds the whole file');
  const sum = await mesh.dispatch(run, 'exec', { command: 'sha256sum data/big.bin' });
  t.match(sum.route, { nodeId: 'wb-a' });
  t.equal(
    okPayload<{ stdout: string }>(t, sum, 'sha256sum').stdout,
    `${sha(bytes)}  data/big.bin\n`,
    'byte for byte after the kill',
  );
  t.same(await mesh.stop(), { 'wb-a': 0 });
});
