#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A hostile peer on the data path. Network namespaces hp1 (198.51.100.1,
# a siw2 device, peer_target.c) and hp2 (198.51.100.2, plain TCP, the raw
# FPDU peer fpdu_peer.py) joined by a veth pair. After a regular MPA setup
# the raw peer sends FPDUs that break one rule each; siw2 must answer with
# the Terminate the RFCs name (RFC 5040 4.8, RFC 5041 7.2, RFC 5044 8) and
# close the stream, and the siw2 side must see its receives flushed and
# the disconnect. Valid traffic (Send, Read, Write) works against the same
# peer, both as MPA initiator and responder. The debugfs counters
# term_sent and term_rcvd move by exactly what went over the wire, and no
# QP or endpoint is left at the end. The guest runner fails the run on any
# kernel warning.
#
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
fp=$here/peers/fpdu_peer.py
dbg=/sys/kernel/debug/siw2
params=/sys/module/siw2/parameters
A=198.51.100.1
B=198.51.100.2

in1() { ip netns exec hp1 "$@"; }
in2() { ip netns exec hp2 "$@"; }
# shellcheck disable=SC2016 # t_wait evaluates it
gone() { t_wait '[ "$(obj cep)" = 0 ] && [ "$(obj qp)" = 0 ]' "${1:-10}"; }

