/**
 * The sandbox's side of egress, for every runner that isolates the network (bwrap and
 * docker): where the proxy's socket and the CA bundle appear inside the sandbox, the
 * bridge that makes the socket reachable as a TCP proxy on loopback, and the variables
 * that point pip, npm, git and curl at it.
 *
 * The sandbox has no network interface but loopback. The run's proxy (outside the
 * sandbox, see `src/sandbox/egress/`) listens on a Unix socket, bound into the sandbox
 * at {@link EGRESS_SOCKET_PATH}. Programs speak HTTP proxy (plain requests and
 * `CONNECT`) over TCP, so a bridge listens on `127.0.0.1:`{@link EGRESS_BRIDGE_PORT}
 * and forwards each connection, byte for byte, to the socket; it reads nothing of what
 * passes. The bridge is a Perl program ({@link BRIDGE_SOURCE}: `perl-base` is on every
 * image, the warm sandbox's agent needs it too) that is started per command, before
 * it, by {@link BRIDGE_LAUNCH}:
 *
 * - it binds and listens first, then forks and its parent exits: the command starts
 *   only once the port answers (a bridge that cannot listen exits 125 with a message,
 *   and the command does not run);
 * - it runs with an empty environment, its standard streams on `/dev/null` (it keeps
 *   none of the command's pipes open) and no other descriptor: every launch path
 *   closes the launcher's descriptors before it starts;
 * - it dies with the command: a one-shot sandbox's pid namespace ends with its
 *   command, a docker container with its process 1, and a warm sandbox's agent kills
 *   every process but itself when a command ends;
 * - it can only reach the socket: it dials nothing else, and a command that kills it
 *   has lost its own network, nothing more (the socket itself, which the command can
 *   dial too, is the proxy and its policy);
 * - one process multiplexes every connection (no process per connection, so the
 *   command's process limit is not spent on them), with a bounded buffer per direction
 *   and at most {@link BRIDGE_MAX_CONNECTIONS} at once (the rest wait in the listen
 *   backlog).
 *
 * @module
 */

/** Where the run's proxy socket appears inside the sandbox. */
export const EGRESS_SOCKET_PATH = '/run/memql/egress.sock';

/** Where the CA bundle (the system CAs and the node's CA) appears inside the sandbox. */
export const EGRESS_CA_BUNDLE_PATH = '/run/memql/ca-bundle.pem';

/**
 * Where the run's package caches appear inside the sandbox (pip's, npm's, and every
 * tool that follows `XDG_CACHE_HOME`): a directory of the run on the replica, kept warm
 * between its commands, outside the workspace, so it is never synced.
 */
export const EGRESS_CACHE_PATH = '/run/memql/cache';

/**
 * The bridge's port on the sandbox's own loopback (each sandbox has a network namespace
 * of its own, so every sandbox uses the same one). 3128 is the port HTTP proxies
 * conventionally use.
 */
export const EGRESS_BRIDGE_PORT = 3128;

/** Most connections the bridge forwards at once; it uses `select`, whose sets hold 1024 descriptors. */
export const BRIDGE_MAX_CONNECTIONS = 400;

/** Bytes the bridge holds for one direction of a connection before it stops reading that side. */
const BRIDGE_BUFFER_BYTES = 262_144;

/** What a runner needs to give a command the network (see `RunSpec.egress`). */
export interface SandboxEgress {
  /** Host path of the run's proxy socket; it must be connectable by the sandbox uid. */
  readonly socketPath: string;
  /** Host path of the CA bundle (PEM): the system CAs and the node's CA. */
  readonly caBundlePath: string;
  /**
   * Host path of the run's cache directory, writable by the sandbox uid, bound at
   * {@link EGRESS_CACHE_PATH}. Absent: caches go where the tools put them (`/tmp`).
   */
  readonly cacheDir?: string;
}

/** The proxy URL every proxy variable names. */
export const EGRESS_PROXY_URL = `http://127.0.0.1:${EGRESS_BRIDGE_PORT}`;

/** Hosts that never go through the proxy: the sandbox's own loopback. */
export const EGRESS_NO_PROXY = 'localhost,127.0.0.1,::1';

/**
 * The variables a command with egress gets, set over its own entries: the proxy in
 * upper and lower case (curl reads only `http_proxy` in lower case; Python and npm read
 * either), loopback excluded, and every trust variable the common tools read pointing
 * at the bundle. The bundle holds the system CAs as well, so replacing a tool's trust
 * with it loses nothing. `npm_config_cafile` too: npm's own `cafile` (an image may set
 * one globally) would otherwise replace node's CAs, the node's among them.
 */
export function egressEnvironment(options: { cache?: boolean } = {}): Record<string, string> {
  const env: Record<string, string> = {};
  if (options.cache === true) {
    env.XDG_CACHE_HOME = EGRESS_CACHE_PATH;
    env.PIP_CACHE_DIR = `${EGRESS_CACHE_PATH}/pip`;
    env.npm_config_cache = `${EGRESS_CACHE_PATH}/npm`;
  }
  for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
    env[name] = EGRESS_PROXY_URL;
    env[name.toLowerCase()] = EGRESS_PROXY_URL;
  }
  env.NO_PROXY = EGRESS_NO_PROXY;
  env.no_proxy = EGRESS_NO_PROXY;
  for (const name of EGRESS_CA_VARIABLES) env[name] = EGRESS_CA_BUNDLE_PATH;
  return env;
}

