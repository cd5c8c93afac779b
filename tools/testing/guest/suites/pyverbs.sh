#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own tests (python3-pyverbs, /usr/share/doc/rdma-core/tests)
# against a siw2 device on a veth netdev in network namespace pv: those
# that apply to an iWARP RC device (device, PD, CQ and extended CQ, QP and
# extended QP, MR, RDMA CM). Each test is one check; every test not run is
# listed as a skip with its reason, either pyverbs' own or why it does not
# apply to iWARP.
#
# Two things in pyverbs assume RoCE or a PCI NIC, and this suite works
# around them: it passes --gid 0, as pyverbs skips every port whose GID ends
# in 8 zero octets (siw2's GID is the MAC, zero padded: iWARP has no GID
# table), and when /sys/class/infiniband/DEV/device/net does not exist (a
# netdev without parent device, like veth and dummy) it tells pyverbs the
# netdev directly. Without either, every RDMA CM test is skipped.
#
# And test_cq_events_rc, which connects RC QPs with modify_qp and IB
# attributes, must end within a minute: siw2 refuses such a move to RTS
# (issue 38). Then no QP, CQ, MR, PD, endpoint or listener is left.
#
# PYVERBS_ONLY=REGEX runs only the tests whose id matches (debugging).
. "$(dirname "$0")/../lib.sh"

src=/usr/share/doc/rdma-core/tests
py=/usr/bin/python3
dbg=/sys/kernel/debug/siw2
dev=siw2_pv
tmp=$(mktemp -d)

cleanup() {
	ip netns del pv 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -f "$src/run_tests.py" ] || ! "$py" -c 'import pyverbs' 2>/dev/null; then
	t_skip "pyverbs tests" "python3-pyverbs is not installed"
	t_done
	exit
fi