p2p0=''
cleanup() {
	reap 0
	[ -n "$p2p0" ] && siw2_set mpa_p2p "$p2p0"
	ip netns del hp1 2>/dev/null
	ip netns del hp2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
t_ok "debugfs counts Terminates (term_sent, term_rcvd)" \
	grep -q '^term_rcvd ' "$dbg/counters"
# The cases set mpa_p2p themselves; cleanup restores it.
p2p0=$(cat "$params/mpa_p2p")

if ! pt=$(t_prog peer_target); then
	t_fail "peer_target is built"
	t_done
	exit
fi
t_ok "fpdu_peer.py: CRC32c and FPDU layout (RFC 3720 B.4, RFC 5044 Fig. 5)" \
	python3 -S "$fp" selftest

ns_pair hp1 v1 $A hp2 v2 $B
t_ok "rdma link add in hp1" in1 rdma link add siw2_h type siw2 netdev v1
t_reach hp2 $A

port=7600
# The peer's story of a case, on one line.
log_peer() {
	local what='^(sent|rtr|send|term|verdict|closed|reset|timeout|violation|crc_bad)'

	t_log "$1: peer: $(grep -E "$what" <<<"$P" | tr '\n' ';')"
}
P='' T=''	# the last case's peer and peer_target output
ts0=0 tr0=0

# case_init NAME: remember the counters before a case.
case_init() {
	ts0=$(cnt term_sent) tr0=$(cnt term_rcvd)
	port=$((port + 1))
}

# case_end NAME: both ends are done (or are stopped); peer_target must have
# gone with its regions. Loads the outputs into P and T.
case_end() {
	reap 40
	t_ended "$1: peer_target exits, its regions deregistered" peer_target
	P=$(cat "$tmp/$1.p") T=$(cat "$tmp/$1.t")
	log_peer "$1"
}

# case_connect NAME SCENARIO "TARGET OPTS" "PEER OPTS": peer_target
# listens in hp1, the raw peer connects from hp2 (MPA initiator).
case_connect() {
	local name=$1 sc=$2
	case_init
	# shellcheck disable=SC2086 # option lists
	ip netns exec hp1 timeout 90 "$pt" server $A $port -T 60 $3 \
		>"$tmp/$name.t" 2>&1 &
	wait_for "$tmp/$name.t" 'LISTENING|ERROR'
	# shellcheck disable=SC2086
	ip netns exec hp2 timeout 80 python3 -S "$fp" connect $A $port "$sc" $4 \
		>"$tmp/$name.p" 2>&1
	case_end "$name"
}

# case_accept NAME SCENARIO "TARGET OPTS" "PEER OPTS": the raw peer listens
# in hp2 (MPA responder), peer_target connects from hp1 and sends first.
case_accept() {
	local name=$1 sc=$2
	case_init
	# shellcheck disable=SC2086
	ip netns exec hp2 timeout 80 python3 -S "$fp" accept $B $port "$sc" $4 \
		>"$tmp/$name.p" 2>&1 &
	wait_for "$tmp/$name.p" LISTENING
	# shellcheck disable=SC2086
	ip netns exec hp1 timeout 90 "$pt" client $B $port -T 60 $3 \
		>"$tmp/$name.t" 2>&1
	case_end "$name"
}

# What peer_target saw before it moved the QP to ERR itself.
before_forced() { sed '/^QP forcing ERR/q' <<<"$T"; }
# What the peer saw once the scenario began (after siw2's first FPDU when
# the peer is the MPA responder).
in_scenario() { sed -n '/^target /,$p' <<<"$P"; }

# check_term NAME TERM_REGEX WHY: siw2 sent exactly the one Terminate,
# closed the stream, flushed its receives and saw the disconnect.
check_term() {
	local name=$1 s
	s=$(in_scenario)
	t_match "$name: Terminate $3" "^term $2" "$s"
	t_eq "$name: exactly one Terminate" 1 "$(grep -c '^term ' <<<"$s")"
	t_nomatch "$name: the Terminate copies the offending header, if any" \
		'^term .* copy=differs' "$s"
	t_nomatch "$name: nothing else from siw2" \
		'^(send|write|violation|crc_bad|partial fpdu|rtr) ' "$s"
	t_match "$name: siw2 closes the stream" '^(closed|reset)$' "$P"
	t_eq "$name: term_sent +1" $((ts0 + 1)) "$(cnt term_sent)"
	t_eq "$name: term_rcvd unchanged" "$tr0" "$(cnt term_rcvd)"
	# Protection errors (RDMAP 0/1/x, DDP tagged 1/1/0-3) are access
	# errors to the consumer; the rest are fatal.
	if grep -Eq '^term layer=(rdmap etype=1|ddp etype=1 ecode=0x0[0-3])' \
		<<<"$s"; then
		t_match "$name: the consumer gets IB_EVENT_QP_ACCESS_ERR" \
			'^ASYNC QP_ACCESS_ERR' "$T"
	else
		t_match "$name: the consumer gets IB_EVENT_QP_FATAL" \
			'^ASYNC QP_FATAL' "$T"
	fi
	check_target_end "$name"
}

# The siw2 side: disconnected, the QP in ERR by siw2's own doing, its
# receives flushed; no endpoint or QP left.
check_target_end() {
	local name=$1 b
	b=$(before_forced)
	t_nomatch "$name: peer_target's verbs and CM calls succeed" '^ERROR' "$T"
	t_match "$name: peer_target sees the disconnect" \
		'^CM RDMA_CM_EVENT_DISCONNECTED' "$T"
	t_match "$name: siw2 moved the QP to ERR" '^QP state=ERR' "$b"
	t_match "$name: siw2 flushed the posted receives" \
		'^WC .*status=WR_FLUSH_ERR' "$b"
	t_log "$name: peer_target: $(grep -E '^(ASYNC|WC|QP|REGION)' <<<"$T" |
		sed 's/ wr_id=[0-9]*//' | uniq -c | tr -s ' \n' ' ')"
	t_ok "$name: no endpoint or QP left" gone
}

# --- 1. RDMA Write to an STag that names no region
case_connect write-bad-stag write-bad-stag "" ""
check_term write-bad-stag 'layer=ddp etype=1 ecode=0x00 hdrctl=MD .*copy=same' \
	'DDP tagged buffer error, invalid STag (RFC 5041 7.1, 7.2)'
t_match "write-bad-stag: the region is untouched" '^REGION intact' "$T"

case_connect write-bad-key write-bad-key "" ""
check_term write-bad-key 'layer=ddp etype=1 ecode=0x00 hdrctl=MD .*copy=same' \
	'invalid STag for the right index with another key (RFC 5041 7.2)'
