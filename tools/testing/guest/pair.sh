# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the suites of two hosts (scripts/vm-pair; suites/wire.sh and
# suites/reboot.sh) share: which host this is, the meetings over the wire,
# the wire's siw2 device, and an NFS server on b with its client on a.
# Sourced after lib.sh. A suite not run by vm-pair skips and ends here.

me=${SIW2_HOST:-}
A=198.51.100.1
B=198.51.100.2
case $me in
a) mine=$A peer=$B ;;
b) mine=$B peer=$A ;;
*)
	t_skip "the $T_SUITE suite runs on the hosts of scripts/vm-pair (SIW2_HOST a or b)"
	t_done
	exit
	;;
esac
SYNC_PORT=7999
# Where either host runs the debug kernel (KASAN under TCG: boots and
# steps several times slower), waits on the other host are longer.
PAIR_SLOW=1
{ [ "${SIW2_PEER_KERNEL:-}" = debug ] || kasan_kernel; } && PAIR_SLOW=5
addr_of() { if [ "$1" = a ]; then echo $A; else echo $B; fi; }

# meet TAG [SECONDS]: both hosts reach this point before either goes on,
# within SECONDS (default 120, times PAIR_SLOW). a listens, b connects
# (and tries again until a listens); each sends TAG and must read the
# other's, so that two hosts out of step fail at once.
meet() {
	timeout "${2:-$((120 * PAIR_SLOW))}" python3 -S - "$me" "$A" "$SYNC_PORT" "$1" <<'EOF'
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
# must_meet TAG [SECONDS]: meet, or end the suite: hosts out of step
# would pair the wrong steps for the rest of the run.
must_meet() {
	meet "$@" && return 0
	t_fail "the hosts meet at $1" "no meeting within ${2:-$((120 * PAIR_SLOW))} s"
	t_done
	exit 1
}

# pair_up DEV: siw2 loaded, this host's address on the wire's NIC (eth0),
# DEV a siw2 device on it; returns 1 when the peer does not answer a ping.
pair_up() {
	t_ok "modprobe siw2" modprobe siw2
	modprobe rdma_ucm 2>/dev/null
	ip addr add "$mine/24" dev eth0
	ip link set eth0 up
	t_ok "rdma link add $1 on the wire's NIC" \
		rdma link add "$1" type siw2 netdev eth0
	local boot=$((60 * PAIR_SLOW))
	if ! t_wait "ping -c 1 -W 1 $peer >/dev/null 2>&1" "$boot"; then
		t_fail "the peer host answers on the wire" \
			"no ping reply from $peer within $boot s"
		return 1
	fi
	t_pass "the peer host answers on the wire"
}

# --- NFSv4.2 over RDMA: nfsd on b exports EXP (NFSv4's root, fsid=0) with
# an RDMA listener on 20049; a mounts it on MNT. b's own / is 9p, which
# nfsd cannot export: the export is a tmpfs, or with NFS_DISK set the
# scratch disk of vm-run --disk (an ext4 that outlives b's reboots, with
# nfsd's state, /var/lib/nfs, on it too, as a server keeps it on its own
# disk: the records of its clients by which, rebooted, it lets them
# reclaim their state in its grace period).
EXP=/srv/siw2-nfs
MNT=/mnt/siw2-nfs
NFS_DISK=
NFS_DISK_MNT=/srv/siw2-disk
NFS_MIB=${NFS_MIB:-64}
nfs_pids=()

# nfs_start (b): rpcbind and rpc.mountd run in the foreground as this
# shell's jobs, so that nfs_stop ends them by their ids; their logs go to
# the suite's $tmp. The grace period is ended at once unless NFS_GRACE is
# 1 (after a reboot, when clients come back to reclaim).
NFS_GRACE=0
nfs_start() {
	mkdir -p "$EXP" || return 1
	if [ -n "$NFS_DISK" ]; then
		if [ "${SIW2_BOOT:-1}" = 1 ]; then
			mkfs.ext4 -q -F "$NFS_DISK" || return 1
		fi
		mkdir -p "$NFS_DISK_MNT" &&
			mount "$NFS_DISK" "$NFS_DISK_MNT" || return 1
		if [ ! -d "$NFS_DISK_MNT/nfs" ]; then
			mkdir -p "$NFS_DISK_MNT/export" /var/lib/nfs/v4recovery &&
				cp -a /var/lib/nfs "$NFS_DISK_MNT/nfs" || return 1
		fi
		mount --bind "$NFS_DISK_MNT/export" "$EXP" &&
			mount --bind "$NFS_DISK_MNT/nfs" /var/lib/nfs || return 1
	else
		mkdir -p /var/lib/nfs/v4recovery &&
			mount -t tmpfs -o size=$((NFS_MIB * 2 + 64))m tmpfs "$EXP" ||
			return 1
	fi
	mount -t nfsd nfsd /proc/fs/nfsd &&
		echo "$EXP 198.51.100.0/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" \
			>/etc/exports || return 1
	rpcbind -w -f >"${tmp:?}/rpcbind.log" 2>&1 &
	nfs_pids+=($!)
	t_listening - 111 || return 1
	exportfs -ra || return 1
	rpc.mountd --no-udp -F >"$tmp/mountd.log" 2>&1 &
	nfs_pids+=($!)
	rpc.nfsd --no-udp --grace-time 10 --lease-time 10 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist || return 1
	[ "$NFS_GRACE" = 1 ] && return 0
	# No client has state to reclaim: the grace period ends now, not
	# in 10 s (the client's first OPEN would wait for it).
	echo Y >/proc/fs/nfsd/v4_end_grace ||
		echo "no v4_end_grace: the first OPEN waits for the grace period"
}

nfs_stop() {
	rpc.nfsd 0
	exportfs -ua
	[ ${#nfs_pids[@]} -eq 0 ] || kill "${nfs_pids[@]}"
	[ ${#nfs_pids[@]} -eq 0 ] || wait "${nfs_pids[@]}"
	nfs_pids=()
	umount /proc/fs/nfsd
	umount "$EXP"
	if [ -n "$NFS_DISK" ]; then
		umount /var/lib/nfs
		umount "$NFS_DISK_MNT"
	fi
}

# Every wait on the mount is bounded: a hard NFS mount whose server is
# gone blocks its callers for as long as it is gone.
nfs_mount() {
	mkdir -p "$MNT" &&
		timeout 120 mount -t nfs -o rdma,port=20049,vers=4.2 "$B:/" "$MNT"
}
# a remount drops a's cache of the files: what is read next comes from b
nfs_remount() { timeout 120 umount "$MNT" && nfs_mount; }

# nfs_teardown: once a unmounted and the hosts met, nfsd stopped on b
# and no RDMA CM id of rpcrdma's left there; then on each host no siw2
# QP, endpoint or listener left, rpcrdma unloaded, every object released.
nfs_teardown() {
	if [ "$me" = b ]; then
		if nfs_stop >"${tmp:?}/nfs.stop" 2>&1; then
			t_pass "NFS: nfsd stopped"
		else
			t_fail "NFS: nfsd stopped" "$(head -c 1000 "$tmp/nfs.stop")"
		fi
		if t_wait '! rdma resource show cm_id | grep -q siw2' 30; then
			t_pass "NFS: no RDMA CM id left on b's siw2 device"
		else
			t_fail "NFS: no RDMA CM id left on b's siw2 device" \
				"$(rdma resource show cm_id 2>&1)"
		fi
	fi
	# shellcheck disable=SC2016 # t_wait evaluates it
	t_ok "NFS: no siw2 QP or endpoint left on $me" \
		t_wait '[ "$(obj qp)$(obj cep)$(obj listener)" = 000 ]' 30
	t_ok "NFS: modprobe -r rpcrdma on $me" modprobe -r rpcrdma
	t_ok "NFS: every siw2 object released on $me" all_gone
}
