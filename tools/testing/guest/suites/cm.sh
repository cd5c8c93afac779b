#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The iWARP connection manager between two hosts: network namespaces cm1
# (198.51.100.1, 2001:db8::1) and cm2 (.2, ::2) joined by a veth pair, a
# siw2 device in each. Checked through librdmacm (cm_test.c): connect,
# accept and reject with Private Data both ways, IRD/ORD, IPv4 and IPv6,
# wildcard listens shared by devices, afonly, a port without listener,
# listener teardown with pending requests, device removal under live
# connections. Through a raw TCP peer (mpa_peer.py): valid and invalid
# Requests, silence, a responder without RFC 6581 (revision 1 fallback),
# a silent or resetting responder, TCP connect and MPA timeouts. Then
# module unload with a live listener and pending connection. Every
# endpoint and listener is gone at the end (/sys/kernel/debug/siw2).
#
# Frames are checked octet for octet, most of them with the peer-to-peer
# RTR off (mpa_p2p=0); the RFC 6581 section turns it on. Data transfer is
# the apps and hostile suites' business.
. "$(dirname "$0")/../lib.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
pyp=$here/peers/mpa_peer.py
dbg=/sys/kernel/debug/siw2
A4=198.51.100.1
A6=2001:db8::1

in1() { ip netns exec cm1 "$@"; }
in2() { ip netns exec cm2 "$@"; }
# Endpoints and listeners drain (closing is deferred work).
# shellcheck disable=SC2016 # t_wait evaluates it
ceps_gone() { t_wait '[ "$(obj cep)" = 0 ]' "${1:-10}"; }

