#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The NFS server's host rebooted under the mount (issue 41): run in both
# guests of `scripts/vm-pair --disk 1G` (make check-hosts). nfsd on b
# exports an ext4 on b's scratch disk, with nfsd's own state
# (/var/lib/nfs) on it too; a mounts it over RDMA (NFSv4.2, -o rdma),
# writes a file with fsync, then starts writing a second, larger one,
# slowly. Once b holds 4 MiB of it, b reboots at once, as a power cut
# would (scripts/vm/reboot: no sync, nfsd not stopped, no connection
# closed; what b's page cache held is gone). a's write is still in
# flight when b goes; another process of a creates a file on the mount
# while b is down. b boots again (SIW2_BOOT 2), mounts its disk, starts
# nfsd with its grace period, and the two meet. Then, within a bound,
# a's write resumes and ends with exit 0 and the file is created: NFS's
# hard mount waits for the server, the client reconnects over RDMA,
# recovers its state and sends again what the server had not committed.
# Both files have a's SHA-256 on b's disk and read back on a after a
# remount. No kernel report on either host at any boot (vm-run scans
# each boot's log), no siw2 object left on either.
#
# Depth (T_DEPTH): the file under the reboot is 64 MiB at quick (a run
# by hand), 256 MiB at full (make check-hosts).
#
#   scripts/vm-pair --disk 1G -- env T_DEPTH=quick tools/testing/guest/run reboot
# shellcheck source=../lib.sh source-path=SCRIPTDIR
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../pair.sh
. "$(dirname "$0")/../pair.sh"

dev=siw2_r
boot=${SIW2_BOOT:-1}
NFS_MIB=$(t_depth 64 256)
F1_MIB=8
# b reboots once it holds this much of the second file, which a writes
# 1 MiB at a time, PAUSE s apart, with fsync every 4 MiB: so that the
# write spans b's reboot, with data in a's cache, data b has not
# committed, and data b committed
REBOOT_AT=4
PAUSE=0.5
# b's reboot, from the moment a sees it gone to the meeting after it
BOOT_LIMIT=900
# from that meeting to the end of a's write and of its file's creation
BACK_LIMIT=600
tmp=$(mktemp -d)

