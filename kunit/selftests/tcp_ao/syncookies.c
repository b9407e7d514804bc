// SPDX-License-Identifier: GPL-2.0
/*
 * TCP-AO connections accepted from a SYN cookie.
 *
 * With net.ipv4.tcp_syncookies=2 every SYN-ACK is a cookie SYN-ACK: the
 * server keeps no request socket and stores the client's window scale and
 * SACK_PERM in the low bits of the SYN-ACK's TS value
 * (cookie_init_timestamp()). The third ACK gives them back in its TS echo
 * (cookie_timestamp_decode()); an ACK without one turns window scaling and
 * SACK off on the server only. So the cookie SYN-ACK has to keep TS next
 * to the TCP-AO option, or the two ends disagree on the window scale.
 *
 * For a 12-byte and a 16-byte MAC this checks that
 * - both ends negotiated TS, SACK and WS, with matching scales;
 * - what each end may send is what the other end offered;
 * - a few MB go both ways in time and intact;
 * - after a lost segment a SACK block reaches the sender with a 12-byte
 *   MAC, while with a 16-byte MAC none fits (TCP-AO 20 + TS 12 leave 8
 *   bytes) and only the retransmission timeout recovers: SACK_PERM is
 *   negotiated all the same.
 */
#include <poll.h>
#include <stddef.h>
#include <time.h>
#include "../../../../include/linux/kernel.h"
#include "aolib.h"

#define KEY_ID		100
#define BULK_SZ		(4U << 20)	/* each way: the windows outgrow 64K */
#define PING_SZ		1000
#define LOSS_SZ		500		/* below any MSS: one segment */
#define PATTERN_SZ	65536
#define POLL_MS		100
#define SETTLE_US	10000

#ifndef XFER_TIMEOUT_SEC
#define XFER_TIMEOUT_SEC	20
#endif

struct test_case {
	const char *name;
	const char *alg;
	u8 maclen;
	/*
	 * tcp_established_options(): TCP-AO takes 4 + maclen bytes rounded
	 * up to 4, TS 12, a SACK option with one block 12 of the 40.
	 */
	bool sack_block_fits;
};

static const struct test_case cases[] = {
	{ "hmac(sha1), 12-byte MAC", "hmac(sha1)", 12, true },
	{ "cmac(aes128), 16-byte MAC", "cmac(aes128)", 16, false },
};

#define NR_CASES	ARRAY_SIZE(cases)
#define CHECKS_PER_CASE	4

static int listen_sk[NR_CASES];
static int server_ns = -1;
static bool no_syncookies;

static char pattern[PATTERN_SZ];
static char rcv_buf[PATTERN_SZ];

static u64 now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		test_error("clock_gettime()");
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * test_echo() doesn't see a value the sysctl refuses: the write happens
 * in fclose(). Read it back.
 */
static void set_sysctl(const char *name, const char *val)
{
	unsigned long want[3] = {}, got[3] = {};
	char buf[128], *path;
	int nwant, ngot;
	FILE *f;

	path = test_sprintf("/proc/sys/net/ipv4/%s", name);
	if (!path)
		test_error("test_sprintf()");
	if (test_echo(path, false, "%s", val))
		test_error("failed to write %s to %s", val, path);

	f = fopen(path, "r");
	if (!f)
		test_error("fopen(%s)", path);
	if (!fgets(buf, sizeof(buf), f))
		test_error("failed to read %s", path);
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';

	nwant = sscanf(val, "%lu %lu %lu", &want[0], &want[1], &want[2]);
	ngot = sscanf(buf, "%lu %lu %lu", &got[0], &got[1], &got[2]);
	if (nwant <= 0 || nwant != ngot || memcmp(want, got, sizeof(want)))
		test_error("%s is `%s' after writing `%s'", path, buf, val);
	free(path);
}

/* Both ends offer TS, SACK and WS, with a scale of 7 or more */
static void setup_netns(bool server)
{
	set_sysctl("tcp_timestamps", "1");
	set_sysctl("tcp_sack", "1");
	set_sysctl("tcp_window_scaling", "1");
	set_sysctl("tcp_rmem", "4096 131072 6291456");
	if (server)
		set_sysctl("tcp_syncookies", "2");
}