t_match "write-bad-key: the region is untouched" '^REGION intact' "$T"

# --- 2. RDMA Write crossing the region's end
case_connect write-oob write-oob "" ""
check_term write-oob 'layer=ddp etype=1 ecode=0x01 hdrctl=MD .*copy=same' \
	'DDP tagged buffer error, base or bounds (RFC 5041 7.1, 7.2)'
t_match "write-oob: nothing placed, not even the part in bounds (RFC 5041 7.1)" \
	'^REGION intact' "$T"

# --- Read Requests naming a bad source
case_connect read-bad-stag read-bad-stag "" ""
check_term read-bad-stag 'layer=rdmap etype=1 ecode=0x00 hdrctl=MDR .*copy=same' \
	'RDMAP remote protection error, invalid STag (RFC 5040 4.8)'
case_connect read-oob read-oob "" ""
check_term read-oob 'layer=rdmap etype=1 ecode=0x01 hdrctl=MDR .*copy=same' \
	'RDMAP remote protection error, base or bounds (RFC 5040 4.8)'

# --- Sends with Invalidate naming what may not be invalidated: one rule
# (rdmap.c, siw2_rdmap_check_inval()) gives the code; the receive fails.
for sc in send-inv-bad-stag send-inv-user-mr; do
	case_connect $sc $sc "" ""
	check_term $sc 'layer=rdmap etype=2 ecode=0x09 hdrctl=MD .*copy=same' \
		'RDMAP remote operation error, STag cannot be invalidated (RFC 5040 5.3, 4.8)'
	t_nomatch "$sc: the receive does not complete successfully" \
		'^WC .*status=SUCCESS opcode=RECV' "$T"
	t_match "$sc: the region is still registered" '^REGION intact' "$T"
done

# --- Immediate Data inside a Write and after it (RFC 7306): only the one
# that directly follows a whole Write is the Write's immediate.
n='an Immediate inside a Write'
case_connect imm-write imm-inside-write "" ""
t_nomatch "$n: no Terminate, no violation" '^(term|violation|crc_bad) ' "$P"
t_match "$n: siw2 closes after the peer's FIN" '^verdict match' "$P"
t_match "$n: the first is a plain Immediate" \
	'^WC wr_id=0 status=SUCCESS opcode=RECV len=0' "$T"
t_match "$n: the second is the Write's, with the whole Write's length" \
	'^WC wr_id=1 status=SUCCESS opcode=RECV_RDMA_WITH_IMM len=96' "$T"
t_match "$n: both Writes landed" '^REGION changed first=0 last=159' "$T"

# --- 3. More Read Requests than the IRD siw2 advertised (2)
case_connect read-beyond-ird read-beyond-ird "-i 2 -m 262144" ""
t_match "read-beyond-ird: siw2 advertised IRD 2 in its Reply (RFC 6581 9.1)" \
	'^mpa reply .* ird=0x0002 ' "$P"
t_match "read-beyond-ird: three Read Requests went out" '^sent 3 read_req' "$P"
check_term read-beyond-ird 'layer=ddp etype=2 ecode=0x02 hdrctl=MDR .*copy=same' \
	'DDP untagged buffer error, no buffer, for the third Read Request (RFC 5040 5.2, RFC 5041 7.1)'
t_nomatch "read-beyond-ird: Read Responses carry the region" \
	'^read_resp .* data=bad' "$P"

# --- 4. A wrong CRC
case_connect bad-crc bad-crc "" ""
check_term bad-crc 'layer=llp etype=0 ecode=0x02 hdrctl=- .*copy=none' \
	'LLP/MPA, CRC error (RFC 5044 4.4, 8; RFC 6581 8)'
t_nomatch "bad-crc: the Send under the bad CRC never completes" \
	'^WC .*status=SUCCESS opcode=RECV' "$T"

