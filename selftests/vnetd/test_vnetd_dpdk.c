// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vnetd datapath tests: DPDK virtio-user (dpdk-testpmd) against vnetd (see vnetd_test.h) */
#include "vnetd_test.h"

/* ------------------------------------------------------------------ */
/* 7. DPDK virtio-user against vnetd                                   */
/* ------------------------------------------------------------------ */

/* testpmd as a virtio-user frontend of SOCK, forwarding mode MODE */
static int pmd_start(struct testpmd *d, const char *sock, const char *mode)
{
	char vdev[200], prefix[64], fwd[64];
	const char *app[] = {
		fwd, "--auto-start", "--disable-link-check", "--nb-cores=1",
		"--total-num-mbufs=32768", NULL,
	};

	snprintf(d->log, sizeof(d->log), "/tmp/vnet-vnetd-%d-testpmd-%s.log",
		 getpid(), mode);
	snprintf(vdev, sizeof(vdev), "net_virtio_user0,path=%s,queues=1",
		 sock);
	snprintf(prefix, sizeof(prefix), "vnetdt%d%s", getpid(), mode);
	snprintf(fwd, sizeof(fwd), "--forward-mode=%s", mode);
	return testpmd_start(d, testpmd_bin("VNET_TESTPMD"), vdev, prefix,
			     1024, app);
}

/* EOF on stdin: testpmd stops, prints its statistics and exits */
static void pmd_stop(struct testpmd *d)
{
	char why[256];

	testpmd_stop(d, why, sizeof(why));
}

/*
 * The counters before a phase (DIR's datapath stats in *D0, the tap's in
 * *L0), then testpmd started on port 0 in MODE
 */
static bool pmd_phase(struct vd *vd, struct testpmd *pmd, __u32 dir,
		      const char *mode, struct vnet_dp_stats *d0,
		      struct link_stats *l0)
{
	dps_read(&vd->port[0], dir, 0, d0);
	ns_link_stats(vd->ns, vd->port[0].tap, l0);
	return ASSERT_OK(pmd_start(pmd, vd->port[0].sock, mode),
			 "start testpmd");
}

static void dpdk_smoke(void)
{
	static __u8 f[256];
	struct vnet_dp_stats d0, d;
	struct link_stats l0, l;
	struct testpmd pmd = TESTPMD_INIT;
	long long deadline, rxp, txp;
	unsigned int i = 0, k;
	struct vd vd;
	int pfd = -1;

	vd_init(&vd, "dpdk", 1, 1);
	if (!testpmd_bin("VNET_TESTPMD")) {
		test_skip("dpdk-testpmd not installed (apt-get install dpdk-dev librte-net-virtio23 librte-mempool-ring23)");
		return;
	}
	if (!vd_up(&vd))
		goto out;

	/* guest -> tap: txonly */
	if (!pmd_phase(&vd, &pmd, VNET_DIR_TX, "txonly", &d0, &l0))
		goto out;
	deadline = now_ms() + 30000;
	do {
		nap_ms(20);
		ns_link_stats(vd.ns, vd.port[0].tap, &l);
		if (!testpmd_running(&pmd))
			break;
	} while (l.rx_packets - l0.rx_packets < 10000 && now_ms() < deadline);
	pmd_stop(&pmd);
	dps_read(&vd.port[0], VNET_DIR_TX, 0, &d);
	ns_link_stats(vd.ns, vd.port[0].tap, &l);
	txp = testpmd_stat(&pmd, "TX-packets:");
	dbg("txonly: testpmd TX-packets %lld, dp_stats tx frames %llu, tap rx_packets +%llu\n",
	    txp, (unsigned long long)(d.frames - d0.frames),
	    (unsigned long long)(l.rx_packets - l0.rx_packets));
	if (!ASSERT_GE(l.rx_packets - l0.rx_packets, 10000,
		       "txonly: tap rx_packets") ||
	    !ASSERT_GE(d.frames - d0.frames, 10000, "txonly: dp_stats tx") ||
	    !ASSERT_GT(txp, 0, "txonly: testpmd TX-packets") ||
	    !ASSERT_EQ(l.rx_packets - l0.rx_packets, d.frames - d0.frames,
		       "txonly: every frame vnetd moved is in the tap") ||
	    !ASSERT_EQ(d.frames - d0.frames, txp,
		       "txonly: every frame testpmd sent was moved")) {
		test_fail("testpmd log %s: vnetd: %s", pmd.log,
			  vd_log_tail(&vd));
		goto out;
	}

	/* tap -> guest: rxonly while frames go out of the tap */
	pfd = pkt_open(vd.ns, vd.port[0].tap);
	if (!ASSERT_GE(pfd, 0, "AF_PACKET on the tap"))
		goto out;
	if (!pmd_phase(&vd, &pmd, VNET_DIR_RX, "rxonly", &d0, &l0))
		goto out;
	deadline = now_ms() + 30000;
	do {
		for (k = 0; k < 32; k++, i++) {
			size_t len = udp_frame(f, guest_mac, host_mac, 33000,
					       i);

			pkt_send(pfd, NULL, f, len);
		}
		nap_ms(2);
		dps_read(&vd.port[0], VNET_DIR_RX, 0, &d);
		if (!testpmd_running(&pmd))
			break;
	} while (d.frames - d0.frames < 5000 && now_ms() < deadline);
	pmd_stop(&pmd);
	ns_link_stats(vd.ns, vd.port[0].tap, &l);
	rxp = testpmd_stat(&pmd, "RX-packets:");
	dbg("rxonly: testpmd RX-packets %lld, dp_stats rx frames %llu, tap tx_packets +%llu (sent %u)\n",
	    rxp, (unsigned long long)(d.frames - d0.frames),
	    (unsigned long long)(l.tx_packets - l0.tx_packets), i);
	if (!ASSERT_GE(d.frames - d0.frames, 5000, "rxonly: dp_stats rx") ||
	    !ASSERT_GT(rxp, 0, "rxonly: testpmd RX-packets") ||
	    !ASSERT_GT(l.tx_packets - l0.tx_packets, 0,
		       "rxonly: tap tx_packets"))
		test_fail("testpmd log %s: vnetd: %s", pmd.log,
			  vd_log_tail(&vd));
out:
	if (pmd.pid > 0)
		pmd_stop(&pmd);
	close_fd(&pfd);
	vd_cleanup(&vd);
	if (!test_state.failed) {
		unlink(pmd.log);
		snprintf(pmd.log, sizeof(pmd.log),
			 "/tmp/vnet-vnetd-%d-testpmd-txonly.log", getpid());
		unlink(pmd.log);
	}
}

VNET_TEST("vnetd/dpdk_smoke", dpdk_smoke);
