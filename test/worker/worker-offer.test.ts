import t from 'tap';
import {
  detectProvides,
  type OfferProbe,
  providesTable,
  waylandSocketPath,
  workerOffer,
  x11SocketPath,
} from '../../src/worker/index.js';

/** Detection of what a worker offers: a function of the machine as described, no I/O. */

function machine(
  paths: readonly string[],
  env: OfferProbe['env'] = {},
  platform = 'linux',
): OfferProbe {
  const present = new Set(paths);
  return {
    env,
    platform,
    exists: (path) => present.has(path),
    list: (dir) =>
      [...present]
        .filter((p) => p.startsWith(`${dir}/`))
        .map((p) => p.slice(dir.length + 1))
        .filter((name) => !name.includes('/')),
  };
}

t.test('display names and their sockets', async (t) => {
  t.equal(x11SocketPath(':0'), '/tmp/.X11-unix/X0');
  t.equal(x11SocketPath(':1.0'), '/tmp/.X11-unix/X1');
  t.equal(x11SocketPath('unix:12'), '/tmp/.X11-unix/X12');
  t.equal(x11SocketPath('localhost:10.0'), null, 'forwarded over SSH: not this screen');
  t.equal(x11SocketPath('nonsense'), null);
  t.equal(waylandSocketPath('wayland-0', '/run/user/1000'), '/run/user/1000/wayland-0');
  t.equal(waylandSocketPath('/run/user/1000/wayland-1', undefined), '/run/user/1000/wayland-1');
  t.equal(waylandSocketPath('wayland-0', undefined), null);
  t.equal(waylandSocketPath('wayland-0', 'relative'), null);
});

const CASES: ReadonlyArray<{
  readonly name: string;
  readonly probe: OfferProbe;
  readonly provides: readonly string[];
}> = [
  { name: 'a bare machine: the user files only', probe: machine([]), provides: ['user_files'] },
  {
    name: 'DISPLAY with its X socket',
    probe: machine(['/tmp/.X11-unix/X0'], { DISPLAY: ':0' }),
    provides: ['display', 'user_files'],
  },
  {
    name: 'DISPLAY without its socket (a stale variable)',
    probe: machine(['/tmp/.X11-unix/X1'], { DISPLAY: ':0' }),
    provides: ['user_files'],
  },
  {
    name: 'a socket without DISPLAY (another session)',
    probe: machine(['/tmp/.X11-unix/X0']),
    provides: ['user_files'],
  },
  {
    name: 'Wayland under XDG_RUNTIME_DIR',
    probe: machine(['/run/user/1000/wayland-0'], {
      WAYLAND_DISPLAY: 'wayland-0',
      XDG_RUNTIME_DIR: '/run/user/1000',
    }),
    provides: ['display', 'user_files'],
  },
  {
    name: 'Wayland without its socket',
    probe: machine([], { WAYLAND_DISPLAY: 'wayland-0', XDG_RUNTIME_DIR: '/run/user/1000' }),
    provides: ['user_files'],
  },
  { name: 'an NVIDIA device', probe: machine(['/dev/nvidia0']), provides: ['gpu', 'user_files'] },
  {
    name: 'a DRM render node',
    probe: machine(['/dev/dri/card0', '/dev/dri/renderD128']),
    provides: ['gpu', 'user_files'],
  },
  {
    name: 'a DRM card without a render node',
    probe: machine(['/dev/dri/card0']),
    provides: ['user_files'],
  },
  {
    name: 'macOS with xcrun',
    probe: machine(['/usr/bin/xcrun'], {}, 'darwin'),
    provides: ['macos_tooling', 'user_files'],
  },
  {
    name: 'macOS without the command line tools',
    probe: machine([], {}, 'darwin'),
    provides: ['user_files'],
  },
  {
    name: 'xcrun on Linux is not macOS tooling',
    probe: machine(['/usr/bin/xcrun']),
    provides: ['user_files'],
  },
  {
    name: 'everything, in the closed set order',
    probe: machine(
      ['/usr/bin/xcrun', '/dev/nvidia0', '/tmp/.X11-unix/X0'],
      { DISPLAY: ':0' },
      'darwin',
    ),
    provides: ['display', 'gpu', 'macos_tooling', 'user_files'],
  },
];

for (const { name, probe, provides } of CASES) {
  t.test(name, async (t) => {
    t.strictSame(detectProvides(probe), provides);
  });
}

t.test(
  'the offer: Go OS names, needs in order, and the table the hint is checked against',
  async (t) => {
    t.strictSame(workerOffer(['user_files', 'display'], 'win32', 2), {
      os: 'windows',
      provides: ['display', 'user_files'],
      capacity: 2,
    });
    t.equal(workerOffer([], 'darwin', 1).os, 'darwin');
    t.strictSame(providesTable(['gpu', 'user_files']), {
      display: false,
      gpu: true,
      macos_tooling: false,
      user_files: true,
    });
  },
);
