// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* vhost_unit: the event loop and the server */
#include "vhost_unit.h"

/* ======================================================================= */
/* event loop                                                               */
/* ======================================================================= */

static char tmpdir[64];

static bool tmpdir_make(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vhost-unit.XXXXXX");
	return ASSERT_TRUE(mkdtemp(tmpdir) != NULL, "mkdtemp");
}

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* Run the loop until FD has something to read (or ~2 s). */
static bool pump_until_readable(struct vhost_server *srv, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int i;

	for (i = 0; i < 200; i++) {
		vhost_server_poll(srv, 10);
		if (poll(&p, 1, 0) == 1)
			return true;
	}
	return false;
}

static bool pump_until(struct vhost_server *srv, bool (*cond)(void *),
		       void *arg)
{
	int i;

	for (i = 0; i < 300 && !cond(arg); i++)
		vhost_server_poll(srv, 10);
	return cond(arg);
}

static bool dev_is_connected(void *arg)
{
	return vhost_dev_connected(arg);
}

static bool dev_is_disconnected(void *arg)
{
	return !vhost_dev_connected(arg);
}

/* T's device (2 queue pairs) on socket PATH, and SRV to serve it */
static bool dev_and_server(struct tdev *t, const char *path,
			   struct vhost_server *srv)
{
	return ASSERT_OK(vhost_dev_init(&t->dev, path, 2, &t_ops, t), "init") &&
	       ASSERT_OK(vhost_server_init(srv), "server init");
}

/*
 * T unconnected (no socket, no memory yet) and PATH a socket NAME in a
 * fresh temporary directory; false if there is none
 */
static bool tdev_blank(struct tdev *t, char *path, size_t len, const char *name)
{
	memset(t, 0, sizeof(*t));
	t->sock = t->memfd = -1;
	t->offer = T_OFFER;
	if (!tmpdir_make())
		return false;
	snprintf(path, len, "%s/%s", tmpdir, name);
	return true;
}

void test_server_listen(void)
{
	struct vhost_user_hdr h = { VHOST_USER_GET_QUEUE_NUM,
				    VHOST_USER_VERSION, 0 };
	struct vhost_server srv = { .epfd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vhost_user_msg m;
	char path[sizeof(sa.sun_path)], buf[8];
	int c1 = -1, c2 = -1, stale;
	struct stat st;
	struct tdev t;

	if (!tdev_blank(&t, path, sizeof(path), "port0.sock"))
		return;
	/* a stale socket: bound, then its process gone */
	stale = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (!ASSERT_OK(bind(stale, (struct sockaddr *)&sa, sizeof(sa)),
		       "stale bind"))
		goto out;
	close(stale);

	if (!dev_and_server(&t, path, &srv))
		goto out;
	if (!ASSERT_OK(vhost_server_add_port(&srv, &t.dev,
					     &(struct vhost_port_cfg){
						     .path = path,
						     .mode = 0600 }),
		       "listen over the stale socket"))
		goto out;
	if (ASSERT_OK(stat(path, &st), "stat"))
		ASSERT_EQ(st.st_mode & 0777, 0600, "mode");
	/* a live one is not taken over */
	{
		struct vhost_server srv2;
		struct vhost_dev dev2;

		if (ASSERT_OK(vhost_server_init(&srv2), "server 2") &&
		    ASSERT_OK(vhost_dev_init(&dev2, path, 2, &t_ops, &t),
			      "dev 2")) {
			ASSERT_EQ(vhost_server_add_port(&srv2, &dev2,
						       &(struct vhost_port_cfg){
							       .path = path }),
				  -EADDRINUSE, "live socket kept");
			vhost_dev_cleanup(&dev2);
		}
		vhost_server_cleanup(&srv2);
	}
	/*
	 * That check connected to see whether anyone listens: our port took
	 * it as a frontend that left at once.  Let it see that.
	 */
	ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev), "probe");
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev),
		    "probe handled");
	t.disconnects = 0;

	c1 = unix_connect(path);
	if (!ASSERT_GE(c1, 0, "connect"))
		goto out;
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "accepted"))
		goto out;
	ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "send");
	if (ASSERT_TRUE(pump_until_readable(&srv, c1), "reply") &&
	    ASSERT_OK(fe_reply(c1, &m), "read reply"))
		ASSERT_EQ(m.payload.u64, 2, "GET_QUEUE_NUM over the socket");

	/* one frontend per port: the second gets EOF */
	c2 = unix_connect(path);
	if (ASSERT_GE(c2, 0, "connect 2") &&
	    ASSERT_TRUE(pump_until_readable(&srv, c2), "refused"))
		ASSERT_EQ(read(c2, buf, sizeof(buf)), 0, "EOF");
	ASSERT_TRUE(vhost_dev_connected(&t.dev), "first still connected");

	/* a protocol violation drops the connection, not the port */
	h.size = 100000;
	ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "oversized");
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "disconnected callback");
	close(c1);
	h.size = 0;
	c1 = unix_connect(path);
	if (ASSERT_GE(c1, 0, "reconnect") &&
	    ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			"accepted again")) {
		ASSERT_OK(fe_send_raw(c1, &h, sizeof(h), NULL, 0), "send");
		ASSERT_TRUE(pump_until_readable(&srv, c1), "answers again");
	}
