/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernel trees the TCP option tests run on.
 *
 * The test source is shared between trees; everything that differs in the
 * KUnit API or in the TCP internals the tests poke at is hidden here. Every
 * check of what a tree has is made here, once, as a TCP_OPT_HAVE_* macro
 * the suites test; no suite tests a kernel macro or version itself. The
 * calls of the calculators and the writer, whose signatures changed in 6.7,
 * are in tcp_options_test.c: they reach functions static to tcp_output.c.
 */
#ifndef _TCP_OPTIONS_TEST_COMPAT_H
#define _TCP_OPTIONS_TEST_COMPAT_H

#include <kunit/test.h>
#include <linux/string.h>
#include <net/mptcp.h>
#include <net/tcp.h>

/* 6.7 (TCP-AO) brought struct tcp_key, which the calculators and the
 * writer take. <net/tcp_ao.h> came with it and always defines
 * static_branch_tcp_md5(): test for the API, not for a version.
 */
#ifdef static_branch_tcp_md5
#define TCP_OPT_HAVE_TCP_KEY	1
#endif
#if defined(TCP_OPT_HAVE_TCP_KEY) && defined(CONFIG_TCP_AO)
#define TCP_OPT_HAVE_AO		1
#endif
/* Microsecond TS values (tp->tcp_usec_ts) came in the same release as
 * struct tcp_key, with no macro of their own.
 */
#ifdef TCP_OPT_HAVE_TCP_KEY
#define TCP_OPT_HAVE_USEC_TS	1
#else
/* And IPv6's RTAX_FEATURE_ALLFRAG went in the same release. */
#define TCP_OPT_HAVE_ALLFRAG	1
#endif

/* tcp_current_mss() subtracts what a segment's options add beyond
 * tcp_header_len. On 6.1 an accepted socket counts an MD5 option there
 * (tcp_create_openreq_child()); since 6.7 it counts TCP-AO instead, and
 * MD5 costs its 20 bytes of MSS in every segment.
 */
#ifdef TCP_OPT_HAVE_TCP_KEY
#define TCP_OPT_HDRLEN_MD5	0
#else
#define TCP_OPT_HDRLEN_MD5	TCPOLEN_MD5SIG_ALIGNED
#endif
#define MD5_MSS_COST		(TCPOLEN_MD5SIG_ALIGNED - TCP_OPT_HDRLEN_MD5)

/* AccECN (RFC 9768) came with 6.18: the option kinds, the request's
 * accecn_ok and the connection's received ECN byte counters.
 */
#ifdef TCPOPT_ACCECN1
#define TCP_OPT_HAVE_ACCECN	1
#endif

/* The path manager's calls that send ADD_ADDR, RM_ADDR and MP_PRIO: on
 * the trees here, the one with struct mptcp_pm_ops (7.3) names them
 * mptcp_pm_addr_send_ack() and mptcp_pm_mp_prio_send_ack(); 6.1 and 6.12
 * have them with "nl_" in the name.
 */
#ifdef MPTCP_PM_NAME_MAX
#define TCP_OPT_HAVE_MPTCP_PM_OPS	1
#endif

/* Since 6.12 an MPTCP client whose SYNs with MP_CAPABLE are lost falls
 * back to TCP ("mptcp: fallback to TCP after SYN+MPC drops"), with no
 * macro of its own; device memory TCP's socket options came in the same
 * release.
 */
#ifdef SO_DEVMEM_DONTNEED
#define TCP_OPT_HAVE_MPTCP_MPC_DROP	1
#endif

/* Compare @len option bytes. KUNIT_EXPECT_MEMEQ() appeared in 6.2; older
 * trees get a memcmp() that prints both buffers the same way.
 */
#ifdef KUNIT_EXPECT_MEMEQ_MSG
#define tcp_opt_expect_bytes(test, got, want, len, name)		\
	KUNIT_EXPECT_MEMEQ_MSG(test, got, want, len, "case %s", name)
