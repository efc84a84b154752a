/**
 * Runs processes for the node from small long-lived helper processes instead of from
 * the node itself: `rm` for tree removals, and `find` for the quota watch's counts.
 *
 * Starting a process from the node forks the node: the call blocks its event loop
 * for as long as the kernel takes to copy a large process's page tables and to
 * schedule the child's `exec`, several milliseconds on a busy machine. A run's end
 * removes a tree or two, and a command that runs a quarter of a second is counted once
 * or more; a burst of runs then stalls every call the node is serving. The helper is
 * a Perl program (`perl -e`), started once, that reads one request a line and answers
 * one line. Forking a small process is cheap, and the node only writes and reads a
 * pipe.
 *
 * - `{"op": "rm", "rm", "cwd", "names"}`: forks and execs `rm -rf --one-file-system
 *   -- names` with an empty environment in `cwd`, waits for it, and answers
 *   `{"code", "stderr"}`.
 * - `{"op": "count", "find", "dir", "bytes", "maxBytes", "maxFiles"}`: runs `find dir
 *   -xdev -type f -printf '%s\n'` (any depth, through directory descriptors) and adds
 *   up the regular files and their bytes, starting from `bytes`; it kills `find` as
 *   soon as the sum passes either limit. Answers `{"code", "files", "bytes",
 *   "cancelled"}`. While it counts, any line the node sends cancels the count
 *   ({@link CountJob.cancel}): `find` is killed and the answer comes at once. A count is
 *   only given to a helper with nothing else pending, and the node sends a counting
 *   helper nothing but that line, so the line cannot be a request; a cancel that
 *   arrives after the answer is read as a request of no kind, and answered with nothing.
 *
 * A helper serves one request at a time; up to {@link MAX_HELPERS} run, each started
 * when every running one is busy. A helper that dies fails its pending requests with
 * {@link HelperLost}, and the next request starts a new one. Where Perl is missing or
 * a helper cannot start, the caller starts the process itself ({@link HostHelpers.rm}
 * and {@link HostHelpers.count} answer `null`). Idle helpers do not keep the node's
 * process alive.
 *
 * @module
 */

import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Socket } from 'node:net';

/** Where Perl lives on the distributions the images use. */
const PERL_CANDIDATES = ['/usr/bin/perl', '/bin/perl'];

/** Helpers run at once, at most. */
export const MAX_HELPERS = 4;

/** Bytes of `rm`'s stderr a helper sends back. */
const STDERR_KEEP = 2048;

/**
 * The helper. Core Perl modules only. It reads its input with `sysread` into a buffer
 * of its own, so that it can wait on the node's pipe and on `find`'s at once.
 */
