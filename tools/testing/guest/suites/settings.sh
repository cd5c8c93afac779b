#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Per-device settings (drivers/siw2/conf.c): the files of
# /sys/class/infiniband/DEV/siw2/. Three hosts on a bridge (namespaces
# st1, st2, st3 with devices siw2_s1, siw2_s2, siw2_s3; the bridge in
# st0) whose devices differ in CRC, revision and Markers connect to each
# other, and each pair negotiates what RFC 5044 7.1.1 and RFC 6581 10 say,
# checked in `rdma resource show qp -dd` on both ends and on the wire
# (tshark's MPA dissector over a capture of the bridge). Then: a change
# while a connection is up leaves it alone, the module parameters are
# the defaults of new devices only, bad values are refused with EINVAL
# and change nothing, and writers without root or without CAP_NET_ADMIN
# are refused. (device.sh configures a device from inside its namespace
# in exclusive mode.)
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
params=/sys/module/siw2/parameters
cls=/sys/class/infiniband
port=7800

cleanup() {
	reap 0
	for ns in st1 st2 st3 st0; do
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
for tool in rping dumpcap tshark setpriv; do
	if ! command -v "$tool" >/dev/null; then
		t_fail "tools present" "no $tool"
		t_done
		exit
	fi
done

ip netns add st0
ip -n st0 link add br0 type bridge
ip -n st0 link set br0 up
for i in 1 2 3; do
	ip netns add st$i
	ip link add e$i netns st$i type veth peer name p$i netns st0
	ip -n st0 link set p$i master br0
	ip -n st0 link set p$i up
	ip -n st$i link set lo up
	ip -n st$i addr add 192.0.2.$i/24 dev e$i
	ip -n st$i link set e$i up
	ip netns exec st$i rdma link add siw2_s$i type siw2 netdev e$i
done
t_reach st1 192.0.2.2
t_reach st1 192.0.2.3
t_reach st2 192.0.2.3

# --- the files, and the module parameters as their defaults
names="mpa_rev mpa_rtr mpa_crc mpa_markers mpa_p2p mpa_large_fpdu tcp_timeout_ms mpa_request_timeout_ms mpa_reply_timeout_ms tx_zerocopy sq_poll_us port_map"
bad=()
for n in $names; do
	f=$cls/siw2_s1/siw2/$n
	if [ ! -f "$f" ]; then
		bad+=("no $f")
		continue
	fi
	v=$(cat "$f") p=$(cat "$params/$n")
	case $p in Y) p=1 ;; N) p=0 ;; esac
	[ "$v" = "$p" ] || bad+=("$n: device $v, module parameter $p")
	[ "$(stat -c %a "$f")" = 644 ] || bad+=("$n: mode $(stat -c %a "$f")")
