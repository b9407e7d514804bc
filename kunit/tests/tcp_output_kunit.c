// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the options of outgoing TCP segments: which options the
 * SYN, SYN-ACK and established calculators choose, how many bytes they
 * take, and the bytes tcp_options_write() puts on the wire.
 *
 * Every expected value is written by hand from the option formats (RFC
 * 9293 MSS, RFC 7323 TS and WS, RFC 2018 SACK, RFC 2385 MD5, RFC 5925
 * TCP-AO, RFC 7413 and RFC 6994 Fast Open, RFC 8684 MPTCP, the AccECN
 * draft), the 40 bytes of option space, and the order Linux has kept
 * since commit fd6149d33297 ("tcp: Restore ordering of TCP options for
 * the sake of inter-operability").
 */

#include <kunit/test.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "../tcp_options.h"

#ifdef OPTION_AO
/* The aligned TCP-AO option with a 12-byte MAC (HMAC-SHA1-96) and a
 * 16-byte one (AES-128-CMAC-128): 4 bytes of header plus the MAC.
 */
#define AO_LEN_MAC12	16
#define AO_LEN_MAC16	20
#endif

/* A cookie request (length 0), and 8-byte cookies c0 c1 ... c7. */
#define COOKIE_C0_C7	cpu_to_le64(0xc7c6c5c4c3c2c1c0ULL)

static struct tcp_fastopen_cookie foc_request = { .len = 0 };

static struct tcp_fastopen_cookie foc_8 = {
	.len = 8, .val = { COOKIE_C0_C7 },
};

static struct tcp_fastopen_cookie foc_exp_8 = {
	.len = 8, .exp = true, .val = { COOKIE_C0_C7 },
};

static struct tcp_fastopen_cookie foc_16 = { .len = 16 };

struct syn_layout_case {
	const char *name;
	struct tcp_syn_opt_req req;
	u16 options;		/* OPTION_* bits chosen */
	unsigned int size;	/* option space taken */
};

/* MSS 1460 and window scale 7 with every option the sysctls allow. */
#define SYN_ALL		.mss = 1460, .ws = 7, .tstamp_ok = 1, .wscale_ok = 1, \
			.sack_ok = 1
#define TS_WS_SACK	(OPTION_TS | OPTION_WSCALE | OPTION_SACK_ADVERTISE)

static const struct syn_layout_case syn_layout_cases[] = {
	{
		/* <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7> */
		.name = "mss_sackperm_ts_ws",
		.req = { SYN_ALL },
		.options = TS_WS_SACK, .size = 20,
	},
	{
		/* <mss 1460,nop,nop,sackOK,nop,wscale 7> */
		.name = "no_ts",
		.req = { .mss = 1460, .ws = 7, .wscale_ok = 1, .sack_ok = 1 },
		.options = OPTION_WSCALE | OPTION_SACK_ADVERTISE, .size = 12,
	},
	{
		/* <mss 1460> */
		.name = "mss_only",
		.req = { .mss = 1460 },
		.options = 0, .size = 4,
	},
	{
		/* MD5 takes 20 bytes and switches TS off: 20 + 4 + 4 + 4 */
		.name = "md5_drops_ts",
		.req = { SYN_ALL, .md5 = 1 },
		.options = OPTION_MD5 | OPTION_WSCALE | OPTION_SACK_ADVERTISE,
		.size = 32,
	},
#ifdef OPTION_AO
	{
		/* TCP-AO keeps TS: 16 + 4 + 12 + 4 */
		.name = "ao_mac12_keeps_ts",
		.req = { SYN_ALL, .ao_len = AO_LEN_MAC12 },
		.options = OPTION_AO | TS_WS_SACK, .size = 36,
	},
#endif
	{
		/* A cookie request takes 2 bytes, padded to 4 */
		.name = "fastopen_cookie_request",
		.req = { SYN_ALL, .foc = &foc_request },
		.options = TS_WS_SACK | OPTION_FAST_OPEN_COOKIE, .size = 24,
	},
	{
		/* RFC 7413: 2 + 8 bytes, padded to 12 */
		.name = "fastopen_cookie8",
		.req = { SYN_ALL, .foc = &foc_8 },
		.options = TS_WS_SACK | OPTION_FAST_OPEN_COOKIE, .size = 32,
	},
	{
		/* RFC 6994: 4 + 8 bytes */
		.name = "fastopen_exp_cookie8",
		.req = { SYN_ALL, .foc = &foc_exp_8 },
		.options = TS_WS_SACK | OPTION_FAST_OPEN_COOKIE, .size = 32,
	},
	{
		/* 2 + 16 bytes padded to 20 would make 40: it just fits */
		.name = "fastopen_cookie16_fills_40",
		.req = { SYN_ALL, .foc = &foc_16 },
		.options = TS_WS_SACK | OPTION_FAST_OPEN_COOKIE, .size = 40,
	},
	{
		/* MD5 leaves 8 bytes after MSS, WS and SACK_PERM: no room
		 * for a 12-byte cookie, which is left out
		 */
		.name = "md5_no_room_for_cookie8",
		.req = { SYN_ALL, .md5 = 1, .foc = &foc_8 },
		.options = OPTION_MD5 | OPTION_WSCALE | OPTION_SACK_ADVERTISE,
		.size = 32,
	},
};

static const struct syn_layout_case synack_layout_cases[] = {
	{
		.name = "mss_sackperm_ts_ws",
		.req = { SYN_ALL },
		.options = TS_WS_SACK, .size = 20,
	},
	{
		/* SACK wins over TS when MD5 leaves no room for both */
		.name = "md5_sack_drops_ts",
		.req = { SYN_ALL, .md5 = 1 },
		.options = OPTION_MD5 | OPTION_WSCALE | OPTION_SACK_ADVERTISE,
		.size = 32,
	},
	{
		/* Without SACK, MD5 keeps TS: 20 + 4 + 12 + 4 */
		.name = "md5_no_sack_keeps_ts",
		.req = { .mss = 1460, .ws = 7, .tstamp_ok = 1, .wscale_ok = 1,
			 .md5 = 1 },
		.options = OPTION_MD5 | OPTION_TS | OPTION_WSCALE, .size = 40,
	},
	{
		/* Commit e114e1e8ac9d ("tcp: md5: do not send silly options
		 * in SYNCOOKIES"): the cookie's options live in TS
		 */
		.name = "md5_syncookie_keeps_ts",
		.req = { SYN_ALL, .md5 = 1, .syncookie = 1 },
		.options = OPTION_MD5 | TS_WS_SACK, .size = 40,
	},
#ifdef OPTION_AO
	{
		.name = "ao_sack_drops_ts",
		.req = { SYN_ALL, .ao_len = AO_LEN_MAC12 },
		.options = OPTION_AO | OPTION_WSCALE | OPTION_SACK_ADVERTISE,
		.size = 28,
	},
	{
		/* Guards "tcp: keep the timestamp on TCP-AO syncookie
		 * SYN-ACKs": 16 + 4 + 12 + 4, and 20 + 4 + 12 + 4 with a
		 * 16-byte MAC
		 */
		.name = "ao_syncookie_keeps_ts",
		.req = { SYN_ALL, .ao_len = AO_LEN_MAC12, .syncookie = 1 },
		.options = OPTION_AO | TS_WS_SACK, .size = 36,
	},
	{
		.name = "ao_mac16_syncookie_keeps_ts",
		.req = { SYN_ALL, .ao_len = AO_LEN_MAC16, .syncookie = 1 },
		.options = OPTION_AO | TS_WS_SACK, .size = 40,
	},
#endif
	{
		.name = "fastopen_cookie8",
		.req = { SYN_ALL, .foc = &foc_8 },
		.options = TS_WS_SACK | OPTION_FAST_OPEN_COOKIE, .size = 32,
	},
};

/* What the calculators get from their callers: tcp_current_mss() an
 * uninitialised struct, __tcp_transmit_skb() one whose "cleared" group
 * alone is zeroed. A layout function chooses its options from nothing.
 */
static void stale_opts(struct tcp_out_options *opts)
{
	memset(opts, 0xa5, sizeof(*opts));
}

KUNIT_ARRAY_PARAM_DESC(syn_layout, syn_layout_cases, name);
KUNIT_ARRAY_PARAM_DESC(synack_layout, synack_layout_cases, name);

static void expect_syn_layout(struct kunit *test,
			      const struct syn_layout_case *c,
			      const struct tcp_out_options *opts,
			      unsigned int size)
{
	KUNIT_EXPECT_EQ(test, size, c->size);
	KUNIT_EXPECT_EQ(test, opts->options, c->options);
	KUNIT_EXPECT_EQ(test, opts->mss, c->req.mss);
	if (c->options & OPTION_WSCALE)
		KUNIT_EXPECT_EQ(test, opts->ws, c->req.ws);
	if (c->options & OPTION_FAST_OPEN_COOKIE)
		KUNIT_EXPECT_PTR_EQ(test, opts->fastopen_cookie, c->req.foc);
}

static void syn_layout_test(struct kunit *test)
{
	const struct syn_layout_case *c = test->param_value;
	struct tcp_out_options opts;
	unsigned int size;

	stale_opts(&opts);
	size = tcp_syn_options_layout(&c->req, &opts);
	expect_syn_layout(test, c, &opts, size);
}

static void synack_layout_test(struct kunit *test)
{
	const struct syn_layout_case *c = test->param_value;
	struct tcp_out_options opts;
	unsigned int size;

	stale_opts(&opts);
	size = tcp_synack_options_layout(&c->req, &opts);
	expect_syn_layout(test, c, &opts, size);
}

#ifdef OPTION_ACCECN
/* Bit-fields, which the KUNIT_EXPECT macros cannot take the type of */
static u8 accecn_fields(const struct tcp_out_options *opts)
{
	return opts->num_accecn_fields;
}

static u8 synack_ecn_bytes(const struct tcp_out_options *opts)
{
	return opts->use_synack_ecn_bytes;
}
#endif

struct est_layout_case {
	const char *name;
	struct tcp_est_opt_req req;
	u8 mptcp_size;		/* MPTCP's bytes, between start and finish */
	u16 options;
	u8 sack_blocks;
#ifdef OPTION_ACCECN
	u8 accecn_fields;
#endif
	unsigned int size;	/* option space taken, MPTCP's included */
	u16 tcp_header_len;	/* what mss_cache was sized for */
	int header_delta;	/* what tcp_current_mss() takes off it */
};

/* A connection with timestamps sizes mss_cache for a 20-byte header plus
 * the 12 aligned bytes of TS (tcp_connect_init(), tcp_rcv_synsent_state_
 * process()); one without, for the bare 20 bytes.
 */
#define HDR_TS		32
#define HDR_NO_TS	20

static const struct est_layout_case est_layout_cases[] = {
	{
		/* <nop,nop,TS val 3 ecr 2>: the usual header, no delta */
		.name = "ts",
		.req = { .tstamp_ok = 1 },
		.options = OPTION_TS, .size = 12,
		.tcp_header_len = HDR_TS, .header_delta = 0,
	},
	{
		.name = "no_options",
		.req = {},
		.options = 0, .size = 0,
		.tcp_header_len = HDR_NO_TS, .header_delta = 0,
	},
	{
		/* 12 + 4 + 8: one block costs the MSS 12 bytes */
		.name = "ts_1_sack",
		.req = { .tstamp_ok = 1, .eff_sacks = 1 },
		.options = OPTION_TS, .sack_blocks = 1, .size = 24,
		.tcp_header_len = HDR_TS, .header_delta = 12,
	},
	{
		/* 12 + 4 + 3 * 8 = 40: the fourth block does not fit */
		.name = "ts_4_sacks_truncated_to_3",
		.req = { .tstamp_ok = 1, .eff_sacks = 4 },
		.options = OPTION_TS, .sack_blocks = 3, .size = 40,
		.tcp_header_len = HDR_TS, .header_delta = 28,
	},
	{
		/* 4 + 4 * 8 = 36 */
		.name = "no_ts_4_sacks",
		.req = { .eff_sacks = 4 },
		.options = 0, .sack_blocks = 4, .size = 36,
		.tcp_header_len = HDR_NO_TS, .header_delta = 36,
	},
	{
		/* D-SACK plus four SACK blocks: still three */
		.name = "ts_dsack_4_sacks_truncated_to_3",
		.req = { .tstamp_ok = 1, .eff_sacks = 5 },
		.options = OPTION_TS, .sack_blocks = 3, .size = 40,
		.tcp_header_len = HDR_TS, .header_delta = 28,
	},
	{
		/* Guards commit 9424e2e7ad93 ("tcp: md5: fix potential
		 * overestimation of TCP option space"): MD5 + TS leave 8
		 * bytes, less than a block needs, so no SACK option at all
		 */
		.name = "md5_ts_no_room_for_sack",
		.req = { .md5 = 1, .tstamp_ok = 1, .eff_sacks = 1 },
		.options = OPTION_MD5 | OPTION_TS, .size = 32,
		.tcp_header_len = HDR_TS + TCPOLEN_MD5SIG_ALIGNED,
		.header_delta = 0,
	},
	{
		/* 20 + 4 + 2 * 8 = 40 */
		.name = "md5_no_ts_2_sacks",
		.req = { .md5 = 1, .eff_sacks = 3 },
		.options = OPTION_MD5, .sack_blocks = 2, .size = 40,
		.tcp_header_len = HDR_NO_TS + TCPOLEN_MD5SIG_ALIGNED,
		.header_delta = 20,
	},
#ifdef OPTION_AO
	{
		/* 16 + 12 + 4 + 8 = 40: AO + TS leave one block */
		.name = "ao_mac12_ts_1_sack",
		.req = { .ao_len = AO_LEN_MAC12, .tstamp_ok = 1, .eff_sacks = 3 },
		.options = OPTION_AO | OPTION_TS, .sack_blocks = 1, .size = 40,
		.tcp_header_len = HDR_TS + AO_LEN_MAC12, .header_delta = 12,
	},
	{
		/* 20 + 12 = 32: AO with a 16-byte MAC + TS leave none */
		.name = "ao_mac16_ts_no_sack",
		.req = { .ao_len = AO_LEN_MAC16, .tstamp_ok = 1, .eff_sacks = 3 },
		.options = OPTION_AO | OPTION_TS, .size = 32,
		.tcp_header_len = HDR_TS + AO_LEN_MAC16, .header_delta = 0,
	},
#endif
	{
		/* MPTCP comes before SACK: TS 12 + a 20-byte DSS (RFC 8684
		 * 3.3: data ACK and mapping) leave 8 bytes, no block
		 */
		.name = "mptcp_dss20_before_sack",
		.req = { .tstamp_ok = 1, .eff_sacks = 2 },
		.mptcp_size = 20,
		.options = OPTION_TS, .size = 32,
		.tcp_header_len = HDR_TS, .header_delta = 20,
	},
	{
		/* TS 12 + an 8-byte DSS (data ACK only) leave 20: 2 blocks */
		.name = "mptcp_dss8_2_sacks",
		.req = { .tstamp_ok = 1, .eff_sacks = 3 },
		.mptcp_size = 8,
		.options = OPTION_TS, .sack_blocks = 2, .size = 40,
		.tcp_header_len = HDR_TS, .header_delta = 28,
	},
	{
		/* No TS; a 28-byte DSS (64-bit data ACK and mapping, RFC 8684
		 * 3.3) leaves exactly 12 bytes: the base and one block fit
		 */
		.name = "mptcp_dss28_1_sack",
		.req = { .eff_sacks = 2 },
		.mptcp_size = 28,
		.options = 0, .sack_blocks = 1, .size = 40,
		.tcp_header_len = HDR_NO_TS, .header_delta = 40,
	},
#ifdef OPTION_ACCECN
	{
		/* AccECN with all three fields (11 bytes, padded to 12) */
		.name = "accecn_3_fields",
		.req = { .tstamp_ok = 1, .accecn = 1 },
		.options = OPTION_TS | OPTION_ACCECN, .accecn_fields = 3,
		.size = 24, .tcp_header_len = HDR_TS, .header_delta = 12,
	},
	{
		/* With 40 bytes taken, an empty AccECN option (2 bytes)
		 * goes in the two NOPs before the SACK option
		 */
		.name = "accecn_empty_in_sack_nops",
		.req = { .tstamp_ok = 1, .eff_sacks = 3, .accecn = 1 },
		.options = OPTION_TS | OPTION_ACCECN, .sack_blocks = 3,
		.accecn_fields = 0, .size = 40,
		.tcp_header_len = HDR_TS, .header_delta = 28,
	},
	{
		/* Needing one field, AccECN takes a SACK block's 8 bytes:
		 * TS 12 + SACK 4 + 2 * 8 + AccECN 2 + 2 * 3 = 40
		 */
		.name = "accecn_takes_a_sack_block",
		.req = { .tstamp_ok = 1, .eff_sacks = 3, .accecn = 1,
			 .accecn_minlen = 1 },
		.options = OPTION_TS | OPTION_ACCECN, .sack_blocks = 2,
		.accecn_fields = 2, .size = 40,
		.tcp_header_len = HDR_TS, .header_delta = 28,
	},
	{
		/* MD5 + TS leave 8 bytes: two fields, 2 + 2 * 3 */
		.name = "accecn_md5_ts_2_fields",
		.req = { .md5 = 1, .tstamp_ok = 1, .accecn = 1,
			 .accecn_minlen = 2 },
		.options = OPTION_MD5 | OPTION_TS | OPTION_ACCECN,
		.accecn_fields = 2, .size = 40,
		.tcp_header_len = HDR_TS + TCPOLEN_MD5SIG_ALIGNED,
		.header_delta = 8,
	},
	{
		/* Guards commit 77a4fdf43c5e: a SACK block that does not fit
		 * next to MD5 + TS leaves its 8 bytes to AccECN
		 */
		.name = "accecn_when_no_sack_fits",
		.req = { .md5 = 1, .tstamp_ok = 1, .eff_sacks = 1,
			 .accecn = 1 },
		.options = OPTION_MD5 | OPTION_TS | OPTION_ACCECN,
		.accecn_fields = 2, .size = 40,
		.tcp_header_len = HDR_TS + TCPOLEN_MD5SIG_ALIGNED,
		.header_delta = 8,
	},
	{
		/* TS + a 24-byte MPTCP option leave 4 bytes, too few for
		 * the two fields required: no AccECN option
		 */
		.name = "accecn_required_does_not_fit",
		.req = { .tstamp_ok = 1, .accecn = 1, .accecn_minlen = 2 },
		.mptcp_size = 24,
		.options = OPTION_TS, .size = 36,
		.tcp_header_len = HDR_TS, .header_delta = 24,
	},
#endif
};

KUNIT_ARRAY_PARAM_DESC(est_layout, est_layout_cases, name);

static void established_layout_test(struct kunit *test)
{
	const struct est_layout_case *c = test->param_value;
	struct tcp_out_options opts;
	unsigned int size;

	stale_opts(&opts);
	size = tcp_established_options_start(&c->req, &opts);
	size = tcp_established_options_finish(&c->req, &opts,
					      size + c->mptcp_size);

	KUNIT_EXPECT_EQ(test, size, c->size);
	KUNIT_EXPECT_LE(test, size, MAX_TCP_OPTION_SPACE);
	KUNIT_EXPECT_EQ(test, opts.options, c->options);
	KUNIT_EXPECT_EQ(test, opts.num_sack_blocks, c->sack_blocks);
#ifdef OPTION_ACCECN
	if (c->options & OPTION_ACCECN)
		KUNIT_EXPECT_EQ(test, accecn_fields(&opts), c->accecn_fields);
	/* An established segment reports the connection's counters, not
	 * the ones the SYN-ACK echoes
	 */
	if (c->req.accecn)
		KUNIT_EXPECT_EQ(test, synack_ecn_bytes(&opts), 0);
#endif
	KUNIT_EXPECT_EQ(test, tcp_options_header_delta(size, c->tcp_header_len),
			c->header_delta);
}

/* The header a connection's mss_cache is sized for is what its plain
 * segments carry: tcp_current_mss() takes nothing off for them.
 */
static void header_delta_zero_for_plain_segments(struct kunit *test)
{
	struct tcp_est_opt_req ts = { .tstamp_ok = 1 };
	struct tcp_est_opt_req none = {};
	struct tcp_out_options opts = {};
	unsigned int size;

	size = tcp_established_options_start(&ts, &opts);
	KUNIT_EXPECT_EQ(test, tcp_options_header_delta(size, HDR_TS), 0);
	size = tcp_established_options_start(&none, &opts);
	KUNIT_EXPECT_EQ(test, tcp_options_header_delta(size, HDR_NO_TS), 0);
	/* Fewer options than usual give the MSS bytes back */
	KUNIT_EXPECT_EQ(test, tcp_options_header_delta(0, HDR_TS), -12);
}

#ifdef OPTION_ACCECN
struct accecn_synack_case {
	const char *name;
	struct tcp_syn_opt_req req;
	u8 accecn_fields;
	unsigned int size;
};

static const struct accecn_synack_case accecn_synack_cases[] = {
	{
		/* 20 + 12: the option's last byte cannot take WS's NOP
		 * alone, so it is padded
		 */
		.name = "all_options_3_fields",
		.req = { SYN_ALL },
		.accecn_fields = 3, .size = 32,
	},
	{
		/* MD5 + MSS + WS + SACK_PERM leave 8: two fields (8 bytes) */
		.name = "md5_2_fields",
		.req = { SYN_ALL, .md5 = 1 },
		.accecn_fields = 2, .size = 40,
	},
	{
		/* MD5 + MSS + WS + SACK_PERM + a cookie request leave 4:
		 * one field (5 bytes) takes a NOP of SACK_PERM's
		 */
		.name = "md5_fastopen_request_1_field",
		.req = { SYN_ALL, .md5 = 1, .foc = &foc_request },
		.accecn_fields = 1, .size = 40,
	},
};

KUNIT_ARRAY_PARAM_DESC(accecn_synack, accecn_synack_cases, name);

static void accecn_synack_test(struct kunit *test)
{
	const struct accecn_synack_case *c = test->param_value;
	struct tcp_out_options opts;
	unsigned int size;

	stale_opts(&opts);
	size = tcp_synack_options_layout(&c->req, &opts);
	opts.use_synack_ecn_bytes = 1;
	size += tcp_options_fit_accecn(&opts, 0, MAX_TCP_OPTION_SPACE - size);

	KUNIT_EXPECT_EQ(test, size, c->size);
	KUNIT_EXPECT_TRUE(test, opts.options & OPTION_ACCECN);
	KUNIT_EXPECT_EQ(test, accecn_fields(&opts), c->accecn_fields);
}
#endif

static struct kunit_case tcp_opt_layout_cases[] = {
	KUNIT_CASE_PARAM(syn_layout_test, syn_layout_gen_params),
	KUNIT_CASE_PARAM(synack_layout_test, synack_layout_gen_params),
	KUNIT_CASE_PARAM(established_layout_test, est_layout_gen_params),
	KUNIT_CASE(header_delta_zero_for_plain_segments),
#ifdef OPTION_ACCECN
	KUNIT_CASE_PARAM(accecn_synack_test, accecn_synack_gen_params),
#endif
	{}
};

static struct kunit_suite tcp_opt_layout_suite = {
	.name = "tcp_opt_layout",
	.test_cases = tcp_opt_layout_cases,
};

/* The writer, on a real TCP socket for the state it reads: the SACK
 * blocks and the AccECN counters. Callers hold the socket lock.
 */
struct write_case {
	const char *name;
	struct tcp_out_options opts;
	u8 dsack;		/* send tp->duplicate_sack, not selective_acks */
	u8 len;			/* bytes written */
	u8 bytes[MAX_TCP_OPTION_SPACE];
};

#define SYN_OPTS	.mss = 1460, .ws = 7, .tsval = 1, .tsecr = 0

static const struct write_case write_cases[] = {
	{
		/* <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>: MSS first,
		 * as commit fd6149d33297 restored after commit 33ad798c924b
		 * ("tcp: options clean up") made home routers drop SYNs
		 */
		.name = "syn_mss_first",
		.opts = { SYN_OPTS, .options = TS_WS_SACK },
		.len = 20,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0x04, 0x02, 0x08, 0x0a,
			   0, 0, 0, 1, 0, 0, 0, 0, 0x01, 0x03, 0x03, 0x07 },
	},
	{
		/* <mss 1460,nop,nop,sackOK,nop,wscale 7> */
		.name = "syn_no_ts",
		.opts = { SYN_OPTS,
			  .options = OPTION_WSCALE | OPTION_SACK_ADVERTISE },
		.len = 12,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0x01, 0x01, 0x04, 0x02,
			   0x01, 0x03, 0x03, 0x07 },
	},
	{
		/* <mss 1460,nop,nop,TS val 1 ecr 0,nop,wscale 7,tfo 8> */
		.name = "syn_fastopen_cookie8",
		.opts = { SYN_OPTS, .fastopen_cookie = &foc_8,
			  .options = OPTION_TS | OPTION_WSCALE |
				     OPTION_FAST_OPEN_COOKIE },
		.len = 32,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0x01, 0x01, 0x08, 0x0a,
			   0, 0, 0, 1, 0, 0, 0, 0, 0x01, 0x03, 0x03, 0x07,
			   0x22, 0x0a, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5,
			   0xc6, 0xc7, 0x01, 0x01 },
	},
	{
		/* RFC 6994: kind 254, length 12, ExID 0xf989 */
		.name = "syn_fastopen_exp_cookie8",
		.opts = { SYN_OPTS, .fastopen_cookie = &foc_exp_8,
			  .options = OPTION_FAST_OPEN_COOKIE },
		.len = 16,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0xfe, 0x0c, 0xf9, 0x89,
			   0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7 },
	},
	{
		/* <nop,nop,TS val 3 ecr 2,nop,nop,sack 1000:2000 3000:4000> */
		.name = "est_ts_sack_blocks",
		.opts = { .tsval = 3, .tsecr = 2, .options = OPTION_TS,
			  .num_sack_blocks = 2 },
		.len = 32,
		.bytes = { 0x01, 0x01, 0x08, 0x0a, 0, 0, 0, 3, 0, 0, 0, 2,
			   0x01, 0x01, 0x05, 0x12,
			   0, 0, 0x03, 0xe8, 0, 0, 0x07, 0xd0,
			   0, 0, 0x0b, 0xb8, 0, 0, 0x0f, 0xa0 },
	},
	{
		/* RFC 2883: the D-SACK block goes first, and only once */
		.name = "est_dsack",
		.opts = { .num_sack_blocks = 1 },
		.dsack = 1,
		.len = 12,
		.bytes = { 0x01, 0x01, 0x05, 0x0a,
			   0, 0, 0x01, 0xf4, 0, 0, 0x03, 0x84 },
	},
