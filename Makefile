# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# vnet: one entry point.  make | make check | make bench | make demo | make install | make uninstall | make deps
#
# BPF objects are built by clang, linked with `bpftool gen object` and turned
# into skeletons by `bpftool gen skeleton` under $(OUT) (never committed); the
# skeletons embed the objects in the binaries.

OUT        ?= build
CC         ?= gcc
CLANG      ?= clang
BPFTOOL    ?= bpftool
PREFIX     ?= /usr/local
ARCH_INC   := /usr/include/$(shell $(CC) -dumpmachine)

WARN       := -Wall -Wextra -Werror
CFLAGS     ?= -O2 -g
CFLAGS     += $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd -I$(OUT)
LDLIBS     += -lbpf -lelf -lz -lmnl
BPF_CFLAGS := -g -O2 $(WARN) -Wno-unused-parameter -target bpf -D__BPF__ -I$(ARCH_INC) -Iinclude -Ibpf

BPF_HDRS   := $(wildcard bpf/*.h) include/vnet/abi.h
VNET_BPF   := maps xdp_classify tc_classify tp_xmit
BENCH_BPF  := bench_empty

LIB_SRCS   := $(wildcard user/lib/*.c user/lib/*/*.c)
LIB_OBJS   := $(LIB_SRCS:%.c=$(OUT)/%.o)
CLI_SRCS   := $(wildcard cli/*.c cli/*/*.c)
CLI_OBJS   := $(CLI_SRCS:%.c=$(OUT)/%.o)
LIBVNET    := $(OUT)/libvnet.a
SKELS      := $(OUT)/vnet.skel.h $(OUT)/vnet_shared.skel.h $(OUT)/bench_empty.skel.h $(OUT)/xmit_dispatch.skel.h

VNETCTL    := $(OUT)/vnetctl
SELFTESTS  := $(OUT)/selftests/test_classify $(OUT)/selftests/tapwrite $(OUT)/selftests/test_policy
SELFTESTS  += $(OUT)/selftests/unixsock $(OUT)/selftests/test_notify_rule
SELFTESTS  += $(OUT)/selftests/ifmove
SELFTESTS  += $(OUT)/selftests/test_handover_record
BENCHES    := $(OUT)/bench/bench_tap $(OUT)/bench/bench_xmit_send

