#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iSER over siw2: a LIO target (configfs) with a 64 MiB ramdisk behind an
# iSCSI portal on 192.0.2.1:3260 with iSER enabled, and open-iscsi's
# initiator logged in through the iser interface (`-I iser`). The session
# shows the iser transport; ext4 made on the LUN, mounted, a 32 MiB file
# copied in and read back with SHA-256 compared after a remount; fio
# randrw with crc32c verification on the file system for a fixed time;
# the connection reset under a write to the LUN, the data intact; the
# target's device deleted under a write (the write fails), added again and
# the session back; logout, the target cleared, the iSER modules unloaded,
# no siw2 object left.
#
# LIO's network portal is a kernel TCP listener on 192.0.2.1:3260, and
# enabling iSER on it (np/.../iser) makes ib_isert rdma_listen() on the
# same address and port. An iWARP device over the host's TCP stack cannot
# listen there too: the portal needs iWARP port mapping. iwpmd runs, and
# both siw2 devices have port_map on, so isert's listener moves to a port
# iwpmd reserved and the initiator learns it from iwpmd's query exchange
# before it connects.
#
# ib_isert and ib_iser create their rdma_cm IDs in the initial network
# namespace only, so both ends live there, as in the nvmeof suite: a veth
# pair v1 (192.0.2.1) and v2 (.2) with a siw2 device on each; the
# connection runs on siw2_t, the device owning the portal's address.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../lio.sh"

tmp=$(mktemp -d)
A=192.0.2.1
B=192.0.2.2
IQN=iqn.2026-11.org.example:siw2-iser
FIO_SECONDS=${ISER_FIO_SECONDS:-$(t_depth 8 15)}


target_start() { lio_start $IQN $A 64 rd0; }
target_stop() { lio_stop $IQN $A rd0; }

cleanup() {
	umount "$tmp/mnt" 2>/dev/null
	iscsiadm -m node -T $IQN -p $A:3260 -u >/dev/null 2>&1
	iscsiadm -m node -o delete >/dev/null 2>&1
	target_stop 2>/dev/null
	pkill -x iscsid 2>/dev/null
	pkill -x iwpmd 2>/dev/null
	ip link del v1 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

for tool in iscsiadm iscsid fio mkfs.ext4; do
	if ! command -v $tool >/dev/null; then
		t_skip "iSER" "no $tool"
		t_done
		exit
	fi
done

t_ok "modprobe siw2" modprobe siw2
# sd_mod too: the guest has no udev to load it when the LUN appears.
t_ok "modprobe ib_isert ib_iser sd_mod" modprobe -a ib_isert ib_iser sd_mod
mountpoint -q /sys/kernel/config ||
	mount -t configfs configfs /sys/kernel/config
t_ok "veth pair with a siw2 device on each end" sh -c "
	ip link add v1 type veth peer name v2 &&
	ip addr add $A/24 dev v1 && ip addr add $B/24 dev v2 &&
	ip link set v1 up && ip link set v2 up &&
	rdma link add siw2_t type siw2 netdev v1 &&
	rdma link add siw2_h type siw2 netdev v2"
pm=/sys/class/infiniband/siw2_t/siw2/port_map
t_eq "port_map is off by default" "0 N" \
	"$(cat $pm) $(cat /sys/module/siw2/parameters/port_map)"
t_refused "port_map refuses a non-boolean" sh -c "echo maybe >$pm"
t_ok "iwpmd runs, port mapping on for both devices" sh -c "
	iwpmd && sleep 1 && pgrep -x iwpmd >/dev/null &&
	echo 1 >$pm && echo 1 >${pm/siw2_t/siw2_h}"
t_ok "LIO: ramdisk LUN behind an iSER portal on $A:3260" target_start
t_eq "the portal has iSER enabled" 1 \
	"$(cat "$LIO_CT/iscsi/$IQN/tpgt_1/np/$A:3260/iser" 2>&1)"

mkdir -p /run/lock/iscsi
t_ok "iscsid starts" iscsid
t_ok "sendtargets discovery through the iser interface" \
	timeout 60 iscsiadm -m discovery -t st -p $A:3260 -I iser
out=$(timeout 120 iscsiadm -m node -T $IQN -p $A:3260 -I iser --login 2>&1)
st=$?
if [ $st -ne 0 ]; then
	t_fail "login through the iser interface" "exit $st: $out" \
		"$(dmesg | grep -Ei 'iser|isert|siw2|rdma' | tail -n 20)"
	t_done
	exit
fi
t_pass "login through the iser interface"
t_match "the session's transport is iser" "^iser: .*$A:3260.*$IQN" \
	"$(iscsiadm -m session 2>&1)"
t_match "the QPs are on siw2" 'siw2_' "$(rdma res show qp)"
# The mapping at work: LIO's TCP portal keeps 3260, the iSER connection
# runs to the port iwpmd reserved for isert's listener.
t_match "LIO's TCP portal still listens on $A:3260" "^LISTEN .* $A:3260 " \
	"$(ss -Htln 2>&1)"
# The ports the connections to $A run to.
ports=$(ss -Htn state established dst $A | awk '{ sub(/.*:/, "", $4); print $4 }')
if [ -n "$ports" ] && ! grep -qx 3260 <<<"$ports"; then
	t_pass "the iSER connection runs to a mapped port, not 3260"
else
	t_fail "the iSER connection runs to a mapped port, not 3260" \
		"$(ss -Htn 2>&1)"
fi
# shellcheck disable=SC2016 # t_wait evaluates it
if ! t_wait '[ -n "$(lio_lun)" ] && [ -b "/dev/$(lio_lun)" ]' 30; then
	t_fail "the LUN shows as a block device" \
		"$(find /sys/class/iscsi_session/*/device/ -maxdepth 3 2>&1 | head -n 20)" \
		"$(dmesg | grep -Ei 'scsi|sd |iser' | tail -n 20)"
	t_done
	exit
fi
t_pass "the LUN shows as a block device"
dev=/dev/$(lio_lun)
t_eq "it has the ramdisk's size" $((64 << 20)) \
	"$(blockdev --getsize64 "$dev" 2>&1)"

mkdir -p "$tmp/mnt"
t_ok "mkfs.ext4 on the LUN" mkfs.ext4 -q -F "$dev"
t_ok "mount it" mount "$dev" "$tmp/mnt"
if ! mountpoint -q "$tmp/mnt"; then
	t_done
	exit
fi
head -c $((32 << 20)) /dev/urandom >"$tmp/data"
want=$(sha256sum <"$tmp/data" | cut -d' ' -f1)
t_ok "a 32 MiB file copied in" cp "$tmp/data" "$tmp/mnt/data"
rm -f "$tmp/data"
t_ok "unmount and mount again" sh -c \
	"umount '$tmp/mnt' && echo 3 >/proc/sys/vm/drop_caches &&
	mount '$dev' '$tmp/mnt'"
t_eq "the file reads back unchanged" "$want" \
	"$(sha256sum <"$tmp/mnt/data" | cut -d' ' -f1)"
rm -f "$tmp/mnt/data"

if timeout $((FIO_SECONDS + 120)) fio --name=iser \
	--filename="$tmp/mnt/fio" --rw=randrw --bs=4k --size=16M \
	--ioengine=libaio --iodepth=16 --direct=1 \
	--runtime="$FIO_SECONDS" --time_based \
	--verify=crc32c --verify_backlog=64 --verify_fatal=1 \
	--verify_state_save=0 >"$tmp/fio" 2>&1; then
	t_pass "fio randrw ${FIO_SECONDS}s with crc32c verification"
	t_log "$(grep -E '^ +(read|write):' "$tmp/fio" | tr -s ' ' |
		tr '\n' ';')"
