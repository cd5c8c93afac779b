#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interoperability with upstream siw. The peer is the running kernel's own
# drivers/infiniband/sw/siw from Debian's linux-source, built out of tree
# on the host by scripts/upstream-siw (default build and the variants p2p,
# rev1 and crc, which change one of siw's compile-time MPA settings; siw
# has no module parameters), with Debian's libsiw. siw2 is in namespace ia
# (198.51.100.1), siw in ib (198.51.100.2), joined by a veth pair.
#
# Both directions, siw2 as MPA initiator (RDMA CM client) and as
# responder: rping -V and ib_write_bw / ib_read_bw / ib_send_bw -R, with
# MPA CRC on and off, MPA revision 2 and 1, peer-to-peer mode on and off.
# Where siw refuses what siw2 offers, the outcome the RFCs give is checked:
# Markers asked by siw2 as initiator get siw's reject (R bit, RFC 5044
# 7.1.2); asked by siw2 as responder, siw gives up the connection; a
# revision 2 Request to siw2 at revision 1 is closed (RFC 5044 7.1.1, RFC
# 6581 10) and siw does not retry. Two limits of siw are recorded as such:
# as a revision 1 responder it reports IRD/ORD 0 and its own RDMA Read
# fails, and built to require CRCs it refuses a Reply with C=0 (siw2's
# Reply has C set whenever CRCs are on). Every connection that fails
# leaves no siw2 object behind.
#
# Captures (dumpcap in the namespace, checked by mpa_capture_check.py with
# tshark's iwarp_mpa and iwarp_ddp_rdmap dissectors): siw2 to siw2 (ic and
# id, 198.51.100.3/4, a second veth pair without GSO) with CRC on, and with
# Markers on, each at revision 2 and 1; siw2 to siw and siw to siw2 with
# CRC on, at revision 2 and 1. tshark 4.0 knows revision 1 only; the
# checker says what it allows at revision 2.
#
# One line per matrix cell, for scripts/interop-matrix:
#   matrix: kernel=K initiator=siw2|siw responder=siw|siw2 siw=VARIANT
#           siw2=CRC/REV/P2P/MARKERS crc=on|off rev=1|2 p2p=on|off
#           markers=on|off test=T outcome=O expect=E note=TEXT
# siw2 is its parameters mpa_crc/mpa_rev/mpa_p2p/mpa_markers, crc what
# the connection negotiates, rev and p2p what the initiator asks, markers
# what siw2 asks. Outcomes: ok; rejected (the responder's
# MPA reject, -ECONNREFUSED at the RDMA CM); reset (the responder closed
# during MPA setup, -ECONNRESET); read-refused (the siw responder's own
# RDMA Read fails); fail (anything else).
#
# The upstream siw modules are looked for in $UPSTREAM_SIW_DIR, then
# ${SIW2_CACHE:-~/.cache/siw2}/upstream-siw/$(uname -r) and the same under
# /root and /home/*: run `scripts/upstream-siw --all KVER` on the host
# first (building in a TCG guest takes far too long).
#
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
kver=$(uname -r)
tmp=$(mktemp -d)
params=/sys/module/siw2/parameters
A=198.51.100.1	# siw2, namespace ia
B=198.51.100.2	# siw, namespace ib
C=198.51.100.3	# siw2, namespace ic (captures)
D=198.51.100.4	# siw2, namespace id (captures)
port=7700

# nsx NS CMD...: CMD in network namespace NS.
nsx() {
	local ns=$1
	shift
	ip netns exec "$ns" "$@"
}

