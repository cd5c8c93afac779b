#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# siw2 between two hosts on a wire (issue 41): run in both guests of
# scripts/vm-pair, each with its own kernel (6.1 and 6.12 by default),
# joined by their virtio-net NICs. Host a is 198.51.100.1, b .2, a siw2
# device on each NIC. Both directions, CRC on and off: rping -V (every
# octet checked) and ib_write_bw, ib_read_bw, ib_send_bw -R at 64 B and
# 1 MiB. The virtio NIC is a real driver, and each end's receive work
# runs on its own host, unlike the veth of the one-guest suites. Over
# vm-pair --tap (make check, make check-hosts) qemu gives it TSO, GSO and
# checksum offloads; over vm-pair's stream netdev it has none (they need
# the virtio-net header a tap carries) and sends frames of the MTU (the
# suite logs the offloads first). Then the wire made hard with netem on
# a's end (loss, delay with jitter, reordering, duplication), MTUs 9000
# and 1280, a's offloads off, each under rping -V. An rping -V of 65000
# B x10 with a's offloads off is captured in full on a and walked FPDU
# by FPDU (capture/fpdu_walk.py --check-crc): boundaries and every MPA
# CRC good, no frame a sent above the MTU; the same with the offloads
# on again and frames above the MTU, where the NIC has them (skipped,
# with the reason, where it has not). Then upstream siw of b's kernel on b
# against siw2 on a, both directions, rping -V and the three perftest
# tools. Host a captures the connections of every step up to there but
# upstream siw's perftest runs: each must end with FINs, none with a
# reset.
#
# Then NFSv4.2 over RDMA across the hosts: nfsd on b exports a tmpfs
# with an RDMA listener, a mounts it with -o rdma; a file written from a
# has the same SHA-256 on b and read back on a after a remount; the same
# copy again over each hard wire of the rpings, netem on a's end (1 %
# loss; 20 ms delay, 5 ms jitter; reordering; duplication).
# Unmount, nfsd stopped, rpcrdma unloaded, no siw2 object left on either
# host. (The server's host rebooted under the mount is the reboot
# suite's, suites/reboot.sh.) Last,
# a's link down for longer than TCP's retransmissions last (tcp_retries2
# lowered on both for that step only): a bidirectional ib_write_bw -R
# between the hosts ends with an error on both, within a bound; TCP
# counts an abort on timeout on both; a QP of each goes from RTS to ERR
# for its stream (the siw2_qp_state tracepoint); no kernel report, no
# siw2 object left; the link up again, a new rping -V passes.
#
# Depth (T_DEPTH): quick, what make check runs, does all of it but the
# netem NFS copies, with 50 rping round trips, 200 perftest iterations
# (20 at 1 MiB) and a 64 MiB NFS file; full (make check-hosts, or a run
# by hand) 1000, 1000 (100), 256 MiB and the netem NFS copies. The
# captured rpings are 10 round trips at both, the one after the link
# down 20. WIRE_NFS_MIB (the file's MiB) and WIRE_NFS_NETEM (1 or 0: the
# netem copies or not) override the depth's.
#
# The two run the same steps in the same order and meet at each step
# (meet below, over the wire): the server side of a step starts its
# server, then both meet, then the client runs. Each host checks its own
# side; a step's verdict is the client's.
#
#   scripts/vm-pair --tap -- env T_DEPTH=quick tools/testing/guest/run wire
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"

# shellcheck source=../pair.sh
. "$(dirname "$0")/../pair.sh"
dev=siw2_w
port=7700
STEP_LIMIT=$(t_depth 120 900)
N=$(t_depth 50 1000)
tmp=$(mktemp -d)
capdir=$(cd "$(dirname "$0")/../capture" && pwd)
tr=/sys/kernel/tracing
retries2=$(sysctl -n net.ipv4.tcp_retries2)
if ! shim=$(t_prog perftest_shim.so); then
	t_fail "perftest_shim.so is built"
	t_done
	exit 1
fi