static void add_key(int sk, const struct test_case *tc)
{
	struct tcp_ao_add ao;

	if (test_prepare_key(&ao, tc->alg, this_ip_dest, false, false,
			     DEFAULT_TEST_PREFIX, 0, KEY_ID, KEY_ID,
			     tc->maclen, 0, strlen(DEFAULT_TEST_PASSWORD),
			     DEFAULT_TEST_PASSWORD))
		test_error("test_prepare_key(%s)", tc->alg);
	if (setsockopt(sk, IPPROTO_TCP, TCP_AO_ADD_KEY, &ao, sizeof(ao)) < 0)
		test_error("setsockopt(TCP_AO_ADD_KEY, %s)", tc->name);
	if (test_verify_socket_key(sk, &ao))
		test_error("the socket has no %s key", tc->name);
}

static void get_tcp_info(int sk, struct tcp_info *ti)
{
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	if (getsockopt(sk, SOL_TCP, TCP_INFO, ti, &len))
		test_error("getsockopt(TCP_INFO)");
	if (len < offsetof(struct tcp_info, tcpi_total_rto_recoveries))
		test_error("TCP_INFO is %u bytes: no tcpi_total_rto", len);
}

static u64 server_counter(const char *name)
{
	int old_ns = switch_save_ns(server_ns);
	u64 ret = netstat_get_one(name, NULL);

	switch_close_ns(old_ns);
	return ret;
}

struct flow {
	const char *name;
	int from, to;
	size_t len, sent, rcvd;
};

