# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for siw2's guest test suites. A suite is a bash script under
# suites/ that sources this file, runs checks and ends with `t_done`.
# Checks assert behaviour: each names what must hold and fails loudly.

T_PASS=0
T_FAIL=0
T_SKIP=0
T_SUITE=${T_SUITE:-$(basename "${0%.sh}")}

# How deep the suites go: "full" (the default, make check-full and make
# check-debug) or "quick" (make check, which must fit CI's time). A quick
# run keeps every kind of check and runs fewer repetitions of each.
T_DEPTH=${T_DEPTH:-full}
case $T_DEPTH in
quick | full) ;;
*) echo "lib.sh: T_DEPTH is quick or full, not '$T_DEPTH'" >&2; exit 2 ;;
esac
# t_depth QUICK FULL: the count for this run's depth.
t_depth() { if [ "$T_DEPTH" = quick ]; then echo "$1"; else echo "$2"; fi; }

# siw2_set NAME VALUE (conf.c's settings, of every device and new ones)
# shellcheck source=tools/testing/guest/conf.sh
. "${BASH_SOURCE[0]%/*}/conf.sh"

t_log() { printf '%s: %s\n' "$T_SUITE" "$*"; }

# The time since the previous check, shown after a check that took 5 s or
# more, so that a suite's log tells where its time went.
T_LAST=$SECONDS
t_took() { # sets T_TOOK
	local d=$((SECONDS - T_LAST))
	T_LAST=$SECONDS T_TOOK=
	[ "$d" -lt 5 ] || T_TOOK=" [$d s]"
}

t_pass() {
	T_PASS=$((T_PASS + 1))
	t_took
	printf 'ok   - %s: %s%s\n' "$T_SUITE" "$1" "$T_TOOK"
}

t_fail() {
	T_FAIL=$((T_FAIL + 1))
	t_took
	printf 'FAIL - %s: %s%s\n' "$T_SUITE" "$1" "$T_TOOK"
	shift
	[ $# -gt 0 ] && printf '       %s\n' "$@"
	return 0
}

t_skip() {
	T_SKIP=$((T_SKIP + 1))
	t_took
	printf 'skip - %s: %s (%s)%s\n' "$T_SUITE" "$1" "$2" "$T_TOOK"
}

# t_ok NAME CMD...: passes when CMD exits 0; shows its output otherwise.
t_ok() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_pass "$name"
	else
		t_fail "$name" "command: $*" "exit $?, output: ${out:0:2000}"
	fi
}

# t_refused NAME CMD...: passes when CMD fails (a refusal is the behaviour).
t_refused() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		t_fail "$name" "command unexpectedly succeeded: $*" "${out:0:2000}"
	else
		t_pass "$name"
		printf '       (refused: %s)\n' "$(echo "$out" | head -n 2 | tr '\n' ' ')"
	fi
}

# t_eq NAME EXPECTED ACTUAL
t_eq() {
	if [ "$2" = "$3" ]; then
		t_pass "$1"
	else
		t_fail "$1" "expected: $2" "actual:   $3"
	fi
}

# t_match NAME REGEX TEXT
t_match() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		t_pass "$1"
	else
		t_fail "$1" "no line matches /$2/ in:" "${3:0:2000}"
	fi
}

# t_nomatch NAME REGEX TEXT: no line of TEXT matches.
t_nomatch() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then
		t_fail "$1" "a line matches /$2/:" \
			"$(printf '%s\n' "$3" | grep -E -- "$2" | head -n 3)"
	else
		t_pass "$1"
	fi
}

# t_lines [NAME]: the lines of a test program on stdin ("PASS check",
# "FAIL check: why", "SKIP check: why") as this suite's checks, each
# named "NAME: check" when NAME is given; other lines are logged.
t_lines() {
	local p=${1:+$1: } line rest
	while IFS= read -r line; do
		case $line in
		"PASS "*) t_pass "$p${line#PASS }" ;;
		"FAIL "*) t_fail "$p${line#FAIL }" ;;
		"SKIP "*) rest=${line#SKIP }; t_skip "$p${rest%%: *}" "${rest#*: }" ;;
		*) t_log "$p$line" ;;
		esac
	done
}

