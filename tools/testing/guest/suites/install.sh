#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (make deb, debian/) installed the way an
# administrator installs them, in this guest with /usr made writable (an
# overlay over the host's; /etc, /var and the running kernel's modules
# have theirs already) and no network: dpkg -i of siw2-dkms and libsiw2
# builds the module with DKMS, modprobe loads it from the DKMS tree,
# ibv_devices and rping -V between two namespaces go through the
# installed provider with no environment variable, siw2-link@.service's
# commands create and remove a device, and dpkg --purge leaves none of
# the files the packages installed. Then a siw2-dkms whose module does
# not compile: DKMS fails with the compiler's message in its log, and
# nothing of it stays installed.
#
# The packages come from the host (make deb, which make check runs
# before the guests). The new /usr overlay hides vm-run's own siw2.ko
# (in an overlay of the running kernel's module tree, below /usr), so
# that only the DKMS build can be loaded; the end of the suite brings
# vm-run's module and provider back for the suites after it.
#
# DKMS compiles the module inside this TCG guest, for the running kernel
# and (on 6.1) for the newest, 6.12: five minutes of compiling each. The
# host fills a compiler cache with the same build first (scripts/
# deb-ccache), and DKMS here runs with Debian's own switch for it
# (DEBIAN_KERNEL_USE_CCACHE, which the kernel headers' .kernelvariables
# read), so that it takes the objects of the package's sources from that
# cache; make, kbuild, modpost, DKMS and dpkg run as they would anywhere.
# The broken package's source misses the cache and is compiled for real.
# Without the cache (no ccache or not root on the host) the suite still
# passes, in about 540 s.
. "$(dirname "$0")/../lib.sh"