static char *flow_step(struct flow *f)
{
	size_t off, n;
	ssize_t ret;

	off = f->sent % PATTERN_SZ;
	n = min(f->len - f->sent, PATTERN_SZ - off);
	if (n) {
		ret = send(f->from, pattern + off, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (ret < 0 && errno != EAGAIN)
			return test_sprintf("%s: send(): %s",
					    f->name, strerror(errno));
		if (ret > 0)
			f->sent += ret;
	}

	off = f->rcvd % PATTERN_SZ;
	n = min(f->len - f->rcvd, PATTERN_SZ - off);
	if (!n)
		return NULL;
	ret = recv(f->to, rcv_buf, n, MSG_DONTWAIT);
	if (ret < 0 && errno == EAGAIN)
		return NULL;
	if (ret < 0)
		return test_sprintf("%s: recv(): %s", f->name, strerror(errno));
	if (ret == 0)
		return test_sprintf("%s: closed after %zu bytes",
				    f->name, f->rcvd);
	for (n = 0; n < (size_t)ret; n++) {
		if (rcv_buf[n] != pattern[off + n])
			return test_sprintf("%s: byte %zu is wrong",
					    f->name, f->rcvd + n);
	}
	f->rcvd += ret;
	return NULL;
}

/* Returns NULL once every flow arrived, what went wrong otherwise */
static char *run_flows(struct flow *flows, size_t nr, time_t timeout_sec)
{
	u64 deadline = now_ms() + timeout_sec * 1000ULL;
	struct pollfd pfd[4];
	char *err;
	size_t i;

	if (nr > ARRAY_SIZE(pfd) / 2)
		test_error("too many flows: %zu", nr);

	for (;;) {
		bool done = true;

		memset(pfd, 0, sizeof(pfd));
		for (i = 0; i < nr; i++) {
			pfd[2 * i].fd = flows[i].from;
			pfd[2 * i + 1].fd = flows[i].to;
			if (flows[i].sent < flows[i].len)
				pfd[2 * i].events = POLLOUT;
			if (flows[i].rcvd < flows[i].len) {
				pfd[2 * i + 1].events = POLLIN;
				done = false;
			}
		}
		if (done)
			return NULL;
		if (now_ms() > deadline)
			break;
		if (poll(pfd, 2 * nr, POLL_MS) < 0)
			return test_sprintf("poll(): %s", strerror(errno));
		for (i = 0; i < nr; i++) {
			err = flow_step(&flows[i]);
			if (err)
				return err;
		}
	}

	err = test_sprintf("%s: %zu of %zu bytes arrived in %lds",
			   flows[0].name, flows[0].rcvd, flows[0].len,
			   (long)timeout_sec);
	for (i = 1; err && i < nr; i++) {
		char *more = test_sprintf("%s, %s: %zu of %zu", err,
					  flows[i].name, flows[i].rcvd,
					  flows[i].len);

		free(err);
		err = more;
	}
	return err ?: strdup("out of memory");
}

/* @len bytes from the client to the server and back, at the same time */
static char *exchange(int csk, int ssk, size_t len, time_t timeout_sec)
{
	struct flow flows[] = {
		{ .name = "client => server", .from = csk, .to = ssk, .len = len },
		{ .name = "server => client", .from = ssk, .to = csk, .len = len },
	};

	return run_flows(flows, ARRAY_SIZE(flows), timeout_sec);
}

#define has_opt(ti, opt)	(!!((ti)->tcpi_options & TCPI_OPT_##opt))

static void describe(char *buf, size_t sz, const struct tcp_info *ti)
{
	snprintf(buf, sz, "TS %d SACK %d WS %d (snd_wscale %u, rcv_wscale %u)",
		 has_opt(ti, TIMESTAMPS), has_opt(ti, SACK),
		 has_opt(ti, WSCALE), ti->tcpi_snd_wscale, ti->tcpi_rcv_wscale);
}

static __printf(3, 4) void append(char *buf, size_t sz, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list vargs;

	if (len)
		len += snprintf(buf + len, sz - len, "; ");
	if (len >= sz)
		return;
	va_start(vargs, fmt);
	vsnprintf(buf + len, sz - len, fmt, vargs);
	va_end(vargs);
}

/* Names what the ends disagree on, if anything */
static bool opts_disagree(char *why, size_t sz,
			  const struct tcp_info *c, const struct tcp_info *s)
{
	why[0] = '\0';
	if (has_opt(c, TIMESTAMPS) != has_opt(s, TIMESTAMPS))
		append(why, sz, "TS");
	if (has_opt(c, SACK) != has_opt(s, SACK))
		append(why, sz, "SACK");
	if (has_opt(c, WSCALE) != has_opt(s, WSCALE))
		append(why, sz, "window scaling");
	if (c->tcpi_snd_wscale != s->tcpi_rcv_wscale)
		append(why, sz, "the server's scale (%u for the client, %u for the server)",
		       c->tcpi_snd_wscale, s->tcpi_rcv_wscale);
	if (c->tcpi_rcv_wscale != s->tcpi_snd_wscale)
		append(why, sz, "the client's scale (%u for the client, %u for the server)",
		       c->tcpi_rcv_wscale, s->tcpi_snd_wscale);
	return why[0];
}

static void check_options(const struct test_case *tc, int csk, int ssk)
{
	char why[256], client[96], server[96];
	struct tcp_info c, s;

	get_tcp_info(csk, &c);
	get_tcp_info(ssk, &s);
	describe(client, sizeof(client), &c);
	describe(server, sizeof(server), &s);
	errno = 0;

	if (opts_disagree(why, sizeof(why), &c, &s))
		test_fail("%s: the ends disagree on %s: client %s, server %s",
			  tc->name, why, client, server);
	else if (!has_opt(&c, TIMESTAMPS) || !has_opt(&c, SACK) ||
		 !has_opt(&c, WSCALE) || !c.tcpi_rcv_wscale ||
		 !s.tcpi_rcv_wscale)
		test_fail("%s: TS, SACK and WS offered, both ends have %s",
			  tc->name, client);
	else
		test_ok("%s: both ends have TS, SACK and WS (client scale %u, server scale %u)",
			tc->name, c.tcpi_rcv_wscale, s.tcpi_rcv_wscale);
}

/*
 * tcpi_snd_wnd is the peer's window field shifted by the scale this end
 * believes the peer uses; tcpi_rcv_wnd is the window this end offered
 * last. With one scale on both ends the first is the second rounded down
 * to the scale.
 */
static bool wnd_match(u32 may_send, u32 offered)
{
	return may_send <= offered && may_send >= offered / 2;
}

/* Names the window each end gets wrong, if any */
static bool wnd_disagree(char *why, size_t sz,
			 const struct tcp_info *c, const struct tcp_info *s)
{
	why[0] = '\0';
	if (!wnd_match(c->tcpi_snd_wnd, s->tcpi_rcv_wnd))
		append(why, sz, "the client may send %u bytes, the server offers %u",
		       c->tcpi_snd_wnd, s->tcpi_rcv_wnd);
	if (!wnd_match(s->tcpi_snd_wnd, c->tcpi_rcv_wnd))
		append(why, sz, "the server may send %u bytes, the client offers %u",
		       s->tcpi_snd_wnd, c->tcpi_rcv_wnd);
	return why[0];
}

static void check_windows(const struct test_case *tc, int csk, int ssk)
{
	struct tcp_info c, s;
	char why[160], *err;
	u64 deadline;

	/* Both ends have sent data and window updates since the handshake */
	err = exchange(csk, ssk, PING_SZ, TEST_TIMEOUT_SEC);
	if (err) {
		errno = 0;
		test_fail("%s: windows: %s", tc->name, err);
		free(err);
		return;
	}

	/* Give a window update in flight the time to land */
	deadline = now_ms() + TEST_TIMEOUT_SEC * 1000ULL;
	do {
		get_tcp_info(csk, &c);
		get_tcp_info(ssk, &s);
		if (!wnd_disagree(why, sizeof(why), &c, &s))
			break;
		usleep(SETTLE_US);
	} while (now_ms() < deadline);

	errno = 0;
	if (why[0])
		test_fail("%s: the windows disagree: %s", tc->name, why);
	else
		test_ok("%s: client may send %u, server offers %u; server %u, client %u",
			tc->name, c.tcpi_snd_wnd, s.tcpi_rcv_wnd,
			s.tcpi_snd_wnd, c.tcpi_rcv_wnd);
}

static bool check_transfer(const struct test_case *tc, int csk, int ssk)
{
	struct tcp_info c, s;
	char *err;

	err = exchange(csk, ssk, BULK_SZ, XFER_TIMEOUT_SEC);
	if (err) {
		errno = 0;
		test_fail("%s: %u MB each way: %s", tc->name, BULK_SZ >> 20, err);
		free(err);
		return false;
	}
	get_tcp_info(csk, &c);
	get_tcp_info(ssk, &s);
	test_ok("%s: %u MB each way (retransmitted: client %u, server %u segments)",
		tc->name, BULK_SZ >> 20, c.tcpi_total_retrans,
		s.tcpi_total_retrans);
	return true;
}

static bool idle(const struct tcp_info *ti)
{
	return !ti->tcpi_unacked && !ti->tcpi_notsent_bytes &&
	       ti->tcpi_ca_state == TCP_CA_Open;
}

/* Until all data is acknowledged and neither end is recovering */
static bool wait_idle(int csk, int ssk, struct tcp_info *c, struct tcp_info *s)
{
	u64 deadline = now_ms() + TEST_TIMEOUT_SEC * 1000ULL;

	do {
		get_tcp_info(csk, c);
		get_tcp_info(ssk, s);
		if (idle(c) && idle(s))
			return true;
		usleep(SETTLE_US);
	} while (now_ms() < deadline);
	return false;
}

/*
 * Loses a segment on purpose and looks at how the client recovers. In
 * repair mode the client queues the first segment as if it had sent it
 * (tcp_write_xmit() skips the transmission), then sends the second one,
 * which reaches the server out of order. If the server's ACK carries a
 * SACK block, RACK marks the first segment lost and the client
 * retransmits it in SACK recovery; if no block fits, the client learns
 * nothing and only the retransmission timeout resends it.
 */
static void check_sack_blocks(const struct test_case *tc, int csk, int ssk)
{
	struct flow flow = {
		.name = "client => server", .from = csk, .to = ssk,
		.len = 2 * LOSS_SZ, .sent = 2 * LOSS_SZ,
	};
	int one = 1, queue = TCP_SEND_QUEUE;
	unsigned int recoveries, rtos;
	u64 before;
	struct tcp_info c0, s0, c, s;
	bool sack_perm;
	char *err;

	if (!wait_idle(csk, ssk, &c0, &s0)) {
		errno = 0;
		test_fail("%s: SACK: the connection does not settle", tc->name);
		return;
	}
	before = netstat_get_one("TCPSackRecovery", NULL);

	if (setsockopt(csk, SOL_TCP, TCP_NODELAY, &one, sizeof(one)))
		test_error("setsockopt(TCP_NODELAY)");
	test_enable_repair(csk);
	if (setsockopt(csk, SOL_TCP, TCP_REPAIR_QUEUE, &queue, sizeof(queue)))
		test_error("setsockopt(TCP_REPAIR_QUEUE)");
	if (send(csk, pattern, LOSS_SZ, MSG_NOSIGNAL) != LOSS_SZ)
		test_error("send() in repair mode");
	test_disable_repair(csk);
	if (send(csk, pattern + LOSS_SZ, LOSS_SZ, MSG_NOSIGNAL) != LOSS_SZ)
		test_error("send()");

	err = run_flows(&flow, 1, TEST_TIMEOUT_SEC);
	if (err) {
		errno = 0;
		test_fail("%s: SACK: %s", tc->name, err);
		free(err);
		return;
	}
	if (!wait_idle(csk, ssk, &c, &s)) {
		errno = 0;
		test_fail("%s: SACK: the lost segment is still unacknowledged",
			  tc->name);
		return;
	}
	recoveries = netstat_get_one("TCPSackRecovery", NULL) - before;
	rtos = (u16)(c.tcpi_total_rto - c0.tcpi_total_rto);
	sack_perm = has_opt(&c, SACK) && has_opt(&s, SACK);
	errno = 0;

	if (s.tcpi_rcv_ooopack == s0.tcpi_rcv_ooopack)
		test_fail("%s: SACK: no segment came out of order", tc->name);
	else if (!sack_perm)
		test_fail("%s: SACK: no SACK_PERM (client %d, server %d)",
			  tc->name, has_opt(&c, SACK), has_opt(&s, SACK));
	else if (tc->sack_block_fits && (!recoveries || rtos))
		test_fail("%s: SACK: expected a block, got %u SACK recoveries, %u RTOs",
			  tc->name, recoveries, rtos);
	else if (!tc->sack_block_fits && (recoveries || !rtos))
		test_fail("%s: SACK: expected no block, got %u SACK recoveries, %u RTOs",
			  tc->name, recoveries, rtos);
	else if (tc->sack_block_fits)
		test_ok("%s: SACK: one block fits next to TCP-AO and TS: SACK recovery",
			tc->name);
	else
		test_ok("%s: SACK: SACK_PERM on, no block fits next to TCP-AO and TS: RTO",
			tc->name);
}

static void run_case(const struct test_case *tc, int lsk, unsigned int port)
{
	u64 cookies = server_counter("SyncookiesRecv");
	int csk, ssk;

	csk = socket(test_family, SOCK_STREAM, IPPROTO_TCP);
	if (csk < 0)
		test_error("socket()");
	add_key(csk, tc);
	if (test_connect_socket(csk, this_ip_dest, port) <= 0)
		test_error("%s: failed to connect()", tc->name);

	if (test_wait_fd(lsk, TEST_TIMEOUT_SEC, 0))
		test_error("%s: test_wait_fd()", tc->name);
	ssk = accept(lsk, NULL, NULL);
	if (ssk < 0)
		test_error("accept()");
	if (server_counter("SyncookiesRecv") == cookies)
		test_error("%s: the server did not accept from a SYN cookie",
			   tc->name);

	check_options(tc, csk, ssk);
	check_windows(tc, csk, ssk);
	if (check_transfer(tc, csk, ssk))
		check_sack_blocks(tc, csk, ssk);
	else
		test_skip("%s: SACK: not checked after a failed transfer",
			  tc->name);

	close(ssk);
	close(csk);
}

static void *server_fn(void *arg)
{
	size_t i;

	if (access("/proc/sys/net/ipv4/tcp_syncookies", F_OK)) {
		no_syncookies = true;
	} else {
		setup_netns(true);
		server_ns = open_netns();
		for (i = 0; i < NR_CASES; i++) {
			listen_sk[i] = test_listen_socket(this_ip_addr,
							  test_server_port + i,
							  1);
			add_key(listen_sk[i], &cases[i]);
		}
	}
	synchronize_threads(); /* 1: listening => connect() */

	synchronize_threads(); /* don't race to exit: client exits */
	return NULL;
}

static void *client_fn(void *arg)
{
	size_t i, j;

	setup_netns(false);
	randomize_buffer(pattern, sizeof(pattern));
	synchronize_threads(); /* 1: listening => connect() */

	for (i = 0; i < NR_CASES; i++) {
		if (no_syncookies) {
			for (j = 0; j < CHECKS_PER_CASE; j++)
				test_skip("%s: no CONFIG_SYN_COOKIES",
					  cases[i].name);
			continue;
		}
		run_case(&cases[i], listen_sk[i], test_server_port + i);
	}
	return NULL;
}

int main(int argc, char *argv[])
{
	/* and one more: the library's check of the trace events */
	test_init(NR_CASES * CHECKS_PER_CASE + 1, server_fn, client_fn);
	return 0;
}