# --- 5. Valid traffic, siw2 as MPA responder, then as initiator
case_connect valid valid "" ""
t_match "valid: the Send arrives" \
	'^WC wr_id=0 status=SUCCESS opcode=RECV len=20 data=hello.from.fpdu_peer' "$T"
t_match "valid: the Send with SE arrives" \
	'^WC wr_id=1 status=SUCCESS opcode=RECV len=3 data=bye' "$T"
t_match "valid: a Read Response carries the whole region" \
	'^read_resp stag=0x00005100 len=65536 data=ok' "$P"
t_match "valid: a Write is read back" \
	'^read_resp stag=0x00005101 len=47 data=ok' "$P"
t_match "valid: the Write landed at offset 64" \
	'^REGION changed first=64 last=110' "$T"
t_nomatch "valid: no Terminate, no violation" '^(term|violation|crc_bad) ' "$P"
t_match "valid: siw2 closes after the peer's FIN" '^closed$' "$P"
t_eq "valid: term_sent unchanged" "$ts0" "$(cnt term_sent)"
t_eq "valid: term_rcvd unchanged" "$tr0" "$(cnt term_rcvd)"
t_match "valid: peer_target sees the disconnect" \
	'^CM RDMA_CM_EVENT_DISCONNECTED' "$T"
t_ok "valid: no endpoint or QP left" gone

case_connect valid-split valid "" "--split 1"
t_match "valid, one octet per TCP send: the peer's verdict" \
	'^verdict match' "$P"
t_match "valid, one octet per TCP send: both Sends arrive" \
	'^WC wr_id=1 status=SUCCESS opcode=RECV len=3 data=bye' "$T"
t_ok "valid, one octet per TCP send: no endpoint or QP left" gone

# A drain (ib_drain_rq()) while a Send is half received: the receive being
# filled completes first, the drain's own receive last (IB: in the order
# posted), and nothing is placed once the QP is in ERR.
case_connect drain-partial send-partial "-D 1500" ""
t_eq "drain-partial: flushes in posting order, the half-filled receive first" \
	"0:WR_FLUSH_ERR 1:WR_FLUSH_ERR 2:WR_FLUSH_ERR 3:WR_FLUSH_ERR 999:WR_FLUSH_ERR" \
	"$(sed -n '/^QP draining/,/^DRAINED/s/^WC wr_id=\([0-9]*\) status=\([A-Z_]*\).*/\1:\2/p' \
		<<<"$T" | xargs)"
t_nomatch "drain-partial: peer_target's verbs and CM calls succeed" '^ERROR' "$T"
t_match "drain-partial: no Terminate, the stream reset" '^verdict match' "$P"
t_ok "drain-partial: no endpoint or QP left" gone

# RESET ends the connection too, and discards the receives, the half
# filled one included, without completions; the QP stays in RESET.
case_connect reset-partial send-partial "-X 1500" ""
t_match "reset-partial: RESET resets the stream" '^verdict match term=none end=reset' \
	"$P"
t_match "reset-partial: the QP stays in RESET" '^QP state=RESET' "$T"
t_nomatch "reset-partial: no completions" '^WC ' "$T"
t_nomatch "reset-partial: peer_target's verbs and CM calls succeed" '^ERROR' "$T"
t_ok "reset-partial: no endpoint or QP left" gone

# --- Deregistration while the peer holds a reference (issue 38; mr.c,
# "Lifetime"): ibv_dereg_mr() returns at once whatever the peer does, the
# STag is dead from that moment, and nothing the peer sends afterwards
# lands in the memory, which peer_target keeps allocated to look.

# dereg_fast NAME WHAT: "DEREG WHAT" succeeded within a second.
dereg_fast() {
	local us
	us=$(sed -n "s/^DEREG $2 ret=0 us=\([0-9]*\)$/\1/p" <<<"$T")
	if [ -n "$us" ] && [ "$us" -lt 1000000 ]; then
		t_pass "$1: ibv_dereg_mr() of the $2 returns within one second ($us us)"
	else
		t_fail "$1: ibv_dereg_mr() of the $2 returns within one second" \
			"$(grep '^DEREG' <<<"$T")"
	fi
}