cleanup() {
	umount -f "$MNT" 2>/dev/null
	[ ${#nfs_pids[@]} -eq 0 ] || nfs_stop >/dev/null 2>&1
	reap 0
	sysctl -qw net.ipv4.tcp_retries2="$retries2"
	[ -d "$tr/events/siw2" ] && echo 0 >"$tr/events/siw2/enable"
	rdma link delete "$dev" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

t_log "host $me ($(uname -r)), peer on $SIW2_PEER_KERNEL"
if ! pair_up "$dev"; then
	t_done
	exit
fi
t_log "eth0 offloads: $(ethtool -k eth0 2>/dev/null |
	grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|tx-checksumming):' |
	tr -s ' \n' ' ')"
# Whether the NIC segments at all: qemu's virtio-net offers TSO and
# checksum offload only over a backend that carries the virtio-net
# header (vm-pair --tap), not over vm-pair's stream netdev. Both NICs
# are alike.
nic_tso=$(ethtool -k eth0 2>/dev/null | awk '$1 == "tcp-segmentation-offload:" { print $2 }')
# Host a captures the RDMA connections (ports 7700 to 7799) of the whole
# run: every one must end with FINs, none with a reset (issue 41; but
# see the hard wire's late resets where they are counted). Only
# the segments that open and close them (SYN, FIN, RST): what tcp_closes
# counts, a capture tshark reads in seconds, not minutes, under TCG.
cpid=
if [ "$me" = a ]; then
	timeout 5400 dumpcap -q -B 32 -s 128 -i eth0 \
		-f 'tcp portrange 7700-7799 and tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst) != 0' \
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
	echo "$port $name" >>"$tmp/ports"
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
# The hard wires: "WHAT|NETEM ARGUMENTS", for the rpings here and the
# NFS copies further on.
HARD=("1 % loss|loss 1%"
	"20 ms delay, 5 ms jitter|delay 20ms 5ms"
	"reordering|delay 10ms reorder 25% 50%"
	"duplication|duplicate 1%")
# Only a needs netem; b runs the same steps whatever a found.
[ "$me" = a ] && { modprobe sch_netem || t_fail "sch_netem loads on a"; }
for h in "${HARD[@]}"; do
	# shellcheck disable=SC2086 # netem's arguments
	hard "${h%%|*}" ${h#*|}
done

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

# walked_rping WHAT OFFLOADS: an rping -V of 65000 B x10 to a, captured in
# full on a's NIC and walked there by fpdu_walk.py: FPDU boundaries and
# every MPA CRC good (CRC is on). The capture shows a's frames before
# the NIC segments them: with OFFLOADS off none a sent may be above the
# MTU (1514 octets with the Ethernet header), with them on some are.
walked_rping() {
	local what=$1 off=$2 cap=$tmp/walk-$2.pcapng wpid out big
	if [ "$me" = a ]; then
		# the next step's port (step counts them)
		timeout 300 dumpcap -q -B 32 -i eth0 -f "tcp port $((port + 1))" \
			-w "$cap" >"$tmp/walk-$off.dumpcap" 2>&1 &
		wpid=$!
		t_wait "[ -s $cap ] || ! kill -0 $wpid" 30
	fi
	rping_step "$what, captured" a 10 65000
	[ "$me" = a ] || return 0
	sleep 1
	kill -INT "$wpid" 2>/dev/null
	wait "$wpid"
	if out=$(python3 -S "$capdir/fpdu_walk.py" "$cap" --crc on --check-crc 2>&1); then
		t_pass "$what: FPDU boundaries and every MPA CRC good in a's capture"
	else
		t_fail "$what: FPDU boundaries and every MPA CRC good in a's capture" \
			"$(grep -v '^stream ' <<<"$out" | head -n 12)"
	fi
	t_log "$what: $(grep -E '^(initiator|responder|CRC32c|frames)' <<<"$out" | tr '\n' ';')"
	big=$(sed -n "s/^frames from $A: .*, largest \([0-9]*\) octets\$/\1/p" <<<"$out")
	if [ "$off" = off ]; then
		t_ok "$what: a sent no frame above the MTU (no TSO, no GSO)" \
			test "${big:-0}" -gt 0 -a "${big:-0}" -le 1514
	else
		t_ok "$what: a sent frames above the MTU (the NIC segments them)" \
			test "${big:-0}" -gt 1514
	fi
}
walked_rping "offloads off" off
if [ "$nic_tso" != on ]; then
	t_skip "offloads on, captured: rping -V 65000 B x10, to a" \
		"the NIC had no TSO to turn on: tcp-segmentation-offload ${nic_tso:-unknown} from the start"
else
	if [ "$me" = a ]; then
		t_ok "a's offloads on again" ethtool -K eth0 tso on gso on tx on
		t_log "eth0 offloads now: $(ethtool -k eth0 |
			grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|tx-checksumming):' |
			tr -s ' \n' ' ')"
	fi
	must_meet offloads-on
	walked_rping "offloads on" on
