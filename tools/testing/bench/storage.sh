# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The storage section of siw2's benchmark (tools/testing/bench/run): fio
# over NFSv4.2, over NVMe over Fabrics and over iSCSI, each carried by siw2
# (NFS over RDMA, NVMe/RDMA, iSER) and by kernel TCP (NFS over TCP,
# NVMe/TCP, iSCSI over TCP), on the run's veth path (servers on bvs,
# clients on bvc; lib.sh). Sourced, never run.
#
# storage_run REP, once per repetition after the per-system sections:
#   - siw2 devices on bvs and bvc (systems.sh's siw2_setup);
#   - nfsd exporting a tmpfs that holds one ST_MIB MiB file, listening on
#     TCP 2049 and RDMA 20049; mounted vers=4.2 with proto=rdma once per
#     siw2 CRC mode, then with proto=tcp; the fio jobs on that file;
#   - the kernel's nvmet target, one subsystem open to any host with one
#     namespace, an ST_MIB MiB file on a tmpfs of its own (nvmet sees the
#     overlay under /tmp as size 0), behind one port on S_ADDR:4420:
#     nvmet-rdma first, connected to by nvme-rdma (`nvme connect -t
#     rdma`) once per CRC mode, then the same port as nvmet-tcp, connected
#     to by nvme-tcp; the fio jobs on the namespace's block device. One
#     transport at a time: siw2's listener for nvmet-rdma holds TCP port
#     4420 on S_ADDR;
#   - a LIO target, an ST_MIB MiB ramdisk LUN behind one portal on
#     S_ADDR:3260 with iSER enabled (iwpmd maps isert's listener off LIO's
#     TCP port, as in the guest's iser suite); logged into through the
#     iser interface once per CRC mode, then through tcp; the fio jobs on
#     the raw block device;
#   - all of it torn down, siw2 and the NVMe modules unloaded.
# Both kernel ends live in the first namespace (ib_isert, ib_iser,
# nvmet-rdma and nvme-rdma make their rdma_cm IDs there only), so the
# section needs --topology local.
#
# Figures: system siw2 (CRC off, on) or tcp (CRC -), test nfs_JOB,
# nvme_JOB or iscsi_JOB, size the block size. Metrics: mib_s for the
# sequential jobs; lat_p50_us, lat_p99_us and iops for the random read.
# The latency is fio's total latency, submission to completion: libaio's
# io_submit does much of a transport's work before it returns (fio's
# slat), so the completion latency alone (clat) would leave a
# transport-dependent part out. A transport that cannot be set up gets an
# error record.

ST_MIB=128
ST_IQN=iqn.2026-11.org.example:siw2-bench
ST_NQN=nqn.2026-11.org.example:siw2-bench
ST_HOSTID=7c3e9a41-2b6d-4f08-a5e1-6d90b8c2f417
ST_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$ST_HOSTID
ST_CFS=/sys/kernel/config/nvmet
# What the NVMe part loads and the teardown unloads (nvmet, nvme_fabrics
# and nvme_core go with the last of their users).
ST_NVME_MODS=(nvmet_rdma nvmet_tcp nvme_rdma nvme_tcp)
# NVMe-oF's fio runs with its buffers in base pages, over both transports:
# with transparent huge pages (Debian's kernels: always) the block layer
# merges physically adjacent huge pages of fio's buffers into one bio_vec,
# nvme-tcp sends it as one page fragment that runs past the end of its
# huge page, and nvmet-tcp's copy out of that fragment (it arrives as sent,
# both ends being in this guest) trips hardened usercopy: a kernel BUG in
# mm/usercopy.c, seen on 6.1. prctl(PR_SET_THP_DISABLE), kept across exec
# and fork, turns them off for fio alone: python3 -c "$ST_NOTHP" CMD...
ST_NOTHP='import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(41, 1, 0, 0, 0):
    sys.exit("prctl(PR_SET_THP_DISABLE): " + os.strerror(ctypes.get_errno()))
os.execvp(sys.argv[1], sys.argv[1:])'
# fio jobs: rw, block size, queue depth.
ST_JOBS=("write 1048576 16" "read 1048576 16" "randread 4096 1")
ST_PIDS=()
ST_ACTIVE=