# The Write's first 1000 octets (offset 1024 on) may have been placed
# before the deregistration; the 1048 held back must not be.
n='dereg while a peer holds a partial Write'
case_connect dereg-write write-partial-hold "-U 1500" ""
dereg_fast "$n" region
check_term dereg-write 'layer=ddp etype=1 ecode=0x00 hdrctl=MD .*copy=same' \
	'DDP tagged buffer error, invalid STag, for the rest (RFC 5041 7.1)'
last=$(sed -n 's/^REGION changed first=1024 last=\([0-9]*\)$/\1/p' <<<"$T")
if grep -q '^REGION intact' <<<"$T" || { [ -n "$last" ] && [ "$last" -le 2023 ]; }; then
	t_pass "$n: nothing after the deregistration reaches the memory"
else
	t_fail "$n: nothing after the deregistration reaches the memory" \
		"$(grep '^REGION' <<<"$T")"
fi

n='dereg while a peer holds a partial Send'
case_connect dereg-send send-partial-hold "-U 1500" ""
dereg_fast "$n" receives
t_match "$n: the receive completes in error" \
	'^WC wr_id=0 status=LOC_PROT_ERR ' "$T"
t_nomatch "$n: the receive does not complete successfully" \
	'^WC .*status=SUCCESS opcode=RECV' "$T"
check_term dereg-send 'layer=rdmap etype=0 ecode=0x00 ' \
	'RDMAP local catastrophic error (RFC 5040 4.8)'

# The Read Response stalls on the peer's closed window; the Write that
# follows the deregistration is refused (the consumer hears of the access
# error), and the Response is cut short. Whether the Terminate still gets
# through this peer's 4 KiB window within the close's 2 s send timeout
# depends on the emulator's pace, so it is not asked for.
n='dereg while a peer holds a Read Response behind a zero window'
case_connect dereg-read read-hold "-U 1500 -m 1048576" ""
dereg_fast "$n" region
t_match "$n: the Write after it is refused as an access error" \
	'^ASYNC QP_ACCESS_ERR' "$T"
t_nomatch "$n: nothing from siw2 but the Response and a Terminate" \
	'^(send|write|violation|crc_bad|rtr) ' "$(in_scenario)"
t_nomatch "$n: no Read Response completes" '^read_resp .* data=' "$P"
t_match "$n: siw2 closes the stream" '^(closed|reset)$' "$P"
t_match "$n: the Write after the deregistration is not placed" \
	'^REGION intact' "$T"
check_target_end dereg-read

# A Send with Invalidate while a Read Response from a fast registration
# MR waits on the peer's closed window (issue 38, part 1): the kernel
# consumer is told the STag is gone, reuses the pages, and nothing it
# writes there may leave with the Response. siw2_selftest.ko is the
# consumer (kmod/siw2_selftest.c, "Remote invalidation"): it serves the
# region in hp1 and writes a canary over it on the invalidation.
n='stalled transmit after remote invalidation'
case_init
mark="hostile: read-inval $$ $RANDOM"
echo "$mark" >/dev/kmsg
if out=$(in1 modprobe siw2_selftest inval_addr=$A inval_port=$port 2>&1); then
	in2 timeout 80 python3 -S "$fp" connect $A $port read-inval --hold 2 \
		>"$tmp/read-inval.p" 2>&1
	P=$(cat "$tmp/read-inval.p")
	log_peer read-inval
	t_log "read-inval: peer: $(grep '^read_resp_octets' <<<"$P")"
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait 'dmesg | sed -n "/$mark/,\$p" | grep -q "inval: connection released"' 20
	K=$(dmesg | sed -n "/$mark/,\$p" | grep -o 'inval: .*')
	t_log "read-inval: module: $(tr '\n' ';' <<<"$K")"
	t_match "$n: the module offers a fast registration region" \
		'^target stag=0x[0-9a-f]+ to=0x[0-9a-f]+ len=262144 ' "$P"
	t_match "$n: the module saw the invalidation completion" \
		'^inval: receive with invalidation of stag ' "$K"
	t_eq "$n: exactly one receive with the invalidation" 1 \
		"$(cat /sys/module/siw2_selftest/parameters/inval_seen)"
	t_match "$n: part of the Read Response arrives" \
		'^read_resp_octets n=[1-9]' "$P"
	t_match "$n: no octet of the canary reaches the peer" \
		'^read_resp_octets n=[0-9]+ mismatched=0 canary=0$' "$P"
	t_nomatch "$n: every FPDU's CRC is good (the pages changed under none)" \
		'^crc_bad ' "$P"
	t_match "$n: siw2 closes the stream" '^(closed|reset)$' "$P"
	t_match "$n: the module's connection is released" \
		'^inval: connection released$' "$K"
	t_ok "$n: no endpoint or QP left" gone
	t_ok "$n: unload the module" modprobe -r siw2_selftest
	t_ok "$n: module objects zero at the end" all_gone
