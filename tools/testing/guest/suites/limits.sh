#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Resource limits and isolation, mostly as an unprivileged user (uid
# 65534): sizes beyond the device's advertised limits refused and at the
# limits accepted, pinned memory bounded by RLIMIT_MEMLOCK, shared-ring
# memory bounded by the memory cgroup, one context's rings out of reach of
# every other context's mmap(), and rdma links managed by root only
# (limits_test.c does the verbs part).
. "$(dirname "$0")/../lib.sh"

top=$(cd "$(dirname "$0")/../../../.." && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
if ! bin=$(t_prog limits_test); then
	t_fail "limits_test is built"
	t_done
	exit
fi

NOBODY=65534
# as_user CMD...: CMD as uid/gid 65534 without any capability.
as_user() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		--inh-caps=-all --bounding-set=-all -- "$@"
}

cgroot=$tmp/cg
cleanup() {
	[ -d "$cgroot/siw2lim" ] && rmdir "$cgroot/siw2lim"
	mountpoint -q "$cgroot" && umount "$cgroot"
	rdma link delete siw2_0 2>/dev/null
	ip link del d0 2>/dev/null
	ip link del d1 2>/dev/null
	ip netns del lp1 2>/dev/null
	ip netns del lp2 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

t_ok "modprobe siw2" modprobe siw2
mk_dummy d0 192.0.2.1/24
t_ok "rdma link add siw2_0" rdma link add siw2_0 type siw2 netdev d0

# The uverbs core creates its nodes world-usable (access is per object,
# not per device); the checks below depend on an unprivileged user
# reaching the device at all.
uv=
for d in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$d/ibdev" 2>/dev/null)" = siw2_0 ] && uv=${d##*/}
done
t_log "siw2_0 is /dev/infiniband/$uv, mode $(stat -c %a "/dev/infiniband/$uv" 2>/dev/null)"
t_ok "an unprivileged user can open siw2_0's uverbs node" \
	as_user test -r "/dev/infiniband/$uv" -a -w "/dev/infiniband/$uv"

# --- sizes against the advertised limits
as_user "$bin" siw2_0 caps >"$tmp/caps" 2>&1
t_lines caps <"$tmp/caps"

# --- pinned memory: RLIMIT_MEMLOCK of 8 MiB
as_user prlimit --memlock=8388608:8388608 "$bin" siw2_0 memlock 8388608 \
	>"$tmp/memlock" 2>&1
t_lines memlock <"$tmp/memlock"

# --- mmap isolation between contexts and processes
as_user "$bin" siw2_0 mmap >"$tmp/mmap" 2>&1
t_lines mmap <"$tmp/mmap"

# --- ring memory is charged to the creator's memory cgroup
mkdir -p "$cgroot"
if mount -t cgroup2 none "$cgroot" 2>/dev/null &&
	echo +memory >"$cgroot/cgroup.subtree_control" 2>/dev/null &&
	mkdir "$cgroot/siw2lim"; then
	# 16 CQs of max_cqe entries are 32 MiB of ring: fine outside...
	out=$(as_user "$bin" siw2_0 rings 16 2>&1)
	t_eq "16 CQs of max_cqe entries outside a memory cgroup limit" \
		"RINGS created=16 errno=0" "$(grep RINGS <<<"$out")"
	# ...and refused with ENOMEM in a cgroup limited to 24 MiB,
	# without the OOM killer ending the process.
	echo 24M >"$cgroot/siw2lim/memory.max"
	out=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' \
		sh "$cgroot/siw2lim" setpriv --reuid=$NOBODY --regid=$NOBODY \
		--clear-groups -- "$bin" siw2_0 rings 16 2>&1)
	st=$?
	t_eq "in a 24 MiB memory cgroup the process is not killed" 0 "$st"
	t_match "in a 24 MiB memory cgroup ring memory runs out with ENOMEM" \
		'^RINGS created=([0-9]|1[01]) errno=12$' "$out"
	t_log "$(grep -h '^oom\|^oom_kill' "$cgroot/siw2lim/memory.events" | tr '\n' ' ')"
	t_eq "no OOM kill in the cgroup" 0 \
		"$(awk '$1 == "oom_kill" { print $2 }' "$cgroot/siw2lim/memory.events")"
else
	t_skip "ring memory in a memory cgroup" "no cgroup2 memory controller"
fi

# --- a remote peer names another process's region: a raw FPDU peer
# (fpdu_peer.py, as in hostile.sh) connected to peer_target's QP sends an
# RDMA Write to the STag of a region that a second process, uid 65534,
# registered with remote write access on the same device. Its PD is not
# the QP's: siw2 must answer with a protection Terminate and place
# nothing. Then peer_target names the region itself, as the lkey of a
# Send.
here=$top/tools/testing/guest
A=198.51.100.1
in1() { ip netns exec lp1 "$@"; }
if pt=$(t_prog peer_target) &&
	ns_pair lp1 lv1 $A lp2 lv2 198.51.100.2 &&
	in1 rdma link add siw2_l type siw2 netdev lv1; then
	modprobe rdma_ucm 2>/dev/null
	as_user "$bin" siw2_l hold "$tmp/go" >"$tmp/hold" 2>&1 &
	holder=$!
	wait_for "$tmp/hold" '^HOLD|FAIL'
	read -r rkey addr lkey <<<"$(sed -n 's/^HOLD rkey=\([^ ]*\) addr=\([^ ]*\) lkey=\([^ ]*\)$/\1 \2 \3/p' "$tmp/hold")"
	in1 timeout 90 "$pt" server $A 7650 -T 60 \
		>"$tmp/pt" 2>&1 &
	target=$!
	wait_for "$tmp/pt" 'LISTENING|ERROR'
	# write-oob writes 64 octets at TO + LEN - 16: inside the region.
	ip netns exec lp2 timeout 80 python3 -S "$here/peers/fpdu_peer.py" connect \
		$A 7650 write-oob --target "$rkey,$addr,80" >"$tmp/fp" 2>&1
	wait "$target"
	# The same region named locally: a Send whose SGE carries the other
	# process's lkey and address must complete with a protection error
	# and put none of its octets on the wire.
	in1 timeout 90 "$pt" server $A 7651 -T 30 \
		-s "$(printf '%064d' 0)" -L "$lkey,$addr" >"$tmp/pt2" 2>&1 &
	target=$!
	wait_for "$tmp/pt2" 'LISTENING|ERROR'
	ip netns exec lp2 timeout 60 python3 -S "$here/peers/fpdu_peer.py" connect \
		$A 7651 valid >"$tmp/fp2" 2>&1
	wait "$target"
	t_match "foreign lkey: the Send completes with a local protection error" \
		'^WC wr_id=1000 status=LOC_PROT_ERR ' "$(cat "$tmp/pt2")"
	if grep -q '^send op=' "$tmp/fp2"; then
		t_fail "foreign lkey: nothing of the region is sent" \
			"$(grep '^send op=' "$tmp/fp2")"
	else
		t_pass "foreign lkey: nothing of the region is sent"
	fi
	touch "$tmp/go"
	wait "$holder"
	t_log "foreign STag: peer: $(grep -E '^(write|term|closed|reset)' "$tmp/fp" | tr '\n' ';')"
	t_match "foreign STag: siw2 answers with a protection Terminate" \
		'^term layer=(ddp|rdmap) etype=1 ' "$(cat "$tmp/fp")"
	t_lines foreign <"$tmp/hold"
	t_match "foreign STag: the target's own region is untouched too" \
		'^REGION intact' "$(cat "$tmp/pt")"
	in1 rdma link delete siw2_l
else
	t_fail "foreign STag: setup (peer_target built, namespaces, link)"
fi
ip netns del lp1 2>/dev/null
ip netns del lp2 2>/dev/null

# --- rdma links: root only, also from a user namespace of one's own
mk_dummy d1 192.0.2.9/24
out=$(as_user rdma link add siw2_x type siw2 netdev d1 2>&1)
st=$?
t_eq "rdma link add as an unprivileged user fails" 1 "$((st != 0))"
t_match "rdma link add as an unprivileged user: EPERM" \
	'Operation not permitted' "$out"
out=$(as_user rdma link delete siw2_0 2>&1)
st=$?
t_eq "rdma link delete as an unprivileged user fails" 1 "$((st != 0))"
t_match "rdma link delete as an unprivileged user: EPERM" \
	'Operation not permitted' "$out"
t_ok "siw2_0 still exists" rdma link show siw2_0/1
# shellcheck disable=SC2016 # the inner shell expands it
if as_user unshare -Urn true 2>/dev/null; then
	out=$(as_user unshare -Urn sh -c 'ip link add d9 type dummy &&
		ip addr add 192.0.2.9/24 dev d9 && ip link set d9 up &&
		rdma link add siw2_y type siw2 netdev d9' 2>&1)
	st=$?
	t_eq "rdma link add as root of an unprivileged user namespace fails" \
		1 "$((st != 0))"
	t_match "user namespace: EPERM" 'Operation not permitted' "$out"
else
	t_skip "rdma link add in an unprivileged user namespace" \
		"unprivileged user namespaces are off"
fi
t_eq "no device but siw2_0" "siw2_0" \
	"$(rdma link show | awk '{ sub("/.*", "", $2); print $2 }' | sort -u | tr '\n' ' ' | sed 's/ $//')"

t_ok "rdma link delete siw2_0" rdma link delete siw2_0
# shellcheck disable=SC2016 # t_wait evaluates it
if t_wait '[ "$(cat /sys/kernel/debug/siw2/objects)" = "$(siw2_objects_zero)" ]' 5; then
	t_pass "no live siw2 objects"
else
	t_fail "no live siw2 objects" "$(cat /sys/kernel/debug/siw2/objects)"
fi
ip link del d0
ip link del d1
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
