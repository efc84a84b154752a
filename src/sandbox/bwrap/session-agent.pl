# The agent of a warm bwrap sandbox (src/sandbox/bwrap/bwrap-session.ts): bwrap starts
# it instead of a command (`perl -e <this file> <requests fd> <events fd> <chunk bytes>
# <leftover grace s>`, see session-agent.ts), and it then runs one command at a time,
# each as its child, on the node's request. Perl because `perl-base` is Essential on
# Debian: it is on every workbench image and every Debian-like host, with no package of
# ours.
#
# Per command it makes fresh pipes for stdin, stdout and stderr, forks, and in the child
# resets signals, closes every other descriptor, enters the working directory, replaces
# the environment and execs `/bin/sh -c <command>`, as the one-shot sandbox does. It
# relays the output to the node as it comes. When the command's process ends it kills
# every other process of the sandbox (`kill(-1)` spares only bwrap's init and itself;
# `settle`) and waits until none is left, so nothing a command started outlives it; only
# then are the last bytes drained and the end reported. Then it empties `/tmp`,
# `/var/tmp` and `/dev/shm` and looks for SysV IPC objects (`tidy`): a sandbox that cannot be put back
# as it was is reported not reusable, and the node ends it.
#
# Background processes each run in a session of their own (on a terminal from
# `/dev/ptmx` when asked) and outlive the bounded commands, whose end spares their
# sessions. When a background process's leader ends, the rest of its session gets
# `SIGTERM`, then `SIGKILL` after the grace (`reap_background`). The agent also carries
# connections to ports of the sandbox's loopback for the node's port route.
#
# The agent holds nothing a command may not see: the node's environment never reaches
# it, and all the processes that could reach its descriptors are killed before the node
# sends the next request. The node reads its frames as untrusted input.
#
# Wire. Requests (node to agent) are `u32 length` + payload, the payload a kind byte and
# its fields; a text field is `u32 length + bytes`, integers are big-endian:
#   R  run a command: command, working directory (inside the sandbox), stdin, then
#      environment names and values alternately (text fields)
#   B  start a background process: u32 id, u16 rows, u16 cols (0 rows: no terminal),
#      then command, working directory, environment (text fields)
#   W  u32 id + bytes: write to a background process's stdin
#   E  u32 id: end its stdin (a Ctrl-D on a terminal)
#   Z  u32 id, u16 rows, u16 cols: resize its terminal
#   K  u32 id, u8 signal: signal its process group
#   C  u32 id, u16 port: open connection id to a port of the loopback
#   U  u32 id + bytes: send on the connection
#   V  u32 id, u8 how: close it (1) or its write side once flushed (0)
# Events (agent to node), not length-prefixed:
#   S                          ready (once)
#   O  u8 stream, u32 n, bytes  command output (1 stdout, 2 stderr; n <= chunk bytes)
#   X  i32 code, i32 signal     the command ended: its exit code, or -1 and the signal
#   D  u8 reusable              its processes are gone and the sandbox is tidy, or not
#   P  u32 id, i32 pid          a background process started (pid 0: it could not)
#   Q  u32 id, u8 stream, u32 n, bytes   its output
#   Y  u32 id, i32 code, i32 signal      it ended, its session's leftovers gone
#   G  u32 id, u8 ok            a connection opened, or nothing listens
#   H  u32 id, u32 n, bytes     bytes from the connection
#   J  u32 id                   the connection closed
#
# Exit codes: 120 bad arguments or descriptors, 121 no pipe or fork, 122 the events
# descriptor failed, 123 a request it does not understand; 0 when the node closes the
# requests descriptor.
use strict; use warnings; no warnings 'exec';
use POSIX (); use IO::Select; use Fcntl; use File::Path (); use Socket;
# The descriptors, the largest piece of output in one frame, and the grace of a
# background session's leftovers, from the node (session-agent.ts).
my ($REQUESTS_FD, $EVENTS_FD, $CHUNK_BYTES, $LEFTOVER_GRACE_S) = @ARGV;
exit 120 unless @ARGV == 4 && !grep { !/^[0-9]+$/ } @ARGV;
$SIG{PIPE} = 'IGNORE';
open(my $REQ, '<&=', $REQUESTS_FD) or exit 120;
open(my $EV, '>&=', $EVENTS_FD) or exit 120;
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
  for my $dir ('/tmp', '/var/tmp', '/dev/shm') { opendir(my $d, $dir) or next;
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
      if (!defined $p->{ending}) { $p->{ending} = time + $LEFTOVER_GRACE_S; kill 'TERM', $_ for @left; next; }
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
  elsif ($kind eq 'K') { my $sig = unpack('C', $payload);
    # Before the child's setsid its group does not exist yet: the child itself is signalled.
    if (!defined $p->{status}) { kill($sig, -$p->{pid}) or kill($sig, $p->{pid}); } }
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
      my $n = sysread($fh, my $buf, $CHUNK_BYTES);
      next if !defined $n && again();
      if ($n) { emit(pack('a N N', 'H', $cid, $n) . $buf); }
      else { emit(pack('a N', 'J', $cid)); close $fh; delete $conn{$cid}; }
      next; }
    my $entry = $reader{fileno $fh}; next unless $entry;
    my ($kind, $id, $stream) = @$entry;
    my $n = sysread($fh, my $buf, $CHUNK_BYTES);
    next if !defined $n && again();
    if (!$n) { delete $reader{fileno $fh}; close $fh;
      my $p = $kind eq 'c' ? $cmd : $bgid{$id}; $p->{open} -= 1 if $p; next; }
    if ($kind eq 'c') { emit(pack('a C N', 'O', $stream, $n) . $buf); }
    else { emit(pack('a N C N', 'Q', $id, $stream, $n) . $buf); } }
  for my $fh (@{ $w // [] }) {
    if (my ($cid) = grep { $conn{$_}{sock} == $fh } keys %conn) { my $c = $conn{$cid};
      my $n = syswrite($fh, $c->{outbuf}, $CHUNK_BYTES);
      next if !defined $n && again();
      if (!defined $n) { emit(pack('a N', 'J', $cid)); close $fh; delete $conn{$cid}; next; }
      substr($c->{outbuf}, 0, $n) = ''; next; }
    for my $p (($cmd ? ($cmd) : ()), values %bgid) {
      next unless $p->{in} && $p->{in} == $fh;
      my $n = syswrite($fh, $p->{inbuf}, $CHUNK_BYTES);
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