# Wait up to $2 seconds (default 10) for CMD to succeed. The bound is a
# deadline, not a count of tries: a CMD that itself takes time (a ping
# that waits for its reply) does not stretch it.
t_wait() {
	local end=$((SECONDS + ${2:-10})) cmd=$1
	while :; do
		eval "$cmd" >/dev/null 2>&1 && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# t_reach NS ADDR: waits up to 10 s until network namespace NS reaches
# ADDR (IPv6 duplicate address detection, a link just brought up), so
# that a test does not race its own setup. A check fails when ping is
# missing (make deps installs it): without it every wait ran to its end.
t_reach() {
	if ! command -v ping >/dev/null; then
		t_fail "ping is installed (make deps)"
		return 1
	fi
	t_wait "ip netns exec $1 ping -c 1 -W 1 $2" 10 ||
		t_log "$1 does not reach $2 within 10 s"
}

t_done() {
	printf '%s: %d passed, %d failed, %d skipped\n' \
		"$T_SUITE" "$T_PASS" "$T_FAIL" "$T_SKIP"
	[ "$T_FAIL" -eq 0 ]
}

# t_reboot: ends this boot's part of the suite with its summary line, as
# t_done does, and has tools/testing/guest/run reboot the guest at once,
# as a power cut would (scripts/vm/reboot; the EXIT trap still runs, so a
# suite clears it first to leave its state as a crash would). vm-run
# boots the guest again and the suite runs anew with SIW2_BOOT one
# higher: it goes on from where SIW2_BOOT says. A suite that reboots runs
# alone: at the next boot run starts its list over.
T_REBOOT=222
t_reboot() {
	t_done
	exit "$T_REBOOT"
}

# t_prog NAME: the path of test program NAME (tools/testing/guest/NAME.c,
# or NAME.so), built on the host by `make guest-tools`, which vm-run runs
# before it boots. Fails with a message when it is missing or older than
# its source: a suite must not test a stale build.
T_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
t_prog() {
	local bin=$T_TOP/.build/guest/$1 src=$T_TOP/tools/testing/guest/progs/${1%.so}.c
	if [ -x "$bin" ] && [ ! "$bin" -ot "$src" ]; then
		echo "$bin"
		return 0
	fi
	echo "t_prog: $bin is missing or older than $src; run make guest-tools" >&2
	return 1
}

# Every program a suite runs gets rping_shim.so: rping of rdma-core
# before 61.0 can end a clean run with status 255 (its event thread meets
# the event channel main() has just destroyed); the shim removes that race
# from rping and leaves every other program alone (rping_shim.c).
if T_RPING_SHIM=$(t_prog rping_shim.so); then
	export LD_PRELOAD=$T_RPING_SHIM${LD_PRELOAD:+:$LD_PRELOAD}
fi

# Unreclaimable slab in KiB: what a leaked kernel object shows up in.
slab_kib() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }

# True on a KASAN kernel (make check-debug). Its quarantine holds freed
# objects back from the slab for a while, so SUnreclaim grows with every
# free and says nothing about leaks there; kmemleak checks those instead.
kasan_kernel() { grep -q ' kasan_quarantine_put$' /proc/kallsyms; }

# A dummy netdev with a documentation address (RFC 5737); never leaves.
mk_dummy() {
	local name=$1 addr=$2
	ip link add "$name" type dummy &&
	ip addr add "$addr" dev "$name" &&
	ip link set "$name" up
}

