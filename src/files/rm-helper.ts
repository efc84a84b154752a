/**
 * Runs `rm` from a small long-lived helper process instead of from the node itself.
 *
 * Starting a process from the node forks the node: the call blocks its event loop
 * for as long as the kernel takes to copy a large process's page tables and to
 * schedule the child's `exec`, several milliseconds on a busy machine, and a run's end
 * removes a tree or two. A burst of runs ending then stalls every call the node is
 * serving. The helper is a Perl program of a few lines (`perl -e`), started once: it
 * reads one request a line (`{"rm", "cwd", "names"}`), forks and execs `rm` with an
 * empty environment in `cwd`, waits for it, and answers one line
 * (`{"code", "stderr"}`). Forking a small process is cheap, and the node only writes
 * and reads a pipe.
 *
 * A helper serves one request at a time; up to {@link MAX_HELPERS} run, each started
 * when every running one is busy. A helper that dies fails its pending requests with
 * {@link HelperLost}, and the next request starts a new one. Where Perl is missing or
 * a helper cannot start, the caller spawns `rm` itself ({@link RmHelpers.run} answers
 * `null`). Idle helpers do not keep the node's process alive.
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
export const MAX_HELPERS = 3;

/** Bytes of `rm`'s stderr a helper sends back. */
const STDERR_KEEP = 2048;

/** The helper: one request a line in, one answer a line out. Core Perl modules only. */
const HELPER_PROGRAM = `
use strict; use warnings; use JSON::PP (); use POSIX ();
my $json = JSON::PP->new->utf8;
$| = 1;
while (defined(my $line = <STDIN>)) {
  my $req = eval { $json->decode($line) };
  if (ref $req ne 'HASH' || ref $req->{names} ne 'ARRAY') {
    print $json->encode({ code => -1, stderr => 'unreadable request' }), "\\n"; next;
  }
  my ($rm, $cwd, @names) = ($req->{rm}, $req->{cwd}, @{ $req->{names} });
  utf8::encode($_) for ($rm, $cwd, @names);
  my ($r, $w);
  unless (pipe($r, $w)) { print $json->encode({ code => -1, stderr => "pipe: $!" }), "\\n"; next; }
  my $pid = fork();
  unless (defined $pid) { print $json->encode({ code => -1, stderr => "fork: $!" }), "\\n"; next; }
  if ($pid == 0) {
    close $r;
    open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>&', $w);
    chdir($cwd) or do { print STDERR "cannot enter $cwd: $!"; POSIX::_exit(1) };
    %ENV = ();
    exec { $rm } $rm, '-rf', '--one-file-system', '--', @names;
    print STDERR "cannot run $rm: $!"; POSIX::_exit(127);
  }
  close $w;
  my $err = do { local $/; <$r> } // '';
  close $r;
  waitpid($pid, 0);
  my $code = ($? & 127) ? 128 + ($? & 127) : ($? >> 8);
  print $json->encode({ code => $code, stderr => substr($err, 0, ${STDERR_KEEP}) }), "\\n";
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

interface Pending {
  resolve: (answer: RmAnswer) => void;
  reject: (err: Error) => void;
}

class Helper {
  readonly pending: Pending[] = [];
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

  send(request: { rm: string; cwd: string; names: readonly string[] }): Promise<RmAnswer> {
    if (this.dead) return Promise.reject(new HelperLost('the rm helper is gone'));
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.busy();
      this.child.stdin.write(`${JSON.stringify(request)}\n`);
    });
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
        const answer = JSON.parse(line) as RmAnswer;
        waiter.resolve({ code: Number(answer.code), stderr: String(answer.stderr ?? '') });
      } catch {
        waiter.reject(new HelperLost(`the rm helper answered something unreadable`));
      }
    }
    if (this.pending.length === 0) this.idle();
  }

  private lost(): void {
    if (this.dead) return;
    this.dead = true;
    for (const waiter of this.pending.splice(0)) {
      waiter.reject(new HelperLost('the rm helper ended before it answered'));
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
export class RmHelpers {
  private readonly helpers: Helper[] = [];
  private perl: Promise<string | null> | undefined;

  /**
   * Runs `rm -rf --one-file-system -- names` in `cwd` through a helper; null when no
   * helper can run here (the caller spawns `rm` itself). Rejects with
   * {@link HelperLost} when the helper died before it answered.
   */
  async run(rm: string, cwd: string, names: readonly string[]): Promise<RmAnswer | null> {
    const helper = await this.pick();
    if (helper === null) return null;
    return helper.send({ rm, cwd, names });
  }

  /** Process ids of the live helpers (for tests). */
  pids(): number[] {
    return this.helpers.filter((h) => !h.dead).flatMap((h) => (h.pid ? [h.pid] : []));
  }

  /** Kills every helper (for tests of a helper's loss). */
  killAll(): void {
    for (const h of this.helpers) h.kill();
  }

  private async pick(): Promise<Helper | null> {
    for (let i = this.helpers.length - 1; i >= 0; i--) {
      if (this.helpers[i]!.dead) this.helpers.splice(i, 1);
    }
    const free = this.helpers.find((h) => h.pending.length === 0);
    if (free !== undefined) return free;
    if (this.helpers.length >= MAX_HELPERS) {
      return this.helpers.reduce((a, b) => (b.pending.length < a.pending.length ? b : a));
    }
    const perl = await this.findPerl();
    if (perl === null) return null;
    try {
      const child = spawn(perl, ['-e', HELPER_PROGRAM], { env: {}, stdio: 'pipe' });
      const helper = new Helper(child);
      this.helpers.push(helper);
      return helper;
    } catch {
      return null;
    }
  }

  private findPerl(): Promise<string | null> {
    this.perl ??= (async () => {
      for (const candidate of PERL_CANDIDATES) {
        const found = await access(candidate, constants.X_OK).then(
          () => true,
          () => false,
        );
        if (found) return candidate;
      }
      return null;
    })();
    return this.perl;
  }
}
