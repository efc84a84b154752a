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

/**
 * Seconds the rest of a background process's session gets after its leader ended (the
 * shell `sh -c` ran, say, which a `SIGTERM` ends first): `SIGTERM` at once, `SIGKILL`
 * after this.
 */
export const LEFTOVER_GRACE_S = 2;

/** The agent's program, run as `perl -e`. */
export const AGENT_SOURCE = String.raw`
use strict; use warnings; no warnings 'exec';
use POSIX (); use IO::Select; use Fcntl; use File::Path (); use Socket;
$SIG{PIPE} = 'IGNORE';
open(my $REQ, '<&=', ${AGENT_FDS.requests}) or exit 120;
open(my $EV, '>&=', ${AGENT_FDS.events}) or exit 120;
pipe(my $sigr, my $sigw) or exit 121;
fcntl($sigw, F_SETFL, O_NONBLOCK); fcntl($sigr, F_SETFL, O_NONBLOCK);
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
my (%bgid, %bgsid, %reader, %conn, $cmd);
sub session_of { my ($pid) = @_; open(my $h, '<', "/proc/$pid/stat") or return (undef, undef);
  my $line = <$h>; close $h;
  return (undef, undef) unless defined $line && $line =~ /.*\)\s+(\S)\s+\S+\s+\S+\s+(\d+)/s;
  return ($1, $2); }
sub all_others { opendir(my $d, '/proc') or return (1);
  my @p = grep { /^\d+$/ && $_ != 1 && $_ != $$ } readdir($d); closedir $d; return @p; }
sub others { my @p = all_others(); return @p unless %bgsid;
  return grep { my (undef, $sid) = session_of($_); !defined $sid || !exists $bgsid{$sid} } @p; }
sub reap_command { return unless $cmd && !defined $cmd->{status};
  $cmd->{status} = $? if waitpid($cmd->{pid}, POSIX::WNOHANG()) == $cmd->{pid}; }
sub settle { my $deadline = time + 5;
  while (1) {
    if (%bgsid) { kill 'KILL', $_ for others(); }
    else { kill 'KILL', -1; 1 while waitpid(-1, POSIX::WNOHANG()) > 0; }
    return 1 unless others(); return 0 if time > $deadline; select(undef, undef, undef, 0.002); } }
sub tidy { return 1 if %bgid; my $clean = 1;
  for my $dir ('/tmp', '/dev/shm') { opendir(my $d, $dir) or next;
    my @entries = grep { $_ ne '.' && $_ ne '..' } readdir $d; closedir $d;
    for my $e (@entries) { my $p = "$dir/$e";
      if (-d $p && !-l $p) { File::Path::remove_tree($p, { safe => 0, error => \my $err }); $clean = 0 if @$err; }
      else { unlink($p) or $clean = 0; } } }
  for my $f ('/proc/sysvipc/shm', '/proc/sysvipc/sem', '/proc/sysvipc/msg') {
    open(my $h, '<', $f) or next; my @lines = <$h>; close $h; $clean = 0 if @lines > 1; }
  return $clean; }
sub winsize { my ($fh, $rows, $cols) = @_; ioctl($fh, 0x5414, pack('S4', $rows, $cols, 0, 0)); }
sub open_pty { my ($rows, $cols) = @_;
  sysopen(my $m, '/dev/ptmx', O_RDWR | O_NOCTTY) or return;
  my $unlock = pack('i', 0); ioctl($m, 0x40045431, $unlock) or return;
  my $n = pack('i', 0); ioctl($m, 0x80045430, $n) or return;
  winsize($m, $rows, $cols);
  return ($m, '/dev/pts/' . unpack('i', $n)); }
sub spawn { my ($command, $cwd, $own_session, $pty, @env) = @_;
  my ($in_r, $in_w, $out_r, $out_w, $err_r, $err_w, $master, $slave);
  if ($pty) { ($master, $slave) = open_pty(@$pty); return unless $master; }
  else { pipe($in_r, $in_w) or exit 121; pipe($out_r, $out_w) or exit 121; pipe($err_r, $err_w) or exit 121; }
  my $pid = fork(); exit 121 unless defined $pid;
  if ($pid == 0) {
    $SIG{PIPE} = 'DEFAULT'; $SIG{CHLD} = 'DEFAULT';
    POSIX::setsid() if $own_session;
    POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
    if ($pty) {
      # The terminal's other end, as its controlling terminal and its three streams.
      sysopen(my $t, $slave, O_RDWR) or POSIX::_exit(126); ioctl($t, 0x540E, 0);
      POSIX::dup2(fileno($t), $_) for 0, 1, 2; }
    else { POSIX::dup2(fileno($in_r), 0); POSIX::dup2(fileno($out_w), 1); POSIX::dup2(fileno($err_w), 2); }
    opendir(my $fds, '/proc/self/fd'); my @open = grep { /^\d+$/ && $_ > 2 } readdir $fds; closedir $fds;
    POSIX::close($_) for @open;
    chdir($cwd) or do { syswrite(STDERR, "cannot enter the working directory: $!\n"); POSIX::_exit(125) };
    %ENV = @env;
    exec { '/bin/sh' } 'sh', '-c', $command;
    syswrite(STDERR, "cannot run /bin/sh: $!\n"); POSIX::_exit(127);
  }
  if ($pty) { open(my $w, '>&', $master) or exit 121; fcntl($w, F_SETFL, O_NONBLOCK);
    return { pid => $pid, in => $w, out => $master, err => undef, inbuf => '', open => 1, pty => 1 }; }
  close $in_r; close $out_w; close $err_w;
  fcntl($in_w, F_SETFL, O_NONBLOCK);
  my $p = { pid => $pid, in => $in_w, out => $out_r, err => $err_r, inbuf => '', open => 2 };
  return $p; }
sub ending { my ($status) = @_; return ($status & 127) ? (-1, $status & 127) : ($status >> 8, 0); }
sub reap_background { for my $p (values %bgid) {
    next if defined $p->{status}; my ($state) = session_of($p->{pid});
    next if defined $state && $state ne 'Z';
    # Its session goes with it: SIGTERM, then SIGKILL after a grace. The zombie holds its
    # pid (the session id) until reaped, so no new session takes the id meanwhile.
    my $sid = $p->{pid};
    my @left = grep { my ($st, $s) = session_of($_); $_ != $sid && defined $s && $s == $sid && $st ne 'Z' } all_others();
    if (@left) {
      if (!defined $p->{ending}) { $p->{ending} = time + ${LEFTOVER_GRACE_S}; kill 'TERM', $_ for @left; next; }
      next if time < $p->{ending};
      kill 'KILL', $_ for @left; }
    $p->{status} = $? if waitpid($p->{pid}, POSIX::WNOHANG()) == $p->{pid}; } }
sub watch { my ($p, $kind, $id) = @_;
  $reader{fileno $p->{out}} = [$kind, $id, 1, $p->{out}];
  $reader{fileno $p->{err}} = [$kind, $id, 2, $p->{err}] if $p->{err}; }
sub finish_background { my ($id) = @_; my $p = $bgid{$id};
  return unless defined $p->{status} && $p->{open} == 0;
  emit(pack('a N l> l>', 'Y', $id, ending($p->{status})));
  close $p->{in} if $p->{in}; delete $bgsid{$p->{pid}}; delete $bgid{$id}; }
sub request { my $hdr = readn($REQ, 4); exit 0 unless defined $hdr;
  my $payload = readn($REQ, unpack('N', $hdr)); exit 0 unless defined $payload;
  my $kind = substr($payload, 0, 1, '');
  if ($kind eq 'R') { exit 123 if $cmd;
    my ($command, $cwd, $stdin, @env) = unpack('(N/a*)*', $payload);
    $cmd = spawn($command, $cwd, 0, undef, @env); $cmd->{inbuf} = $stdin; $cmd->{eof} = 1; watch($cmd, 'c', 0);
    return; }
  if ($kind eq 'B') { my ($id, $rows, $cols) = unpack('N n n', substr($payload, 0, 8, ''));
    my ($command, $cwd, @env) = unpack('(N/a*)*', $payload);
    my $p = spawn($command, $cwd, 1, $rows ? [$rows, $cols] : undef, @env);
    # No terminal could be made: started and ended at once, as a shell that cannot run.
    if (!$p) { emit(pack('a N l>', 'P', $id, 0)); emit(pack('a N l> l>', 'Y', $id, 126, 0)); return; }
    $bgid{$id} = $p; $bgsid{$p->{pid}} = $id; watch($p, 'b', $id);
    emit(pack('a N l>', 'P', $id, $p->{pid})); return; }
  if ($kind eq 'C') { my ($id, $port) = unpack('N n', $payload); my $s;
    # A connection to a port of the sandbox's loopback, for the node's port route.
    if (socket($s, PF_INET, SOCK_STREAM, 0) && connect($s, pack_sockaddr_in($port, inet_aton('127.0.0.1')))) {
      fcntl($s, F_SETFL, O_NONBLOCK); $conn{$id} = { sock => $s, outbuf => '' }; emit(pack('a N C', 'G', $id, 1)); }
    else { emit(pack('a N C', 'G', $id, 0)); }
    return; }
  if ($kind eq 'U') { my $id = unpack('N', substr($payload, 0, 4, '')); my $c = $conn{$id}; $c->{outbuf} .= $payload if $c; return; }
  if ($kind eq 'V') { my ($id, $how) = unpack('N C', $payload); my $c = $conn{$id}; return unless $c;
    if ($how) { close $c->{sock}; delete $conn{$id}; } else { $c->{closing} = 1; } return; }
  my $id = unpack('N', substr($payload, 0, 4, '')); my $p = $bgid{$id}; return unless $p;
  if ($kind eq 'W') { $p->{inbuf} .= $payload if $p->{in}; }
  elsif ($kind eq 'E') { if ($p->{pty}) { $p->{inbuf} .= "\x04"; } else { $p->{eof} = 1; } }
  elsif ($kind eq 'Z') { my ($rows, $cols) = unpack('n n', $payload); winsize($p->{out}, $rows, $cols) if $p->{pty}; }
  elsif ($kind eq 'K') { my $sig = unpack('C', $payload); kill $sig, -$p->{pid} if !defined $p->{status}; }
  else { exit 123; } }
emit('S');
my $settled;
while (1) {
  for my $id (keys %conn) { my $c = $conn{$id};
    # The node's end of the stream is done: the socket's write side closes once flushed.
    if ($c->{closing} && !$c->{shut} && !length $c->{outbuf}) { shutdown($c->{sock}, 1); $c->{shut} = 1; } }
  my $rsel = IO::Select->new($REQ, $sigr, (map { $_->[3] } values %reader), (map { $_->{sock} } values %conn));
  my $wsel = IO::Select->new();
  $wsel->add($_->{sock}) for grep { length $_->{outbuf} } values %conn;
  for my $p (($cmd ? ($cmd) : ()), values %bgid) {
    next unless $p->{in};
    if (length $p->{inbuf}) { $wsel->add($p->{in}); }
    elsif ($p->{eof}) { close $p->{in}; $p->{in} = undef; } }
  my $waiting = $cmd && defined $cmd->{status};
  my ($r, $w) = IO::Select->select($rsel, $wsel->count ? $wsel : undef, undef, $waiting ? 1 : 0.5);
  my $quiet = !$r && !$w;
  for my $fh (@{ $r // [] }) {
    if ($fh == $sigr) { sysread($sigr, my $x, 64); next; }
    if ($fh == $REQ) { request(); next; }
    if (my ($cid) = grep { $conn{$_}{sock} == $fh } keys %conn) {
      my $n = sysread($fh, my $buf, ${AGENT_CHUNK_BYTES});
      next if !defined $n && again();
      if ($n) { emit(pack('a N N', 'H', $cid, $n) . $buf); }
      else { emit(pack('a N', 'J', $cid)); close $fh; delete $conn{$cid}; }
      next; }
    my $entry = $reader{fileno $fh}; next unless $entry;
    my ($kind, $id, $stream) = @$entry;
    my $n = sysread($fh, my $buf, ${AGENT_CHUNK_BYTES});
    next if !defined $n && again();
    if (!$n) { delete $reader{fileno $fh}; close $fh;
      my $p = $kind eq 'c' ? $cmd : $bgid{$id}; $p->{open} -= 1 if $p; next; }
    if ($kind eq 'c') { emit(pack('a C N', 'O', $stream, $n) . $buf); }
    else { emit(pack('a N C N', 'Q', $id, $stream, $n) . $buf); } }
  for my $fh (@{ $w // [] }) {
    if (my ($cid) = grep { $conn{$_}{sock} == $fh } keys %conn) { my $c = $conn{$cid};
      my $n = syswrite($fh, $c->{outbuf}, ${AGENT_CHUNK_BYTES});
      next if !defined $n && again();
      if (!defined $n) { emit(pack('a N', 'J', $cid)); close $fh; delete $conn{$cid}; next; }
      substr($c->{outbuf}, 0, $n) = ''; next; }
    for my $p (($cmd ? ($cmd) : ()), values %bgid) {
      next unless $p->{in} && $p->{in} == $fh;
      my $n = syswrite($fh, $p->{inbuf}, ${AGENT_CHUNK_BYTES});
      next if !defined $n && again();
      if (!defined $n) { close $fh; $p->{in} = undef; $p->{inbuf} = ''; next; }
      substr($p->{inbuf}, 0, $n) = ''; } }
  reap_background();
  finish_background($_) for keys %bgid;
  if ($cmd) {
    if (!defined $cmd->{status}) { reap_command(); $settled = settle() if defined $cmd->{status}; }
    if (defined $cmd->{status} && ($cmd->{open} == 0 || (!$settled && $quiet))) {
      for my $fh ($cmd->{out}, $cmd->{err}) { next unless defined fileno $fh; delete $reader{fileno $fh}; close $fh; }
      close $cmd->{in} if $cmd->{in};
      emit(pack('a l> l>', 'X', ending($cmd->{status})));
      emit(pack('a C', 'D', ($settled && tidy()) ? 1 : 0));
      $cmd = undef; $settled = undef; } }
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

/** One event from the agent. */
export type AgentEvent =
  | { readonly kind: 'ready' }
  | { readonly kind: 'output'; readonly stream: OutputStream; readonly chunk: Buffer }
  | { readonly kind: 'exit'; readonly code: number | null; readonly signal: number | null }
  | { readonly kind: 'done'; readonly reusable: boolean }
  | { readonly kind: 'process_started'; readonly id: number; readonly pid: number }
  | {
      readonly kind: 'process_output';
      readonly id: number;
      readonly stream: OutputStream;
      readonly chunk: Buffer;
    }
  | { readonly kind: 'port_connected'; readonly id: number; readonly ok: boolean }
  | { readonly kind: 'port_data'; readonly id: number; readonly chunk: Buffer }
  | { readonly kind: 'port_closed'; readonly id: number }
  | {
      readonly kind: 'process_exit';
      readonly id: number;
      readonly code: number | null;
      readonly signal: number | null;
    };

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
      case 'G': {
        if (p.length < 6) return null;
        const f = this.take(6);
        return { kind: 'port_connected', id: f.readUInt32BE(1), ok: f[5] === 1 };
      }
      case 'H': {
        if (p.length < 9) return null;
        const length = p.readUInt32BE(5);
        if (length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed port data frame');
        }
        if (p.length < 9 + length) return null;
        const f = this.take(9 + length);
        return { kind: 'port_data', id: f.readUInt32BE(1), chunk: Buffer.from(f.subarray(9)) };
      }
      case 'J': {
        if (p.length < 5) return null;
        return { kind: 'port_closed', id: this.take(5).readUInt32BE(1) };
      }
      case 'P': {
        if (p.length < 9) return null;
        const f = this.take(9);
        return { kind: 'process_started', id: f.readUInt32BE(1), pid: f.readInt32BE(5) };
      }
      case 'Q': {
        if (p.length < 10) return null;
        const stream = p[5];
        const length = p.readUInt32BE(6);
        if ((stream !== 1 && stream !== 2) || length === 0 || length > AGENT_CHUNK_BYTES) {
          throw new Error('the sandbox agent sent a malformed process output frame');
        }
        if (p.length < 10 + length) return null;
        const f = this.take(10 + length);
        return {
          kind: 'process_output',
          id: f.readUInt32BE(1),
          stream: stream === 1 ? 'stdout' : 'stderr',
          chunk: Buffer.from(f.subarray(10)),
        };
      }
      case 'Y': {
        if (p.length < 13) return null;
        const f = this.take(13);
        const id = f.readUInt32BE(1);
        const code = f.readInt32BE(5);
        const signal = f.readInt32BE(9);
        return code < 0
          ? { kind: 'process_exit', id, code: null, signal }
          : { kind: 'process_exit', id, code, signal: null };
      }
      default:
        throw new Error('the sandbox agent sent an unknown frame');
    }
  }
}