# ns_pair NS1 DEV1 ADDR1 NS2 DEV2 ADDR2: two network namespaces joined by
# a veth pair, DEV1 in NS1 with ADDR1/24 and DEV2 in NS2 with ADDR2/24,
# everything up (lo too). The suite adds its devices and any IPv6.
ns_pair() {
	ip netns add "$1" &&
	ip netns add "$4" &&
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" &&
	ip -n "$1" link set lo up &&
	ip -n "$4" link set lo up &&
	ip -n "$1" addr add "$3/24" dev "$2" &&
	ip -n "$4" addr add "$6/24" dev "$5" &&
	ip -n "$1" link set "$2" up &&
	ip -n "$4" link set "$5" up
}

# tcp_closes PCAP [late]: "CONNECTIONS FINS RESETS LATE" of a capture, in
# one pass of tshark (seconds to start under TCG): the TCP connections
# that were established (a SYN-ACK seen), the halves of those that sent
# a FIN, the halves that sent a reset before a FIN of their own or
# without one, and the halves that sent a reset only after their FIN:
# the answer to a segment that arrived once the connection was closed,
# which a wire that reorders or duplicates makes TCP send (a spurious
# retransmission reaching a socket that is gone). Retransmitted or
# duplicated segments count once; a reset refusing a SYN (no listener
# yet) is no connection's. With "late", instead one line per half of
# the last kind: "SRC:PORT DSTPORT".
tcp_closes() {
	tshark -r "$1" -T fields -e tcp.stream -e ip.src -e tcp.srcport \
		-e tcp.flags.syn -e tcp.flags.ack -e tcp.flags.fin \
		-e tcp.flags.reset -e tcp.dstport 2>/dev/null | tr -d '\r' |
		awk -v list="${2:-}" 'function on(x) { return x == "1" || x == "True" }
		     { h = $1 " " $2 ":" $3
		       if (on($4) && on($5)) est[$1] = 1
		       if (on($6)) fin[h] = $1
		       if (on($7) && (h in fin)) { late[h] = $1; dport[h] = $8 }
		       else if (on($7)) rst[h] = $1 }
		     END { for (k in late) if (k in rst) delete late[k]
		           if (list == "late") {
		               for (k in late) if (late[k] in est) {
		                   split(k, p, " "); print p[2], dport[k] }
		               exit }
		           for (k in est) c++
		           for (k in fin) if (fin[k] in est) n++
		           for (k in rst) if (rst[k] in est) r++
		           for (k in late) if (late[k] in est) l++
		           print c + 0, n + 0, r + 0, l + 0 }'
}

# What /sys/kernel/debug/siw2/objects shows when nothing is alive.
siw2_objects_zero() { sed 's/ .*/ 0/' /sys/kernel/debug/siw2/objects; }

# obj NAME, cnt NAME: one of siw2's debugfs object or event counters.
obj() { awk -v n="$1" '$1 == n { print $2 }' /sys/kernel/debug/siw2/objects; }
cnt() { awk -v n="$1" '$1 == n { print $2 }' /sys/kernel/debug/siw2/counters; }

# Succeeds when no object an application creates is alive.
all_gone() {
	local o
	for o in qp cq mr mw pd cep listener ucontext srq; do
		[ "$(obj $o)" = 0 ] || return 1
	done
}

# listening NS PORT: a TCP socket listens on PORT in network namespace NS
# ("-" being this one).
listening() {
	if [ "$1" = - ]; then
		ss -Hltn "sport = :$2"
	else
		ip netns exec "$1" ss -Hltn "sport = :$2"
	fi | grep -q .
}
# t_listening NS PORT [SECONDS]: waits until it does (default 20 s).
t_listening() { t_wait "listening $1 $2" "${3:-20}"; }

# wait_for FILE REGEX [SECONDS]: FILE gets a line matching REGEX.
wait_for() { t_wait "grep -Eq -- '$2' '$1'" "${3:-20}"; }

