#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA (RFC 8166, RFC 8267) between two network namespaces on a
# veth pair, a siw2 device in each: the kernel's nfsd in n1 (192.0.2.1)
# exports a tmpfs directory with an RDMA listener on port 20049, the
# kernel's NFS client in n2 mounts it with `-o rdma,port=20049`, NFSv3 and
# NFSv4.2. For each version: /proc/mounts shows proto=rdma; files of 4 KiB,
# 1 MiB and 256 MiB (64 MiB at quick depth) are written and read back
# (after a remount, so from the server) with SHA-256 compared, also
# against the server's copy; fio random read/write with verification for
# a fixed time; many small files written and checked. Then an NFSv4.2
# copy runs while, in turn, the client's netdev goes down and up, siw2 is
# unloaded and loaded again (with new devices), nfsd restarts and the
# client's siw2 link is deleted and added again; each copy must end,
# intact or with an error, and the file be intact after a new copy where
# it was not. Then unmount, nfsd
# stopped, rpcrdma and siw2 unloaded, and no siw2 object left
# (/sys/kernel/debug/siw2/objects).
#
# Only the server's tools (rpcbind, rpc.mountd, exportfs, rpc.nfsd) run
# inside n1; mounts are made with nsenter --net so that they belong to
# this mount namespace and outlive the command that made them.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
A=192.0.2.1
EXP=/srv/siw2-nfs
MNT=/mnt/siw2-nfs
# Seconds of fio per NFS version; sizes of the big files in MiB.
FIO_SECONDS=${NFS_FIO_SECONDS:-$(t_depth 8 20)}
BIG_MIB=${NFS_BIG_MIB:-$(t_depth 64 256)}
SMALL_FILES=${NFS_SMALL_FILES:-$(t_depth 40 300)}

in1() { nsenter --net=/run/netns/n1 "$@"; }
in2() { nsenter --net=/run/netns/n2 "$@"; }

setup_net() {
	ns_pair n1 v1 $A n2 v2 192.0.2.2 &&
	in1 rdma link add siw2_n1 type siw2 netdev v1 &&
	in2 rdma link add siw2_n2 type siw2 netdev v2
}

# nfsd's control files for n1 are this mount of the nfsd filesystem: it is
# made from inside n1, so it is n1's instance.
server_start() {
	mkdir -p "$EXP" /proc/fs/nfsd /var/lib/nfs/v4recovery &&
	mount -t tmpfs -o size=600m tmpfs "$EXP" &&
	in1 mount -t nfsd nfsd /proc/fs/nfsd &&
	echo "$EXP 192.0.2.0/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" \
		>/etc/exports &&
	in1 rpcbind -w &&
	in1 exportfs -ra &&
	in1 rpc.mountd --no-udp &&
	# A short grace period: the NFSv4 client's first OPEN waits for it.
	in1 rpc.nfsd --no-udp --grace-time 10 --lease-time 10 4 &&
	echo "rdma 20049" >/proc/fs/nfsd/portlist
}

server_stop() {
	in1 rpc.nfsd 0
	in1 exportfs -ua
	pkill -x rpc.mountd
	pkill -x rpcbind
	umount /proc/fs/nfsd
	umount "$EXP"
}

