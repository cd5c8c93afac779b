#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# siw2 between two hosts on a wire (issue 41): run in both guests of
# scripts/vm-pair, each with its own kernel (6.1 and 6.12 by default),
# joined by their virtio-net NICs. Host a is 198.51.100.1, b .2, a siw2
# device on each NIC. Both directions, CRC on and off: rping -V (every
# octet checked) and ib_write_bw, ib_read_bw, ib_send_bw -R at 64 B and
# 1 MiB. The virtio NIC segments and checksums as a real one does (TSO,
# GSO, checksum offload), unlike the veth of the one-guest suites. Then
# the wire made hard with netem on a's end (loss, delay with jitter,
# reordering, duplication), MTUs 9000 and 1280, a's offloads off, each
# under rping -V; then upstream siw of b's kernel on b against siw2 on
# a, both directions, rping -V and the three perftest tools. Host a
# captures the connections of every step but upstream siw's perftest
# runs: each must end with FINs, none with a reset.
#
# The two run the same steps in the same order and meet at each step
# (meet below, over the wire): the server side of a step starts its
# server, then both meet, then the client runs. Each host checks its own
# side; a step's verdict is the client's.
#
#   scripts/vm-pair -- env T_DEPTH=quick tools/testing/guest/run wire
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

me=${SIW2_HOST:-}
A=198.51.100.1
B=198.51.100.2
case $me in
a) mine=$A peer=$B ;;
b) mine=$B peer=$A ;;
*)
	t_skip "the wire suite runs on the hosts of scripts/vm-pair (SIW2_HOST a or b)"
	t_done
	exit
	;;
esac
dev=siw2_w
port=7700
SYNC_PORT=7999
STEP_LIMIT=$(t_depth 120 900)
N=$(t_depth 50 1000)
tmp=$(mktemp -d)
if ! shim=$(t_prog perftest_shim.so); then
	t_fail "perftest_shim.so is built"
	t_done
	exit 1
fi

cleanup() {
	reap 0
	rdma link delete "$dev" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# meet TAG: both hosts reach this point before either goes on. a listens,
# b connects (and tries again until a listens); each sends TAG and must
# read the other's, so that two hosts out of step fail at once.
meet() {
	timeout 120 python3 -S - "$me" "$A" "$SYNC_PORT" "$1" <<'EOF'
import socket, sys, time
me, addr, port, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
tag = tag.encode() + b"\n"
if me == "a":
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    s, _ = ls.accept()
else:
    while True:
        try:
            s = socket.create_connection((addr, port), timeout=5)
            s.settimeout(None)
            break
        except OSError:
            time.sleep(0.2)
s.sendall(tag)
got = s.makefile("rb").readline()
sys.exit(0 if got == tag else 1)
EOF
}
# must_meet TAG: meet, or end the suite: hosts out of step would pair
# the wrong steps for the rest of the run.
must_meet() {
	meet "$1" && return 0
	t_fail "the hosts meet at $1" "no meeting within 120 s"
	t_done
	exit 1
}

t_log "host $me ($(uname -r)), peer on $SIW2_PEER_KERNEL"
t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
ip addr add "$mine/24" dev eth0
ip link set eth0 up
t_ok "rdma link add $dev on the wire's NIC" \
	rdma link add "$dev" type siw2 netdev eth0
t_log "eth0 offloads: $(ethtool -k eth0 2>/dev/null |
	grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|tx-checksumming):' |
	tr -s ' \n' ' ')"
if ! t_wait "ping -c 1 -W 1 $peer >/dev/null 2>&1" 60; then
	t_fail "the peer host answers on the wire" "no ping reply from $peer"
	t_done
	exit
fi
t_pass "the peer host answers on the wire"
# Host a captures the RDMA connections (ports 7700 to 7799) of the whole
# run: every one must end with FINs, none with a reset (issue 41).
cpid=
if [ "$me" = a ]; then
	timeout 5400 dumpcap -q -B 32 -s 128 -i eth0 -f 'tcp portrange 7700-7799' \
		-w "$tmp/wire.pcapng" >"$tmp/dumpcap" 2>&1 &
	cpid=$!
	t_wait "[ -s $tmp/wire.pcapng ] || ! kill -0 $cpid" 30
fi
t_ok "both hosts are up" meet up