#else
static inline void tcp_opt_expect_bytes(struct kunit *test, const u8 *got,
					const u8 *want, unsigned int len,
					const char *name)
{
	if (memcmp(got, want, len))
		KUNIT_FAIL(test,
			   "case %s: option bytes differ\n\tgot:  %*ph\n\twant: %*ph",
			   name, len, got, len, want);
}
#endif

/* 6.7 (TCP-AO) moved the MD5 lookup out of the calculators: they take a
 * struct tcp_key the caller fills with tcp_get_current_key(), and the
 * writer takes it too (TCP_OPT_HAVE_TCP_KEY, above).
 * struct tcp_opt_key holds whichever the tree has.
 */
struct tcp_opt_key {
#ifdef TCP_OPT_HAVE_TCP_KEY
	struct tcp_key key;
#else
	struct tcp_md5sig_key *md5;
#endif
};

#ifdef CONFIG_TCP_MD5SIG
static inline void tcp_opt_md5_needed_inc(void)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	static_branch_inc(&tcp_md5_needed.key);
#else
	static_branch_inc(&tcp_md5_needed);
#endif
}

static inline void tcp_opt_md5_needed_dec(void)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	static_branch_dec(&tcp_md5_needed.key);
#else
	static_branch_dec(&tcp_md5_needed);
#endif
}
#endif

/* A SYN-ACK's key comes from the listener's lookup, not the socket. */
static inline void tcp_opt_key_set_md5(struct tcp_opt_key *k,
				       struct tcp_md5sig_key *md5)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	k->key.type = md5 ? TCP_KEY_MD5 : TCP_KEY_NONE;
	k->key.md5_key = md5;
#else
	k->md5 = md5;
#endif
}

/* No key signs the segment: what a sizer must leave when none is in use. */
static inline bool tcp_opt_key_is_none(const struct tcp_opt_key *k)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	return k->key.type == TCP_KEY_NONE;
#else
	return !k->md5;
#endif
}

/* The transmit path holds the socket lock (bh_lock_sock() in softirq), which
 * tcp_get_current_key(), __sk_dst_get() and the writer's TCP-AO branch
 * check with lockdep_sock_is_held(). The zeroed socket's spinlock gets a
 * lockdep class from tcp_opt_init_sock_lock().
 */
static inline void tcp_opt_init_sock_lock(struct sock *sk)
{
	spin_lock_init(&sk->sk_lock.slock);
}

static inline void tcp_opt_lock_sock(const struct sock *sk)
{
	spin_lock_bh(&((struct sock *)sk)->sk_lock.slock);
}

static inline void tcp_opt_unlock_sock(const struct sock *sk)
{
	spin_unlock_bh(&((struct sock *)sk)->sk_lock.slock);
}

#ifdef CONFIG_TCP_MD5SIG
/* Where the receive path finds the MD5 hash, NULL if there is none. */
static inline const u8 *tcp_opt_parse_md5(const struct tcphdr *th)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	const u8 *md5 = NULL;

	if (tcp_parse_auth_options(th, &md5, NULL))
		return NULL;
	return md5;
#else
	return tcp_parse_md5sig_option(th);
#endif
}
#endif

/* Where the receive path finds the TCP-AO option, NULL if none. */
static inline const u8 *tcp_opt_parse_ao(const struct tcphdr *th)
{
#ifdef TCP_OPT_HAVE_TCP_KEY
	const struct tcp_ao_hdr *aoh = NULL;

	if (tcp_parse_auth_options(th, NULL, &aoh))
		return NULL;
	return (const u8 *)aoh;
#else
	return NULL;
#endif
}

#ifdef TCP_OPT_HAVE_AO
static inline void tcp_opt_key_set_ao(struct tcp_opt_key *k,
				      struct tcp_ao_key *ao)
{
	k->key.type = TCP_KEY_AO;
	k->key.ao_key = ao;
}
#endif

#endif /* _TCP_OPTIONS_TEST_COMPAT_H */
