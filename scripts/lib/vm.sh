# shellcheck shell=bash
# Host-side helpers for scripts/vm-run: kernel lookup, the cached initramfs,
# the cached KVM verdict, quoting for the guest and the kernel log scan.
# Sourced, never run.  Expects VM_SCRIPTS (the scripts/ directory) and
# VM_CACHE (a cache directory) to be set.
#
# VM_MODBASE is the root under which lib/modules/KVER lives: empty for the
# installed Debian kernels, the debug kernel's cache directory (its
# INSTALL_MOD_PATH) for --kernel debug.  Nothing here writes below it.
VM_MODBASE=${VM_MODBASE:-}

# vm_moddir KVER: the module tree of KVER on the host.
vm_moddir() {
	echo "$VM_MODBASE/lib/modules/$1"
}

# vm_modinfo KVER ARGS...: modinfo in KVER's tree, below VM_MODBASE if set.
vm_modinfo() {
	local kver=$1

	shift
	if [[ -n $VM_MODBASE ]]; then
		modinfo -b "$VM_MODBASE" -k "$kver" "$@"
	else
		modinfo -k "$kver" "$@"
	fi
}

vm_die() {
	echo "vm-run: $*" >&2
	exit 125
}

vm_note() {
	echo "vm-run: $*" >&2
}

# vm_need COMMAND PACKAGE: fail naming the Debian package that provides it.
vm_need() {
	command -v "$1" >/dev/null 2>&1 ||
		vm_die "$1 not found; install the Debian package $2 (make deps)"
}