else
	t_fail "fio randrw ${FIO_SECONDS}s with crc32c verification" \
		"$(tail -n 15 "$tmp/fio")"
fi

t_ok "unmount" umount "$tmp/mnt"

# The iSER connection reset under an O_DIRECT write to the LUN: the
# initiator's iSCSI error recovery logs in again (a new connection, mapped
# by iwpmd again) and retries what was lost.
conns() { ss -Htn state established dst $A | awk '{ print $3 }' | sort; }
head -c $((32 << 20)) /dev/urandom >"$tmp/fault"
old=$(conns)
blk_fault "faults: the connection reset" "$dev" "$tmp/fault" \
	tcp_reset dst $A
new=$(conns)
if [ -n "$new" ] && [ "$new" != "$old" ]; then
	t_pass "faults: a new connection took over"
else
	t_fail "faults: a new connection took over" "before: $old" "after: $new"
fi
t_match "faults: the session is logged in again over iser" \
	"^iser: .*$A:3260.*$IQN" "$(iscsiadm -m session 2>&1)"

# The target's siw2 device deleted under the write. Both ends' QPs are on
# it, so the connection goes and no new one can be made: once the session's
# recovery timeout (made 10 s here) runs out, the write fails. isert drops
# a listener whose device goes: once the device is back (with port mapping
# on again), the portal's iSER is switched off and on as an administrator
# would, iscsid's retries log the session in again, and the LUN works.
sess_state() { cat /sys/class/iscsi_session/session*/state 2>/dev/null; }
for f in /sys/class/iscsi_session/session*/recovery_tmo; do
	echo 10 >"$f"
done
blk_write_start faults "$dev" "$tmp/fault" "$tmp/dd.out"
t_ok "faults: siw2_t deleted under the write" rdma link delete siw2_t
blk_write_wait faults 120
st=$?
if [ $st != 255 ] && [ $st != 0 ]; then
	t_pass "faults: the write fails (exit $st: $(blk_write_errors "$tmp/dd.out"))"
elif [ $st = 0 ]; then
	t_fail "faults: the write fails" "it finished without the device"
fi
t_ok "faults: siw2_t added again, port mapping on" sh -c "
	rdma link add siw2_t type siw2 netdev v1 && echo 1 >$pm"
np="$LIO_CT/iscsi/$IQN/tpgt_1/np/$A:3260"
t_ok "faults: the portal's iSER switched off and on" sh -c "
	echo 0 >'$np/iser' && echo 1 >'$np/iser'"
# shellcheck disable=SC2016 # t_wait evaluates it
if t_wait '[ "$(sess_state)" = LOGGED_IN ]' 120; then
	t_pass "faults: the session logs in again"
	blk_fault "faults: after the device came back, the connection reset" \
		"$dev" "$tmp/fault" tcp_reset dst $A
else
	t_fail "faults: the session logs in again" "state: $(sess_state)" \
		"$(dmesg | grep -Ei 'iser|isert|siw2|rdma' | tail -n 15)"
fi
rm -f "$tmp/fault"
t_ok "logout" iscsiadm -m node -T $IQN -p $A:3260 -u
t_ok "the session is gone" t_wait "! iscsiadm -m session >/dev/null 2>&1" 20
t_ok "target torn down" target_stop
pkill -x iscsid
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "no siw2 QP or endpoint left" \
	t_wait '[ "$(obj qp)$(obj cep)$(obj listener)" = 000 ]' 30
t_ok "modprobe -r ib_iser ib_isert" modprobe -r ib_iser ib_isert
# Not CQs: the core keeps its per-device CQ pool until the device goes.
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
