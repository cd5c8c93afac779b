#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Verbs objects without a connection: PDs, CQs, QPs, SRQs and MRs of a
# siw2 device, created, changed and destroyed by
#  - kernel consumers: kmod/siw2_selftest.ko, the kernel verbs as NFS/RDMA,
#    iSER and NVMe-oF use them (states, posting, flushing, ib_drain_qp);
#  - user space without the provider: uverbs_objects.c, raw uverbs commands
#    and the shared rings of <rdma/siw2-abi.h>, RLIMIT_MEMLOCK included;
#  - user space through libibverbs and libsiw2: rdma-core's pyverbs tests
#    of the objects, once the provider implements them.
# Every object is gone at the end (/sys/kernel/debug/siw2/objects).
. "$(dirname "$0")/../lib.sh"

here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
# The longest interrupts-off lock hold a large flush or resize may cause
# (see the irqsoff test below). On the debug kernel (make check-debug)
# lockdep and KASAN make every lock and access several times dearer:
# there a batch of the flush took 4.9 to 8.6 ms on a loaded host, where
# a flush under one hold would take over 100 ms.
irqsoff_bound_us=4000
kasan_kernel && irqsoff_bound_us=40000

t_ok "modprobe siw2" modprobe siw2
mk_dummy d0 192.0.2.1/24
t_ok "rdma link add siw2_0" rdma link add siw2_0 type siw2 netdev d0

# Reports the lines a test printed as this suite's checks (not in a
# pipeline: the counts live in this shell).
report() {
	local prefix=$1 line
	while IFS= read -r line; do
		case $line in
		"ok   - "*) t_pass "$prefix: ${line#ok   - }" ;;
		"FAIL - "*) t_fail "$prefix: ${line#FAIL - }" ;;
		esac
	done
}

# --- kernel consumers
marker="objects: selftest $$ $RANDOM"
echo "$marker" >/dev/kmsg
if out=$(modprobe siw2_selftest dev=siw2_0 2>&1); then
	dmesg | sed -n "/$marker/,\$p" | grep -o 'siw2_selftest: .*' |
		sed 's/^siw2_selftest: //' >"$tmp/kernel.log"
	report kernel <"$tmp/kernel.log"
	t_eq "kernel: the selftest ran to its end" 0 \
		"$(cat /sys/module/siw2_selftest/parameters/failed)"
	t_match "kernel: the selftest ran its checks" '^[1-9][0-9]+$' \
		"$(cat /sys/module/siw2_selftest/parameters/passed)"
	t_ok "kernel: unload the selftest" modprobe -r siw2_selftest
else
	t_fail "kernel: load siw2_selftest" "$out"
fi
t_eq "kernel: no live objects but the device" \
	"$(siw2_objects_zero | sed 's/^device 0$/device 1/')" \
	"$(cat /sys/kernel/debug/siw2/objects)"

# --- user space, raw uverbs
if uo=$(t_prog uverbs_objects); then
	"$uo" siw2_0 >"$tmp/uverbs.log" 2>&1
	st=$?
	report uverbs <"$tmp/uverbs.log"
	t_eq "uverbs: the object test exits cleanly" 0 "$st"

	# RLIMIT_MEMLOCK is the core's pinned-memory accounting: as nobody,
	# with 64 KiB lockable, a 4 MiB registration must be refused.
	chmod 755 "$tmp"
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		bash -c "ulimit -l 64 && exec '$uo' siw2_0 memlock" \
		>"$tmp/memlock.log" 2>&1
	st=$?
	report uverbs <"$tmp/memlock.log"
	t_eq "uverbs: the memlock test (as nobody) exits cleanly" 0 "$st"

	# Full rings flushed and a full CQ resized, as any user may: siw2's
	# longest lock hold with interrupts off meanwhile. Measured in a TCG
	# guest on 6.1: a flush of 16384 SQEs under one hold 8.5 to 12.5 ms,
	# a resize of 65536 CQEs 17.5 ms; in batches 0.5 to 0.7 ms (the
	# first run of TCG-translated code), a resize's final copy 0.3 ms.
	"$uo" siw2_0 irqsoff "$irqsoff_bound_us" \
		>"$tmp/irqsoff.log" 2>&1
	st=$?
	report uverbs <"$tmp/irqsoff.log"
	t_eq "uverbs: the irqsoff test exits cleanly" 0 "$st"
else
	t_fail "uverbs: uverbs_objects is built"
fi

# --- user space, libibverbs with the provider
# pyverbs needs the provider's CQ, QP and MR verbs; until it has them the
# tests are skipped, not failed.
prov_has() { grep -q "$1" "$top/userspace/provider/"*.c 2>/dev/null; }
if ! prov_has 'create_cq' || ! prov_has 'create_qp' || ! prov_has 'reg_mr'; then
	t_skip "pyverbs: PD, CQ, QP, MR, SRQ tests" "the provider has no CQ/QP/MR verbs yet"
elif [ ! -d /usr/share/doc/rdma-core/tests ]; then
	t_skip "pyverbs: PD, CQ, QP, MR, SRQ tests" "python3-pyverbs not installed"
else
	mkdir -p "$tmp/py/tests"
	cp /usr/share/doc/rdma-core/tests/* "$tmp/py/tests/"
	gunzip -f "$tmp"/py/tests/*.gz
	# The API test classes need no traffic. Skips (UD, UC and raw QPs,
	# other vendors' tests, MRTest's traffic on iWARP's GID) are only
	# counted in the summary line.
	(cd "$tmp/py" && timeout 600 /usr/bin/python3 tests/run_tests.py \
		--dev siw2_0 -v -k PDTest -k CQAPITest -k QPTest -k MRTest \
		>"$tmp/py.log" 2>&1)
	st=$?
	# unittest -v: "test_x (id)", then "docstring ... ok" (or on the
	# same line without a docstring).
	awk '/^test_[a-z0-9_]* \(/ { id = $2; gsub(/[()]/, "", id) }
	     /\.\.\. ok$/ { print "ok   - " id }
	     /\.\.\. (FAIL|ERROR)$/ { print "FAIL - " id }' \
		"$tmp/py.log" >"$tmp/py.res"
	report pyverbs <"$tmp/py.res"
	t_log "pyverbs: $(grep -E '^Ran [0-9]+ test' "$tmp/py.log")," \
		"$(tail -n 1 "$tmp/py.log")"
	t_match "pyverbs: the run completes" '^(OK|FAILED)' "$(tail -n 3 "$tmp/py.log")"
	t_eq "pyverbs: exit status" 0 "$st"
	[ "$st" -eq 0 ] || tail -n 60 "$tmp/py.log"
fi

t_ok "rdma link delete siw2_0" rdma link delete siw2_0
t_eq "no live siw2 objects at the end" "$(siw2_objects_zero)" \
	"$(cat /sys/kernel/debug/siw2/objects)"
ip link del d0
t_ok "modprobe -r siw2" modprobe -r siw2
rm -rf "$tmp"

t_done
