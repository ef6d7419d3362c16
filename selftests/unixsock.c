// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unix-socket odds and ends for the shell tests (test_operator.sh):
 *
 *   unixsock notify PATH SECONDS   play systemd's $NOTIFY_SOCKET: bind a
 *                                  datagram socket at PATH, print every
 *                                  datagram as one line (newlines become
 *                                  spaces), exit 0 after one with
 *                                  STOPPING=1, 1 after SECONDS without
 *   unixsock notify-ts PATH SECONDS  the same, each line first the time
 *                                  it arrived: CLOCK_REALTIME seconds
 *                                  with 6 decimals (bash's EPOCHREALTIME)
 *   unixsock connect PATH          connect a stream socket to PATH: exit 0,
 *                                  or 1 with strerror on stderr
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

static int addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "unixsock: %s: path too long\n", path);
		return -1;
	}
	strcpy(sa->sun_path, path);
	return 0;
}

static int do_notify(const char *path, int secs, int ts)
{
	struct sockaddr_un sa;
	char buf[4096];
	time_t end = time(NULL) + secs;
	ssize_t n;
	int fd;

	if (addr(&sa, path))
		return 2;
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "unixsock: %s: %s\n", path, strerror(errno));
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (time(NULL) < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n < 0)
			continue;
		buf[n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		if (ts) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			printf("%lld.%06ld ", (long long)now.tv_sec,
			       now.tv_nsec / 1000);
		}
		printf("%s\n", buf);
		if (strstr(buf, "STOPPING=1")) {
			unlink(path);
			return 0;
		}
	}
	unlink(path);
	return 1;
}

static int do_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (addr(&sa, path))
		return 2;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "unixsock: connect %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "notify"))
		return do_notify(argv[2], atoi(argv[3]), 0);
	if (argc == 4 && !strcmp(argv[1], "notify-ts"))
		return do_notify(argv[2], atoi(argv[3]), 1);
	if (argc == 3 && !strcmp(argv[1], "connect"))
		return do_connect(argv[2]);
	fprintf(stderr, "usage: unixsock notify|notify-ts PATH SECONDS | connect PATH\n");
	return 2;
}
