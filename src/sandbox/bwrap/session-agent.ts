/**
 * The agent of a warm bwrap sandbox (see `bwrap-session.ts`): a small Perl program that
 * bwrap starts instead of a command and that then runs one command at a time, each as
 * its child, on the node's request. Perl because `perl-base` is Essential on Debian: it
 * is on every workbench image and every Debian-like host, with no package of ours.
 *
 * Per command it makes fresh pipes for stdin, stdout and stderr, forks, and in the child
 * resets signals, closes every other descriptor, enters the working directory, replaces
 * the environment and execs `/bin/sh -c <command>`, as the one-shot sandbox does. It
 * relays the output to the node as it comes. When the command's process ends it kills
 * every other process of the sandbox (`kill(-1)` spares only bwrap's init and itself)
 * and waits until none is left, so nothing a command started outlives it; only then are
 * the last bytes drained and the end reported. Then it empties `/tmp` and `/dev/shm`
 * and looks for SysV IPC objects: a sandbox that cannot be put back as it was is
 * reported not reusable, and the node ends it.
 *
 * The agent holds nothing a command may not see: the node's environment never reaches
 * it, and all the processes that could reach its descriptors are killed before the
 * node sends the next request. The node still reads its frames as untrusted input.
 *
 * Wire (descriptor {@link AGENT_FDS.requests}, node to agent): `u32 length` + payload,
 * the payload a list of `u32 length + bytes` fields: command, working directory (a path
 * inside the sandbox), stdin, then environment names and values alternately.
 * Descriptor {@link AGENT_FDS.events}, agent to node: `S` (ready, once), `O u8 stream
 * u32 length bytes` (output: 1 stdout, 2 stderr), `X i32 code i32 signal` (the command
 * ended: its exit code, or -1 and the signal that ended it), `D u8 reusable` (its
 * processes are gone and the sandbox is tidy, or not).
 *
 * @module
 */

import type { OutputStream } from '../../contract/index.js';

/** The descriptors the agent talks to the node on (beyond bwrap's own, see `BWRAP_FDS`). */
export const AGENT_FDS = { requests: 10, events: 11 } as const;

/** Where the agent's interpreter is, inside the sandbox as on the host. */
export const AGENT_INTERPRETER = '/usr/bin/perl';

/** Largest output piece the agent sends in one frame. */
export const AGENT_CHUNK_BYTES = 65536;

/** The agent's program, run as `perl -e`. */
export const AGENT_SOURCE = String.raw`
use strict; use warnings; no warnings 'exec';
use POSIX (); use IO::Select; use Fcntl; use File::Path ();
$SIG{PIPE} = 'IGNORE';
open(my $REQ, '<&=', ${AGENT_FDS.requests}) or exit 120;
open(my $EV, '>&=', ${AGENT_FDS.events}) or exit 120;
pipe(my $sigr, my $sigw) or exit 121;
fcntl($sigw, F_SETFL, O_NONBLOCK);
$SIG{CHLD} = sub { syswrite($sigw, 'c') };
sub again { return $!{EINTR} || $!{EAGAIN}; }
sub readn { my ($fh, $n) = @_; my $buf = '';
  while (length($buf) < $n) { my $r = sysread($fh, $buf, $n - length($buf), length($buf));
    next if !defined $r && again(); return undef unless $r; }
  return $buf; }
sub emit { my ($data) = @_; my $off = 0;
  while ($off < length $data) { my $w = syswrite($EV, $data, length($data) - $off, $off);
    if (!defined $w) { exit 122 unless again(); my $v = ''; vec($v, fileno($EV), 1) = 1; select(undef, $v, undef, 1); next; }
    $off += $w; } }
sub others { opendir(my $d, '/proc') or return (1);
  my @p = grep { /^\d+$/ && $_ != 1 && $_ != $$ } readdir($d); closedir $d; return @p; }
sub settle { my $deadline = time + 5;
  while (1) { kill 'KILL', -1; 1 while waitpid(-1, POSIX::WNOHANG()) > 0;
    return 1 unless others(); return 0 if time > $deadline; select(undef, undef, undef, 0.002); } }
sub tidy { my $clean = 1;
  for my $dir ('/tmp', '/dev/shm') { opendir(my $d, $dir) or next;
    my @entries = grep { $_ ne '.' && $_ ne '..' } readdir $d; closedir $d;
    for my $e (@entries) { my $p = "$dir/$e";
      if (-d $p && !-l $p) { File::Path::remove_tree($p, { safe => 0, error => \my $err }); $clean = 0 if @$err; }
      else { unlink($p) or $clean = 0; } } }
  for my $f ('/proc/sysvipc/shm', '/proc/sysvipc/sem', '/proc/sysvipc/msg') {
    open(my $h, '<', $f) or next; my @lines = <$h>; close $h; $clean = 0 if @lines > 1; }
  return $clean; }
emit('S');
while (1) {
  my $hdr = readn($REQ, 4); last unless defined $hdr;
  my $payload = readn($REQ, unpack('N', $hdr)); last unless defined $payload;
  my ($cmd, $cwd, $stdin, @env) = unpack('(N/a*)*', $payload);
  pipe(my $in_r, my $in_w) or exit 121; pipe(my $out_r, my $out_w) or exit 121; pipe(my $err_r, my $err_w) or exit 121;
  my $pid = fork(); exit 121 unless defined $pid;
  if ($pid == 0) {
    $SIG{PIPE} = 'DEFAULT'; $SIG{CHLD} = 'DEFAULT';
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
    POSIX::dup2(fileno($in_r), 0); POSIX::dup2(fileno($out_w), 1); POSIX::dup2(fileno($err_w), 2);
    opendir(my $fds, '/proc/self/fd'); my @open = grep { /^\d+$/ && $_ > 2 } readdir $fds; closedir $fds;
    POSIX::close($_) for @open;
    chdir($cwd) or do { syswrite(STDERR, "cannot enter the working directory: $!\n"); POSIX::_exit(125) };
    %ENV = @env;
    exec { '/bin/sh' } 'sh', '-c', $cmd;
    syswrite(STDERR, "cannot run /bin/sh: $!\n"); POSIX::_exit(127);
  }
  close $in_r; close $out_w; close $err_w;
  my %stream = (fileno($out_r) => 1, fileno($err_r) => 2);
  my $rsel = IO::Select->new($out_r, $err_r, $sigr);
  my $wsel = IO::Select->new(); my $woff = 0;
  if (length $stdin) { fcntl($in_w, F_SETFL, O_NONBLOCK); $wsel->add($in_w); } else { close $in_w; }
  my ($status, $settled);
  while (1) {
    if (!defined $status && waitpid($pid, POSIX::WNOHANG()) == $pid) {
      $status = $?; $settled = settle();
      if ($wsel->count) { $wsel->remove($in_w); close $in_w; }
    }
    last if defined $status && $rsel->count <= 1;
    my ($r, $w) = IO::Select->select($rsel, $wsel->count ? $wsel : undef, undef, defined $status ? 1 : 0.5);
    last if defined $status && !$settled && !$r;
    for my $fh (@{ $r // [] }) {
      if ($fh == $sigr) { fcntl($sigr, F_SETFL, O_NONBLOCK); sysread($sigr, my $x, 64); next; }
      my $n = sysread($fh, my $buf, ${AGENT_CHUNK_BYTES});
      next if !defined $n && again();
      if (!$n) { $rsel->remove($fh); close $fh; next; }
      emit(pack('a C N', 'O', $stream{fileno($fh)}, $n) . $buf);
    }
    for my $fh (@{ $w // [] }) {
      my $n = syswrite($fh, $stdin, ${AGENT_CHUNK_BYTES}, $woff);
      next if !defined $n && again();
      if (!defined $n || ($woff += $n) >= length $stdin) { $wsel->remove($fh); close $fh; }
    }
  }
  my ($code, $sig) = ($status & 127) ? (-1, $status & 127) : ($status >> 8, 0);
  emit(pack('a l> l>', 'X', $code, $sig));
  emit(pack('a C', 'D', ($settled && tidy()) ? 1 : 0));
}
`;

