#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Userspace verbs through libsiw2 on one local device: CQ, QP, SRQ and MR
# lifecycles, the shared-ring data path up to flushed completions
# (uverbs_test.c), no system call on the fast path (strace), and no siw2
# object left behind.
. "$(dirname "$0")/../lib.sh"

if ! bin=$(t_prog uverbs_test); then
	t_fail "uverbs_test is built"
	t_done
	exit
fi

t_ok "modprobe siw2" modprobe siw2
mk_dummy d0 192.0.2.1/24
t_ok "rdma link add siw2_0" rdma link add siw2_0 type siw2 netdev d0

# checks OUTPUT STATUS: one line per check of uverbs_test, each a check
# of this suite.
checks() {
	t_lines <<<"$1"
	if [ "$2" -gt 1 ]; then
		t_fail "uverbs_test ran" "exit $2"
	fi
}
out=$("$bin" siw2_0 checks 2>&1)
checks "$out" $?

# Polling (also the extended CQ's start_poll), arming and posting receives
# (QP in RTR, SRQ) enter no kernel:
# strace sees nothing between the two marker writes of `nosys`.
if command -v strace >/dev/null; then
	trace=$(mktemp)
	if strace -f -o "$trace" "$bin" siw2_0 nosys >/dev/null 2>&1; then
		between=$(awk '/write\(1, "SIW2-NOSYS-BEGIN/ { on = 1; next }
			/write\(1, "SIW2-NOSYS-END/ { on = 0; found = 1 }
			on { print }
			END { if (!found) print "no end marker" }' "$trace")
		t_eq "poll_cq, start_poll, req_notify_cq, post_recv, post_srq_recv: no system call" \
			"" "$between"
	else
		t_fail "uverbs_test nosys ran" "$(tail -n 5 "$trace")"
	fi
	rm -f "$trace"
else
	t_skip "no system call on the fast path" "no strace"
fi

# The device removed under a process that polls on and never reads its
# async events: its next poll and posts fail (siw2-abi.h, "Gone").
gout=$(mktemp)
timeout 90 "$bin" siw2_0 gone >"$gout" 2>&1 &
gpid=$!
if wait_for "$gout" 'SIW2-GONE-READY' 20; then
	t_ok "rdma link delete siw2_0 under a polling process" \
		timeout 30 rdma link delete siw2_0
	wait "$gpid"
	st=$?
	checks "$(grep -v SIW2-GONE-READY "$gout")" "$st"
else
	t_fail "uverbs_test gone is ready" "$(cat "$gout")"
	t_ok "rdma link delete siw2_0" rdma link delete siw2_0
	wait "$gpid"
fi
rm -f "$gout"
# shellcheck disable=SC2016 # t_wait evaluates it
if t_wait '[ "$(cat /sys/kernel/debug/siw2/objects)" = "$(siw2_objects_zero)" ]' 5; then
	t_pass "no live siw2 objects"
else
	t_fail "no live siw2 objects" "$(cat /sys/kernel/debug/siw2/objects)"
fi
ip link del d0
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