/** The trust variables {@link egressEnvironment} points at the bundle. */
export const EGRESS_CA_VARIABLES = [
  'SSL_CERT_FILE',
  'REQUESTS_CA_BUNDLE',
  'PIP_CERT',
  'NODE_EXTRA_CA_CERTS',
  'GIT_SSL_CAINFO',
  'CURL_CA_BUNDLE',
  'npm_config_cafile',
] as const;

/**
 * The bridge (see the module comment), run as `perl -e`. `select` with a bounded
 * buffer per direction; a side that ends its writing is half-closed on the other side
 * once what it sent is delivered, and a connection goes when both sides have ended or
 * either fails.
 */
export const BRIDGE_SOURCE = String.raw`
use strict; use warnings; use Socket; use Fcntl;
$0 = 'memql-egress-bridge'; $SIG{PIPE} = 'IGNORE';
my ($port, $path, $max, $cap) = (${EGRESS_BRIDGE_PORT}, '${EGRESS_SOCKET_PATH}', ${BRIDGE_MAX_CONNECTIONS}, ${BRIDGE_BUFFER_BYTES});
sub fail { syswrite(STDERR, "memql: the network bridge did not start: cannot $_[0] ($!)\n"); exit 125; }
socket(my $l, PF_INET, SOCK_STREAM, 0) or fail('make a socket');
setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1) or fail('reuse the address');
bind($l, pack_sockaddr_in($port, inet_aton('127.0.0.1'))) or fail("listen on 127.0.0.1:$port");
listen($l, 1024) or fail("listen on 127.0.0.1:$port");
my $pid = fork(); fail('fork') unless defined $pid; exit 0 if $pid;
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
sub nb { my $f = fcntl($_[0], F_GETFL, 0); fcntl($_[0], F_SETFL, $f | O_NONBLOCK); }
nb($l);
my (%h, %peer, %out, %eof, %shut);
sub drop { my ($k) = @_; my $p = $peer{$k}; for my $x ($k, defined $p ? ($p) : ()) {
  close($h{$x}) if $h{$x}; delete $h{$x}; delete $peer{$x}; delete $out{$x}; delete $eof{$x}; delete $shut{$x}; } }
while (1) {
  my ($rin, $win) = ('', '');
  vec($rin, fileno($l), 1) = 1 if keys(%h) < 2 * $max;
  for my $fd (keys %h) {
    vec($rin, $fd, 1) = 1 if !$eof{$fd} && length($out{$peer{$fd}}) < $cap;
    vec($win, $fd, 1) = 1 if length $out{$fd};
  }
  my ($r, $w) = ($rin, $win);
  if (select($r, length($win) ? $w : undef, undef, undef) < 0) { next if $!{EINTR}; exit 1; }
  if (vec($r, fileno($l), 1)) {
    while (keys(%h) < 2 * $max) {
      my $c; accept($c, $l) or last;
      my $u; socket($u, PF_UNIX, SOCK_STREAM, 0) or do { close $c; last; };
      connect($u, pack_sockaddr_un($path)) or do { close $u; close $c; next; };
      setsockopt($c, Socket::IPPROTO_TCP(), Socket::TCP_NODELAY(), 1); nb($c); nb($u);
      my ($cf, $uf) = (fileno($c), fileno($u));
      @h{$cf, $uf} = ($c, $u); @peer{$cf, $uf} = ($uf, $cf); @out{$cf, $uf} = ('', '');
    }
  }
  for my $fd (keys %h) {
    next unless $h{$fd};
    if (length($out{$fd}) && vec($w, $fd, 1)) {
      my $n = syswrite($h{$fd}, $out{$fd});
      if (defined $n) { substr($out{$fd}, 0, $n) = ''; }
      elsif (!$!{EAGAIN} && !$!{EINTR}) { drop($fd); next; }
    }
    if (!$eof{$fd} && vec($r, $fd, 1)) {
      my $n = sysread($h{$fd}, my $buf, 262144);
      if ($n) {
        my $p = $peer{$fd};
        # Written through at once when nothing waits before it: no extra select round.
        if (!length $out{$p}) { my $m = syswrite($h{$p}, $buf); substr($buf, 0, $m) = '' if defined $m && $m > 0; }
        $out{$p} .= $buf;
      }
      elsif (defined $n) { $eof{$fd} = 1; }
      elsif (!$!{EAGAIN} && !$!{EINTR}) { drop($fd); next; }
    }
  }
  for my $fd (keys %h) {
    next unless $h{$fd};
    my $p = $peer{$fd};
    if ($eof{$p} && !length($out{$fd}) && !$shut{$fd}) { shutdown($h{$fd}, 1); $shut{$fd} = 1; }
    drop($fd) if $eof{$fd} && $eof{$p} && !length($out{$fd}) && !length($out{$p});
  }
}
`;

/**
 * Shell text that starts the bridge and then the command: run as
 * `/bin/sh -c BRIDGE_LAUNCH <name> <command> <bridge source>`. The bridge's parent
 * returns once it listens; the command replaces the shell.
 */
export const BRIDGE_LAUNCH =
  '/usr/bin/env -i /usr/bin/perl -e "$2" || exit 125; exec /bin/sh -c "$1"';

/** The argv that runs `command` behind a bridge (as `/bin/sh -c` would run it alone). */
export function bridgedCommand(command: string): string[] {
  return ['/bin/sh', '-c', BRIDGE_LAUNCH, 'memql-sandbox', command, BRIDGE_SOURCE];
}
