// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The exporter's connection table.  libmicrohttpd closes a connection
 * only after a time without any byte (its timeout), so a client that
 * opens many connections and sends nothing, or one byte now and then,
 * holds them as long as it likes.  Here each connection has a deadline:
 * EXPORTER_IDLE_S after it opened or after its last answer, unless it is
 * being answered.  The main thread's tick (conns_reap) shuts a late one's
 * socket down, and libmicrohttpd closes it on the error that follows.
 * The server's thread opens and closes entries; the table's lock keeps a
 * socket from being closed (and its number reused) while it is shut down.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <sys/socket.h>

#include "exporter_conns.h"

struct conn {
	int fd;            /* -1: a free entry */
	bool busy;         /* a request is being answered */
	bool reaped;       /* shut down, not closed yet */
	struct timespec since; /* opened or last answered */
};

static struct conn table[EXPORTER_CONN_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool table_ready;

static void now(struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, t);
}

static void table_init(void)
{
	for (int i = 0; i < EXPORTER_CONN_MAX; i++)
		table[i].fd = -1;
	table_ready = true;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void conns_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *e = *socket_context;

	(void)cls;
	pthread_mutex_lock(&lock);
	if (!table_ready)
		table_init();
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (e)
			e->fd = -1;
		*socket_context = NULL;
	} else if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		for (int i = 0; ci && i < EXPORTER_CONN_MAX; i++) {
			if (table[i].fd >= 0)
				continue;
			table[i] = (struct conn){ .fd = ci->connect_fd };
			now(&table[i].since);
			*socket_context = &table[i];
			break;
		}
	}
	pthread_mutex_unlock(&lock);
}

void conns_busy(struct MHD_Connection *c)
{
	struct conn *e = conn_of(c);

	if (!e)
		return;
	pthread_mutex_lock(&lock);
	e->busy = true;
	pthread_mutex_unlock(&lock);
}

void conns_done(void *cls, struct MHD_Connection *c, void **req,
		enum MHD_RequestTerminationCode toe)
{
	struct conn *e = conn_of(c);

	(void)cls;
	(void)toe;
	free(*req);
	*req = NULL;
	if (!e)
		return;
	pthread_mutex_lock(&lock);
	e->busy = false;
	now(&e->since);
	pthread_mutex_unlock(&lock);
}

int conns_reap(void)
{
	struct timespec t;
	int n = 0;

	now(&t);
	pthread_mutex_lock(&lock);
	for (int i = 0; table_ready && i < EXPORTER_CONN_MAX; i++) {
		struct conn *e = &table[i];

		if (e->fd < 0 || e->busy || e->reaped ||
		    t.tv_sec - e->since.tv_sec < EXPORTER_IDLE_S)
			continue;
		shutdown(e->fd, SHUT_RDWR);
		e->reaped = true;
		n++;
	}
	pthread_mutex_unlock(&lock);
	return n;
}

int conns_open(void)
{
	int n = 0;

	pthread_mutex_lock(&lock);
	for (int i = 0; table_ready && i < EXPORTER_CONN_MAX; i++)
		n += table[i].fd >= 0;
	pthread_mutex_unlock(&lock);
	return n;
}