# step NAME SERVER_HOST SERVER_CMD... -- CLIENT_CMD...: a step of the two.
# The server runs on SERVER_HOST in the background, the client on the
# other host; the client's exit status is the step's verdict, and the
# server must exit 0 too.
step() {
	local name=$1 srv=$2 cmd=() st
	shift 2
	while [ "$1" != -- ]; do
		cmd+=("$1")
		shift
	done
	shift
	port=$((port + 1))
	if [ "$me" = "$srv" ]; then
		timeout "$STEP_LIMIT" "${cmd[@]/@PORT@/$port}" >"$tmp/s$port" 2>&1 &
		local spid=$!
		t_listening - "$port"
		must_meet "$name"
		wait "$spid"
		st=$?
		t_eq "$name: the server ($me) exits 0" 0 "$st"
		[ "$st" = 0 ] || t_log "$name: server: $(tail -n 5 "$tmp/s$port" | cut -c 1-200 | tr '\n' ';')"
	else
		must_meet "$name"
		local args=("$@")
		timeout "$STEP_LIMIT" "${args[@]/@PORT@/$port}" >"$tmp/c$port" 2>&1
		st=$?
		t_eq "$name: the client ($me) exits 0" 0 "$st"
		[ "${args[0]}" = rping ] && rping_count "$name" "$tmp/c$port" "${args[@]}"
		[ "$st" = 0 ] || t_log "$name: client: $(tail -n 5 "$tmp/c$port" | cut -c 1-200 | tr '\n' ';')"
		if [ "$st" = 0 ] && grep -Eq '^ *[0-9]+ +[0-9]+' "$tmp/c$port"; then
			t_log "$name: $(grep -E '^ *[0-9]+ +[0-9]+' "$tmp/c$port" | tail -n 1 | tr -s ' \t' ' ')"
		fi
	fi
}

# rping_count NAME OUT ARGS...: rping exits 0 after a disconnect even
# when it ended early: the client must have completed its -C pings.
rping_count() {
	local name=$1 out=$2 n=0 got
	shift 2
	while [ $# -gt 1 ]; do
		[ "$1" = -C ] && n=$2
		shift
	done
	got=$(grep -Ec '^ping data: rdma-ping-[0-9]+: ' "$out")
	t_eq "$name: the client completed its $n pings" "$n" "$got"
}

addr_of() { if [ "$1" = a ]; then echo $A; else echo $B; fi; }

# rping_step WHAT SERVER_HOST COUNT SIZE [NOTE]: a step of rping -V
# (every octet checked), the server on SERVER_HOST; "WHAT: " heads its
# name when WHAT is not empty, ", NOTE" ends it.
rping_step() {
	local sa size=$4 sz="$4 B"
	sa=$(addr_of "$2")
	[ "$size" = 4096 ] && sz="4 KiB"
	step "${1:+$1: }rping -V $sz x$3, to $2${5:+, $5}" "$2" \
		rping -s -a "$sa" -p @PORT@ -C "$3" -S "$size" -V -v -- \
		rping -c -a "$sa" -p @PORT@ -C "$3" -S "$size" -V -v
}

for crc in Y N; do
	siw2_set mpa_crc $crc
	must_meet "crc-$crc"
	for srv in a b; do
		rping_step "" $srv "$N" 4096 "CRC $crc"
	done
done
siw2_set mpa_crc Y

# perftest over the RDMA CM, each tool at both sizes, the direction
# alternating; CRC on (the default) and off for the Writes. $ptdev is
# this host's device (b's upstream siw device near the end, where CRC is
# left as it is: "" for CRC). pt_step TOOL SIZE SERVER_HOST CRC [WHAT]
ptdev=$dev
pt_step() {
	local tool=$1 size=$2 srv=$3 crc=$4 what=${5:+$5: } other=a sa n
	[ "$srv" = a ] && other=b
	sa=$(addr_of "$srv")
	n=$(t_depth 200 1000)
	[ "$size" -ge 1048576 ] && n=$(t_depth 20 100)
	[ -z "$crc" ] || siw2_set mpa_crc "$crc"
	# perftest's server listens anew for its test connection after the
	# control one; the shim's delay keeps the client from coming first.
	step "$what$tool -R ${size} B x$n, $other to $srv${crc:+, CRC $crc}" "$srv" \
		"$tool" -R -F -d "$ptdev" -s "$size" -n "$n" -p @PORT@ -- \
		env LD_PRELOAD="$shim" CONNECT_DELAY_MS=1000 \
		"$tool" -R -F -d "$ptdev" -s "$size" -n "$n" -p @PORT@ "$sa"
}
pt_step ib_write_bw 64 b Y
pt_step ib_write_bw 1048576 a Y
pt_step ib_write_bw 1048576 b N
pt_step ib_read_bw 64 a Y
pt_step ib_read_bw 1048576 b Y
pt_step ib_send_bw 64 b Y
pt_step ib_send_bw 1048576 a N
siw2_set mpa_crc Y

# --- the wire made hard, on a's end: each case under a verified rping
# both ways. netem's defaults for the rest (a 1000-packet queue).
NH=$(t_depth 50 1000)
hard() {
	local what=$1 srv
	shift
	if [ "$me" = a ]; then
		t_ok "hard wire, $what: tc qdisc netem $*" \
			tc qdisc replace dev eth0 root netem "$@"
	fi
	must_meet "hard-$what"
	for srv in a b; do
		rping_step "hard wire, $what" $srv "$NH" 4096
	done
	[ "$me" = a ] && tc qdisc del dev eth0 root 2>/dev/null
	must_meet "hard-$what-end"
}
# Only a needs netem; b runs the same steps whatever a found.
[ "$me" = a ] && { modprobe sch_netem || t_fail "sch_netem loads on a"; }
hard "1 % loss" loss 1%
hard "20 ms delay, 5 ms jitter" delay 20ms 5ms
hard "reordering" delay 10ms reorder 25% 50%
hard "duplication" duplicate 1%

# --- MTUs, on both ends; then a's offloads off (TSO, GSO, checksums)
for mtu in 9000 1280; do
	t_ok "MTU $mtu on eth0" ip link set eth0 mtu $mtu
	must_meet "mtu-$mtu"
	rping_step "MTU $mtu" b "$NH" 65000
done
ip link set eth0 mtu 1500
if [ "$me" = a ]; then
	t_ok "a's offloads off" ethtool -K eth0 tso off gso off tx off
	t_log "eth0 offloads now: $(ethtool -k eth0 |
		grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|tx-checksumming):' |
		tr -s ' \n' ' ')"
