#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device lifecycle: load, rdma link add/delete, what userspace sees through
# libsiw2, refusals, netdev removal under a live device, namespaces (both
# modes of the RDMA subsystem), unload, and 50 add/delete cycles without
# slab growth.
. "$(dirname "$0")/../lib.sh"

# The node GUID siw2 derives from a MAC: modified EUI-64, as ibv_devinfo
# prints it (four groups of four hex digits).
eui64_guid() {
	local IFS=: m
	read -r -a m <<<"$1"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x${m[0]} ^ 2)) "${m[1]}" \
		"${m[2]}" "${m[3]}" "${m[4]}" "${m[5]}"
}

t_ok "modprobe siw2" modprobe siw2
t_match "module is loaded" '^siw2 ' "$(lsmod)"

mk_dummy d0 192.0.2.1/24
t_ok "rdma link add siw2_0 on a dummy netdev" \
	rdma link add siw2_0 type siw2 netdev d0
t_match "rdma link shows siw2_0 on d0" 'link siw2_0/1 .*netdev d0' \
	"$(rdma link show)"
t_match "rdma dev shows siw2_0" '^[0-9]+: siw2_0: node_type rnic' \
	"$(rdma dev show)"
t_eq "abi attribute for the provider" 1 \
	"$(cat /sys/class/infiniband/siw2_0/siw2/abi_version)"

devs=$(ibv_devices 2>&1)
t_match "ibv_devices lists siw2_0 through libsiw2" '^ +siw2_0 ' "$devs"
if printf '%s' "$devs" | grep -qi warning; then
	t_fail "libibverbs loads libsiw2 without warnings" "$devs"
else
	t_pass "libibverbs loads libsiw2 without warnings"
fi

info=$(ibv_devinfo -v -d siw2_0 2>&1)
t_match "ibv_devinfo: transport iWARP" 'transport:[[:space:]]+iWARP \(1\)' "$info"
mac=$(cat /sys/class/net/d0/address)
t_match "ibv_devinfo: node GUID from the netdev MAC ($mac)" \
	"node_guid:[[:space:]]+$(eui64_guid "$mac")" "$info"
t_match "ibv_devinfo: port active" 'state:[[:space:]]+PORT_ACTIVE' "$info"
t_match "ibv_devinfo: sane max_qp" 'max_qp:[[:space:]]+[1-9][0-9]{2,}' "$info"
t_match "ibv_devinfo: sane max_qp_wr" 'max_qp_wr:[[:space:]]+[1-9][0-9]{2,}' "$info"
t_match "ibv_devinfo: max_sge > 1" 'max_sge:[[:space:]]+([2-9]|[1-9][0-9])' "$info"
t_match "ibv_devinfo: MTU follows the netdev (1500 -> 1024)" \
	'active_mtu:[[:space:]]+1024' "$info"

ip link set d0 down
t_ok "port goes down with the netdev" \
	t_wait "ibv_devinfo -d siw2_0 | grep -q PORT_DOWN" 5
ip link set d0 up

t_refused "a second device on the same netdev is refused" \
	rdma link add siw2_1 type siw2 netdev d0
t_refused "an unknown netdev is refused" \
	rdma link add siw2_1 type siw2 netdev nosuchdev
if modprobe vcan 2>/dev/null && ip link add vc0 type vcan 2>/dev/null; then
	t_refused "a netdev that cannot carry TCP (vcan) is refused" \
		rdma link add siw2_1 type siw2 netdev vc0
	ip link del vc0
else
	t_skip "a netdev that cannot carry TCP is refused" "no vcan module"
fi
t_eq "refusals left no device behind" "siw2_0" \
	"$(rdma dev show | awk '{ print $2 }' | tr -d : | tr '\n' ' ' | xargs)"

t_ok "rdma link delete siw2_0" rdma link delete siw2_0
t_eq "the device is gone" "" "$(rdma dev show | grep siw2)"

