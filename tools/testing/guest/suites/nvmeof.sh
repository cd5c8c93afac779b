#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics, RDMA transport, over siw2: the kernel's nvmet with a
# file-backed namespace (a file on tmpfs, so what is read back is what
# was stored) behind an nvmet-rdma port on 192.0.2.1:4420, and the
# kernel's nvme-rdma host connected with nvme-cli `connect -t rdma`. The
# controller shows the rdma transport; 64 MiB written with O_DIRECT read
# back with SHA-256 compared, also against the target's file; fio randrw
# with crc32c verification for a fixed time; faults under a write: the
# connections reset (the host reconnects, the data is intact), the
# target's siw2 device deleted (the I/O fails, the controller goes; after
# the device and the port are back a new connection works); disconnect,
# the target torn down, nvme-rdma and nvmet-rdma unloaded, no siw2 object
# left.
#
# nvme-rdma and nvmet-rdma create their rdma_cm IDs in the initial
# network namespace only (6.1 and 6.12), so both ends live there, on a
# veth pair v1 (192.0.2.1) and v2 (.2) with a siw2 device on each. The
# kernel routes between local addresses over lo, and the rdma_cm binds
# both ends to the device owning the target's address (pinning the host
# to v2 with --host-traddr fails address resolution): host and target
# QPs are on siw2_t.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A=192.0.2.1
B=192.0.2.2
NQN=nqn.2026-11.org.example:siw2-nvmeof
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:0f6cbd5e-5b5c-4d3e-9a43-3a8f2d6c0001
HOSTID=0f6cbd5e-5b5c-4d3e-9a43-3a8f2d6c0001
CFS=/sys/kernel/config/nvmet
# On a tmpfs of its own: nvmet sees the overlay under /tmp as size 0.
IMG=$tmp/store/ns1.img
FIO_SECONDS=${NVMEOF_FIO_SECONDS:-$(t_depth 8 20)}

target_start() {
	local s=$CFS/subsystems/$NQN p=$CFS/ports/1
	mkdir -p "$tmp/store" &&
	mount -t tmpfs -o size=200m tmpfs "$tmp/store" &&
	truncate -s 128M "$IMG" &&
	mkdir "$s" &&
	echo 1 >"$s/attr_allow_any_host" &&
	mkdir "$s/namespaces/1" &&
	echo -n "$IMG" >"$s/namespaces/1/device_path" &&
	# tmpfs has no O_DIRECT before 6.6: the page cache is the store.
	echo 1 >"$s/namespaces/1/buffered_io" &&
	echo 1 >"$s/namespaces/1/enable" &&
	mkdir "$p" &&
	echo rdma >"$p/addr_trtype" &&
	echo ipv4 >"$p/addr_adrfam" &&
	echo $A >"$p/addr_traddr" &&
	echo 4420 >"$p/addr_trsvcid" &&
	ln -s "$s" "$p/subsystems/$NQN"
}

target_stop() {
	local s=$CFS/subsystems/$NQN p=$CFS/ports/1
	rm -f "$p/subsystems/$NQN"
	rmdir "$p" 2>/dev/null
	[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s" 2>/dev/null
	[ ! -d "$s" ] && [ ! -d "$p" ]
}

# The controller the host made for $NQN, e.g. nvme0.
ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = $NQN ] && basename "$c"
	done
}