out:
	close_pair(c1, c2);
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	ASSERT_EQ(access(path, F_OK), -1, "socket removed");
	rmdir(tmpdir);
}

/*
 * The socket's mode without a path-based chmod.  The library's chmod()
 * and bind() calls land here (these definitions take precedence over the
 * C library's in this program).  While armed, a chmod() of the socket path
 * first swaps a symlink to a victim file in at the path, as another
 * process could between bind() and chmod(); bind() records the mode the
 * socket file has the moment it exists.
 */
static struct {
	bool armed;
	const char *path, *victim;
	unsigned int chmods;
	mode_t bound_mode;
} race;

int chmod(const char *path, mode_t mode)
{
	if (race.armed && !strcmp(path, race.path)) {
		char tmp[128];

		race.chmods++;
		snprintf(tmp, sizeof(tmp), "%s.swap", race.path);
		if (!symlink(race.victim, tmp))
			rename(tmp, race.path);
	}
	return (int)syscall(SYS_fchmodat, AT_FDCWD, path, mode);
}

int bind(int fd, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_un *su = (const struct sockaddr_un *)sa;
	struct stat st;
	int ret;

	ret = (int)syscall(SYS_bind, fd, sa, len);
	if (!ret && race.armed && sa->sa_family == AF_UNIX &&
	    !strcmp(su->sun_path, race.path) && !lstat(race.path, &st))
		race.bound_mode = st.st_mode & 07777;
	return ret;
}

void test_server_mode_race(void)
{
	struct vhost_server srv = { .epfd = -1 };
	char path[108], victim[108];
	struct stat st;
	struct tdev t;
	mode_t old_umask;
	int fd;

	if (!tdev_blank(&t, path, sizeof(path), "port.sock"))
		return;
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	fd = open(victim, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	if (!ASSERT_GE(fd, 0, "victim file"))
		goto out;
	fchmod(fd, 0644);
	close(fd);
	race.path = path;
	race.victim = victim;
	race.armed = true;
	/* a permissive umask: only the library's own mode protects it */
	old_umask = umask(0);
	if (dev_and_server(&t, path, &srv))
		vhost_server_add_port(&srv, &t.dev,
				      &(struct vhost_port_cfg){ .path = path,
								.mode = 0600 });
	umask(old_umask);
	race.armed = false;
	ASSERT_EQ(race.chmods, 0, "no chmod() of the socket path");
	ASSERT_EQ(race.bound_mode, 0600, "mode of the socket when bind() made it");
	if (ASSERT_OK(stat(victim, &st), "stat victim"))
		ASSERT_EQ(st.st_mode & 07777, 0644, "mode of a file swapped in unchanged");
	if (ASSERT_OK(lstat(path, &st), "lstat socket")) {
		ASSERT_TRUE(S_ISSOCK(st.st_mode), "the socket is still there");
		ASSERT_EQ(st.st_mode & 07777, 0600, "socket mode");
	}
out:
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	unlink(path);
	unlink(victim);
	rmdir(tmpdir);
}

void test_server_client_reconnect(void)
{
	struct vhost_server srv = { .epfd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd p;
	int lfd = -1, c = -1;
	char path[sizeof(sa.sun_path)];
	struct tdev t;

	if (!tdev_blank(&t, path, sizeof(path), "qemu.sock"))
		return;
	if (!dev_and_server(&t, path, &srv))
		goto out;
	/* the frontend is not there yet: retries in the background */
	if (!ASSERT_OK(vhost_server_add_port(&srv, &t.dev,
					     &(struct vhost_port_cfg){
						     .path = path,
						     .client = true,
						     .backoff_min_ms = 5,
						     .backoff_max_ms = 20 }),
		       "client port"))
		goto out;
	ASSERT_FALSE(vhost_dev_connected(&t.dev), "nobody to connect to");
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (!ASSERT_OK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), "bind") ||
	    !ASSERT_OK(listen(lfd, 4), "listen"))
		goto out;
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "connected by a retry"))
		goto out;
	c = accept(lfd, NULL, NULL);
	if (!ASSERT_GE(c, 0, "accept"))
		goto out;
	/* the frontend goes away: reset, and back to retrying */
	close(c);
	c = -1;
	ASSERT_TRUE(pump_until(&srv, dev_is_disconnected, &t.dev), "dropped");
	ASSERT_EQ(t.disconnects, 1, "disconnected callback");
	if (!ASSERT_TRUE(pump_until(&srv, dev_is_connected, &t.dev),
			 "reconnected"))
		goto out;
	p = (struct pollfd){ .fd = lfd, .events = POLLIN };
	if (ASSERT_EQ(poll(&p, 1, 1000), 1, "pending connection"))
		c = accept(lfd, NULL, NULL);
	ASSERT_GE(c, 0, "accept again");
out:
	close_pair(c, lfd);
	vhost_server_cleanup(&srv);
	vhost_dev_cleanup(&t.dev);
	unlink(path);
	rmdir(tmpdir);
}
