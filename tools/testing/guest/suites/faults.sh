#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults under load: ib_write_bw -R (RDMA Writes over rdma_cm) runs
# between network namespaces d1 (192.0.2.1) and d2 (.2), a siw2 device in
# each, while in turn the server process is killed, the client's
# namespace is deleted, the netdev goes down and up, the siw2 link is
# deleted, a listener with unaccepted requests is destroyed, the
# transfer's memory cgroup is squeezed by a hog, and the module is
# unloaded. disrupt.sh already kills a client and deletes the netdev;
# this suite does not repeat those.
#
# Each case must end within its timeout with the affected processes gone
# (a clean failure or a clean end), every siw2 object released, the
# module's reference count back where it was, and a fresh transfer
# succeeding on rebuilt or surviving devices. vm-run fails the run on any
# kernel warning. siw2 has no slab caches of its own to compare.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A=192.0.2.1
BW=(ib_write_bw -R -F -s 65536)

in1() { ip netns exec d1 "$@"; }
in2() { ip netns exec d2 "$@"; }
export REAP_KILL9='^ib_write_bw |/cm_test |^python3 -c '
# shellcheck disable=SC2016 # t_wait evaluates it
drained() {
	t_wait '[ "$(obj qp)$(obj cq)$(obj mr)$(obj pd)$(obj ucontext)$(obj cep)$(obj listener)" = 0000000 ]' 30
}
objs() { tr '\n' ' ' </sys/kernel/debug/siw2/objects; }
refcnt() { cat /sys/module/siw2/refcnt 2>/dev/null; }

setup_net() {
	ip netns del d1 2>/dev/null
	ip netns del d2 2>/dev/null
	t_wait "! ip -all netns exec true 2>/dev/null | grep -q ." 5
	ns_pair d1 v1 $A d2 v2 192.0.2.2 &&
	in1 rdma link add siw2_d1 type siw2 netdev v1 &&
	in2 rdma link add siw2_d2 type siw2 netdev v2
}