# reap [SECONDS]: waits for every background job, killing those still
# there after SECONDS (default 30). Suites start background jobs as
# `ip netns exec ... timeout ...`, not through a shell function, so that
# the signal reaches timeout(1), which passes it on. Processes whose
# command line matches $REAP_KILL9, if set, get SIGKILL a second later.
# A job that outlives SIGTERM and then SIGKILL by ten seconds each is held
# by the kernel (a driver waiting for a reference that never comes back):
# that is a failure, shown with the job's processes and their kernel
# stacks, and the suite goes on without it instead of hanging in wait.
reap() {
	local end=$((SECONDS + ${1:-30})) p
	while [ -n "$(jobs -pr)" ] && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.2
	done
	# shellcheck disable=SC2046
	kill $(jobs -pr) 2>/dev/null
	if [ -n "${REAP_KILL9:-}" ]; then
		sleep 1
		pkill -9 -f "$REAP_KILL9" 2>/dev/null
	fi
	if ! t_wait no_jobs 10; then
		# shellcheck disable=SC2046
		kill -9 $(jobs -pr) 2>/dev/null
	fi
	if ! t_wait no_jobs 10; then
		for p in $(jobs -pr); do
			t_fail "a killed job ends" "$(stuck_report "$p")"
		done
		disown -a
	fi
	wait 2>/dev/null
}

no_jobs() { [ -z "$(jobs -pr)" ]; }

# t_ended NAME PROGRAM [SECONDS]: passes when no process named PROGRAM is
# left after SECONDS (default 10); otherwise fails with their kernel
# stacks, as such a process is blocked in the kernel where no kill reaches.
t_ended() {
	local p
	if t_wait "! pgrep -x '$2'" "${3:-10}"; then
		t_pass "$1"
		return
	fi
	for p in $(pgrep -x "$2"); do
		t_fail "$1" "$(stuck_report "$p")"
	done
}

# t_rpings_end NAME PORT LOG...: passes when no rping on PORT is left
# after 40 s (the time a peer takes to notice a connection that is gone);
# otherwise fails with the last lines of each LOG.
t_rpings_end() {
	local name=$1 port=$2 f
	shift 2
	if t_wait "! pgrep -f 'rping .*-p $port'" 40; then
		t_pass "$name"
		return
	fi
	t_fail "$name" "$(for f in "$@"; do tail -n 3 "$f"; done)"
}

# stuck_report PID: a process, its children and their kernel stacks.
stuck_report() {
	local p
	for p in "$1" $(pgrep -P "$1"); do
		printf 'pid %s state %s: %s\n' "$p" \
			"$(awk '/^State:/ { print $2 }' "/proc/$p/status" 2>/dev/null)" \
			"$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		sed 's/^/    /' "/proc/$p/stack" 2>/dev/null
	done
}

# perftest_env: sets PERFTEST_ENV to the environment (NAME=VALUE words,
# for env(1)) that makes a perftest client (-R) wait before its test
# connection (perftest_shim.c): its server listens anew after the control
# connection, and a client that connects first is refused. PERFTEST_ENV
# stays empty if the shim is not built (the client then runs as it is).
# shellcheck disable=SC2034 # for the suites
PERFTEST_ENV=()
perftest_env() {
	local so
	so=$(t_prog perftest_shim.so) || return 0
	# shellcheck disable=SC2034 # for the suites
	PERFTEST_ENV=("LD_PRELOAD=$so" CONNECT_DELAY_MS=500 CONNECT_RETRY=20)
}

# blk_write_start NAME DEV FILE OUT: writes FILE (whole MiBs) to the start
# of block device DEV with O_DIRECT, pass after pass until blk_write_wait
# stops it or a dd fails, dd's messages in OUT; returns once the first
# pass has run a second or ended. BLK_PID is the writer; blk_passes counts
# the passes done. Writing in a loop keeps the fault a caller injects next
# under a write however fast the machine is.
blk_write_start() {
	BLK_STOP=$4.stop
	BLK_PASSES=$4.passes
	rm -f "$BLK_STOP"
	: >"$BLK_PASSES"
	(
		while [ ! -e "$BLK_STOP" ]; do
			dd if="$3" of="$2" bs=1M oflag=direct conv=fsync \
				status=progress 2>>"$4" || exit
			echo >>"$BLK_PASSES"
		done
	) &
	BLK_PID=$!
	# dd's first progress report comes after a second
	t_wait "grep -q ' bytes ' $4 || ! kill -0 $BLK_PID" 60
	kill -0 "$BLK_PID" 2>/dev/null ||
		t_log "$1: the write ended before the fault"
}