kver=$(uname -r)
kre=${kver//+/\\+}	# as a regex (Debian's 6.12 has a +)
debs=$T_TOP/.build/deb
tmp=$(mktemp -d)
ov=/run/siw2-install
unit=$T_TOP/userspace/systemd/siw2-link@.service
A=198.51.100.1
drv=/etc/libibverbs.d/siw2.driver

cleanup() {
	reap 0
	ip netns del in1 2>/dev/null
	ip netns del in2 2>/dev/null
	modprobe -r siw2 2>/dev/null
	dpkg --purge siw2-dkms libsiw2 >/dev/null 2>&1
	# The suites after this one want vm-run's module and provider back.
	mountpoint -q /usr && umount -l /usr
	[ -f "$tmp/siw2.driver" ] && cp "$tmp/siw2.driver" "$drv"
	rm -rf "$tmp"
}
trap cleanup EXIT

# first PATH...: the first of the PATHs (a glob's expansion) that exists.
first() {
	local f
	for f in "$@"; do
		[ -e "$f" ] && { echo "$f"; return; }
	done
}
dkms_deb=$(first "$debs"/siw2-dkms_*_all.deb)
lib_deb=$(first "$debs"/libsiw2_*_amd64.deb)
if [ -z "$dkms_deb" ] || [ -z "$lib_deb" ]; then
	t_fail "the packages are built" "none in $debs: run make deb on the host"
	t_done
	exit
fi
for tool in dpkg dkms rping ibv_devices; do
	if ! command -v "$tool" >/dev/null; then
		t_fail "tools present" "no $tool"
		t_done
		exit
	fi
done

# /usr writable: the packages install into /usr/src, /usr/lib (which
# /lib is on Debian 12) and /usr/share.
mkdir -p "$ov/upper" "$ov/work"
t_ok "/usr is writable for dpkg (an overlay)" \
	mount -t overlay overlay -o "lowerdir=/usr,upperdir=$ov/upper,workdir=$ov/work" /usr
modprobe -r siw2 2>/dev/null
# vm-run registered the build tree's provider; the package brings its own.
[ -f "$drv" ] && mv "$drv" "$tmp/siw2.driver"
unset IBV_CONFIG_DIR RDMAV_DRIVERS

# dpkg and DKMS run as from an administrator's root shell, with none of
# vm-run's variables, except SIW2_TOP pointing where there is nothing: a
# variable of that name in someone's environment must not redirect the
# module's build away from the package's sources (drivers/siw2/Kbuild
# takes it from make's command line only).
cc_env=()
if [ -d "${SIW2_CACHE:-}/dkms-ccache" ] && command -v ccache >/dev/null; then
	cp -a "$SIW2_CACHE/dkms-ccache" "$tmp/ccache"
	cc_env=(DEBIAN_KERNEL_USE_CCACHE=1 "CCACHE_DIR=$tmp/ccache")
	env CCACHE_DIR="$tmp/ccache" ccache -z >/dev/null
fi
admin() {
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C \
		SIW2_TOP=/nonexistent "${cc_env[@]}" "$@"
}
# ccache_said: the compiler cache's hits and misses since the last call.
ccache_said() {
	[ ${#cc_env[@]} = 0 ] && { echo "no compiler cache"; return; }
	env CCACHE_DIR="$tmp/ccache" ccache --print-stats |
		awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ { h += $2 }
			$1 == "cache_miss" { m = $2 } END { printf "compiler cache: %d hits, %d misses", h, m }'
	env CCACHE_DIR="$tmp/ccache" ccache -z >/dev/null
}

# --- install
t0=$SECONDS
out=$(admin dpkg -i "$dkms_deb" "$lib_deb" 2>&1)
st=$?
t_log "dpkg -i of both: $((SECONDS - t0)) s, $(ccache_said)"
t_eq "dpkg -i siw2-dkms libsiw2 succeeds" 0 "$st"
[ "$st" = 0 ] || printf '%s\n' "$out" | tail -n 20
t_match "dkms status: siw2 installed for the running kernel" \
	"^siw2/[0-9.]+, $kre, [a-z0-9_]+: installed" "$(dkms status siw2)"
t_match "modinfo -n siw2 points into the DKMS tree" \
	"^/lib/modules/$kre/updates/dkms/siw2\.ko" "$(modinfo -n siw2 2>&1)"
t_ok "modprobe siw2 loads the DKMS build" modprobe siw2
t_eq "the DKMS build is the only siw2.ko modprobe could find" \
	"$(modinfo -n siw2 2>&1)" \
	"$(find "/lib/modules/$kver" -name 'siw2.ko*' 2>/dev/null)"

# --- the installed provider, found without environment variables
ns_pair in1 v1 $A in2 v2 198.51.100.2
# The unit's own commands, for v1 in in1 (systemd is not pid 1 here).
start=$(sed -n 's/^ExecStart=//p' "$unit" | sed 's/%I/v1/g')
stop=$(sed -n 's/^ExecStop=//p' "$unit" | sed 's/%I/v1/g')
# shellcheck disable=SC2086 # the unit's command line
t_ok "siw2-link@v1.service's ExecStart creates siw2_v1" \
	ip netns exec in1 $start
ip netns exec in2 rdma link add siw2_v2 type siw2 netdev v2
t_reach in2 $A
t_match "ibv_devices lists siw2_v1 through the installed provider" \
	'siw2_v1' "$(env -u IBV_CONFIG_DIR -u RDMAV_DRIVERS ibv_devices 2>&1)"
t_nomatch "no provider warning from libibverbs" 'Warning|couldn.t load' \
	"$(ibv_devices 2>&1)"
ip netns exec in1 timeout 60 rping -s -a $A -p 7960 -C 20 -V >"$tmp/s" 2>&1 &
t_listening in1 7960
t_ok "rping -V x20 between two namespaces through the installed provider" \
	ip netns exec in2 timeout 60 rping -c -a $A -p 7960 -C 20 -V
reap 20
# shellcheck disable=SC2086
t_ok "siw2-link@v1.service's ExecStop removes siw2_v1" \
	ip netns exec in1 $stop
t_eq "siw2_v1 is gone" "" "$(rdma link show | grep siw2_v1)"
ip netns exec in2 rdma link delete siw2_v2
ip netns del in1
ip netns del in2

# --- purge
files=$(dpkg -L siw2-dkms libsiw2 2>/dev/null | sort -u)
modprobe -r siw2
t0=$SECONDS
t_ok "dpkg --purge siw2-dkms libsiw2" admin dpkg --purge siw2-dkms libsiw2
t_log "dpkg --purge: $((SECONDS - t0)) s"
left=()
while IFS= read -r f; do
	[ -n "$f" ] && [ -e "$f" ] && [ ! -d "$f" ] && left+=("$f")
done <<<"$files"
for f in /lib/modules/*/updates/dkms/siw2.ko* /var/lib/dkms/siw2 \
	/usr/src/siw2-*; do
	[ -e "$f" ] && left+=("$f")
done
if [ ${#left[@]} = 0 ]; then
	t_pass "purge leaves none of the $(grep -c . <<<"$files") files, no module, no DKMS tree"
else
	t_fail "purge leaves none of the files, no module, no DKMS tree" "${left[@]}"
fi

# --- a module that does not compile
broken=$tmp/broken
dpkg-deb -R "$dkms_deb" "$broken"
src=$(first "$broken"/usr/src/siw2-*)
echo '#error siw2 broken on purpose' >>"$src/drivers/siw2/main.c"
dpkg-deb -b "$broken" "$tmp/siw2-dkms-broken.deb" >/dev/null
out=$(admin dpkg -i "$tmp/siw2-dkms-broken.deb" 2>&1)
t_log "dpkg -i of the broken package: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
t_log "the broken package's build: $(ccache_said)"
log=$(first /var/lib/dkms/siw2/*/build/make.log)
t_match "the broken build fails with the compiler's message in DKMS's log" \
	'error: #error siw2 broken on purpose' "$(cat "$log" 2>/dev/null)"
t_eq "no siw2.ko was installed for any kernel" "" \
	"$(first /lib/modules/*/updates/dkms/siw2.ko*)"
admin dpkg --purge siw2-dkms >/dev/null 2>&1
t_eq "purged, nothing of it stays" "" \
	"$(first /usr/src/siw2-* /var/lib/dkms/siw2)"
t_done
