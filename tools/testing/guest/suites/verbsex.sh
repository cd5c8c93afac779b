#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The extended verbs through libsiw2 between two hosts: network namespaces
# vx1 (198.51.100.1) and vx2 (.2) joined by a veth pair, a siw2 device in
# each. verbsex_test.c posts every ibv_wr_*() operation siw2 offers (Send,
# Send with Immediate, Send with Invalidate, RDMA Write, Write with
# Immediate, RDMA Read, Compare and Swap, Fetch and Add, Local Invalidate;
# SGE lists, inline data and inline data lists) in batches, and both sides
# poll with ibv_start_poll/next_poll/end_poll: data, opcodes, byte_len,
# immediate data and the atomics' original values are checked, and so are
# invalid ibv_wr_* sequences, which wr_complete must refuse without
# sending anything. Then what perftest does with siw2: its -R runs create
# their QPs with rdma_create_qp_ex when perftest uses the ibv_wr_* API.
# First the device's capabilities as ibv_devinfo -v shows them (and port
# events, which it advertises); no siw2 object left at the end. And a
# process that writes malformed SQEs and RQEs straight into its rings,
# behind libsiw2's back: each completes with an error and ends the
# connection. A Read whose Request follows a zero-length Read RTR's, its
# answer arriving while the Read is outstanding; and a process
# that gives up root for nobody after connecting, whose doorbells the
# kernel then refuses by write(). And two QPs moved to RTS with
# ibv_modify_qp() and IB attributes, as rdma-core's tests connect RC QPs:
# without a connection the move is refused and nothing waits.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A4=198.51.100.1
port=7700

in1() { ip netns exec vx1 "$@"; }
in2() { ip netns exec vx2 "$@"; }

cleanup() {
	reap 0
	ip netns del vx1 2>/dev/null
	ip netns del vx2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! vxt=$(t_prog verbsex_test); then
	t_fail "verbsex_test is built"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
ns_pair vx1 vv1 $A4 vx2 vv2 198.51.100.2
t_ok "rdma link add in vx1" in1 rdma link add siw2_vx1 type siw2 netdev vv1
t_ok "rdma link add in vx2" in2 rdma link add siw2_vx2 type siw2 netdev vv2
t_reach vx2 $A4

# --- what the device reports (ibv_query_device_ex through libsiw2)
dev=$(in1 ibv_devinfo -v -d siw2_vx1 2>&1)
t_log "ibv_devinfo -v -d siw2_vx1:"
printf '%s\n' "$dev" | sed 's/^/       /'
t_match "device caps: MEM_MGT_EXTENSIONS (fast registration, invalidation)" \
	'^[[:space:]]+MEM_MGT_EXTENSIONS' "$dev"
t_match "device caps: PORT_ACTIVE_EVENT" '^[[:space:]]+PORT_ACTIVE_EVENT' "$dev"
t_match "device caps: SYS_IMAGE_GUID" '^[[:space:]]+SYS_IMAGE_GUID' "$dev"
t_match "device caps: atomic_cap ATOMIC_HCA (RFC 7306 atomics)" \
	'atomic_cap:[[:space:]]+ATOMIC_HCA' "$dev"
t_match "device caps: max_sge_rd 1" 'max_sge_rd:[[:space:]]+1$' "$dev"
t_match "device caps: no completion timestamps (read_completion_ts unsupported)" \
	'completion_timestamp_mask not supported' "$dev"
t_match "device caps: no core clock" 'core clock not supported' "$dev"

# PORT_ACTIVE_EVENT holds: the netdev's carrier going and coming back
# raises PORT_ERR and PORT_ACTIVE.
ip netns exec vx1 timeout 30 stdbuf -oL ibv_asyncwatch -d siw2_vx1 \
	>"$tmp/aw" 2>&1 &
if wait_for "$tmp/aw" 'async event FD' 10; then
	in1 ip link set vv1 down
	wait_for "$tmp/aw" 'IBV_EVENT_PORT_ERR' 10
	in1 ip link set vv1 up
	wait_for "$tmp/aw" 'IBV_EVENT_PORT_ACTIVE' 10
	aw=$(cat "$tmp/aw")
	t_match "PORT_ERR when the netdev goes down" \
		'event_type IBV_EVENT_PORT_ERR .*port 1' "$aw"
	t_match "PORT_ACTIVE when it comes back" \
		'event_type IBV_EVENT_PORT_ACTIVE .*port 1' "$aw"
else
	t_fail "ibv_asyncwatch runs" "$(cat "$tmp/aw")"
fi
reap 0
t_reach vx2 $A4

# --- RTS without a connection (issue 38): refused, nothing waits
in1 timeout 60 "$vxt" rts siw2_vx1 -T 10 >"$tmp/rts.out" 2>&1
st=$?
t_lines "" <"$tmp/rts.out"
grep -q '^rts DONE' "$tmp/rts.out" ||
	t_fail "rts without a connection: the test ran to its end (exit $st)" \
		"$(tail -n 5 "$tmp/rts.out")"

# runpair NAME MODE: verbsex_test server in vx1, client in vx2; each of
# their PASS/FAIL lines is a check of this suite.
runpair() {
	local name=$1 mode=$2 st
	ip netns exec vx1 timeout 120 "$vxt" server $A4 $port -m "$mode" \
		>"$tmp/$name.s" 2>&1 &
	if ! wait_for "$tmp/$name.s" 'LISTENING|ERROR' 20 ||
	   ! grep -q LISTENING "$tmp/$name.s"; then
		t_fail "$name: the server listens" "$(cat "$tmp/$name.s")"
		reap 0
		return
	fi
	in2 timeout 120 "$vxt" client $A4 $port -m "$mode" >"$tmp/$name.c" 2>&1
	st=$?
	reap 30
	port=$((port + 1))
	for side in s c; do
		t_lines "$name" <"$tmp/$name.$side"
	done
	grep -q '^client DONE' "$tmp/$name.c" ||
		t_fail "$name: the client ran to its end (exit $st)" \
			"$(tail -n 5 "$tmp/$name.c")"
	grep -q '^server DONE' "$tmp/$name.s" ||
		t_fail "$name: the server ran to its end" \
			"$(tail -n 5 "$tmp/$name.s")"
}

runpair wr main
runpair localinv localinv
runpair badsqe badsqe
runpair badinline badinline
runpair badrqe badrqe
runpair ringrace ringrace
# The RTR as a zero-length Read, a Read of the application right behind.
siw2_set mpa_rtr 4
runpair rtrread rtrread
siw2_set mpa_rtr 7
runpair setuid setuid
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ "$(obj cep)" = 0 ]' 15

