/**
 * The node's requests to a warm sandbox's agent (`session-agent.pl`), as frames on its
 * requests descriptor: `u32 length` + payload, the payload a kind byte and its fields,
 * a text field `u32 length + bytes` (the whole list is at the top of the agent).
 *
 * @module
 */

/** One command for the agent. */
export interface AgentRequest {
  /** Shell text, run by `/bin/sh -c`. */
  readonly command: string;
  /** The working directory inside the sandbox (`/workspace/...`). */
  readonly cwd: string;
  /** Bytes for the command's standard input; empty closes it at once. */
  readonly stdin: string | Uint8Array;
  /** The command's whole environment. */
  readonly env: Readonly<Record<string, string>>;
}

function field(value: string | Uint8Array): Buffer[] {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return [length, bytes];
}

function frame(kind: string, ...parts: Buffer[]): Buffer {
  const payload = Buffer.concat([Buffer.from(kind, 'latin1'), ...parts]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length);
  return Buffer.concat([length, payload]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function envFields(env: Readonly<Record<string, string>>): Buffer[] {
  return Object.entries(env).flatMap(([name, value]) => [...field(name), ...field(value)]);
}

/** The frame that asks the agent to run one command. */
export function encodeAgentRequest(request: AgentRequest): Buffer {
  return frame(
    'R',
    ...field(request.command),
    ...field(request.cwd),
    ...field(request.stdin),
    ...envFields(request.env),
  );
}

/** One background process for the agent: started in a session of its own. */
export interface AgentProcessRequest {
  /** The node's id for it, echoed in its frames. */
  readonly id: number;
  readonly command: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** A terminal of this size as its stdin, stdout and stderr (and controlling terminal). */
  readonly pty?: { readonly cols: number; readonly rows: number };
}

/** The frame that starts a background process. */
export function encodeStartProcess(request: AgentProcessRequest): Buffer {
  const size = Buffer.alloc(4);
  if (request.pty) {
    size.writeUInt16BE(request.pty.rows, 0);
    size.writeUInt16BE(request.pty.cols, 2);
  }
  return frame(
    'B',
    u32(request.id),
    size,
    ...field(request.command),
    ...field(request.cwd),
    ...envFields(request.env),
  );
}

/** The frame that writes bytes to a background process's standard input. */
export function encodeProcessStdin(id: number, bytes: Uint8Array): Buffer {
  return frame('W', u32(id), Buffer.from(bytes));
}

/** The frame that closes a background process's standard input (once what was written is). */
export function encodeProcessStdinEnd(id: number): Buffer {
  return frame('E', u32(id));
}

/** The frame that resizes a background process's terminal (its group gets `SIGWINCH`). */
export function encodeProcessResize(id: number, cols: number, rows: number): Buffer {
  const size = Buffer.alloc(4);
  size.writeUInt16BE(rows, 0);
  size.writeUInt16BE(cols, 2);
  return frame('Z', u32(id), size);
}

/** The frame that sends `signal` (a number) to a background process's process group. */
export function encodeProcessSignal(id: number, signal: number): Buffer {
  return frame('K', u32(id), Buffer.from([signal & 0xff]));
}

/** The frame that opens connection `id` to `port` of the sandbox's loopback. */
export function encodePortConnect(id: number, port: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(port);
  return frame('C', u32(id), b);
}

/** The frame that sends bytes on connection `id`. */
export function encodePortData(id: number, bytes: Uint8Array): Buffer {
  return frame('U', u32(id), Buffer.from(bytes));
}

/**
 * The frame that ends connection `id`: `half` closes its write side once what was sent
 * is written (the other side may still answer); otherwise it is closed at once.
 */
export function encodePortClose(id: number, half: boolean): Buffer {
  return frame('V', u32(id), Buffer.from([half ? 0 : 1]));
}