cleanup() {
	reap 0
	ip netns del cm1 2>/dev/null
	ip netns del cm2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! cmt=$(t_prog cm_test); then
	t_fail "cm_test is built"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
siw2_set mpa_p2p 0
modprobe rdma_ucm 2>/dev/null
ns_pair cm1 v1 $A4 cm2 v2 198.51.100.2
in1 ip addr add $A6/64 dev v1 nodad
in2 ip addr add 2001:db8::2/64 dev v2 nodad
t_ok "rdma link add in cm1" in1 rdma link add siw2_a type siw2 netdev v1
t_ok "rdma link add in cm2" in2 rdma link add siw2_b type siw2 netdev v2
t_reach cm2 $A4

# --- connect and accept, Private Data both ways, IRD/ORD
ip netns exec cm1 timeout 60 "$cmt" server $A4 7471 >"$tmp/s1" 2>&1 &
wait_for "$tmp/s1" LISTENING
in2 timeout 60 "$cmt" client $A4 7471 -d accept:welcome-v4 -i 6 -o 5 \
	-w 300 >"$tmp/c1" 2>&1
reap 20
s1=$(cat "$tmp/s1") c1=$(cat "$tmp/c1")
t_match "IPv4: the server gets the request with its Private Data" \
	'CONNECT_REQUEST status=0 pdata_len=17 pdata=accept:welcome-v4' "$s1"
# The server may use an ORD up to the client's IRD (6) and needs an IRD
# for the client's ORD (5); cm_test prints responder resources as ird.
t_match "IPv4: the request carries the client's IRD/ORD (RFC 6581)" \
	'CONNECT_REQUEST .* ird=5 ord=6' "$s1"
t_match "IPv4: the client is established with the reply's Private Data" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=10 pdata=welcome-v4' "$c1"
# The server accepted with IRD 4 and ORD 4: the client's ORD drops to 4.
t_match "IPv4: the client's ORD follows the server's IRD" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED .* ird=6 ord=4' "$c1"
t_match "IPv4: the server is established" \
	'server EVENT RDMA_CM_EVENT_ESTABLISHED status=0' "$s1"
t_match "IPv4: the client sees its disconnect" \
	'client EVENT RDMA_CM_EVENT_DISCONNECTED' "$c1"
t_match "IPv4: the server sees the disconnect" \
	'server EVENT RDMA_CM_EVENT_DISCONNECTED' "$s1"
t_ok "IPv4: endpoints gone after the disconnect" ceps_gone

# --- reject with Private Data
ip netns exec cm1 timeout 60 "$cmt" server $A4 7472 >"$tmp/s2" 2>&1 &
wait_for "$tmp/s2" LISTENING
in2 timeout 60 "$cmt" client $A4 7472 -d reject:no-thanks >"$tmp/c2" 2>&1
reap 20
t_match "reject: the client gets REJECTED (-ECONNREFUSED) with Private Data" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-111 pdata_len=9 pdata=no-thanks' \
	"$(cat "$tmp/c2")"

# --- a QP takes the next connection once reset: each side sends a
# message on its first, takes the QP through RESET to INIT and connects
# (or accepts) again with it; a QP still connected is refused by the next
# rdma_connect before anything reaches the peer
ip netns exec cm1 timeout 60 "$cmt" server $A4 7479 -n 2 -r \
	>"$tmp/s_again" 2>&1 &
wait_for "$tmp/s_again" LISTENING
in2 timeout 60 "$cmt" client $A4 7479 -d accept:again -r >"$tmp/c_again" 2>&1
reap 20
t_eq "QP reused: a message on each of two connections" 2 \
	"$(grep -c 'client SEND status=0' "$tmp/c_again")"
t_eq "QP reused: the server accepted twice with one QP" "2 1" \
	"$(grep -c 'server ACCEPT qp=' "$tmp/s_again") $(grep 'server ACCEPT qp=' "$tmp/s_again" | sort -u | wc -l)"
t_eq "QP reused: the server saw the end, with no error" "1 0" \
	"$(grep -c 'server DONE' "$tmp/s_again") $(grep -c ERROR "$tmp/s_again")"
ip netns exec cm1 timeout 60 "$cmt" server $A4 7479 >"$tmp/s_once" 2>&1 &
wait_for "$tmp/s_once" LISTENING
in2 timeout 60 "$cmt" client $A4 7479 -d accept:once -R >"$tmp/c_once" 2>&1
reap 20
conce=$(cat "$tmp/c_once")
t_match "connected QP: a message on the first connection" \
	'client SEND status=0' "$conce"
t_match "connected QP: a second rdma_connect fails with EINVAL" \
	'ERROR rdma_connect: Invalid argument' "$conce"
t_eq "connected QP: the server saw one request" 1 \
	"$(grep -c CONNECT_REQUEST "$tmp/s_once")"

# --- a port nobody listens on
in2 timeout 60 "$cmt" client $A4 7999 -d nobody >"$tmp/c3" 2>&1
t_match "no listener: REJECTED with -ECONNREFUSED" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-111' "$(cat "$tmp/c3")"

# --- IPv6
ip netns exec cm1 timeout 60 "$cmt" server $A6 7473 >"$tmp/s4" 2>&1 &
wait_for "$tmp/s4" LISTENING
in2 timeout 60 "$cmt" client $A6 7473 -d accept:welcome-v6 -w 300 \
	>"$tmp/c4" 2>&1
reap 20
t_match "IPv6: the server gets the request" \
	'CONNECT_REQUEST status=0 pdata_len=17 pdata=accept:welcome-v6' \
	"$(cat "$tmp/s4")"
t_match "IPv6: established with the reply's Private Data" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=10 pdata=welcome-v6' \
	"$(cat "$tmp/c4")"
t_match "IPv6: disconnected" 'client EVENT RDMA_CM_EVENT_DISCONNECTED' \
	"$(cat "$tmp/c4")"

# --- wildcard listens: a second device in cm1 shares the port
in1 ip link add d1 type dummy
in1 ip addr add 192.0.2.1/24 dev d1
in1 ip link set d1 up
t_ok "a second device in cm1" in1 rdma link add siw2_c type siw2 netdev d1
ip netns exec cm1 timeout 60 "$cmt" server any 7474 >"$tmp/s5" 2>&1 &
if wait_for "$tmp/s5" 'LISTENING|ERROR'; then
	t_match "wildcard: listening on every device succeeds" LISTENING \
		"$(cat "$tmp/s5")"
	# siw2_a and siw2_c share cm1's socket, siw2_b has its own in cm2:
	# three listeners and two sockets.
	t_eq "wildcard: 3 device listeners on 2 sockets" 5 "$(obj listener)"
	in2 timeout 60 "$cmt" client $A4 7474 -d accept:wild -w 300 \
		>"$tmp/c5" 2>&1
	t_match "wildcard: a connection reaches the right device" \
		'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=4 pdata=wild' \
		"$(cat "$tmp/c5")"
else
	t_fail "wildcard: listening on every device succeeds" "$(cat "$tmp/s5")"
fi
reap 20
t_eq "wildcard: listeners gone with the server" 0 "$(obj listener)"

# IPv6 wildcard, dual stack (afonly off) and IPv6 only.
ip netns exec cm1 timeout 60 "$cmt" server :: 7475 >"$tmp/s6" 2>&1 &
wait_for "$tmp/s6" LISTENING
in2 timeout 60 "$cmt" client $A4 7475 -d accept:dual -w 300 >"$tmp/c6" 2>&1
reap 20
t_match "[::] without afonly takes IPv4" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=4 pdata=dual' \
	"$(cat "$tmp/c6")"
ip netns exec cm1 timeout 30 "$cmt" server :: 7476 -6only -T 30 \
	>"$tmp/s7" 2>&1 &
wait_for "$tmp/s7" LISTENING
in2 timeout 60 "$cmt" client $A4 7476 -d accept:v4 >"$tmp/c7" 2>&1
t_match "[::] with afonly refuses IPv4" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-111' "$(cat "$tmp/c7")"
in2 timeout 60 "$cmt" client $A6 7476 -d accept:v6 -w 300 >"$tmp/c8" 2>&1
t_match "[::] with afonly takes IPv6" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0' "$(cat "$tmp/c8")"
reap 20
t_ok "rdma link delete siw2_c" in1 rdma link delete siw2_c
t_ok "endpoints gone after the wildcard tests" ceps_gone

# --- a raw peer against a siw2 listener
siw2_set mpa_request_timeout_ms 2000
ip netns exec cm1 timeout 90 "$cmt" server $A4 7477 -n 2 -T 60 \
	>"$tmp/s8" 2>&1 &
wait_for "$tmp/s8" LISTENING
out=$(in2 timeout 60 python3 -S "$pyp" request $A4 7477 --pdata reject:raw-no)
t_match "raw: a valid Request reaches the ULP" \
	'CONNECT_REQUEST status=0 pdata_len=13 pdata=reject:raw-no' \
	"$(cat "$tmp/s8")"
t_match "raw: the reject Reply has R, revision 2 and the Private Data" \
	'peer reply key=MPA_ID_Rep_Frame flags=0x70 rev=2 pdata=raw-no ird=0x0080 ord=0x0080' \
	"$out"
t_match "raw: siw2 closes gracefully after a reject" 'peer end CLOSED' "$out"

bad=$(cnt cm_bad_frame)
out=$(in2 timeout 60 python3 -S "$pyp" request $A4 7477 --key bad --pdata accept:x)
t_match "raw: an invalid Key gets the connection reset" 'peer reply RESET' \
	"$out"
t_eq "raw: the invalid Request is counted" $((bad + 1)) \
	"$(cnt cm_bad_frame)"
t_ok "raw: no endpoint left by the invalid Request" ceps_gone

tmo=$(cnt cm_mpa_request_timeout)
out=$(in2 timeout 60 python3 -S "$pyp" silent $A4 7477)
t_match "raw: a silent peer is reset after mpa_request_timeout_ms (2 s)" \
	'peer silent RESET after [2-5]\.[0-9] s' "$out"
t_eq "raw: the timeout is counted" $((tmo + 1)) \
	"$(cnt cm_mpa_request_timeout)"

out=$(in2 timeout 60 python3 -S "$pyp" request $A4 7477 --rev 1 --pdata accept:raw-yes)
t_match "raw: a revision 1 Request is accepted with a revision 1 Reply" \
	'peer reply key=MPA_ID_Rep_Frame flags=0x40 rev=1 pdata=raw-yes ird=- ord=-' \
	"$out"
reap 30
s8=$(cat "$tmp/s8")
t_match "raw: the server saw the revision 1 connection end" \
	'server EVENT RDMA_CM_EVENT_DISCONNECTED' "$s8"
t_eq "raw: exactly the two valid Requests reached the ULP" 2 \
	"$(grep -c CONNECT_REQUEST <<<"$s8")"
t_ok "raw: no endpoint left" ceps_gone
siw2_set mpa_request_timeout_ms 10000

# --- listener teardown with pending requests
ip netns exec cm1 timeout 60 "$cmt" server $A4 7478 -t >"$tmp/s9" 2>&1 &
wait_for "$tmp/s9" LISTENING
ip netns exec cm2 timeout 60 python3 -S "$pyp" silent $A4 7478 \
	>"$tmp/p9" 2>&1 &
# The silent connection waits for its Request before the client comes.
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ "$(obj cep)" = 1 ]' 20
ip netns exec cm2 timeout 60 "$cmt" client $A4 7478 -d hold \
	>"$tmp/c9" 2>&1 &
