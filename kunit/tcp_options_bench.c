// SPDX-License-Identifier: GPL-2.0
/*
 * What the option calculators and the writer cost per call, for the
 * layouts a busy host sends most: a plain ACK with TS, an ACK with three
 * SACK blocks, and a SYN. `./run.sh bench` boots this suite twice, on the
 * patched tree and on the pristine one with the same config, and reports
 * the ratio: the refactor must not make the transmit path slower.
 *
 * Included from tcp_options_test.c under CONFIG_TCP_OPTIONS_KUNIT_BENCH,
 * the suite
 * also times the exhaustive sweep with its MSS axis 1, 4 and 16 times as
 * wide, to show how the sweep grows.
 *
 * The cases are slow and not part of the default run: run.sh's default
 * filter leaves the tcp_opt_bench suite out.
 */
#include <kunit/test.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/tcp.h>

#include "tcp_options_test_compat.h"

#ifndef KUNIT_CASE_SLOW		/* 6.5 added the speed attribute */
#define KUNIT_CASE_SLOW(test_name)	KUNIT_CASE(test_name)
#endif

#define TCP_BENCH_CALLS		100000
#define TCP_BENCH_REPS		7

enum tcp_bench_layout {
	TCP_BENCH_ACK_TS,
	TCP_BENCH_ACK_SACK3,
	TCP_BENCH_SYN,
	TCP_BENCH_LAYOUTS
};

static const char * const tcp_bench_names[] = {
	[TCP_BENCH_ACK_TS]	= "ack_ts",
	[TCP_BENCH_ACK_SACK3]	= "ack_sack3",
	[TCP_BENCH_SYN]		= "syn",
};

struct tcp_bench_env {
	struct net *net;
	struct tcp_sock *tp;
	struct sk_buff *skb;
	u8 hdr[sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE] __aligned(4);
};

/* Keeps the compiler from dropping the calls it times. */
static unsigned int tcp_bench_sink;

static struct sock *tcp_bench_sk(struct tcp_bench_env *env)
{
	return &env->tp->inet_conn.icsk_inet.sk;
}

static void tcp_bench_setup(struct tcp_bench_env *env,
			    enum tcp_bench_layout layout)
{
	struct tcp_sock *tp = env->tp;
	int i;

	memset(tp, 0, sizeof(*tp));
	write_pnet(&tp->inet_conn.icsk_inet.sk.sk_net, env->net);
	env->net->ipv4.sysctl_tcp_timestamps = 1;
	env->net->ipv4.sysctl_tcp_sack = 1;
	env->net->ipv4.sysctl_tcp_window_scaling = 1;
	env->skb->skb_mstamp_ns = NSEC_PER_SEC;
	tp->advmss = 1460;
	tp->rx_opt.rcv_wscale = 7;
	tp->rx_opt.tstamp_ok = 1;
	if (layout != TCP_BENCH_ACK_SACK3)
		return;
	tp->rx_opt.num_sacks = 3;
	for (i = 0; i < 3; i++)
		tp->selective_acks[i] = (struct tcp_sack_block)
			{ 0x1000 * (2 * i + 1), 0x1000 * (2 * i + 2) };
}

static unsigned int tcp_bench_calc(struct tcp_bench_env *env,
				   enum tcp_bench_layout layout,
				   struct tcp_out_options *opts,
				   struct tcp_opt_key *key)
{
	memset(opts, 0, sizeof(*opts));
	memset(key, 0, sizeof(*key));
	return tcp_opt_sock_options(tcp_bench_sk(env), env->skb, opts, key,
				    layout == TCP_BENCH_SYN);
}

/* Picoseconds per call of the size calculator the layout uses. */
static u64 tcp_bench_time_calc(struct tcp_bench_env *env,
			       enum tcp_bench_layout layout)
{
	struct tcp_out_options opts;
	struct tcp_opt_key key;
	unsigned int i, sum = 0;
	u64 start = ktime_get_ns();

	for (i = 0; i < TCP_BENCH_CALLS; i++)
		sum += tcp_bench_calc(env, layout, &opts, &key);
	WRITE_ONCE(tcp_bench_sink, sum);
	return div_u64((ktime_get_ns() - start) * 1000, TCP_BENCH_CALLS);
}