# the vhost-user backend library (user/vhost/) and its unit test, built
# with ASan/UBSan
VHOST_SRCS := $(wildcard user/vhost/*.c)
VHOST_OBJS := $(VHOST_SRCS:%.c=$(OUT)/%.o)
LIBVHOST   := $(OUT)/libvhost.a
SELFTESTS  += $(OUT)/selftests/vhost_unit $(OUT)/selftests/test_vhost_unit
SELFTESTS  += $(OUT)/selftests/packed_unit $(OUT)/selftests/test_packed_unit

# the userspace virtio-net frontend (plays QEMU + guest driver over
# vhost-user), built with ASan/UBSan; run.sh runs build/selftests/test_*
VUFE_SRCS  := $(wildcard selftests/frontend/*.c)
VUFE_LIB   := $(filter-out selftests/frontend/vufe_selftest%.c selftests/frontend/testpmd.c,$(VUFE_SRCS))
VUFE_HDRS  := $(wildcard selftests/frontend/*.h)
VUFE       := $(OUT)/selftests/vufe_selftest
SELFTESTS  += $(VUFE) $(OUT)/selftests/test_vufe
SANITIZE   := -fsanitize=address,undefined -fno-omit-frame-pointer

# vnetd, the vhost-user-net datapath (user/vnetd/, docs/vnetd.md): linked
# with libvnet and libvhost; its steering program (TUNSETSTEERINGEBPF) is a
# skeleton of its own.  vnetd-asan is the same daemon with ASan/UBSan for
# the datapath tests.  Test builds (-DVNET_TESTING: vnetd-asan, and
# vnetd-testing, vnetctl-testing with the production flags otherwise) have
# the test switches (user/vnetd/base/testing.c, docs/vnetd.md "Test builds");
# vnetd and vnetctl have none.
VNETD_ALL_SRCS := $(wildcard user/vnetd/*.c user/vnetd/*/*.c)
VNETD_HDRS := $(wildcard user/vnetd/*/*.h)
VNETD_SRCS := $(filter-out user/vnetd/base/testing.c,$(VNETD_ALL_SRCS))
VNETD_OBJS := $(VNETD_SRCS:%.c=$(OUT)/%.o)
VNETD      := $(OUT)/vnetd
VNETD_ASAN := $(OUT)/vnetd-asan
TESTING_CFLAGS := -DVNET_TESTING
# the files whose code differs in a test build: vnetd's, mem.c, attach.c,
# hooks.c
TESTING_LIB := user/vhost/mem.c user/lib/attach/attach.c user/lib/attach/hooks.c
TESTING_LIB_OBJS := $(filter $(OUT)/testing/user/lib/%,$(TESTING_LIB:%.c=$(OUT)/testing/%.o))
TESTING_OBJS := $(VNETD_ALL_SRCS:%.c=$(OUT)/testing/%.o) $(TESTING_LIB:%.c=$(OUT)/testing/%.o)
VNETD_TESTING := $(OUT)/vnetd-testing
VNETCTL_TESTING := $(OUT)/vnetctl-testing
STEER_SKEL := $(OUT)/steer_flow.skel.h
VNETD_LIBS := $(LDLIBS) -luring -lpthread -lseccomp

# vnetd's datapath tests (selftests/vnetd/test_vnetd_*.c, one program per
# feature, on vnetd_test.h's helpers): vufe + libbpf, ASan/UBSan; they run
# build/vnetd-asan.  The objects are built once, with ASan, under $(OUT)/asan
VNETD_TESTS := $(patsubst selftests/vnetd/%.c,$(OUT)/selftests/%,$(wildcard selftests/vnetd/test_vnetd_*.c))
SELFTESTS  += $(VNETD_TESTS)
VNETD_TEST_LIB := $(addprefix selftests/vnetd/,vnetd_util.c vnetd_fixture.c vnetd_guest.c) selftests/frontend/testpmd.c $(VUFE_LIB)
VNETD_TEST_HDRS := selftests/vnetd/vnetd_test.h selftests/test.h selftests/frames.h $(VUFE_HDRS) include/vnet/abi.h
# the soak's frontends (selftests/vnetd/test_soak.sh, make soak): many vufe
# frontends in one process, without sanitizers (it runs for minutes)
SOAK       := $(OUT)/selftests/soak
SELFTESTS  += $(SOAK)
SOAK_SECS  ?= 600
# ... and bench/bench_vnetd.sh's tools (ceiling loops, load, signal counts)
BENCH_VNETD_IO := $(OUT)/bench/bench_vnetd_io
BENCHES    += $(BENCH_VNETD_IO)
# make evidence's tables (bench/evidence.sh): medians, ratios, Welch's t
EVSTAT     := $(OUT)/bench/evstat
BENCHES    += $(EVSTAT)


# libFuzzer targets (fuzz/, docs/robustness.md): clang with the fuzzer
# runtime and ASan/UBSan.  make fuzz runs each for FUZZ_SECS seconds (and
# FUZZ_JOBS at once); make check replays their corpora (selftests/test_fuzz.sh)
FUZZ_CC     ?= $(CLANG)
FUZZ_SAN    := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(FUZZ_SAN) -Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd -Ifuzz -I$(OUT)
FUZZ_NAMES  := fuzz_vhost_user fuzz_virtq fuzz_rx fuzz_classify fuzz_config
FUZZERS     := $(FUZZ_NAMES:%=$(OUT)/fuzz/%)
FUZZ_SECS   ?= 60
FUZZ_JOBS   ?= 1
VNETD_LIB_SRCS := $(filter-out user/vnetd/main.c,$(VNETD_SRCS))

.PHONY: all check test bench evidence demo install uninstall clean deps e2e soak fuzz fuzzers fuzz-corpus fuzz-cov
all: $(VNETCTL) $(SELFTESTS) $(BENCHES) $(VNETD) $(VNETD_ASAN) $(VNETD_TESTING) $(VNETCTL_TESTING)

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/vnet.bpf.o: $(VNET_BPF:%=$(OUT)/bpf/%.bpf.o)
	$(BPFTOOL) gen object $@ $^

# the same programs built once more to be shared by every tap of a network
# namespace (bpf/maps.h: VNET_SHARED)
$(OUT)/bpf/shared/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -DVNET_SHARED -c $< -o $@

$(OUT)/vnet_shared.bpf.o: $(VNET_BPF:%=$(OUT)/bpf/shared/%.bpf.o)
	$(BPFTOOL) gen object $@ $^

$(OUT)/bench_empty.bpf.o: $(OUT)/bpf/bench_empty.bpf.o
	cp $< $@

$(EVSTAT): bench/evstat.c bench/stats.c bench/stats.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(filter %.c,$^) -o $@ -lm -lpthread

# the shared net_dev_start_xmit dispatcher: one per host, not per tap
$(OUT)/xmit_dispatch.bpf.o: $(OUT)/bpf/xmit_dispatch.bpf.o
	cp $< $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .skel.h,,$(notdir $@)) > $@.tmp && mv $@.tmp $@

$(OUT)/%.o: %.c $(SKELS) $(wildcard include/vnet/*.h user/lib/*.h user/lib/*/*.h user/vhost/*.h cli/*.h cli/*/*.h selftests/*.h selftests/bpf/*.h bench/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# vnetctl's parts are its folders (cli/exporter, cli/base): another part's
# header is included by its folder ("base/util.h"), found through -Icli
$(CLI_OBJS): CPPFLAGS += -Icli

$(LIBVNET): $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# vnetctl exporter's HTTP server: libmicrohttpd; its TLS checks and
# password cache (GnuTLS, as libmicrohttpd's TLS) and bcrypt (libxcrypt)
EXPORTER_LIBS := -lmicrohttpd -lgnutls -lcrypt
$(VNETCTL): $(CLI_OBJS) $(LIBVNET)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(EXPORTER_LIBS)

$(OUT)/selftests/%: $(OUT)/selftests/%.o $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# the BPF side's tests (selftests/bpf/): their objects under
# $(OUT)/selftests/bpf, the programs in $(OUT)/selftests with the others;
# the shared fixtures (test.h, frames.h) through -Iselftests
BPF_TEST_OBJS := $(patsubst %.c,$(OUT)/%.o,$(wildcard selftests/bpf/*.c))
$(BPF_TEST_OBJS): CPPFLAGS += -Iselftests

# tapwrite: one program from three files (selftests/bpf/tapwrite.h)
$(OUT)/selftests/tapwrite: $(addprefix $(OUT)/selftests/bpf/,tapwrite.o tapwrite_lib.o tapwrite_tcp.o) $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(OUT)/selftests/test_policy: $(OUT)/selftests/bpf/test_policy.o $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# vnetd's tests without vufe (selftests/vnetd/): their objects under
# $(OUT)/selftests/vnetd, the programs in $(OUT)/selftests
$(OUT)/selftests/vnetd/%.o: CPPFLAGS += -Iselftests
# test_notify_rule: traces through the classifier and vnetd's rule.c
$(OUT)/selftests/test_notify_rule: $(OUT)/selftests/vnetd/test_notify_rule.o $(OUT)/user/vnetd/datapath/rule.o $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
# test_handover_record: the hand-over's messages (vnetd's record.c)
$(OUT)/selftests/test_handover_record: $(OUT)/selftests/vnetd/test_handover_record.o $(OUT)/user/vnetd/handover/record.o $(LIBVNET) $(LIBVHOST)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
# test_vnetd_takeover plays a hostile old vnetd with the same record code
$(OUT)/selftests/test_vnetd_takeover: $(OUT)/user/vnetd/handover/record.o $(LIBVHOST)

# test_classify: one program from several files (selftests/bpf/classify.h)
$(OUT)/selftests/test_classify: $(patsubst %.c,$(OUT)/%.o,selftests/bpf/test_classify.c $(wildcard selftests/bpf/classify_*.c)) $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(LIBVHOST): $(VHOST_OBJS)
	rm -f $@ && $(AR) rcs $@ $^

# the vhost library's unit tests (selftests/vhost/)
$(OUT)/selftests/vhost_unit: $(wildcard selftests/vhost/vhost_unit*.c) selftests/vhost/vhost_unit.h $(VHOST_SRCS) $(wildcard user/vhost/*.h) selftests/test.h include/vnet/abi.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SANITIZE) -Iinclude -Iuser/lib -Iuser/vhost -Iselftests -I$(OUT) $(filter %.c,$^) -o $@

$(OUT)/selftests/test_vhost_unit: $(OUT)/selftests/vhost_unit
	ln -sf vhost_unit $@

$(OUT)/selftests/packed_unit: selftests/vhost/packed_unit.c selftests/vhost/packed_hostile.c selftests/vhost/packed_journal.c selftests/vhost/packed_unit.h $(VHOST_SRCS) $(wildcard user/vhost/*.h) selftests/test.h include/vnet/abi.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SANITIZE) -Iinclude -Iuser/lib -Iuser/vhost -Iselftests -I$(OUT) $(filter %.c,$^) -o $@

$(OUT)/selftests/test_packed_unit: $(OUT)/selftests/packed_unit
	ln -sf packed_unit $@

$(VUFE): $(VUFE_SRCS) $(VUFE_HDRS) selftests/test.h
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SANITIZE) -Iinclude $(filter %.c,$^) -o $@

$(OUT)/selftests/test_vufe: $(VUFE)
	ln -sf vufe_selftest $@

$(OUT)/asan/%.o: %.c $(VNETD_TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) -O2 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SANITIZE) -Iinclude -Iselftests -c $< -o $@

$(VNETD_TESTS): $(OUT)/selftests/%: $(OUT)/asan/selftests/vnetd/%.o $(VNETD_TEST_LIB:%.c=$(OUT)/asan/%.o)
	@mkdir -p $(@D)
	$(CC) $(SANITIZE) $^ -o $@ -lbpf -lz

# vufe.c without sanitizers: gcc 12 -O2 sees maybe-uninitialized false
# positives in it (descriptor ids filled by desc_get()); the ceiling loops
# must not run under ASan
BENCH_VUFE := $(VUFE_LIB:selftests/frontend/%.c=$(OUT)/bench/%.o)
$(BENCH_VUFE): $(OUT)/bench/%.o: selftests/frontend/%.c $(VUFE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Wno-maybe-uninitialized -c $< -o $@

$(BENCH_VNETD_IO): $(wildcard bench/bench_vnetd_io*.c) bench/bench_vnetd_io.h bench/stats.c bench/stats.h $(BENCH_VUFE) $(VUFE_HDRS) include/vnet/abi.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(filter %.c,$^) $(BENCH_VUFE) -o $@ -lbpf -luring -lm

$(SOAK): $(wildcard selftests/vnetd/soak*.c) selftests/vnetd/soak.h $(BENCH_VUFE) $(VUFE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Iselftests $(filter %.c,$^) $(BENCH_VUFE) -o $@

$(OUT)/steer_flow.bpf.o: $(OUT)/bpf/steer_flow.bpf.o
	cp $< $@

$(VNETD_OBJS): $(STEER_SKEL) $(VNETD_HDRS)

$(VNETD): $(VNETD_OBJS) $(LIBVNET) $(LIBVHOST)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(VNETD_LIBS)

$(VNETD_ASAN): $(VNETD_ALL_SRCS) $(VHOST_SRCS) $(LIB_SRCS) $(SKELS) $(STEER_SKEL) $(VNETD_HDRS) $(wildcard user/vhost/*.h user/lib/*.h user/lib/*/*.h include/vnet/*.h)
	@mkdir -p $(@D)
	$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(TESTING_CFLAGS) $(SANITIZE) -Iinclude -Iuser/lib -Iuser/vhost -Iuser/vnetd -I$(OUT) $(filter %.c,$^) -o $@ $(VNETD_LIBS)

$(OUT)/testing/%.o: %.c $(SKELS) $(STEER_SKEL) $(VNETD_HDRS) $(wildcard include/vnet/*.h user/lib/*.h user/lib/*/*.h user/vhost/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(TESTING_CFLAGS) -c $< -o $@

$(VNETD_TESTING): $(TESTING_OBJS) $(filter-out $(TESTING_LIB:%.c=$(OUT)/%.o),$(VHOST_OBJS) $(LIB_OBJS))
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(VNETD_LIBS)

$(VNETCTL_TESTING): $(CLI_OBJS) $(TESTING_LIB_OBJS) $(filter-out $(TESTING_LIB_OBJS:$(OUT)/testing/%=$(OUT)/%),$(LIB_OBJS))
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(EXPORTER_LIBS)

$(OUT)/bench/bench_tap: $(OUT)/bench/bench_tap.o $(OUT)/bench/bench_tap_lib.o $(OUT)/bench/bench_tap_phases.o $(OUT)/bench/bench_tap_report.o $(OUT)/bench/stats.o $(LIBVNET)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -luring -lm

# bench/bench_xmit.sh's sender: AF_PACKET on a device vnet is not on
$(OUT)/bench/bench_xmit_send: bench/bench_xmit_send.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

# --- fuzzing ------------------------------------------------------------
FUZZ_HDRS := $(wildcard fuzz/*.h) $(VNETD_HDRS) $(wildcard user/vhost/*.h user/lib/*.h user/lib/*/*.h include/vnet/*.h)

$(OUT)/fuzz/fuzz_vhost_user: fuzz/fuzz_vhost_user.c $(VHOST_SRCS) $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@

$(OUT)/fuzz/fuzz_virtq: fuzz/fuzz_virtq.c $(VHOST_SRCS) $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@

# guest RX runs in vnetd's own code (qp.c, qthread.c, rx.c, rx_inplace.c, coal.c,
# tapio.c): linked whole
$(OUT)/fuzz/fuzz_rx: fuzz/fuzz_rx.c $(VNETD_LIB_SRCS) $(VHOST_SRCS) $(LIB_SRCS) $(SKELS) $(STEER_SKEL) $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@ $(VNETD_LIBS)

$(OUT)/fuzz/fuzz_classify: fuzz/fuzz_classify.c fuzz/classify_ref.h $(SKELS) $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@ -lbpf -lelf -lz

# the config parser is vnetd's own (portcfg.c, linked in)
$(OUT)/fuzz/fuzz_config: fuzz/fuzz_config.c $(VNETD_LIB_SRCS) $(VHOST_SRCS) $(LIB_SRCS) $(SKELS) $(STEER_SKEL) $(FUZZ_HDRS)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(filter %.c,$^) -o $@ $(VNETD_LIBS)

fuzzers: $(FUZZERS)

# the seed corpora are committed; this regenerates them
fuzz-corpus:
	fuzz/gen-corpus.sh

fuzz: $(FUZZERS)
	FUZZ_SECS=$(FUZZ_SECS) FUZZ_JOBS=$(FUZZ_JOBS) fuzz/run.sh $(FUZZ_NAMES)

# line coverage per file of a corpus replay (docs/robustness.md)
fuzz-cov:
	fuzz/coverage.sh

# The test command of the README and of .ci/run.
# the fuzzers need clang's fuzzer runtime; without it test_fuzz says so.
# T=GLOB runs the tests it names (selftests/run.sh -t GLOB: make check
# T='vnetd/takeover*'), J=N up to N of the parallel programs at once (-j N)
check: all
	-$(MAKE) --no-print-directory fuzzers
	selftests/run.sh $(if $(T),-t '$(T)') $(if $(J),-j $(J))

test: check

bench: all
	bench/run.sh

# a real guest behind vnetd and behind QEMU's own tap backend, side by
# side (docs/evidence.md); not a test.  EVIDENCE_ARGS: e.g. -r 3 -t 2
evidence: all
	bench/evidence.sh $(EVIDENCE_ARGS)

# a real guest behind vnetd when QEMU is installed (scripts/demo-vm.sh
# falls back to the synthetic scripts/demo.sh, and says so, without it)
demo: all
	scripts/demo-vm.sh

# the end-to-end scenarios alone: QEMU boots Debian's kernel, whose
# virtio_net driver talks to vnetd (docs/e2e.md); make check runs them too
e2e: $(VNETCTL) $(VNETD) $(VNETD_TESTING)
	selftests/e2e/run.sh

# one vnetd, 32 ports of 2 queue pairs, vufe frontends moving traffic both
# ways for SOAK_SECS: vnetd's fds, RSS and mappings flat, every frame
# accounted for (docs/robustness.md); make check runs a short one
soak: $(VNETCTL) $(VNETD) $(SOAK)
	SOAK_SECS=$(SOAK_SECS) selftests/vnetd/test_soak.sh

# binaries, man pages, systemd units (ExecStart= naming $(PREFIX)/sbin),
# bash completion, the libvirt hook and its switch, off (docs/libvirt.md), and the operator's
# docs; `make uninstall` removes exactly these files
UNITDIR    ?= $(PREFIX)/lib/systemd/system
COMPDIR    ?= $(PREFIX)/share/bash-completion/completions
DOCDIR     ?= $(PREFIX)/share/doc/vnet
HOOKDIR    ?= /etc/libvirt/hooks/qemu.d
# the hook's switch (off as installed; docs/libvirt.md)
HOOKCONF   ?= /etc/default/vnet-hook
# the units' VNETD_OPTS (EnvironmentFile=) and an example of the ports
VNETDCONF  ?= /etc/default/vnetd
# the exporter's unit's VNET_EXPORTER_LISTEN and VNET_EXPORTER_OPTS, and an
# example of its web config (HTTPS, basic auth; docs/metrics.md)
EXPORTERCONF ?= /etc/default/vnet-exporter
CONFDIR    ?= /etc/vnet
# the alerts and the dashboard (docs/metrics.md)
DATADIR    ?= $(PREFIX)/share/vnet
UNITS      := vnetd@.service vnetd.service vnet-exporter.service
# every doc, as docs/ has them (the man pages name $(DOCDIR)/NAME.md, the
# docs link each other, history/ and evidence/), the docs' index as
# index.md and the project's README.md, its docs/ links made local
OPS_DOCS   := $(filter-out README.md,$(notdir $(wildcard docs/*.md))) \
	      $(patsubst docs/%,%,$(wildcard docs/history/*.md docs/evidence/*.png))
INSTALLED  := $(PREFIX)/sbin/vnetctl $(PREFIX)/sbin/vnetd \
	      $(PREFIX)/share/man/man8/vnetctl.8 $(PREFIX)/share/man/man8/vnetd.8 \
	      $(UNITS:%=$(UNITDIR)/%) $(COMPDIR)/vnetctl $(COMPDIR)/vnetd \
	      $(HOOKDIR)/vnet $(HOOKCONF) $(VNETDCONF) $(CONFDIR)/vnetd.conf.example \
	      $(EXPORTERCONF) $(CONFDIR)/exporter-web.yml.example \
	      $(OPS_DOCS:%=$(DOCDIR)/%) $(DOCDIR)/index.md $(DOCDIR)/README.md \
	      $(DATADIR)/prometheus/vnet.rules.yml \
	      $(DATADIR)/prometheus/vnet.rules.test.yml $(DATADIR)/grafana/vnet.json

install: $(VNETCTL) $(VNETD)
	install -D -m 0755 $(VNETCTL) $(DESTDIR)$(PREFIX)/sbin/vnetctl
	install -D -m 0755 $(VNETD) $(DESTDIR)$(PREFIX)/sbin/vnetd
	for m in vnetctl.8 vnetd.8; do \
		install -d $(DESTDIR)$(PREFIX)/share/man/man8 && \
		sed 's|/usr/share/doc/vnet|$(DOCDIR)|g' docs/$$m > $(DESTDIR)$(PREFIX)/share/man/man8/$$m && \
		chmod 0644 $(DESTDIR)$(PREFIX)/share/man/man8/$$m || exit 1; \
	done
	for u in $(UNITS); do \
		install -d $(DESTDIR)$(UNITDIR) && \
		sed 's|/usr/sbin/vnetd|$(PREFIX)/sbin/vnetd|; s|/usr/sbin/vnetctl|$(PREFIX)/sbin/vnetctl|; s|/usr/share/doc/vnet|$(DOCDIR)|' \
			systemd/$$u > $(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	install -D -m 0644 completion/vnetctl $(DESTDIR)$(COMPDIR)/vnetctl
	install -D -m 0644 completion/vnetd $(DESTDIR)$(COMPDIR)/vnetd
	install -D -m 0755 libvirt/qemu-hook $(DESTDIR)$(HOOKDIR)/vnet
	@# the operator's switch: never overwritten by a later install
	[ -e $(DESTDIR)$(HOOKCONF) ] || \
		install -D -m 0644 libvirt/vnet-hook.default $(DESTDIR)$(HOOKCONF)
	[ -e $(DESTDIR)$(VNETDCONF) ] || \
		install -D -m 0644 systemd/vnetd.default $(DESTDIR)$(VNETDCONF)
	install -D -m 0644 systemd/vnetd.conf.example $(DESTDIR)$(CONFDIR)/vnetd.conf.example
	[ -e $(DESTDIR)$(EXPORTERCONF) ] || \
		install -D -m 0644 systemd/vnet-exporter.default $(DESTDIR)$(EXPORTERCONF)
	install -D -m 0644 systemd/exporter-web.yml.example $(DESTDIR)$(CONFDIR)/exporter-web.yml.example
	install -D -m 0644 prometheus/vnet.rules.yml $(DESTDIR)$(DATADIR)/prometheus/vnet.rules.yml
	install -D -m 0644 prometheus/vnet.rules.test.yml $(DESTDIR)$(DATADIR)/prometheus/vnet.rules.test.yml
	install -D -m 0644 grafana/vnet.json $(DESTDIR)$(DATADIR)/grafana/vnet.json
	for d in $(OPS_DOCS); do \
		install -D -m 0644 docs/$$d $(DESTDIR)$(DOCDIR)/$$d || exit 1; \
	done
	@# the man pages are man pages there, not files next to the docs
	sed 's|\[\(vnet[a-z]*\)\.8\](vnet[a-z]*\.8) (`man -l docs/vnet[a-z]*\.8`)|\1(8) (`man \1`)|' \
		docs/README.md > $(DESTDIR)$(DOCDIR)/index.md
	chmod 0644 $(DESTDIR)$(DOCDIR)/index.md
	sed 's|](docs/README.md)|](index.md)|g; s|](docs/|](|g' README.md > $(DESTDIR)$(DOCDIR)/README.md
	chmod 0644 $(DESTDIR)$(DOCDIR)/README.md

uninstall:
	rm -f $(INSTALLED:%=$(DESTDIR)%)
	-rmdir $(DESTDIR)$(DOCDIR)/history $(DESTDIR)$(DOCDIR)/evidence \
		$(DESTDIR)$(DOCDIR) $(DESTDIR)$(CONFDIR) \
		$(DESTDIR)$(DATADIR)/prometheus $(DESTDIR)$(DATADIR)/grafana \
		$(DESTDIR)$(DATADIR) 2>/dev/null

# Debian 12 packages needed to build, test, benchmark and package (as root;
# scripts/bootstrap.sh without its build step).
deps:
	scripts/bootstrap.sh --no-build

clean:
	rm -rf $(OUT)