saved=()
cleanup() {
	local kv
	# shellcheck disable=SC2046
	kill $(jobs -pr) 2>/dev/null
	wait 2>/dev/null
	for kv in "${saved[@]}"; do
		[ -w "$params/${kv%%=*}" ] && siw2_set "${kv%%=*}" "${kv#*=}"
	done
	for ns in ia ib ic id; do
		ip netns del "$ns" 2>/dev/null
	done
	grep -q '^siw ' /proc/modules && rmmod siw 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# --- what the suite needs
t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
for tool in rping ib_write_bw ib_read_bw ib_send_bw dumpcap tshark ss stdbuf \
	python3; do
	if ! command -v "$tool" >/dev/null; then
		t_fail "tools present" "no $tool"
		t_done
		exit
	fi
done

siw_dir=
for d in ${UPSTREAM_SIW_DIR:+"$UPSTREAM_SIW_DIR"} \
	"${SIW2_CACHE:-$HOME/.cache/siw2}/upstream-siw/$kver" \
	"/root/.cache/siw2/upstream-siw/$kver" /home/*/.cache/siw2/upstream-siw/"$kver"; do
	if [ -f "$d/siw.ko" ]; then
		siw_dir=$d
		break
	fi
done
if [ -z "$siw_dir" ]; then
	t_fail "upstream siw built for $kver" \
		"no siw.ko; on the host run: scripts/upstream-siw --all $kver"
	t_done
	exit
fi
t_log "upstream siw from $siw_dir"
# siw_ko VARIANT: the module of a variant (scripts/upstream-siw).
siw_ko() {
	if [ "$1" = default ]; then
		echo "$siw_dir/siw.ko"
	else
		echo "$siw_dir/$1/siw.ko"
	fi
}
for v in p2p rev1 crc; do
	if [ ! -f "$(siw_ko $v)" ]; then
		t_fail "upstream siw variants built for $kver" \
			"no $(siw_ko $v); on the host run: scripts/upstream-siw --all $kver"
		t_done
		exit
	fi
done

# perftest's habits that upstream siw exposes; see perftest_shim.c.
if ! shim=$(t_prog perftest_shim.so); then
	t_fail "perftest_shim.so is built"
	t_done
	exit
fi

for p in mpa_rev mpa_crc mpa_markers mpa_p2p mpa_reply_timeout_ms \
	mpa_request_timeout_ms; do
	saved+=("$p=$(cat "$params/$p")")
done
# A busy TCG host can take seconds to schedule a tool's accept: siw2 must
# not give up on the MPA Reply first. (A siw2 initiator that gives up
# after siw, in peer-to-peer mode, accepted but before the RTR went out,
# makes siw report CLOSE for a connection the iw_cm never saw established:
# a kernel BUG at drivers/infiniband/core/iwcm.c, cm_close_handler().)
siw2_set mpa_reply_timeout_ms 60000
siw2_set mpa_request_timeout_ms 60000

# --- siw and the namespaces
modprobe ib_core
modprobe libcrc32c 2>/dev/null
siw_variant=
# load_siw VARIANT: upstream siw VARIANT with its device siw_ib on vb.
load_siw() {
	if grep -q '^siw ' /proc/modules; then
		nsx ib rdma link delete siw_ib 2>/dev/null
		rmmod siw || return 1
	fi
	insmod "$(siw_ko "$1")" &&
		nsx ib rdma link add siw_ib type siw netdev vb
}
# use_siw VARIANT: load_siw as a check; the cells after it name VARIANT.
use_siw() {
	t_ok "insmod upstream siw ($kver, $1 build), rdma link add siw_ib" \
		load_siw "$1"
	siw_variant=$1
}

for ns in ia ib ic id; do
	ip netns add "$ns"
	nsx "$ns" ip link set lo up
done
ip link add va netns ia type veth peer name vb netns ib
ip link add vc netns ic type veth peer name vd netns id
nsx ia ip addr add $A/24 dev va
nsx ib ip addr add $B/24 dev vb
nsx ic ip addr add $C/24 dev vc
nsx id ip addr add $D/24 dev vd
# Without GSO every captured frame is a TCP segment as sent (Markers).
nsx ic ip link set vc gso_max_segs 1
nsx id ip link set vd gso_max_segs 1
for dev in ia:va ib:vb ic:vc id:vd; do
	nsx "${dev%:*}" ip link set "${dev#*:}" up
done
use_siw default
t_ok "rdma link add siw2_ia in ia" nsx ia rdma link add siw2_ia type siw2 netdev va
t_ok "rdma link add siw2_ic in ic" nsx ic rdma link add siw2_ic type siw2 netdev vc
t_ok "rdma link add siw2_id in id" nsx id rdma link add siw2_id type siw2 netdev vd
t_reach ib $A
t_reach id $C
term_sent0=$(cnt term_sent) term_rcvd0=$(cnt term_rcvd)

# --- running one pair of tools

# pair NAME LIMIT SNS CNS SERVER... -- CLIENT...: the server in SNS (with
# the environment in SENV), once something listens on $port the client in
# CNS (environment CENV), under LIMIT s. Sets sst and cst; output in
# $tmp/NAME.s and .c, siw2's counters before the run in $tmp/NAME.n.
SENV=() CENV=()
pair() {
	local name=$1 limit=$2 sns=$3 cns=$4 srv=() spid left
	shift 4
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cp /sys/kernel/debug/siw2/counters "$tmp/$name.n"
	# The pid is timeout's (env and timeout exec), which passes a signal
	# on; stdbuf keeps a stopped tool's last lines.
	ip netns exec "$sns" env "${SENV[@]}" timeout $((limit + 15)) \
		stdbuf -oL "${srv[@]}" >"$tmp/$name.s" 2>&1 &
	spid=$!
	t_wait "listening $sns $port || ! kill -0 $spid" 20
	ip netns exec "$cns" env "${CENV[@]}" timeout "$limit" stdbuf -oL "$@" \
		>"$tmp/$name.c" 2>&1
	cst=$?
	left=100
	[ "$cst" = 0 ] || left=30
	while kill -0 "$spid" 2>/dev/null && [ "$left" -gt 0 ]; do
		sleep 0.1
		left=$((left - 1))
	done
	kill "$spid" 2>/dev/null
	wait "$spid"
	sst=$?
	port=$((port + 1))
}

# tails NAME: the last lines of both sides of run NAME, and the siw2
# counters it moved.
tails() {
	local side
	echo "--- siw2 counters: $(awk 'NR == FNR { c[$1] = $2; next }
		$2 != c[$1] { printf "%s %d->%d ", $1, c[$1], $2 }' \
		"$tmp/$1.n" /sys/kernel/debug/siw2/counters)"
	for side in s c; do
		echo "--- $([ $side = s ] && echo server || echo client), last lines:"
		if [ -s "$tmp/$1.$side" ]; then
			tail -n 6 "$tmp/$1.$side" | cut -c1-160
		else
			echo "(no output)"
		fi
	done
}

# The configuration of the next cells: who initiates, and the settings.
# initiator siw2|siw: siw2 (ia) as initiator of siw (ib), or the reverse.
initiator() {
	if [ "$1" = siw2 ]; then
		ini=siw2 resp=siw sns=ib cns=ia addr=$B sdev=siw_ib cdev=siw2_ia
	else
		ini=siw resp=siw2 sns=ia cns=ib addr=$A sdev=siw2_ia cdev=siw_ib
	fi
}
# conf CRC REV P2P MARKERS: siw2's parameters (Y/N, 1/2, Y/N, Y/N).
conf() {
	m_s2="$1/$2/$3/$4"
	siw2_set mpa_crc "$1"
	siw2_set mpa_rev "$2"
	siw2_set mpa_p2p "$3"
	siw2_set mpa_markers "$4"
}
# What the matrix line says of the connection: set by each section.
m_crc=on m_rev=2 m_p2p=on m_mk=off m_s2=Y/2/Y/N

# cell TEST EXPECT OUTCOME NAME [NOTE]: one matrix line and one check.
cell() {
	local test=$1 expect=$2 outcome=$3 name=$4 note=${5:-}
	local what="$ini->$resp siw=$siw_variant crc=$m_crc rev=$m_rev p2p=$m_p2p markers=$m_mk: $test"
	printf 'matrix: kernel=%s initiator=%s responder=%s siw=%s siw2=%s crc=%s rev=%s p2p=%s markers=%s test=%s outcome=%s expect=%s note=%s\n' \
		"$kver" "$ini" "$resp" "$siw_variant" "$m_s2" "$m_crc" "$m_rev" \
		"$m_p2p" "$m_mk" "$test" "$outcome" "$expect" "$note"
	if [ "$outcome" = "$expect" ]; then
		t_pass "$what: $expect"
	else
		mapfile -t lines <<<"$(tails "$name")"
		t_fail "$what: $expect" "outcome: $outcome" "${lines[@]}"
	fi
}

# rping_run N SIZE: rping -V between the current initiator and responder;
# sets name and outcome.
rping_run() {
	local n=$1 size=$2 got opts
	name=rping$port
	opts=(-a "$addr" -p "$port" -C "$n" -S "$size" -V -v)
	pair "$name" 60 "$sns" "$cns" rping -s "${opts[@]}" -- rping -c "${opts[@]}"
	# rping exits 0 after a disconnect even when it ended early: count.
	got=$(grep -Ec '^ping data: rdma-ping-[0-9]+: ' "$tmp/$name.c")
	if grep -q 'RDMA_CM_EVENT_REJECTED, error -111' "$tmp/$name.c"; then
		outcome=rejected
	elif grep -q 'RDMA_CM_EVENT_REJECTED, error -104' "$tmp/$name.c"; then
		outcome=reset
	elif [ "$got" = 0 ] && grep -q '^post send error' "$tmp/$name.s"; then
		outcome=read-refused
	elif [ "$cst" = 0 ] && [ "$got" = "$n" ] &&
		! grep -q 'data mismatch' "$tmp/$name.c" &&
		grep -Eq "^server ping data: rdma-ping-$((n - 1)): " "$tmp/$name.s"; then
		outcome=ok
	else
		outcome=fail
	fi
}

# rping_cell EXPECT [NOTE]: 100 verified round trips of 256 octets.
rping_cell() {
	rping_run 100 256
	cell rping "$1" "$outcome" "$name" "${2:-}"
}

# perf_cell TOOL SIZE EXPECT [NOTE]: ib_TOOL -R, 200 iterations of SIZE.
perf_cell() {
	local tool=$1 size=$2 n=200
	name=pt$port
	SENV=(LD_PRELOAD="$shim" BIND_ADDR="$addr")
	CENV=(LD_PRELOAD="$shim" CONNECT_DELAY_MS=1000 CONNECT_RETRY=50)
	pair "$name" 60 "$sns" "$cns" \
		"ib_$tool" -R -F -d "$sdev" -s "$size" -n "$n" -p "$port" \
		-- "ib_$tool" -R -F -d "$cdev" -s "$size" -n "$n" -p "$port" "$addr"
	SENV=() CENV=()
	# The result row: #bytes, #iterations, then figures (inf when perftest
	# could not calibrate its cycle counter on a busy TCG host).
	if [ "$cst" = 0 ] && [ "$sst" = 0 ] &&
		grep -Eq "^ *$size +$n +([0-9]|inf|-?nan)" "$tmp/$name.c"; then
		outcome=ok
	elif grep -q 'Unexpected CM event.* 8$' "$tmp/$name.c"; then
		outcome=rejected
	else
		outcome=fail
	fi
	cell "${tool}-$size" "$3" "$outcome" "$name" "${4:-}"
}

# perf_set SIZE...: write, read and send bandwidth at each size. A quick
# run (T_DEPTH) measures the 64 KiB cells alone, and the siw variants'
# cells by rping only.
small=$(t_depth "" 64)
perf_set() {
	local size tool
	for size; do
		for tool in write_bw read_bw send_bw; do
			perf_cell "$tool" "$size" ok
		done
	done
}

# nothing_left WHAT: no siw2 object survives a refused connection.
nothing_left() {
	t_wait all_gone 15
	t_eq "no siw2 QP, CQ, MR, PD or endpoint left after $1" \
		"0 0 0 0 0" "$(obj qp) $(obj cq) $(obj mr) $(obj pd) $(obj cep)"
}

# ======== siw2 initiates, upstream siw (default build) responds
start=$SECONDS
initiator siw2
conf Y 2 Y N
m_crc=on m_rev=2 m_p2p=on m_mk=off
rping_cell ok
# shellcheck disable=SC2086 # $small is empty in a quick run
perf_set $small 65536

conf N 2 Y N
m_crc=off
rping_cell ok
perf_set 65536

conf Y 2 N N
m_crc=on m_p2p=off
rping_cell ok
perf_set 65536

# Revision 1: siw answers with revision 1 but reports IRD and ORD 0 for a
# Request without RFC 6581 data, so its own RDMA Read (rping's server
# reads the client's buffer) fails; Reads siw2 issues are served.
conf Y 1 Y N
m_crc=on m_rev=1 m_p2p=off
note="siw reports IRD/ORD 0 for a revision 1 Request; its own RDMA Read fails"
rping_cell read-refused "$note"
t_match "rev 1: the siw server's RDMA Read is what fails" '^post send error' \
	"$(cat "$tmp/$name.s")"
t_match "rev 1: the siw2 client sees the disconnect" 'DISCONNECT EVENT' \
	"$(cat "$tmp/$name.c")"
nothing_left "siw's failed RDMA Read"
perf_set 65536
conf N 1 Y N
m_crc=off
rping_cell read-refused "$note"
perf_cell write_bw 65536 ok

# Markers: siw implements none and rejects a Request with M set.
conf Y 2 Y Y
m_crc=on m_rev=2 m_p2p=on m_mk=on
rr0=$(cnt cm_reject_received)
rping_cell rejected "siw has no Markers: MPA reject (R bit), RFC 5044 7.1.2"
t_eq "markers: siw2 counts siw's reject" $((rr0 + 1)) "$(cnt cm_reject_received)"
nothing_left "siw's reject"
t_log "siw2 initiator, siw responder: $((SECONDS - start)) s"

# ======== upstream siw (default build: CRC not asked, revision 2, no
# peer-to-peer) initiates, siw2 responds
start=$SECONDS
initiator siw
conf Y 2 Y N
m_crc=on m_rev=2 m_p2p=off m_mk=off
rping_cell ok
# shellcheck disable=SC2086 # $small is empty in a quick run
perf_set $small 65536

conf N 2 Y N
m_crc=off
rping_cell ok
perf_set 65536

# siw2 at revision 1 closes on a revision 2 Request; siw does not retry.
conf Y 1 Y N
m_crc=on
bf0=$(cnt cm_bad_frame)
rping_cell reset "siw2 at rev 1 closes on a rev 2 Request (RFC 6581 10); siw does not retry with rev 1"
t_eq "siw2 at rev 1: the rev 2 Request counts as a bad frame" \
	$((bf0 + 1)) "$(cnt cm_bad_frame)"
nothing_left "the rev 2 Request"

# siw2 asks siw for Markers in its Reply; siw cannot and gives up.
conf Y 2 Y Y
m_mk=on
rping_cell rejected "siw refuses a Reply asking for Markers (-ECONNREFUSED) and closes"
t_match "markers: the siw2 server sees the disconnect" 'DISCONNECT EVENT' \
	"$(cat "$tmp/$name.s")"
nothing_left "siw's refusal of Markers"
t_log "siw initiator, siw2 responder: $((SECONDS - start)) s"

# ======== captures, checked with tshark
start=$SECONDS
# cap_start NAME NS DEV: dumpcap on DEV in NS, until cap_stop.
cap_start() {
	cap=$tmp/$1.pcapng
	ip netns exec "$2" timeout 600 dumpcap -q -i "$3" -f tcp -w "$cap" \
		>"$tmp/$1.dumpcap" 2>&1 &
	cap_pid=$!
	# The file has its header once dumpcap is capturing.
	t_wait "[ -s $cap ] || ! kill -0 $cap_pid" 30
}
cap_stop() {
	sleep 1
	kill -INT "$cap_pid" 2>/dev/null
	wait "$cap_pid"
}
# cap_rping WHAT N SIZE: one captured rping connection, which must work;
# adds PORT:REV:CRC:MARKERS of it to conns.
cap_rping() {
	local p=$port
	rping_run "$2" "$3"
	if [ "$outcome" = ok ]; then
		t_pass "captured: $1"
	else
		mapfile -t lines <<<"$(tails "$name")"
		t_fail "captured: $1" "outcome: $outcome" "${lines[@]}"
	fi
	conns+=(--conn "$p:$m_rev:$m_crc:$m_mk")
}
# cap_check WHAT: mpa_capture_check.py over $cap; a check and a matrix
# line per connection.
cap_check() {
	local out line p verdict ini resp siw_variant m_rev m_crc m_mk m_p2p i
	local m_s2
	local t0=$SECONDS
	out=$(python3 -S "$here/capture/mpa_capture_check.py" "$cap" "${conns[@]}" 2>&1)
	printf '%s\n' "$out" | sed 's/^/       /'
	t_log "tshark over the $1 capture: $((SECONDS - t0)) s"
	for ((i = 1; i < ${#conns[@]}; i += 2)); do
		IFS=: read -r p m_rev m_crc m_mk <<<"${conns[i]}"
		verdict=$(printf '%s\n' "$out" | sed -n "s/^capture: \(ok\|FAIL\) $p: .*/\1/p")
		line=$(printf '%s\n' "$out" | grep -E "^(problem|capture): ($p:|FAIL $p:)" | head -n 5)
		ini=${cap_ini[$p]} resp=${cap_resp[$p]} siw_variant=${cap_var[$p]}
		m_p2p=${cap_p2p[$p]} m_s2=${cap_s2[$p]}
		printf 'matrix: kernel=%s initiator=%s responder=%s siw=%s siw2=%s crc=%s rev=%s p2p=%s markers=%s test=tshark outcome=%s expect=ok note=%s\n' \
			"$kver" "$ini" "$resp" "$siw_variant" "$m_s2" "$m_crc" \
			"$m_rev" "$m_p2p" "$m_mk" \
			"$([ "$verdict" = ok ] && echo ok || echo fail)" "$1"
		if [ "$verdict" = ok ]; then
			t_pass "tshark: $1, $ini->$resp rev $m_rev CRC $m_crc Markers $m_mk"
		else
			t_fail "tshark: $1, $ini->$resp rev $m_rev CRC $m_crc Markers $m_mk" \
				"${line:-no verdict for port $p}"
		fi
	done
}
declare -A cap_ini cap_resp cap_var cap_p2p cap_s2
# note_cap: remembers who the next captured connection is between.
note_cap() {
	cap_ini[$port]=$ini cap_resp[$port]=$resp cap_var[$port]=$1
	cap_p2p[$port]=$m_p2p cap_s2[$port]=$m_s2
}

