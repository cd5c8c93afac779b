# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of siw2's benchmark (tools/testing/bench/run): the two hosts, a
# server/client pair under time limits, CPU accounting, and the raw
# results. Sourced, never run.
#
# A measurement is one JSON object per line in $OUT/raw.jsonl:
#   {"system":..,"crc":..,"test":..,"size":..,"rep":..,"metric":..,"value":..}
# and a run that gave nothing has "error" instead of metric and value.

# siw2_set NAME VALUE (conf.c's settings, of every device and new ones)
# shellcheck source=tools/testing/guest/conf.sh
. "${BASH_SOURCE[0]%/*}/../guest/conf.sh"

# --- the two hosts ----------------------------------------------------------
#
# The server side "s" and the client side "c" are the two ends of a veth
# pair, bvs (S_ADDR) and bvc (C_ADDR), RFC 5737 addresses that never leave
# the guest; or, on the loop path, one address on one netdev.
#
# topology "local" (default): both ends in the guest's first network
# namespace. Policy routing sends what one address sends to the other
# through the veth pair instead of the loopback: the local table is looked
# up after rules that route S_ADDR via bvc and C_ADDR via bvs, except for
# packets that arrived on the pair and for lookups that name the owning
# device (the RDMA CM's check that a request came in on the device that owns
# its address). Upstream siw and rdma_rxe need this: rxe opens its UDP
# socket in the first namespace only, and siw's connect fails between two
# namespaces (both checked on 6.1).
#
# topology "netns": each end in a network namespace of its own (bench_s,
# bench_c), as the guest suites do; only systems that work across
# namespaces (siw2, tcp) can run there.
#
# topology "loop": one dummy netdev, bvl, with S_ADDR, in the first
# namespace, and both ends on it: the client connects to the server's own
# address, so that traffic takes the loopback path (lo), and an RDMA
# system has one device that is both ends (siw and rxe refuse a second
# device on a netdev), as on one host with one address. C_ADDR is S_ADDR there. A
# single netdev cannot steer each end's receive work to its own vCPU, so
# --rx-cpu own is refused.
#
# topology "hosts": two guests of scripts/vm-pair on their wire, this one
# (a, 198.51.100.1) the client, b (198.51.100.2) the server. b runs
# tools/testing/bench/agent, and every server-side command goes there
# through tools/testing/bench/remote (S_NS and S_REMOTE); each host's NIC,
# eth0, carries its device. CPU figures are the client host's.
#
# NET_S and NET_C are the netdevs the server's and the client's devices
# sit on (systems.sh's links_add); the same one on the loop path.
S_ADDR=198.51.100.1
C_ADDR=198.51.100.2
# shellcheck disable=SC2034 # NET_S, NET_C: read by systems.sh
NET_S=bvs NET_C=bvc
# The netdev whose received packets prove that traffic takes the path.
TOPO_RX_DEV=bvs
S_NS=() C_NS=()
# The server host's command prefix where it is not this one (hosts), else
# empty: what both ends need (modules, parameters) runs on both (both),
# what the server's device needs on the server's host (on_s).
S_REMOTE=()
both() { "$@" && { [ ${#S_REMOTE[@]} -eq 0 ] || "${S_REMOTE[@]}" "$@"; }; }
# both_all: the same on each host whatever the other's did, for undoing
# (a module left loaded on b would keep its parameters for the next
# system); fails if either did.
both_all() {
	local st=0
	"$@" || st=1
	if [ ${#S_REMOTE[@]} -ne 0 ]; then "${S_REMOTE[@]}" "$@" || st=1; fi
	return $st
}
on_s() { "${S_REMOTE[@]}" "$@"; }

topo_up() {
	case $1 in
	local)
		ip link add bvs type veth peer name bvc || return 1
		ip addr add $S_ADDR/24 dev bvs
		ip addr add $C_ADDR/24 dev bvc
		local d
		for d in all default bvs bvc; do
			sysctl -qw "net.ipv4.conf.$d.rp_filter=0" \
				"net.ipv4.conf.$d.accept_local=1" || return 1
		done
		ip link set bvs up && ip link set bvc up || return 1
		ip rule add pref 100 iif bvs lookup local &&
		ip rule add pref 101 iif bvc lookup local &&
		ip rule add pref 102 oif bvs to $S_ADDR lookup local &&
		ip rule add pref 103 oif bvc to $C_ADDR lookup local &&
		ip rule add pref 110 to $S_ADDR lookup 110 &&
		ip rule add pref 111 to $C_ADDR lookup 111 &&
		ip route add $S_ADDR dev bvc src $C_ADDR table 110 &&
		ip route add $C_ADDR dev bvs src $S_ADDR table 111 &&
		ip rule add pref 1000 lookup local &&
		ip rule del pref 0 lookup local || return 1
		S_NS=() C_NS=()
		;;
	netns)
		ip netns add bench_s && ip netns add bench_c || return 1
		ip link add bvs netns bench_s type veth peer name bvc \
			netns bench_c || return 1
		S_NS=(ip netns exec bench_s) C_NS=(ip netns exec bench_c)
		"${S_NS[@]}" ip link set lo up
		"${C_NS[@]}" ip link set lo up
		"${S_NS[@]}" ip addr add $S_ADDR/24 dev bvs
		"${C_NS[@]}" ip addr add $C_ADDR/24 dev bvc
		"${S_NS[@]}" ip link set bvs up && "${C_NS[@]}" ip link set bvc up
		;;
	loop)
		if [ "$RX_CPU" = own ]; then
			log "topology loop: --rx-cpu own needs each end on a netdev of its own"
			return 1
		fi
		ip link set lo up && ip link add bvl type dummy || return 1
		ip addr add $S_ADDR/24 dev bvl && ip link set bvl up || return 1
		C_ADDR=$S_ADDR NET_S=bvl NET_C=bvl TOPO_RX_DEV=lo
		S_NS=() C_NS=()
		;;
	hosts)
		if [ "$RX_CPU" = own ]; then
			log "topology hosts: each host's receive work is its own already"
			return 1
		fi
		# shellcheck disable=SC2034 # NET_S, NET_C: read by systems.sh
		S_ADDR=198.51.100.2 C_ADDR=198.51.100.1 NET_S=eth0 NET_C=eth0 TOPO_RX_DEV=eth0
		S_REMOTE=("${BASH_SOURCE[0]%/*}/remote") S_NS=("${S_REMOTE[@]}") C_NS=()
		ip addr add $C_ADDR/24 dev eth0 && ip link set eth0 up || return 1
		local tries=600
		until "${S_REMOTE[@]}" true 2>/dev/null; do
			tries=$((tries - 1))
			[ "$tries" -gt 0 ] || { log "topology hosts: no agent on b"; return 1; }
			sleep 1
		done
		;;
	*)
		return 1
		;;
	esac
	topo_rx_cpu || return 1
	topo_set_mtu || return 1
	# The path works: ARP resolved and a TCP connection through it.
	topo_check
}

# RX_CPU "sender" (default): a veth delivers a packet to its peer in the
# sender's softirq, so the receiving end's protocol work (TCP's, and an
# RNIC's placement) runs on the sending end's vCPU. RX_CPU "own": receive
# packet steering moves it to the receiving end's vCPU (S_CPU for bvs,
# C_CPU for bvc), as if each end were a host of its own with its NIC's
# interrupt on its CPU. The same for every system.
RX_CPU=sender
topo_rx_cpu() {
	[ "$RX_CPU" = own ] || return 0
	if ! "${S_NS[@]}" sh -c "printf %x $((1 << S_CPU)) >/sys/class/net/bvs/queues/rx-0/rps_cpus" ||
		! "${C_NS[@]}" sh -c "printf %x $((1 << C_CPU)) >/sys/class/net/bvc/queues/rx-0/rps_cpus"; then
		log "topology: cannot steer receive work (rps_cpus)"
		return 1
	fi
}

# BENCH_MTU (run's --mtu): the MTU of the path's netdevs, both ends'.
# Not on the loop path, whose packets take lo, not the dummy.
BENCH_MTU=
topo_set_mtu() {
	[ -n "$BENCH_MTU" ] || return 0
	if [ "$TOPO_RX_DEV" = lo ]; then
		log "topology loop: --mtu does not apply (its packets take lo)"
		return 1
	fi
	if ! "${S_NS[@]}" ip link set "$NET_S" mtu "$BENCH_MTU" ||
		! "${C_NS[@]}" ip link set "$NET_C" mtu "$BENCH_MTU"; then
		log "topology: cannot set MTU $BENCH_MTU"
		return 1
	fi
}
# topo_mtu: the MTU the client's packets take, as the run used it.
topo_mtu() {
	local d=$NET_C
	[ "$TOPO_RX_DEV" = lo ] && d=lo
	"${C_NS[@]}" cat "/sys/class/net/$d/mtu" 2>/dev/null
}

# Proves that traffic from C_ADDR to S_ADDR takes the path: crosses the
# veth pair, or the loopback on the loop path.
topo_check() {
	local before after
	before=$(topo_rx_packets)
	"${S_NS[@]}" timeout 10 "$BENCH_BIN/tcp_pp" server -B $S_ADDR -p 5999 \
		-t 10 >/dev/null 2>&1 &
	wait_listen 5999 "" /dev/null 5 ||
		{ log "topology: nothing listens on $S_ADDR:5999"; return 1; }
	"${C_NS[@]}" timeout 10 "$BENCH_BIN/tcp_pp" pingpong -c $S_ADDR \
		-p 5999 -s 64 -n 100 -t 10 >/dev/null 2>&1 ||
		{ log "topology: no TCP ping-pong through the pair"; wait; return 1; }
	wait
	after=$(topo_rx_packets)
	if [ $((after - before)) -lt 100 ]; then
		log "topology: the ping-pong did not cross $TOPO_RX_DEV ($before -> $after packets)"
		return 1
	fi
}

topo_rx_packets() { "${S_NS[@]}" cat "/sys/class/net/$TOPO_RX_DEV/statistics/rx_packets"; }

topo_down() {
	case $1 in
	local)
		ip rule add pref 0 lookup local 2>/dev/null
		local p
		for p in 1000 100 101 102 103 110 111; do
			ip rule del pref $p 2>/dev/null
		done
		ip route flush table 110 2>/dev/null
		ip route flush table 111 2>/dev/null
		ip link del bvs 2>/dev/null
		;;
	netns)
		ip netns del bench_s 2>/dev/null
		ip netns del bench_c 2>/dev/null
		;;
	loop)
		ip link del bvl 2>/dev/null
		# shellcheck disable=SC2034 # NET_S, NET_C: read by systems.sh
		C_ADDR=198.51.100.2 NET_S=bvs NET_C=bvc TOPO_RX_DEV=bvs
		;;
	hosts)
		# the agent on b ends (even if topo_up did not get that far);
		# then this host's address goes
		"${BASH_SOURCE[0]%/*}/remote" __quit__ >/dev/null 2>&1
		ip addr flush dev eth0 2>/dev/null
		# shellcheck disable=SC2034 # NET_S, NET_C: read by systems.sh
		S_ADDR=198.51.100.1 C_ADDR=198.51.100.2 NET_S=bvs NET_C=bvc TOPO_RX_DEV=bvs
		;;
	esac
	S_NS=() C_NS=() S_REMOTE=()
}

