#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Send queue polling (drivers/siw2/sqpoll.c): once a poller watches a user
# QP, posts need no doorbell system call; after the idle window the
# doorbell is back and a post still completes; with sq_poll_us 0 every post
# rings. The debugfs counter sq_doorbell counts doorbells (user SQ
# doorbells are the only system calls of posting). A client killed while
# the poller watches its QP, or either side killed at random points of a
# stream of posts, leaves nothing behind (perftest's client waiting for
# iWARP credit outlives its server: then its QPs are in ERR and its queues
# empty), and pollers with nothing to watch use no CPU.
#
# Namespaces sp1 and sp2 joined by a veth pair, a siw2 device in each;
# perftest over the rdma_cm and rping -V between them.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
S=198.51.100.1
port=7900
knob1=/sys/class/infiniband/siw2_sp1/siw2/sq_poll_us
knob2=/sys/class/infiniband/siw2_sp2/siw2/sq_poll_us

export REAP_KILL9='^(rping|ib_send_bw|ib_send_lat|ib_write_bw) '
cleanup() {
	reap 0
	ip netns del sp1 2>/dev/null
	ip netns del sp2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# Both devices' window in microseconds.
window() { echo "$1" >"$knob1" && echo "$1" >"$knob2"; }
# CPU ticks (user + system) the siw2_sqpoll threads have used.
poller_ticks() {
	local pid sum=0
	for pid in $(pgrep '^siw2_sqpoll/'); do
		# Fields 14 and 15 of /proc/PID/stat; the name has no spaces.
		read -r -a f <"/proc/$pid/stat"
		sum=$((sum + f[13] + f[14]))
	done
	echo "$sum"
}

# run NAME LIMIT SERVER... -- CLIENT...: server in sp1, client in sp2;
# sets st to the client's exit status. Output in $tmp/NAME.{s,c}.
run() {
	local name=$1 limit=$2 srv=() spid
	shift 2
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	ip netns exec sp1 timeout $((limit + 10)) "${srv[@]}" >"$tmp/$name.s" 2>&1 &
	spid=$!
	t_wait "listening sp1 $port || ! kill -0 $spid" 20
	ip netns exec sp2 timeout "$limit" "$@" >"$tmp/$name.c" 2>&1
	st=$?
	wait "$spid"
	port=$((port + 1))
	[ "$st" = 0 ] && return
	t_log "$name: client exit $st; last lines of server, then client:"
	tail -n 4 "$tmp/$name.s" "$tmp/$name.c" | cut -c1-160
}

# perftest NAME TOOL ITERS [OPTS...]: 64 B, client in sp2; sets st, n.
perftest() {
	local name=$1 tool=$2 iters=$3
	shift 3
	run "$name" 120 "$tool" -R -F -d siw2_sp1 -s 64 -n "$iters" -p "$port" "$@" \
		-- env "${penv[@]}" "$tool" -R -F -d siw2_sp2 -s 64 -n "$iters" \
		-p "$port" "$@" $S
}
# The client's environment (lib.sh): it must not connect before the
# server listens for the test connection.
perftest_env
penv=("${PERFTEST_ENV[@]}")
[ ${#penv[@]} -gt 0 ] || t_log "perftest_shim.c did not build: clients connect at once"

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
ns_pair sp1 spv1 $S sp2 spv2 198.51.100.2
t_ok "rdma link add siw2_sp1" ip netns exec sp1 rdma link add siw2_sp1 type siw2 netdev spv1
t_ok "rdma link add siw2_sp2" ip netns exec sp2 rdma link add siw2_sp2 type siw2 netdev spv2
t_reach sp2 $S

# --- the knob
t_eq "polling is off by default" 0 "$(cat "$knob1")"
t_eq "sq_poll_us defaults to the module parameter" \
	"$(cat /sys/module/siw2/parameters/sq_poll_us)" "$(cat "$knob1")"
t_refused "sq_poll_us refuses more than 1000000" sh -c "echo 1000001 >$knob1"
t_refused "sq_poll_us refuses a non-number" sh -c "echo fast >$knob1"
t_ok "sq_poll_us takes 0" sh -c "echo 0 >$knob1"
t_eq "one poller thread per online CPU" "$(nproc)" "$(pgrep -c '^siw2_sqpoll/')"

# --- doorbell mode: a post to an idle engine rings
window 0
d0=$(cnt sq_doorbell)
perftest lat0 ib_send_lat 500
t_eq "doorbell mode: ib_send_lat completes" 0 "$st"
t_log "doorbell mode: $(grep -E '^ *64 +500 ' "$tmp/lat0.c")"
d=$(($(cnt sq_doorbell) - d0))
# Each side posts 500 sends, one at a time: the engine that sent the last
# one has nearly always stopped (it runs in the doorbell's system call).
if [ "$d" -ge 950 ]; then
	t_pass "doorbell mode: posts to an idle engine ring ($d doorbells for 1000 sends)"
else
	t_fail "doorbell mode: posts to an idle engine ring" "$d doorbells for 1000 sends"
fi

# Four threads post to one QP while its engine starts and stops: a post
# that finds the engine at work rings no doorbell, and every Write
# completes (siw2-abi.h, "SQ doorbell": the engine's last look at prod).
if pr=$(t_prog post_race); then
	d0=$(cnt sq_doorbell)
	run prace 120 "$pr" server $S "$port" -- "$pr" client $S "$port" 4 5000
	d=$(($(cnt sq_doorbell) - d0))
	t_eq "doorbell mode: 4 threads' 20000 Writes on one QP all complete" 0 "$st"
	t_log "post_race: $(tail -n 1 "$tmp/prace.c"), $d doorbells"
	if [ "$st" = 0 ] && [ "$d" -lt 20000 ]; then
		t_pass "doorbell mode: posts to a busy engine need no doorbell ($d for 20000)"
	else
		t_fail "doorbell mode: posts to a busy engine need no doorbell" \
			"$d doorbells for 20000 Writes"
	fi
else
	t_fail "post_race is built" "no post_race"
fi

# --- polling mode with a long window: no doorbell once the poller watches.
# The window is the longest there is: under TCG on a busy host a vCPU can
# stall for tens of milliseconds, which a shorter window would count as
# idleness (make bench measures the default window).
window 1000000
# steady TOOL: doorbells of a run of N1 and of N2 work requests a side
# (500 and 2500; 300 and 1300 at quick depth); what setup and teardown
# ring is the same in both, so the difference is what the extra work
# requests rang in the steady state.
n1=$(t_depth 300 500) n2=$(t_depth 1300 2500)
steady() {
	local tool=$1 n d0 d1=0 d2=0 ok=0 more=$((2 * (n2 - n1)))
	for n in $n1 $n2; do
		d0=$(cnt sq_doorbell)
		perftest "$tool$n" "$tool" "$n"
		[ "$st" = 0 ] && ok=$((ok + 1))
		d2=$d1 d1=$(($(cnt sq_doorbell) - d0))
		t_log "polling: $tool, $n a side: $d1 doorbells"
	done
	t_eq "polling: $tool completes, $n1 and $n2 a side" 2 "$ok"
	# Issue 46's target: at most 0.01 system calls per work request.
	# Not 0: on an overloaded host a vCPU can stall past the window (a
	# cold make check with a kernel build beside it saw 2 per 2000).
	# Without the poller every one of them rings.
	if [ $((d1 - d2)) -le $((more / 100)) ]; then
		t_pass "polling: $tool: $more more sends rang $((d1 - d2)) more doorbells (at most 1 per 100)"
	else
		t_fail "polling: $tool: no doorbell in the steady state" \
			"$d2 doorbells for $n1 a side, $d1 for $n2"
	fi
}
steady ib_send_lat
t_log "polling: $(grep -E "^ *64 +$n2 " "$tmp/ib_send_lat$n2.c")"
steady ib_send_bw

# An application that sleeps on a completion channel between posts (rping)
run rping0 120 rping -s -a $S -p "$port" -C 200 -S 256 -V -v \
	-- rping -c -a $S -p "$port" -C 200 -S 256 -V -v
t_eq "polling: rping -V x200 completes" 0 "$st"

# A QP reset while the poller watches it and connected again: the poller
# lets it go when it leaves RTS, with the doorbell bit set, so that the
# posts on the next connection ring and complete. The client takes its
# QP from RTS to RESET, the server's goes to ERR first (cm_test -r).
if cmt=$(t_prog cm_test); then
	run again 60 "$cmt" server $S "$port" -n 2 -r \
		-- "$cmt" client $S "$port" -d accept:again -r
	t_eq "polling: a QP reset and connected again sends on both connections" \
		2 "$(grep -c 'client SEND status=0' "$tmp/again.c")"
else
	t_fail "cm_test is built"
fi

# --- the hand-back: a 1 us window ends between nearly every two posts, so
# posts race with the poller letting go; each must still complete.
window 1
d0=$(cnt sq_doorbell)
run rping1 120 rping -s -a $S -p "$port" -C 300 -S 256 -V -v \
	-- rping -c -a $S -p "$port" -C 300 -S 256 -V -v
t_eq "1 us window: rping -V x300 completes" 0 "$st"
got=$(grep -c '^ping data: rdma-ping-' "$tmp/rping1.c")
t_eq "1 us window: the client completed every ping" 300 "$got"
mism=$(grep -c "data mismatch" "$tmp/rping1.c")
t_eq "1 us window: no data mismatch" 0 "$mism"
d=$(($(cnt sq_doorbell) - d0))
if [ "$d" -gt 0 ]; then
	t_pass "1 us window: posts after the window rang ($d doorbells)"
else
	t_fail "1 us window: posts after the window ring" "no doorbell"
fi
d0=$(cnt sq_doorbell)
perftest bw2 ib_write_bw 2000
t_eq "1 us window: ib_write_bw completes" 0 "$st"

# --- a client killed while its QP is watched
window 1000000
ip netns exec sp1 timeout 60 ib_write_bw -R -F -d siw2_sp1 -s 4096 -n 1000000 \
	-p "$port" >"$tmp/kill.s" 2>&1 &
spid=$!
t_listening sp1 "$port"
ip netns exec sp2 timeout 60 env "${penv[@]}" ib_write_bw -R -F -d siw2_sp2 \
	-s 4096 -n 1000000 -p "$port" $S >"$tmp/kill.c" 2>&1 &
cpid=$!
port=$((port + 1))
sleep 3
if kill -0 "$cpid" 2>/dev/null; then
	pkill -9 -f '^ib_write_bw .*siw2_sp2'
	t_pass "kill: ib_write_bw was streaming when killed"
else
	t_fail "kill: ib_write_bw was streaming when killed" \
		"client: $(cat "$tmp/kill.c")" "server: $(cat "$tmp/kill.s")" \
		"$(grep -v ' 0$' /sys/kernel/debug/siw2/counters | tr '\n' ' ')" \
		"$(dmesg | tail -n 15)"
fi
wait "$cpid" 2>/dev/null
if t_wait "! kill -0 $spid" 30; then
	t_pass "kill: the server notices and exits"
else
	t_fail "kill: the server notices and exits"
fi
reap 5
if t_wait all_gone 20; then
	t_pass "kill: every object released"
else
	t_fail "kill: every object released" "$(cat /sys/kernel/debug/siw2/objects)"
fi

# --- killed mid-post: SIGKILL lands at a random point of a stream of
# posts (between a WQE's stores, its prod and the flags load) while the
# poller reads the same ring, on either side in turn. Every time the
# other side ends, every object goes, and nothing is left polling.
#
# One exception is perftest's, not siw2's: on iWARP, ib_send_bw's client
# may post only as far as the receives its server has reported with an
# RDMA Write (send_rcredit). Waiting for that report it polls its send CQ
# with nothing posted, so when the server dies then, no work request is
# left to complete with a flush error and the client polls for ever, on
# any iWARP device. credit_wait tells that case from a lost completion:
# the client's QPs are all in ERR and its send and receive queues are
# empty, every request it posted completed or flushed.

# rings PID: the control words (siw2-abi.h, struct siw2_ring_ctl) of every
# ring PID maps, a line each: "ring ADDRESS LENGTH PROD CONS FLAGS".
rings() {
	python3 - "$1" <<-'PY'
	import struct, sys
	pid = sys.argv[1]
	with open(f"/proc/{pid}/maps") as maps, \
	     open(f"/proc/{pid}/mem", "rb") as mem:
	    for line in maps:
	        if "uverbs" not in line:
	            continue
	        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
	        try:
	            mem.seek(lo)
	            ctl = mem.read(192)
	        except OSError as e:
	            print(f"ring {lo:x} {hi - lo} {e}")
	            continue
	        prod, cons, flags = (struct.unpack_from("<I", ctl, o)[0]
	                             for o in (0, 64, 128))
	        print(f"ring {lo:x} {hi - lo} {prod} {cons} {flags}")
	PY
}
# credit_wait: the one client left is perftest's credit wait (above).
# A QP's rings carry SIW2_SQ_NEED_WAKEUP or SIW2_RQ_NEED_WAKEUP (bit 0)
# in ERR; perftest without -e never arms a CQ, whose bit 0 that would be.
credit_wait() {
	local pid qps
	pid=$(pgrep -f '^ib_send_bw .*siw2_sp2') || return 1
	[ "$(echo "$pid" | wc -w)" = 1 ] || return 1
	qps=$(rdma res show qp | grep " pid $pid ") || return 1
	! echo "$qps" | grep -vq ' state ERR ' || return 1
	rings "$pid" | awk '
		NF != 6 { bad = 1 }
		$6 % 2 == 1 { queues++; if ($4 != $5) bad = 1 }
		END { exit bad || !queues }'
}
# mid_why WHAT: what a failed round left behind.
mid_why() {
	local pid mark
	t_log "$1; server, then client output:"
	tail -n 5 "$tmp/mid.s" "$tmp/mid.c" | cut -c1-160
	# By name: a process stuck in exit has no command line.
	for pid in $(pgrep -x ib_send_bw); do
		t_log "alive: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline")"
		grep '^State' "/proc/$pid/status"
		# Three looks: where a running process is, user or kernel.
		for _ in 1 2 3; do
			t_log "syscall: $(cat "/proc/$pid/syscall" 2>/dev/null)"
			sed 's/^/    /' "/proc/$pid/stack" 2>/dev/null
			sleep 0.2
		done
		rings "$pid" | sed 's/^/    /'
		command -v gdb >/dev/null &&
			timeout 20 gdb -q -batch -p "$pid" -ex 'thread apply all bt' \
				2>&1 | grep -E '^(#|Thread)' | head -n 40
	done
	rdma -dd res show qp | sed 's/^/    /'
	grep -v ' 0$' /sys/kernel/debug/siw2/counters | tr '\n' ' '
	echo
	tr '\n' ' ' </sys/kernel/debug/siw2/objects
	echo
	ip netns exec sp1 ss -tan | sed 's/^/    sp1 /'
	ip netns exec sp2 ss -tan | sed 's/^/    sp2 /'
	# Every blocked task's stack, siw2's workers and pollers included.
	mark="siw2 sqpoll mid_why $RANDOM"
	echo "$mark" >/dev/kmsg
	echo w >/proc/sysrq-trigger
	# The CPUs' stacks too: a task spinning in the kernel is not blocked.
	echo l >/proc/sysrq-trigger
	dmesg | sed -n "/$mark/,\$p" | head -n 300
}
# stream_start NAME: an ib_send_bw stream of 64 B sends, server in sp1
# (spid), client in sp2 (cpid), output in $tmp/NAME.{s,c}; returns once
# the test QPs exist. perftest -R connects twice: a QP each for its
# parameter exchange, then one each for the test. A client killed between
# the two leaves its server listening for the second connection
# (perftest, not siw2: the exchange's DISCONNECTED goes to another event
# channel), so kills wait for the test QPs.
stream_start() {
	ip netns exec sp1 timeout 60 ib_send_bw -R -F -d siw2_sp1 -s 64 \
		-n 100000000 -p "$port" >"$tmp/$1.s" 2>&1 &
	spid=$!
	t_listening sp1 "$port"
	ip netns exec sp2 timeout 60 env "${penv[@]}" ib_send_bw -R -F \
		-d siw2_sp2 -s 64 -n 100000000 -p "$port" $S >"$tmp/$1.c" 2>&1 &
	cpid=$!
	port=$((port + 1))
	t_wait "[ \"\$(obj qp)\" -ge 4 ]" 20
}
bad=0 waits=0
kills=${SQPOLL_KILLS:-$(t_depth 4 8)}
for i in $(seq "$kills"); do
	stream_start mid
	sleep "0.$((RANDOM % 10))"
	if [ $((i % 2)) = 1 ]; then
		kill -9 "$cpid" 2>/dev/null
		pkill -9 -f '^ib_send_bw .*siw2_sp2'
	else
		kill -9 "$spid" 2>/dev/null
		pkill -9 -f '^ib_send_bw .*siw2_sp1'
	fi
	if t_wait "! kill -0 $spid 2>/dev/null && ! kill -0 $cpid 2>/dev/null" 30; then
		:
	elif [ $((i % 2)) = 0 ] && credit_wait; then
		waits=$((waits + 1))
		t_log "kill $i: the client waits for credit from its dead server, its QPs in ERR and its queues empty"
		pkill -9 -f '^ib_send_bw .*siw2_sp2'
	else
		bad=$((bad + 1))
		mid_why "kill $i: a side did not end"
	fi
	wait "$spid" "$cpid" 2>/dev/null
	reap 5
	if ! t_wait all_gone 20; then
		bad=$((bad + 1))
		mid_why "kill $i: objects left"
	fi
done
t_eq "killed mid-post x$kills: both sides ended, every object released" 0 "$bad"
[ "$waits" = 0 ] || t_log "killed mid-post: $waits of $kills clients waited for credit"
# The credit wait on purpose: a stopped server lets its client run out
# of credit, then dies. The client lives on, as perftest does on any
# iWARP device, and credit_wait must recognise it: QPs in ERR, queues
# empty.
stream_start cw
sleep 2
pkill -STOP -f '^ib_send_bw .*siw2_sp1'
sleep 3
pkill -9 -f '^ib_send_bw .*siw2_sp1'
if t_wait credit_wait 20; then
	t_pass "credit wait: the client's QPs are in ERR, its queues empty"
else
	t_fail "credit wait: the client's QPs are in ERR, its queues empty" \
		"$(rdma res show qp)"
fi
pkill -9 -f '^ib_send_bw .*siw2_sp2'
wait "$spid" "$cpid" 2>/dev/null
reap 5
if t_wait all_gone 20; then
	t_pass "credit wait: every object released"
else
	t_fail "credit wait: every object released" \
		"$(cat /sys/kernel/debug/siw2/objects)"
fi
# A new QP starts with its doorbell armed: its first posts ring, then the
# poller takes over.
d0=$(cnt sq_doorbell)
perftest after ib_send_lat 500
t_eq "after the kills: ib_send_lat completes" 0 "$st"
d=$(($(cnt sq_doorbell) - d0))
if [ "$d" -ge 1 ] && [ "$d" -lt 100 ]; then
	t_pass "after the kills: a new QP rings, then polls ($d doorbells for 1000 sends)"
else
	t_fail "after the kills: a new QP rings, then polls" "$d doorbells for 1000 sends"
fi

# --- idle pollers cost nothing (the window ends 1 s after the last post)
sleep 2
c0=$(poller_ticks)
sleep 3
c1=$(poller_ticks)
# A tick is 1/100 s (USER_HZ); allow one for the accounting's edges.
if [ $((c1 - c0)) -le 1 ]; then
	t_pass "idle pollers used no CPU in 3 s ($((c1 - c0)) ticks)"
else
	t_fail "idle pollers use no CPU" "$((c1 - c0)) ticks in 3 s"
fi

t_ok "rdma link delete siw2_sp1" ip netns exec sp1 rdma link delete siw2_sp1
t_ok "rdma link delete siw2_sp2" ip netns exec sp2 rdma link delete siw2_sp2
t_eq "no live siw2 objects" "$(siw2_objects_zero)" "$(cat /sys/kernel/debug/siw2/objects)"
t_ok "modprobe -r siw2" modprobe -r siw2
t_eq "no poller thread after unload" 0 "$(pgrep -c '^siw2_sqpoll/')"

t_done