reap 30
t_match "teardown: the held request reached the server" \
	'CONNECT_REQUEST status=0 pdata_len=4 pdata=hold' "$(cat "$tmp/s9")"
t_match "teardown: accepting after the listener went fails" \
	'ACCEPT_AFTER_TEARDOWN failed' "$(cat "$tmp/s9")"
t_match "teardown: the waiting client is rejected (reset)" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-104' "$(cat "$tmp/c9")"
t_match "teardown: a connection without Request is reset at once" \
	'peer silent RESET after [0-7]\.[0-9] s' "$(cat "$tmp/p9")"
t_ok "teardown: no endpoint left" ceps_gone
t_eq "teardown: no listener left" 0 "$(obj listener)"

# --- cve class: connections torn down while their CM work is queued.
# Each connection of the churn ends (reset or FIN) at another step of the
# MPA setup while the server still answers the one before; then the
# server is killed with a second churn under way, so that its listener
# and the endpoints of the requests go while their work is queued.
n='cve class: a connection torn down while its CM work is queued'
dm0=$(dmesg | wc -l)
ip netns exec cm1 timeout 120 "$cmt" server $A4 7479 -n 100000 -T 30 \
	>"$tmp/s10" 2>&1 &
srv=$!
wait_for "$tmp/s10" LISTENING
in2 timeout 60 python3 -S "$pyp" churn $A4 7479 --count 60 \
	--pdata accept:churn >"$tmp/p10" 2>&1