fi
must_meet offloads
for srv in a b; do
	rping_step "offloads off" $srv "$NH" 65000
done
[ "$me" = a ] && ethtool -K eth0 tso on gso on tx on

# --- upstream siw of b's kernel on b, siw2 on a (scripts/upstream-siw on
# the host builds it for each kernel). Both directions; upstream siw asks
# for no CRC and takes siw2's demand for one (RFC 5044 7.1.5).
siw_ko=
# A TCG host may take seconds to schedule a tool's accept (interop.sh).
[ "$me" = a ] && siw2_set mpa_reply_timeout_ms 60000 &&
	siw2_set mpa_request_timeout_ms 60000
if [ "$me" = b ]; then
	for d in ${UPSTREAM_SIW_DIR:+"$UPSTREAM_SIW_DIR"} \
		"${SIW2_CACHE:-$HOME/.cache/siw2}/upstream-siw/$(uname -r)" \
		"/root/.cache/siw2/upstream-siw/$(uname -r)" \
		/home/*/.cache/siw2/upstream-siw/"$(uname -r)"; do
		[ -f "$d/siw.ko" ] && siw_ko=$d/siw.ko && break
	done
	if [ -n "$siw_ko" ] && rdma link delete "$dev" && modprobe -r siw2 &&
		{ modprobe libcrc32c 2>/dev/null; insmod "$siw_ko"; } &&
		rdma link add siw_w type siw netdev eth0; then
		t_pass "b: upstream siw ($(uname -r)) on the wire"
		echo up >"$tmp/siw"
	else
		t_fail "b: upstream siw ($(uname -r)) on the wire" \
			"${siw_ko:-no siw.ko; on the host: scripts/upstream-siw $(uname -r)}"
		echo down >"$tmp/siw"
		# siw2 back, so that the rest of the suite finds what it left.
		grep -q '^siw2 ' /proc/modules || modprobe siw2
		rdma link show "$dev" >/dev/null 2>&1 ||
			rdma link add "$dev" type siw2 netdev eth0
	fi
fi
must_meet siw
for srv in a b; do
	rping_step "siw2 and upstream siw" $srv "$N" 4096
done
# perftest too, each tool once, the direction alternating, on ports past
# the capture's range: how upstream siw ends a connection is not siw2's
# to judge.
[ "$me" = b ] && [ "$(cat "$tmp/siw")" = up ] && ptdev=siw_w
port=7800
pt_step ib_write_bw 1048576 a "" "siw2 and upstream siw"
pt_step ib_read_bw 1048576 b "" "siw2 and upstream siw"
pt_step ib_send_bw 64 a "" "siw2 and upstream siw"
ptdev=$dev
if [ "$me" = b ] && [ "$(cat "$tmp/siw")" = up ]; then
	rdma link delete siw_w
	t_ok "b: rmmod upstream siw" rmmod siw
	modprobe siw2 && rdma link add "$dev" type siw2 netdev eth0
fi

t_ok "done: both hosts at the end" meet end
if [ -n "$cpid" ]; then
	sleep 1
	kill -INT "$cpid" 2>/dev/null
	wait "$cpid"
	read -r conns fin rst < <(tcp_closes "$tmp/wire.pcapng")
	t_log "the wire: $conns connections, $fin halves ended with a FIN, $rst with a reset"
	t_eq "no TCP reset on the wire after clean rping and perftest runs" 0 "$rst"
	if [ "$conns" -gt 0 ] && [ "$fin" = $((2 * conns)) ]; then
		t_pass "both halves of each of the $conns connections end with a FIN"
	else
		t_fail "both halves of each connection end with a FIN" \
			"$conns connections, $fin halves with a FIN"
	fi
fi
reap 10
t_ok "rdma link delete $dev" rdma link delete "$dev"
t_ok "modprobe -r siw2" modprobe -r siw2
t_done
