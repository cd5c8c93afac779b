#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs in a siw2 guest (scripts/fuzz-corpus starts it): captures the TCP
# traffic of short siw2-to-siw2 runs of rping and perftest between network
# namespaces d1 (192.0.2.1) and d2 (.2) into OUTDIR/siw2.pcap, one TCP
# connection per run. Small transfers: the corpus is for coverage of
# valid traffic, not volume.
#   guest-capture.sh OUTDIR
set -u
out=${1:?usage: guest-capture.sh OUTDIR}
A=192.0.2.1
in1() { ip netns exec d1 "$@"; }
in2() { ip netns exec d2 "$@"; }
listening() {
	local tries=100
	while [ $tries -gt 0 ]; do
		in1 ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

modprobe siw2 && modprobe rdma_ucm || exit 1
ip netns add d1 && ip netns add d2 &&
ip link add v1 netns d1 type veth peer name v2 netns d2 &&
in1 ip addr add $A/24 dev v1 && in2 ip addr add 192.0.2.2/24 dev v2 &&
in1 ip link set v1 up && in2 ip link set v2 up &&
in1 ip link set lo up && in2 ip link set lo up &&
in1 rdma link add siw2_d1 type siw2 netdev v1 &&
in2 rdma link add siw2_d2 type siw2 netdev v2 || exit 1

# The capture file is written to a private directory first: dumpcap
# drops privileges to write where it may not.
cap=$(mktemp -d)
chmod 777 "$cap"
in1 dumpcap -q -i v1 -f tcp -w "$cap/siw2.pcap" &
dump=$!
sleep 3

st=0
# pair PORT SERVER-CMD... -- CLIENT-CMD...
pair() {
	local port=$1 srv=() cli=() server
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	in1 timeout 60 "${srv[@]}" >/dev/null 2>&1 &
	server=$!
	listening "$port" || { echo "capture: no listener on $port"; st=1; }
	if ! in2 timeout 60 "${cli[@]}" >/dev/null 2>&1; then
		echo "capture: client failed: ${cli[*]}"
		st=1
	fi
	wait "$server" || { echo "capture: server failed: ${srv[*]}"; st=1; }
}

# rping: Sends, RDMA Reads and Writes, verified.
pair 7801 rping -s -a $A -p 7801 -C 3 -S 100 -V -- \
	rping -c -a $A -p 7801 -C 3 -S 100 -V
for t in write send read; do
	pair 7802 "ib_${t}_bw" -R -F -n 8 -s 1024 -p 7802 -d siw2_d1 -- \
		"ib_${t}_bw" -R -F -n 8 -s 1024 -p 7802 -d siw2_d2 $A
done
pair 7803 ib_write_lat -R -F -n 8 -s 32 -p 7803 -d siw2_d1 -- \
	ib_write_lat -R -F -n 8 -s 32 -p 7803 -d siw2_d2 $A

sleep 2
# SIGTERM: a background job of a script ignores SIGINT.
kill -TERM "$dump"
wait "$dump"
cp "$cap/siw2.pcap" "$out/siw2.pcap" || st=1
rm -rf "$cap"
ip netns del d1
ip netns del d2
exit $st