fi

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

# a's capture ends here: what follows uses ports outside its range, and
# the link down ends its connections with resets on purpose.
must_meet capture-end
if [ -n "$cpid" ]; then
	sleep 1
	kill -INT "$cpid" 2>/dev/null
	wait "$cpid"
	read -r conns fin rst late < <(tcp_closes "$tmp/wire.pcapng")
	t_log "the wire: $conns connections, $fin halves ended with a FIN, $rst with a reset before it, $late with one after it"
	# A reset after its half's FIN answers a segment that arrived once
	# the connection was closed: on the hard wire's reordering and
	# duplication TCP's own late segments do that (one half of 33
	# connections, in two full runs of this suite), and it is logged;
	# anywhere else it counts.
	while read -r half dport; do
		step=$(awk -v a="${half##*:}" -v b="$dport" '$1 == a || $1 == b' "$tmp/ports")
		case ${step#* } in
		"hard wire, "*) t_log "the wire: a late reset from $half, step: ${step#* }" ;;
		*) rst=$((rst + 1)) ;;
		esac
	done < <(tcp_closes "$tmp/wire.pcapng" late)
	if [ "$rst" = 0 ]; then
		t_pass "no TCP reset on the wire after clean rping and perftest runs"
	else
		# which steps' connections: each step has a port of its own
		t_fail "no TCP reset on the wire after clean rping and perftest runs" \
			"$rst halves reset; the resets (time, from, to, and the step of the port):" \
			"$(tshark -r "$tmp/wire.pcapng" -Y tcp.flags.reset==1 -T fields \
				-e frame.time_relative -e ip.src -e tcp.srcport -e ip.dst \
				-e tcp.dstport 2>/dev/null | head -n 10 |
				while read -r t src sp dst dp; do
					echo "$t $src:$sp > $dst:$dp" \
						"$(awk -v a="$sp" -v b="$dp" '$1 == a || $1 == b' "$tmp/ports" | cut -c 1-100)"
				done)"
	fi
	if [ "$conns" -gt 0 ] && [ "$fin" = $((2 * conns)) ]; then
		t_pass "both halves of each of the $conns connections end with a FIN"
	else
		t_fail "both halves of each connection end with a FIN" \
			"$conns connections, $fin halves with a FIN"
	fi
fi