else
	t_fail "$n: load siw2_selftest in hp1" "$out"
fi

# The process dies while the peer holds a partial Write: uverbs destroys
# its objects in its own order, and none of them waits for the peer.
n='process exit while a peer holds a partial Write'
case_init
in1 timeout 90 "$pt" server $A $port -T 60 >"$tmp/exit.t" 2>&1 &
wait_for "$tmp/exit.t" 'LISTENING|ERROR'
in2 timeout 80 python3 -S "$fp" connect $A $port write-partial-hold --hold 10 \
	>"$tmp/exit.p" 2>&1 &
wait_for "$tmp/exit.t" '^CM RDMA_CM_EVENT_ESTABLISHED' 30
sleep 1
pkill -KILL -x peer_target
t_ended "$n: the killed process is gone within 10 s" peer_target 10
t_ok "$n: no endpoint or QP left" gone
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ "$(obj mr)" = 0 ]' 10
t_eq "$n: its MRs are freed" 0 "$(obj mr)"
reap 40

# The device goes while the peer holds a partial Write and the process
# ignores the removal (-K): the core disassociates the process's context
# (siw2's disassociate_ucontext), destroying its objects, and neither that
# nor the device's removal waits for the peer or for the process.
n='device removal while a peer holds a partial Write'
case_init
in1 timeout 90 "$pt" server $A $port -T 60 -K 60 >"$tmp/rm.t" 2>&1 &
wait_for "$tmp/rm.t" 'LISTENING|ERROR'
in2 timeout 80 python3 -S "$fp" connect $A $port write-partial-hold --hold 10 \
	>"$tmp/rm.p" 2>&1 &
wait_for "$tmp/rm.t" '^CM RDMA_CM_EVENT_ESTABLISHED' 30
sleep 1
t0=$SECONDS
t_ok "$n: rdma link delete returns" in1 timeout 30 rdma link delete siw2_h
t0=$((SECONDS - t0))
t_ok "$n: ... within 10 s ($t0 s)" test "$t0" -le 10
t_ok "$n: no endpoint or QP left while the process runs" gone
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ "$(obj mr)" = 0 ]' 10
t_eq "$n: its MRs are freed while the process runs" 0 "$(obj mr)"
# The process reads the event when it is next scheduled: on the debug
# kernel under a loaded host, after the removal has returned.
t_ok "$n: the process is told, and keeps its objects" \
	wait_for "$tmp/rm.t" '^KEEPING' 20
pkill -KILL -x peer_target
t_ended "$n: the process then exits" peer_target 10
reap 40
t_ok "$n: rdma link add again" in1 rdma link add siw2_h type siw2 netdev v1
t_reach hp2 $A