# The tests import themselves as the package "tests"; some are gzipped.
cp -r "$src" "$tmp/tests"
gunzip -f "$tmp"/tests/*.py.gz

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
ip netns add pv
ip -n pv link set lo up
ip link add pva netns pv type veth peer name pvb netns pv
ip -n pv addr add 192.0.2.1/24 dev pva
ip -n pv addr add 192.0.2.2/24 dev pvb
ip -n pv link set pva up
ip -n pv link set pvb up
t_ok "rdma link add $dev in pv" \
	ip netns exec pv rdma link add "$dev" type siw2 netdev pva
if [ ! -e "/sys/class/infiniband/$dev/device/net" ]; then
	t_log "no /sys/class/infiniband/$dev/device/net (pva has no parent device): pyverbs is given the netdev"
fi

cat >"$tmp/run.py" <<'EOF'
# Runs rdma-core's tests one by one and prints one line per test:
# PASS/FAIL/SKIP ID[: reason], failures followed by "  | " detail lines;
# BEGIN ID before each, so that a run stopped from outside names its test.
import os
import re
import signal
import sys
import time
import traceback
import unittest

top, dev, netdev = sys.argv[1:4]
# A fifth argument names one test to run, in scope or not.
one = sys.argv[4] if len(sys.argv) > 4 else None
only = os.environ.get('PYVERBS_ONLY')
sys.path[:0] = [top, os.path.join(top, 'tests')]
sys.argv[1:] = ['--dev', dev, '--gid', '0']
from args_parser import parser
parser.parse_args()
import tests
import tests.base as base

if not os.path.exists(f'/sys/class/infiniband/{dev}/device/net'):
    def _get_ip_mac(self, d, port, idx):
        ip, mac = self.get_ip_mac_address(netdev)
        self.args.append([d, port, idx, ip, mac])
    base.RDMATestCase._get_ip_mac = _get_ip_mac

SCOPE = ('test_device', 'test_pd', 'test_cq', 'test_cqex', 'test_qp',
         'test_qpex', 'test_mr', 'test_rdmacm', 'test_addr')
IB_CONNECT = ('RC traffic between QPs connected by modify_qp with an '
              'IB/RoCE address vector; iWARP QPs connect through the rdma_cm')
NO_UD = 'UC, UD, XRC and raw packet QPs: iWARP has RC QPs only'
# Tests in SCOPE that do not apply to iWARP, by regular expression.
NOT_IWARP = [
    (r'_(uc|ud|raw|xrc)_|_ud$|data_in_order', NO_UD),
    (r'test_rdmacm\..*(multicast|udp)', 'multicast and the UDP port '
     'space need UD QPs: iWARP has none'),
    (r'test_addr\.', 'address handles are for UD QPs over IB/RoCE'),
    (r'test_cq\.CQTest\.test_resize_cq', 'fills the CQ through UD QPs'),
    (r'test_cqex\.CqExTestCase\.test_rc', IB_CONNECT),
    (r'test_qpex\.QpExTestCase\.test_qp_ex_rc_', IB_CONNECT),
    (r'test_qpex\.QpExTestCase\..*_bad_flow$', 'runs on UD QPs (its '
     '"ud_send" players): iWARP has RC QPs only'),
    (r'test_mr\.MRTest\.test_mr_rereg', IB_CONNECT),
    (r'test_mr\.MWTest\.test_(mw_|invalidate_mw)', IB_CONNECT),
    (r'test_mr\.(DmaBufTestCase|DeviceMemoryTest)\.', IB_CONNECT),
    (r'test_rdmacm\..*async_traffic$', 'asserts the IB ACK timeout '
     '(RDMA_OPTION_ID_ACK_TIMEOUT) on the QP: the rdma_cm applies it to IB '
     'QPs only, iWARP relies on TCP retransmission'),
    (r'test_rdmacm\..*external_qp', 'expects CONNECT_RESPONSE and '
     'rdma_establish(): the iWARP CM binds the QP at connect and reports '
     'ESTABLISHED'),
]
# Modules outside SCOPE, for the list of what did not run.
MODULES = [
    (r'mlx5', 'mlx5 provider only'),
    (r'efa', 'EFA provider only'),
    (r'cuda', 'needs CUDA'),
    (r'flow|rss', 'raw packet QPs of Ethernet NICs'),
    (r'fork', 'libibverbs fork support, no device test'),
    (r'test_odp', 'on-demand paging over RC QPs connected by modify_qp '
     'with IB/RoCE address vectors, UD and XRC QPs, or implicit ODP (which '
     'siw2 does not offer); the odp suite covers ODP over the rdma_cm'),
    (r'.', 'traffic between QPs connected by modify_qp with IB/RoCE '
     'address vectors (or UD/XRC); iWARP QPs connect through the rdma_cm'),
]


def ids(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from ids(t)
        else:
            yield t


def say(line):
    print(line, flush=True)


def brief(err):
    lines = traceback.format_exception(*err)
    last = ''.join(lines).strip().splitlines()
    return last[-1][:300], last[-8:]


class Result(unittest.TestResult):
    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()
        say(f'BEGIN {name(test)}')

    def took(self):
        return f'{time.monotonic() - self.t0:.1f} s'

    def addSuccess(self, test):
        say(f'PASS {name(test)}')

    def addFailure(self, test, err):
        self.failed(test, err)

    def addError(self, test, err):
        self.failed(test, err)

    def failed(self, test, err):
        why, detail = brief(err)
        say(f'FAIL {name(test)}: {why} (after {self.took()})')
        for d in detail:
            say(f'  | {d[:200]}')

    def addSkip(self, test, reason):
        say(f'SKIP {name(test)}: {reason}')

    def addExpectedFailure(self, test, err):
        say(f'PASS {name(test)} (expected failure)')

    def addUnexpectedSuccess(self, test):
        say(f'FAIL {name(test)}: unexpected success')


def name(test):
    return test.id().removeprefix('tests.')


def alarm(signum, frame):
    raise TimeoutError('no result after 120 s')


signal.signal(signal.SIGALRM, alarm)
loader = unittest.TestLoader()
if one:
    for test in ids(loader.loadTestsFromName('tests.' + one)):
        test.run(Result())
    say('END')
    sys.exit(0)
for mod in tests.__test_modules__:
    short = mod.__name__.removeprefix('tests.')
    found = list(ids(loader.loadTestsFromModule(mod)))
    if short not in SCOPE:
        if found and not only:
            why = next(r for p, r in MODULES if re.search(p, short))
            say(f'SKIP {short} ({len(found)} tests): {why}')
        continue
    for test in found:
        n = name(test)
        if only and not re.search(only, n):
            continue
        why = next((r for p, r in NOT_IWARP if re.search(p, n)), None)
        if why:
            say(f'SKIP {n}: {why}')
            continue
        signal.alarm(120)
        test.run(Result())
        signal.alarm(0)
say('END')
EOF

start=$SECONDS
ip netns exec pv timeout 1200 "$py" "$tmp/run.py" "$tmp" "$dev" pva \
	>"$tmp/out" 2>"$tmp/err"
st=$?
t_log "pyverbs tests: $((SECONDS - start)) s"

fail='' current=''
detail=()
flush() {
	[ -n "$fail" ] && t_fail "$fail" "${detail[@]}"
	fail='' detail=()
}
while IFS= read -r line; do
	case $line in
	"  | "*) detail+=("${line#  | }") ;;
	"BEGIN "*) flush; current=${line#BEGIN } ;;
	"PASS "*) flush; current=; t_pass "${line#PASS }" ;;
	"FAIL "*) flush; current=; fail=${line#FAIL } ;;
	"SKIP "*)
		flush
		rest=${line#SKIP }
		t_skip "${rest%%: *}" "${rest#*: }"
		;;
	END) flush ;;
	*) flush; t_log "$line" ;;
	esac
done <"$tmp/out"
flush
if [ -n "$current" ]; then
	t_fail "$current" "no result: the run stopped here (exit $st)" \
		"$(tail -n 5 "$tmp/err")"
elif ! grep -qx END "$tmp/out"; then
	t_fail "pyverbs tests ran to the end" "exit $st" "$(tail -n 20 "$tmp/err")"
fi

# Issue 38: test_cq_events_rc moves two RC QPs to RTS with modify_qp and
# IB attributes and waits for their traffic. Without a connection siw2
# must refuse the move to RTS, so the test ends at once (with an error):
# it must not wait for completions that never come. Any result is
# accepted; only a run that does not end fails.
ends=cq_events.CqEventsTestCase.test_cq_events_rc
start=$SECONDS
ip netns exec pv timeout 60 "$py" "$tmp/run.py" "$tmp" "$dev" pva \
	"test_$ends" >"$tmp/ends" 2>&1
st=$?
took=$((SECONDS - start))
sed 's/^/       /' "$tmp/ends"
if [ "$st" -eq 0 ] && grep -qx END "$tmp/ends" &&
   grep -Eq "^(PASS|FAIL|SKIP) test_$ends" "$tmp/ends"; then
	t_pass "test_cq_events_rc ends: rts without a connection waits for nothing ($took s; $(grep -Eo "^(PASS|FAIL|SKIP)" "$tmp/ends" | head -n 1))"
else
	t_fail "test_cq_events_rc ends: rts without a connection waits for nothing" \
		"exit $st after $took s (124: killed by timeout 60, a hang)" \
		"$(tail -n 5 "$tmp/ends")"
fi

if t_wait all_gone 15; then
	t_pass "no live qp, cq, mr, pd, cep, listener, ucontext, srq"
else
	t_fail "no live qp, cq, mr, pd, cep, listener, ucontext, srq" \
		"$(cat "$dbg/objects")"
fi
t_ok "rdma link delete $dev" ip netns exec pv rdma link delete "$dev"
t_eq "no live siw2 objects" "$(siw2_objects_zero)" "$(cat "$dbg/objects")"
t_ok "modprobe -r siw2" modprobe -r siw2

t_done