/* Picoseconds per call of tcp_options_write() for the layout. */
static u64 tcp_bench_time_write(struct tcp_bench_env *env,
				enum tcp_bench_layout layout)
{
	struct tcphdr *th = (struct tcphdr *)env->hdr;
	struct tcp_out_options opts;
	struct tcp_opt_key key;
	unsigned int i, sum = 0;
	u64 start;

	tcp_bench_calc(env, layout, &opts, &key);
	start = ktime_get_ns();
	for (i = 0; i < TCP_BENCH_CALLS; i++) {
		tcp_opt_options_write(th, env->tp, NULL, &opts, &key);
		sum += env->hdr[sizeof(*th)];
	}
	WRITE_ONCE(tcp_bench_sink, sum);
	return div_u64((ktime_get_ns() - start) * 1000, TCP_BENCH_CALLS);
}

static void tcp_bench_report(struct kunit *test, enum tcp_bench_layout layout,
			     const char *function, u64 ps, int rep)
{
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# bench: %s %s %llu.%03llu ns/call rep %d",
		  tcp_bench_names[layout], function, div_u64(ps, 1000),
		  ps % 1000, rep);
}

/* Repetitions go round all layouts, so that a slow spell of the host
 * hits every layout alike rather than one of them.
 */
static void tcp_bench_hotpath_test(struct kunit *test)
{
	struct tcp_bench_env *env;
	int rep, layout;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env);
	env->net = kunit_kzalloc(test, sizeof(*env->net), GFP_KERNEL);
	env->tp = kunit_kzalloc(test, sizeof(*env->tp), GFP_KERNEL);
	env->skb = kunit_kzalloc(test, sizeof(*env->skb), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, env->net && env->tp && env->skb);

	for (rep = 1; rep <= TCP_BENCH_REPS; rep++) {
		for (layout = 0; layout < TCP_BENCH_LAYOUTS; layout++) {
			tcp_bench_setup(env, layout);
			tcp_bench_report(test, layout,
					 layout == TCP_BENCH_SYN ?
					 "tcp_syn_options" :
					 "tcp_established_options",
					 tcp_bench_time_calc(env, layout), rep);
			tcp_bench_report(test, layout, "tcp_options_write",
					 tcp_bench_time_write(env, layout), rep);
		}
	}
	KUNIT_EXPECT_NE(test, tcp_bench_sink, 0U);
}

#ifdef TCP_OPT_BENCH_WITH_SWEEP	/* included from tcp_options_test.c */
/* The sweep with 1, 4 and 16 times as many MSS values, records unprinted. */
static void tcp_bench_sweep_scale_test(struct kunit *test)
{
	static const unsigned int factors[] = { 1, 4, 16 };
	unsigned int f, i, count;
	u64 start;

	tcp_opt_sweep_quiet = true;
	for (f = 0; f < ARRAY_SIZE(factors); f++) {
		tcp_opt_sweep_scale = factors[f];
		count = 0;
		start = ktime_get_ns();
		for (i = 0; i < ARRAY_SIZE(tcp_opt_sweep_groups); i++) {
#ifndef TCP_OPT_HAVE_AO
			if (tcp_opt_sweep_groups[i].ao)
				continue;	/* would skip the whole case */
#endif
			count += tcp_opt_sweep_run_group(test,
							 &tcp_opt_sweep_groups[i]);
		}
		kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT
			  KUNIT_SUBTEST_INDENT
			  "# sweep-scale: %ux %u combinations in %llu us",
			  factors[f], count,
			  div_u64(ktime_get_ns() - start, NSEC_PER_USEC));
	}
	tcp_opt_sweep_scale = 1;
	tcp_opt_sweep_quiet = false;
}
#endif

static struct kunit_case tcp_opt_bench_test_cases[] = {
	KUNIT_CASE_SLOW(tcp_bench_hotpath_test),
#ifdef TCP_OPT_BENCH_WITH_SWEEP
	KUNIT_CASE_SLOW(tcp_bench_sweep_scale_test),
#endif
	{}
};

static struct kunit_suite tcp_opt_bench_suite = {
	.name = "tcp_opt_bench",
#ifdef TCP_OPT_BENCH_WITH_SWEEP
	.init = tcp_opt_test_init,
	.exit = tcp_opt_test_exit,
#endif
	.test_cases = tcp_opt_bench_test_cases,
};

kunit_test_suite(tcp_opt_bench_suite);