cleanup() {
	umount -f "$MNT" 2>/dev/null
	server_stop 2>/dev/null
	ip netns del n1 2>/dev/null
	ip netns del n2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! command -v rpc.nfsd >/dev/null || ! command -v fio >/dev/null; then
	t_skip "NFS over RDMA" "no nfs-kernel-server or fio"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
t_ok "modprobe rpcrdma (client and server RPC/RDMA)" modprobe rpcrdma
t_ok "two namespaces with a siw2 device each" setup_net
t_ok "nfsd in n1 with an RDMA listener on 20049" server_start
t_match "nfsd lists the rdma port" '^rdma 20049$' \
	"$(cat /proc/fs/nfsd/portlist 2>&1)"
# What the end's look for forgotten RDMA CM ids sees: nfsd's listener.
t_match "rdma resource shows nfsd's listener on the siw2 devices" 'siw2' \
	"$(rdma resource show cm_id 2>&1)"
mkdir -p "$MNT"

# Files to copy: made once, in this guest's tmpfs.
for f in 4k:4 1m:1024 big:$((BIG_MIB * 1024)); do
	dd if=/dev/urandom of="$tmp/${f%%:*}" bs=1024 count="${f#*:}" \
		status=none
	sha256sum <"$tmp/${f%%:*}" | cut -d' ' -f1 >"$tmp/${f%%:*}.sum"
done

# The export is NFSv4's root (fsid=0): the server's own / is 9p, which
# nfsd cannot export, so v4 mounts / and v3 the directory's path.
mount_nfs() {
	local path=$EXP
	case $1 in vers=4*) path=/ ;; esac
	in2 mount -t nfs -o "rdma,port=20049,$1" "$A:$path" "$MNT"
}

# remount OPTS: drops the client's cache of the files, so what is read
# next comes over the wire from the server.
remount() { umount "$MNT" && mount_nfs "$1"; }

copy_check() {
	local opts=$1 f t0 secs want got
	for f in 4k 1m big; do
		want=$(cat "$tmp/$f.sum")
		t0=$(date +%s.%N)
		if ! cp "$tmp/$f" "$MNT/$f" || ! sync "$MNT/$f"; then
			t_fail "$v: write $f"
			continue
		fi
		secs=$(echo "$(date +%s.%N) - $t0" | bc)
		t_eq "$v: $f on the server matches what was written" "$want" \
			"$(sha256sum <"$EXP/$f" | cut -d' ' -f1)"
		[ "$f" = big ] && t_log "$v: wrote ${BIG_MIB} MiB in ${secs} s"
	done
	t_ok "$v: remount" remount "$opts"
	for f in 4k 1m big; do
		t0=$(date +%s.%N)
		got=$(sha256sum <"$MNT/$f" | cut -d' ' -f1)
		secs=$(echo "$(date +%s.%N) - $t0" | bc)
		t_eq "$v: $f read back matches" "$(cat "$tmp/$f.sum")" "$got"
		[ "$f" = big ] && t_log "$v: read ${BIG_MIB} MiB in ${secs} s"
	done
	rm -f "$MNT/4k" "$MNT/1m" "$MNT/big"
}

fio_check() {
	local out=$tmp/fio.$v
	if timeout $((FIO_SECONDS + 120)) fio --name=nfs --directory="$MNT" \
		--rw=randrw --bs=4k --size=16M --numjobs=2 \
		--ioengine=libaio --iodepth=8 --direct=1 \
		--runtime="$FIO_SECONDS" --time_based \
		--verify=crc32c --verify_backlog=64 --verify_fatal=1 \
		--verify_state_save=0 \
		--group_reporting >"$out" 2>&1; then
		t_pass "$v: fio randrw ${FIO_SECONDS}s with crc32c verification"
		t_log "$v: $(grep -E '^ +(read|write):' "$out" | tr -s ' ' |
			tr '\n' ';')"
	else
		t_fail "$v: fio randrw ${FIO_SECONDS}s with crc32c verification" \
			"$(tail -n 15 "$out")"
	fi
	rm -f "$MNT"/nfs.*
}

small_files() {
	local i d=$MNT/small
	mkdir -p "$d" "$tmp/small"
	for i in $(seq "$SMALL_FILES"); do
		head -c $((RANDOM % 4096 + 1)) /dev/urandom >"$tmp/small/$i"
	done
	(cd "$tmp/small" && sha256sum -- * | sort -k2) >"$tmp/small.sums"
	t_ok "$v: $SMALL_FILES small files written" cp -r "$tmp/small/." "$d/"
	t_ok "$v: remount" remount "$1"
	t_eq "$v: $SMALL_FILES small files read back match" \
		"$(cat "$tmp/small.sums")" \
		"$(cd "$d" && sha256sum -- * | sort -k2)"
	t_ok "$v: small files removed" rm -rf "$d"
	t_eq "$v: the export is empty afterwards" "" "$(ls -A "$EXP")"
	rm -rf "$tmp/small"
}