t_match "$n: the peer made every connection" \
	'^peer churn before=12 within=12 after=12 fin=12 reply=12$' \
	"$(cat "$tmp/p10")"
in2 timeout 30 "$cmt" client $A4 7479 -d accept:after -w 200 \
	>"$tmp/c10" 2>&1
t_match "$n: the listener still accepts after it" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED' "$(cat "$tmp/c10")"
r0=$(grep -c CONNECT_REQUEST "$tmp/s10")
ip netns exec cm2 timeout 60 python3 -S "$pyp" churn $A4 7479 --count 100 \
	--pdata accept:churn >"$tmp/p11" 2>&1 &
# Killed once the second churn's requests reach it.
t_wait "[ \$(grep -c CONNECT_REQUEST '$tmp/s10') -ge $((r0 + 5)) ]" 30
kill "$srv"
reap 40
t_match "$n: the server saw requests of the churn" \
	'CONNECT_REQUEST status=0 pdata_len=12 pdata=accept:churn' \
	"$(cat "$tmp/s10")"
t_ok "$n: no endpoint left" ceps_gone 20
t_eq "$n: no listener left" 0 "$(obj listener)"
t_nomatch "$n: the kernel reported nothing" \
	'BUG|WARNING|Oops|refcount_t|use-after-free|general protection' \
	"$(dmesg | tail -n +$((dm0 + 1)))"

# --- a raw responder against a siw2 initiator
retry=$(cnt cm_rev1_retry)
ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7480 \
	--mode rev1only --count 2 --pdata ok-rev1 >"$tmp/p10" 2>&1 &
wait_for "$tmp/p10" LISTENING
in2 timeout 60 "$cmt" client $A4 7480 -d hello -w 300 >"$tmp/c10" 2>&1
reap 20
p10=$(cat "$tmp/p10")
t_match "rev1 fallback: the first Request is revision 2" \
	'peer request key=MPA_ID_Req_Frame flags=0x50 rev=2 pdata=hello ird=0x0008 ord=0x0008' \
	"$p10"
t_match "rev1 fallback: after the close, revision 1 (RFC 6581 10)" \
	'peer request key=MPA_ID_Req_Frame flags=0x40 rev=1 pdata=hello ird=- ord=-' \
	"$p10"