# --- NFSv4.2 over RDMA across the hosts: nfsd on b, the client on a.
# The export is NFSv4's root (fsid=0), a tmpfs: b's own / is 9p, which
# nfsd cannot export. Only the steps' client (a) knows when its copy
# ended, so each host waits at the meetings for the other's copy.
NFS_MIB=${WIRE_NFS_MIB:-$(t_depth 64 256)}
NFS_NETEM=${WIRE_NFS_NETEM:-$(t_depth 0 1)}
# Bounds of one copy, clean and over netem's wire, in seconds.
NFS_LIMIT=300
NFS_NETEM_LIMIT=1800
# nfs_copy WHAT FILE LIMIT: a writes its file as FILE on the export; b
# checks the SHA-256 of what it got against a's (a writes that to
# FILE.sum-a); a reads the file back after a remount, so from the
# server, and checks it and the SHA-256 b found (FILE.sum-b). Each copy
# within LIMIT s.
nfs_copy() {
	local what=$1 f=$2 limit=$3 want got t0 st
	if [ "$me" = a ] && ! mountpoint -q "$MNT"; then
		t_fail "$what: a writes $NFS_MIB MiB to b's export" \
			"b's export is not mounted on a"
	elif [ "$me" = a ]; then
		want=$(cat "$tmp/nfs.sum")
		t0=$SECONDS
		timeout "$limit" dd if="$tmp/nfs.src" of="$MNT/$f" bs=1M \
			conv=fsync status=none 2>"$tmp/nfs.err"
		st=$?
		if [ "$st" = 0 ]; then
			t_pass "$what: a writes $NFS_MIB MiB to b's export"
			t_log "$what: wrote $NFS_MIB MiB in $((SECONDS - t0)) s"
		else
			t_fail "$what: a writes $NFS_MIB MiB to b's export" \
				"exit $st (124: not within $limit s)" \
				"$(head -c 300 "$tmp/nfs.err")"
		fi
		echo "$want" | timeout 60 dd of="$MNT/$f.sum-a" conv=fsync status=none
	fi
	must_meet "$f-written" $((limit + 120))
	if [ "$me" = b ]; then
		got=$(sha256sum <"$EXP/$f" | cut -d' ' -f1)
		t_eq "$what: b's copy has the SHA-256 of a's file" \
			"$(cat "$EXP/$f.sum-a" 2>&1)" "$got"
		echo "$got" >"$EXP/$f.sum-b"
	fi
	must_meet "$f-checked"
	if [ "$me" = a ] && mountpoint -q "$MNT"; then
		t_ok "$what: remount on a" nfs_remount
		t0=$SECONDS
		got=$(timeout "$limit" sha256sum "$MNT/$f" | cut -d' ' -f1)
		t_eq "$what: read back on a, the same SHA-256" "$want" "$got"
		t_log "$what: read $NFS_MIB MiB in $((SECONDS - t0)) s"
		t_eq "$what: b's SHA-256 of its copy is a's" "$want" \
			"$(timeout 60 cat "$MNT/$f.sum-b" 2>&1)"
		timeout 60 rm -f "$MNT/$f" "$MNT/$f.sum-a" "$MNT/$f.sum-b"
	fi
	must_meet "$f-read" $((limit + 120))
}

nfs_ok=1
if ! command -v rpc.nfsd >/dev/null || ! modprobe rpcrdma 2>/dev/null; then
	t_skip "NFS over RDMA across the hosts" "no nfs-kernel-server or rpcrdma"
	nfs_ok=0
fi
# nfs_start and nfs_stop run in this shell, not in t_ok's command
# substitution: the daemons are this shell's jobs.
if [ "$nfs_ok" = 1 ] && [ "$me" = a ]; then
	dd if=/dev/urandom of="$tmp/nfs.src" bs=1M count="$NFS_MIB" status=none
	sha256sum <"$tmp/nfs.src" | cut -d' ' -f1 >"$tmp/nfs.sum"
fi
if [ "$nfs_ok" = 1 ] && [ "$me" = b ]; then
	if nfs_start >"$tmp/nfs.start" 2>&1; then
		t_pass "NFS: nfsd on b with an RDMA listener on 20049"
		[ -s "$tmp/nfs.start" ] && t_log "NFS: $(head -c 300 "$tmp/nfs.start")"
	else
		t_fail "NFS: nfsd on b with an RDMA listener on 20049" \
			"$(head -c 1000 "$tmp/nfs.start")"
	fi
	t_match "NFS: nfsd lists the rdma port" '^rdma 20049$' \
		"$(cat /proc/fs/nfsd/portlist 2>&1)"
