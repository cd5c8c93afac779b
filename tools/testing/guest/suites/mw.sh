#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory windows (issue 43) between two hosts: network namespaces mw1
# (198.51.100.1, the windows' owner) and mw2 (.2, the peer) joined by a
# veth pair, a siw2 device in each. progs/mw_test.c checks the device's
# capabilities and the windows' objects, then runs each scenario as an
# owner and a peer process on connections of their own (most end with a
# QP in error): type 1 and type 2 binds through ibv_bind_mw,
# IBV_WR_BIND_MW and ibv_wr_bind_mw, and the peer's Writes, Reads and
# atomics they let through, data checked at both ends; accesses refused
# (outside the window, without the right, a wrong key, a window never
# bound, unbound, rebound, invalidated or deallocated, a type 2 window
# over another QP), with no octet of the owner's MR changed; binds that
# fail with IBV_WC_MW_BIND_ERR and other local errors; ibv_dereg_mr's
# EBUSY; ibv_dealloc_mw while a 64 MiB Write arrives. For each refusal the
# siw2_term_sent tracepoint shows the owner's Terminate (its layer, type
# and code logged) and the device's term_sent counter counts it. No siw2
# object, windows included, is left at the end.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A=198.51.100.1
B=198.51.100.2
port=8600
tr=/sys/kernel/tracing
ev=$tr/events/siw2/siw2_term_sent

in1() { ip netns exec mw1 "$@"; }
in2() { ip netns exec mw2 "$@"; }

cleanup() {
	reap 0
	[ -d "$ev" ] && echo 0 >"$ev/enable"
	ip netns del mw1 2>/dev/null
	ip netns del mw2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! mwt=$(t_prog mw_test); then
	t_fail "mw_test is built"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
tracing=false
if [ -d "$ev" ]; then
	echo 1 >"$ev/enable"
	tracing=true
else
	t_fail "tracefs has the siw2_term_sent event" "no $ev"
fi
ns_pair mw1 mwv1 $A mw2 mwv2 $B
t_ok "rdma link add in mw1" in1 rdma link add siw2_mw1 type siw2 netdev mwv1
t_ok "rdma link add in mw2" in2 rdma link add siw2_mw2 type siw2 netdev mwv2
t_reach mw2 $A

# --- the device and the windows as objects, no connection (in this
# namespace, where debugfs is: the RDMA devices are shared by all)
timeout 60 "$mwt" caps siw2_mw1 -T 20 >"$tmp/caps" 2>&1
st=$?
t_lines caps <"$tmp/caps"
grep -q '^caps DONE' "$tmp/caps" ||
	t_fail "caps: the program ran to its end (exit $st)" \
		"$(tail -n 5 "$tmp/caps")"

# The owner's Terminates in the trace, from "dev=" on.
terms() {
	sed -n 's/.* siw2_term_sent: //p' "$tr/trace" | grep '^dev=siw2_mw1 '
}
# The owner device's term_sent counter (its port's hardware counters).
term_count() {
	cat /sys/class/infiniband/siw2_mw1/ports/1/hw_counters/term_sent
}

# scenario NAME TERMS [CLASS]: mw_test -s NAME, the owner in mw1 and the
# peer in mw2; each of their PASS/FAIL/SKIP lines is a check. TERMS is
# how many Terminates the owner sends ("-": not looked at); each must
# match CLASS (default: a protection error, RFC 5041's tagged buffer
# error or RFC 5040's remote protection error).
scenario() {
	local name=$1 want=$2 class=${3:-'layer=(ddp|rdmap) etype=1 '}
	local st c0 t n line
	if $tracing; then
		echo >"$tr/trace"
	fi
	c0=$(term_count)
	in1 timeout 120 "$mwt" -s "$name" server $A $port -T 30 \
		>"$tmp/$name.s" 2>&1 &
	if ! wait_for "$tmp/$name.s" 'LISTENING|ERROR' 20 ||
	   ! grep -q LISTENING "$tmp/$name.s"; then
		t_fail "$name: the owner listens" "$(cat "$tmp/$name.s")"
		reap 0
		port=$((port + 1))
		return
	fi
	in2 timeout 120 "$mwt" -s "$name" client $A $port -T 30 \
		>"$tmp/$name.c" 2>&1
	st=$?
	reap 30
	port=$((port + 1))
	t_lines "$name" <"$tmp/$name.s"
	t_lines "$name" <"$tmp/$name.c"
	grep -q '^owner: DONE' "$tmp/$name.s" ||
		t_fail "$name: the owner's process ran to its end" \
			"$(tail -n 5 "$tmp/$name.s")"
	grep -q '^peer: DONE' "$tmp/$name.c" ||
		t_fail "$name: the peer's process ran to its end (exit $st)" \
			"$(tail -n 5 "$tmp/$name.c")"
	[ "$want" = - ] && return
	if grep -q '^SKIP ' "$tmp/$name.s"; then
		t_skip "$name: the owner sent $want Terminate(s)" \
			"the scenario did not get that far"
		return
	fi
	t_eq "$name: the term_sent counter of siw2_mw1 counts $want Terminate(s)" \
		"$((${c0:-0} + want))" "$(term_count)"
	$tracing || return
	t=$(terms)
	while IFS= read -r line; do
		[ -n "$line" ] && t_log "$name: Terminate sent: $(grep -Eo \
			'qpn=[0-9]+ layer=[a-z]+ etype=[0-9]+ ecode=0x[0-9a-f]+' \
			<<<"$line")"
	done <<<"$t"
	n=$(grep -c . <<<"$t")
	t_eq "$name: siw2_term_sent fired $want time(s) for the owner (siw2_mw1)" \
		"$want" "$n"
	if [ "$n" -gt 0 ]; then
		t_eq "$name: each Terminate is of the class /$class/" "" \
			"$(grep -Ev -- "$class" <<<"$t")"
	fi
}

scenario type1 1
scenario unbind 1
scenario unbound 1
scenario outside 1
scenario readonly 1
scenario wrongkey 1
scenario dealloc 1
scenario type2 2
scenario type2x 1
# RFC 5040 5.3: a Send with Invalidate of an STag that may not be
# invalidated is an RDMAP error.
scenario t1sinv 1 'layer=rdmap '
scenario dereg 0
scenario localerr -
for _ in $(seq "$(t_depth 1 3)"); do
	scenario race 1
done

# --- nothing left (closing is deferred work)
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait 'all_gone && [ "$(obj mw)" = 0 ]' 15
for o in qp cq mr mw pd cep listener ucontext srq; do
	t_eq "no live $o after the tests" 0 "$(obj $o)"
done
t_ok "rdma link delete siw2_mw1" in1 rdma link delete siw2_mw1
t_ok "rdma link delete siw2_mw2" in2 rdma link delete siw2_mw2
t_eq "no live siw2 objects" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ended "no mw_test process is left" mw_test
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