t_match "rev1 fallback: established" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=7 pdata=ok-rev1' \
	"$(cat "$tmp/c10")"
t_eq "rev1 fallback: counted once" $((retry + 1)) "$(cnt cm_rev1_retry)"

ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7481 \
	--mode reject --pdata raw-reject >"$tmp/p11" 2>&1 &
wait_for "$tmp/p11" LISTENING
in2 timeout 60 "$cmt" client $A4 7481 -d hi >"$tmp/c11" 2>&1
reap 20
t_match "raw reject: REJECTED with the responder's Private Data" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-111 pdata_len=10 pdata=raw-reject' \
	"$(cat "$tmp/c11")"

ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7482 \
	--mode reset >"$tmp/p12" 2>&1 &
wait_for "$tmp/p12" LISTENING
in2 timeout 60 "$cmt" client $A4 7482 -d hi >"$tmp/c12" 2>&1
reap 20
t_match "peer reset during MPA: REJECTED with -ECONNRESET" \
	'client EVENT RDMA_CM_EVENT_REJECTED status=-104' "$(cat "$tmp/c12")"
t_eq "peer reset during MPA: no revision 1 retry" $((retry + 1)) \
	"$(cnt cm_rev1_retry)"

siw2_set mpa_reply_timeout_ms 2000
ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7483 \
	--mode silent >"$tmp/p13" 2>&1 &
wait_for "$tmp/p13" LISTENING
start=$(date +%s)
in2 timeout 60 "$cmt" client $A4 7483 -d hi >"$tmp/c13" 2>&1
took=$(($(date +%s) - start))
reap 5
t_match "silent responder: UNREACHABLE (-ETIMEDOUT)" \
	'client EVENT RDMA_CM_EVENT_UNREACHABLE status=-110' "$(cat "$tmp/c13")"
if [ "$took" -lt 15 ]; then
	t_pass "silent responder: after mpa_reply_timeout_ms (${took} s)"
else
	t_fail "silent responder: after mpa_reply_timeout_ms" "took ${took} s"
fi
siw2_set mpa_reply_timeout_ms 20000

siw2_set tcp_timeout_ms 2000
tcpt=$(cnt cm_tcp_timeout)
ip netns exec cm1 timeout 60 python3 -S "$pyp" fill $A4 7484 \
	>"$tmp/p14" 2>&1 &
wait_for "$tmp/p14" FULL
in2 timeout 60 "$cmt" client $A4 7484 -d hi >"$tmp/c14" 2>&1
reap 0
t_match "SYNs dropped: UNREACHABLE (-ETIMEDOUT)" \
	'client EVENT RDMA_CM_EVENT_UNREACHABLE status=-110' "$(cat "$tmp/c14")"
t_eq "SYNs dropped: the TCP timeout is counted" $((tcpt + 1)) \
	"$(cnt cm_tcp_timeout)"
siw2_set tcp_timeout_ms 10000
t_ok "active side: no endpoint left" ceps_gone

# --- RFC 6581: IRD/ORD that cannot be met, peer-to-peer RTR
ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7488 --mode accept \
	--ird-ord 4,32 >"$tmp/p17" 2>&1 &
wait_for "$tmp/p17" LISTENING
in2 timeout 60 "$cmt" client $A4 7488 -d hi -i 8 >"$tmp/c17" 2>&1
reap 20
t_match "responder ORD above our IRD: CONNECT_ERROR (-EPROTO)" \
	'client EVENT RDMA_CM_EVENT_CONNECT_ERROR status=-71' "$(cat "$tmp/c17")"
t_match "responder ORD above our IRD: a Terminate, LLP/MPA code 6 (RFC 6581 9.1)" \
	'peer fpdu len=[0-9]+ ctrl=..47 term=2006' "$(cat "$tmp/p17")"

siw2_set mpa_p2p 1
ip netns exec cm1 timeout 60 python3 -S "$pyp" respond $A4 7489 --mode accept \
	--pdata p2p-ok >"$tmp/p18" 2>&1 &
wait_for "$tmp/p18" LISTENING
in2 timeout 60 "$cmt" client $A4 7489 -d hi -w 300 >"$tmp/c18" 2>&1
reap 20
t_match "mpa_p2p: the Request has A and every RTR (B, C, D)" \
	'peer request key=MPA_ID_Req_Frame flags=0x50 rev=2 pdata=hi ird=0xc008 ord=0xc008' \
	"$(cat "$tmp/p18")"