#ifdef OPTION_ACCECN
	{
		/* AccECN1 (kind 174) with its three fields at their start
		 * values, EE1B 1, ECEB 0, EE0B 1, then a NOP
		 */
		.name = "synack_accecn_3_fields",
		.opts = { .options = OPTION_ACCECN, .num_accecn_fields = 3,
			  .use_synack_ecn_bytes = 1 },
		.len = 12,
		.bytes = { 0xae, 0x0b, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0x01 },
	},
	{
		/* An empty AccECN option takes SACK_PERM's two NOPs */
		.name = "synack_accecn_empty_before_sackperm",
		.opts = { .mss = 1460, .ws = 7, .num_accecn_fields = 0,
			  .use_synack_ecn_bytes = 1,
			  .options = OPTION_ACCECN | OPTION_SACK_ADVERTISE |
				     OPTION_WSCALE },
		.len = 12,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0xae, 0x02, 0x04, 0x02,
			   0x01, 0x03, 0x03, 0x07 },
	},
	{
		/* One field: its last byte takes WS's NOP, and is not split
		 * from the rest of the option
		 */
		.name = "synack_accecn_1_field_before_ws",
		.opts = { .mss = 1460, .ws = 7, .num_accecn_fields = 1,
			  .use_synack_ecn_bytes = 1,
			  .options = OPTION_ACCECN | OPTION_WSCALE },
		.len = 12,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0xae, 0x05, 0, 0,
			   0x01, 0x03, 0x03, 0x07 },
	},
	{
		/* An empty option with nothing after it gets its own word */
		.name = "synack_accecn_empty_alone",
		.opts = { .mss = 1460, .num_accecn_fields = 0,
			  .use_synack_ecn_bytes = 1, .options = OPTION_ACCECN },
		.len = 8,
		.bytes = { 0x02, 0x04, 0x05, 0xb4, 0xae, 0x02, 0x01, 0x01 },
	},