cleanup() {
	umount -f "$MNT" 2>/dev/null
	[ ${#nfs_pids[@]} -eq 0 ] || nfs_stop >/dev/null 2>&1
	reap 0
	rdma link delete "$dev" 2>/dev/null
	rm -rf "$tmp"
}

if [ -z "${SIW2_DISK:-}" ]; then
	t_skip "the server's reboot" "no scratch disk: run it under vm-pair --disk"
	t_done
	exit
fi
if ! command -v rpc.nfsd >/dev/null || ! modprobe rpcrdma 2>/dev/null; then
	t_skip "the server's reboot" "no nfs-kernel-server or rpcrdma"
	t_done
	exit
fi
trap cleanup EXIT
NFS_DISK=$SIW2_DISK

t_log "host $me ($(uname -r)), boot $boot, peer on $SIW2_PEER_KERNEL"
if ! pair_up "$dev"; then
	t_done
	exit
fi

# sums (a): FILE's SHA-256, as a wrote it to FILE.sum-a
sum_of() { sha256sum <"$1" | cut -d' ' -f1; }

# --- before the reboot: b's first boot, and a
if [ "$boot" = 1 ]; then
	if [ "$me" = a ]; then
		for f in f1:$F1_MIB f2:$NFS_MIB; do
			dd if=/dev/urandom of="$tmp/${f%:*}" bs=1M count="${f#*:}" status=none
			sum_of "$tmp/${f%:*}" >"$tmp/${f%:*}.sum"
		done
	else
		# nfs_start runs in this shell: the daemons are its jobs
		if nfs_start >"$tmp/nfs.start" 2>&1; then
			t_pass "NFS: nfsd on b exports an ext4 on its scratch disk over RDMA"
		else
			t_fail "NFS: nfsd on b exports an ext4 on its scratch disk over RDMA" \
				"$(head -c 1000 "$tmp/nfs.start")"
		fi
	fi
	must_meet nfs
	if [ "$me" = a ]; then
		t_ok "NFS: a mounts b's export, -o rdma,port=20049,vers=4.2" nfs_mount
		t_ok "NFS: a writes $F1_MIB MiB to b with fsync" timeout 300 \
			dd if="$tmp/f1" of="$MNT/f1" bs=1M conv=fsync status=none
		cp "$tmp/f1.sum" "$MNT/f1.sum-a"
		cp "$tmp/f2.sum" "$MNT/f2.sum-a"
		t_ok "NFS: the sums reach b" sync "$MNT/f1.sum-a" "$MNT/f2.sum-a"
		t_log "a writes $NFS_MIB MiB while b reboots at $REBOOT_AT MiB"
		timeout $((BOOT_LIMIT + BACK_LIMIT + 300)) python3 -S - "$tmp/f2" \
			"$MNT/f2" "$PAUSE" 2>"$tmp/dd.err" <<'EOF' &
import os, sys, time
with open(sys.argv[1], "rb") as src, open(sys.argv[2], "wb") as dst:
    n = 0
    while chunk := src.read(1 << 20):
        dst.write(chunk)
        dst.flush()
        n += 1
        if n % 4 == 0:
            os.fsync(dst.fileno())
        time.sleep(float(sys.argv[3]))
    os.fsync(dst.fileno())
EOF
		ddpid=$!
	fi
	must_meet writing
	if [ "$me" = b ]; then
		if t_wait "[ \$(stat -c %s $EXP/f2 2>/dev/null || echo 0) -ge $((REBOOT_AT << 20)) ]" 300; then
			t_pass "b holds $REBOOT_AT MiB of a's file: b reboots"
		else
			t_fail "b holds $REBOOT_AT MiB of a's file" \
				"$(stat -c %s "$EXP/f2" 2>&1) octets after 300 s"
		fi
		# as a power cut: nothing of the cleanup runs
		trap - EXIT
		t_reboot
	fi
	# a's writer waits for b in D state (a hard mount), for as long as
	# b takes to boot: minutes with the debug kernel under TCG. The
	# hung task detector's report of that wait is NFS's design, not a
	# fault; its timeout covers the outage's bound while b is away.
	hung=$(cat /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null)
	[ -n "$hung" ] && echo $((BOOT_LIMIT + BACK_LIMIT)) \
		>/proc/sys/kernel/hung_task_timeout_secs
	if t_wait "! ping -c 1 -W 1 $B >/dev/null 2>&1" 360; then
		t_pass "b goes down"
	else
		t_fail "b goes down" "b still answers pings after 360 s"
	fi
	t0=$SECONDS
	if kill -0 "$ddpid" 2>/dev/null; then
		t_pass "a's write is in flight when b goes down"
	else
		t_fail "a's write is in flight when b goes down" \
			"dd ended before: $(head -c 300 "$tmp/dd.err")"
	fi
	# another process creates a file on the mount while b is down: its
	# OPEN waits for b, then for the end of b's grace period
	timeout $((BOOT_LIMIT + BACK_LIMIT)) sh -c "echo during >$MNT/f3" \
		>"$tmp/create" 2>&1 &
	crpid=$!
fi

# --- b's second boot: the same disk, nfsd with its grace period
if [ "$me" = b ]; then
	NFS_GRACE=1
	if nfs_start >"$tmp/nfs.start" 2>&1; then
		t_pass "NFS: after the reboot nfsd on b serves the same disk, in its grace period"
	else
		t_fail "NFS: after the reboot nfsd on b serves the same disk, in its grace period" \
			"$(head -c 1000 "$tmp/nfs.start")"
	fi
	t_eq "the file a wrote with fsync is whole on b's disk after the reboot" \
		"$(cat "$EXP/f1.sum-a" 2>&1)" "$(sum_of "$EXP/f1")"
fi
must_meet rebooted "$BOOT_LIMIT"

if [ "$me" = a ]; then
	t_log "b back after $((SECONDS - t0)) s"
	t1=$SECONDS
	for what in write:$ddpid create:$crpid; do
		pid=${what#*:} what=${what%:*}
		left=$((BACK_LIMIT + t1 - SECONDS))
		if timeout $((left > 0 ? left : 1)) tail --pid="$pid" -f /dev/null; then
			wait "$pid"
			st=$?
			t_eq "a's $what under the reboot resumes and ends well" 0 "$st"
			[ "$st" = 0 ] || t_log "$what: $(head -c 300 "$tmp/dd.err" "$tmp/create")"
			t_log "$what ended $((SECONDS - t1)) s after b was back"
		else
			t_fail "a's $what under the reboot ends within $BACK_LIMIT s" \
				"$(stuck_report "$pid")"
			kill "$pid" 2>/dev/null
		fi
	done
	[ -n "$hung" ] && echo "$hung" >/proc/sys/kernel/hung_task_timeout_secs
fi
must_meet written $((BACK_LIMIT + 120))
if [ "$me" = b ]; then
	for f in f1 f2; do
		t_eq "b's $f has the SHA-256 of a's" \
			"$(cat "$EXP/$f.sum-a" 2>&1)" "$(sum_of "$EXP/$f")"
	done
	t_eq "b has the file a created while b was down" during "$(cat "$EXP/f3" 2>&1)"
fi
must_meet checked
if [ "$me" = a ]; then
	t_ok "NFS: remount on a" nfs_remount
	for f in f1 f2; do
		t_eq "$f read back on a after the remount, the same SHA-256" \
			"$(cat "$tmp/$f.sum")" "$(timeout 300 sha256sum "$MNT/$f" | cut -d' ' -f1)"
	done
	t_ok "NFS: umount on a" timeout 120 umount "$MNT"
fi
must_meet unmounted
nfs_teardown
t_ok "done: both hosts at the end" meet end
reap 10
t_ok "rdma link delete $dev" rdma link delete "$dev"
t_ok "modprobe -r siw2" modprobe -r siw2
t_done