t_match "mpa_p2p: established with a responder offering a Write RTR" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=6 pdata=p2p-ok' \
	"$(cat "$tmp/c18")"
ip netns exec cm1 timeout 60 "$cmt" server $A4 7490 >"$tmp/s19" 2>&1 &
wait_for "$tmp/s19" LISTENING
in2 timeout 60 "$cmt" client $A4 7490 -d accept:p2p -w 300 >"$tmp/c19" 2>&1
reap 20
t_match "mpa_p2p: siw2 to siw2" \
	'client EVENT RDMA_CM_EVENT_ESTABLISHED status=0 pdata_len=3 pdata=p2p' \
	"$(cat "$tmp/c19")"
siw2_set mpa_p2p 0
t_ok "RFC 6581 tests: no endpoint left" ceps_gone

# --- rping (librdmacm's own QP handling) gets as far as ESTABLISHED
if command -v rping >/dev/null; then
	# stdbuf: rping ends by timeout(1), its output must not wait in a buffer.
	ip netns exec cm1 timeout 20 stdbuf -oL rping -s -a $A4 -p 7485 -d \
		>"$tmp/r1" 2>&1 &
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait '[ "$(obj listener)" -gt 0 ]' 20
	in2 timeout 10 stdbuf -oL rping -c -a $A4 -p 7485 -C 1 -d \
		>"$tmp/r2" 2>&1
	reap 20
	t_match "rping: the client is established" ESTABLISHED \
		"$(cat "$tmp/r2")"
	t_match "rping: the server is established" ESTABLISHED \
		"$(cat "$tmp/r1")"
	t_ok "rping: no endpoint left" ceps_gone 20
else
	t_skip "rping reaches ESTABLISHED" "no rping"
fi

# --- device removal under a live connection
ip netns exec cm1 timeout 90 "$cmt" server $A4 7486 -T 80 >"$tmp/s15" 2>&1 &
spid=$!
wait_for "$tmp/s15" LISTENING
ip netns exec cm2 timeout 90 "$cmt" client $A4 7486 -d accept:stay \
	-w 60000 -T 80 >"$tmp/c15" 2>&1 &
if wait_for "$tmp/c15" ESTABLISHED; then
	ip netns exec cm1 timeout 60 rdma link delete siw2_a >"$tmp/del" 2>&1 &
	dpid=$!
	# The RDMA core tells the server, then waits for it to let go.
	wait_for "$tmp/s15" DEVICE_REMOVAL
	kill "$spid" 2>/dev/null
	if wait "$dpid"; then
		t_pass "device removal with a live connection"
	else
		t_fail "device removal with a live connection" "$(cat "$tmp/del")"
	fi
	wait_for "$tmp/c15" DISCONNECTED
	t_match "device removal: the peer sees the disconnect" \
		'client EVENT RDMA_CM_EVENT_DISCONNECTED' "$(cat "$tmp/c15")"
else
	t_fail "device removal: connection established" "$(cat "$tmp/c15")"
fi
reap 30
t_ok "rdma link delete siw2_b" in2 rdma link delete siw2_b
t_eq "no live siw2 objects" "$(siw2_objects_zero)" "$(cat "$dbg/objects")"

# --- module unload with a listener and a pending connection
t_ok "re-add siw2_a" in1 rdma link add siw2_a type siw2 netdev v1
ip netns exec cm1 timeout 60 "$cmt" server any 7487 -T 50 >"$tmp/s16" 2>&1 &
wait_for "$tmp/s16" LISTENING
ip netns exec cm2 timeout 60 python3 -S "$pyp" silent $A4 7487 \
	>"$tmp/p16" 2>&1 &
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ "$(obj cep)" = 1 ]' 10
t_eq "unload: one pending endpoint" 1 "$(obj cep)"
t_ok "modprobe -r siw2 with a listener and a pending connection" \
	modprobe -r siw2
wait_for "$tmp/p16" 'peer silent' 10
t_match "unload: the pending connection was reset" 'peer silent RESET' \
	"$(cat "$tmp/p16")"
reap 0

t_done