for v in v3 v4.2; do
	case $v in
	v3) opts=vers=3,nolock ;;
	*) opts=vers=4.2 ;;
	esac
	if ! out=$(mount_nfs "$opts" 2>&1); then
		t_fail "$v: mount -o rdma,port=20049,$opts" "$out"
		continue
	fi
	t_pass "$v: mount -o rdma,port=20049,$opts"
	line=$(grep " $MNT " /proc/mounts)
	t_match "$v: /proc/mounts shows proto=rdma,port=20049" \
		'proto=rdma,.*port=20049' "$line"
	t_match "$v: /proc/mounts shows the version" \
		"vers=${v#v}[, ]" "$line"
	copy_check "$opts"
	fio_check
	small_files "$opts"
	t_ok "$v: umount" umount "$MNT"
done

# --- faults under an NFS copy (v4.2): each case starts a copy of
# FAULT_MIB MiB and disturbs the path while it runs. NFS hides what the
# RDMA layer goes through where it can: the client reconnects (a new QP,
# a new MPA exchange) and retransmits what was not acknowledged.
FAULT_MIB=${NFS_FAULT_MIB:-64}
head -c $((FAULT_MIB << 20)) "$tmp/big" >"$tmp/fault"
fault_sum=$(sha256sum <"$tmp/fault" | cut -d' ' -f1)

# new_copy: after a copy that ended with an error, a copy into a new file
# must work. Writeback of the failed copy's pages may still end in errors
# after cp exited, and the NFS client reports them to whoever closes that
# file next, so the new copy goes to a new file. Three tries, 5 s apart:
# the client may still be reconnecting.
new_copy() {
	local try
	for try in 1 2 3; do
		rm -f "$MNT/fault"
		if cp "$tmp/fault" "$MNT/fault" && sync "$MNT/fault"; then
			return 0
		fi
		echo "try $try failed"
		sleep 5
	done
	return 1
}

# fault_copy NAME MODE CMD...: runs CMD once the copy is under way. MODE
# "finish": the copy must finish intact. MODE "end": the copy must end,
# intact or with an error cp reports (the client's RDMA device was gone
# when rpcrdma reconnected, which the NFS client reports as ENODEV), and
# a copy made afterwards must be intact.
fault_copy() {
	local name=$1 mode=$2 pid st
	shift 2
	rm -f "$MNT/fault"
	(cp "$tmp/fault" "$MNT/fault" && sync "$MNT/fault") >"$tmp/fault.out" 2>&1 &
	pid=$!
	t_wait "[ \"\$(stat -c %s '$EXP/fault' 2>/dev/null || echo 0)\" -gt $((1 << 20)) ] || ! kill -0 $pid" 60
	if ! kill -0 "$pid" 2>/dev/null; then
		t_log "$name: the copy ended before the fault; faster than expected"
	fi
	t_ok "$name: the fault" "$@"
	if ! timeout 300 tail --pid="$pid" -f /dev/null; then
		kill "$pid" 2>/dev/null
		t_fail "$name: the copy ends" "$(dmesg | tail -n 15)"
		return
	fi
	wait "$pid"
	st=$?
	if [ "$st" != 0 ] && [ "$mode" = end ]; then
		t_pass "$name: the copy ends, with an error: $(head -c 200 "$tmp/fault.out")"
		t_ok "$name: a new copy" new_copy
	else
		t_eq "$name: the copy finishes" 0 "$st"
	fi
	t_eq "$name: the server's file is intact" "$fault_sum" \
		"$(sha256sum <"$EXP/fault" | cut -d' ' -f1)"
}