# siw2 to siw2: CRC at both revisions (messages of several FPDUs), then
# Markers at both revisions (messages of one FPDU, so that tshark finds
# the Markers: see mpa_capture_check.py).
ini=siw2 resp=siw2 sns=id cns=ic addr=$D
conns=()
cap_start siw2-siw2 id vd
for rev in 2 1; do
	conf Y "$rev" Y N
	m_crc=on m_rev=$rev m_mk=off m_p2p=$([ "$rev" = 2 ] && echo on || echo off)
	note_cap -
	cap_rping "siw2->siw2 rev $rev CRC on" 10 4000
done
for rev in 2 1; do
	conf Y "$rev" Y Y
	m_crc=on m_rev=$rev m_mk=on m_p2p=$([ "$rev" = 2 ] && echo on || echo off)
	note_cap -
	cap_rping "siw2->siw2 rev $rev CRC and Markers on" 10 1000
done
cap_stop
cap_check "siw2 to siw2"

# siw2 to siw and siw to siw2 with CRC on, revision 2 (siw's default
# build) and 1 (siw's rev1 build as initiator: siw as a revision 1
# responder cannot serve rping, above).
conns=()
cap_start siw2-siw ib vb
initiator siw2
conf Y 2 Y N
m_crc=on m_rev=2 m_p2p=on m_mk=off
note_cap "$siw_variant"
cap_rping "siw2->siw rev 2 CRC on" 10 4000
initiator siw
m_p2p=off
note_cap "$siw_variant"
cap_rping "siw->siw2 rev 2 CRC on" 10 4000
use_siw rev1
m_rev=1
note_cap "$siw_variant"
cap_rping "siw(rev1)->siw2 rev 1 CRC on" 10 4000
cap_stop
cap_check "siw2 and siw"
t_log "captures: $((SECONDS - start)) s"