const HELPER_PROGRAM = `
use strict; use warnings; use JSON::PP (); use POSIX ();
my $json = JSON::PP->new->utf8;
$| = 1;
my $in = '';
sub answer { print $json->encode($_[0]), "\\n"; }
sub next_line { while ($in !~ /\\n/) { my $got = sysread(STDIN, $in, 65536, length $in);
    next if !defined $got && $!{EINTR}; return undef unless $got; }
  $in =~ s/^([^\\n]*)\\n//; return $1; }
sub child_of { my ($w, $cwd, @argv) = @_;
  my $pid = fork(); return $pid if !defined $pid || $pid;
  open(STDIN, '<', '/dev/null');
  if ($cwd eq '') { open(STDOUT, '>&', $w); open(STDERR, '>', '/dev/null'); }
  else { open(STDOUT, '>', '/dev/null'); open(STDERR, '>&', $w);
    chdir($cwd) or do { print STDERR "cannot enter $cwd: $!"; POSIX::_exit(1) }; }
  %ENV = ();
  exec { $argv[0] } @argv;
  print STDERR "cannot run $argv[0]: $!"; POSIX::_exit(127); }
sub ended { return ($? & 127) ? 128 + ($? & 127) : ($? >> 8); }
sub rm { my ($req) = @_;
  my ($rm, $cwd, @names) = ($req->{rm}, $req->{cwd}, @{ $req->{names} });
  utf8::encode($_) for ($rm, $cwd, @names);
  pipe(my $r, my $w) or return { code => -1, stderr => "pipe: $!" };
  my $pid = child_of($w, $cwd, $rm, '-rf', '--one-file-system', '--', @names);
  return { code => -1, stderr => "fork: $!" } unless defined $pid;
  close $w;
  my $err = do { local $/; <$r> } // '';
  close $r; waitpid($pid, 0);
  return { code => ended(), stderr => substr($err, 0, ${STDERR_KEEP}) }; }
sub count { my ($req) = @_;
  my ($find, $dir) = ($req->{find}, $req->{dir}); utf8::encode($_) for ($find, $dir);
  my ($bytes, $files, $cancelled, $rest) = ($req->{bytes} + 0, 0, JSON::PP::false, '');
  pipe(my $r, my $w) or return { code => -1, files => 0, bytes => $bytes, cancelled => $cancelled };
  my $pid = child_of($w, '', $find, $dir, '-xdev', '-type', 'f', '-printf', '%s\\n');
  return { code => -1, files => 0, bytes => $bytes, cancelled => $cancelled } unless defined $pid;
  close $w;
  while (1) {
    if ($in =~ s/^[^\\n]*\\n//) { $cancelled = JSON::PP::true; kill 'KILL', $pid; last; }
    my $rin = ''; vec($rin, fileno($r), 1) = 1; vec($rin, 0, 1) = 1;
    my $n = select(my $rout = $rin, undef, undef, undef);
    next if $n < 0 && $!{EINTR};
    if (vec($rout, 0, 1)) {
      my $got = sysread(STDIN, $in, 65536, length $in);
      if (!defined $got && $!{EINTR}) { }
      elsif (!$got) { kill 'KILL', $pid; waitpid($pid, 0); exit 0; }
      next; }
    if (vec($rout, fileno($r), 1)) {
      my $got = sysread($r, my $chunk, 65536);
      next if !defined $got && $!{EINTR};
      last unless $got;
      my @lines = split /\\n/, $rest . $chunk, -1; $rest = pop @lines;
      for (@lines) { $files += 1; $bytes += $_ + 0; }
      if ($bytes > $req->{maxBytes} || $files > $req->{maxFiles}) { kill 'KILL', $pid; last; } } }
  close $r; waitpid($pid, 0);
  return { code => ended(), files => $files, bytes => $bytes, cancelled => $cancelled }; }
while (defined(my $line = next_line())) {
  my $req = eval { $json->decode($line) };
  my $op = ref $req eq 'HASH' ? ($req->{op} // '') : '';
  if ($op eq 'rm' && ref $req->{names} eq 'ARRAY') { answer(rm($req)); }
  elsif ($op eq 'count') { answer(count($req)); }
  elsif ($op ne 'cancel') { answer({ code => -1, stderr => 'unreadable request' }); }
}
`;

/** The helper died or could not be reached before it answered. */
export class HelperLost extends Error {}

/** What one `rm` run answered. */
export interface RmAnswer {
  /** `rm`'s exit code (128 + the signal when a signal ended it); -1: it never ran. */
  readonly code: number;
  readonly stderr: string;
}

/** What one count answered. */
export interface CountAnswer {
  /** `find`'s exit code (128 + the signal: killed over a limit or cancelled); -1: it never ran. */
  readonly code: number;
  /** Regular files counted. */
  readonly files: number;
  /** Their bytes, plus the request's starting `bytes`. */
  readonly bytes: number;
  /** The node cancelled it before `find` was done. */
  readonly cancelled: boolean;
}

/** A count in flight. */
export interface CountJob {
  /** The answer; rejects with {@link HelperLost} when the helper died first. */
  readonly answer: Promise<CountAnswer>;
  /** Stops it: `find` is killed and the answer (what was counted) comes at once. */
  cancel(): void;
}

interface Pending {
  resolve: (answer: Record<string, unknown>) => void;
  reject: (err: Error) => void;
}

class Helper {
  readonly pending: Pending[] = [];
  /** A count is in flight: nothing but its cancel line may be sent. */
  counting = false;
  private buffered = '';
  dead = false;

  constructor(private readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.read(chunk));
    child.stdin.on('error', () => this.lost());
    child.on('error', () => this.lost());
    child.on('exit', () => this.lost());
    child.stderr.resume();
    this.idle();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  send(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.dead) return Promise.reject(new HelperLost('the helper is gone'));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.busy();
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
  }

  /** Sends the line that cancels the count in flight; nothing when none is. */
  cancelCount(): void {
    if (this.counting && !this.dead) this.child.stdin.write('{"op":"cancel"}\n');
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    for (let nl = this.buffered.indexOf('\n'); nl >= 0; nl = this.buffered.indexOf('\n')) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const waiter = this.pending.shift();
      if (waiter === undefined) continue;
      try {
        waiter.resolve(JSON.parse(line) as Record<string, unknown>);
      } catch {
        waiter.reject(new HelperLost('the helper answered something unreadable'));
      }
    }
    if (this.pending.length === 0) this.idle();
  }

  private lost(): void {
    if (this.dead) return;
    this.dead = true;
    for (const waiter of this.pending.splice(0)) {
      waiter.reject(new HelperLost('the helper ended before it answered'));
    }
    this.idle();
  }

  /** While a request is pending, the helper keeps the node's process alive. */
  private busy(): void {
    this.child.ref();
    for (const pipe of this.pipes()) pipe.ref();
  }

  private idle(): void {
    this.child.unref();
    for (const pipe of this.pipes()) pipe.unref();
  }

  /** The child's pipes, which are sockets: each one refs the event loop until unref'd. */
  private pipes(): Socket[] {
    const { stdin, stdout, stderr } = this.child;
    return [stdin, stdout, stderr] as unknown[] as Socket[];
  }
}