# blk_passes: the passes blk_write_start's writer has done.
blk_passes() {
	wc -l <"$BLK_PASSES"
}

# blk_write_errors OUT: what blk_write_start's dd said besides its
# counts, on one line.
blk_write_errors() {
	tr '\r' '\n' <"$1" | grep -v -e ' bytes ' -e ' records in$' \
		-e ' records out$' -e '^$' | tr '\n' ' ' | head -c 100
}

# blk_write_wait NAME SECONDS: lets blk_write_start's writer finish the
# pass it is in, waits that long for it, and returns its exit status;
# fails the check "NAME: the write ends" (and returns 255) if it is still
# running then.
blk_write_wait() {
	touch "$BLK_STOP"
	if ! timeout "$2" tail --pid="$BLK_PID" -f /dev/null; then
		pkill -P "$BLK_PID" -x dd
		kill "$BLK_PID" 2>/dev/null
		t_fail "$1: the write ends" "$(dmesg | tail -n 15)"
		rm -f "$BLK_STOP" "$BLK_PASSES"
		return 255
	fi
	rm -f "$BLK_STOP" "$BLK_PASSES"
	wait "$BLK_PID"
}

# blk_fault NAME DEV FILE CMD...: writes FILE (whole MiBs) to the start of
# block device DEV with O_DIRECT, pass after pass, runs CMD under the
# first, and checks that the writes go on (the consumer recovers and
# retries what was lost, and a whole pass after that succeeds), that they
# finish, and that DEV reads back FILE's bytes.
blk_fault() {
	local name=$1 dev=$2 file=$3 st out want got passed end
	shift 3
	want=$(sha256sum <"$file" | cut -d' ' -f1)
	out=$(mktemp)
	blk_write_start "$name" "$dev" "$file" "$out"
	passed=$(blk_passes)
	t_ok "$name: the fault" "$@"
	end=$((SECONDS + 300))
	while [ "$(blk_passes)" -lt $((passed + 2)) ] && [ $SECONDS -lt $end ] &&
		kill -0 "$BLK_PID" 2>/dev/null; do
		sleep 0.5
	done
	blk_write_wait "$name" 120
	st=$?
	if [ "$st" = 255 ]; then
		rm -f "$out"
		return
	elif [ "$st" = 0 ]; then
		t_pass "$name: the write finishes"
	else
		t_fail "$name: the write finishes" "exit $st" \
			"$(blk_write_errors "$out")"
	fi
	rm -f "$out"
	got=$(dd if="$dev" bs=1M count=$(($(stat -c %s "$file") >> 20)) \
		iflag=direct status=none | sha256sum | cut -d' ' -f1)
	t_eq "$name: the device reads back what was written" "$want" "$got"
}

# tcp_reset FILTER...: resets the established TCP connections ss(8)
# FILTER selects (sock_diag's destroy, as `ss -K`); fails if there was
# none, or if one is still there (a kernel without INET_DIAG_DESTROY
# lists the sockets but cannot destroy them).
tcp_reset() {
	local killed left
	killed=$(ss -HKtn state established "$@" | awk '{ print $3, $4 }')
	[ -n "$killed" ] || { echo "no connection to reset" >&2; return 1; }
	left=$(ss -Htn state established "$@" | awk '{ print $3, $4 }' |
		grep -Fx -e "$killed")
	[ -z "$left" ] || { echo "not reset: $left" >&2; return 1; }
}