link_flap() {
	in2 ip link set v2 down && sleep 3 && in2 ip link set v2 up
}
# Kernel consumers hold no reference on the module: unloading siw2
# removes both devices under the mount and the server's listener, and
# rpcrdma and svcrdma must let go of them for the unload to finish.
unload_reload() {
	modprobe -r siw2 && ! grep -q '^siw2 ' /proc/modules &&
	modprobe siw2 &&
	in1 rdma link add siw2_n1 type siw2 netdev v1 &&
	in2 rdma link add siw2_n2 type siw2 netdev v2
}
# svcrdma (6.1, 6.12) queues a connection request for nfsd's threads to
# accept and, should nfsd stop before they do, forgets it: that request's
# RDMA CM id then outlives nfsd and rpcrdma, and deleting the device calls
# into the unloaded module (or, with rpcrdma loaded, waits for ever). It
# is svcrdma's, whatever the device, so while nfsd stops the client's
# reconnections are kept out: SYNs to 20049 are dropped (pure SYN, at
# offset 33 of an IPv4 header without options), and its retransmissions
# reach the new nfsd.
syn_block() {
	in1 tc qdisc add dev v1 ingress &&
	in1 tc filter add dev v1 ingress protocol ip prio 1 u32 \
		match ip protocol 6 0xff match ip dport 20049 0xffff \
		match u8 0x02 0x12 at 33 action drop
}
nfsd_restart() {
	syn_block && sleep 1 && in1 rpc.nfsd 0 && sleep 2 &&
	in1 rpc.nfsd --no-udp --grace-time 10 --lease-time 10 4 &&
	echo "rdma 20049" >/proc/fs/nfsd/portlist &&
	in1 tc qdisc del dev v1 ingress
}
# The client's device goes away under the mount and comes back: rpcrdma
# drops the transport on the removal and reconnects through the new one.
link_readd() {
	in2 rdma link delete siw2_n2 && sleep 2 &&
	in2 rdma link add siw2_n2 type siw2 netdev v2
}

if out=$(mount_nfs vers=4.2 2>&1); then
	t_pass "faults: mount -o rdma,port=20049,vers=4.2"
	fault_copy "faults: netdev down 3 s and up" finish link_flap
	fault_copy "faults: siw2 unloaded and loaded again" end unload_reload
	fault_copy "faults: nfsd stopped and started" finish nfsd_restart
	fault_copy "faults: client link deleted and added" end link_readd
	t_ok "faults: remount" remount vers=4.2
	t_eq "faults: the last copy read back matches" "$fault_sum" \
		"$(sha256sum <"$MNT/fault" | cut -d' ' -f1)"
	rm -f "$MNT/fault"
	t_ok "faults: umount" umount "$MNT"
else
	t_fail "faults: mount -o rdma,port=20049,vers=4.2" "$out"
fi

t_ok "nfsd stopped" server_stop
# shellcheck disable=SC2016 # t_wait evaluates it
t_ok "no siw2 QP or endpoint left once nfsd stopped" \
	t_wait '[ "$(obj qp)$(obj cep)$(obj listener)" = 000 ]' 30
# An RDMA CM id left on a siw2 device now belongs to a ULP that forgot
# it (see nfsd_restart): unloading rpcrdma and deleting the devices would
# then oops or hang, so the suite ends here.
if t_wait '! rdma resource show cm_id | grep -q siw2' 30; then
	t_pass "no RDMA CM id left on a siw2 device once nfsd stopped"
else
	t_fail "no RDMA CM id left on a siw2 device once nfsd stopped" \
		"$(rdma resource show cm_id 2>&1)"
	t_done
	exit
fi
t_ok "modprobe -r rpcrdma" modprobe -r rpcrdma
t_ok "every siw2 object released" all_gone
t_ok "siw2 devices deleted" \
	sh -c 'in1() { nsenter --net=/run/netns/n1 "$@"; }
	       in1 rdma link delete siw2_n1 &&
	       nsenter --net=/run/netns/n2 rdma link delete siw2_n2'
t_eq "debugfs shows no siw2 object" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