# st_fio SYS CRC REP PROTO FILE: the fio jobs on FILE, one figure set each.
st_fio() {
	local sys=$1 crc=$2 rep=$3 proto=$4 file=$5 job rw bs qd name out
	local mib p50 p99 iops pre=()
	[ "$proto" = nvme ] && pre=(/usr/bin/python3 -c "$ST_NOTHP")
	for job in "${ST_JOBS[@]}"; do
		read -r rw bs qd <<<"$job"
		name="storage-$proto-$sys-crc$crc-$rw-r$rep"
		timeout -k 5 $((STORAGE_SECONDS + 120)) "${pre[@]}" fio --name="$rw" \
			--filename="$file" --size="${ST_MIB}M" --rw="$rw" \
			--bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 \
			--time_based --runtime="$STORAGE_SECONDS" --lat_percentiles=1 \
			--output-format=json --output="$TMPD/$name.json" \
			>"$TMPD/$name.log" 2>&1
		mkdir -p "$OUT/logs"
		cat "$TMPD/$name.log" "$TMPD/$name.json" >"$OUT/logs/$name.txt" 2>/dev/null
		# MiB/s, p50 and p99 latency (us), IOPS.
		if ! out=$(/usr/bin/python3 - "$TMPD/$name.json" "${rw#rand}" 2>&1 <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
j = json.JSONDecoder().raw_decode(t[t.index("{"):])[0]["jobs"][0]
s = j[sys.argv[2]]
if j.get("error") or not s["io_bytes"]:
    sys.exit("fio error %s, %s bytes" % (j.get("error"), s["io_bytes"]))
p = s["lat_ns"]["percentile"]
print("%.2f %.2f %.2f %.1f" % (s["bw_bytes"] / 1048576.0,
      p["50.000000"] / 1e3, p["99.000000"] / 1e3, s["iops"]))
EOF
		); then
			emit_error "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" \
				"fio: $(tail -n 2 "$TMPD/$name.log" | tr '\n' ' ') $out"
			continue
		fi
		read -r mib p50 p99 iops <<<"$out"
		if [ "$rw" = randread ]; then
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" lat_p50_us "$p50"
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" lat_p99_us "$p99"
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" iops "$iops"
		else
			emit "$sys" "$crc" "${proto}_$rw" "$bs" "$rep" mib_s "$mib"
		fi
		log "storage: $proto over $sys (CRC $crc) $rw $bs B QD$qd: $mib MiB/s, p50 $p50 us, p99 $p99 us"
	done
}

# st_error SYS CRC REP PROTO MESSAGE: one error record per job.
st_error() {
	local job rw bs
	for job in "${ST_JOBS[@]}"; do
		read -r rw bs _ <<<"$job"
		emit_error "$1" "$2" "${4}_$rw" "$bs" "$3" "$5"
	done
}

st_crc() {
	case $1 in
	on) siw2_set mpa_crc Y ;;
	off) siw2_set mpa_crc N ;;
	esac
}

# st_daemon NAME ARG...: starts a daemon that forks, remembers its pid.
st_daemon() {
	local pid
	"$@" || return 1
	pid=$(pgrep -nx "${1##*/}") || return 1
	ST_PIDS+=("$pid")
}

# --- NFS ---------------------------------------------------------------------

st_nfs_start() {
	mkdir -p "$TMPD/export" "$TMPD/mnt" /var/lib/nfs/v4recovery &&
	mount -t tmpfs -o size=$((ST_MIB + 32))m tmpfs "$TMPD/export" &&
	head -c $((ST_MIB << 20)) /dev/zero >"$TMPD/export/fio.dat" &&
	{ mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd; } &&
	echo "$TMPD/export ${S_ADDR%.*}.0/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" \
		>/etc/exports &&
	st_daemon rpcbind -w &&
	exportfs -ra &&
	st_daemon rpc.mountd --no-udp &&
	rpc.nfsd --no-udp --grace-time 10 --lease-time 10 4 &&
	echo "rdma 20049" >/proc/fs/nfsd/portlist &&
	# NFSv4 opens wait for the end of the grace period.
	sleep 11
}

