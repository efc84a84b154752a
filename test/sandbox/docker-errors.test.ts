import t from 'tap';
import { WorkbenchError } from '../../src/contract/errors.js';
import {
  type DockerFailureKind,
  dockerStatus,
  dockerWorkbenchError,
  translateDockerError,
} from '../../src/sandbox/docker/index.js';

/** The Docker error table, on errors shaped as Dockerode throws them. No daemon involved. */

const ctx = { daemon: '/var/run/docker.sock', image: 'memql/x:1' };

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} /var/run/docker.sock`), { code });
}

function statusError(statusCode: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) unexpected - ${message}`), {
    statusCode,
    reason: 'server error',
    json: { message },
  });
}

const cases: {
  name: string;
  err: unknown;
  kind: DockerFailureKind;
  code: string;
  reason: RegExp;
}[] = [
  {
    name: 'connection refused',
    err: socketError('ECONNREFUSED'),
    kind: 'daemon_unreachable',
    code: 'no_sandbox',
    reason:
      /^Docker daemon not reachable at \/var\/run\/docker\.sock \(ECONNREFUSED\): start dockerd, or set MEMQL_RUNNER=bwrap$/,
  },
  {
    name: 'no socket file',
    err: socketError('ENOENT'),
    kind: 'daemon_unreachable',
    code: 'no_sandbox',
    reason: /not reachable at \/var\/run\/docker\.sock \(ENOENT\).*MEMQL_RUNNER=bwrap/,
  },
  {
    name: 'socket not permitted',
    err: socketError('EACCES'),
    kind: 'daemon_unreachable',
    code: 'no_sandbox',
    reason: /^permission denied on the Docker daemon at \/var\/run\/docker\.sock: .*docker group/,
  },
  {
    name: 'image missing',
    err: statusError(404, 'No such image: memql/x:1'),
    kind: 'image_missing',
    code: 'no_sandbox',
    reason:
      /^runner image memql\/x:1 not found on the Docker daemon at \/var\/run\/docker\.sock: build or load it there, or set MEMQL_RUNNER_IMAGE$/,
  },
  {
    name: 'a 404 about something else is not a missing image',
    err: statusError(404, 'No such container: abc'),
    kind: 'daemon_error',
    code: 'unavailable',
    reason: /HTTP 404.*No such container: abc/,
  },
  {
    name: 'daemon failure',
    err: statusError(500, 'failed to create shim task'),
    kind: 'daemon_error',
    code: 'unavailable',
    reason:
      /^the Docker daemon at \/var\/run\/docker\.sock failed \(HTTP 500\): failed to create shim task$/,
  },
  {
    name: 'not an Error at all',
    err: 'weird',
    kind: 'daemon_error',
    code: 'unavailable',
    reason: /failed: weird$/,
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const failure = translateDockerError(c.err, ctx);
    t.equal(failure.kind, c.kind);
    t.equal(failure.code, c.code);
    t.match(failure.reason, c.reason);
  });
}

t.test('a run error carries the code, the reason and the Docker error as cause', async (t) => {
  const cause = statusError(404, 'No such image: memql/x:1');
  const err = dockerWorkbenchError(cause, ctx);
  t.ok(err instanceof WorkbenchError);
  t.equal(err.code, 'no_sandbox');
  t.match(err.message, /^no_sandbox: runner image memql\/x:1 not found/);
  t.same(err.payload, { dockerFailure: 'image_missing' });
  t.equal(err.cause, cause);
});

t.test('dockerStatus reads the daemon status only', async (t) => {
  t.equal(dockerStatus(statusError(409, 'removal in progress')), 409);
  t.equal(dockerStatus(socketError('ECONNREFUSED')), null);
  t.equal(dockerStatus(undefined), null);
});