# --- The classes of the soft-RDMA CVEs of 2026 (issue 38), one case each
# where no other case covers it already.
n='cve class: ULPDU_Length shorter than the DDP header it carries'
case_connect cve-short-ulpdu short-ulpdu "" ""
t_match "$n: siw2 sends a Terminate" '^term ' "$(in_scenario)"
t_match "$n: siw2 closes the stream" '^(closed|reset)$' "$P"
t_match "$n: nothing is placed" '^REGION intact' "$T"
t_nomatch "$n: no receive completes successfully" \
	'^WC .*status=SUCCESS opcode=RECV' "$T"
check_target_end cve-short-ulpdu

n='cve class: a Read Response longer than the Read Request it answers'
case_connect cve-read-resp-long read-resp-long "-R 0" ""
t_match "$n: siw2 sends a Terminate" '^term ' "$(in_scenario)"
t_match "$n: placement stops at the Request's length" '^REGION intact' "$T"
t_nomatch "$n: the Read does not complete successfully" \
	'^WC .*status=SUCCESS opcode=RDMA_READ' "$T"
check_target_end cve-read-resp-long

case_connect cve-first-fpdu ddp-version "" ""
check_term cve-first-fpdu 'layer=ddp etype=2 ecode=0x06 hdrctl=- ' \
	'for a header parse error on the first FPDU (cve class; RFC 5041 7.2)'

siw2_set mpa_p2p 0
case_accept valid-active valid "-s hello-from-siw2" ""
t_match "siw2 initiator: the Request carries the region" \
	'^mpa request rev=2 .*pdata=stag=0x' "$P"
t_match "siw2 initiator: its Send is the first FPDU (RFC 5044 7.1.2)" \
	'^send op=send msn=1 len=15 data=hello-from-siw2' \
	"$(grep -E '^(send|rtr|write|term) ' <<<"$P" | head -n 1)"
t_match "siw2 initiator: the Send completes" \
	'^WC wr_id=1000 status=SUCCESS opcode=SEND' "$T"
t_match "siw2 initiator: the peer's traffic completes" '^verdict match' "$P"
t_ok "siw2 initiator: no endpoint or QP left" gone

case_accept write-bad-stag-active write-bad-stag "-s hi" ""
check_term write-bad-stag-active \
	'layer=ddp etype=1 ecode=0x00 hdrctl=MD .*copy=same' \
	'as MPA initiator too (RFC 5041 7.2)'

siw2_set mpa_p2p 1
case_accept valid-active-p2p valid "-s hello-after-rtr" "--first send"
t_match "mpa_p2p: a zero-length Write RTR, then the Send (RFC 6581 9.2)" \
	'^rtr write;send op=send msn=1 len=15 data=hello-after-rtr;' \
	"$(grep -E '^(send|rtr|write|term) ' <<<"$P" | head -n 2 | tr '\n' ';')"
t_match "mpa_p2p: the peer's traffic completes" '^verdict match' "$P"
t_ok "mpa_p2p: no endpoint or QP left" gone

# A Read RTR whose answer the peer holds back until siw2's application has
# a Read of its own outstanding: the answers come in the order of the
# Requests (RFC 5040 5.2), and the first is the RTR's.
case_accept read-rtr-held valid "-R 0" "--rtr read --hold-rtr --first read_req"
t_match "mpa_p2p: a zero-length Read RTR where the peer offers only that" \
	'^rtr read' "$P"
t_match "mpa_p2p: the Read RTR's late answer is not taken for the next Read's" \
	'^WC wr_id=2000 status=SUCCESS opcode=RDMA_READ' "$T"
t_match "mpa_p2p: no Terminate after a late Read RTR answer" '^verdict match' \
	"$P"
t_ok "mpa_p2p: late Read RTR answer: no endpoint or QP left" gone

case_accept read-oob-p2p read-oob "" ""
t_match "mpa_p2p: the Request asks for an RTR (RFC 6581 9.2)" \
	'^mpa request rev=2 .*ird=0xc' "$P"
t_match "mpa_p2p: a zero-length Write RTR comes first" '^rtr write' "$P"
check_term read-oob-p2p 'layer=rdmap etype=1 ecode=0x01 hdrctl=MDR .*copy=same' \
	'after the RTR (RFC 5040 4.8)'

