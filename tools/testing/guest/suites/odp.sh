#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-demand paging (issue 43) between two hosts: network namespaces od1
# (203.0.113.65, the memory's owner) and od2 (.66, the peer) joined by a
# veth pair, a siw2 device in each. progs/odp_test.c checks odp_caps and
# ibv_advise_mr without a connection, then runs each scenario as an owner
# and a peer process on connections of their own. The owner runs as uid
# 65534 without capabilities and with RLIMIT_MEMLOCK at 64 KiB, so that
# only memory nobody pins can serve: 1 GiB never touched registered with
# IBV_ACCESS_ON_DEMAND (and refused without it), the peer's Writes spread
# over it seen by the owner and Read back, its RSS grown by what they
# wrote; Reads, atomics, Sends and receives with ODP memory never touched
# or filled, at both ends; Sends the peer follows at once with its
# disconnect, all received into ODP memory never touched (none flushed);
# MADV_DONTNEED under a stream of Writes (later Writes land in the new
# pages, a dropped range reads zeros); a munmapped hole in a registered
# region (the peer's Write into it refused with the owner's Terminate,
# the owner's Send from it and Read into it completed in error);
# ibv_advise_mr's prefetches resident (mincore) and its refusals; a file
# mapping (ext4 on a RAM disk) larger than the owner's memory cgroup
# written whole by the peer, its octets in the file after msync, and read
# back. Terminates are counted as mw.sh does; no siw2 object is left at
# the end.
. "$(dirname "$0")/../lib.sh"

tmp=$(mktemp -d)
chmod 755 "$tmp"	# the owner, uid 65534, reaches $tmp/fs
A=203.0.113.65
B=203.0.113.66
port=8900
tr=/sys/kernel/tracing
ev=$tr/events/siw2/siw2_term_sent
NOBODY=65534
cgroot=$tmp/cg
cg=$cgroot/siw2odp
fs=$tmp/fs
brd_loaded=false

in1() { ip netns exec od1 "$@"; }
in2() { ip netns exec od2 "$@"; }

# The owner's process: uid and gid 65534, no capability, 64 KiB lockable
# (RLIMIT_MEMLOCK is what pinned memory is charged to).
OWNER=(prlimit --memlock=65536:65536 setpriv --reuid="$NOBODY"
	--regid="$NOBODY" --clear-groups --inh-caps=-all --bounding-set=-all --)
# What the owner's command starts with before that (a cgroup to join).
OWNER_PRE=()

# pressure_down: what the pressure step set up goes (fails if a part stays).
pressure_down() {
	local st=0
	if mountpoint -q "$fs"; then umount "$fs" || st=1; fi
	if $brd_loaded; then modprobe -r brd || st=1; fi
	if [ -d "$cg" ]; then rmdir "$cg" || st=1; fi
	if mountpoint -q "$cgroot"; then umount "$cgroot" || st=1; fi
	return $st
}

