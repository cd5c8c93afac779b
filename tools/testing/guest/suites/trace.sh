#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# siw2's tracepoints (drivers/siw2/trace.h), read from the trace buffer
# with every siw2 event enabled: a connection (connect, request, accept,
# the MPA terms on both ends, the QP's states and their causes, the flush
# at its end), a reject both ways, a Terminate siw2 sends for a Write to
# a bad STag and one it receives (the raw peer, fpdu_peer.py), and the
# send engine stalling on a full socket and going on (a slow link). Each event is
# checked with its fields. Then: off again, nothing more is recorded.
. "$(dirname "$0")/../lib.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
fp=$here/peers/fpdu_peer.py
A=198.51.100.1
B=198.51.100.2
port=7900
tr=/sys/kernel/tracing

cleanup() {
	reap 0
	[ -d "$tr/events/siw2" ] && echo 0 >"$tr/events/siw2/enable"
	ip netns del tc1 2>/dev/null
	ip netns del tc2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
if [ ! -d "$tr/events/siw2" ]; then
	t_fail "tracefs has the siw2 events" "no $tr/events/siw2"
	t_done
	exit
fi
t_eq "the siw2 events" "siw2_cm_accept siw2_cm_connect siw2_cm_connect_fail siw2_cm_reject siw2_cm_rejected siw2_cm_request siw2_mpa_terms siw2_qp_flush siw2_qp_state siw2_term_rcvd siw2_term_sent siw2_tx_stall siw2_tx_unstall" \
	"$(find "$tr/events/siw2" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort | xargs)"
t_eq "they are off by default" 0 "$(cat "$tr/events/siw2/enable")"
for p in cm_test peer_target; do
	if ! t_prog $p >/dev/null; then
		t_fail "$p is built"
		t_done
		exit
	fi
done
cmt=$(t_prog cm_test)
pt=$(t_prog peer_target)

ns_pair tc1 v1 $A tc2 v2 $B
ip netns exec tc1 rdma link add siw2_t1 type siw2 netdev v1
ip netns exec tc2 rdma link add siw2_t2 type siw2 netdev v2
t_reach tc2 $A

echo 16384 >"$tr/buffer_size_kb"
echo >"$tr/trace"
echo 1 >"$tr/events/siw2/enable"
# ev NAME: the trace's lines of event NAME, from "NAME: " on.
ev() { sed -n "s/.* $1: //p" "$tr/trace"; }

# --- a connection, from tc2 (siw2_t2) to tc1 (siw2_t1)
ip netns exec tc1 timeout 60 rping -s -a $A -p $port -C 3 -V >"$tmp/s" 2>&1 &
t_listening tc1 $port
ip netns exec tc2 timeout 60 rping -c -a $A -p $port -C 3 -V >"$tmp/c" 2>&1
reap 20
t_match "connect: the initiator's addresses and QP" \
	"^dev=siw2_t2 laddr=$B:[0-9]+ raddr=$A:$port qpn=[0-9]+ status=0" \
	"$(ev siw2_cm_connect)"
t_match "request: the responder's view of the same addresses" \
	"^dev=siw2_t1 laddr=$A:$port raddr=$B:[0-9]+ qpn=0 status=0" \
	"$(ev siw2_cm_request)"
t_match "accept: the responder's QP" \
	"^dev=siw2_t1 laddr=$A:$port raddr=$B:[0-9]+ qpn=[1-9][0-9]* status=0" \
	"$(ev siw2_cm_accept)"
terms=$(ev siw2_mpa_terms)
t_match "mpa_terms: the initiator's (rev 2, CRC, no Markers, p2p, IRD/ORD)" \
	'^dev=siw2_t2 qpn=[0-9]+ initiator rev=2 enhanced=1 crc=1 markers_tx=0 markers_rx=0 p2p=1 large_fpdu=0 rtr=0x[1-7] ird=[0-9]+ ord=[0-9]+$' \
	"$terms"
t_match "mpa_terms: the responder's" \
	'^dev=siw2_t1 qpn=[0-9]+ responder rev=2 enhanced=1 crc=1 markers_tx=0 markers_rx=0 p2p=1 ' \
	"$terms"
states=$(ev siw2_qp_state | grep '^dev=siw2_t2 ')
t_match "qp_state: the CM takes the initiator's QP to RTS" \
	'qpn=[0-9]+ RTR -> RTS cause=cm' "$states"
t_match "qp_state: the disconnect takes it from RTS, its consumer's modify" \
	'RTS -> (SQD|ERR) cause=modify' "$states"
t_match "qp_state: and to ERR at the stream's end" \
	'-> ERR cause=llp_closed' "$states"
st='(RESET|INIT|RTR|RTS|SQD|SQE|ERR)'
t_eq "qp_state: every line names a change of state and its cause" "" \
	"$(ev siw2_qp_state | grep -Ev "^dev=siw2_t[12] qpn=[0-9]+ $st -> $st cause=(modify|cm|cm_fail|term_sent|term_rcvd|llp_closed|llp_error|ring|destroy)$")"
t_eq "qp_state: no line for a state the QP was in already" "" \
	"$(ev siw2_qp_state | awk '$3 == $5')"
t_match "qp_flush: the receives rping left posted are flushed" \
	'^dev=siw2_t[12] qpn=[0-9]+ sq=[0-9]+ rq=[1-9][0-9]*$' "$(ev siw2_qp_flush)"
port=$((port + 1))

# --- a reject, seen by both ends
echo >"$tr/trace"
ip netns exec tc1 timeout 60 "$cmt" server $A $port >"$tmp/rs" 2>&1 &
wait_for "$tmp/rs" LISTENING
ip netns exec tc2 timeout 60 "$cmt" client $A $port -d reject:no >"$tmp/rc" 2>&1
reap 20
t_match "reject: the responder's ULP rejected" \
	"^dev=siw2_t1 laddr=$A:$port raddr=$B:[0-9]+ qpn=0 status=0" \
	"$(ev siw2_cm_reject)"
t_match "rejected: the initiator hears -ECONNREFUSED" \
	"^dev=siw2_t2 laddr=$B:[0-9]+ raddr=$A:$port qpn=[0-9]+ status=-111" \
	"$(ev siw2_cm_rejected)"
t_match "connect_fail: the initiator's attempt ends with the same status" \
	"^dev=siw2_t2 .* status=-111" "$(ev siw2_cm_connect_fail)"
port=$((port + 1))

# --- a port nobody listens on
echo >"$tr/trace"
ip netns exec tc2 timeout 60 "$cmt" client $A 7999 -d nobody >/dev/null 2>&1
t_match "connect_fail: a refused TCP connect" \
	"^dev=siw2_t2 laddr=$B:[0-9]+ raddr=$A:7999 qpn=[0-9]+ status=-111" \
	"$(ev siw2_cm_connect_fail)"

# --- Terminates: one siw2 sends, one it receives (RFC 5040 4.8)
# peer SCENARIO: peer_target listens in tc1, the raw peer connects from
# tc2; sets P to the peer's output.
peer() {
	ip netns exec tc1 timeout 90 "$pt" server $A $port -T 60 \
		>"$tmp/$1.t" 2>&1 &
	wait_for "$tmp/$1.t" 'LISTENING|ERROR'
	ip netns exec tc2 timeout 80 python3 -S "$fp" connect $A $port "$1" \
		>"$tmp/$1.p" 2>&1
	reap 40
	P=$(cat "$tmp/$1.p")
	port=$((port + 1))
}
echo >"$tr/trace"
peer write-bad-stag
bad=$(sed -n 's/^sent write stag=0x\([0-9a-f]*\) .*/\1/p' <<<"$P" | head -n 1)
bad=$(printf '%x' "$((16#${bad:-0}))")
t_match "term_sent: DDP tagged, invalid STag, the offending header (RFC 5041 7.2)" \
	"^dev=siw2_t1 qpn=[0-9]+ layer=ddp etype=1 ecode=0x00 hdrctl=MD seg_len=[0-9]+ ddp_ctrl=0x[0-9a-f]+ rdmap_ctrl=0x[0-9a-f]+ tagged stag=0x$bad to=0x[0-9a-f]+ qn=0 msn=0 mo=0$" \
	"$(ev siw2_term_sent)"
t_match "qp_state: the Terminate's QP goes to ERR for it" \
	'^dev=siw2_t1 qpn=[0-9]+ RTS -> ERR cause=term_sent' "$(ev siw2_qp_state)"
echo >"$tr/trace"
peer send-term
t_match "term_rcvd: the peer's cause (RDMAP, remote operation, 0xff)" \
	'^dev=siw2_t1 qpn=[0-9]+ layer=rdmap etype=2 ecode=0xff hdrctl=' \
	"$(ev siw2_term_rcvd)"
t_match "qp_state: the receiving QP goes to ERR for it" \
	'^dev=siw2_t1 qpn=[0-9]+ RTS -> ERR cause=term_rcvd' "$(ev siw2_qp_state)"
t_eq "term_sent: none back for a received Terminate (RFC 5040 5.4)" "" \
	"$(ev siw2_term_sent)"

# --- backpressure: 1 MiB Writes through a send buffer of 16 KiB at most
# (the namespace's tcp_wmem, which siw2's kernel sockets take too) and a
# link of 50 Mbit/s (netem). Over a bare veth pair the receiver runs in
# the sender's own softirq and the socket never fills.
ip netns exec tc2 sysctl -qw net.ipv4.tcp_wmem="4096 16384 16384"
ip netns exec tc2 tc qdisc add dev v2 root netem rate 50mbit
echo >"$tr/trace"
ip netns exec tc1 timeout 60 ib_write_bw -R -F -d siw2_t1 -s 1048576 -n 10 \
	-p $port >"$tmp/bw.s" 2>&1 &
t_listening tc1 $port
ip netns exec tc2 timeout 60 ib_write_bw -R -F -d siw2_t2 -s 1048576 -n 10 \
	-p $port $A >"$tmp/bw.c" 2>&1
reap 20
ip netns exec tc2 tc qdisc del dev v2 root
t_match "backpressure: ib_write_bw completes" '^ 1048576 +10 ' "$(cat "$tmp/bw.c")"
stall=$(ev siw2_tx_stall) unstall=$(ev siw2_tx_unstall)
t_match "tx_stall: the writer's engine stops on a full socket" \
	'^dev=siw2_t2 qpn=[0-9]+ pending=[1-9][0-9]*$' "$stall"
t_match "tx_unstall: and goes on" '^dev=siw2_t2 qpn=[0-9]+ pending=0$' \
	"$unstall"
d=$(($(grep -c . <<<"$stall") - $(grep -c . <<<"$unstall")))
t_ok "tx_stall and tx_unstall pair up (one stall open at most)" \
	test "$d" -ge 0 -a "$d" -le 1

# --- off again
echo 0 >"$tr/events/siw2/enable"
echo >"$tr/trace"
a0=$(cnt cm_accepted)
ip netns exec tc1 timeout 60 rping -s -a $A -p $port -C 1 >/dev/null 2>&1 &
t_listening tc1 $port
ip netns exec tc2 timeout 60 rping -c -a $A -p $port -C 1 >/dev/null 2>&1
reap 20
t_eq "disabled: a connection was made" $((a0 + 1)) "$(cnt cm_accepted)"
t_eq "disabled: it left nothing in the buffer" "" \
	"$(grep -v '^#' "$tr/trace" | grep siw2_)"

ip netns exec tc1 rdma link delete siw2_t1
ip netns exec tc2 rdma link delete siw2_t2
t_ok "modprobe -r siw2" modprobe -r siw2
t_done