cgroot=$tmp/cg
cleanup() {
	reap 0
	[ -d "$cgroot/press" ] && rmdir "$cgroot/press"
	mountpoint -q "$cgroot" && umount "$cgroot"
	ip netns del d1 2>/dev/null
	ip netns del d2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v ib_write_bw >/dev/null; then
	t_skip "faults under load" "no ib_write_bw (perftest)"
	t_done
	exit
fi

# bw_start PORT SECONDS: an ib_write_bw pair (server in d1, client in d2)
# for SECONDS, backgrounded; returns once both QPs exist.
bw_start() {
	in1 timeout 120 "${BW[@]}" -d siw2_d1 -D "$2" -p "$1" >"$tmp/s$1" 2>&1 &
	t_listening d1 "$1"
	in2 timeout 120 "${BW[@]}" -d siw2_d2 -D "$2" -p "$1" $A >"$tmp/c$1" 2>&1 &
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait '[ "$(obj qp)" -ge 2 ]' 30 && sleep 2
}
# The pair's processes, by port.
bw_alive() { pgrep -f "ib_write_bw .* -p $1( |$)" >/dev/null; }
# fresh PORT: a complete transfer on the current devices.
fresh() {
	local st
	in1 timeout 90 "${BW[@]}" -d siw2_d1 -n 200 -p "$1" >"$tmp/fs$1" 2>&1 &
	t_listening d1 "$1"
	in2 timeout 90 "${BW[@]}" -d siw2_d2 -n 200 -p "$1" $A >"$tmp/fc$1" 2>&1
	st=$?
	wait $! || st=1
	[ $st -eq 0 ] || { tail -n 3 "$tmp/fs$1" "$tmp/fc$1"; return 1; }
}
# What a client's output says in the end: its result line or its last words.
said() { grep -E '^ *65536 +[0-9]+' "$1" || tail -n 2 "$1" | tr '\n' ' '; }
# after CASE PORT: the case's common ending.
after() {
	if drained; then
		t_pass "$1: every siw2 object released"
	else
		t_fail "$1: every siw2 object released" "$(objs)"
	fi
	t_eq "$1: module reference count as before" "$ref0" "$(refcnt)"
	t_ok "$1: a fresh transfer succeeds afterwards" fresh "$2"
}

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
t_ok "two namespaces with a siw2 device each" setup_net
ref0=$(refcnt)
t_log "module reference count with two idle devices: $ref0"
t_ok "a transfer succeeds before any fault" fresh 7700

# --- the server process killed mid-transfer (disrupt.sh kills the client)
if bw_start 7701 30; then
	kill -9 "$(pgrep -n -f "ib_write_bw -R .* -d siw2_d1 .* -p 7701")"
	if t_wait "! bw_alive 7701" 40; then
		t_pass "server killed: the client ends"
	else
		t_fail "server killed: the client ends" "$(tail -n 3 "$tmp/c7701")"
	fi
else
	t_fail "server killed: data flows" "$(tail -n 3 "$tmp/c7701")"
fi
reap 5
after "server killed" 7711

# --- the client's namespace deleted: its devices go with the netdevs
# (the veth pair dies with the namespace, so both devices go); the
# server ends; everything is rebuilt for the fresh transfer.
if bw_start 7702 30; then
	ip netns del d2
	# A namespace lives while a process is in it: the peer dies with it.
	kill -9 "$(pgrep -n -f "ib_write_bw -R .* -d siw2_d2 .* -p 7702")"
	if t_wait "! bw_alive 7702" 40; then
		t_pass "namespace deleted: both processes end"
	else
		t_fail "namespace deleted: both processes end" \
			"$(tail -n 3 "$tmp/s7702")"
	fi
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_ok "namespace deleted: both siw2 devices are gone" \
		t_wait '[ -z "$(in1 rdma link show)" ]' 30
else
	t_fail "namespace deleted: data flows" "$(tail -n 3 "$tmp/c7702")"
fi
reap 5
t_ok "namespace deleted: namespaces and devices rebuilt" setup_net
after "namespace deleted" 7712

# --- the netdev down for three seconds, then up: TCP rides it out or the
# connection fails; either way both sides end and the port comes back.
if bw_start 7703 10; then
	in1 ip link set v1 down
	t_match "netdev down: the port is down" 'state DOWN' \
		"$(in1 rdma link show siw2_d1/1)"
	sleep 3
	in1 ip link set v1 up
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_ok "netdev up: the port is active again" \
		t_wait 'in1 rdma link show siw2_d1/1 | grep -q "state ACTIVE"' 10
	if t_wait "! bw_alive 7703" 80; then
		t_pass "netdev down and up: both processes end"
	else
		t_fail "netdev down and up: both processes end" \
			"$(tail -n 3 "$tmp/s7703")"
	fi
	t_log "netdev down and up: client says $(said "$tmp/c7703")"
else
	t_fail "netdev down/up: data flows" "$(tail -n 3 "$tmp/c7703")"
fi
reap 5
after "netdev down and up" 7713

# --- the siw2 link deleted under the transfer
if bw_start 7704 30; then
	t_ok "link deleted: rdma link delete under load" \
		in1 rdma link delete siw2_d1
	if t_wait "! bw_alive 7704" 40; then
		t_pass "link deleted: both processes end"
	else
		t_fail "link deleted: both processes end" \
			"$(tail -n 3 "$tmp/s7704")" "$(tail -n 3 "$tmp/c7704")"
	fi
else
	t_fail "link deleted: data flows" "$(tail -n 3 "$tmp/c7704")"
fi
reap 5
t_ok "link deleted: the link added again" \
	in1 rdma link add siw2_d1 type siw2 netdev v1
after "link deleted" 7714

# --- a listener destroyed with three requests not yet accepted, beside a
# running transfer that must not notice
if cmt=$(t_prog cm_test); then
	# Long enough to outlast the requests' setup on a loaded TCG host.
	bw_start 7705 45 || t_fail "listener: data flows" "$(tail -n 3 "$tmp/c7705")"
	in1 timeout 60 "$cmt" server $A 7725 -n 3 >"$tmp/l" 2>&1 &
	t_listening d1 7725
	for i in 1 2 3; do
		in2 timeout 60 "$cmt" client $A 7725 -d hold -T 40 \
			>"$tmp/lc$i" 2>&1 &
	done
	if t_wait "[ \$(grep -c CONNECT_REQUEST '$tmp/l') = 3 ]" 40; then
		t_pass "listener: three requests wait unanswered"
	else
		t_fail "listener: three requests wait unanswered" "$(cat "$tmp/l")"
	fi
	bw_alive 7705 && before=1 || before=0
	kill -9 "$(pgrep -n -f "cm_test server $A 7725")"
	if t_wait "! pgrep -f 'cm_test client $A 7725'" 45; then
		t_pass "listener destroyed: the waiting clients end"
	else
		t_fail "listener destroyed: the waiting clients end" \
			"$(cat "$tmp/lc1")"
	fi
	t_match "listener destroyed: a waiting client is refused" \
		'REJECTED|UNREACHABLE|ERROR' "$(cat "$tmp/lc1")"
	# A transfer the teardown broke ends without its result line.
	[ "$before" = 1 ] || t_log "listener: the transfer had ended before the listener went (slow guest)"
	t_wait "! bw_alive 7705" 90
	t_match "listener destroyed: the transfer beside it completes unharmed" \
		'^ *65536 +[0-9]+' "$(cat "$tmp/c7705")"
else
	t_fail "listener: cm_test is built"
fi
reap 5
after "listener destroyed" 7715

# --- memory pressure: the transfer in a 96 MiB memory cgroup with a hog
# that keeps touching more than that; the OOM killer picks the hog or the
# transfer fails cleanly, and nothing leaks.
mkdir -p "$cgroot"
if mount -t cgroup2 none "$cgroot" 2>/dev/null &&
	echo +memory >"$cgroot/cgroup.subtree_control" 2>/dev/null &&
	mkdir "$cgroot/press"; then
	echo 96M >"$cgroot/press/memory.max"
	echo 0 >"$cgroot/press/memory.swap.max" 2>/dev/null
	inpress() { sh -c 'echo $$ >"$1" && shift && exec "$@"' sh \
		"$cgroot/press/cgroup.procs" "$@"; }
	inpress ip netns exec d1 timeout 120 "${BW[@]}" -d siw2_d1 -D 15 -p 7706 \
		>"$tmp/s7706" 2>&1 &
	t_listening d1 7706
	inpress ip netns exec d2 timeout 120 "${BW[@]}" -d siw2_d2 -D 15 -p 7706 $A \
		>"$tmp/c7706" 2>&1 &
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait '[ "$(obj qp)" -ge 2 ]' 30
	inpress timeout 30 python3 -c '
import time
chunks = []
for i in range(40):
    chunks.append(bytearray(4 << 20))
    for c in chunks:
        c[::4096] = b"x" * len(c[::4096])
    time.sleep(0.1)
' >"$tmp/hog" 2>&1 &
	if t_wait "! bw_alive 7706" 90; then
		t_pass "memory pressure: the transfer ends"
	else
		t_fail "memory pressure: the transfer ends" \
			"$(tail -n 3 "$tmp/c7706")"
	fi
	t_log "memory pressure: $(tr '\n' ' ' <"$cgroot/press/memory.events")"
	t_log "memory pressure: client says $(said "$tmp/c7706")"
	reap 30
else
	t_skip "memory pressure" "no cgroup2 memory controller"
fi
after "memory pressure" 7716

# --- the module unloaded under the transfer: refused while contexts pin
# it (the transfer carries on), or done cleanly (both processes end)
if bw_start 7707 15; then
	if modprobe -r siw2 2>"$tmp/rm"; then
		t_pass "unload under load: done"
		t_ok "unload under load: both processes end" \
			t_wait "! bw_alive 7707" 40
	else
		t_log "unload refused while in use: $(cat "$tmp/rm")"
		t_match "unload under load: refused as in use" \
			'in use|busy' "$(cat "$tmp/rm")"
		if bw_alive 7707; then
			t_pass "unload refused: the transfer carries on"
		else
			t_fail "unload refused: the transfer carries on" \
				"$(tail -n 3 "$tmp/c7707")"
		fi
		t_wait "! bw_alive 7707" 60
		t_match "unload refused: the transfer completes" \
			'^ *65536 +[0-9]+' "$(cat "$tmp/c7707")"
		reap 5
		t_ok "unload refused: every siw2 object released" drained
		t_eq "unload refused: module reference count as before" \
			"$ref0" "$(refcnt)"
		t_ok "modprobe -r siw2 once the transfer is over" \
			modprobe -r siw2
	fi
	t_eq "unload: the module is gone" "" "$(lsmod | grep '^siw2 ')"
else
	t_fail "unload: data flows" "$(tail -n 3 "$tmp/c7707")"
fi
reap 5
t_ok "unload: the module loads again" modprobe siw2
t_ok "unload: namespaces and devices rebuilt" setup_net
t_ok "unload: a fresh transfer succeeds" fresh 7717
ip netns del d1
ip netns del d2
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "the end: no siw2 device left" t_wait '[ -z "$(rdma link show)" ]' 20
t_ok "the end: modprobe -r siw2" modprobe -r siw2

t_done
