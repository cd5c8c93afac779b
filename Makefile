# SPDX-License-Identifier: GPL-2.0
#
# siw2: build the kernel module for one or more kernels, the rdma-core
# provider, and run the tests. `make help` lists the targets.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
SIW2_CACHE ?= $(HOME)/.cache/siw2
export SIW2_CACHE

# Kernels to build for: KVER=... picks one; otherwise the running kernel if
# its headers are installed, else every kernel whose headers are installed.
RUNNING := $(shell uname -r)
ifdef KVER
KVERS := $(KVER)
else ifneq ($(wildcard /lib/modules/$(RUNNING)/build),)
KVERS := $(RUNNING)
else
KVERS := $(patsubst /lib/modules/%/build,%,$(wildcard /lib/modules/*/build))
endif

BUILD := $(TOP)/.build
# The kernel tree to build against: KDIR=... overrides the installed
# headers, e.g. the debug kernel's build tree (vm-run --kernel debug).
kdir = $(or $(KDIR),/lib/modules/$(1)/build)
MOD_SRCS := $(wildcard $(TOP)/drivers/siw2/*.[ch]) \
	    $(TOP)/drivers/siw2/Kbuild $(TOP)/drivers/siw2/proto.mk \
	    $(wildcard $(TOP)/include/uapi/rdma/*.h)
# The kernel verbs selftest (tools/testing/guest/kmod), built beside siw2.ko
# so that vm-run installs it into the guest too.
SELFTEST := $(TOP)/tools/testing/guest/kmod
SELFTEST_SRCS := $(wildcard $(SELFTEST)/*.c) $(SELFTEST)/Kbuild

.PHONY: all modules module provider install install-module install-provider \
	deps deb check check-full check-hosts check-rdma-core check-debug debug-kernel kunit demo fuzz lint clean help vm-prereqs \
	guest-tools \
	$(addprefix module-,$(KVERS))

all: modules provider

help:
	@echo 'make            build siw2.ko for $(KVERS) and the provider'
	@echo 'make KVER=x     build for kernel x only (headers in /lib/modules/x/build)'
	@echo 'make install    install module (+depmod) and provider on this host'
	@echo 'make deps       install build and test dependencies (apt-get, root)'
	@echo 'make deb        Debian packages siw2-dkms and libsiw2 in .build/deb (lintian-checked)'
	@echo 'make demo       boot a guest, create a siw2 device, show it'
	@echo 'make check      all tests CI runs (KUnit + guest suites, both kernels)'
	@echo 'make check-full every guest suite on both kernels'
	@echo 'make check-hosts the suites of two guests (6.1, 6.12) on a wire'
	@echo 'make check-rdma-core libsiw2 for each rdma-core release tarball (host + guest)'
	@echo 'make check-debug every guest suite on the debug kernel (KASAN, lockdep, kmemleak)'
	@echo 'make debug-kernel  build that kernel (cached; ~1 h the first time)'
	@echo 'make kunit      the KUnit suites only'
	@echo 'make fuzz       run the protocol fuzzer (FUZZ_SECONDS=60)'
	@echo 'make lint       checkpatch, W=1 and sparse over the module'
	@echo 'make bench      siw2 vs upstream siw, rxe, TCP: both kernels, both paths (BENCH_ARGS=--quick; not CI)'

modules: $(addprefix module-,$(KVERS))

ifneq ($(words $(KVERS)),1)
module:
	$(error make module needs one kernel: KVER=...)
else
module: module-$(KVERS)
	@ln -sfn $(BUILD)/$(KVERS)/siw2.ko $(TOP)/drivers/siw2/siw2.ko
endif

# Each kernel builds in its own directory of links to the sources, so the
# objects of different kernels never mix and rebuilds stay incremental.
$(addprefix module-,$(KVERS)): module-%: $(MOD_SRCS) $(SELFTEST_SRCS)
	@test -d $(call kdir,$*) || { \
	  echo "siw2: no headers for kernel $* ($(call kdir,$*))." \
	       "Install linux-headers-$* or run 'make deps'." >&2; exit 1; }
	@mkdir -p $(BUILD)/$*
	@find $(BUILD)/$* -maxdepth 1 -type l -delete
	@for f in $(TOP)/drivers/siw2/*.[ch] $(TOP)/drivers/siw2/Kbuild \
		 $(TOP)/drivers/siw2/proto.mk $(TOP)/drivers/siw2/tests; do \
		ln -sfn $$f $(BUILD)/$*/; done
	$(MAKE) -C $(call kdir,$*) M=$(BUILD)/$* SIW2_TOP=$(TOP) \
		W=$(or $(W),1) $(if $(SIW2_WERROR),SIW2_WERROR=y) modules
	@mkdir -p $(BUILD)/$*-selftest
	@find $(BUILD)/$*-selftest -maxdepth 1 -type l -delete
	@for f in $(SELFTEST_SRCS); do ln -sfn $$f $(BUILD)/$*-selftest/; done
	$(MAKE) -C $(call kdir,$*) M=$(BUILD)/$*-selftest \
		W=$(or $(W),1) modules
	@cp $(BUILD)/$*-selftest/siw2_selftest.ko $(BUILD)/$*/

# RDMA_CORE=DIR builds for the rdma-core release tree DIR instead of the
# installed libibverbs (userspace/provider/Makefile).
provider:
	$(MAKE) -C $(TOP)/userspace/provider \
		$(if $(RDMA_CORE),RDMA_CORE=$(abspath $(RDMA_CORE)))

# Test programs the guest suites run (the guest sees this checkout), all
# built here with one set of flags: compiling them inside a TCG guest took
# minutes of every make check. Suites find them with t_prog (lib.sh).
GUEST_SRC := $(TOP)/tools/testing/guest/progs
GUEST_PROGS := uverbs_test limits_test cm_test peer_target uverbs_objects \
	verbsex_test post_race mw_test odp_test
GUEST_SHIMS := perftest_shim.so rping_shim.so
GUEST_TOOLS := $(addprefix $(BUILD)/guest/,$(GUEST_PROGS) $(GUEST_SHIMS))
# The installed rdma-core release, for the programs that include siw2.h.
IBV_RELEASE = $(shell $(MAKE) -s --no-print-directory -C \
	$(TOP)/userspace/provider print-release)
GUEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -I$(TOP)/include/uapi
guest_libs = $(if $(filter cm_test peer_target verbsex_test post_race mw_test odp_test,$(1)),-lrdmacm -lpthread) \
	$(if $(filter uverbs_objects,$(1)),,-libverbs)

guest-tools: $(GUEST_TOOLS)

$(addprefix $(BUILD)/guest/,$(GUEST_PROGS)): $(BUILD)/guest/%: $(GUEST_SRC)/%.c \
		$(TOP)/include/uapi/rdma/siw2-abi.h $(TOP)/userspace/provider/siw2.h
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -I$(TOP)/userspace/provider \
		-DSIW2_RDMA_CORE=$(IBV_RELEASE) -o $@ $< $(call guest_libs,$*)

$(addprefix $(BUILD)/guest/,$(GUEST_SHIMS)): $(BUILD)/guest/%.so: $(GUEST_SRC)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -shared -fPIC -o $@ $< -ldl

vm-prereqs: module provider guest-tools

install: install-module install-provider

install-module: module
	$(MAKE) -C /lib/modules/$(KVERS)/build M=$(BUILD)/$(KVERS) \
		SIW2_TOP=$(TOP) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVERS)

install-provider: provider
	$(MAKE) -C $(TOP)/userspace/provider install

deps:
	$(TOP)/scripts/deps

deb:
	$(TOP)/scripts/deb

check:
	$(TOP)/scripts/check

check-full:
	$(TOP)/scripts/check --full

# Two guests, 6.1 and 6.12, joined by a wire (scripts/vm-pair), then the
# same with their kernels swapped: the wire suite, then the reboot suite.
check-hosts:
	$(TOP)/scripts/check --hosts

# libsiw2 against each rdma-core release tarball in ../shared/rdma-core:
# built, checked and unit-tested for each on the host, then traffic
# through each in one 6.1 guest (make check runs both halves).
check-rdma-core:
	$(TOP)/scripts/check-rdma-core

# SUITES="device cm" picks suites; the default is every suite of make check.
check-debug:
	$(TOP)/scripts/check --debug $(SUITES)

debug-kernel:
	nice -n 19 $(TOP)/scripts/debug-kernel

kunit:
	$(TOP)/scripts/kunit-run

demo:
	$(TOP)/scripts/demo

# Both guest kernels, both single-guest paths, one guest each, and a
# combined report; BENCH_ARGS="--kernel 6.1 --topology local" for one.
bench:
	$(TOP)/scripts/bench --matrix $(BENCH_ARGS)

FUZZ_SECONDS ?= 60
fuzz:
	$(TOP)/scripts/fuzz-run $(FUZZ_SECONDS)

lint:
	$(TOP)/scripts/lint

clean:
	rm -rf $(BUILD) $(TOP)/drivers/siw2/siw2.ko
	$(MAKE) -C $(TOP)/userspace/provider clean