cleanup() {
	reap 0
	[ -d "$ev" ] && echo 0 >"$ev/enable"
	pressure_down 2>/dev/null
	ip netns del od1 2>/dev/null
	ip netns del od2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! odt=$(t_prog odp_test); then
	t_fail "odp_test is built"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
tracing=false
if [ -d "$ev" ]; then
	echo 1 >"$ev/enable"
	tracing=true
else
	t_fail "tracefs has the siw2_term_sent event" "no $ev"
fi
ns_pair od1 odv1 $A od2 odv2 $B
t_ok "rdma link add in od1" in1 rdma link add siw2_od1 type siw2 netdev odv1
t_ok "rdma link add in od2" in2 rdma link add siw2_od2 type siw2 netdev odv2
t_reach od2 $A

# lines NAME CMD...: CMD's PASS/FAIL/SKIP lines are checks named
# "NAME: ..."; it must run to its end (its line "NAME DONE").
lines() {
	local name=$1 st
	shift
	"$@" >"$tmp/$name" 2>&1
	st=$?
	t_lines "$name" <"$tmp/$name"
	grep -q "^$name DONE" "$tmp/$name" ||
		t_fail "$name: the program ran to its end (exit $st)" \
			"$(tail -n 5 "$tmp/$name")"
}

# --- odp_caps and an ODP MR as an object, no connection (as root, in
# this namespace, where debugfs is: the RDMA devices are shared by all)
lines caps timeout 60 "$odt" caps siw2_od1 -T 20
# --- ibv_advise_mr, as the owner runs
lines advise timeout 60 "${OWNER[@]}" "$odt" advise siw2_od1 -T 20

# The owner's Terminates in the trace, from "dev=" on.
terms() {
	sed -n 's/.* siw2_term_sent: //p' "$tr/trace" | grep '^dev=siw2_od1 '
}
# The owner device's term_sent counter (its port's hardware counters).
term_count() {
	cat /sys/class/infiniband/siw2_od1/ports/1/hw_counters/term_sent
}

# scenario NAME TERMS SECONDS [ARG...]: odp_test -s NAME with ARGs, the
# owner in od1 (OWNER_PRE, then OWNER) and the peer in od2, each ended
# after SECONDS; each of their PASS/FAIL/SKIP lines is a check. TERMS is
# how many Terminates the owner sends ("-": not looked at); each must be
# a protection error (RFC 5041's tagged buffer error or RFC 5040's remote
# protection error), which the peer sees as IBV_WC_REM_ACCESS_ERR.
scenario() {
	local name=$1 want=$2 secs=$3 class='layer=(ddp|rdmap) etype=1 '
	local st c0 t n line
	shift 3
	if $tracing; then
		echo >"$tr/trace"
	fi
	c0=$(term_count)
	in1 "${OWNER_PRE[@]}" timeout "$secs" "${OWNER[@]}" "$odt" -s "$name" \
		owner $A $port "$@" >"$tmp/$name.s" 2>&1 &
	if ! wait_for "$tmp/$name.s" 'LISTENING|ERROR' 20 ||
	   ! grep -q LISTENING "$tmp/$name.s"; then
		t_fail "$name: the owner listens" "$(cat "$tmp/$name.s")"
		reap 0
		port=$((port + 1))
		return
	fi
	in2 timeout "$secs" "$odt" -s "$name" peer $A $port "$@" \
		>"$tmp/$name.c" 2>&1
	st=$?
	reap 30
	port=$((port + 1))
	t_lines "$name" <"$tmp/$name.s"
	t_lines "$name" <"$tmp/$name.c"
	grep -q '^owner: DONE' "$tmp/$name.s" ||
		t_fail "$name: the owner's process ran to its end" \
			"$(tail -n 5 "$tmp/$name.s")"
	grep -q '^peer: DONE' "$tmp/$name.c" ||
		t_fail "$name: the peer's process ran to its end (exit $st)" \
			"$(tail -n 5 "$tmp/$name.c")"
	[ "$want" = - ] && return
	t_eq "$name: the term_sent counter of siw2_od1 counts $want Terminate(s)" \
		"$((${c0:-0} + want))" "$(term_count)"
	$tracing || return
	t=$(terms)
	while IFS= read -r line; do
		[ -n "$line" ] && t_log "$name: Terminate sent: $(grep -Eo \
			'qpn=[0-9]+ layer=[a-z]+ etype=[0-9]+ ecode=0x[0-9a-f]+' \
			<<<"$line")"
	done <<<"$t"
	n=$(grep -c . <<<"$t")
	t_eq "$name: siw2_term_sent fired $want time(s) for the owner (siw2_od1)" \
		"$want" "$n"
	if [ "$n" -gt 0 ]; then
		t_eq "$name: each Terminate is of the class /$class/" "" \
			"$(grep -Ev -- "$class" <<<"$t")"
	fi
}

scenario big 0 120 -T 20
scenario io 0 120 -T 20
# sendclose once at quick depth, 10 times at full: the race it found (the
# close's look at a pause without the socket lock dropped the FPDUs still
# queued) showed in about 1 run of 10 on a loaded host.
for _ in $(seq "$(t_depth 1 10)"); do
	scenario sendclose 0 120 -T 20
done
scenario madvise 0 120 -T 20 -r "$(t_depth 1 3)"
scenario munmap 1 120 -T 20
# Local errors: a Read Response the owner cannot place may end in a
# Terminate of its own, so the count is not looked at.
scenario munmaplocal - 120 -T 20

# --- memory pressure. The file is on ext4 on a RAM disk (brd): the
# guest's root is read-only 9p and its writable places are tmpfs or
# overlays on tmpfs, whose pages nothing reclaims without swap, while a
# brd disk's pages are the driver's, charged to no cgroup, and the file's
# page cache above it is reclaimed as a disk's is (written back first).
# The owner joins a cgroup whose memory.max (cgmax, 48 MiB) is below the
# file's size (64 MiB quick, 256 MiB full): the peer's Writes fault pages
# in that the cgroup must reclaim (after writeback) while the MR lives,
# and the Reads back fault them in again.
pmib=$(t_depth 64 256)
cgmax=48M
why=
if grep -q '^brd ' /proc/modules; then
	why="brd is loaded already"
elif ! modprobe brd rd_nr=1 rd_size=$(((pmib + 64) * 1024)) max_part=0; then
	why="no brd module"
else
	brd_loaded=true
	if [ "$(blockdev --getsize64 /dev/ram0 2>/dev/null || echo 0)" -lt \
	     $(((pmib + 64) << 20)) ]; then
		why="/dev/ram0 is not the $((pmib + 64)) MiB asked for"
	elif ! mkfs.ext4 -q -F -O ^has_journal /dev/ram0 ||
	   ! mkdir -p "$fs" || ! mount /dev/ram0 "$fs" ||
	   ! chown $NOBODY:$NOBODY "$fs"; then
		why="no ext4 on /dev/ram0"
	elif ! mkdir -p "$cgroot" ||
	     ! mount -t cgroup2 none "$cgroot" 2>/dev/null ||
	     ! echo +memory >"$cgroot/cgroup.subtree_control" 2>/dev/null ||
	     ! mkdir "$cg" || ! echo "$cgmax" >"$cg/memory.max"; then
		why="no cgroup2 memory controller"
	fi
fi
if [ -n "$why" ]; then
	t_skip "pressure: a file mapping in a small memory cgroup" "$why"
else
	echo 0 >"$cg/memory.swap.max" 2>/dev/null
	# shellcheck disable=SC2016 # the inner shell expands them
	OWNER_PRE=(sh -c 'echo $$ >"$1" && shift && exec "$@"' sh
		"$cg/cgroup.procs")
	scenario pressure 0 "$(t_depth 300 600)" -T "$(t_depth 60 120)" \
		-f "$fs/odp.file" -m "$pmib"
	OWNER_PRE=()
	t_log "pressure: memory.events: $(tr '\n' ' ' <"$cg/memory.events")"
	t_log "pressure: memory.peak $(cat "$cg/memory.peak" 2>/dev/null)," \
		"$(grep -E '^(file|file_dirty|file_writeback|pgscan|pgsteal) ' \
			"$cg/memory.stat" | tr '\n' ' ')"
	t_eq "pressure: no OOM kill in the owner's cgroup" 0 \
		"$(awk '$1 == "oom_kill" { print $2 }' "$cg/memory.events")"
	steal=$(awk '$1 == "pgsteal" { print $2 }' "$cg/memory.stat")
	if [ "${steal:-0}" -gt 0 ]; then
		t_pass "pressure: the cgroup reclaimed pages under the transfer (pgsteal $steal)"
	else
		t_fail "pressure: the cgroup reclaimed pages under the transfer" \
			"memory.stat pgsteal is ${steal:-missing}"
	fi
	rm -f "$fs/odp.file"
	t_ok "pressure: the RAM disk, its file system and the cgroup go away" \
		pressure_down
	brd_loaded=false
fi

# --- nothing left (closing is deferred work)
t_wait all_gone 15
for o in qp cq mr mw pd cep listener ucontext srq; do
	t_eq "no live $o after the tests" 0 "$(obj $o)"
done
t_ok "rdma link delete siw2_od1" in1 rdma link delete siw2_od1
t_ok "rdma link delete siw2_od2" in2 rdma link delete siw2_od2
t_eq "no live siw2 objects" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
t_ended "no odp_test process is left" odp_test
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
