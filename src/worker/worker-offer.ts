/**
 * What a worker host offers: its OS and the needs that hold on its machine. The user
 * may state them (`MEMQL_WORKER_PROVIDES`); otherwise they are detected here, as a
 * pure function of what the binary reads about the machine (a few environment values,
 * the platform, and whether some paths exist), so every rule is tested without the
 * machine.
 *
 * Detection errs toward offering less: a need offered that does not hold would bring
 * calls here that then fail, while one missed is a setting away.
 *
 * @module
 */

import { posix } from 'node:path';
import {
  type EnvironmentProvides,
  goosFromNodePlatform,
  NEEDS,
  type Need,
  type WorkerOffer,
} from '../contract/index.js';

/** What detection reads about the machine, passed in. */
export interface OfferProbe {
  /** The worker's own environment values detection looks at. */
  readonly env: {
    readonly DISPLAY?: string | undefined;
    readonly WAYLAND_DISPLAY?: string | undefined;
    readonly XDG_RUNTIME_DIR?: string | undefined;
  };
  /** `process.platform`. */
  readonly platform: string;
  /** Whether something exists at `path`. */
  exists(path: string): boolean;
  /** The names in directory `dir`; empty when it cannot be read. */
  list(dir: string): readonly string[];
}

/** Where X servers put their local sockets. */
const X11_SOCKET_DIR = '/tmp/.X11-unix';

/**
 * The local socket of an X display name (`:0`, `:1.0`, `unix:2`), or `null` for one
 * that is not a local display (`localhost:10.0`, forwarded over SSH, has no socket to
 * find, and is not this machine's screen).
 */
export function x11SocketPath(display: string): string | null {
  const m = /^(?:unix)?:(\d+)(?:\.\d+)?$/.exec(display.trim());
  return m ? `${X11_SOCKET_DIR}/X${m[1]}` : null;
}

/**
 * The socket of a Wayland display: `WAYLAND_DISPLAY` is a path, or a name under
 * `XDG_RUNTIME_DIR`; `null` when neither gives one.
 */
export function waylandSocketPath(name: string, runtimeDir: string | undefined): string | null {
  const display = name.trim();
  if (display === '') return null;
  if (posix.isAbsolute(display)) return display;
  if (runtimeDir === undefined || !posix.isAbsolute(runtimeDir)) return null;
  return posix.join(runtimeDir, display);
}

function hasDisplay(probe: OfferProbe): boolean {
  const x11 = probe.env.DISPLAY ? x11SocketPath(probe.env.DISPLAY) : null;
  if (x11 !== null && probe.exists(x11)) return true;
  const wayland = probe.env.WAYLAND_DISPLAY
    ? waylandSocketPath(probe.env.WAYLAND_DISPLAY, probe.env.XDG_RUNTIME_DIR)
    : null;
  return wayland !== null && probe.exists(wayland);
}

function hasGpu(probe: OfferProbe): boolean {
  if (probe.exists('/dev/nvidia0')) return true;
  return probe.list('/dev/dri').some((name) => /^renderD\d+$/.test(name));
}

/**
 * The needs that hold on this machine: `display` when the session's X11 socket
 * (`/tmp/.X11-unix/X<n>` of `DISPLAY`) or Wayland socket exists; `gpu` when
 * `/dev/nvidia0` or a DRM render node `/dev/dri/renderD*` exists; `macos_tooling` on
 * macOS with `/usr/bin/xcrun`; `user_files` always, since the worker serves the
 * directory its user chose. In the closed set's order.
 */
export function detectProvides(probe: OfferProbe): Need[] {
  const holds: Record<Need, boolean> = {
    display: hasDisplay(probe),
    gpu: hasGpu(probe),
    macos_tooling: probe.platform === 'darwin' && probe.exists('/usr/bin/xcrun'),
    user_files: true,
  };
  return NEEDS.filter((need) => holds[need]);
}

/** The worker's offer: its OS in Go's spelling, what it provides, its capacity. */
export function workerOffer(
  provides: readonly Need[],
  platform: string,
  capacity: number,
): WorkerOffer {
  return {
    os: goosFromNodePlatform(platform),
    provides: NEEDS.filter((need) => provides.includes(need)),
    capacity,
  };
}

/** An offer's needs as the table `evaluateEnvironment` checks a hint against. */
export function providesTable(provides: readonly Need[]): EnvironmentProvides {
  return {
    display: provides.includes('display'),
    gpu: provides.includes('gpu'),
    macos_tooling: provides.includes('macos_tooling'),
    user_files: provides.includes('user_files'),
  };
}