fi
if [ "$nfs_ok" = 1 ]; then
	must_meet nfs
	if [ "$me" = a ]; then
		mkdir -p "$MNT"
		t_ok "NFS: a mounts b's export, -o rdma,port=20049,vers=4.2" nfs_mount
		t_match "NFS: /proc/mounts shows NFSv4.2 over RDMA" \
			'vers=4\.2,.*proto=rdma,.*port=20049' "$(grep " $MNT " /proc/mounts)"
	fi
	nfs_copy NFS nfs-clean "$NFS_LIMIT"
	# One copy over each hard wire of the rpings, one after the other.
	n=0
	for h in "${HARD[@]}"; do
		[ "$NFS_NETEM" = 1 ] || break
		n=$((n + 1))
		if [ "$me" = a ]; then
			# shellcheck disable=SC2086 # netem's arguments
			t_ok "NFS, hard wire, ${h%%|*}: netem ${h#*|} on a" \
				tc qdisc replace dev eth0 root netem ${h#*|}
		fi
		nfs_copy "NFS, hard wire, ${h%%|*}" "nfs-netem$n" "$NFS_NETEM_LIMIT"
		[ "$me" = a ] && tc qdisc del dev eth0 root 2>/dev/null
	done
	if [ "$me" = a ]; then
		t_ok "NFS: umount on a" timeout 120 umount "$MNT"
		t_eq "NFS: no NFS mount left on a" "" "$(grep " $MNT " /proc/mounts)"
	fi
	must_meet nfs-unmounted
	nfs_teardown
	must_meet nfs-end
fi

# --- a's link down for longer than TCP's retransmissions last. With
# tcp_retries2 at 3 on both hosts (this step only) TCP gives up on data
# left unacknowledged once its retransmissions have gone on for what 3
# doublings of the minimum RTO make (3 s; tcp_retries2 in ip-sysctl),
# checked when the retransmission timer fires: a few seconds after the
# cut while the RTO is small. Both ends write (ib_write_bw -b), so that
# each has data in flight when the link goes and gets no acknowledgement
# after. The link stays down LD_DOWN s at least, longer when a's TCP
# took long to give up (b cannot say when its own did: the wire is down).
LD_DOWN=12
LD_BOUND=60
# what vm-run's scan of the kernel log counts as a report (scripts/lib/vm.sh)
kernel_report='BUG:|WARNING:|Oops|general protection fault|KASAN|UBSAN|soft lockup|hard LOCKUP|blocked for more than|Kernel panic'
# TCP's count of connections it gave up on (TcpExt TCPAbortOnTimeout)
tcp_aborts() {
	awk '$1 == "TcpExt:" { if (!n) { for (i = 2; i <= NF; i++)
		if ($i == "TCPAbortOnTimeout") c = i; n = 1 } else print $c }' \
		/proc/net/netstat
}
ev_qp=$tr/events/siw2/siw2_qp_state
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
if [ -d "$ev_qp" ]; then
	echo >"$tr/trace"
	echo 1 >"$ev_qp/enable"
fi
t_ok "link down: tcp_retries2 3 on $me" sysctl -qw net.ipv4.tcp_retries2=3
aborts=$(tcp_aborts)
klog=$(dmesg | wc -l)
port=$((port + 1))
# Four 64 KiB Writes in flight each way (-t 4): a deep queue on the
# wire would raise TCP's RTO, and with it the time TCP takes to give up.
ld=(ib_write_bw -R -F -b -d "$dev" -s 65536 -t 4 -n 1000000 -p "$port")
if [ "$me" = b ]; then
	timeout $((3 * LD_BOUND)) "${ld[@]}" >"$tmp/ld" 2>&1 &
	ldpid=$!
	t_listening - "$port"
