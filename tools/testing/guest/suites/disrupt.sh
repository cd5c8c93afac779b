#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connections that end badly, or see their machine change: one side killed
# in the middle of a transfer, a CPU going offline under sending QPs, the
# link deleted under an open context, the netdev deleted under live QPs,
# the module unloaded while connections are open. Between network
# namespaces d1 (192.0.2.1) and d2 (.2) joined by a veth pair, a siw2
# device in each. Each case must end promptly: the surviving side sees the
# end (its process exits), nothing hangs, the guest kernel reports no
# problem (vm-run checks the log), and every siw2 object is gone afterwards
# (/sys/kernel/debug/siw2/objects).
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A=192.0.2.1

in1() { ip netns exec d1 "$@"; }
in2() { ip netns exec d2 "$@"; }
# What reap (lib.sh) kills with SIGKILL when SIGTERM was not enough.
export REAP_KILL9='^(rping|ib_write_bw) '
# All QPs, CQs, MRs, PDs, contexts, endpoints and listeners gone.
# shellcheck disable=SC2016 # t_wait evaluates it
drained() {
	t_wait '[ "$(obj qp)$(obj cq)$(obj mr)$(obj pd)$(obj ucontext)$(obj cep)$(obj listener)" = 0000000 ]' "${1:-20}"
}
# PID of the newest process named $1 whose command line contains $2.
pid_of() { pgrep -n -f "$1.*$2"; }

setup_net() {
	ns_pair d1 v1 $A d2 v2 192.0.2.2
	in1 rdma link add siw2_d1 type siw2 netdev v1 &&
		in2 rdma link add siw2_d2 type siw2 netdev v2
}