# --- logging and results ----------------------------------------------------

log() { printf 'bench: %s\n' "$*"; }

# json_str TEXT: TEXT as a JSON string (no control characters survive).
json_str() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\037')"
}

# emit SYSTEM CRC TEST SIZE REP METRIC VALUE
emit() {
	case $7 in
	'' | *[!0-9.eE+-]*) emit_error "$1" "$2" "$3" "$4" "$5" "$6: not a number: $7"; return ;;
	esac
	printf '{"system":%s,"crc":%s,"test":%s,"size":%s,"rep":%s,"metric":%s,"value":%s}\n' \
		"$(json_str "$1")" "$(json_str "$2")" "$(json_str "$3")" "$4" "$5" \
		"$(json_str "$6")" "$7" >>"$OUT/raw.jsonl"
}

# emit_error SYSTEM CRC TEST SIZE REP MESSAGE
emit_error() {
	printf '{"system":%s,"crc":%s,"test":%s,"size":%s,"rep":%s,"error":%s}\n' \
		"$(json_str "$1")" "$(json_str "$2")" "$(json_str "$3")" "$4" "$5" \
		"$(json_str "$6")" >>"$OUT/raw.jsonl"
	log "FAILED $1 crc=$2 $3 size=$4 rep=$5: $6"
}