fi
must_meet link-down
t0=$SECONDS
if [ "$me" = a ]; then
	timeout $((3 * LD_BOUND)) env LD_PRELOAD="$shim" CONNECT_DELAY_MS=1000 \
		"${ld[@]}" "$B" >"$tmp/ld" 2>&1 &
	ldpid=$!
	# the Writes flow both ways before the cut: 4 MiB each way
	stats=/sys/class/net/eth0/statistics
	tx=$(($(cat $stats/tx_bytes) + (4 << 20)))
	rx=$(($(cat $stats/rx_bytes) + (4 << 20)))
	if t_wait "[ \$(cat $stats/tx_bytes) -gt $tx ] && [ \$(cat $stats/rx_bytes) -gt $rx ] ||
		! kill -0 $ldpid" "$LD_BOUND" && kill -0 "$ldpid" 2>/dev/null; then
		t_pass "link down: ib_write_bw -b runs, 4 MiB each way"
	else
		t_fail "link down: ib_write_bw -b runs, 4 MiB each way" \
			"$(tail -n 5 "$tmp/ld")"
	fi
	t_ok "link down: a's eth0 down" ip link set eth0 down
	t0=$SECONDS
fi
# Each host's application must be told: a's within LD_BOUND s of the
# cut, b's (which does not see it) within twice that of the meeting.
bound=$LD_BOUND
[ "$me" = b ] && bound=$((2 * LD_BOUND))
left=$((bound + t0 - SECONDS))
if timeout $((left > 0 ? left : 1)) tail --pid="$ldpid" -f /dev/null; then
	wait "$ldpid"
	st=$?
	took=$((SECONDS - t0))
	if [ "$st" != 0 ] && [ "$st" != 124 ]; then
		t_pass "link down: ib_write_bw on $me ends with an error (exit $st) in $took s"
	else
		t_fail "link down: ib_write_bw on $me ends with an error" "exit $st" \
			"$(tail -n 5 "$tmp/ld")"
	fi
	t_log "link down: $me: $(grep -iE 'error|fail' "$tmp/ld" | head -n 3 | tr '\n' ';')"
else
	t_fail "link down: ib_write_bw on $me ends with an error within $bound s" \
		"$(stuck_report "$ldpid")"
	kill "$ldpid" 2>/dev/null
fi
if [ "$me" = a ]; then
	# b's TCP gives up about when a's did (the same RTTs, so about the
	# same RTOs; seen up to 1.5 times as late on a busy host): the link
	# stays down twice as long as a's took and 4 s, LD_DOWN s at least
	down=$((2 * (SECONDS - t0) + 4))
	[ "$down" -ge "$LD_DOWN" ] || down=$LD_DOWN
	[ "$down" -le $((4 * LD_DOWN)) ] || down=$((4 * LD_DOWN))
	sleep $((down + t0 - SECONDS > 0 ? down + t0 - SECONDS : 0))
	t_log "link down: a's eth0 was down $((SECONDS - t0)) s"
	t_ok "link down: a's eth0 up again" ip link set eth0 up
	t_wait "ping -c 1 -W 1 $B" 30
fi
t_ok "link down: TCP on $me gave up on a connection (TCPAbortOnTimeout)" \
	test "$(tcp_aborts)" -gt "$aborts"
if [ -d "$ev_qp" ]; then
	t_match "link down: a QP of $me went from RTS to ERR for its stream" \
		"^dev=$dev qpn=[0-9]+ RTS -> ERR cause=llp_(error|closed)\$" \
		"$(sed -n 's/.* siw2_qp_state: //p' "$tr/trace")"
	echo 0 >"$ev_qp/enable"
else
	t_fail "link down: a QP of $me went from RTS to ERR for its stream" \
		"no tracepoint $ev_qp"
fi
t_nomatch "link down: no kernel report on $me" "$kernel_report" \
	"$(dmesg | tail -n +$((klog + 1)))"
t_ok "link down: no siw2 object left on $me" t_wait all_gone 30
t_ok "link down: tcp_retries2 back to $retries2 on $me" \
	sysctl -qw net.ipv4.tcp_retries2="$retries2"
must_meet link-up
rping_step "after the link down" a 20 4096

t_ok "done: both hosts at the end" meet end
reap 10
t_ok "rdma link delete $dev" rdma link delete "$dev"
t_ok "modprobe -r siw2" modprobe -r siw2
t_done