cleanup() {
	reap 0
	ip netns del d1 2>/dev/null
	ip netns del d2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v rping >/dev/null; then
	t_skip "disruptions" "no rping"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
t_ok "two namespaces with a siw2 device each" setup_net

# Starts an endless verified rping (server in d1, client in d2) on port $1
# and waits until data flows.
rping_pair() {
	ip netns exec d1 timeout 120 rping -s -a $A -p "$1" -V -S 4096 -C 0 \
		>"$tmp/s$1" 2>&1 &
	t_listening d1 "$1"
	ip netns exec d2 timeout 120 stdbuf -oL rping -c -a $A -p "$1" -V \
		-S 4096 -C 0 -v >"$tmp/c$1" 2>&1 &
	t_wait "grep -q 'ping data' '$tmp/c$1'" 30
}

# --- the client killed mid-transfer: the server ends
if rping_pair 7601; then
	t_pass "kill: data flows"
	kill -9 "$(pid_of rping "-c -a $A -p 7601")"
	if t_wait "! pgrep -f 'rping -s -a $A -p 7601'" 30; then
		t_pass "kill client: the server notices and exits"
	else
		t_fail "kill client: the server notices and exits" \
			"$(tail -n 5 "$tmp/s7601")"
	fi
else
	t_fail "kill: data flows" "$(tail -n 5 "$tmp/c7601")"
fi
reap 5
t_ok "kill client: every object released" drained

# --- the server killed mid-transfer: the client ends
if rping_pair 7602; then
	kill -9 "$(pid_of rping "-s -a $A -p 7602")"
	if t_wait "! pgrep -f 'rping -c -a $A -p 7602'" 30; then
		t_pass "kill server: the client notices and exits"
	else
		t_fail "kill server: the client notices and exits" \
			"$(tail -n 5 "$tmp/c7602")"
	fi
else
	t_fail "kill server: data flows" "$(tail -n 5 "$tmp/c7602")"
fi
reap 5
t_ok "kill server: every object released" drained

# --- perftest killed in the middle of 1 MiB RDMA Writes
if command -v ib_write_bw >/dev/null; then
	ip netns exec d1 timeout 120 ib_write_bw -d siw2_d1 -R -F -s 1048576 \
		-D 60 -p 7603 >"$tmp/s7603" 2>&1 &
	t_listening d1 7603
	ip netns exec d2 timeout 120 ib_write_bw -d siw2_d2 -R -F -s 1048576 \
		-D 60 -p 7603 $A >"$tmp/c7603" 2>&1 &
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait '[ "$(obj qp)" = 2 ]' 30
	sleep 3
	kill -9 "$(pid_of ib_write_bw "-p 7603 $A")"
	if t_wait "! pgrep -f 'ib_write_bw -d siw2_d1'" 30; then
		t_pass "ib_write_bw killed mid-transfer: the server exits"
	else
		t_fail "ib_write_bw killed mid-transfer: the server exits" \
			"$(tail -n 5 "$tmp/s7603")"
	fi
	reap 5
	t_ok "ib_write_bw killed: every object released" drained
fi

# --- the CPU that sends for two QPs goes offline and comes back. A
# stream's send work follows the CPU that posted to it (tx.c), so a
# socket with room again must find another CPU while that one is gone.
cpu1=/sys/devices/system/cpu/cpu1/online
if [ -w "$cpu1" ] && command -v ib_write_bw >/dev/null; then
	in1 timeout 120 ib_write_bw -d siw2_d1 -R -F -s 65536 -D 12 -p 7606 \
		>"$tmp/s7606" 2>&1 &
	t_listening d1 7606
	in2 timeout 120 taskset -c 1 ib_write_bw -d siw2_d2 -R -F -s 65536 \
		-D 12 -p 7606 $A >"$tmp/c7606" 2>&1 &
	bw=$!
	in1 timeout 120 rping -s -a $A -p 7607 -V -S 32768 -C 0 \
		>"$tmp/s7607" 2>&1 &
	t_listening d1 7607
	in2 timeout 120 taskset -c 1 stdbuf -oL rping -c -a $A -p 7607 -V \
		-S 32768 -C 0 -v >"$tmp/c7607" 2>&1 &
	t_ok "hotplug: data flows" \
		t_wait "grep -q 'ping data' '$tmp/c7607'" 30
	sleep 2
	t_ok "hotplug: CPU 1 goes offline under sending QPs" \
		sh -c "echo 0 >$cpu1"
	sleep 3
	t_ok "hotplug: CPU 1 comes back" sh -c "echo 1 >$cpu1"
	before=$(grep -c 'ping data' "$tmp/c7607")
	if t_wait "[ \$(grep -c 'ping data' '$tmp/c7607') -gt $((before + 20)) ]" 30; then
		t_pass "hotplug: verified rping goes on"
	else
		t_fail "hotplug: verified rping goes on" "$(tail -n 3 "$tmp/c7607")"
	fi
	wait "$bw"
	t_eq "hotplug: ib_write_bw ends well" 0 "$?"
	t_match "hotplug: ib_write_bw reports its bandwidth" '^ *65536 +[0-9]+' \
		"$(cat "$tmp/c7606")"
	echo 1 >"$cpu1" 2>/dev/null
	reap 0
	t_ok "hotplug: every object released" drained
else
	t_skip "hotplug" "no CPU 1 to take offline, or no ib_write_bw"
fi

# --- the link deleted while an application without the RDMA CM holds the
# device: no event of the RDMA CM tells it to let go, so the removal must
# not wait for it (siw2 lets the core disassociate its context), and it
# hears IB_EVENT_DEVICE_FATAL, the end of its event stream.
in1 timeout 60 stdbuf -oL ibv_asyncwatch -d siw2_d1 >"$tmp/aw" 2>&1 &
if wait_for "$tmp/aw" 'async event FD' 10; then
	t_ok "link deleted under an open context: rdma link delete returns" \
		in1 timeout 30 rdma link delete siw2_d1
	t_ok "link deleted: the application hears DEVICE_FATAL" \
		wait_for "$tmp/aw" 'IBV_EVENT_DEVICE_FATAL' 10
	reap 0
	t_ok "link deleted: every object released" drained
	t_ok "link deleted: the link is added again" \
		in1 rdma link add siw2_d1 type siw2 netdev v1
else
	t_fail "link deleted: ibv_asyncwatch runs" "$(cat "$tmp/aw")"
	reap 0
fi

# --- the netdev deleted under live QPs
if rping_pair 7604; then
	t_ok "netdev deleted under live QPs" in1 ip link del v1
	t_rpings_end "netdev deleted: both rpings exit" 7604 \
		"$tmp/s7604" "$tmp/c7604"
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_ok "netdev deleted: no siw2 device left" \
		t_wait '[ -z "$(in1 rdma link show)$(in2 rdma link show)" ]' 20
else
	t_fail "netdev deleted: data flows" "$(tail -n 5 "$tmp/c7604")"
fi
reap 5
t_ok "netdev deleted: every object released" drained

# --- the module unloaded while connections are open
ip netns del d1
ip netns del d2
t_wait "! ip link show v1" 10
t_ok "namespaces again" setup_net
if rping_pair 7605; then
	# Either the devices are unregistered, which ends the connections,
	# or unloading is refused while applications hold device contexts
	# (the uverbs core pins the module then); it must work once they
	# are gone.
	if modprobe -r siw2 2>"$tmp/rm"; then
		t_pass "modprobe -r siw2 with live connections"
		t_rpings_end "unload: both rpings exit" 7605 "$tmp/c7605"
	else
		t_log "unload refused while in use: $(cat "$tmp/rm")"
		t_eq "refused unload: the connection still moves data" 0 \
			"$(pgrep -fc 'rping -c -a .* -p 7605' | grep -c '^0$')"
		reap 0
		t_wait "! pgrep -f 'rping .*-p 7605'" 20
		t_ok "modprobe -r siw2 once the applications are gone" \
			modprobe -r siw2
	fi
	t_eq "unload: the module is gone" "" "$(lsmod | grep '^siw2 ')"
else
	t_fail "unload: data flows" "$(tail -n 5 "$tmp/c7605")"
fi
reap 5

t_done