/** The command line (`sh -c` text) that runs the agent in place of a command. */
export function agentCommand(): string {
  return `exec ${AGENT_INTERPRETER} -e '${AGENT_SOURCE.replaceAll("'", `'\\''`)}'`;
}

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

/** The frame that asks the agent to run one command. */
export function encodeAgentRequest(request: AgentRequest): Buffer {
  const payload = Buffer.concat([
    ...field(request.command),
    ...field(request.cwd),
    ...field(request.stdin),
    ...Object.entries(request.env).flatMap(([name, value]) => [...field(name), ...field(value)]),
  ]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(payload.length);
  return Buffer.concat([length, payload]);
}

/** One event from the agent. */
export type AgentEvent =
  | { readonly kind: 'ready' }
  | { readonly kind: 'output'; readonly stream: OutputStream; readonly chunk: Buffer }
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: number | null }
  | { readonly kind: 'done'; readonly reusable: boolean };

/**
 * Reads the agent's events out of the bytes of its descriptor as they arrive. Anything
 * that is not a well-formed frame (an unknown kind, an output piece over
 * {@link AGENT_CHUNK_BYTES}) is a broken agent: {@link AgentEventReader.push} throws, and
 * the node ends the sandbox.
 */
export class AgentEventReader {
  private pending: Buffer = Buffer.alloc(0);

  /** Adds bytes; returns the events now complete, in order. */
  push(bytes: Buffer): AgentEvent[] {
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    const events: AgentEvent[] = [];
    for (;;) {
      const event = this.next();
      if (event === null) return events;
      events.push(event);
    }
  }

  private take(n: number): Buffer {
    const head = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(n);
    return head;
  }

  private next(): AgentEvent | null {
    const p = this.pending;
    if (p.length === 0) return null;
    switch (String.fromCharCode(p[0]!)) {
      case 'S':
        this.take(1);
        return { kind: 'ready' };
      case 'O': {
        if (p.length < 6) return null;
        const stream = p[1];
        const length = p.readUInt32BE(2);
        if ((stream !== 1 && stream !== 2) || length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed output frame');
        }
        if (p.length < 6 + length) return null;
        const frame = this.take(6 + length);
        return {
          kind: 'output',
          stream: stream === 1 ? 'stdout' : 'stderr',
          chunk: Buffer.from(frame.subarray(6)),
        };
      }
      case 'X': {
        if (p.length < 9) return null;
        const frame = this.take(9);
        const code = frame.readInt32BE(1);
        const signal = frame.readInt32BE(5);
        return code < 0
          ? { kind: 'exit', code: null, signal }
          : { kind: 'exit', code, signal: null };
      }
      case 'D': {
        if (p.length < 2) return null;
        return { kind: 'done', reusable: this.take(2)[1] === 1 };
      }
      default:
        throw new Error('the sandbox agent sent an unknown frame');
    }
  }
}