# --- CPU accounting ---------------------------------------------------------
#
# /proc/stat's first line, in USER_HZ ticks: user nice system idle iowait
# irq softirq. cpu_mark sets CPU0 (system+softirq) and CPU0_USER; cpu_since
# sets CPU_SYS and CPU_USER, in seconds since the mark.
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)

cpu_read() { awk '$1 == "cpu" { print $4 + $8, $2 + $3; exit }' /proc/stat; }
cpu_mark() { read -r CPU0 CPU0_USER <<<"$(cpu_read)"; }
# shellcheck disable=SC2034 # CPU_SYS, CPU_USER are for the caller
cpu_since() {
	local s u
	read -r s u <<<"$(cpu_read)"
	CPU_SYS=$(awk -v a="$CPU0" -v b="$s" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')
	CPU_USER=$(awk -v a="$CPU0_USER" -v b="$u" -v hz="$HZ" 'BEGIN { printf "%.2f", (b - a) / hz }')
}

# --- a server and a client under time limits --------------------------------

PORT=20000
# next_port: a port of its own for every run, so that no run meets another's
# TIME_WAIT or a late server.
next_port() { PORT=$((PORT + 1)); }

# listening PORT: a TCP socket or an RDMA CM ID listens on PORT on the
# server side (an RDMA CM listener over RoCE has no TCP socket). With
# LISTEN_TCP=1 (the iWARP systems) only the TCP socket counts: the RDMA CM
# shows its ID listening just before the driver's socket exists, and a
# client that connects in between is refused.
LISTEN_TCP=0
listening() {
	"${S_NS[@]}" ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
	[ "$LISTEN_TCP" = 1 ] && return 1
	"${S_NS[@]}" rdma resource show cm_id 2>/dev/null |
		grep -Eq "state LISTEN .*src-addr [^ ]*:$1( |\$)"
}

# wait_listen PORT REGEX FILE SECONDS: something listens on PORT on the
# server side, or the server's output FILE has a line matching REGEX (a
# tool that says when it listens).
wait_listen() {
	local port=$1 re=$2 file=$3 tries=$(($4 * 10))
	while [ "$tries" -gt 0 ]; do
		listening "$port" && return 0
		if [ -n "$re" ] && grep -Eq -- "$re" "$file" 2>/dev/null; then
			return 0
		fi
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

# The guest's TSCs are not synchronized between vCPUs (the kernel says so
# and uses the HPET), so a process that reads the cycle counter, as perftest
# does, gets garbage when it moves to another vCPU. Every server therefore
# runs on vCPU S_CPU and every client on C_CPU, for every system alike.
S_CPU=0
C_CPU=1
[ "$(nproc)" -ge 2 ] || C_CPU=0

# PAIR_ENV: an `env VAR=VALUE...` prefix for both sides' commands (before
# stdbuf, which adds its own LD_PRELOAD to what it finds).
PAIR_ENV=()

# pair NAME LIMIT READY-REGEX SERVER... -- CLIENT...
# Runs SERVER on the server side and, once it is ready, CLIENT on the client
# side, each under timeout(1) (LIMIT s for the client, 10 s more for the
# server), line-buffered, pinned to their vCPUs. Sets CST and SST (exit
# statuses; 124: timed out), WALL (client seconds), CPU_SYS/CPU_USER (guest
# CPU seconds while the client ran). Output in $TMPD/NAME.s and
# $TMPD/NAME.c, and the client's with each line's arrival time (stamp) in
# $TMPD/NAME.ct.
# shellcheck disable=SC2034 # WALL and SST are for the caller
pair() {
	local name=$1 limit=$2 ready=$3 srv=() spid cpid left t0
	shift 3
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	# Not through a function: the pid must be timeout's, which passes a
	# signal on to the tool.
	"${S_NS[@]}" timeout -k 5 $((limit + 10)) taskset -c "$S_CPU" \
		"${PAIR_ENV[@]}" stdbuf -oL "${srv[@]}" >"$TMPD/$name.s" 2>&1 </dev/null &
	spid=$!
	if ! wait_listen "$PORT" "$ready" "$TMPD/$name.s" 20; then
		echo "bench: the server was not ready after 20 s" >"$TMPD/$name.ct"
		CST=nolisten
	else
		cpu_mark
		t0=$(date +%s.%N)
		"${C_NS[@]}" timeout -k 5 "$limit" taskset -c "$C_CPU" \
			"$BENCH_BIN/stamp" "${PAIR_ENV[@]}" stdbuf -oL "$@" \
			>"$TMPD/$name.ct" 2>&1 </dev/null &
		cpid=$!
		wait "$cpid"
		CST=$?
		cpu_since
		WALL=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
	fi
	sed -E 's/^[0-9]+\.[0-9]+ //' "$TMPD/$name.ct" >"$TMPD/$name.c"
	# The server ends with its client; one that does not is stopped.
	left=50
	while kill -0 "$spid" 2>/dev/null && [ "$left" -gt 0 ]; do
		sleep 0.1
		left=$((left - 1))
	done
	kill "$spid" 2>/dev/null
	wait "$spid"
	SST=$?
	keep_logs "$name"
	next_port
}

# stamp_of NAME REGEX: the arrival time of the first client line matching
# REGEX (after the time stamp).
stamp_of() {
	awk -v re="$2" '{ t = $1; sub(/^[0-9.]+ /, ""); if ($0 ~ re) { print t; exit } }' \
		"$TMPD/$1.ct"
}

# why_failed NAME: one line on why run NAME gave no result.
why_failed() {
	local name=$1 tail
	case $CST in
	124 | 137) printf 'client timed out; ' ;;
	nolisten) printf 'server never listened; ' ;;
	0) ;;
	*) printf 'client exit %s; ' "$CST" ;;
	esac
	tail=$(grep -v '^[ *-]*$' "$TMPD/$name.c" 2>/dev/null | tail -n 2 | tr '\n' ' ')
	printf 'client: %s' "${tail:-(no output)}"
	tail=$(grep -Ev '^[ *-]*$|Waiting for client' "$TMPD/$name.s" 2>/dev/null |
		tail -n 1)
	[ -n "$tail" ] && printf '; server: %s' "$tail"
	printf '\n'
}

# keep_logs NAME: both sides' output, in $OUT/logs.
keep_logs() {
	mkdir -p "$OUT/logs"
	cp "$TMPD/$1.s" "$OUT/logs/$1.server.txt" 2>/dev/null
	cp "$TMPD/$1.ct" "$OUT/logs/$1.client.txt" 2>/dev/null
}

# kv FILE KEY: the value of KEY=VALUE on FILE's RESULT line.
kv() {
	sed -n 's/^RESULT //p' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