# ======== upstream siw variants as initiator
start=$SECONDS
# rev1: revision 1 Requests (siw2 answers with revision 1).
initiator siw
conf Y 2 Y N
m_crc=on m_rev=1 m_p2p=off m_mk=off
rping_cell ok
[ "$T_DEPTH" = quick ] || perf_set 65536
conf N 2 Y N
m_crc=off
rping_cell ok
# siw2 at revision 1 takes siw's revision 1 Request.
conf Y 1 Y N
m_crc=on
rping_cell ok

# p2p: siw asks for the RFC 6581 peer-to-peer model (Write and Read RTR).
use_siw p2p
conf Y 2 Y N
m_crc=on m_rev=2 m_p2p=on
rping_cell ok
[ "$T_DEPTH" = quick ] || perf_set 65536

# crc: siw asks for CRCs (C in its Request).
use_siw crc
conf Y 2 Y N
m_crc=on m_p2p=off
rping_cell ok
perf_cell write_bw 65536 ok
# siw2 with mpa_crc off: siw's C=1 turns CRCs on (RFC 5044 7.1.1) and
# siw2's Reply says so with C=1, which siw built to require CRCs insists
# on seeing.
conf N 2 Y N
m_crc=on
rping_cell ok
perf_cell write_bw 65536 ok
t_log "siw variants: $((SECONDS - start)) s"

# ======== the end
t_eq "no Terminate sent or received by siw2" "$term_sent0 $term_rcvd0" \
	"$(cnt term_sent) $(cnt term_rcvd)"
t_wait all_gone 15
for o in qp cq mr pd cep listener ucontext srq; do
	t_eq "no live $o after the tools ended" 0 "$(obj $o)"
done
t_ok "rdma link delete siw_ib" nsx ib rdma link delete siw_ib
t_ok "rmmod siw" rmmod siw
for dev in ia ic id; do
	t_ok "rdma link delete siw2_$dev" nsx "$dev" rdma link delete "siw2_$dev"
done
t_eq "no live siw2 objects" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