# vm_find_kernel SPEC: SPEC is a version prefix ("6.1", "6.12") or a full
# release.  Sets VM_KERNEL (the image) and VM_KVER (its release, from the
# file name), choosing the newest match.
vm_find_kernel() {
	local spec=$1 img
	local -a imgs

	if [[ -e /boot/vmlinuz-$spec ]]; then
		imgs=("/boot/vmlinuz-$spec")
	else
		shopt -s nullglob
		imgs=("/boot/vmlinuz-$spec".*)
		shopt -u nullglob
	fi
	[[ ${#imgs[@]} -gt 0 ]] ||
		vm_die "no /boot/vmlinuz-$spec.*; install linux-image-amd64 (6.1) or linux-image-6.12-amd64 (make deps)"
	img=$(printf '%s\n' "${imgs[@]}" | sort -V | tail -n 1)
	[[ -r $img ]] || vm_die "$img is not readable"
	# shellcheck disable=SC2034 # results for the caller
	VM_KERNEL=$img
	# shellcheck disable=SC2034
	VM_KVER=${img#/boot/vmlinuz-}
	[[ -d /lib/modules/$VM_KVER/kernel ]] ||
		vm_die "/lib/modules/$VM_KVER is missing; reinstall linux-image-$VM_KVER"
}

# vm_find_debug_kernel: the kernel scripts/debug-kernel builds (building it
# first when BUILD is 1, which takes most of an hour the first time).  Sets
# VM_KERNEL, VM_KVER, VM_MODBASE and VM_KDIR (the tree to build modules
# against).
vm_find_debug_kernel() {
	local build=$1 dir

	if [[ $build = 1 ]]; then
		vm_note "checking the debug kernel (scripts/debug-kernel)"
		dir=$(nice -n 19 "$VM_SCRIPTS/debug-kernel") ||
			vm_die "scripts/debug-kernel failed"
	else
		dir=$("$VM_SCRIPTS/debug-kernel" --print) ||
			vm_die "no debug kernel built yet; run scripts/debug-kernel"
	fi
	# shellcheck disable=SC2034 # results for the caller
	VM_KERNEL=$dir/bzImage
	# shellcheck disable=SC2034
	VM_KVER=$(cat "$dir/release") || vm_die "$dir/release unreadable"
	VM_MODBASE=$dir/mods
	# shellcheck disable=SC2034
	VM_KDIR=$dir/build
	[[ -d $VM_MODBASE/lib/modules/$VM_KVER/kernel ]] ||
		vm_die "$VM_MODBASE/lib/modules/$VM_KVER is missing; rerun scripts/debug-kernel"
}

# Modules the initramfs loads: the 9p root (TESTBED.md order) and overlayfs,
# each preceded by its dependencies.  Built-in or absent ones (6.12 builds
# virtio in and folds fscache into netfs) are skipped; a missing 9p module is
# caught by the mount in the guest, which names it.
VM_INITRAMFS_MODULES=(virtio_ring virtio virtio_pci_legacy_dev
	virtio_pci_modern_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p
	overlay)

# Bump when the initramfs layout changes in a way the key cannot see.
VM_INITRAMFS_FORMAT=1

declare -A vm_mod_seen
declare -a vm_mod_order

vm_mod_add() {
	local kver=$1 name=${2//-/_} path dep

	[[ -z ${vm_mod_seen[$name]:-} ]] || return 0
	vm_mod_seen[$name]=1
	path=$(vm_modinfo "$kver" -n "$name" 2>/dev/null) || return 0
	[[ $path == /* ]] || return 0
	for dep in $(vm_modinfo "$kver" -F depends "$name" | tr ',' ' '); do
		vm_mod_add "$kver" "$dep"
	done
	vm_mod_order+=("$path")
}

# vm_initramfs_build KVER OUT: busybox-static, /init and the modules,
# decompressed (busybox insmod reads plain .ko only), as an uncompressed
# newc cpio; the kernel unpacks that faster than it would decompress it.
vm_initramfs_build() {
	local kver=$1 out=$2 stage path base i=0

	vm_need modinfo kmod
	[[ -x /bin/busybox ]] || vm_die "/bin/busybox not found; install busybox-static"
	if command -v dpkg-query >/dev/null &&
		! dpkg-query -W -f='${Status}\n' busybox-static 2>/dev/null |
		grep -q 'ok installed'; then
		vm_die "/bin/busybox is not the static one; install busybox-static"
	fi

	stage=$(mktemp -d "$VM_CACHE/initramfs.XXXXXX")
	mkdir -p "$stage"/{bin,dev,lib/modules,newroot,proc,sys}
	cp /bin/busybox "$stage/bin/busybox"
	ln -s busybox "$stage/bin/sh"
	install -m 0755 "$VM_SCRIPTS/vm/initramfs-init" "$stage/init"

	vm_mod_seen=()
	vm_mod_order=()
	for base in "${VM_INITRAMFS_MODULES[@]}"; do
		vm_mod_add "$kver" "$base"
	done
	: >"$stage/modules"
	for path in "${vm_mod_order[@]}"; do
		i=$((i + 1))
		base=$(printf '%02d-%s' "$i" "${path##*/}")
		base=${base%.xz}
		base=${base%.zst}
		case $path in
		*.ko.xz)
			vm_need xz xz-utils
			xz -dc "$path" >"$stage/lib/modules/$base"
			;;
		*.ko.zst)
			vm_need zstd zstd
			zstd -qdc "$path" >"$stage/lib/modules/$base"
			;;
		*.ko) cp "$path" "$stage/lib/modules/$base" ;;
		*) vm_die "unexpected module file $path" ;;
		esac || vm_die "cannot unpack $path"
		echo "$base" >>"$stage/modules"
	done

	(cd "$stage" && find . | LC_ALL=C sort |
		/bin/busybox cpio -o -H newc 2>/dev/null) >"$out.tmp.$$" ||
		vm_die "cpio failed"
	mv -f "$out.tmp.$$" "$out"
	rm -rf "$stage"
}

# vm_initramfs KVER: print the cached initramfs for KVER, building it when
# its inputs changed.  The key is cheap to compute on every run: the kernel
# package's modules.dep (rewritten by every package update), busybox and the
# initramfs /init.
vm_initramfs() {
	local kver=$1 key out old

	key=$({
		echo "$VM_INITRAMFS_FORMAT $kver ${VM_INITRAMFS_MODULES[*]}"
		stat -L -c '%n %s %Y' "$(vm_moddir "$kver")/modules.dep" /bin/busybox
		cat "$VM_SCRIPTS/vm/initramfs-init"
	} 2>&1 | sha256sum)
	key=${key:0:16}
	out="$VM_CACHE/initramfs-$kver-$key.cpio"
	if [[ ! -s $out ]]; then
		vm_note "building initramfs for $kver"
		for old in "$VM_CACHE/initramfs-$kver-"*.cpio; do
			[[ -e $old ]] && rm -f "$old"
		done
		vm_initramfs_build "$kver" "$out"
	fi
	echo "$out"
}

# vm_modules KVER DIR: copy the modules to install in the guest,
# .build/KVER/*.ko, to DIR/updates/, and next to them the guest tree's module
# index files (modules.dep.bin, ...) regenerated with them added.  depmod
# runs here rather than in the guest: it reads every module of the tree,
# which over 9p under TCG takes most of a minute, while here it takes
# seconds, and its output is cached until a module or the kernel package
# changes.  Leaves DIR empty when there is no module.
vm_modules() {
	local kver=$1 dir=$2 key sums out stage tree f moddir
	local -a kos

	moddir=$(vm_moddir "$kver")

	shopt -s nullglob
	kos=("$TOP/.build/$kver/"*.ko)
	shopt -u nullglob
	[[ ${#kos[@]} -gt 0 ]] || return 0
	vm_need depmod kmod

	# Hash the copies: a build running meanwhile cannot make the index
	# disagree with the modules the guest gets.
	if ! mkdir -p "$dir/updates" || ! cp "${kos[@]}" "$dir/updates/"; then
		vm_die "cannot copy ${kos[*]}"
	fi
	sums=$(cd "$dir/updates" && sha256sum -- *.ko) || vm_die "cannot read $dir/updates"
	key=$({
		echo "index-only $kver"
		stat -L -c '%n %s %Y' "$moddir/modules.dep"
		echo "$sums"
	} | sha256sum)
	key=${key:0:16}
	out="$VM_CACHE/modules-$kver-$key"
	if [[ ! -d $out ]]; then
		vm_note "depmod for $kver with ${kos[*]##*/}"
		stage=$(mktemp -d "$VM_CACHE/modules.XXXXXX")
		tree="$stage/lib/modules/$kver"
		mkdir -p "$tree"
		ln -s "$moddir/kernel" "$tree/kernel"
		ln -s "$dir/updates" "$tree/updates"
		for f in modules.order modules.builtin modules.builtin.modinfo; do
			[[ -e $moddir/$f ]] && cp "$moddir/$f" "$tree/"
		done
		depmod -b "$stage" "$kver" || vm_die "depmod for $kver failed"
		# Keep only what depmod wrote.
		rm "$tree/kernel" "$tree/updates" "$tree/modules.order" \
			"$tree/modules.builtin" "$tree/modules.builtin.modinfo" 2>/dev/null
		for f in "$VM_CACHE/modules-$kver-"*; do
			[[ -e $f ]] && rm -rf "$f"
		done
		# A parallel run may have won the race; its result is as good.
		mv -T "$tree" "$out" 2>/dev/null || [[ -d $out ]] ||
			vm_die "cannot fill $out"
		rm -rf "$stage"
	fi
	cp -r "$out/." "$dir/" || vm_die "cannot copy $out"
}

# vm_accel KERNEL INITRD: print "kvm" if a guest really boots under KVM
# here, else "tcg".  /dev/kvm may exist and answer ioctls while guests hang
# after decompression, so only a boot that reaches the initramfs counts.
# The verdict is cached per host kernel and qemu version; SIW2_ACCEL=kvm|tcg
# overrides it.
vm_accel() {
	local kernel=$1 initrd=$2 key verdict file log

	case ${SIW2_ACCEL:-} in
	kvm | tcg)
		echo "$SIW2_ACCEL"
		return
		;;
	'') ;;
	*) vm_die "SIW2_ACCEL must be kvm or tcg" ;;
	esac
	if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
		echo tcg
		return
	fi
	key="$(uname -r) $(qemu-system-x86_64 --version | head -n 1)"
	key=$(printf '%s' "$key" | sha256sum)
	file="$VM_CACHE/accel-${key:0:16}"
	if [[ -s $file ]]; then
		cat "$file"
		return
	fi

	vm_note "probing KVM (once per host kernel and qemu version, up to 25 s)"
	log=$(mktemp "$VM_CACHE/probe.XXXXXX")
	timeout -k 5 25 qemu-system-x86_64 -nodefaults -nographic -no-reboot \
		-accel kvm -cpu host -smp 1 -m 256M \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 quiet panic=-1 siw2_probe=1" \
		-serial "file:$log" </dev/null >/dev/null 2>&1
	if grep -q SIW2-PROBE-OK "$log"; then
		verdict=kvm
	else
		verdict=tcg
		vm_note "KVM does not boot a guest here; using TCG"
	fi
	rm -f "$log"
	echo "$verdict" >"$file.$$" && mv -f "$file.$$" "$file"
	echo "$verdict"
}

# vm_quote ARG: ARG as one single-quoted POSIX shell word.
vm_quote() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

# Kernel log lines that fail a run.  Matched case-sensitively, as the kernel
# prints them.
# A general protection fault counts when the kernel oopsed ("[#1]"); a
# user program's own ("traps: prog[pid] general protection fault ip:...")
# is that program's business, and its test says so.
VM_BAD_LOG='BUG:|WARNING:|Oops|general protection fault.*\[#[0-9]|KASAN|UBSAN|'
VM_BAD_LOG+='soft lockup|hard LOCKUP|blocked for more than|Kernel panic|'
# kmemleak reports as "kmemleak: N new suspected memory leaks"; its banner
# on a kernel that has it must not count, nor lockdep's ("RCU lockdep
# checking is enabled"): its reports are matched below.
VM_BAD_LOG+='suspected memory leak|unreferenced object|possible circular locking|'
VM_BAD_LOG+='rcu.*detected stall|refcount_t:|list_(add|del) corruption|'
# The debug kernel's checkers: lockdep ("WARNING: possible recursive
# locking", "inconsistent lock state"), DEBUG_OBJECTS, and kmemleak running
# out of room (it then stops tracking, so a clean report would mean nothing).
VM_BAD_LOG+='WARNING: possible|inconsistent lock state|ODEBUG:|'
VM_BAD_LOG+='kmemleak: (Memory pool empty|Cannot allocate|Kernel memory leak detector disabled)'

# vm_scan FILE WHAT: print each bad line of FILE as "WHAT line N: TEXT"
# (at most 20) and return 1 if there was one.
#
# Lines from before the kernel starts init are printed but do not count:
# neither siw2 nor anything a suite does exists yet. The debug kernel
# under TCG sometimes takes an interrupt in identify_cpu() before its
# descriptor is usable (a KASAN wild-memory-access in handle_edge_irq,
# swapper/0, right after "8254 timer not connected to IO-APIC").
#
# A lockdep report whose lock is taken in upstream siw (the interop
# suite's peer, module "siw") is upstream siw's bug, not siw2's: it is
# printed, marked, and not counted. Lockdep switches itself off after its
# first report, so the note says that the rest of the run went unchecked.
vm_scan() {
	local file=$1 what=$2 hits init peer

	init=$(tr -d '\r' <"$file" | grep -naE ' as init process' |
		head -n 1 | cut -d: -f1)
	hits=$(tr -d '\r' <"$file" | grep -naE "$VM_BAD_LOG") || return 0
	peer=$(vm_peer_lockdep "$file")
	if [ -n "$peer" ]; then
		printf '%s\n' "$hits" |
			awk -F: -v r="$peer" 'BEGIN { n = split(r, a, " ") }
				{ for (i = 1; i <= n; i += 2)
					if ($1 >= a[i] && $1 <= a[i + 1]) { print; next } }' |
			head -n 5 |
			sed "s/^\\([0-9]*\\):/vm-run: $what line \\1 (upstream siw's lockdep report, not counted): /" >&2
		vm_note "lockdep is off for the rest of this run after that report"
		hits=$(printf '%s\n' "$hits" |
			awk -F: -v r="$peer" 'BEGIN { n = split(r, a, " ") }
				{ for (i = 1; i <= n; i += 2)
					if ($1 >= a[i] && $1 <= a[i + 1]) next
				  print }')
		[ -n "$hits" ] || return 0
	fi
	if [ -n "$init" ]; then
		printf '%s\n' "$hits" | awk -F: -v n="$init" '$1 < n' |
			head -n 5 |
			sed "s/^\\([0-9]*\\):/vm-run: $what line \\1 (before init, not counted): /" >&2
		hits=$(printf '%s\n' "$hits" | awk -F: -v n="$init" '$1 > n')
		[ -n "$hits" ] || return 0
	fi
	printf '%s\n' "$hits" | head -n 20 |
		sed "s/^\\([0-9]*\\):/vm-run: $what line \\1: /" >&2
	return 1
}

# vm_peer_lockdep FILE: the line ranges ("FIRST LAST FIRST LAST ...") of the
# lockdep reports in FILE whose first lock site (the "(lock){...}, at: FN
# [MODULE]" line under the header) is in upstream siw's module. A report
# ends at its stack's </TASK>.
vm_peer_lockdep() {
	tr -d '\r' <"$1" | awk '
		function flush(last) {
			if (start && peer)
				printf "%s%d %d", (out++ ? " " : ""), start, last
			start = 0
		}
		/inconsistent lock state|WARNING: possible (circular|recursive|irq)|WARNING: (bad unlock|suspicious RCU|held lock freed|lock held when)/ {
			flush(NR - 1); start = NR; site = 0; peer = 0; next
		}
		start && !site && /\}(-\{[0-9]+:[0-9]+\})?, at: / {
			site = 1; peer = ($0 ~ / \[siw\]$/)
		}
		start && /<\/TASK>/ { flush(NR) }
		END { flush(NR); print "" }'
}

# vm_kmemleak FILE: judge the kmemleak report the guest wrote after the
# command (/sys/kernel/debug/kmemleak after two scans).  An object fails the
# run when its backtrace has a siw2 frame, or a frame in a module that is no
# longer loaded (kmemleak then prints a bare 0xffffffffc... address; the
# suites unload siw2).  Other objects are counted and left for a human: the
# core kernel and Debian's userspace leave a few of their own.  Prints the
# failing objects (at most 3) and returns 1 if there was one.
vm_kmemleak() {
	local file=$1 out

	[[ -s $file ]] || return 0
	out=$(awk '
		function flush() {
			if (obj == "")
				return
			total++
			if (obj ~ /siw2|\] 0xffffffffc[0-9a-f]+/) {
				bad++
				if (bad <= 3)
					printf "%s", obj
			}
			obj = ""
		}
		/^unreferenced object/ { flush() }
		/^unreferenced object/ || obj != "" { obj = obj $0 "\n" }
		END {
			flush()
			printf "SUMMARY %d %d\n", total, bad
		}' "$file")
	local summary=${out##*SUMMARY }
	local total=${summary%% *} bad=${summary##* }
	[[ $total -gt 0 ]] &&
		vm_note "kmemleak: $total unreferenced object(s), $bad involving siw2 or an unloaded module"
	[[ $bad -gt 0 ]] || return 0
	printf '%s' "${out%SUMMARY *}" | sed 's/^/vm-run: kmemleak: /' >&2
	return 1
}