#endif
};

KUNIT_ARRAY_PARAM_DESC(write, write_cases, name);

KUNIT_DEFINE_ACTION_WRAPPER(sock_release_action, sock_release,
			    struct socket *);

static struct tcp_sock *tcp_socket(struct kunit *test)
{
	struct socket *sock;
	int err;

	err = sock_create_kern(&init_net, PF_INET, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = kunit_add_action_or_reset(test, sock_release_action, sock);
	KUNIT_ASSERT_EQ(test, err, 0);
	return tcp_sk(sock->sk);
}

static void write_test(struct kunit *test)
{
	const struct write_case *c = test->param_value;
	struct tcp_out_options opts = c->opts;
#ifdef OPTION_AO
	struct tcp_key key = { .type = TCP_KEY_NONE };
#endif
	struct tcp_sock *tp = tcp_socket(test);
	struct sock *sk = (struct sock *)tp;
	u8 buf[sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE + 4];
	u8 dsack_left;

	memset(buf, 0x5a, sizeof(buf));
	lock_sock(sk);
	tp->selective_acks[0] = (struct tcp_sack_block){ 1000, 2000 };
	tp->selective_acks[1] = (struct tcp_sack_block){ 3000, 4000 };
	tp->duplicate_sack[0] = (struct tcp_sack_block){ 500, 900 };
	tp->rx_opt.dsack = c->dsack;
#ifdef OPTION_AO
	tcp_options_write((struct tcphdr *)buf, tp, NULL, &opts, &key);
#else
	tcp_options_write((struct tcphdr *)buf, tp, &opts);
#endif
	dsack_left = tp->rx_opt.dsack;
	release_sock(sk);

	/* A D-SACK block goes out once */
	KUNIT_EXPECT_EQ(test, dsack_left, 0);
	KUNIT_EXPECT_MEMEQ(test, buf + sizeof(struct tcphdr), c->bytes, c->len);
	/* Nothing past the options the layout accounted for */
	KUNIT_EXPECT_EQ(test, buf[sizeof(struct tcphdr) + c->len], 0x5a);
}

static struct kunit_case tcp_opt_write_cases[] = {
	KUNIT_CASE_PARAM(write_test, write_gen_params),
	{}
};

static struct kunit_suite tcp_opt_write_suite = {
	.name = "tcp_opt_write",
	.test_cases = tcp_opt_write_cases,
};

kunit_test_suites(&tcp_opt_layout_suite, &tcp_opt_write_suite);

MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
MODULE_DESCRIPTION("KUnit tests for the TCP option layout");
MODULE_LICENSE("GPL");
