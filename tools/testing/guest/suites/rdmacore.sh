#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libsiw2 under other rdma-core releases: for each release that
# scripts/check-rdma-core built on the host (its list in
# .build/rdma-core/releases), that release's libibverbs and librdmacm go
# in front of the system's (LD_LIBRARY_PATH) and libsiw2 built for it is
# the only provider (RDMAV_DRIVERS; the release's own .driver directory is
# empty). Then: the release's ibv_devinfo on a siw2 device, uverbs_test's
# data path on it, and Debian's rping -V and ib_write_bw -R between two
# network namespaces (their public ABI, libibverbs.so.1 and
# librdmacm.so.1, is the same in every release). Ends with a line per
# release: "rdma-core 56.1 (PABI 34): ok", or what failed.
. "$(dirname "$0")/../lib.sh"

list=$T_TOP/.build/rdma-core/releases
if [ ! -s "$list" ]; then
	t_fail "release builds are listed" "no $list: run scripts/check-rdma-core on the host"
	t_done
	exit
fi
if ! bin=$(t_prog uverbs_test); then
	t_fail "uverbs_test is built"
	t_done
	exit
fi

tmp=$(mktemp -d)
cleanup() {
	# shellcheck disable=SC2046
	kill $(jobs -pr) 2>/dev/null
	wait 2>/dev/null
	ip netns del rc1 2>/dev/null
	ip netns del rc2 2>/dev/null
	ip link del rd0 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

t_ok "modprobe siw2" modprobe siw2
modprobe rdma_ucm 2>/dev/null
mk_dummy rd0 192.0.2.1/24
t_ok "rdma link add siw2_0" rdma link add siw2_0 type siw2 netdev rd0
ns_pair rc1 rv1 198.51.100.1 rc2 rv2 198.51.100.2
t_ok "rdma link add siw2_a in rc1" \
	ip netns exec rc1 rdma link add siw2_a type siw2 netdev rv1
t_ok "rdma link add siw2_b in rc2" \
	ip netns exec rc2 rdma link add siw2_b type siw2 netdev rv2
t_reach rc2 198.51.100.1

# pair NAME PORT SERVER... -- CLIENT...: the server in rc1, the client in
# rc2 once the server listens on PORT, each under a 60 s timeout; 0 when
# both exit 0. Output in $tmp/NAME.s and $tmp/NAME.c.
pair() {
	local name=$1 port=$2 srv=() spid cst sst
	shift 2
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	ip netns exec rc1 timeout 80 "${srv[@]}" >"$tmp/$name.s" 2>&1 &
	spid=$!
	t_wait "listening rc1 $port || ! kill -0 $spid" 20
	ip netns exec rc2 timeout 60 "$@" >"$tmp/$name.c" 2>&1
	cst=$?
	wait "$spid"
	sst=$?
	[ "$cst" = 0 ] && [ "$sst" = 0 ]
}

port=7700
# run CMD...: CMD with this release's libraries and provider ($renv).
run() { "${renv[@]}" "$@"; }
# check WHAT STATUS DETAIL: a check of this release.
check() {
	if [ "$2" = 0 ]; then
		t_pass "rdma-core $ver: $1"
	else
		t_fail "rdma-core $ver: $1" "$3"
		failed+=("$1")
	fi
}

# The list is read on fd 3: the tools below must not eat it from stdin.
while read -r -u 3 ver pabi tree prov host; do
	failed=()
	renv=(env "LD_LIBRARY_PATH=$tree/build/lib" "RDMAV_DRIVERS=$prov/libsiw2")
	[ "$host" = ok ] || failed+=("host: $host")

	out=$(run "$tree/build/bin/ibv_devinfo" -d siw2_0 2>&1)
	st=$?
	if [ $st = 0 ] && ! grep -q 'transport:.*iWARP' <<<"$out"; then st=1; fi
	if [ $st = 0 ] && ! grep -q 'state:.*PORT_ACTIVE' <<<"$out"; then st=1; fi
	# The only lines on stderr are warnings; there must be none.
	if [ $st = 0 ] && grep -qi 'warning\|libsiw2:' <<<"$out"; then st=1; fi
	check "ibv_devinfo -d siw2_0" $st "$out"

	out=$(run "$bin" siw2_0 checks 2>&1)
	check "uverbs_test: CQ, QP, SRQ, MR, the shared-ring data path" $? \
		"$(grep -v '^ok' <<<"$out" | tail -n 20)"

	port=$((port + 1))
	pair rping$port $port \
		"${renv[@]}" rping -s -V -C 200 -S 4096 -a 198.51.100.1 -p $port -- \
		"${renv[@]}" rping -c -V -C 200 -S 4096 -a 198.51.100.1 -p $port
	check "rping -V between two namespaces, 4 KiB x200 verified" $? \
		"$(tail -n 5 "$tmp/rping$port.s" "$tmp/rping$port.c")"

	port=$((port + 1))
	perftest_env
	pair wbw$port $port \
		"${renv[@]}" ib_write_bw -R -F -d siw2_a -s 65536 -n 200 -p $port -- \
		"${renv[@]}" "${PERFTEST_ENV[@]}" \
		ib_write_bw -R -F -d siw2_b -s 65536 -n 200 -p $port 198.51.100.1
	st=$?
	if [ $st = 0 ] && ! grep -Eq '^ *65536 +200 ' "$tmp/wbw$port.c"; then
		st=1
	fi
	check "ib_write_bw -R between two namespaces, 64 KiB x200" $st \
		"$(tail -n 5 "$tmp/wbw$port.s" "$tmp/wbw$port.c")"

	if [ ${#failed[@]} -eq 0 ]; then
		echo "rdma-core $ver (PABI $pabi): ok"
	else
		echo "rdma-core $ver (PABI $pabi): failed: $(printf '%s; ' "${failed[@]}")"
	fi
done 3<"$list"

t_done