st_nfs_stop() {
	umount "$TMPD/mnt" 2>/dev/null || umount -l "$TMPD/mnt" 2>/dev/null
	rpc.nfsd 0 2>/dev/null
	exportfs -ua 2>/dev/null
	mountpoint -q /proc/fs/nfsd && umount /proc/fs/nfsd
	mountpoint -q "$TMPD/export" && umount "$TMPD/export"
	: >/etc/exports
}

# st_nfs SYS CRC REP PROTO(rdma|tcp)
st_nfs() {
	local sys=$1 crc=$2 rep=$3 proto=$4 port=2049 out
	[ "$proto" = rdma ] && port=20049
	if ! out=$(timeout 120 mount -t nfs -o "vers=4.2,proto=$proto,port=$port" \
		"$S_ADDR:/" "$TMPD/mnt" 2>&1); then
		st_error "$sys" "$crc" "$rep" nfs "mount proto=$proto: $out"
		return
	fi
	out=$(grep " $TMPD/mnt " /proc/mounts)
	log "storage: mounted: ${out#* }"
	if echo "$out" | grep -q "proto=$proto,"; then
		st_fio "$sys" "$crc" "$rep" nfs "$TMPD/mnt/fio.dat"
	else
		st_error "$sys" "$crc" "$rep" nfs "not mounted with proto=$proto: $out"
	fi
	timeout 60 umount "$TMPD/mnt" ||
		emit_error "$sys" "$crc" nfs_umount 0 "$rep" "umount failed"
}

# --- NVMe over Fabrics ----------------------------------------------------------

# st_nvmet_start: the subsystem, open to any host, with one namespace: an
# ST_MIB MiB file on a tmpfs of its own, through the page cache (tmpfs has
# no O_DIRECT before 6.6). The ports come and go with the transports
# (st_nvmet_port).
st_nvmet_start() {
	local s=$ST_CFS/subsystems/$ST_NQN img=$TMPD/nvmet/ns1.img
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config; } &&
	mkdir -p "$TMPD/nvmet" &&
	mount -t tmpfs -o size=$((ST_MIB + 16))m tmpfs "$TMPD/nvmet" &&
	head -c $((ST_MIB << 20)) /dev/zero >"$img" &&
	mkdir "$s" &&
	echo 1 >"$s/attr_allow_any_host" &&
	mkdir "$s/namespaces/1" &&
	echo -n "$img" >"$s/namespaces/1/device_path" &&
	echo 1 >"$s/namespaces/1/buffered_io" &&
	echo 1 >"$s/namespaces/1/enable"
}

# st_nvmet_port TRTYPE: port 1, TRTYPE (rdma or tcp) on S_ADDR:4420, with
# the subsystem behind it (linking it makes nvmet listen).
st_nvmet_port() {
	local p=$ST_CFS/ports/1
	mkdir "$p" &&
	echo "$1" >"$p/addr_trtype" &&
	echo ipv4 >"$p/addr_adrfam" &&
	echo "$S_ADDR" >"$p/addr_traddr" &&
	echo 4420 >"$p/addr_trsvcid" &&
	ln -s "$ST_CFS/subsystems/$ST_NQN" "$p/subsystems/$ST_NQN"
}

# st_nvmet_port_del: undoes st_nvmet_port; fails if the port is left.
st_nvmet_port_del() {
	local p=$ST_CFS/ports/1
	rm -f "$p/subsystems/$ST_NQN"
	rmdir "$p" 2>/dev/null
	[ ! -d "$p" ]
}

# st_nvmet_stop: undoes st_nvmet_start (and a port); fails if something
# is left.
st_nvmet_stop() {
	local s=$ST_CFS/subsystems/$ST_NQN
	st_nvmet_port_del
	[ -d "$s/namespaces/1" ] && echo 0 >"$s/namespaces/1/enable"
	rmdir "$s/namespaces/1" "$s" 2>/dev/null
	mountpoint -q "$TMPD/nvmet" && umount "$TMPD/nvmet"
	[ ! -d "$s" ] && [ ! -d "$ST_CFS/ports/1" ] &&
		! mountpoint -q "$TMPD/nvmet"
}