cleanup() {
	nvme disconnect -n $NQN >/dev/null 2>&1
	target_stop 2>/dev/null
	ip link del v1 2>/dev/null
	umount "$tmp/store" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v nvme >/dev/null || ! command -v fio >/dev/null; then
	t_skip "NVMe over Fabrics" "no nvme-cli or fio"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
t_ok "modprobe nvmet-rdma nvme-rdma" modprobe -a nvmet-rdma nvme-rdma
mountpoint -q /sys/kernel/config ||
	mount -t configfs configfs /sys/kernel/config
t_ok "veth pair with a siw2 device on each end" sh -c "
	ip link add v1 type veth peer name v2 &&
	ip addr add $A/24 dev v1 && ip addr add $B/24 dev v2 &&
	ip link set v1 up && ip link set v2 up &&
	rdma link add siw2_t type siw2 netdev v1 &&
	rdma link add siw2_h type siw2 netdev v2"
t_ok "nvmet: file-backed namespace behind an rdma port on $A:4420" \
	target_start

# A short reconnect delay: the faults below make the host reconnect.
connect() {
	timeout 120 nvme connect -t rdma -a $A -s 4420 -n $NQN \
		--hostnqn=$HOSTNQN --hostid=$HOSTID --reconnect-delay=1 \
		--ctrl-loss-tmo=60
}
out=$(connect 2>&1)
st=$?
c=$(ctrl)
if [ $st -ne 0 ] || [ -z "$c" ]; then
	t_fail "nvme connect -t rdma" "exit $st: $out" \
		"$(dmesg | grep -Ei 'nvme|siw2|rdma' | tail -n 20)" \
		"$(grep -v ' 0$' /sys/kernel/debug/siw2/counters)"
	t_done
	exit
fi
t_pass "nvme connect -t rdma"
t_eq "the controller's transport is rdma" rdma \
	"$(cat /sys/class/nvme/"$c"/transport)"
t_match "the controller's address is the target's" "traddr=$A,trsvcid=4420" \
	"$(cat /sys/class/nvme/"$c"/address)"
# The guest has no other NVMe device: the one namespace is ours.
nsdev() {
	local b
	for b in /sys/block/nvme*n1; do
		# not a path's hidden nvmeXcYnZ
		case ${b##*/} in *c*) continue ;; esac
		[ -e "$b" ] && basename "$b" && return
	done
}
# shellcheck disable=SC2016 # t_wait evaluates it
t_wait '[ -n "$(nsdev)" ]' 20
dev=/dev/$(nsdev)
t_ok "the namespace shows as a block device" t_wait "[ -b $dev ]" 20
# The size may show once the host has read the namespace's identity.
t_wait "[ \"\$(blockdev --getsize64 $dev)\" = $((128 << 20)) ]" 20
t_eq "it has the target file's size" $((128 << 20)) \
	"$(blockdev --getsize64 "$dev" 2>&1)"
t_match "the QPs are on siw2" 'siw2_' "$(rdma res show qp)"

head -c $((64 << 20)) /dev/urandom >"$tmp/data"
want=$(sha256sum <"$tmp/data" | cut -d' ' -f1)
t0=$(date +%s.%N)
t_ok "64 MiB written with O_DIRECT" \
	dd if="$tmp/data" of="$dev" bs=1M oflag=direct status=none
t_log "wrote 64 MiB in $(echo "$(date +%s.%N) - $t0" | bc) s"
t_eq "the target's file holds what was written" "$want" \
	"$(head -c $((64 << 20)) "$IMG" | sha256sum | cut -d' ' -f1)"
t0=$(date +%s.%N)
got=$(dd if="$dev" bs=1M count=64 iflag=direct status=none | sha256sum |
	cut -d' ' -f1)
t_log "read 64 MiB in $(echo "$(date +%s.%N) - $t0" | bc) s"
t_eq "64 MiB read back with O_DIRECT match" "$want" "$got"
rm -f "$tmp/data"

if timeout $((FIO_SECONDS + 120)) fio --name=nvmeof --filename="$dev" \
	--rw=randrw --bs=4k --size=64M --numjobs=2 --offset_increment=64M \
	--ioengine=libaio --iodepth=16 --direct=1 \
	--runtime="$FIO_SECONDS" --time_based \
	--verify=crc32c --verify_backlog=64 --verify_fatal=1 \
	--verify_state_save=0 --group_reporting >"$tmp/fio" 2>&1; then
	t_pass "fio randrw ${FIO_SECONDS}s with crc32c verification"
	t_log "$(grep -E '^ +(read|write):' "$tmp/fio" | tr -s ' ' |
		tr '\n' ';')"
else
	t_fail "fio randrw ${FIO_SECONDS}s with crc32c verification" \
		"$(tail -n 15 "$tmp/fio")"
fi

# --- faults under an O_DIRECT write of FAULT_MIB MiB.
FAULT_MIB=${NVMEOF_FAULT_MIB:-$(t_depth 48 96)}
head -c $((FAULT_MIB << 20)) /dev/urandom >"$tmp/fault"
# Every connection of the association reset: nvme-rdma's error recovery
# reconnects (new QPs, new MPA exchanges) and retries the lost commands.
reconnected() { dmesg | grep -c 'Successfully reconnected'; }
n=$(reconnected)
blk_fault "faults: the connections reset" "$dev" "$tmp/fault" \
	tcp_reset "( sport = :4420 or dport = :4420 )"
t_ok "faults: the host reconnected" t_wait "[ \$(reconnected) -gt $n ]" 60

# The target's siw2 device deleted under the write. Both ends' QPs are on
# it (see above), so the host deletes the controller and fails the I/O.
# nvmet-rdma drops a listener whose device goes (it does not listen again
# by itself): once the device is back, the port is enabled again as an
# administrator would, by linking the subsystem to it anew, and a new
# connection works.
blk_write_start faults "$dev" "$tmp/fault" "$tmp/dd.out"
t_ok "faults: siw2_t deleted under the write" rdma link delete siw2_t
blk_write_wait faults 120
st=$?
[ $st = 255 ] ||
	t_pass "faults: the write ends (exit $st: $(blk_write_errors "$tmp/dd.out"))"
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "faults: the host deletes the controller" t_wait '[ -z "$(ctrl)" ]' 60
t_ok "faults: siw2_t added again" \
	rdma link add siw2_t type siw2 netdev v1
t_ok "faults: the port enabled again" sh -c "
	rm $CFS/ports/1/subsystems/$NQN &&
	ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN"
for _ in 1 2 3 4 5 6; do
	connect >"$tmp/connect.out" 2>&1 && [ -n "$(ctrl)" ] && break
	sleep 5
done
if [ -n "$(ctrl)" ]; then
	t_pass "faults: nvme connect again"
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_wait '[ -n "$(nsdev)" ] && [ -b "/dev/$(nsdev)" ]' 20
	dev=/dev/$(nsdev)
	blk_fault "faults: after the reconnect, the connections reset" \
		"$dev" "$tmp/fault" \
		tcp_reset "( sport = :4420 or dport = :4420 )"
else
	t_fail "faults: nvme connect again" "$(cat "$tmp/connect.out")" \
		"$(dmesg | tail -n 15)"
fi
rm -f "$tmp/fault"

t_ok "nvme disconnect" nvme disconnect -n $NQN
t_ok "the controller is gone" t_wait "[ -z \"\$(ctrl)\" ]" 20
t_ok "target torn down" target_stop
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "no siw2 QP or endpoint left" \
	t_wait '[ "$(obj qp)$(obj cep)$(obj listener)" = 000 ]' 30
t_ok "modprobe -r nvme-rdma nvmet-rdma" modprobe -r nvme-rdma nvmet-rdma
# Not CQs: the core keeps its per-device CQ pool (nvmet-rdma's CQs) until
# the device is removed; the debugfs check after the removal covers them.
# shellcheck disable=SC2016 # t_wait evaluates it
if t_wait '[ "$(obj qp)$(obj mr)$(obj pd)$(obj srq)" = 0000 ]' 20; then
	t_pass "every QP, MR, PD and SRQ released"
else
	t_fail "every QP, MR, PD and SRQ released" \
		"$(cat /sys/kernel/debug/siw2/objects)"
fi
t_ok "siw2 devices deleted" sh -c \
	'rdma link delete siw2_t && rdma link delete siw2_h'
t_eq "debugfs shows no siw2 object" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