# --- perftest over the rdma_cm (-R), as apps.sh runs it
perf() {
	local name=$1 tool=$2 size=$3 n=$4
	api=
	ip netns exec vx1 timeout 120 stdbuf -oL "$tool" -R -F -d siw2_vx1 \
		-s "$size" -n "$n" -p $port >"$tmp/$name.s" 2>&1 &
	# A loaded TCG host may take a while to get perftest to its listen.
	if ! t_wait "listening vx1 $port" 60; then
		t_fail "perftest: $tool -R, $size B x$n between the namespaces" \
			"the server did not listen within 60 s" \
			"$(tail -n 4 "$tmp/$name.s")" \
			"$(ps -o pid,stat,wchan:32,args -C "$tool")"
		reap 0
		port=$((port + 1))
		return
	fi
	in2 timeout 60 stdbuf -oL "$tool" -R -F -d siw2_vx2 -s "$size" -n "$n" \
		-p $port $A4 >"$tmp/$name.c" 2>&1
	reap 30
	port=$((port + 1))
	if grep -Eq "^ *$size +$n +([0-9]|inf|-?nan)" "$tmp/$name.c"; then
		t_pass "perftest: $tool -R, $size B x$n between the namespaces"
	else
		t_fail "perftest: $tool -R, $size B x$n between the namespaces" \
			"$(tail -n 8 "$tmp/$name.c")" "--- server:" \
			"$(tail -n 4 "$tmp/$name.s")"
	fi
	api=$(grep -m 1 'ibv_wr\* API' "$tmp/$name.c" | sed 's/.*: *//')
	t_log "$tool: ibv_wr* API: ${api:-not printed}"
}

if command -v ib_write_bw >/dev/null; then
	perf pw ib_write_bw 4096 200
	wapi=$api
	perf pl ib_send_lat 64 200
	case "$wapi/$api" in
	ON/ON) t_pass "perftest posts through the ibv_wr* API" ;;
	# perftest 4.5-0.17 (verify_params_with_device_context()) keeps
	# ibv_wr* for ConnectX/BlueField (vendor part ids) and EFA and turns
	# it off for every other device, whatever the provider offers.
	OFF/OFF) t_skip "perftest posts through the ibv_wr* API" \
		"perftest turns it off for devices other than mlx5 and EFA: ibv_post_send used" ;;
	*) t_fail "perftest posts through the ibv_wr* API" \
		"ib_write_bw: '$wapi', ib_send_lat: '$api'" ;;
	esac
else
	t_skip "perftest" "no ib_write_bw (perftest)"
fi

# --- nothing left (closing is deferred work)
t_wait all_gone 15
for o in qp cq mr pd cep listener ucontext srq; do
	t_eq "no live $o after the tests" 0 "$(obj $o)"
done
t_ok "rdma link delete siw2_vx1" in1 rdma link delete siw2_vx1
t_ok "rdma link delete siw2_vx2" in2 rdma link delete siw2_vx2
t_eq "no live siw2 objects" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