t_ok "re-add after delete" rdma link add siw2_0 type siw2 netdev d0
ip link del d0
t_ok "deleting the netdev removes the device" \
	t_wait "! rdma dev show | grep -q siw2_0" 10

# Namespaces: a device created in a namespace, for that namespace's netdev.
ip netns add t1
ip -n t1 link add d1 type dummy
ip -n t1 addr add 198.51.100.1/24 dev d1
ip -n t1 link set d1 up
t_ok "rdma link add inside a network namespace" \
	ip netns exec t1 rdma link add siw2_ns type siw2 netdev d1
t_match "the namespace's device shows on its netdev" 'siw2_ns/1 .*netdev d1' \
	"$(ip netns exec t1 rdma link show)"
# A netdev that moves to another namespace leaves as it would on removal.
ip netns add t2
ip -n t1 link set d1 netns t2
t_ok "moving the netdev to another namespace removes its device" \
	t_wait "! rdma dev show | grep -q siw2_ns" 10
t_ok "a device is added for it in its new namespace" \
	ip netns exec t2 rdma link add siw2_ns type siw2 netdev d1
ip netns del t1
ip netns del t2
t_ok "deleting the namespace removes its device" \
	t_wait "! rdma dev show | grep -q siw2_ns" 10

# A wildcard listen in the initial namespace listens on every device, on
# one whose netdev is in another namespace too (shared mode). That listener
# must not keep the other namespace alive once it is deleted.
ip netns add t3
ip -n t3 link add d3 type dummy
ip -n t3 addr add 198.51.100.3/24 dev d3
ip -n t3 link set d3 up
ip netns exec t3 rdma link add siw2_t3 type siw2 netdev d3
timeout 60 rping -s -a 0.0.0.0 -p 7397 >/dev/null 2>&1 &
t_ok "a wildcard listen in the initial namespace listens in t3 too" \
	t_listening t3 7397 10
ip netns del t3
t_ok "deleting t3 under that listen removes t3's device" \
	t_wait "! rdma dev show | grep -q siw2_t3" 20
t_ok "the wildcard listen goes on" pgrep -x rping
reap 0

# N add/query/delete cycles (50; 20 in a quick run, T_DEPTH) leave no
# siw2 object behind and do not grow unreclaimable slab. N warm-up cycles
# first: the core's allocators (device index xarray, kernfs, uverbs
# minors) grow on first use, for rxe alike. A cycle takes a second in a
# TCG guest.
ncyc=$(t_depth 20 50)
mk_dummy d0 192.0.2.1/24
cycle() {
	rdma link add siw2_0 type siw2 netdev d0 &&
		ibv_devinfo -d siw2_0 >/dev/null 2>&1 &&
		rdma link delete siw2_0
}
for _ in $(seq "$ncyc"); do cycle; done
ok=0
# batch: ncyc cycles; sets growth to what unreclaimable slab grew by.
batch() {
	local before
	sleep 1
	before=$(slab_kib)
	for _ in $(seq "$ncyc"); do cycle && ok=$((ok + 1)); done
	sleep 1
	growth=$(($(slab_kib) - before))
}
batch
t_eq "$ncyc add/query/delete cycles all succeed" "$ncyc" "$ok"
t_eq "no live siw2 objects after the cycles" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
# A leaked device alone is a 4 KiB allocation: 4 KiB a cycle. Growth seen
# over 50 good cycles: 4 to 8 KiB; over 20, once 76 KiB, the rest of the
# kernel's noise. A leak grows every batch, noise does not: a second
# batch decides when the first went over the bound.
bound=$((ncyc * 3)) first=
if ! kasan_kernel && [ "$growth" -ge "$bound" ]; then
	first=$growth
	batch
fi
if kasan_kernel; then
	t_skip "no slab growth over $ncyc cycles" "KASAN quarantine; kmemleak checks"
elif [ "$growth" -lt "$bound" ]; then
	t_pass "no slab growth over $ncyc cycles (${first:+$first KiB, then }${growth} KiB)"
else
	t_fail "no slab growth over $ncyc cycles" "SUnreclaim grew $first KiB, then $growth KiB"