/** The running helpers, started on demand. */
export class HostHelpers {
  private readonly helpers: Helper[] = [];
  private perl: Promise<string | null> | undefined;

  /**
   * Runs `rm -rf --one-file-system -- names` in `cwd` through a helper; null when no
   * helper can run here (the caller spawns `rm` itself). Rejects with
   * {@link HelperLost} when the helper died before it answered.
   */
  async rm(rm: string, cwd: string, names: readonly string[]): Promise<RmAnswer | null> {
    const helper = await this.pick(false);
    if (helper === null) return null;
    const answer = await helper.send({ op: 'rm', rm, cwd, names });
    return { code: Number(answer.code), stderr: String(answer.stderr ?? '') };
  }

  /**
   * Counts the regular files under `dir` and their bytes with `find` (see the module's
   * comment), starting from `bytes`, until the count is done or passes a limit; null
   * when no helper is free for it (the caller runs `find` itself).
   */
  async count(
    find: string,
    dir: string,
    start: { bytes: number; maxBytes: number; maxFiles: number },
  ): Promise<CountJob | null> {
    const helper = await this.pick(true);
    if (helper === null) return null;
    // JSON has no Infinity: a limit that is not a finite number is no limit.
    const limit = (n: number) => (Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER);
    const request = {
      op: 'count',
      find,
      dir,
      bytes: start.bytes,
      maxBytes: limit(start.maxBytes),
      maxFiles: limit(start.maxFiles),
    };
    const answer = helper.send(request).then(
      (a) => {
        helper.counting = false;
        return {
          code: Number(a.code),
          files: Number(a.files) || 0,
          bytes: Number(a.bytes) || 0,
          cancelled: a.cancelled === true,
        };
      },
      (err: unknown) => {
        helper.counting = false;
        throw err;
      },
    );
    return { answer, cancel: () => helper.cancelCount() };
  }

  /** Process ids of the live helpers (for tests). */
  pids(): number[] {
    return this.helpers.filter((h) => !h.dead).flatMap((h) => (h.pid ? [h.pid] : []));
  }

  /** Kills every helper (for tests of a helper's loss). */
  killAll(): void {
    for (const h of this.helpers) h.kill();
  }

  /**
   * A helper for the next request: an idle one, else a new one while fewer than
   * {@link MAX_HELPERS} run, else (not for a count, which needs one to itself) the
   * least busy that is not counting. Null: none can take it.
   */
  private async pick(alone: boolean): Promise<Helper | null> {
    for (let i = this.helpers.length - 1; i >= 0; i--) {
      if (this.helpers[i]!.dead) this.helpers.splice(i, 1);
    }
    // A count's helper is its own from here, before the caller's next turn.
    const reserve = (helper: Helper) => {
      if (alone) helper.counting = true;
      return helper;
    };
    const free = this.helpers.find((h) => h.pending.length === 0 && !h.counting);
    if (free !== undefined) return reserve(free);
    if (this.helpers.length >= MAX_HELPERS) {
      if (alone) return null;
      const open = this.helpers.filter((h) => !h.counting);
      if (open.length === 0) return null;
      return open.reduce((a, b) => (b.pending.length < a.pending.length ? b : a));
    }
    const perl = await this.findPerl();
    if (perl === null) return null;
    // Another request may have started one meanwhile; still at most MAX_HELPERS.
    if (this.helpers.length >= MAX_HELPERS) return this.pick(alone);
    try {
      const child = spawn(perl, ['-e', HELPER_PROGRAM], { env: {}, stdio: 'pipe' });
      const helper = new Helper(child);
      this.helpers.push(helper);
      return reserve(helper);
    } catch {
      return null;
    }
  }

  private findPerl(): Promise<string | null> {
    this.perl ??= firstExecutable(PERL_CANDIDATES);
    return this.perl;
  }
}

/** The first of `candidates` that is an executable file here, or null. */
export async function firstExecutable(candidates: readonly string[]): Promise<string | null> {
  for (const candidate of candidates) {
    const found = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return candidate;
  }
  return null;
}

/** The helpers of this process: the node itself never forks for `rm` or the counts. */
export const hostHelpers = new HostHelpers();