# st_nvme_ctrls: the host's controllers of the subsystem, e.g. nvme0.
st_nvme_ctrls() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$ST_NQN" ] &&
			echo "${c##*/}"
	done
}

# st_nvme_disk: the namespace's block device, e.g. nvme0n1: with native
# multipath the subsystem's head, not a path's hidden nvme0c0n1.
st_nvme_disk() {
	local b
	for b in /sys/block/nvme*; do
		case ${b##*/} in nvme*c*) continue ;; esac
		if [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$ST_NQN" ]; then
			echo "${b##*/}"
			return
		fi
	done
}

st_nvme_disconnect() {
	local tries=200
	[ -n "$(st_nvme_ctrls)" ] || return 0
	timeout 60 nvme disconnect -n "$ST_NQN" >/dev/null 2>&1
	while [ -n "$(st_nvme_ctrls)" ] && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ -z "$(st_nvme_ctrls)" ]
}

# st_nvme SYS CRC REP TRTYPE(rdma|tcp): the host connected through TRTYPE
# to the target's port (which has that transport), the fio jobs on the
# namespace. A short controller loss timeout: a lost connection fails the
# I/O in time instead of holding fio for nvme's default 10 minutes.
st_nvme() {
	local sys=$1 crc=$2 rep=$3 tr=$4 out c dev tries=300
	if ! out=$(timeout 120 nvme connect -t "$tr" -a "$S_ADDR" -s 4420 \
		-n "$ST_NQN" --hostnqn="$ST_HOSTNQN" --hostid="$ST_HOSTID" \
		--ctrl-loss-tmo=30 2>&1); then
		st_error "$sys" "$crc" "$rep" nvme "nvme connect -t $tr: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		st_nvme_disconnect
		return
	fi
	while { [ -z "$(st_nvme_disk)" ] || [ ! -b "/dev/$(st_nvme_disk)" ]; } &&
		[ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	c=$(st_nvme_ctrls | head -n 1)
	dev=$(st_nvme_disk)
	out="$(cat "/sys/class/nvme/$c/transport" 2>&1) $(cat "/sys/class/nvme/$c/address" 2>&1)"
	log "storage: nvme controller $c: $out, namespace ${dev:-none}"
	[ "$tr" = rdma ] &&
		log "storage: QPs: $(rdma res show qp 2>&1 | awk '{ print $2 }' | sort | uniq -c | tr -s ' \n' ' ')"
	if [ -z "$c" ] || [ "${out%% *}" != "$tr" ]; then
		st_error "$sys" "$crc" "$rep" nvme "no $tr controller: ${c:-none} $out"
	elif [ -z "$dev" ] || [ ! -b "/dev/$dev" ]; then
		st_error "$sys" "$crc" "$rep" nvme "no block device for the namespace after connect"
	else
		st_fio "$sys" "$crc" "$rep" nvme "/dev/$dev"
	fi
	st_nvme_disconnect ||
		emit_error "$sys" "$crc" nvme_disconnect 0 "$rep" "the controller did not go away"
}

# st_nvme_all REP RDMA CRC...: the target; its port over siw2 for each CRC
# mode when RDMA is 1 (siw2 is up), then over TCP; the target removed.
st_nvme_all() {
	local rep=$1 rdma=$2 crc
	shift 2
	if ! st_nvmet_start >"$TMPD/storage.log" 2>&1; then
		if [ "$rdma" = 1 ]; then
			for crc; do
				st_error siw2 "$crc" "$rep" nvme "nvmet setup: $(st_why)"
			done
		fi
		st_error tcp - "$rep" nvme "nvmet setup: $(st_why)"
		st_nvmet_stop >/dev/null 2>&1
		return
	fi
	if [ "$rdma" = 1 ]; then
		if st_nvmet_port rdma >"$TMPD/storage.log" 2>&1; then
			for crc; do
				st_crc "$crc"
				st_nvme siw2 "$crc" "$rep" rdma
			done
		else
			for crc; do
				st_error siw2 "$crc" "$rep" nvme "nvmet-rdma port on $S_ADDR:4420: $(st_why)"
			done
		fi
		st_nvmet_port_del >"$TMPD/storage.log" 2>&1
	fi
	if st_nvmet_port tcp >"$TMPD/storage.log" 2>&1; then
		st_nvme tcp - "$rep" tcp
	else
		st_error tcp - "$rep" nvme "nvmet-tcp port on $S_ADDR:4420: $(st_why)"
	fi
	st_nvmet_stop >"$TMPD/storage.log" 2>&1 ||
		emit_error storage - nvme_teardown 0 "$rep" "nvmet left something: $(st_why)"
}

# --- iSCSI ---------------------------------------------------------------------

# The LIO target: tools/testing/guest/lio.sh.
st_target_start() {
	{ mountpoint -q /sys/kernel/config ||
		mount -t configfs configfs /sys/kernel/config; } &&
	lio_start "$ST_IQN" "$S_ADDR" "$ST_MIB" bench
}

st_target_stop() { lio_stop "$ST_IQN" "$S_ADDR" bench; }

st_iscsi_logout() {
	timeout 60 iscsiadm -m node -T "$ST_IQN" -p "$S_ADDR:3260" -u >/dev/null 2>&1
	timeout 30 iscsiadm -m node -o delete >/dev/null 2>&1
	local tries=200
	while iscsiadm -m session >/dev/null 2>&1 && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	[ $tries -gt 0 ]
}

# st_iscsi SYS CRC REP IFACE(iser|default)
st_iscsi() {
	local sys=$1 crc=$2 rep=$3 iface=$4 tr=tcp out dev tries=300
	[ "$iface" = iser ] && tr=iser
	if ! out=$(timeout 60 iscsiadm -m discovery -t st -p "$S_ADDR:3260" -I "$iface" 2>&1 &&
		timeout 120 iscsiadm -m node -T "$ST_IQN" -p "$S_ADDR:3260" -I "$iface" --login 2>&1); then
		st_error "$sys" "$crc" "$rep" iscsi "login through $iface: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
		st_iscsi_logout
		return
	fi
	while { [ -z "$(lio_lun)" ] || [ ! -b "/dev/$(lio_lun)" ]; } && [ $tries -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	dev=$(lio_lun)
	if ! iscsiadm -m session 2>/dev/null | grep -q "^$tr: .*$S_ADDR:3260"; then
		st_error "$sys" "$crc" "$rep" iscsi "no $tr session: $(iscsiadm -m session 2>&1 | tr '\n' ' ')"
	elif [ -z "$dev" ] || [ ! -b "/dev/$dev" ]; then
		st_error "$sys" "$crc" "$rep" iscsi "no block device for the LUN after login"
	else
		st_fio "$sys" "$crc" "$rep" iscsi "/dev/$dev"
	fi
	st_iscsi_logout ||
		emit_error "$sys" "$crc" iscsi_logout 0 "$rep" "the session did not go away"
}

# --- the section -------------------------------------------------------------------

# st_teardown: undoes whatever storage_run set up; quiet, idempotent (run's
# exit trap calls it too).
st_teardown() {
	local pid
	[ -n "$ST_ACTIVE" ] || return 0
	st_nfs_stop
	st_nvme_disconnect
	st_nvmet_stop
	st_iscsi_logout
	st_target_stop
	for pid in "${ST_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	ST_PIDS=()
	modprobe -r ib_iser ib_isert rpcrdma 2>/dev/null
	modprobe -r "${ST_NVME_MODS[@]}" 2>/dev/null
	siw2_teardown
	ST_ACTIVE=
}

# st_left: what st_teardown left behind, "; " after each; nothing if
# nothing.
st_left() {
	local m
	[ -d "$LIO_CT/iscsi/$ST_IQN" ] && printf 'the LIO target; '
	[ -n "$(st_nvme_ctrls)" ] &&
		printf 'nvme controller %s; ' "$(st_nvme_ctrls | paste -sd, -)"
	[ -d "$ST_CFS/subsystems/$ST_NQN" ] && printf 'the nvmet subsystem; '
	[ -d "$ST_CFS/ports/1" ] && printf 'the nvmet port; '
	awk -v d=" $TMPD/" 'index($0, d) { printf "a mount on %s; ", $2 }' /proc/mounts
	for m in siw2 "${ST_NVME_MODS[@]}" nvmet; do
		grep -q "^$m " /proc/modules && printf 'module %s; ' "$m"
	done
}

# st_why: the last lines of a step's output, on one line.
st_why() { tail -n 3 "$TMPD/storage.log" | tr '\n' ' '; }

# storage_run REP TOPOLOGY CRC...: the section, siw2 with each CRC mode,
# then TCP.
# State-changing steps run in this shell (ST_PIDS), their output to a log.
storage_run() {
	local rep=$1 crc t0=$SECONDS tool rdma=1 why='' nvme_why='' left
	local slog=$TMPD/storage.log
	shift
	log "=== storage, repetition $rep/$REPS"
	[ "$1" = local ] ||
		why="the storage section needs --topology local"
	for tool in fio iscsiadm iscsid iwpmd rpc.nfsd rpc.mountd rpcbind exportfs mount.nfs; do
		[ -z "$why" ] && ! command -v $tool >/dev/null && why="no $tool in the guest"
	done
	# LIO keeps its configuration database there.
	mkdir -p /etc/target
	[ -z "$why" ] && ! modprobe -a nfsd rpcrdma ib_isert ib_iser sd_mod >"$slog" 2>&1 &&
		why="modprobe: $(st_why)"
	if [ -n "$why" ]; then
		st_error siw2 - "$rep" nfs "$why"
		st_error siw2 - "$rep" nvme "$why"
		st_error siw2 - "$rep" iscsi "$why"
		return
	fi
	# NVMe-oF alone goes without when nvme-cli or its modules are missing.
	if ! command -v nvme >/dev/null; then
		nvme_why="no nvme (nvme-cli) in the guest"
	elif ! modprobe -a "${ST_NVME_MODS[@]}" >"$slog" 2>&1; then
		nvme_why="modprobe: $(st_why)"
	fi
	shift
	ST_ACTIVE=1
	if ! siw2_setup "$1" >"$slog" 2>&1; then
		emit_error siw2 "$1" storage_setup 0 "$rep" "siw2 setup failed: $(st_why)"
		rdma=0
	fi

	if st_nfs_start >"$slog" 2>&1; then
		if [ $rdma = 1 ]; then
			for crc; do
				st_crc "$crc"
				st_nfs siw2 "$crc" "$rep" rdma
			done
		fi
		st_nfs tcp - "$rep" tcp
	else
		st_error tcp - "$rep" nfs "nfsd setup: $(st_why)"
	fi
	st_nfs_stop

	# NVMe-oF before iSCSI: without iwpmd and port mapping.
	if [ -n "$nvme_why" ]; then
		st_error siw2 - "$rep" nvme "$nvme_why"
	else
		st_nvme_all "$rep" "$rdma" "$@"
	fi

	# iSER needs iwpmd and port mapping on both devices before isert
	# listens (see the guest's iser suite).
	mkdir -p /run/lock/iscsi
	if [ $rdma = 1 ] && ! { st_daemon iwpmd &&
		echo 1 >/sys/class/infiniband/siw2_bs/siw2/port_map &&
		echo 1 >/sys/class/infiniband/siw2_bc/siw2/port_map; } >"$slog" 2>&1; then
		emit_error siw2 - storage_setup 0 "$rep" "iwpmd or port_map: $(st_why)"
		rdma=0
	fi
	if { st_target_start && st_daemon iscsid; } >"$slog" 2>&1; then
		if [ $rdma = 1 ]; then
			for crc; do
				st_crc "$crc"
				st_iscsi siw2 "$crc" "$rep" iser
			done
		fi
		st_iscsi tcp - "$rep" default
	else
		st_error tcp - "$rep" iscsi "target or iscsid setup: $(st_why)"
	fi

	st_teardown >"$slog" 2>&1
	left=$(st_left)
	[ -n "$left" ] &&
		emit_error storage - teardown 0 "$rep" "teardown left ${left%; }: $(st_why)"
	log "storage: $((SECONDS - t0)) s"
}