fi

# Exclusive namespace mode (rdma system set netns exclusive): a device is
# in one namespace only, and the administrator moves it (rdma dev set ...
# netns, which the core allows only to drivers that can disassociate user
# contexts). The core switches modes only while no other namespace exists.
# Listens are on the namespaces' own addresses: the RDMA CM attaches a
# wildcard listen to every device, whatever its namespace (admin guide).
xsh() { ip netns exec "$@"; }
x_rping() { xsh "$1" timeout 20 rping "$2" -a "$3" -p "$4" -C 10 -v; }
xdev() { xsh "$1" rdma dev show | awk '{ print $2 }' | tr -d : | xargs; }
# A device moved while applications hold it. The core disables the
# device (the RDMA CM tells its users the device is going, every user
# context is disassociated: the process keeps its file, its objects are
# destroyed) and enables it in the new namespace. Unlike a removal the
# device lives on, so none of its connections, QPs or listeners may
# outlive the move, and it must work where it lands.
# Background jobs are started without xsh: reap's signal must reach
# timeout(1), not a subshell running a function (lib.sh).
moved_under_use() {
	local d n cc=/sys/class/infiniband/siw2_x1/ports/1/hw_counters/cm_accepted
	d=$(mktemp -d)
	ip netns add x3
	ip netns exec x1 timeout 90 rping -s -a 203.0.113.1 -p 7392 -C 0 -v \
		-S 1000 >"$d/s" 2>&1 &
	t_listening x1 7392 10
	ip netns exec x2 timeout 90 stdbuf -oL rping -c -a 203.0.113.1 \
		-p 7392 -C 0 -v -S 1000 >"$d/c" 2>&1 &
	ip netns exec x1 timeout 90 stdbuf -oL ibv_asyncwatch -d siw2_x1 \
		>"$d/aw" 2>&1 &
	if ! wait_for "$d/c" 'ping data' 30 ||
	   ! wait_for "$d/aw" 'async event FD' 10; then
		t_fail "moved under use: data flows" "$(tail -n 3 "$d/c")" \
			"$(cat "$d/aw")"
		reap 0
		ip netns del x3
		rm -rf "$d"
		return
	fi
	n=$(xsh x1 cat "$cc")
	t_ok "moved under use: rdma dev set netns returns" \
		xsh x1 timeout 60 rdma dev set siw2_x1 netns x3
	t_eq "moved under use: the device is in its new namespace" siw2_x1 \
		"$(xdev x3)"
	t_log "moved under use: server: $(tail -n 2 "$d/s" | cut -c1-60 | xargs)"
	t_log "moved under use: client: $(tail -n 2 "$d/c" | cut -c1-60 | xargs)"
	t_rpings_end "moved under use: both rpings end" 7392 "$d/s" "$d/c"
	t_ok "moved under use: a context without the RDMA CM hears DEVICE_FATAL" \
		wait_for "$d/aw" 'IBV_EVENT_DEVICE_FATAL' 10
	reap 0
	t_ok "moved under use: every object released" t_wait all_gone 20
	t_ok "moved back to its netdev's namespace" \
		xsh x3 rdma dev set siw2_x1 netns x1
	x_rping x1 -s 203.0.113.1 7393 >/dev/null 2>&1 &
	t_listening x1 7393 10
	t_ok "moved back: rping from x2 to x1's listener" \
		x_rping x2 -c 203.0.113.1 7393
	wait
	t_ok "moved back: its counters went on" \
		test "$(xsh x1 cat "$cc")" -gt "$n"
	ip netns del x3
	rm -rf "$d"
}
if t_wait "rdma system set netns exclusive" 30; then
	t_pass "rdma system set netns exclusive"
	ip netns add x1
	ip netns add x2
	ip link add xv1 netns x1 type veth peer name xv2 netns x2
	xsh x1 ip addr add 203.0.113.1/24 dev xv1
	xsh x2 ip addr add 203.0.113.2/24 dev xv2
	xsh x1 ip link set xv1 up
	xsh x2 ip link set xv2 up
	t_ok "exclusive: rdma link add inside a namespace" \
		xsh x1 rdma link add siw2_x1 type siw2 netdev xv1
	xsh x2 rdma link add siw2_x2 type siw2 netdev xv2
	# A new device starts in the initial namespace, whatever its netdev's.
	t_eq "exclusive: a new device is in the initial namespace" \
		"siw2_x1 siw2_x2" "$(rdma dev show | grep -o 'siw2_x[12]' | xargs)"
	t_eq "exclusive: it is not in its netdev's namespace" "" "$(xdev x1)"
	t_refused "exclusive: nor can the RDMA CM there use it" \
		x_rping x1 -s 203.0.113.1 7390
	t_ok "exclusive: rdma dev set netns moves it" \
		rdma dev set siw2_x1 netns x1
	rdma dev set siw2_x2 netns x2
	t_eq "exclusive: the moved device is in its namespace" siw2_x1 \
		"$(xdev x1)"
	t_eq "exclusive: and only there" "" \
		"$(rdma dev show | grep -o 'siw2_x[12]')"
	# One port listened on in each namespace, each by its own device.
	x_rping x1 -s 203.0.113.1 7391 >/dev/null 2>&1 &
	x_rping x2 -s 203.0.113.2 7391 >/dev/null 2>&1 &
	t_ok "exclusive: each namespace listens on the same port" \
		t_wait "listening x1 7391 && listening x2 7391" 10
	t_ok "exclusive: rping from x2 to x1's listener" \
		x_rping x2 -c 203.0.113.1 7391
	t_ok "exclusive: rping from x1 to x2's listener" \
		x_rping x1 -c 203.0.113.2 7391
	wait
	# The device's sysfs, hw_counters too, moved with it.
	t_ok "exclusive: the moved device counts its connections (sysfs)" \
		test "$(xsh x1 cat \
			/sys/class/infiniband/siw2_x1/ports/1/hw_counters/cm_connected)" \
		-ge 1
	# Its settings moved with it: its namespace's administrator sets them.
	xf=/sys/class/infiniband/siw2_x1/siw2/mpa_markers
	t_ok "exclusive: the moved device is configured from inside its namespace" \
		xsh x1 sh -c "echo 1 >$xf && grep -qx 1 $xf && echo 0 >$xf"
	t_eq "exclusive: its settings are not seen outside it" "" \
		"$(cat "$xf" 2>/dev/null)"
	moved_under_use
	# The namespaces go with their devices: the core moves each device
	# back to the initial namespace, then its netdev's removal ends it.
	ip netns del x1
	ip netns del x2
	t_ok "exclusive: deleting the namespaces removes their devices" \
		t_wait "! rdma dev show | grep -q siw2_x" 20
	if t_wait "rdma system set netns shared" 30; then
		t_pass "rdma system set netns shared, once the namespaces are gone"
	else
		t_fail "rdma system set netns shared, once the namespaces are gone" \
			"$(rdma system set netns shared 2>&1)" \
			"processes elsewhere: $(for p in /proc/[0-9]*; do
				[ "$(readlink "$p/ns/net")" = "$(readlink /proc/self/ns/net)" ] ||
					printf '%s ' "${p#/proc/}:$(tr '\0' ' ' <"$p/cmdline")"
				done)" \
			"$(rdma res show cm_id)" "$(ip netns list)"
	fi
else
	t_fail "rdma system set netns exclusive" \
		"$(rdma system set netns exclusive 2>&1)" "$(ip netns list)"
fi
t_match "the RDMA subsystem is back in shared mode" 'netns shared' \
	"$(rdma system show)"

t_ok "a live device at unload" rdma link add siw2_0 type siw2 netdev d0
t_ok "modprobe -r siw2 with a device present" modprobe -r siw2
t_eq "unload removed the device" "" "$(rdma dev show | grep siw2)"
t_eq "module is gone" "" "$(lsmod | grep '^siw2 ')"
ip link del d0

t_done