# --- 6. Garbage: a Terminate or a close, never anything else
# Three seeds whose first octets look like an untagged segment with a bad
# RDMAP version (5044), an untagged segment with an RFC 7306 opcode on the
# wrong queue (10) and a tagged Read Response nobody asked for (18); each
# is caught at its header, before its CRC.
for seed in 5044 10 18; do
	case_connect "garbage-$seed" garbage "" "--seed $seed"
	t_match "garbage (seed $seed): a Terminate or a close only" \
		'^verdict match' "$P"
	t_eq "garbage (seed $seed): term_sent counts what came" \
		$((ts0 + $(grep -c '^term ' <<<"$P"))) "$(cnt term_sent)"
	check_target_end "garbage-$seed"
done

case_connect zero-len zero-len "" ""
check_term zero-len 'layer=llp etype=0 ecode=0x03 hdrctl=- ' \
	'LLP/MPA code 3 for ULPDU_Length 0 (RFC 5044 3, 8)'
case_connect huge-len huge-len "" ""
check_term huge-len 'layer=llp etype=0 ecode=0x03 hdrctl=- ' \
	'LLP/MPA code 3 for ULPDU_Length 65535 (RFC 5044 3, 8)'
case_connect ddp-version ddp-version "" ""
check_term ddp-version 'layer=ddp etype=2 ecode=0x06 hdrctl=- ' \
	'DDP untagged buffer error, invalid DDP version (RFC 5041 4.1, 7.2)'
case_connect ddp-version-tagged ddp-version-tagged "" ""
check_term ddp-version-tagged 'layer=ddp etype=1 ecode=0x04 hdrctl=- ' \
	'DDP tagged buffer error, invalid DDP version (RFC 5041 7.2)'
case_connect rdmap-version rdmap-version "" ""
check_term rdmap-version 'layer=rdmap etype=2 ecode=0x05 hdrctl=MD .*copy=same' \
	'RDMAP remote operation error, invalid RDMAP version (RFC 5040 4.8)'
case_connect bad-opcode bad-opcode "" ""
check_term bad-opcode 'layer=rdmap etype=2 ecode=0x06 hdrctl=MD .*copy=same' \
	'RDMAP remote operation error, unexpected OpCode (RFC 5040 4.8)'
case_connect bad-qn bad-qn "" ""
check_term bad-qn 'layer=ddp etype=2 ecode=0x01 hdrctl=MD .*copy=same' \
	'DDP untagged buffer error, invalid QN (RFC 5041 7.1, 7.2)'
case_connect bad-msn bad-msn "" ""
check_term bad-msn 'layer=ddp etype=2 ecode=0x03 hdrctl=MD .*copy=same' \
	'DDP untagged buffer error, MSN range (RFC 5041 7.1, 7.2)'
case_connect send-too-long send-too-long "-r 256" "--send-len 4096"
check_term send-too-long 'layer=ddp etype=2 ecode=0x05 hdrctl=MD .*copy=same' \
	'DDP untagged buffer error, message too long (RFC 5041 7.1, 7.2)'

# --- A Terminate from the peer is not answered with one (RFC 5040 5.4)
case_connect send-term send-term "" ""
t_nomatch "send-term: no Terminate back" '^term ' "$P"
t_match "send-term: siw2 closes the stream" '^(closed|reset)$' "$P"
t_eq "send-term: term_rcvd +1" $((tr0 + 1)) "$(cnt term_rcvd)"
t_eq "send-term: term_sent unchanged" "$ts0" "$(cnt term_sent)"
t_match "send-term: the consumer gets IB_EVENT_QP_FATAL" '^ASYNC QP_FATAL' "$T"
check_target_end send-term

# --- Nothing left behind
t_ok "rdma link delete siw2_h" in1 rdma link delete siw2_h
t_eq "no live siw2 objects" "$(siw2_objects_zero)" "$(cat "$dbg/objects")"
t_ok "siw2 unloads after the cases" modprobe -r siw2

t_done