done
if [ ${#bad[@]} = 0 ]; then
	t_pass "every setting is a file of the device (0644), its default the module parameter's"
else
	t_fail "every setting is a file of the device (0644), its default the module parameter's" "${bad[@]}"
fi

# set DEV NAME VALUE: one device's setting.
set1() { echo "$3" >"$cls/$1/siw2/$2"; }
get1() { cat "$cls/$1/siw2/$2"; }

# s1: CRC, revision 2, no Markers (the defaults). s2: no CRC, revision
# 1, Markers. s3: no CRC, revision 2, no Markers.
set1 siw2_s2 mpa_crc 0
set1 siw2_s2 mpa_rev 1
set1 siw2_s2 mpa_markers 1
set1 siw2_s3 mpa_crc 0
t_eq "each device keeps its own settings" "1 2 0 / 0 1 1 / 0 2 0" \
	"$(for d in siw2_s1 siw2_s2 siw2_s3; do
		printf '%s ' "$(get1 $d mpa_crc)" "$(get1 $d mpa_rev)" "$(get1 $d mpa_markers)"
		[ $d = siw2_s3 ] || printf '/ '
	done | sed 's/ $//')"

# terms NS DEV: the MPA terms of DEV's connected QP, from restrack.
terms() {
	ip netns exec "$1" rdma -dd res show qp link "$2/1" |
		grep -o 'drv_mpa_rev [0-9]* drv_mpa_enhanced [0-9]* drv_crc [0-9]* drv_markers_tx [0-9]* drv_markers_rx [0-9]*' |
		head -n 1
}

# pair I J EXPECT_I EXPECT_J: an rping from sti (initiator) to stj's
# listener, held open while both ends' terms are read; EXPECT_x is
# "REV CRC MARKERS_TX MARKERS_RX" as restrack shows them on that end.
cap_ports=()
pair() {
	local i=st$1 j=st$2 di=siw2_s$1 dj=siw2_s$2 ti tj opts spid cpid
	opts=(-a "192.0.2.$2" -p "$port" -C 100000 -S 64)
	ip netns exec "$j" timeout 60 rping -s "${opts[@]}" >"$tmp/s$port" 2>&1 &
	spid=$!
	t_listening "$j" "$port"
	ip netns exec "$i" timeout 60 rping -c "${opts[@]}" >"$tmp/c$port" 2>&1 &
	cpid=$!
	if t_wait "ip netns exec $i rdma res show qp link $di/1 | grep -q ' state RTS '" 20 &&
	   t_wait "ip netns exec $j rdma res show qp link $dj/1 | grep -q ' state RTS '" 20; then
		ti=$(terms "$i" "$di") tj=$(terms "$j" "$dj")
	fi
	# Not reap: the capture runs on.
	pkill -x rping
	wait "$spid" "$cpid"
	read -r r c mt mr <<<"$3"
	t_eq "s$1->s$2: the initiator's terms (rev crc markers tx/rx)" \
		"drv_mpa_rev $r drv_mpa_enhanced $((r - 1)) drv_crc $c drv_markers_tx $mt drv_markers_rx $mr" "$ti"
	read -r r c mt mr <<<"$4"
	t_eq "s$1->s$2: the responder's terms" \
		"drv_mpa_rev $r drv_mpa_enhanced $((r - 1)) drv_crc $c drv_markers_tx $mt drv_markers_rx $mr" "$tj"
	cap_ports+=("$port")
	port=$((port + 1))
}

cap=$tmp/bridge.pcapng
ip netns exec st0 timeout 300 dumpcap -q -i br0 -f tcp -w "$cap" \
	>"$tmp/dumpcap" 2>&1 &
cap_pid=$!
t_wait "[ -s $cap ] || ! kill -0 $cap_pid" 30
sleep 1

# CRC: used when either end asks (RFC 5044 7.1.1, C). Markers: each
# end asks for them towards itself (M). Revision: s2 speaks 1 only and
# closes an RFC 6581 Request; the initiator retries with revision 1
# (RFC 6581 10).
pair 1 2 "1 1 1 0" "1 1 0 1"
pair 1 3 "2 1 0 0" "2 1 0 0"
pair 2 3 "1 0 0 1" "1 0 1 0"
pair 3 1 "2 1 0 0" "2 1 0 0"
sleep 1
kill -INT "$cap_pid" 2>/dev/null
wait "$cap_pid" 2>/dev/null

# The last Request and Reply of each connection as tshark decodes them:
# PORT KIND REV C M REJECT.
tshark -n -r "$cap" -Y 'iwarp_mpa.key.req || iwarp_mpa.key.rep' -T fields \
	-e tcp.srcport -e tcp.dstport -e iwarp_mpa.key.req -e iwarp_mpa.rev \
	-e iwarp_mpa.crc_flag -e iwarp_mpa.marker_flag -e iwarp_mpa.rej_flag \
	2>"$tmp/tshark.err" >"$tmp/frames"
wire() { # PORT: "REQ rev C M / REP rev C M reject" of its last exchange
	sed 's/True/1/g; s/False/0/g' "$tmp/frames" | awk -F '\t' -v p="$1" '
		$2 == p && $3 != "" { req = "REQ " $4 " " $5 " " $6 }
		$1 == p && $3 == "" { rep = "REP " $4 " " $5 " " $6 " " $7 }
		END { print req " / " rep }'
}
t_log "MPA frames on the wire: $(tr '\t\n' ' ;' <"$tmp/frames")"
# Request: the initiator's own C and M; Reply: C as used (either asked),
# the responder's own M.
t_eq "wire: s1->s2, revision 1 after the retry, Markers towards s2 only" \
	"REQ 1 1 0 / REP 1 1 1 0" "$(wire "${cap_ports[0]}")"
t_eq "wire: s1->s3, revision 2, CRC as s1 asked" \
	"REQ 2 1 0 / REP 2 1 0 0" "$(wire "${cap_ports[1]}")"
t_eq "wire: s2->s3, revision 1, no CRC, Markers towards s2" \
	"REQ 1 0 1 / REP 1 0 0 0" "$(wire "${cap_ports[2]}")"
t_eq "wire: s3->s1, CRC because the responder asks" \
	"REQ 2 0 0 / REP 2 1 0 0" "$(wire "${cap_ports[3]}")"

# --- a change under a live connection: the connection keeps its terms
n=$(t_depth 1000 3000)
opts=(-a 192.0.2.1 -p "$port" -C "$n" -S 1000 -V)
ip netns exec st1 timeout 120 rping -s "${opts[@]}" >"$tmp/live.s" 2>&1 &
t_listening st1 "$port"
ip netns exec st3 timeout 120 stdbuf -oL rping -c -v "${opts[@]}" >"$tmp/live.c" 2>&1 &
cpid=$!
t_ok "live: rping is under way" wait_for "$tmp/live.c" 'ping data' 30
before=$(terms st3 siw2_s3)
for v in 1 0 1 0 1 0; do
	set1 siw2_s3 mpa_crc $v
	set1 siw2_s3 mpa_markers $v
	set1 siw2_s3 mpa_rev $((v + 1))
done
during=$(terms st3 siw2_s3)
wait "$cpid"
rc=$?
reap 20
port=$((port + 1))
t_eq "live: rping -V x$n goes on while s3's settings change" \
	"0 $n 0" "$rc $(grep -c '^ping data' "$tmp/live.c") $(grep -c 'data mismatch' "$tmp/live.c")"
t_match "live: restrack shows the connection's terms" '^drv_mpa_rev 2 ' "$before"
t_eq "live: the connection's terms stay as negotiated" "$before" "$during"
t_eq "live: the device took the last values" "0 0 1" \
	"$(get1 siw2_s3 mpa_crc) $(get1 siw2_s3 mpa_markers) $(get1 siw2_s3 mpa_rev)"
set1 siw2_s3 mpa_rev 2

# --- module parameters: the defaults of the next device, no more
echo N >"$params/mpa_crc"
ip netns exec st3 ip link add e3b type dummy
ip netns exec st3 ip link set e3b up
ip netns exec st3 rdma link add siw2_s3b type siw2 netdev e3b
t_eq "module parameter: a new device takes it as its default" 0 \
	"$(get1 siw2_s3b mpa_crc)"
t_eq "module parameter: the devices there are keep theirs" 1 \
	"$(get1 siw2_s1 mpa_crc)"
ip netns exec st3 rdma link delete siw2_s3b
echo Y >"$params/mpa_crc"

# --- bad values: EINVAL, and nothing changes
# refuse NAME VALUE: the write fails with EINVAL and the value stays.
refuse() {
	local f=$cls/siw2_s1/siw2/$1 v0 out
	v0=$(cat "$f")
	if ! out=$(bash -c "echo '$2' >$f" 2>&1) &&
	   [[ $out = *"Invalid argument"* ]] &&
	   [ "$(cat "$f")" = "$v0" ]; then
		return 0
	fi
	echo "$1=$2: '$out', now $(cat "$f") (was $v0)"
	return 1
}
bad=()
for nv in mpa_rev=0 mpa_rev=3 mpa_rev=two mpa_rtr=0 mpa_rtr=8 mpa_crc=maybe \
	mpa_markers=2 mpa_p2p= tcp_timeout_ms=99 tcp_timeout_ms=600001 \
	mpa_request_timeout_ms=-1 mpa_reply_timeout_ms=1e3 \
	sq_poll_us=1000001 port_map=yes-please tx_zerocopy=10 \
	mpa_rev=4294967298; do
	out=$(refuse "${nv%%=*}" "${nv#*=}") || bad+=("$out")
done
if [ ${#bad[@]} = 0 ]; then
	t_pass "bad values: refused with EINVAL, the setting unchanged (16 cases)"
else
	t_fail "bad values: refused with EINVAL, the setting unchanged" "${bad[@]}"
fi
t_ok "good values: the limits are taken" sh -c "
	echo 600000 >$cls/siw2_s1/siw2/tcp_timeout_ms &&
	echo 100 >$cls/siw2_s1/siw2/tcp_timeout_ms &&
	echo 0x7 >$cls/siw2_s1/siw2/mpa_rtr && echo off >$cls/siw2_s1/siw2/mpa_p2p &&
	echo on >$cls/siw2_s1/siw2/mpa_p2p && echo 10000 >$cls/siw2_s1/siw2/tcp_timeout_ms"

# --- who may write
f=$cls/siw2_s1/siw2/mpa_markers
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "echo 1 >$f" 2>&1)
t_match "a user other than root is refused (EACCES)" 'Permission denied' "$out"
t_eq "a user other than root may read" 0 \
	"$(setpriv --reuid=65534 --regid=65534 --clear-groups cat "$f")"
out=$(setpriv --inh-caps=-net_admin --bounding-set=-net_admin bash -c "echo 1 >$f" 2>&1)
t_match "root without CAP_NET_ADMIN is refused (EPERM)" \
	'Operation not permitted' "$out"
t_eq "neither refused write changed it" 0 "$(cat "$f")"

for i in 1 2 3; do
	ip netns exec st$i rdma link delete siw2_s$i
done
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "no endpoint left" t_wait '[ "$(obj cep)" = 0 ]' 10
t_ok "modprobe -r siw2" modprobe -r siw2
t_done
