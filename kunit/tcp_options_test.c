// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the TCP option writer and the option space calculators.
 *
 * This file is included at the end of net/ipv4/tcp_output.c when
 * CONFIG_TCP_OPTIONS_KUNIT_TEST is set, so it calls the static functions
 * tcp_syn_options(), tcp_synack_options(), tcp_established_options() and
 * tcp_options_write() directly, with a zeroed tcp_sock, request sock and
 * skb that hold only the fields those functions read.
 *
 * The expected layouts are golden 32-bit words written by hand from
 * RFC 9293 (MSS), RFC 7323 (window scale, timestamps), RFC 2018 (SACK),
 * RFC 2385 (MD5), RFC 7413 (Fast Open) and RFC 6994 (experimental option
 * 254 with magic 0xF989), laid out in the order Linux has used since
 * 2.6.27's fix: MD5, MSS, SACK_PERM+TS (or NOP,NOP,TS / NOP,NOP,SACK_PERM),
 * NOP+WS, SACK blocks, Fast Open. See the comment above tcp_options_write().
 */
#include <kunit/test.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/tcp.h>

#include "tcp_options_test.h"
#include "tcp_options_test_compat.h"
#if IS_ENABLED(CONFIG_MPTCP)
/* The subflow context and request the MPTCP rows fill in. */
#include "../mptcp/protocol.h"
#define TCP_OPT_REQ_SIZE	sizeof(struct mptcp_subflow_request_sock)
#else
#define TCP_OPT_REQ_SIZE	sizeof(struct tcp_request_sock)
#endif

/* Bytes after the 40-byte option space that must stay untouched. */
#define TCP_OPT_CANARY_LEN	16
/* Fill pattern: the writer never emits 0xa5 in the layouts tested here. */
#define TCP_OPT_POISON		0xa5
/* The writer leaves the 16 MD5 hash bytes for tcp_v4_md5_hash_hdr(). */
#define MD5_HASH_UNTOUCHED	0xa5a5a5a5
#define MD5_OPTION		0x01011312	/* nop,nop,kind 19,len 18 */

/* TCP-AO (RFC 5925): kind 29, length 4 + MAC, then the KeyID the segment
 * is signed with and the RNextKeyID the sender wants next. A socket's
 * keys, and a request's, carry different IDs so that a swap shows.
 */
#define AO_SNDID		0x07
#define AO_RNEXT		0x09
#define AO_REQ_KEYID		0x03
#define AO_REQ_RNEXT		0x04
#define AO_MAC_UNTOUCHED	0xa5a5a5a5
/* Timestamp values the test feeds each packet kind with. */
#define SYN_TSVAL		1
#define SYN_TSECR		0
#define SYNACK_TSVAL		2
#define SYNACK_TSECR		1
#define EST_TSVAL		3
#define EST_TSECR		2

/* SACK blocks the receiver holds: one D-SACK and four SACKs. */
#define DSACK_START		0x00000100
#define DSACK_END		0x00000200
#define SACK1_START		0x00001000
#define SACK1_END		0x00002000
#define SACK2_START		0x00003000
#define SACK2_END		0x00004000
#define SACK3_START		0x00005000
#define SACK3_END		0x00006000
#define SACK4_START		0x00007000
#define SACK4_END		0x00008000

/* AccECN (RFC 9768): the fields carry the low 24 bits of byte counters
 * that start at 1 (EE0B, EE1B) and 0 (ECEB) (section 3.2.1), in the
 * order EE1B, ECEB, EE0B of option kind 174 (section 3.2.3). The bytes
 * the connection counted: ECT(1) past 2^24, to show the field wraps.
 */
#define ACCECN_E1B		0x111111
#define ACCECN_CEB		0x222222
#define ACCECN_E0B		0x333333
#define ACCECN_ECT1_BYTES	(BIT(24) + ACCECN_E1B - 1)
#define ACCECN_CE_BYTES		ACCECN_CEB
#define ACCECN_ECT0_BYTES	(ACCECN_E0B - 1)

/* What the MPTCP handshake options carry (RFC 8684 sections 3.1, 3.2). */
#define MPTCP_TEST_LOCAL_ID	3
#define MPTCP_TEST_REMOTE_TOKEN	0x11223344
#define MPTCP_TEST_LOCAL_NONCE	0x55667788
#define MPTCP_TEST_LOCAL_KEY	0x0102030405060708ULL
#define MPTCP_TEST_THMAC	0x8877665544332211ULL
#define MPTCP_TEST_ACK_SEQ	0x0000000a0000000bULL

/* The mss_cache tcp_current_mss() starts from in established cases. */
#define EST_MSS_CACHE		1000

struct tcp_opt_env {
	struct net *net;
	struct tcp_sock *tp;
	struct tcp_request_sock *treq;
	struct sk_buff *skb;
	struct tcp_fastopen_request fo_req;
	struct tcp_md5sig_info *md5_info;
	struct tcp_opt_key key;
	bool md5_key_enabled;
#ifdef TCP_OPT_HAVE_AO
	struct tcp_ao_info *ao_info;
	struct tcp_ao_key *ao_key, *ao_rnext;
	bool ao_key_enabled;
#endif
#if IS_ENABLED(CONFIG_MPTCP)
	struct mptcp_subflow_context *subflow;
	struct mptcp_sock *msk;
#endif
	/* TCP header, option space and canary, as the writer sees them. */
	u8 buf[sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE +
	       TCP_OPT_CANARY_LEN] __aligned(4);
};

#ifdef CONFIG_TCP_MD5SIG
static struct tcp_md5sig_key tcp_opt_test_key = { .keylen = 16 };

static struct tcp_md5sig_key *
tcp_opt_test_md5_lookup(const struct sock *sk, const struct sock *addr)
{
	return &tcp_opt_test_key;
}

static const struct tcp_sock_af_ops tcp_opt_test_af_ops = {
	.md5_lookup	= tcp_opt_test_md5_lookup,
};

/* RFC 2385 keys are per peer: the socket has keys, none for this one. */
static struct tcp_md5sig_key *
tcp_opt_other_peer_md5_lookup(const struct sock *sk, const struct sock *addr)
{
	return NULL;
}

static const struct tcp_sock_af_ops tcp_opt_other_peer_af_ops = {
	.md5_lookup	= tcp_opt_other_peer_md5_lookup,
};
#endif

static const struct tcp_opt_case tcp_opt_syn_cases[] = {
	/* All eight combinations of the timestamps, SACK and window scaling
	 * sysctls, for two MSS and window scale values.
	 */
	{
		/* <mss 1460> */
		.name = "syn_none_mss1460",
		.in = { .pkt = TCP_OPT_SYN, .mss = 1460, .wscale = 7 },
		.out = { .size = 4, .words = { 0x020405b4 } },
	},
	{
		/* <mss 1460,nop,wscale 7> */
		.name = "syn_ws_mss1460_ws7",
		.in = { .pkt = TCP_OPT_SYN, .ws = 1, .mss = 1460, .wscale = 7 },
		.out = { .size = 8, .words = { 0x020405b4, 0x01030307 } },
	},
	{
		/* <mss 1460,nop,nop,sackOK> */
		.name = "syn_sack_mss1460",
		.in = { .pkt = TCP_OPT_SYN, .sack = 1, .mss = 1460, .wscale = 7 },
		.out = { .size = 8, .words = { 0x020405b4, 0x01010402 } },
	},
	{
		/* <mss 1460,nop,nop,sackOK,nop,wscale 7>: the layout the
		 * 2008 distributions fell back to with timestamps off.
		 */
		.name = "syn_sack_ws_mss1460_ws7",
		.in = { .pkt = TCP_OPT_SYN, .sack = 1, .ws = 1, .mss = 1460,
			.wscale = 7 },
		.out = { .size = 12,
			 .words = { 0x020405b4, 0x01010402, 0x01030307 } },
	},
	{
		/* <mss 1460,nop,nop,TS val 1 ecr 0> */
		.name = "syn_ts_mss1460",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .mss = 1460, .wscale = 7 },
		.out = { .size = 16, .words = { 0x020405b4, 0x0101080a,
						SYN_TSVAL, SYN_TSECR } },
	},
	{
		/* <mss 1460,nop,nop,TS val 1 ecr 0,nop,wscale 7> */
		.name = "syn_ts_ws_mss1460_ws7",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .ws = 1, .mss = 1460,
			.wscale = 7 },
		.out = { .size = 20, .words = { 0x020405b4, 0x0101080a,
						SYN_TSVAL, SYN_TSECR,
						0x01030307 } },
	},
	{
		/* <mss 1460,sackOK,TS val 1 ecr 0> */
		.name = "syn_ts_sack_mss1460",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .mss = 1460,
			.wscale = 7 },
		.out = { .size = 16, .words = { 0x020405b4, 0x0402080a,
						SYN_TSVAL, SYN_TSECR } },
	},
	{
		/* <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>: p0f's
		 * Linux signature mss,sok,ts,nop,ws.
		 */
		.name = "syn_ts_sack_ws_mss1460_ws7",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1460, .wscale = 7 },
		.out = { .size = 20, .words = { 0x020405b4, 0x0402080a,
						SYN_TSVAL, SYN_TSECR,
						0x01030307 } },
	},
	{
		/* A port reused from TIME-WAIT: tcp_twsk_unique() carries the
		 * old connection's ts_recent over, and the SYN echoes it
		 * (Linux keeps it for PAWS; RFC 7323 section 3.2 only says a
		 * segment without ACK SHOULD carry TSecr 0).
		 * <mss 1460,sackOK,TS val 1 ecr 305419896,nop,wscale 7>
		 */
		.name = "syn_ts_echoes_timewait_ts_recent",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1460, .wscale = 7, .tw_ts_recent = 0x12345678 },
		.out = { .size = 20, .words = { 0x020405b4, 0x0402080a,
						SYN_TSVAL, 0x12345678,
						0x01030307 } },
	},
	{
		/* <mss 536> */
		.name = "syn_none_mss536",
		.in = { .pkt = TCP_OPT_SYN, .mss = 536, .wscale = 14 },
		.out = { .size = 4, .words = { 0x02040218 } },
	},
	{
		/* <mss 536,nop,wscale 14> */
		.name = "syn_ws_mss536_ws14",
		.in = { .pkt = TCP_OPT_SYN, .ws = 1, .mss = 536, .wscale = 14 },
		.out = { .size = 8, .words = { 0x02040218, 0x0103030e } },
	},
	{
		/* <mss 536,nop,nop,sackOK> */
		.name = "syn_sack_mss536",
		.in = { .pkt = TCP_OPT_SYN, .sack = 1, .mss = 536, .wscale = 14 },
		.out = { .size = 8, .words = { 0x02040218, 0x01010402 } },
	},
	{
		/* <mss 536,nop,nop,sackOK,nop,wscale 14> */
		.name = "syn_sack_ws_mss536_ws14",
		.in = { .pkt = TCP_OPT_SYN, .sack = 1, .ws = 1, .mss = 536,
			.wscale = 14 },
		.out = { .size = 12,
			 .words = { 0x02040218, 0x01010402, 0x0103030e } },
	},
	{
		/* <mss 536,nop,nop,TS val 1 ecr 0> */
		.name = "syn_ts_mss536",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .mss = 536, .wscale = 14 },
		.out = { .size = 16, .words = { 0x02040218, 0x0101080a,
						SYN_TSVAL, SYN_TSECR } },
	},
	{
		/* <mss 536,nop,nop,TS val 1 ecr 0,nop,wscale 14> */
		.name = "syn_ts_ws_mss536_ws14",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .ws = 1, .mss = 536,
			.wscale = 14 },
		.out = { .size = 20, .words = { 0x02040218, 0x0101080a,
						SYN_TSVAL, SYN_TSECR,
						0x0103030e } },
	},
	{
		/* <mss 536,sackOK,TS val 1 ecr 0> */
		.name = "syn_ts_sack_mss536",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .mss = 536,
			.wscale = 14 },
		.out = { .size = 16, .words = { 0x02040218, 0x0402080a,
						SYN_TSVAL, SYN_TSECR } },
	},
	{
		/* <mss 536,sackOK,TS val 1 ecr 0,nop,wscale 14> */
		.name = "syn_ts_sack_ws_mss536_ws14",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1,
			.mss = 536, .wscale = 14 },
		.out = { .size = 20, .words = { 0x02040218, 0x0402080a,
						SYN_TSVAL, SYN_TSECR,
						0x0103030e } },
	},
	{
		/* Regression: 2.6.27's option clean-up, commit 33ad798c924b
		 * ("tcp: options clean up"), wrote SACK_PERM and TS before
		 * MSS. Home routers dropped such SYNs; commit fd6149d33297
		 * ("tcp: Restore ordering of TCP options for the sake of
		 * inter-operability") put MSS first again. MSS 1452 is the
		 * PPPoE value those routers clamp to.
		 * <mss 1452,sackOK,TS val 1 ecr 0,nop,wscale 2>
		 */
		.name = "regression_2_6_27_mss_before_sackperm_ts",
		.in = { .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1452, .wscale = 2 },
		.out = { .size = 20, .words = { 0x020405ac, 0x0402080a,
						SYN_TSVAL, SYN_TSECR,
						0x01030302 } },
	},
};

static const struct tcp_opt_case tcp_opt_synack_cases[] = {
	/* Every combination of tstamp_ok, sack_ok and wscale_ok. */
	{
		/* <mss 1440> */
		.name = "synack_none",
		.in = { .pkt = TCP_OPT_SYNACK, .mss = 1440, .wscale = 9 },
		.out = { .size = 4, .words = { 0x020405a0 } },
	},
	{
		/* <mss 1440,nop,wscale 9> */
		.name = "synack_ws",
		.in = { .pkt = TCP_OPT_SYNACK, .ws = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 8, .words = { 0x020405a0, 0x01030309 } },
	},
	{
		/* <mss 1440,nop,nop,sackOK> */
		.name = "synack_sack",
		.in = { .pkt = TCP_OPT_SYNACK, .sack = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 8, .words = { 0x020405a0, 0x01010402 } },
	},
	{
		/* <mss 1440,nop,nop,sackOK,nop,wscale 9> */
		.name = "synack_sack_ws",
		.in = { .pkt = TCP_OPT_SYNACK, .sack = 1, .ws = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 12,
			 .words = { 0x020405a0, 0x01010402, 0x01030309 } },
	},
	{
		/* <mss 1440,nop,nop,TS val 2 ecr 1> */
		.name = "synack_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 16, .words = { 0x020405a0, 0x0101080a,
						SYNACK_TSVAL, SYNACK_TSECR } },
	},
	{
		/* <mss 1440,nop,nop,TS val 2 ecr 1,nop,wscale 9> */
		.name = "synack_ts_ws",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .ws = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 20, .words = { 0x020405a0, 0x0101080a,
						SYNACK_TSVAL, SYNACK_TSECR,
						0x01030309 } },
	},
	{
		/* <mss 1440,sackOK,TS val 2 ecr 1> */
		.name = "synack_ts_sack",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .mss = 1440,
			.wscale = 9 },
		.out = { .size = 16, .words = { 0x020405a0, 0x0402080a,
						SYNACK_TSVAL, SYNACK_TSECR } },
	},
	{
		/* <mss 1440,sackOK,TS val 2 ecr 1,nop,wscale 9> */
		.name = "synack_ts_sack_ws",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1440, .wscale = 9 },
		.out = { .size = 20, .words = { 0x020405a0, 0x0402080a,
						SYNACK_TSVAL, SYNACK_TSECR,
						0x01030309 } },
	},
};

static const struct tcp_opt_case tcp_opt_md5_cases[] = {
	{
		/* RFC 2385 leaves no room for TS plus SACK blocks, so Linux
		 * never offers TS on a SYN that carries MD5.
		 * <nop,nop,md5,mss 1460,nop,nop,sackOK,nop,wscale 7>
		 */
		.name = "md5_syn_drops_ts",
		.in = { .pkt = TCP_OPT_SYN, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1460, .wscale = 7 },
		.out = { .size = 32, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405b4, 0x01010402, 0x01030307 } },
	},
	{
		/* <nop,nop,md5,mss 1460> */
		.name = "md5_syn_ts_only",
		.in = { .pkt = TCP_OPT_SYN, .md5 = 1, .ts = 1, .mss = 1460,
			.wscale = 7 },
		.out = { .size = 24, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405b4 } },
	},
	{
		/* RFC 2385 section 3 keys a connection by its peer: keys for
		 * other peers leave this SYN as it is without MD5.
		 * <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>
		 */
		.name = "md5_syn_other_peer_no_md5",
		.in = { .pkt = TCP_OPT_SYN, .md5_other_peer = 1, .ts = 1,
			.sack = 1, .ws = 1, .mss = 1460, .wscale = 7 },
		.out = { .size = 20, .words = { 0x020405b4, 0x0402080a,
						SYN_TSVAL, SYN_TSECR,
						0x01030307 } },
	},
	{
		/* With MD5 and SACK the SYN-ACK drops TS (the comment in
		 * tcp_synack_options(): SACK blocks would not fit later).
		 * <nop,nop,md5,mss 1440,nop,nop,sackOK,nop,wscale 9>
		 */
		.name = "md5_synack_sack_drops_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1440, .wscale = 9 },
		.out = { .size = 32, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405a0, 0x01010402, 0x01030309 } },
	},
	{
		/* The same for a peer that offers no window scale (the live
		 * suite's rewritten SYN).
		 * <nop,nop,md5,mss 1440,nop,nop,sackOK>
		 */
		.name = "md5_synack_sack_drops_ts_no_ws",
		.in = { .pkt = TCP_OPT_SYNACK, .md5 = 1, .ts = 1, .sack = 1,
			.mss = 1440, .wscale = 9 },
		.out = { .size = 28, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405a0, 0x01010402 } },
	},
	{
		/* <nop,nop,md5,mss 1440,nop,nop,TS val 2 ecr 1,nop,wscale 9> */
		.name = "md5_synack_no_sack_keeps_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .md5 = 1, .ts = 1, .ws = 1,
			.mss = 1440, .wscale = 9 },
		.out = { .size = 40, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405a0, 0x0101080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309 } },
	},
	{
		/* A syncookie SYN-ACK encodes the options in the cookie, so
		 * it keeps TS even with MD5 and SACK.
		 * <nop,nop,md5,mss 1440,sackOK,TS val 2 ecr 1,nop,wscale 9>
		 */
		.name = "md5_synack_syncookie_keeps_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .md5 = 1, .syncookie = 1,
			.ts = 1, .sack = 1, .ws = 1, .mss = 1440, .wscale = 9 },
		.out = { .size = 40, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309 } },
	},
};

/* TCP-AO (RFC 5925, Linux 6.7+): kind 29 with the KeyID and RNextKeyID,
 * then the MAC, padded with NOPs to 32 bits when its length is not a
 * multiple of 4 (the writer leaves the MAC itself to tcp_ao_hash_hdr()).
 * Unlike MD5, AO keeps TS on a SYN; a SYN-ACK drops TS when SACK is on.
 * An accepted socket counts the AO option in tcp_header_len (6.12
 * tcp_create_openreq_child()), so only what AO leaves to SACK moves the
 * MSS; an active opener's count is reset to TS only at the SYN-ACK.
 */
#define AO_SYN_IN(_maclen)						\
	{ .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1, .mss = 1460,	\
	  .wscale = 7, .ao_maclen = (_maclen) }

static const struct tcp_opt_case tcp_opt_ao_cases[] = {
	{
		/* <AO keyid 7 rnext 9 mac 4,mss 1460,sackOK,TS ...,nop,ws 7> */
		.name = "ao_syn_mac4_keeps_ts",
		.in = AO_SYN_IN(4),
		.out = { .size = 28, .words = {
			0x1d080709, AO_MAC_UNTOUCHED, 0x020405b4, 0x0402080a,
			SYN_TSVAL, SYN_TSECR, 0x01030307 } },
	},
	{
		/* 4 + 10 bytes: the last MAC word ends in two NOPs. */
		.name = "ao_syn_mac10_nop_padded",
		.in = AO_SYN_IN(10),
		.out = { .size = 36, .words = {
			0x1d0e0709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			0x01010101, 0x020405b4, 0x0402080a, SYN_TSVAL,
			SYN_TSECR, 0x01030307 } },
	},
	{
		.name = "ao_syn_mac12",
		.in = AO_SYN_IN(12),
		.out = { .size = 36, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x020405b4, 0x0402080a, SYN_TSVAL,
			SYN_TSECR, 0x01030307 } },
	},
	{
		/* 20 + 4 + 12 + 4: the option space is full. */
		.name = "ao_syn_mac16_full",
		.in = AO_SYN_IN(16),
		.out = { .size = 40, .words = {
			0x1d140709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED, 0x020405b4,
			0x0402080a, SYN_TSVAL, SYN_TSECR, 0x01030307 } },
	},
	{
		/* The request's KeyID and RNextKeyID, not the socket's. */
		.name = "ao_synack_sack_drops_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1440, .wscale = 9, .ao_maclen = 12 },
		.out = { .size = 28, .words = {
			0x1d100304, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x020405a0, 0x01010402,
			0x01030309 } },
	},
	{
		.name = "ao_synack_no_sack_keeps_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .ws = 1, .mss = 1440,
			.wscale = 9, .ao_maclen = 12 },
		.out = { .size = 36, .words = {
			0x1d100304, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x020405a0, 0x0101080a,
			SYNACK_TSVAL, SYNACK_TSECR, 0x01030309 } },
	},
	{
		/* A syncookie SYN-ACK keeps TS with TCP-AO as with MD5: the
		 * cookie carries WS, SACK_PERM and ECN in the TS value, and
		 * without TS the peer's ACK echoes none, so cookie_v4_check()
		 * would turn WS and SACK off on this side only.
		 * <AO keyid 3 rnext 4 mac 12,mss 1440,sackOK,TS val 2 ecr 1,
		 *  nop,wscale 9>
		 */
		.name = "ao_synack_syncookie_keeps_ts",
		.in = { .pkt = TCP_OPT_SYNACK, .syncookie = 1, .ts = 1,
			.sack = 1, .ws = 1, .mss = 1440, .wscale = 9,
			.ao_maclen = 12 },
		.out = { .size = 36, .words = {
			0x1d100304, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x020405a0, 0x0402080a,
			SYNACK_TSVAL, SYNACK_TSECR, 0x01030309 } },
	},
	{
		/* The connection after ao_synack_sack_drops_ts: AO alone. */
		.name = "ao_est_no_ts_mac12",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ao_maclen = 12 },
		.out = { .size = 16, .mss_delta = 0, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED } },
	},
	{
		.name = "ao_est_no_ts_mac4",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ao_maclen = 4 },
		.out = { .size = 8, .mss_delta = 0, .words = {
			0x1d080709, AO_MAC_UNTOUCHED } },
	},
	{
		/* 8 (AO) + 12 (TS) leave 20 bytes: (20 - 4) / 8 = 2 blocks
		 * of the 3 queued. 20 is not a multiple of 8, so dividing
		 * the wrong quantity shows.
		 */
		.name = "ao_est_ts_mac4_3_sacks_truncated",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 3,
			.ao_maclen = 4 },
		.out = { .size = 40, .mss_delta = 20, .words = {
			0x1d080709, AO_MAC_UNTOUCHED, 0x0101080a, EST_TSVAL,
			EST_TSECR, 0x01010512, SACK1_START, SACK1_END,
			SACK2_START, SACK2_END } },
	},
	{
		/* 16 + 12 leave 12: one block; the D-SACK goes first. */
		.name = "ao_est_ts_mac10_dsack_truncated",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 2,
			.dsack = 1, .ao_maclen = 10 },
		.out = { .size = 40, .mss_delta = 12, .words = {
			0x1d0e0709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			0x01010101, 0x0101080a, EST_TSVAL, EST_TSECR,
			0x0101050a, DSACK_START, DSACK_END } },
	},
	{
		/* 20 + 12 leave 8, less than one block needs: no SACK. */
		.name = "ao_est_ts_mac16_no_room_for_sack",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 1,
			.ao_maclen = 16 },
		.out = { .size = 32, .mss_delta = 0, .words = {
			0x1d140709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED, 0x0101080a,
			EST_TSVAL, EST_TSECR } },
	},
	{
		/* MD5 and AO are exclusive: with both configured on the
		 * socket, tcp_get_current_key() picks AO and no MD5 option
		 * is written.
		 */
		.name = "ao_and_md5_configured_ao_wins",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .md5 = 1,
			.ao_maclen = 12 },
		.out = { .size = 28, .mss_delta = 0, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x0101080a, EST_TSVAL,
			EST_TSECR } },
	},
	{
		/* tcp_rcv_synsent_state_process() sets tcp_header_len to TS
		 * only, dropping the 16 bytes tcp_ao_connect_init() added:
		 * the client pays the whole AO option in tcp_current_mss().
		 */
		.name = "ao_est_ts_mac12_active_open",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .ao_maclen = 12,
			.active_open = 1 },
		.out = { .size = 28, .mss_delta = 16, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x0101080a, EST_TSVAL,
			EST_TSECR } },
	},
};

/* Fast Open cookies (RFC 7413 kind 34, RFC 6994 kind 254 + 0xF989) after
 * the full 20-byte SYN <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7>,
 * cookie bytes c0 c1 c2 ..., NOP padding up to the next 4-byte boundary.
 */
#define FO_SYN_IN(kind, len)						\
	{ .pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1, .mss = 1460,	\
	  .wscale = 7, .fo = (kind), .fo_len = (len) }

static const struct tcp_opt_case tcp_opt_fastopen_cases[] = {
	{
		/* Cookie request: <...,FO> */
		.name = "fo_syn_len0",
		.in = FO_SYN_IN(TCP_OPT_FO_RFC7413, 0),
		.out = { .size = 24, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x22020101 } },
	},
	{
		.name = "fo_syn_len4",
		.in = FO_SYN_IN(TCP_OPT_FO_RFC7413, 4),
		.out = { .size = 28, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x2206c0c1, 0xc2c30101 } },
	},
	{
		/* 2 + 6 bytes end on a word boundary: no padding. */
		.name = "fo_syn_len6",
		.in = FO_SYN_IN(TCP_OPT_FO_RFC7413, 6),
		.out = { .size = 28, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x2208c0c1, 0xc2c3c4c5 } },
	},
	{
		.name = "fo_syn_len8",
		.in = FO_SYN_IN(TCP_OPT_FO_RFC7413, 8),
		.out = { .size = 32, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x220ac0c1, 0xc2c3c4c5, 0xc6c70101 } },
	},
	{
		/* Fills the 40-byte option space exactly. */
		.name = "fo_syn_len16",
		.in = FO_SYN_IN(TCP_OPT_FO_RFC7413, 16),
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x2212c0c1, 0xc2c3c4c5, 0xc6c7c8c9,
			0xcacbcccd, 0xcecf0101 } },
	},
	{
		.name = "fo_exp_syn_len0",
		.in = FO_SYN_IN(TCP_OPT_FO_EXP, 0),
		.out = { .size = 24, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe04f989 } },
	},
	{
		.name = "fo_exp_syn_len4",
		.in = FO_SYN_IN(TCP_OPT_FO_EXP, 4),
		.out = { .size = 28, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe08f989, 0xc0c1c2c3 } },
	},
	{
		/* 4 + 6 bytes need two NOPs. */
		.name = "fo_exp_syn_len6",
		.in = FO_SYN_IN(TCP_OPT_FO_EXP, 6),
		.out = { .size = 32, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe0af989, 0xc0c1c2c3, 0xc4c50101 } },
	},
	{
		.name = "fo_exp_syn_len8",
		.in = FO_SYN_IN(TCP_OPT_FO_EXP, 8),
		.out = { .size = 32, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe0cf989, 0xc0c1c2c3, 0xc4c5c6c7 } },
	},
	{
		.name = "fo_exp_syn_len16",
		.in = FO_SYN_IN(TCP_OPT_FO_EXP, 16),
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe14f989, 0xc0c1c2c3, 0xc4c5c6c7,
			0xc8c9cacb, 0xcccdcecf } },
	},
	{
		/* MD5 leaves 8 bytes after mss, sackOK and wscale: a 12-byte
		 * cookie option does not fit and is dropped, not truncated.
		 * <nop,nop,md5,mss 1460,nop,nop,sackOK,nop,wscale 7>
		 */
		.name = "fo_syn_len8_md5_dropped",
		.in = { .pkt = TCP_OPT_SYN, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1460, .wscale = 7,
			.fo = TCP_OPT_FO_RFC7413, .fo_len = 8 },
		.out = { .size = 32, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x020405b4,
			0x01010402, 0x01030307 } },
	},
	{
		/* An 8-byte option fits the 8 bytes MD5 leaves exactly. */
		.name = "fo_exp_syn_len4_md5_fits",
		.in = { .pkt = TCP_OPT_SYN, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1460, .wscale = 7,
			.fo = TCP_OPT_FO_EXP, .fo_len = 4 },
		.out = { .size = 40, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x020405b4,
			0x01010402, 0x01030307, 0xfe08f989, 0xc0c1c2c3 } },
	},
	{
		.name = "fo_exp_syn_len6_md5_dropped",
		.in = { .pkt = TCP_OPT_SYN, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1460, .wscale = 7,
			.fo = TCP_OPT_FO_EXP, .fo_len = 6 },
		.out = { .size = 32, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x020405b4,
			0x01010402, 0x01030307 } },
	},
	{
		/* The server hands out a cookie on its SYN-ACK. */
		.name = "fo_synack_len8",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1440, .wscale = 9, .fo = TCP_OPT_FO_RFC7413,
			.fo_len = 8 },
		.out = { .size = 32, .words = {
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309, 0x220ac0c1, 0xc2c3c4c5, 0xc6c70101 } },
	},
	{
		/* The longest cookie RFC 7413 section 4.1.1 allows, after
		 * MSS, TS and WS: 20 bytes left, 20 needed, and it is sent.
		 * <mss 1440,sackOK,TS val 2 ecr 1,nop,wscale 9,FO c0c1..cecf,nop,nop>
		 */
		.name = "fo_synack_len16_fills_40",
		.in = { .pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .ws = 1,
			.mss = 1440, .wscale = 9, .fo = TCP_OPT_FO_RFC7413,
			.fo_len = 16 },
		.out = { .size = 40, .words = {
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309, 0x2212c0c1, 0xc2c3c4c5, 0xc6c7c8c9,
			0xcacbcccd, 0xcecf0101 } },
	},
	{
		/* MD5 + SACK drop TS, then 8 bytes remain for 20: dropped. */
		.name = "fo_exp_synack_len16_md5_dropped",
		.in = { .pkt = TCP_OPT_SYNACK, .md5 = 1, .ts = 1, .sack = 1,
			.ws = 1, .mss = 1440, .wscale = 9,
			.fo = TCP_OPT_FO_EXP, .fo_len = 16 },
		.out = { .size = 32, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x020405a0,
			0x01010402, 0x01030309 } },
	},
};

/* Established segments: SACK blocks after TS, truncated to what is left of
 * the 40 bytes (RFC 2018 section 3: at most 3 blocks next to TS, 4 alone).
 * mss_delta is what tcp_current_mss() takes off mss_cache, which was sized
 * for tcp_header_len: TS and, on an accepted socket, MD5 before 6.7
 * (MD5_MSS_COST, compat header). Rows are accepted sockets unless they
 * say active_open.
 */
#define EST_IN(_ts, _sacks, _dsack)					\
	{ .pkt = TCP_OPT_ESTABLISHED, .ts = (_ts), .num_sacks = (_sacks),	\
	  .dsack = (_dsack) }

/* MPTCP's handshake options (RFC 8684), from a subflow context and a
 * subflow request that hold only what mptcp_syn_options() and
 * mptcp_synack_options() read. They go after every TCP option and take
 * what space is left: an option that does not fit is left out, and the
 * connection falls back to plain TCP (section 3.7).
 */
#define MPTCP_SYN_IN	.pkt = TCP_OPT_SYN, .ts = 1, .sack = 1, .ws = 1, \
			.mss = 1460, .wscale = 7
#define MPTCP_SYNACK_IN	.pkt = TCP_OPT_SYNACK, .ts = 1, .sack = 1, .ws = 1, \
			.mss = 1440, .wscale = 9

static const struct tcp_opt_case tcp_opt_mptcp_cases[] = {
	{
		/* Section 3.1: a v1 MP_CAPABLE SYN carries no key, length
		 * 4; H (HMAC-SHA256) set, A and C clear by default
		 * (net.mptcp.checksum_enabled 0, allow_join_initial_addr_port
		 * 1, mptcp-sysctl.rst).
		 * <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,mp_capable len 4 v1 flags 0x01>
		 */
		.name = "mptcp_syn_mpc",
		.in = { MPTCP_SYN_IN, .mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 24, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x1e040101 } },
	},
	{
		/* <mss 1460,mp_capable len 4 v1 flags 0x01> */
		.name = "mptcp_syn_mpc_alone",
		.in = { .pkt = TCP_OPT_SYN, .mss = 1460, .wscale = 7,
			.mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 8, .words = { 0x020405b4, 0x1e040101 } },
	},
	{
		/* Section 3.2: MP_JOIN SYN, length 12: B, the address ID,
		 * the receiver's token, the sender's random number.
		 * <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7,mp_join len 12 backup id 3>
		 */
		.name = "mptcp_syn_mpj_backup",
		.in = { MPTCP_SYN_IN, .mptcp = TCP_OPT_MPTCP_MPJ,
			.mptcp_backup = 1 },
		.out = { .size = 32, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x1e0c1100 | MPTCP_TEST_LOCAL_ID,
			MPTCP_TEST_REMOTE_TOKEN, MPTCP_TEST_LOCAL_NONCE } },
	},
	{
		/* A 14-byte cookie leaves the 4 bytes MP_CAPABLE needs. */
		.name = "mptcp_syn_fo14_mpc_fills_40",
		.in = { MPTCP_SYN_IN, .fo = TCP_OPT_FO_RFC7413, .fo_len = 14,
			.mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0x2210c0c1, 0xc2c3c4c5, 0xc6c7c8c9,
			0xcacbcccd, 0x1e040101 } },
	},
	{
		/* Regression: before commit 06d64ab46f19 ("tcp: check space
		 * before adding MPTCP SYN options"), MP_CAPABLE went out
		 * after a 40-byte layout and `remaining' wrapped. The
		 * experimental 16-byte cookie fills the 40 bytes: no MPTCP.
		 */
		.name = "mptcp_syn_foexp16_no_room",
		.in = { MPTCP_SYN_IN, .fo = TCP_OPT_FO_EXP, .fo_len = 16,
			.mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYN_TSVAL, SYN_TSECR,
			0x01030307, 0xfe14f989, 0xc0c1c2c3, 0xc4c5c6c7,
			0xc8c9cacb, 0xcccdcecf } },
	},
	{
		/* Section 3.1: the SYN-ACK carries the sender's key, 12.
		 * <mss 1440,sackOK,TS val 2 ecr 1,nop,wscale 9,mp_capable len 12 v1 flags 0x01>
		 */
		.name = "mptcp_synack_mpc",
		.in = { MPTCP_SYNACK_IN, .mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 32, .words = {
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309, 0x1e0c0101,
			upper_32_bits(MPTCP_TEST_LOCAL_KEY),
			lower_32_bits(MPTCP_TEST_LOCAL_KEY) } },
	},
	{
		/* A (0x80) checksums required, C (0x20) no subflow to the
		 * initial address, H.
		 * <mss 1440,mp_capable len 12 v1 flags 0xa1>
		 */
		.name = "mptcp_synack_mpc_csum_deny_join_id0",
		.in = { .pkt = TCP_OPT_SYNACK, .mss = 1440, .wscale = 9,
			.mptcp = TCP_OPT_MPTCP_MPC, .mptcp_csum = 1,
			.mptcp_deny_join_id0 = 1 },
		.out = { .size = 16, .words = {
			0x020405a0, 0x1e0c01a1,
			upper_32_bits(MPTCP_TEST_LOCAL_KEY),
			lower_32_bits(MPTCP_TEST_LOCAL_KEY) } },
	},
	{
		/* Section 3.2: MP_JOIN SYN-ACK, length 16: B, the address
		 * ID, the truncated HMAC (64 bits), the random number.
		 * <mss 1440,sackOK,TS val 2 ecr 1,nop,wscale 9,mp_join len 16 id 3>
		 */
		.name = "mptcp_synack_mpj",
		.in = { MPTCP_SYNACK_IN, .mptcp = TCP_OPT_MPTCP_MPJ },
		.out = { .size = 36, .words = {
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309, 0x1e101000 | MPTCP_TEST_LOCAL_ID,
			upper_32_bits(MPTCP_TEST_THMAC),
			lower_32_bits(MPTCP_TEST_THMAC),
			MPTCP_TEST_LOCAL_NONCE } },
	},
	{
		/* A 16-byte cookie fills the SYN-ACK: the 12 bytes of
		 * MP_CAPABLE do not fit (mptcp_set_option_cond()).
		 */
		.name = "mptcp_synack_fo16_no_room",
		.in = { MPTCP_SYNACK_IN, .fo = TCP_OPT_FO_RFC7413,
			.fo_len = 16, .mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 40, .words = {
			0x020405a0, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030309, 0x2212c0c1, 0xc2c3c4c5, 0xc6c7c8c9,
			0xcacbcccd, 0xcecf0101 } },
	},
	{
		/* Section 3.3: a DSS with a 4-octet Data ACK and no mapping,
		 * 8 bytes, after TS. tcp_current_mss() has no segment to
		 * look at and keeps room for a full mapping too: 4 + 14 + 4,
		 * 24 aligned.
		 * <nop,nop,TS val 3 ecr 2,dss len 8>
		 */
		.name = "mptcp_est_ts_dss_ack32",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1,
			.mptcp = TCP_OPT_MPTCP_MPC, .mptcp_ack = 32 },
		.out = { .size = 20, .mss_delta = 24, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0x1e082001,
			lower_32_bits(MPTCP_TEST_ACK_SEQ) } },
	},
	{
		/* "MPTCP options have precedence over SACK"
		 * (tcp_established_options()): after TS and the DSS, 20
		 * bytes are left, room for 2 of the 3 blocks queued.
		 */
		.name = "mptcp_est_ts_dss_ack32_sack3",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 3,
			.mptcp = TCP_OPT_MPTCP_MPC, .mptcp_ack = 32 },
		.out = { .size = 40, .mss_delta = 24, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0x01010512,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END,
			0x1e082001, lower_32_bits(MPTCP_TEST_ACK_SEQ) } },
	},
	{
		/* An 8-octet Data ACK (a), 12 bytes: 1 block is left. */
		.name = "mptcp_est_ts_dss_ack64_sack3",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 3,
			.mptcp = TCP_OPT_MPTCP_MPC, .mptcp_ack = 64 },
		.out = { .size = 36, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0x0101050a,
			SACK1_START, SACK1_END, 0x1e0c2003,
			upper_32_bits(MPTCP_TEST_ACK_SEQ),
			lower_32_bits(MPTCP_TEST_ACK_SEQ) } },
	},
	{
		/* Before the connection can acknowledge data, a segment
		 * without a mapping carries no MPTCP option; the MSS still
		 * keeps room for a mapping (4 + 14, 20 aligned).
		 */
		.name = "mptcp_est_ts_no_data_ack",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1,
			.mptcp = TCP_OPT_MPTCP_MPC },
		.out = { .size = 12, .mss_delta = 20, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
};

static const struct tcp_opt_case tcp_opt_established_cases[] = {
	{
		/* <nop,nop,TS val 3 ecr 2> */
		.name = "est_ts_0_sacks",
		.in = EST_IN(1, 0, 0),
		.out = { .size = 12, .words = { 0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		.name = "est_ts_1_sack",
		.in = EST_IN(1, 1, 0),
		.out = { .size = 24, .mss_delta = 12,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101050a,
				    SACK1_START, SACK1_END } },
	},
	{
		/* BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG asks a sock_ops program
		 * for option space. With none attached, nothing is reserved:
		 * est_ts_1_sack's 24 bytes.
		 */
		.name = "est_ts_1_sack_bpf_flag_no_program",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .ts = 1, .num_sacks = 1,
			.bpf_hdr_opt = 1 },
		.out = { .size = 24, .mss_delta = 12,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101050a,
				    SACK1_START, SACK1_END } },
	},
	{
		.name = "est_ts_2_sacks",
		.in = EST_IN(1, 2, 0),
		.out = { .size = 32, .mss_delta = 20,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x01010512,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END } },
	},
	{
		.name = "est_ts_3_sacks",
		.in = EST_IN(1, 3, 0),
		.out = { .size = 40, .mss_delta = 28,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101051a,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END,
				    SACK3_START, SACK3_END } },
	},
	{
		/* The fourth block does not fit next to TS. */
		.name = "est_ts_4_sacks_truncated",
		.in = EST_IN(1, 4, 0),
		.out = { .size = 40, .mss_delta = 28,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101051a,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END,
				    SACK3_START, SACK3_END } },
	},
	{
		/* D-SACK + 4 SACKs: D-SACK first, then the first two. */
		.name = "est_ts_5_sacks_dsack_truncated",
		.in = EST_IN(1, 4, 1),
		.out = { .size = 40, .mss_delta = 28,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101051a,
				    DSACK_START, DSACK_END,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END } },
	},
	{
		.name = "est_ts_dsack_1_sack",
		.in = EST_IN(1, 1, 1),
		.out = { .size = 32, .mss_delta = 20,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x01010512,
				    DSACK_START, DSACK_END,
				    SACK1_START, SACK1_END } },
	},
	{
		/* No options at all: the bare 20-byte header. */
		.name = "est_nots_0_sacks",
		.in = EST_IN(0, 0, 0),
		.out = { .size = 0 },
	},
	{
		.name = "est_nots_1_sack",
		.in = EST_IN(0, 1, 0),
		.out = { .size = 12, .mss_delta = 12,
			 .words = { 0x0101050a, SACK1_START, SACK1_END } },
	},
	{
		.name = "est_nots_2_sacks",
		.in = EST_IN(0, 2, 0),
		.out = { .size = 20, .mss_delta = 20,
			 .words = { 0x01010512, SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END } },
	},
	{
		.name = "est_nots_3_sacks",
		.in = EST_IN(0, 3, 0),
		.out = { .size = 28, .mss_delta = 28,
			 .words = { 0x0101051a, SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END,
				    SACK3_START, SACK3_END } },
	},
	{
		.name = "est_nots_4_sacks",
		.in = EST_IN(0, 4, 0),
		.out = { .size = 36, .mss_delta = 36,
			 .words = { 0x01010522, SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END,
				    SACK3_START, SACK3_END,
				    SACK4_START, SACK4_END } },
	},
	{
		/* Five blocks never fit: D-SACK and the first three. */
		.name = "est_nots_5_sacks_dsack_truncated",
		.in = EST_IN(0, 4, 1),
		.out = { .size = 36, .mss_delta = 36,
			 .words = { 0x01010522, DSACK_START, DSACK_END,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END,
				    SACK3_START, SACK3_END } },
	},
	{
		/* Keys for other peers only: nothing to sign, so the SACK
		 * block that MD5 would crowd out fits (RFC 2385 section 3).
		 * <nop,nop,TS val 3 ecr 2,nop,nop,sack 4096:8192>
		 */
		.name = "est_md5_other_peer_sack_fits",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5_other_peer = 1,
			.ts = 1, .num_sacks = 1 },
		.out = { .size = 24, .mss_delta = 12,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101050a,
				    SACK1_START, SACK1_END } },
	},
	{
		/* <nop,nop,md5,nop,nop,TS val 3 ecr 2> */
		.name = "est_md5_ts_0_sacks",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5 = 1, .ts = 1 },
		.out = { .size = 32, .mss_delta = MD5_MSS_COST, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		/* Regression guard for commit 9424e2e7ad93 ("tcp: md5: fix
		 * potential overestimation of TCP option space"): MD5 + TS
		 * leave 8 bytes, less than one SACK block needs, so no SACK
		 * option at all rather than a header past 40 bytes.
		 */
		.name = "est_md5_ts_1_sack_no_room",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5 = 1, .ts = 1,
			.num_sacks = 1 },
		.out = { .size = 32, .mss_delta = MD5_MSS_COST, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		/* The client side of the same connection: its tcp_header_len
		 * is reset to TS only at the SYN-ACK, so MD5 costs all of
		 * its 20 bytes of MSS there, on 6.1 as well.
		 */
		.name = "est_md5_ts_active_open",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5 = 1, .ts = 1,
			.active_open = 1 },
		.out = { .size = 32, .mss_delta = 20, .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		.name = "est_md5_nots_2_sacks",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5 = 1, .num_sacks = 2 },
		.out = { .size = 40, .mss_delta = 20 + MD5_MSS_COST,
			 .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x01010512,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END } },
	},
	{
		.name = "est_md5_nots_3_sacks_truncated",
		.in = { .pkt = TCP_OPT_ESTABLISHED, .md5 = 1, .num_sacks = 3 },
		.out = { .size = 40, .mss_delta = 20 + MD5_MSS_COST,
			 .words = { MD5_OPTION,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x01010512,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END } },
	},
};

/* AccECN (RFC 9768 section 3.2.3): Linux sends kind 174, EE1B, ECEB,
 * EE0B, right after TS, and fits as many fields as the space left allows
 * (tcp_options_fit_accecn()). An option that does not end on a word
 * boundary gives its spare bytes to the NOPs of the SACK_PERM, WSCALE or
 * SACK word that follows, a 2-byte leftover never to the single NOP
 * before WSCALE, and is NOP-padded when nothing can take them. The
 * tcp_ecn_option sysctl (Documentation/networking/ip-sysctl.rst): 0
 * never, 1 only when an option is owed (the beacon sysctl is 0 here),
 * 2 always, 3 always even after a send failure. Only 6.18 and later.
 * A SYN-ACK reports the initial values, <AccECN1 e1b 1 ceb 0 e0b 1>;
 * the established rows report the ACCECN_* counters above.
 */
#define ECN_OPTION_OFF		0
#define ECN_OPTION_MINIMUM	1
#define ECN_OPTION_FULL		2
#define ECN_OPTION_PERSIST	3

#define ACCECN_SYNACK_IN						\
	.pkt = TCP_OPT_SYNACK, .mss = 1460, .wscale = 7, .accecn = 1,	\
	.ecn_option = ECN_OPTION_FULL
#define ACCECN_EST_IN							\
	.pkt = TCP_OPT_ESTABLISHED, .ts = 1, .accecn = 1,		\
	.ecn_option = ECN_OPTION_FULL

static const struct tcp_opt_case tcp_opt_accecn_cases[] = {
	{
		/* WSCALE's NOP saves 1 byte, 11 need 12: one NOP of pad. */
		.name = "accecn_synack_ts_sack_ws",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1, .ws = 1 },
		.out = { .size = 32, .words = {
			0x020405b4, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0xae0b0000, 0x01000000, 0x00000101, 0x01030307 } },
	},
	{
		/* SACK_PERM without TS saves 2 bytes: still one NOP short. */
		.name = "accecn_synack_sack_ws_no_ts",
		.in = { ACCECN_SYNACK_IN, .sack = 1, .ws = 1 },
		.out = { .size = 24, .words = {
			0x020405b4, 0xae0b0000, 0x01000000, 0x00000101,
			0x01010402, 0x01030307 } },
	},
	{
		/* 4 bytes left: one field, its last byte (01) in the NOP
		 * before WSCALE.
		 */
		.name = "accecn_synack_fo12_one_field",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1, .ws = 1,
			.fo = TCP_OPT_FO_RFC7413, .fo_len = 12 },
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0xae050000, 0x01030307, 0x220ec0c1, 0xc2c3c4c5,
			0xc6c7c8c9, 0xcacb0101 } },
	},
	{
		/* 4 bytes left and nothing to combine with: the bare option
		 * and two NOPs, before Fast Open.
		 */
		.name = "accecn_synack_fo16_zero_fields",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1,
			.fo = TCP_OPT_FO_RFC7413, .fo_len = 16 },
		.out = { .size = 40, .words = {
			0x020405b4, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0xae020101, 0x2212c0c1, 0xc2c3c4c5, 0xc6c7c8c9,
			0xcacbcccd, 0xcecf0101 } },
	},
	{
		/* TCP-AO drops TS next to SACK: 8 bytes, two fields. */
		.name = "accecn_synack_ao_two_fields",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1, .ws = 1,
			.ao_maclen = 16 },
		.out = { .size = 40, .words = {
			0x1d140304, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED, 0x020405b4,
			0xae080000, 0x01000000, 0x01010402, 0x01030307 } },
	},
	{
		/* A retransmitted SYN-ACK carries no AccECN option, in case
		 * a middlebox dropped the first for carrying one.
		 */
		.name = "accecn_synack_retrans",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1, .ws = 1,
			.synack_retrans = 1 },
		.out = { .size = 20, .words = {
			0x020405b4, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030307 } },
	},
	{
		.name = "accecn_synack_option_off",
		.in = { ACCECN_SYNACK_IN, .ts = 1, .sack = 1, .ws = 1,
			.ecn_option = ECN_OPTION_OFF },
		.out = { .size = 20, .words = {
			0x020405b4, 0x0402080a, SYNACK_TSVAL, SYNACK_TSECR,
			0x01030307 } },
	},
	{
		.name = "accecn_est_ts_0_sacks",
		.in = { ACCECN_EST_IN },
		.out = { .size = 24, .mss_delta = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111,
			0x11222222, 0x33333301 } },
	},
	{
		/* The SACK word's NOPs save 2 bytes: still one NOP short. */
		.name = "accecn_est_ts_1_sack",
		.in = { ACCECN_EST_IN, .num_sacks = 1 },
		.out = { .size = 36, .mss_delta = 24, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111,
			0x11222222, 0x33333301, 0x0101050a, SACK1_START,
			SACK1_END } },
	},
	{
		.name = "accecn_est_ts_2_sacks",
		.in = { ACCECN_EST_IN, .num_sacks = 2 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111,
			0x11222222, 0x01010512, SACK1_START, SACK1_END,
			SACK2_START, SACK2_END } },
	},
	{
		/* No byte left: the bare option in the SACK word's NOPs. */
		.name = "accecn_est_ts_3_sacks",
		.in = { ACCECN_EST_IN, .num_sacks = 3 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae02051a,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END,
			SACK3_START, SACK3_END } },
	},
	{
		.name = "accecn_est_ts_4_sacks",
		.in = { ACCECN_EST_IN, .num_sacks = 4 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae02051a,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END,
			SACK3_START, SACK3_END } },
	},
	{
		/* 4 bytes left: one field, its last byte (11) in the SACK
		 * word's first NOP.
		 */
		.name = "accecn_est_no_ts_4_sacks",
		.in = { ACCECN_EST_IN, .ts = 0, .num_sacks = 4 },
		.out = { .size = 40, .mss_delta = 40, .words = {
			0xae051111, 0x11010522, SACK1_START, SACK1_END,
			SACK2_START, SACK2_END, SACK3_START, SACK3_END,
			SACK4_START, SACK4_END } },
	},
	{
		/* ECT(1) bytes arrived: EE1B is owed. The third SACK block
		 * makes room, and the option then takes two fields.
		 */
		.name = "accecn_est_minlen1_gives_up_sack",
		.in = { ACCECN_EST_IN, .num_sacks = 3, .accecn_minlen = 1 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111,
			0x11222222, 0x01010512, SACK1_START, SACK1_END,
			SACK2_START, SACK2_END } },
	},
	{
		/* All three fields owed do not fit even without the third
		 * block: the block stays, and no option goes out.
		 */
		.name = "accecn_est_minlen3_no_room",
		.in = { ACCECN_EST_IN, .num_sacks = 3, .accecn_minlen = 3 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0x0101051a,
			SACK1_START, SACK1_END, SACK2_START, SACK2_END,
			SACK3_START, SACK3_END } },
	},
	{
		.name = "accecn_est_dsack",
		.in = { ACCECN_EST_IN, .num_sacks = 1, .dsack = 1 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111,
			0x11222222, 0x01010512, DSACK_START, DSACK_END,
			SACK1_START, SACK1_END } },
	},
	{
		.name = "accecn_est_option_off",
		.in = { ACCECN_EST_IN, .ecn_option = ECN_OPTION_OFF },
		.out = { .size = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		.name = "accecn_est_minimum_not_owed",
		.in = { ACCECN_EST_IN, .ecn_option = ECN_OPTION_MINIMUM },
		.out = { .size = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		.name = "accecn_est_minimum_owed",
		.in = { ACCECN_EST_IN, .ecn_option = ECN_OPTION_MINIMUM,
			.accecn_demand = 1 },
		.out = { .size = 24, .mss_delta = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111,
			0x11222222, 0x33333301 } },
	},
	{
		/* Options seemed to be dropped (section 3.2.3.2.2). */
		.name = "accecn_est_full_fail_send",
		.in = { ACCECN_EST_IN, .accecn_fail_send = 1 },
		.out = { .size = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR } },
	},
	{
		.name = "accecn_est_persist_fail_send",
		.in = { ACCECN_EST_IN, .ecn_option = ECN_OPTION_PERSIST,
			.accecn_fail_send = 1 },
		.out = { .size = 24, .mss_delta = 12, .words = {
			0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111,
			0x11222222, 0x33333301 } },
	},
	{
		/* MD5 costs its 20 bytes of MSS since 6.7 (compat header),
		 * AccECN 8 more.
		 */
		.name = "accecn_est_md5",
		.in = { ACCECN_EST_IN, .md5 = 1 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x0101080a,
			EST_TSVAL, EST_TSECR, 0xae081111, 0x11222222 } },
	},
	{
		/* 77a4fdf43c5e: a SACK block that does not fit next to MD5
		 * and TS no longer ends the calculation; AccECN still gets
		 * the 8 bytes left. Before it, the calculation returned.
		 */
		.name = "accecn_est_md5_sack_no_room",
		.in = { ACCECN_EST_IN, .md5 = 1, .num_sacks = 1 },
		.out = { .size = 40, .mss_delta = 28, .words = {
			MD5_OPTION, MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED,
			MD5_HASH_UNTOUCHED, MD5_HASH_UNTOUCHED, 0x0101080a,
			EST_TSVAL, EST_TSECR, 0xae081111, 0x11222222 } },
	},
	{
		.name = "accecn_est_ao",
		.in = { ACCECN_EST_IN, .ao_maclen = 12 },
		.out = { .size = 40, .mss_delta = 12, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x0101080a, EST_TSVAL, EST_TSECR,
			0xae0b1111, 0x11222222, 0x33333301 } },
	},
	{
		.name = "accecn_est_ao_sack",
		.in = { ACCECN_EST_IN, .ao_maclen = 12, .num_sacks = 1 },
		.out = { .size = 40, .mss_delta = 12, .words = {
			0x1d100709, AO_MAC_UNTOUCHED, AO_MAC_UNTOUCHED,
			AO_MAC_UNTOUCHED, 0x0101080a, EST_TSVAL, EST_TSECR,
			0xae02050a, SACK1_START, SACK1_END } },
	},
};

static void tcp_opt_case_desc(const struct tcp_opt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

static int tcp_opt_test_init(struct kunit *test)
{
	struct tcp_opt_env *env;

	env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env);
	/* The calculators read only the option sysctls from the netns. */
	env->net = kunit_kzalloc(test, sizeof(*env->net), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->net);
	env->tp = kunit_kzalloc(test, sizeof(*env->tp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->tp);
	/* A subflow request embeds the TCP one (MPTCP rows). */
	env->treq = kunit_kzalloc(test, TCP_OPT_REQ_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->treq);
	/* Only skb_mstamp_ns, the source of TS val, is read. */
	env->skb = kunit_kzalloc(test, sizeof(*env->skb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->skb);

	write_pnet(&env->tp->inet_conn.icsk_inet.sk.sk_net, env->net);
	tcp_opt_init_sock_lock((struct sock *)env->tp);
#if IS_ENABLED(CONFIG_MPTCP)
	env->subflow = kunit_kzalloc(test, sizeof(*env->subflow), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->subflow);
	env->msk = kunit_kzalloc(test, sizeof(*env->msk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, env->msk);
	/* MP_CAPABLE's flags on a SYN come from the MPTCP sysctls: the fake
	 * netns reads init_net's per-net data (the defaults).
	 */
	rcu_assign_pointer(env->net->gen, rcu_access_pointer(init_net.gen));
#endif
	test->priv = env;
	return 0;
}

static void tcp_opt_test_exit(struct kunit *test)
{
	struct tcp_opt_env *env = test->priv;

	if (!env)
		return;
#ifdef CONFIG_TCP_MD5SIG
	if (env->md5_key_enabled)
		tcp_opt_md5_needed_dec();
#endif
#ifdef TCP_OPT_HAVE_AO
	if (env->ao_key_enabled)
		static_branch_dec(&tcp_ao_needed.key);
#endif
}

static bool tcp_opt_setup_md5(struct kunit *test, struct tcp_opt_env *env,
			      const struct tcp_opt_input *in)
{
#ifdef CONFIG_TCP_MD5SIG
	if (!env->md5_info)
		env->md5_info = kunit_kzalloc(test, sizeof(*env->md5_info),
					      GFP_KERNEL);
	if (!env->md5_info)
		return false;
	/* What tcp_md5_do_add() does when the first key is configured. */
	if (!env->md5_key_enabled)
		tcp_opt_md5_needed_inc();
	env->md5_key_enabled = true;
	rcu_assign_pointer(env->tp->md5sig_info, env->md5_info);
	env->tp->af_specific = in->md5_other_peer ?
			       &tcp_opt_other_peer_af_ops : &tcp_opt_test_af_ops;
	return true;
#else
	return false;
#endif
}

/* A socket with one TCP-AO key in use and an RNext key, as the AO
 * setsockopt()s leave it; the request sock gets its own KeyIDs.
 */
static bool tcp_opt_setup_ao(struct kunit *test, struct tcp_opt_env *env,
			     const struct tcp_opt_input *in)
{
#ifdef TCP_OPT_HAVE_AO
	if (!env->ao_info) {
		env->ao_info = kunit_kzalloc(test, sizeof(*env->ao_info),
					     GFP_KERNEL);
		env->ao_key = kunit_kzalloc(test, sizeof(*env->ao_key),
					    GFP_KERNEL);
		env->ao_rnext = kunit_kzalloc(test, sizeof(*env->ao_rnext),
					      GFP_KERNEL);
		if (!env->ao_info || !env->ao_key || !env->ao_rnext)
			return false;
	}
	env->ao_key->maclen = in->ao_maclen;
	env->ao_key->sndid = AO_SNDID;
	env->ao_rnext->rcvid = AO_RNEXT;
	env->ao_info->current_key = env->ao_key;
	env->ao_info->rnext_key = env->ao_rnext;
	rcu_assign_pointer(env->tp->ao_info, env->ao_info);
	env->treq->ao_keyid = AO_REQ_KEYID;
	env->treq->ao_rcv_next = AO_REQ_RNEXT;
	if (!env->ao_key_enabled)
		static_branch_inc(&tcp_ao_needed.key);
	env->ao_key_enabled = true;
	return true;
#else
	return false;
#endif
}

/* A request that negotiated AccECN, or a connection in AccECN mode that
 * has seen the peer's option and counted the ACCECN_* bytes.
 */
static bool tcp_opt_setup_accecn(struct tcp_opt_env *env,
				 const struct tcp_opt_input *in)
{
#ifdef TCP_OPT_HAVE_ACCECN
	struct tcp_sock *tp = env->tp;

	env->net->ipv4.sysctl_tcp_ecn_option = in->ecn_option;
	if (in->pkt == TCP_OPT_SYNACK) {
		env->treq->accecn_ok = 1;
		return true;
	}
	tp->ecn_flags = TCP_ECN_MODE_ACCECN;
	tp->saw_accecn_opt = TCP_ACCECN_OPT_COUNTER_SEEN;
	tp->accecn_minlen = in->accecn_minlen;
	tp->accecn_opt_demand = in->accecn_demand;
	if (in->accecn_fail_send)
		tp->accecn_fail_mode = TCP_ACCECN_OPT_FAIL_SEND;
	tp->received_ecn_bytes[INET_ECN_ECT_1 - 1] = ACCECN_ECT1_BYTES;
	tp->received_ecn_bytes[INET_ECN_CE - 1] = ACCECN_CE_BYTES;
	tp->received_ecn_bytes[INET_ECN_ECT_0 - 1] = ACCECN_ECT0_BYTES;
	return true;
#else
	return false;
#endif
}

/* The subflow (SYN, established) or subflow request (SYN-ACK) of @in,
 * holding only what the MPTCP option builders read.
 */
static bool tcp_opt_setup_mptcp(struct tcp_opt_env *env,
				const struct tcp_opt_input *in)
{
#if IS_ENABLED(CONFIG_MPTCP)
	bool mpc = in->mptcp == TCP_OPT_MPTCP_MPC;
	struct mptcp_subflow_request_sock *subflow_req;
	struct mptcp_subflow_context *subflow = env->subflow;
	struct mptcp_sock *msk = env->msk;

	memset(subflow, 0, sizeof(*subflow));
	memset(msk, 0, sizeof(*msk));
	switch (in->pkt) {
	case TCP_OPT_SYN:
		subflow->request_mptcp = mpc;
		subflow->request_join = !mpc;
		subflow->request_bkup = in->mptcp_backup;
		subflow->local_id = MPTCP_TEST_LOCAL_ID;
		subflow->remote_token = MPTCP_TEST_REMOTE_TOKEN;
		subflow->local_nonce = MPTCP_TEST_LOCAL_NONCE;
		break;
	case TCP_OPT_SYNACK:
		subflow_req = mptcp_subflow_rsk(&env->treq->req.req);
		env->treq->is_mptcp = 1;
		subflow_req->mp_capable = mpc;
		subflow_req->mp_join = !mpc;
		subflow_req->csum_reqd = in->mptcp_csum;
		subflow_req->allow_join_id0 = !in->mptcp_deny_join_id0;
		subflow_req->request_bkup = in->mptcp_backup;
		subflow_req->local_id = MPTCP_TEST_LOCAL_ID;
		subflow_req->local_key = MPTCP_TEST_LOCAL_KEY;
		subflow_req->thmac = MPTCP_TEST_THMAC;
		subflow_req->local_nonce = MPTCP_TEST_LOCAL_NONCE;
		return true;
	case TCP_OPT_ESTABLISHED:
		/* Past its handshake, in a connection that acknowledges
		 * data (section 3.3.2) once it can.
		 */
		WRITE_ONCE(msk->can_ack, !!in->mptcp_ack);
		WRITE_ONCE(msk->use_64bit_ack, in->mptcp_ack == 64);
		WRITE_ONCE(msk->ack_seq, MPTCP_TEST_ACK_SEQ);
		subflow->conn = (struct sock *)msk;
		subflow->fully_established = 1;
		break;
	}
	env->tp->is_mptcp = 1;
	env->tp->inet_conn.icsk_ulp_data = subflow;
	return true;
#else
	return false;
#endif
}

static void tcp_opt_fill_cookie(struct tcp_fastopen_cookie *foc,
				const struct tcp_opt_input *in)
{
	u8 *val = (u8 *)foc->val;
	int i;

	foc->len = in->fo_len;
	foc->exp = in->fo == TCP_OPT_FO_EXP;
	for (i = 0; i < in->fo_len; i++)
		val[i] = 0xc0 + i;
}

static void tcp_opt_setup(struct kunit *test, struct tcp_opt_env *env,
			  const struct tcp_opt_input *in)
{
	struct tcp_sock *tp = env->tp;
	struct inet_request_sock *ireq = &env->treq->req;
	u32 tsval = SYN_TSVAL;

	if ((in->md5 || in->md5_other_peer) &&
	    !tcp_opt_setup_md5(test, env, in))
		tcp_opt_skip(test, "needs CONFIG_TCP_MD5SIG");
	if (in->ao_maclen && !tcp_opt_setup_ao(test, env, in))
		tcp_opt_skip(test, "needs TCP-AO: the 6.7+ tcp_key API and CONFIG_TCP_AO");
	if (in->accecn && !tcp_opt_setup_accecn(env, in))
		tcp_opt_skip(test, "needs AccECN (RFC 9768), 6.18+");
	if (in->bpf_hdr_opt && !IS_ENABLED(CONFIG_BPF))
		tcp_opt_skip(test, "needs CONFIG_BPF");
	if (in->mptcp && !tcp_opt_setup_mptcp(env, in))
		tcp_opt_skip(test, "needs CONFIG_MPTCP");
#ifdef CONFIG_BPF
	tp->bpf_sock_ops_cb_flags = in->bpf_hdr_opt ?
		BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG : 0;
#endif

	switch (in->pkt) {
	case TCP_OPT_SYN:
		env->net->ipv4.sysctl_tcp_timestamps = in->ts;
		env->net->ipv4.sysctl_tcp_sack = in->sack;
		env->net->ipv4.sysctl_tcp_window_scaling = in->ws;
		tp->advmss = in->mss;
		tp->rx_opt.rcv_wscale = in->wscale;
		tp->rx_opt.ts_recent = in->tw_ts_recent ?: SYN_TSECR;
		if (in->fo != TCP_OPT_FO_NONE) {
			tcp_opt_fill_cookie(&env->fo_req.cookie, in);
			tp->fastopen_req = &env->fo_req;
		}
		break;
	case TCP_OPT_SYNACK:
		ireq->tstamp_ok = in->ts;
		ireq->sack_ok = in->sack;
		ireq->wscale_ok = in->ws;
		ireq->rcv_wscale = in->wscale;
		ireq->req.ts_recent = SYNACK_TSECR;
		tsval = SYNACK_TSVAL;
		break;
	case TCP_OPT_ESTABLISHED:
		tp->rx_opt.tstamp_ok = in->ts;
		tp->rx_opt.ts_recent = EST_TSECR;
		tp->rx_opt.num_sacks = in->num_sacks;
		tp->rx_opt.dsack = in->dsack;
		tp->duplicate_sack[0] = (struct tcp_sack_block)
			{ DSACK_START, DSACK_END };
		tp->selective_acks[0] = (struct tcp_sack_block)
			{ SACK1_START, SACK1_END };
		tp->selective_acks[1] = (struct tcp_sack_block)
			{ SACK2_START, SACK2_END };
		tp->selective_acks[2] = (struct tcp_sack_block)
			{ SACK3_START, SACK3_END };
		tp->selective_acks[3] = (struct tcp_sack_block)
			{ SACK4_START, SACK4_END };
		tsval = EST_TSVAL;
		break;
	}
	env->skb->skb_mstamp_ns = (u64)tsval * (NSEC_PER_SEC / TCP_TS_HZ);
}

static enum tcp_synack_type tcp_opt_synack_type(const struct tcp_opt_input *in)
{
	if (in->syncookie)
		return TCP_SYNACK_COOKIE;
#ifdef TCP_OPT_HAVE_ACCECN
	/* Came with AccECN, the only option a retransmission leaves out. */
	if (in->synack_retrans)
		return TCP_SYNACK_RETRANS;
#endif
	return TCP_SYNACK_NORMAL;
}

/* The calculators and the writer as the transmit path calls them, with
 * the key argument each tree takes (struct tcp_key since 6.7).
 */
/* The SYN and the established calculators read the socket: under its lock,
 * as tcp_transmit_skb() calls them.
 */
static unsigned int tcp_opt_sock_options(struct sock *sk, struct sk_buff *skb,
					 struct tcp_out_options *opts,
					 struct tcp_opt_key *k, bool syn)
{
	unsigned int size;

	tcp_opt_lock_sock(sk);
#ifdef TCP_OPT_HAVE_TCP_KEY
	tcp_get_current_key(sk, &k->key);
	size = syn ? tcp_syn_options(sk, skb, opts, &k->key) :
		     tcp_established_options(sk, skb, opts, &k->key);
#else
	size = syn ? tcp_syn_options(sk, skb, opts, &k->md5) :
		     tcp_established_options(sk, skb, opts, &k->md5);
#endif
	tcp_opt_unlock_sock(sk);
	return size;
}

static unsigned int
tcp_opt_synack_options(const struct sock *sk, struct request_sock *req,
		       unsigned int mss, struct sk_buff *skb,
		       struct tcp_out_options *opts, struct tcp_opt_key *k,
		       struct tcp_fastopen_cookie *foc,
		       enum tcp_synack_type synack_type)
{
	/* tcp_make_synack() does not lock the listener */
#ifdef TCP_OPT_HAVE_TCP_KEY
	return tcp_synack_options(sk, req, mss, skb, opts, &k->key, foc,
				  synack_type, NULL);
#else
	return tcp_synack_options(sk, req, mss, skb, opts, k->md5, foc,
				  synack_type, NULL);
#endif
}

static void tcp_opt_options_write(struct tcphdr *th, struct tcp_sock *tp,
				  const struct request_sock *req,
				  struct tcp_out_options *opts,
				  struct tcp_opt_key *k)
{
	/* A SYN-ACK goes out with no socket to lock (tp is NULL) */
	if (tp)
		tcp_opt_lock_sock((struct sock *)tp);
#ifdef TCP_OPT_HAVE_TCP_KEY
	tcp_options_write(th, tp, req ? tcp_rsk(req) : NULL, opts, &k->key);
#else
	tcp_options_write(th, tp, opts);
#endif
	if (tp)
		tcp_opt_unlock_sock((struct sock *)tp);
}

/* Run the calculator the packet kind uses; returns the reserved size. */
static unsigned int tcp_opt_calc(struct tcp_opt_env *env,
				 const struct tcp_opt_input *in,
				 struct tcp_out_options *opts)
{
	struct sock *sk = &env->tp->inet_conn.icsk_inet.sk;
	struct tcp_md5sig_key *md5 = NULL;
	struct tcp_fastopen_cookie foc = {};

	/* The SYN and established sizers fill the key in (6.1), or their
	 * caller does (tcp_get_current_key(), 6.7+), over what the stack
	 * left there: poisoned, a key left unset shows.
	 */
	memset(&env->key, in->pkt == TCP_OPT_SYNACK ? 0 : TCP_OPT_POISON,
	       sizeof(env->key));
	switch (in->pkt) {
	case TCP_OPT_SYN:
		return tcp_opt_sock_options(sk, env->skb, opts, &env->key,
					    true);
	case TCP_OPT_SYNACK:
#ifdef CONFIG_TCP_MD5SIG
		if (in->md5)
			md5 = &tcp_opt_test_key;
#endif
		tcp_opt_key_set_md5(&env->key, md5);
#ifdef TCP_OPT_HAVE_AO
		if (in->ao_maclen)
			tcp_opt_key_set_ao(&env->key, env->ao_key);
#endif
		if (in->fo != TCP_OPT_FO_NONE)
			tcp_opt_fill_cookie(&foc, in);
		return tcp_opt_synack_options(sk, &env->treq->req.req, in->mss,
					      env->skb, opts, &env->key,
					      in->fo != TCP_OPT_FO_NONE ?
					      &foc : NULL,
					      tcp_opt_synack_type(in));
	case TCP_OPT_ESTABLISHED:
		return tcp_opt_sock_options(sk, env->skb, opts, &env->key,
					    false);
	}
	return 0;
}

/* The order Linux has promised since fd6149d33297: MD5 (when present)
 * first, then MSS; SACK_PERM is never the first option.
 */
static void tcp_opt_check_order(struct kunit *test, const char *name,
				const struct tcp_opt_seen *seen)
{
	bool auth = seen->md5 || seen->ao_off >= 0;
	u8 mss_slot = auth ? seen->second_kind : seen->first_kind;

	if (seen->md5)
		KUNIT_EXPECT_EQ_MSG(test, seen->first_kind, TCPOPT_MD5SIG,
				    "case %s: MD5 is not the first option",
				    name);
	if (seen->ao_off >= 0)
		KUNIT_EXPECT_EQ_MSG(test, seen->first_kind, TCP_OPT_KIND_AO,
				    "case %s: TCP-AO is not the first option",
				    name);
	KUNIT_EXPECT_FALSE_MSG(test, seen->md5 && seen->ao_off >= 0,
			       "case %s: both MD5 and TCP-AO", name);
	if (seen->mss >= 0)
		KUNIT_EXPECT_EQ_MSG(test, mss_slot, TCPOPT_MSS,
				    "case %s: MSS is not the first option",
				    name);
	KUNIT_EXPECT_NE_MSG(test, seen->first_kind, TCPOPT_SACK_PERM,
			    "case %s: SACK_PERM is the first option", name);
}

/* Feed the written header to the receive path's own option parser. */
static void tcp_opt_check_parse(struct kunit *test, const char *name,
				const struct tcp_opt_input *in,
				const u8 *hdr, unsigned int size,
				const struct tcp_opt_seen *want)
{
	bool estab = in->pkt == TCP_OPT_ESTABLISHED;
	struct tcp_fastopen_cookie foc = { .len = -1 };
	struct tcp_options_received rx = {};
	struct sk_buff *skb;
	struct tcphdr *th;

	skb = alloc_skb(sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE,
			GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_transport_header(skb);
	th = skb_put_data(skb, hdr, sizeof(struct tcphdr) + size);
	th->doff = (sizeof(struct tcphdr) + size) / 4;
	th->syn = !estab;
	th->ack = in->pkt != TCP_OPT_SYN;
	if (estab) {
		rx.tstamp_ok = 1;
		rx.sack_ok = TCP_SACK_SEEN;
	}

	tcp_parse_options(&init_net, skb, &rx, estab, &foc);

	KUNIT_EXPECT_EQ_MSG(test, (bool)rx.saw_tstamp, want->ts,
			    "case %s: parsed TS presence", name);
	if (want->ts) {
		KUNIT_EXPECT_EQ_MSG(test, rx.rcv_tsval, want->tsval,
				    "case %s: parsed TS val", name);
		KUNIT_EXPECT_EQ_MSG(test, rx.rcv_tsecr, want->tsecr,
				    "case %s: parsed TS ecr", name);
	}
	if (estab) {
		KUNIT_EXPECT_EQ_MSG(test, (int)(TCP_SKB_CB(skb)->sacked ?: -1),
				    want->sack_off,
				    "case %s: parsed SACK offset", name);
	} else {
		KUNIT_EXPECT_EQ_MSG(test, rx.mss_clamp,
				    want->mss < 0 ? 0 : want->mss,
				    "case %s: parsed MSS", name);
		KUNIT_EXPECT_EQ_MSG(test, (bool)rx.wscale_ok, want->wscale >= 0,
				    "case %s: parsed wscale_ok", name);
		if (want->wscale >= 0)
			KUNIT_EXPECT_EQ_MSG(test, (int)rx.snd_wscale, want->wscale,
					    "case %s: parsed wscale", name);
		KUNIT_EXPECT_EQ_MSG(test, !!rx.sack_ok, want->sackperm,
				    "case %s: parsed sackOK", name);
		KUNIT_EXPECT_EQ_MSG(test, (int)foc.len, want->fo_len,
				    "case %s: parsed Fast Open cookie length",
				    name);
		if (want->fo_len > 0) {
			KUNIT_EXPECT_EQ_MSG(test, foc.exp, want->fo_exp,
					    "case %s: parsed Fast Open kind",
					    name);
			tcp_opt_expect_bytes(test, (u8 *)foc.val,
					     want->fo_cookie, want->fo_len,
					     name);
		}
	}
#ifdef CONFIG_TCP_MD5SIG
	KUNIT_EXPECT_PTR_EQ_MSG(test, tcp_opt_parse_md5(th),
				want->md5 ? (const u8 *)th + want->md5_off :
					    NULL,
				"case %s: parsed MD5 hash location", name);
#endif
	KUNIT_EXPECT_PTR_EQ_MSG(test, tcp_opt_parse_ao(th),
				want->ao_off >= 0 ?
				(const u8 *)th + want->ao_off : NULL,
				"case %s: parsed TCP-AO option location", name);
#ifdef TCP_OPT_HAVE_ACCECN
	KUNIT_EXPECT_EQ_MSG(test, (int)rx.accecn,
			    want->accecn_off < 0 ? 0 : want->accecn_off,
			    "case %s: parsed AccECN offset", name);
#endif
	kfree_skb(skb);
}

/* The table must agree with its own inputs before it judges the kernel. */
static void tcp_opt_check_table(struct kunit *test, const struct tcp_opt_case *c,
				const struct tcp_opt_seen *want)
{
	if (c->in.pkt == TCP_OPT_ESTABLISHED)
		return;
	KUNIT_EXPECT_EQ_MSG(test, want->mss, c->in.mss,
			    "case %s: table MSS", c->name);
	if (want->wscale >= 0)
		KUNIT_EXPECT_EQ_MSG(test, want->wscale, c->in.wscale,
				    "case %s: table wscale", c->name);
}

static const char * const tcp_opt_pkt_names[] = {
	[TCP_OPT_SYN]		= "syn",
	[TCP_OPT_SYNACK]	= "synack",
	[TCP_OPT_ESTABLISHED]	= "established",
};

static const char * const tcp_opt_fo_names[] = {
	[TCP_OPT_FO_NONE]	= "none",
	[TCP_OPT_FO_RFC7413]	= "rfc7413",
	[TCP_OPT_FO_EXP]	= "exp",
};

/* The inputs as key=value pairs, for failure messages and the host. */
static void tcp_opt_format_input(char *buf, size_t len,
				 const struct tcp_opt_input *in)
{
	scnprintf(buf, len,
		  "kind=%s ts=%d sack=%d ws=%d md5=%d syncookie=%d mss=%u wscale=%u fo=%s fo_len=%u sacks=%u dsack=%d",
		  tcp_opt_pkt_names[in->pkt], in->ts, in->sack, in->ws,
		  in->md5, in->syncookie, in->mss, in->wscale,
		  tcp_opt_fo_names[in->fo], in->fo_len, in->num_sacks,
		  in->dsack);
	if (in->ao_maclen)
		scnprintf(buf + strlen(buf), len - strlen(buf),
			  " ao_maclen=%u", in->ao_maclen);
	if (in->accecn)
		scnprintf(buf + strlen(buf), len - strlen(buf),
			  " accecn=1 ecn_option=%u minlen=%u demand=%d fail_send=%d",
			  in->ecn_option, in->accecn_minlen, in->accecn_demand,
			  in->accecn_fail_send);
	if (in->synack_retrans)
		scnprintf(buf + strlen(buf), len - strlen(buf), " retrans=1");
	if (in->md5_other_peer)
		scnprintf(buf + strlen(buf), len - strlen(buf), " md5_peer=0");
	if (in->tw_ts_recent)
		scnprintf(buf + strlen(buf), len - strlen(buf),
			  " tw_ts_recent=%u", in->tw_ts_recent);
	if (in->mptcp)
		scnprintf(buf + strlen(buf), len - strlen(buf),
			  " mptcp=%s mptcp_ack=%u mptcp_csum=%d mptcp_deny_join_id0=%d mptcp_backup=%d",
			  in->mptcp == TCP_OPT_MPTCP_MPC ? "mpc" : "mpj",
			  in->mptcp_ack, in->mptcp_csum,
			  in->mptcp_deny_join_id0, in->mptcp_backup);
}

/* Run the calculator, then the writer into a kmalloc'd header of exactly
 * 20 + size bytes followed by a poisoned canary: a write into the canary
 * shows in any build, one past it is a KASAN report in the sanitizer
 * build. The bytes then go to env->buf, where the checks read them, and
 * the hash location the writer recorded moves with them.
 */
static unsigned int tcp_opt_calc_and_write(struct kunit *test,
					   struct tcp_opt_env *env,
					   const struct tcp_opt_input *in,
					   struct tcp_out_options *opts)
{
	const unsigned int hlen = sizeof(struct tcphdr);
	unsigned int size = tcp_opt_calc(env, in, opts);
	unsigned int len = hlen + size + TCP_OPT_CANARY_LEN;
	u8 *hdr;

	hdr = kmalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hdr);
	memset(hdr, TCP_OPT_POISON, len);
	memset(hdr, 0, hlen);
	/* tcp_make_synack() has no socket of its own to pass. */
	if (in->pkt == TCP_OPT_SYNACK)
		tcp_opt_options_write((struct tcphdr *)hdr, NULL,
				      &env->treq->req.req, opts, &env->key);
	else
		tcp_opt_options_write((struct tcphdr *)hdr, env->tp, NULL,
				      opts, &env->key);
	memset(env->buf, TCP_OPT_POISON, sizeof(env->buf));
	memcpy(env->buf, hdr, min_t(unsigned int, len, sizeof(env->buf)));
	if (opts->hash_location)
		opts->hash_location = env->buf + (opts->hash_location - hdr);
	kfree(hdr);
	return size;
}

/* What tcp_create_openreq_child() adds to tcp_header_len for the key. */
static unsigned int tcp_opt_child_key_len(struct tcp_opt_env *env,
					  const struct tcp_opt_input *in)
{
#ifdef TCP_OPT_HAVE_AO
	if (in->ao_maclen)
		return tcp_ao_len_aligned(env->ao_key);
#endif
	return in->md5 ? TCP_OPT_HDRLEN_MD5 : 0;
}

/* mss_cache - tcp_current_mss(), with tcp_header_len as the stack leaves
 * it on an established socket (tcp_opt_est_header_len(), which the live
 * suite checks on the sockets the stack set up).
 */
static int tcp_opt_mss_delta(struct tcp_opt_env *env,
			     const struct tcp_opt_input *in)
{
	struct sock *sk = &env->tp->inet_conn.icsk_inet.sk;
	unsigned int mss;

	env->tp->mss_cache = EST_MSS_CACHE;
	env->tp->tcp_header_len =
		tcp_opt_est_header_len(in->ts, in->active_open,
				       tcp_opt_child_key_len(env, in));
	tcp_opt_lock_sock(sk);
	mss = tcp_current_mss(sk);
	tcp_opt_unlock_sock(sk);
	return EST_MSS_CACHE - (int)mss;
}

/* The invariants every layout must hold, whatever its inputs: nothing
 * written past the reserved size, 32-bit aligned, at most 40 bytes, well
 * formed, MD5 then MSS first, SACK_PERM never first, and read back by
 * tcp_parse_options() as @want. Returns false if the bytes are unusable.
 */
static bool tcp_opt_check_written(struct kunit *test, const char *name,
				  const struct tcp_opt_input *in,
				  const struct tcp_out_options *opts,
				  unsigned int size, const struct tcp_opt_seen *want,
				  struct tcp_opt_seen *got, char *text, size_t len)
{
	struct tcp_opt_env *env = test->priv;
	const unsigned int hlen = sizeof(struct tcphdr);
	unsigned int i;

	for (i = hlen + size; i < sizeof(env->buf); i++) {
		if (env->buf[i] != TCP_OPT_POISON) {
			KUNIT_FAIL(test,
				   "case %s: writer wrote byte %u past the %u bytes reserved:\n\t%*ph",
				   name, i - hlen, size,
				   (int)(sizeof(env->buf) - hlen),
				   env->buf + hlen);
			break;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, size % 4, 0U,
			    "case %s: size %u is not 32-bit aligned",
			    name, size);
	KUNIT_EXPECT_LE_MSG(test, size, (unsigned int)MAX_TCP_OPTION_SPACE,
			    "case %s: size %u exceeds the option space",
			    name, size);
	if (size > MAX_TCP_OPTION_SPACE)
		return false;

	if (!tcp_opt_decode(env->buf, size, got, text, len)) {
		KUNIT_FAIL(test, "case %s: written options are malformed: %*ph",
			   name, size, env->buf + hlen);
		return false;
	}
	tcp_opt_check_order(test, name, got);
	if (got->md5)
		KUNIT_EXPECT_PTR_EQ_MSG(test, (u8 *)opts->hash_location,
					env->buf + got->md5_off,
					"case %s: MD5 hash location", name);
	if (got->ao_off >= 0)
		KUNIT_EXPECT_PTR_EQ_MSG(test, (u8 *)opts->hash_location,
					env->buf + got->ao_off + 4,
					"case %s: TCP-AO MAC location", name);
	if (in->pkt != TCP_OPT_ESTABLISHED)
		KUNIT_EXPECT_EQ_MSG(test, got->mss, (int)in->mss,
				    "case %s: MSS option", name);
	tcp_opt_check_parse(test, name, in, env->buf, size, want);
	return true;
}

static void tcp_opt_log_words(struct kunit *test, const u8 *opt,
			      unsigned int size)
{
	char words[TCP_OPT_WORDS * 9 + 1] = "";
	unsigned int i, used = 0;

	for (i = 0; i + 4 <= size && i < MAX_TCP_OPTION_SPACE; i += 4)
		used += scnprintf(words + used, sizeof(words) - used, "%s%08x",
				  i ? " " : "", get_unaligned_be32(opt + i));
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# words: %s", words);
}

/* An AccECN option that went out serves the fields the receiver owed and
 * one ACK it demanded (the writer clears both); one that did not go out
 * leaves them owed.
 */
static void tcp_opt_check_accecn_state(struct kunit *test,
				       const struct tcp_opt_case *c,
				       const struct tcp_opt_seen *want)
{
#ifdef TCP_OPT_HAVE_ACCECN
	const struct tcp_sock *tp = ((struct tcp_opt_env *)test->priv)->tp;
	bool sent = want->accecn_fields >= 0;

	if (c->in.pkt != TCP_OPT_ESTABLISHED || !c->in.accecn)
		return;
	KUNIT_EXPECT_EQ_MSG(test, (int)tp->accecn_minlen,
			    sent ? 0 : c->in.accecn_minlen,
			    "case %s: accecn_minlen after the write", c->name);
	KUNIT_EXPECT_EQ_MSG(test, (int)tp->accecn_opt_demand,
			    sent ? 0 : c->in.accecn_demand,
			    "case %s: accecn_opt_demand after the write",
			    c->name);
#endif
}

/* Calculate and write the options of @c on the state set up for it. */
/* tcp_rcv_fastopen_synack() reads what the SYN sent: whether it carried a
 * cookie (syn_fastopen) and in which form (syn_fastopen_exp, RFC 6994).
 */
static void tcp_opt_check_syn_fastopen(struct kunit *test, const char *name,
				       const struct tcp_sock *tp,
				       const struct tcp_opt_seen *want)
{
	KUNIT_EXPECT_EQ_MSG(test, (int)tp->syn_fastopen, want->fo_len >= 0,
			    "case %s: tp->syn_fastopen", name);
	KUNIT_EXPECT_EQ_MSG(test, (int)tp->syn_fastopen_exp,
			    want->fo_len >= 0 && want->fo_exp,
			    "case %s: tp->syn_fastopen_exp", name);
}

static void tcp_opt_check_case(struct kunit *test, const struct tcp_opt_case *c)
{
	struct tcp_opt_env *env = test->priv;
	const unsigned int hlen = sizeof(struct tcphdr);
	struct tcp_out_options opts = {};
	struct tcp_opt_seen want, got;
	u8 expect[MAX_TCP_OPTION_SPACE];
	char want_text[200], got_text[200], input[200];
	unsigned int size, i;

	for (i = 0; i < TCP_OPT_WORDS; i++)
		put_unaligned_be32(c->out.words[i], expect + 4 * i);
	/* Decode the golden words with the same header offset as the writer. */
	memset(env->buf, 0, hlen);
	memcpy(env->buf + hlen, expect, sizeof(expect));
	KUNIT_ASSERT_TRUE_MSG(test, tcp_opt_decode(env->buf, c->out.size,
						   &want, want_text,
						   sizeof(want_text)),
			      "case %s: expected layout is malformed", c->name);
	tcp_opt_check_table(test, c, &want);
	tcp_opt_format_input(input, sizeof(input), &c->in);
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# input: %s", input);

	if (c->in.pkt == TCP_OPT_ESTABLISHED) {
		int delta = tcp_opt_mss_delta(env, &c->in);

		KUNIT_EXPECT_EQ_MSG(test, delta, c->out.mss_delta,
				    "case %s: tcp_current_mss() delta",
				    c->name);
		kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT
			  KUNIT_SUBTEST_INDENT "# mss delta: %d", delta);
	}

	size = tcp_opt_calc_and_write(test, env, &c->in, &opts);
	KUNIT_EXPECT_EQ_MSG(test, size, c->out.size,
			    "case %s: calculator reserved the wrong size",
			    c->name);
	if (c->in.pkt != TCP_OPT_SYNACK && !c->in.md5 && !c->in.ao_maclen)
		KUNIT_EXPECT_TRUE_MSG(test, tcp_opt_key_is_none(&env->key),
				      "case %s: no key signs this segment, but the sizer left one for the hash",
				      c->name);
	if (c->in.pkt == TCP_OPT_SYN)
		tcp_opt_check_syn_fastopen(test, c->name, env->tp, &want);
	tcp_opt_expect_bytes(test, env->buf + hlen, expect,
			     min(size, c->out.size), c->name);
	if (!tcp_opt_check_written(test, c->name, &c->in, &opts, size, &want,
				   &got, got_text, sizeof(got_text))) {
		/* Still show reviewers what was written. */
		size = min_t(unsigned int, size, MAX_TCP_OPTION_SPACE);
		kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT
			  KUNIT_SUBTEST_INDENT "# layout: malformed %*phN (%u bytes)",
			  size, env->buf + hlen, size);
		tcp_opt_log_words(test, env->buf + hlen, size);
		return;
	}
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# layout: %s (%u bytes)", got_text, size);
	tcp_opt_log_words(test, env->buf + hlen, size);
	KUNIT_EXPECT_STREQ_MSG(test, got_text, want_text,
			       "case %s: layout", c->name);
	tcp_opt_check_accecn_state(test, c, &want);
}

KUNIT_ARRAY_PARAM(tcp_opt_syn, tcp_opt_syn_cases, tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_synack, tcp_opt_synack_cases, tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_md5, tcp_opt_md5_cases, tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_ao, tcp_opt_ao_cases, tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_fastopen, tcp_opt_fastopen_cases,
		  tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_established, tcp_opt_established_cases,
		  tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_accecn, tcp_opt_accecn_cases, tcp_opt_case_desc);
KUNIT_ARRAY_PARAM(tcp_opt_mptcp, tcp_opt_mptcp_cases, tcp_opt_case_desc);

static void tcp_opt_layout_test(struct kunit *test)
{
	const struct tcp_opt_case *c = test->param_value;

	tcp_opt_setup(test, test->priv, &c->in);
	tcp_opt_check_case(test, c);
}

/* The writer alone, for each field count in front of each word that can
 * take its spare bytes, with the options set by hand: the calculators
 * never ask for some of these pairs (a 2-byte leftover before WSCALE),
 * which the writer must still lay out by the rule.
 */
enum tcp_opt_accecn_next {
	ACCECN_NEXT_NOTHING,	/* after TS, nothing follows */
	ACCECN_NEXT_SACK_PERM,	/* no TS: SACK_PERM follows */
	ACCECN_NEXT_WSCALE,	/* after TS, NOP + WSCALE 7 */
	ACCECN_NEXT_SACK,	/* after TS, one SACK block */
};

struct tcp_opt_accecn_write_case {
	const char *name;
	u8 fields;
	enum tcp_opt_accecn_next next;
	unsigned int size;
	u32 words[TCP_OPT_WORDS];
};

static const struct tcp_opt_accecn_write_case tcp_opt_accecn_write_cases[] = {
	{ "accecn_write_3_fields", 3, ACCECN_NEXT_NOTHING, 24,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111, 0x11222222,
	    0x33333301 } },
	{ "accecn_write_3_fields_sack_perm", 3, ACCECN_NEXT_SACK_PERM, 16,
	  { 0xae0b1111, 0x11222222, 0x33333301, 0x01010402 } },
	{ "accecn_write_3_fields_wscale", 3, ACCECN_NEXT_WSCALE, 28,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111, 0x11222222,
	    0x33333301, 0x01030307 } },
	{ "accecn_write_3_fields_sack", 3, ACCECN_NEXT_SACK, 36,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae0b1111, 0x11222222,
	    0x33333301, 0x0101050a, SACK1_START, SACK1_END } },
	{ "accecn_write_2_fields", 2, ACCECN_NEXT_NOTHING, 20,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111, 0x11222222 } },
	{ "accecn_write_2_fields_sack_perm", 2, ACCECN_NEXT_SACK_PERM, 12,
	  { 0xae081111, 0x11222222, 0x01010402 } },
	{ "accecn_write_2_fields_wscale", 2, ACCECN_NEXT_WSCALE, 24,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111, 0x11222222,
	    0x01030307 } },
	{ "accecn_write_2_fields_sack", 2, ACCECN_NEXT_SACK, 32,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae081111, 0x11222222,
	    0x0101050a, SACK1_START, SACK1_END } },
	/* The fifth byte, EE1B's last, takes the first NOP that follows. */
	{ "accecn_write_1_field", 1, ACCECN_NEXT_NOTHING, 20,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae051111, 0x11010101 } },
	{ "accecn_write_1_field_sack_perm", 1, ACCECN_NEXT_SACK_PERM, 8,
	  { 0xae051111, 0x11010402 } },
	{ "accecn_write_1_field_wscale", 1, ACCECN_NEXT_WSCALE, 20,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae051111, 0x11030307 } },
	{ "accecn_write_1_field_sack", 1, ACCECN_NEXT_SACK, 28,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae051111, 0x1101050a,
	    SACK1_START, SACK1_END } },
	/* Kind and length take two NOPs in a row. */
	{ "accecn_write_0_fields", 0, ACCECN_NEXT_NOTHING, 16,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae020101 } },
	{ "accecn_write_0_fields_sack_perm", 0, ACCECN_NEXT_SACK_PERM, 4,
	  { 0xae020402 } },
	/* WSCALE has one NOP: kind and length are not split around it. */
	{ "accecn_write_0_fields_wscale", 0, ACCECN_NEXT_WSCALE, 20,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0x01030307, 0xae020101 } },
	{ "accecn_write_0_fields_sack", 0, ACCECN_NEXT_SACK, 24,
	  { 0x0101080a, EST_TSVAL, EST_TSECR, 0xae02050a, SACK1_START,
	    SACK1_END } },
};

static void tcp_opt_accecn_write_desc(const struct tcp_opt_accecn_write_case *c,
				      char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_opt_accecn_write, tcp_opt_accecn_write_cases,
		  tcp_opt_accecn_write_desc);

#ifdef TCP_OPT_HAVE_ACCECN
static void tcp_opt_accecn_set_next(struct tcp_out_options *opts,
				    enum tcp_opt_accecn_next next)
{
	opts->options = OPTION_ACCECN | OPTION_TS;
	switch (next) {
	case ACCECN_NEXT_NOTHING:
		break;
	case ACCECN_NEXT_SACK_PERM:
		opts->options = OPTION_ACCECN | OPTION_SACK_ADVERTISE;
		break;
	case ACCECN_NEXT_WSCALE:
		opts->options |= OPTION_WSCALE;
		opts->ws = 7;
		break;
	case ACCECN_NEXT_SACK:
		opts->num_sack_blocks = 1;
		break;
	}
}
#endif

/* The writer alone, on options set by hand, into a poisoned env->buf. */
static void tcp_opt_write_alone(struct tcp_opt_env *env,
				struct tcp_out_options *opts)
{
	const unsigned int hlen = sizeof(struct tcphdr);

	memset(env->buf, TCP_OPT_POISON, sizeof(env->buf));
	memset(env->buf, 0, hlen);
	tcp_opt_options_write((struct tcphdr *)env->buf, env->tp, NULL, opts,
			      &env->key);
}

/* What tcp_opt_write_alone() wrote, against golden words: the bytes,
 * nothing past @size, and the layout both decode to. @want gets the
 * golden layout's reading.
 */
static void tcp_opt_check_written_words(struct kunit *test, const char *name,
					const u32 *words, unsigned int size,
					struct tcp_opt_seen *want)
{
	const struct tcp_opt_env *env = test->priv;
	const u8 *buf = env->buf;
	const unsigned int hlen = sizeof(struct tcphdr);
	u8 golden[sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE] = {};
	char want_text[200], got_text[200];
	struct tcp_opt_seen got;
	unsigned int i;

	for (i = 0; i < TCP_OPT_WORDS; i++)
		put_unaligned_be32(words[i], golden + hlen + 4 * i);
	KUNIT_ASSERT_TRUE_MSG(test, tcp_opt_decode(golden, size, want,
						   want_text,
						   sizeof(want_text)),
			      "case %s: expected layout is malformed", name);
	tcp_opt_expect_bytes(test, buf + hlen, golden + hlen, size, name);
	for (i = hlen + size; i < sizeof(env->buf); i++)
		KUNIT_EXPECT_EQ_MSG(test, buf[i], TCP_OPT_POISON,
				    "case %s: wrote byte %u past %u",
				    name, i - hlen, size);
	KUNIT_ASSERT_TRUE_MSG(test, tcp_opt_decode(buf, size, &got, got_text,
						   sizeof(got_text)),
			      "case %s: written options are malformed: %*ph",
			      name, size, buf + hlen);
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# layout: %s (%u bytes)", got_text, size);
	tcp_opt_log_words(test, buf + hlen, size);
	KUNIT_EXPECT_STREQ_MSG(test, got_text, want_text, "case %s: layout",
			       name);
}

static void tcp_opt_accecn_write_test(struct kunit *test)
{
#ifdef TCP_OPT_HAVE_ACCECN
	const struct tcp_opt_accecn_write_case *c = test->param_value;
	const struct tcp_opt_input in = { ACCECN_EST_IN, .num_sacks = 1 };
	struct tcp_opt_env *env = test->priv;
	struct tcp_out_options opts = { .num_accecn_fields = c->fields,
					.tsval = EST_TSVAL,
					.tsecr = EST_TSECR };
	struct tcp_opt_seen want;

	tcp_opt_setup(test, env, &in);
	tcp_opt_accecn_set_next(&opts, c->next);
	tcp_opt_write_alone(env, &opts);
	tcp_opt_check_written_words(test, c->name, c->words, c->size, &want);
	KUNIT_EXPECT_EQ_MSG(test, want.accecn_fields, (int)c->fields,
			    "case %s: table field count", c->name);
#else
	tcp_opt_skip(test, "needs AccECN (RFC 9768), 6.18+");
#endif
}

/* mptcp_write_options() through tcp_options_write(), each suboption set
 * by hand the way the MPTCP builders set it: the bytes of the suboptions
 * an established subflow sends, whose builders need a whole MPTCP socket.
 * Expected bytes are from RFC 8684's figures; Linux writes 8-octet DSNs
 * and pads every suboption to 32 bits with NOPs.
 */
struct tcp_opt_mptcp_write_case {
	const char *name;
	struct mptcp_out_options mptcp;	/* empty without CONFIG_MPTCP */
	unsigned int size;
	u32 words[TCP_OPT_WORDS];
};

#if IS_ENABLED(CONFIG_MPTCP)
#define MPTCP_OUT(...)		.mptcp = { __VA_ARGS__ }
#else
#define MPTCP_OUT(...)
#endif

#define MPTCP_TEST_DSN		0x0000000100000002ULL
#define MPTCP_TEST_SSN		3
#define MPTCP_TEST_DATA_LEN	100
#define MPTCP_TEST_AHMAC	0xa1a2a3a4a5a6a7a8ULL
/* MP_JOIN's third ACK: the full 160-bit HMAC (section 3.2). */
#define MPTCP_TEST_HMAC	{ 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, \
			  0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf, \
			  0xc0, 0xc1, 0xc2, 0xc3 }
#define MPTCP_TEST_RCVR_KEY	0x1112131415161718ULL
#define MPTCP_TEST_FAIL_SEQ	0x2122232425262728ULL
#define MPTCP_TEST_PORT		8080			/* 0x1f90 */
#define MPTCP_TEST_ADDR4	0xc0000201		/* 192.0.2.1 */

#define MPTCP_ADDR4(_id, _port)						\
	{ .id = (_id), .family = AF_INET, .port = cpu_to_be16(_port),	\
	  .addr = { .s_addr = cpu_to_be32(MPTCP_TEST_ADDR4) } }
#if IS_ENABLED(CONFIG_MPTCP_IPV6)
/* 2001:db8::1 (RFC 3849) */
#define MPTCP_ADDR6(_id, _port)						\
	{ .id = (_id), .family = AF_INET6, .port = cpu_to_be16(_port),	\
	  .addr6 = { .s6_addr = { 0x20, 0x01, 0x0d, 0xb8,		\
				  [15] = 1 } } }
#else
/* No IPv6 address in struct mptcp_addr_info: the rows are skipped. */
#define MPTCP_ADDR6(_id, _port)						\
	{ .id = (_id), .family = AF_INET6, .port = cpu_to_be16(_port) }
#endif
#define MPTCP_DSS_MAP(_len)						\
	.use_map = 1, .dsn64 = 1, .data_seq = MPTCP_TEST_DSN,		\
	.subflow_seq = MPTCP_TEST_SSN, .data_len = (_len)

static const struct tcp_opt_mptcp_write_case tcp_opt_mptcp_write_cases[] = {
	{
		/* Section 3.3: M and m, length 4 + 14, then two NOPs.
		 * <dss len 18,nop,nop>
		 */
		.name = "mptcp_dss_map",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN) }),
		.size = 20, .words = { 0x1e12200c, 0x00000001, 0x00000002,
				       MPTCP_TEST_SSN, 0x00640101 },
	},
	{
		/* Section 3.3.3: F marks the mapping's end as DATA_FIN. */
		.name = "mptcp_dss_map_data_fin",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.data_fin = 1 }),
		.size = 20, .words = { 0x1e12201c, 0x00000001, 0x00000002,
				       MPTCP_TEST_SSN, 0x00640101 },
	},
	{
		/* Section 3.3.1: with checksums the length is 20. Data-Level
		 * Length 0 is the infinite mapping (section 3.7), whose
		 * checksum field Linux leaves 0.
		 */
		.name = "mptcp_dss_infinite_map_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS, .csum_reqd = 1,
			  .ext_copy = { MPTCP_DSS_MAP(0) }),
		.size = 20, .words = { 0x1e14200c, 0x00000001, 0x00000002,
				       MPTCP_TEST_SSN, 0x00000000 },
	},
	{
		/* Section 3.3: a 4-octet Data ACK (A) and a mapping, 22,
		 * then two NOPs. The ack is the connection's (msk->ack_seq).
		 * <dss len 22,nop,nop>
		 */
		.name = "mptcp_dss_ack32_map",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.use_ack = 1 }),
		.size = 24, .words = { 0x1e16200d,
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, MPTCP_TEST_SSN,
				       0x00640101 },
	},
	{
		/* With checksums (section 3.3.1) the mapping takes 2 more
		 * octets: 4 + 4 + 8 + 4 + 2 + 2 = 24, no NOP; the checksum
		 * of the pseudo-header below, 0xff95.
		 */
		.name = "mptcp_dss_ack32_map_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS, .csum_reqd = 1,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.use_ack = 1 }),
		.size = 24, .words = { 0x1e18200d,
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, MPTCP_TEST_SSN,
				       0x0064ff95 },
	},
	{
		/* Section 3.3.3: a DATA_FIN on a segment without data maps
		 * subflow sequence number 0 and Data-Level Length 1; with a
		 * 4-octet Data ACK: F, m, M and A, 22, then two NOPs.
		 * <dss len 22,nop,nop>
		 */
		.name = "mptcp_dss_ack32_data_fin",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { .use_map = 1, .dsn64 = 1,
					.data_seq = MPTCP_TEST_DSN,
					.subflow_seq = 0, .data_len = 1,
					.use_ack = 1, .data_fin = 1 }),
		.size = 24, .words = { 0x1e16201d,
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, 0x00000000,
				       0x00010101 },
	},
	{
		/* An 8-octet Data ACK and a mapping: 4 + 8 + 14 = 26, then
		 * two NOPs. <dss len 26,nop,nop>
		 */
		.name = "mptcp_dss_ack64_map",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.use_ack = 1, .ack64 = 1 }),
		.size = 28, .words = { 0x1e1a200f,
				       upper_32_bits(MPTCP_TEST_ACK_SEQ),
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, MPTCP_TEST_SSN,
				       0x00640101 },
	},
	{
		/* A Data ACK alone, 8 octets (A and a): 12 bytes, what a pure
		 * ACK of a connection with 8-octet DSNs carries.
		 * <dss len 12>
		 */
		.name = "mptcp_dss_ack64",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS,
			  .ext_copy = { .use_ack = 1, .ack64 = 1 }),
		.size = 12, .words = { 0x1e0c2003,
				       upper_32_bits(MPTCP_TEST_ACK_SEQ),
				       lower_32_bits(MPTCP_TEST_ACK_SEQ) },
	},
	{
		/* An 8-octet Data ACK (a), the checksum (section 3.3.1:
		 * the pseudo-header DSN 0x100000002, SSN 3, length 100 and
		 * an empty payload sum to 0x006a, so 0xff95) and DATA_FIN.
		 */
		.name = "mptcp_dss_ack64_map_csum_data_fin",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS, .csum_reqd = 1,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.use_ack = 1, .ack64 = 1,
					.data_fin = 1 }),
		.size = 28, .words = { 0x1e1c201f,
				       upper_32_bits(MPTCP_TEST_ACK_SEQ),
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, MPTCP_TEST_SSN,
				       0x0064ff95 },
	},
	{
		/* Section 3.1: MP_CAPABLE on the SYN, version 1, H (HMAC-
		 * SHA256) alone, no key: length 4. <mp_capable len 4 v1 flags 0x01>
		 */
		.name = "mptcp_mpc_syn",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_SYN,
			  .allow_join_id0 = 1),
		.size = 4, .words = { 0x1e040101 },
	},
	{
		/* The SYN-ACK's, with the sender's key: 12. */
		.name = "mptcp_mpc_synack",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_SYNACK,
			  .allow_join_id0 = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY),
		.size = 12, .words = { 0x1e0c0101, 0x01020304, 0x05060708 },
	},
	{
		/* Section 3.1 with net.mptcp.checksum_enabled 1: A (0x80)
		 * and H on the SYN, length 4. <mp_capable len 4 v1 flags 0x81>
		 */
		.name = "mptcp_mpc_syn_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_SYN,
			  .allow_join_id0 = 1, .csum_reqd = 1),
		.size = 4, .words = { 0x1e040181 },
	},
	{
		/* The SYN-ACK's, with the sender's key: 12. */
		.name = "mptcp_mpc_synack_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_SYNACK,
			  .allow_join_id0 = 1, .csum_reqd = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY),
		.size = 12, .words = { 0x1e0c0181, 0x01020304, 0x05060708 },
	},
	{
		/* The third ACK's, both keys: 20. */
		.name = "mptcp_mpc_ack_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_ACK,
			  .allow_join_id0 = 1, .csum_reqd = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY),
		.size = 20, .words = { 0x1e140181, 0x01020304, 0x05060708,
				       0x11121314, 0x15161718 },
	},
	{
		/* Section 3.1: the third ACK echoes both keys, 20 bytes.
		 * <mp_capable len 20 v1 flags 0x01>
		 */
		.name = "mptcp_mpc_ack",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_ACK,
			  .allow_join_id0 = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY),
		.size = 20, .words = { 0x1e140101, 0x01020304, 0x05060708,
				       0x11121314, 0x15161718 },
	},
	{
		/* With data: the Data-Level Length, 22, two NOPs. */
		.name = "mptcp_mpc_ack_data",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_ACK,
			  .allow_join_id0 = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY,
			  .data_len = MPTCP_TEST_DATA_LEN),
		.size = 24, .words = { 0x1e160101, 0x01020304, 0x05060708,
				       0x11121314, 0x15161718, 0x00640101 },
	},
	{
		/* A removal after it, past the two NOPs: 24 + 4. */
		.name = "mptcp_mpc_ack_data_remove_addr",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_ACK |
					OPTION_MPTCP_RM_ADDR,
			  .allow_join_id0 = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY,
			  .data_len = MPTCP_TEST_DATA_LEN,
			  .rm_list = { .ids = { 5 }, .nr = 1 }),
		.size = 28, .words = { 0x1e160101, 0x01020304, 0x05060708,
				       0x11121314, 0x15161718, 0x00640101,
				       0x1e044005 },
	},
	{
		/* And with checksums (A): 24, the DSS checksum of the same
		 * pseudo-header as above.
		 */
		.name = "mptcp_mpc_ack_data_csum",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPC_ACK,
			  .allow_join_id0 = 1, .csum_reqd = 1,
			  .sndr_key = MPTCP_TEST_LOCAL_KEY,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY,
			  .data_seq = MPTCP_TEST_DSN,
			  .subflow_seq = MPTCP_TEST_SSN,
			  .data_len = MPTCP_TEST_DATA_LEN),
		.size = 24, .words = { 0x1e180181, 0x01020304, 0x05060708,
				       0x11121314, 0x15161718, 0x0064ff95 },
	},
	{
		/* Section 3.2: the third ACK of a join carries the full
		 * 160-bit HMAC, 24 bytes. <mp_join len 24 id 0>
		 */
		.name = "mptcp_mpj_ack",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPJ_ACK,
			  .hmac = MPTCP_TEST_HMAC),
		.size = 24, .words = { 0x1e181000, 0xb0b1b2b3, 0xb4b5b6b7,
				       0xb8b9babb, 0xbcbdbebf, 0xc0c1c2c3 },
	},
	{
		/* A removal may ride on the join's third ACK: 24 + 4. */
		.name = "mptcp_mpj_ack_remove_addr",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_MPJ_ACK |
					OPTION_MPTCP_RM_ADDR,
			  .hmac = MPTCP_TEST_HMAC,
			  .rm_list = { .ids = { 5 }, .nr = 1 }),
		.size = 28, .words = { 0x1e181000, 0xb0b1b2b3, 0xb4b5b6b7,
				       0xb8b9babb, 0xbcbdbebf, 0xc0c1c2c3,
				       0x1e044005 },
	},
	{
		/* Section 3.4.1: E set when there is no HMAC (an echo),
		 * length 8. <add_addr len 8>
		 */
		.name = "mptcp_add_addr_v4_echo",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR4(1, 0)),
		.size = 8, .words = { 0x1e083101, MPTCP_TEST_ADDR4 },
	},
	{
		.name = "mptcp_add_addr_v4_hmac",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR4(1, 0),
			  .ahmac = MPTCP_TEST_AHMAC),
		.size = 16, .words = { 0x1e103001, MPTCP_TEST_ADDR4,
				       0xa1a2a3a4, 0xa5a6a7a8 },
	},
	{
		/* MP_PRIO may follow an address signal (RFC 8684 sections
		 * 3.4.1 and 3.3.8): 16 + 4.
		 */
		.name = "mptcp_add_addr_v4_hmac_mp_prio",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR |
					OPTION_MPTCP_PRIO,
			  .addr = MPTCP_ADDR4(1, 0),
			  .ahmac = MPTCP_TEST_AHMAC, .backup = 1),
		.size = 20, .words = { 0x1e103001, MPTCP_TEST_ADDR4,
				       0xa1a2a3a4, 0xa5a6a7a8, 0x1e035101 },
	},
	{
		/* The port adds 2 octets: length 10, two NOPs. */
		.name = "mptcp_add_addr_v4_port_echo",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR4(1, MPTCP_TEST_PORT)),
		.size = 12, .words = { 0x1e0a3101, MPTCP_TEST_ADDR4,
				       0x1f900101 },
	},
	{
		/* And after the port's two NOPs: 12 + 4. */
		.name = "mptcp_add_addr_v4_port_echo_mp_prio",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR |
					OPTION_MPTCP_PRIO,
			  .addr = MPTCP_ADDR4(1, MPTCP_TEST_PORT),
			  .backup = 1),
		.size = 16, .words = { 0x1e0a3101, MPTCP_TEST_ADDR4,
				       0x1f900101, 0x1e035101 },
	},
	{
		/* Port before the HMAC, length 18 (commit 27ab92d9996e
		 * fixed the length this option went out with).
		 */
		.name = "mptcp_add_addr_v4_port_hmac",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR4(1, MPTCP_TEST_PORT),
			  .ahmac = MPTCP_TEST_AHMAC),
		.size = 20, .words = { 0x1e123001, MPTCP_TEST_ADDR4,
				       0x1f90a1a2, 0xa3a4a5a6, 0xa7a80101 },
	},
	{
		.name = "mptcp_add_addr_v4_port_hmac_mp_prio",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR |
					OPTION_MPTCP_PRIO,
			  .addr = MPTCP_ADDR4(1, MPTCP_TEST_PORT),
			  .ahmac = MPTCP_TEST_AHMAC, .backup = 1),
		.size = 24, .words = { 0x1e123001, MPTCP_TEST_ADDR4,
				       0x1f90a1a2, 0xa3a4a5a6, 0xa7a80101,
				       0x1e035101 },
	},
	{
		.name = "mptcp_add_addr_v6_hmac",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR6(2, 0),
			  .ahmac = MPTCP_TEST_AHMAC),
		.size = 28, .words = { 0x1e1c3002, 0x20010db8, 0, 0, 1,
				       0xa1a2a3a4, 0xa5a6a7a8 },
	},
	{
		/* An IPv6 echo: 4 + 16, no HMAC. */
		.name = "mptcp_add_addr_v6_echo",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR6(2, 0)),
		.size = 20, .words = { 0x1e143102, 0x20010db8, 0, 0, 1 },
	},
	{
		.name = "mptcp_add_addr_v6_port_hmac",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR6(2, MPTCP_TEST_PORT),
			  .ahmac = MPTCP_TEST_AHMAC),
		.size = 32, .words = { 0x1e1e3002, 0x20010db8, 0, 0, 1,
				       0x1f90a1a2, 0xa3a4a5a6, 0xa7a80101 },
	},
	{
		/* An IPv6 echo with the port: 4 + 16 + 2, two NOPs. */
		.name = "mptcp_add_addr_v6_port_echo",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR,
			  .addr = MPTCP_ADDR6(2, MPTCP_TEST_PORT)),
		.size = 24, .words = { 0x1e163102, 0x20010db8, 0, 0, 1,
				       0x1f900101 },
	},
	{
		/* Section 3.4.2: length 3 + one octet per ID. */
		.name = "mptcp_remove_addr_1",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RM_ADDR,
			  .rm_list = { .ids = { 5 }, .nr = 1 }),
		.size = 4, .words = { 0x1e044005 },
	},
	{
		/* Two IDs: the second, then three NOPs. */
		.name = "mptcp_remove_addr_2",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RM_ADDR,
			  .rm_list = { .ids = { 5, 6 }, .nr = 2 }),
		.size = 8, .words = { 0x1e054005, 0x06010101 },
	},
	{
		/* Five: the last four fill the second word. */
		.name = "mptcp_remove_addr_5",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RM_ADDR,
			  .rm_list = { .ids = { 1, 2, 3, 4, 5 }, .nr = 5 }),
		.size = 8, .words = { 0x1e084001, 0x02030405 },
	},
	{
		.name = "mptcp_remove_addr_3",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RM_ADDR,
			  .rm_list = { .ids = { 5, 6, 7 }, .nr = 3 }),
		.size = 8, .words = { 0x1e064005, 0x06070101 },
	},
	{
		.name = "mptcp_remove_addr_8",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RM_ADDR,
			  .rm_list = { .ids = { 1, 2, 3, 4, 5, 6, 7, 8 },
				       .nr = 8 }),
		.size = 12, .words = { 0x1e0b4001, 0x02030405, 0x06070801 },
	},
	{
		/* Section 3.3.8: length 3, B, no address ID; one NOP (the
		 * length 4 this went out with before commit ec99a470c7d5).
		 * <mp_prio len 3,nop>
		 */
		.name = "mptcp_mp_prio_backup",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_PRIO, .backup = 1),
		.size = 4, .words = { 0x1e035101 },
	},
	{
		/* Linux writes a change of priority before a removal. */
		.name = "mptcp_mp_prio_remove_addr",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_PRIO |
					OPTION_MPTCP_RM_ADDR,
			  .backup = 1,
			  .rm_list = { .ids = { 5 }, .nr = 1 }),
		.size = 8, .words = { 0x1e035101, 0x1e044005 },
	},
	{
		/* Section 3.5: length 12, the receiver's key. */
		.name = "mptcp_fastclose",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_FASTCLOSE,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY),
		.size = 12, .words = { 0x1e0c7000, 0x11121314, 0x15161718 },
	},
	{
		/* Section 3.6: length 4, T (transient), the reason. */
		.name = "mptcp_tcprst_transient",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_RST,
			  .reset_transient = 1, .reset_reason = 4),
		.size = 4, .words = { 0x1e048104 },
	},
	{
		/* A FASTCLOSE and the reset that carries it (section 3.5). */
		.name = "mptcp_fastclose_tcprst",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_FASTCLOSE |
					OPTION_MPTCP_RST,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY,
			  .reset_reason = 1),
		.size = 16, .words = { 0x1e0c7000, 0x11121314, 0x15161718,
				       0x1e048001 },
	},
	{
		/* A reset for no reason of its own: 0, unspecified, the
		 * default (section 3.6).
		 */
		.name = "mptcp_fastclose_tcprst_unspec",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_FASTCLOSE |
					OPTION_MPTCP_RST,
			  .rcvr_key = MPTCP_TEST_RCVR_KEY),
		.size = 16, .words = { 0x1e0c7000, 0x11121314, 0x15161718,
				       0x1e048000 },
	},
	{
		/* Section 3.7: length 12, the DSN of the failed data.
		 * <mp_fail len 12>
		 */
		.name = "mptcp_mp_fail",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_FAIL,
			  .fail_seq = MPTCP_TEST_FAIL_SEQ),
		.size = 12, .words = { 0x1e0c6000, 0x21222324, 0x25262728 },
	},
	{
		/* The reset that may carry it (section 3.7), for middlebox
		 * interference, reason 6 (section 3.6): 12 + 4.
		 */
		.name = "mptcp_mp_fail_tcprst",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_FAIL | OPTION_MPTCP_RST,
			  .fail_seq = MPTCP_TEST_FAIL_SEQ,
			  .reset_reason = 6),
		.size = 16, .words = { 0x1e0c6000, 0x21222324, 0x25262728,
				       0x1e048006 },
	},
	{
		/* MP_FAIL after the mapping it may go with (section 3.7),
		 * past the mapping's two NOPs: 28 + 12 = 40.
		 */
		.name = "mptcp_dss_ack64_map_mp_fail",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_DSS | OPTION_MPTCP_FAIL,
			  .ext_copy = { MPTCP_DSS_MAP(MPTCP_TEST_DATA_LEN),
					.use_ack = 1, .ack64 = 1 },
			  .fail_seq = MPTCP_TEST_FAIL_SEQ),
		.size = 40, .words = { 0x1e1a200f,
				       upper_32_bits(MPTCP_TEST_ACK_SEQ),
				       lower_32_bits(MPTCP_TEST_ACK_SEQ),
				       0x00000001, 0x00000002, MPTCP_TEST_SSN,
				       0x00640101, 0x1e0c6000, 0x21222324,
				       0x25262728 },
	},
	{
		/* Linux writes an address signal before a removal. */
		.name = "mptcp_add_addr_then_remove_addr",
		MPTCP_OUT(.suboptions = OPTION_MPTCP_ADD_ADDR |
					OPTION_MPTCP_RM_ADDR,
			  .addr = MPTCP_ADDR4(1, 0),
			  .rm_list = { .ids = { 5 }, .nr = 1 }),
		.size = 12, .words = { 0x1e083101, MPTCP_TEST_ADDR4,
				       0x1e044005 },
	},
};

static void tcp_opt_mptcp_write_desc(const struct tcp_opt_mptcp_write_case *c,
				     char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_opt_mptcp_write, tcp_opt_mptcp_write_cases,
		  tcp_opt_mptcp_write_desc);

static void tcp_opt_mptcp_write_test(struct kunit *test)
{
#if IS_ENABLED(CONFIG_MPTCP)
	const struct tcp_opt_mptcp_write_case *c = test->param_value;
	const struct tcp_opt_input in = { .pkt = TCP_OPT_ESTABLISHED,
					  .mptcp = TCP_OPT_MPTCP_MPC };
	struct tcp_out_options opts = { .options = OPTION_MPTCP,
					.mptcp = c->mptcp };
	struct tcp_opt_env *env = test->priv;
	struct tcp_opt_seen want;

	if (c->mptcp.addr.family == AF_INET6 &&
	    c->mptcp.suboptions & OPTION_MPTCP_ADD_ADDR &&
	    !IS_ENABLED(CONFIG_MPTCP_IPV6))
		tcp_opt_skip(test, "needs CONFIG_MPTCP_IPV6");
	tcp_opt_setup(test, env, &in);
	/* Both queued: each goes out once, on the segment that carries it. */
	env->subflow->send_mp_prio = 1;
	env->subflow->send_mp_fail = 1;
	tcp_opt_write_alone(env, &opts);
	tcp_opt_check_written_words(test, c->name, c->words, c->size, &want);
	KUNIT_EXPECT_EQ_MSG(test, want.mptcp_off, (int)sizeof(struct tcphdr),
			    "case %s: table: MPTCP first", c->name);
	KUNIT_EXPECT_EQ_MSG(test, (bool)env->subflow->send_mp_prio,
			    !(c->mptcp.suboptions & OPTION_MPTCP_PRIO),
			    "case %s: MP_PRIO queued after it", c->name);
	KUNIT_EXPECT_EQ_MSG(test, (bool)env->subflow->send_mp_fail,
			    !(c->mptcp.suboptions & OPTION_MPTCP_FAIL),
			    "case %s: MP_FAIL queued after it", c->name);
#else
	tcp_opt_skip(test, "needs CONFIG_MPTCP");
#endif
}

/* A D-SACK block goes out on one segment only (RFC 2883 section 4). */
static void tcp_opt_dsack_sent_once_test(struct kunit *test)
{
	static const struct tcp_opt_case first = {
		.name = "dsack_first_segment",
		.in = EST_IN(1, 2, 1),
		.out = { .size = 40, .mss_delta = 28,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x0101051a,
				    DSACK_START, DSACK_END,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END } },
	};
	static const struct tcp_opt_case second = {
		.name = "dsack_next_segment",
		.in = EST_IN(1, 2, 0),
		.out = { .size = 32, .mss_delta = 20,
			 .words = { 0x0101080a, EST_TSVAL, EST_TSECR, 0x01010512,
				    SACK1_START, SACK1_END,
				    SACK2_START, SACK2_END } },
	};
	struct tcp_opt_env *env = test->priv;

	tcp_opt_setup(test, env, &first.in);
	tcp_opt_check_case(test, &first);
	KUNIT_EXPECT_EQ_MSG(test, (int)env->tp->rx_opt.dsack, 0,
			    "the writer must consume the D-SACK");
	/* The next segment starts from the state the first one left. */
	tcp_opt_check_case(test, &second);
}

/* What a written AccECN option leaves for the segments after it: whether
 * a D-SACK went out beside it (accecn_opt_sent_w_dsack, commit
 * 1247fb19cafe, "tcp: accecn: detect loss ACK w/ AccECN option and add
 * TCP_ACCECN_OPTION_PERSIST"). When the retransmission that D-SACK reports
 * arrives, tcp_input.c concludes the ACK with the option was lost and
 * stops sending the option (RFC 9768 section 3.2.3.2.2). An option sent
 * without a D-SACK, and a segment without the option, clear the record.
 */
static void tcp_opt_accecn_dsack_record_test(struct kunit *test)
{
#ifdef TCP_OPT_HAVE_ACCECN
	const struct tcp_opt_case *dsack = tcp_opt_test_row("accecn_est_dsack");
	const struct tcp_opt_case *next = tcp_opt_test_row("accecn_est_ts_1_sack");
	const struct tcp_opt_case *none =
		tcp_opt_test_row("accecn_est_minlen3_no_room");
	struct tcp_opt_env *env = test->priv;

	KUNIT_ASSERT_TRUE(test, dsack && next && none);
	tcp_opt_setup(test, env, &dsack->in);
	tcp_opt_check_case(test, dsack);
	KUNIT_EXPECT_EQ_MSG(test, (int)env->tp->accecn_opt_sent_w_dsack, 1,
			    "the option went out beside a D-SACK");
	/* The next segment starts from the state the first one left: the
	 * D-SACK consumed, the SACK block still queued.
	 */
	tcp_opt_check_case(test, next);
	KUNIT_EXPECT_EQ_MSG(test, (int)env->tp->accecn_opt_sent_w_dsack, 0,
			    "the option went out with no D-SACK");

	tcp_opt_setup(test, env, &none->in);
	env->tp->accecn_opt_sent_w_dsack = 1;	/* as the first write left it */
	tcp_opt_check_case(test, none);
	KUNIT_EXPECT_EQ_MSG(test, (int)env->tp->accecn_opt_sent_w_dsack, 0,
			    "a segment without the option");
#else
	tcp_opt_skip(test, "needs AccECN (RFC 9768), 6.18+");
#endif
}

/* Exhaustive sweep over the inputs the calculators read. Each group
 * fixes the packet kind, MD5, syncookie and the Fast Open option kind and
 * loops over the rest. TCP-AO groups loop over MAC lengths instead of
 * MSS and wscale values, which the AO rules do not read; they are skipped
 * on trees without TCP-AO. Every combination is checked in-kernel for the
 * invariants of tcp_opt_check_written() and printed as one '# sweep:'
 * record; the host compares each record with its reference model
 * (tools/tcpopt/layout/model.py), which is written from the RFCs, not from this
 * file's tables. AccECN groups (6.18+) fix MSS and wscale too, send the
 * option whenever it fits (tcp_ecn_option 2) and, on established
 * segments, loop over the fields owed (accecn_minlen 0 to 3).
 */
struct tcp_opt_sweep_group {
	const char *name;
	enum tcp_opt_pkt pkt;
	bool md5, syncookie;
	enum tcp_opt_fo fo;
	bool ao;
	bool accecn;
	enum tcp_opt_mptcp mptcp;
	u8 mptcp_ack;
};

static const struct tcp_opt_sweep_group tcp_opt_sweep_groups[] = {
	{ "syn", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_NONE },
	{ "syn_fo", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_RFC7413 },
	{ "syn_foexp", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_EXP },
	{ "syn_md5", TCP_OPT_SYN, 1, 0, TCP_OPT_FO_NONE },
	{ "syn_md5_fo", TCP_OPT_SYN, 1, 0, TCP_OPT_FO_RFC7413 },
	{ "syn_md5_foexp", TCP_OPT_SYN, 1, 0, TCP_OPT_FO_EXP },
	{ "synack", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE },
	{ "synack_fo", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_RFC7413 },
	{ "synack_foexp", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_EXP },
	{ "synack_md5", TCP_OPT_SYNACK, 1, 0, TCP_OPT_FO_NONE },
	{ "synack_md5_fo", TCP_OPT_SYNACK, 1, 0, TCP_OPT_FO_RFC7413 },
	{ "synack_md5_foexp", TCP_OPT_SYNACK, 1, 0, TCP_OPT_FO_EXP },
	{ "synack_cookie", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_NONE },
	{ "synack_cookie_fo", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_RFC7413 },
	{ "synack_cookie_foexp", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_EXP },
	{ "synack_cookie_md5", TCP_OPT_SYNACK, 1, 1, TCP_OPT_FO_NONE },
	{ "synack_cookie_md5_fo", TCP_OPT_SYNACK, 1, 1, TCP_OPT_FO_RFC7413 },
	{ "synack_cookie_md5_foexp", TCP_OPT_SYNACK, 1, 1, TCP_OPT_FO_EXP },
	{ "established", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE },
	{ "established_md5", TCP_OPT_ESTABLISHED, 1, 0, TCP_OPT_FO_NONE },
	{ "syn_ao", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_NONE, true },
	{ "syn_ao_fo", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_RFC7413, true },
	{ "syn_ao_foexp", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_EXP, true },
	{ "synack_ao", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE, true },
	{ "synack_ao_fo", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_RFC7413, true },
	{ "synack_ao_foexp", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_EXP, true },
	{ "synack_cookie_ao", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_NONE, true },
	{ "synack_cookie_ao_fo", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_RFC7413, true },
	{ "synack_cookie_ao_foexp", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_EXP, true },
	{ "established_ao", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE, true },
	{ "synack_accecn", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE, 0, true },
	{ "synack_accecn_fo", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_RFC7413, 0,
	  true },
	{ "synack_accecn_foexp", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_EXP, 0,
	  true },
	{ "synack_accecn_md5", TCP_OPT_SYNACK, 1, 0, TCP_OPT_FO_NONE, 0, true },
	{ "synack_cookie_accecn", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_NONE, 0,
	  true },
	{ "synack_accecn_ao", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE, 1, true },
	{ "established_accecn", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE, 0,
	  true },
	{ "established_accecn_md5", TCP_OPT_ESTABLISHED, 1, 0, TCP_OPT_FO_NONE,
	  0, true },
	{ "established_accecn_ao", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE,
	  1, true },
	/* MPTCP (CONFIG_MPTCP), after everything else. */
	{ "syn_mptcp", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "syn_mptcp_fo", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_RFC7413, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "syn_mptcp_foexp", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_EXP, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "syn_mpj", TCP_OPT_SYN, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPJ },
	{ "synack_mptcp", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_mptcp_fo", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_RFC7413, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_mptcp_foexp", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_EXP, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_mpj", TCP_OPT_SYNACK, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPJ },
	{ "synack_cookie_mptcp", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_cookie_mptcp_fo", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_RFC7413, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_cookie_mptcp_foexp", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_EXP, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "synack_cookie_mpj", TCP_OPT_SYNACK, 0, 1, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPJ },
	{ "established_mptcp", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC },
	{ "established_mptcp_ack32", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC, 32 },
	{ "established_mptcp_ack64", TCP_OPT_ESTABLISHED, 0, 0, TCP_OPT_FO_NONE, 0, 0,
	  TCP_OPT_MPTCP_MPC, 64 },
};

static const u16 tcp_opt_sweep_mss[] = { 536, 1220, 1460, 65495 };
static const u8 tcp_opt_sweep_wscale[] = { 0, 1, 7, 14 };
static const u8 tcp_opt_sweep_fo_len[] = { 0, 4, 6, 8, 10, 12, 14, 16 };
/* 4 + MAC: aligned (4, 12, 16), NOP-padded by 2 (6, 10) and 0 (16). */
static const u8 tcp_opt_sweep_ao_maclen[] = { 4, 6, 10, 12, 16 };
/* The benchmark (tcp_options_bench.c) widens the MSS axis by this factor,
 * with MSS values next to the listed ones, and leaves the records out.
 */
static unsigned int tcp_opt_sweep_scale = 1;
static bool tcp_opt_sweep_quiet;

static void tcp_opt_sweep_desc(const struct tcp_opt_sweep_group *g,
			       char *desc)
{
	strscpy(desc, g->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_opt_sweep, tcp_opt_sweep_groups, tcp_opt_sweep_desc);

/* Back to a zeroed socket, request and skb before the next combination. */
static void tcp_opt_reset(struct tcp_opt_env *env)
{
	memset(env->tp, 0, sizeof(*env->tp));
	memset(env->treq, 0, TCP_OPT_REQ_SIZE);
	memset(env->skb, 0, sizeof(*env->skb));
	memset(&env->fo_req, 0, sizeof(env->fo_req));
	write_pnet(&env->tp->inet_conn.icsk_inet.sk.sk_net, env->net);
	tcp_opt_init_sock_lock((struct sock *)env->tp);
}

static void tcp_opt_sweep_one(struct kunit *test,
			      const struct tcp_opt_input *in)
{
	struct tcp_opt_env *env = test->priv;
	struct tcp_out_options opts = {};
	struct tcp_opt_seen got;
	char input[200], text[200];
	unsigned int size;

	tcp_opt_reset(env);
	tcp_opt_setup(test, env, in);
	size = tcp_opt_calc_and_write(test, env, in, &opts);
	tcp_opt_format_input(input, sizeof(input), in);
	/* After a failure, keep printing records but stop re-reporting. */
	if (test->status != KUNIT_FAILURE)
		tcp_opt_check_written(test, input, in, &opts, size, &got, &got,
				      text, sizeof(text));
	if (!tcp_opt_sweep_quiet)
		kunit_log(KERN_INFO, test,
			  KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
			  "# sweep: %s size=%u bytes=%*phN", input, size,
			  (int)min_t(unsigned int, size, MAX_TCP_OPTION_SPACE),
			  env->buf + sizeof(struct tcphdr));
}

/* Every Fast Open cookie length of the group, or none. */
static unsigned int tcp_opt_sweep_fo(struct kunit *test,
				     const struct tcp_opt_sweep_group *g,
				     struct tcp_opt_input *in)
{
	unsigned int f, fo_lens = g->fo == TCP_OPT_FO_NONE ? 1 :
				  ARRAY_SIZE(tcp_opt_sweep_fo_len);

	for (f = 0; f < fo_lens; f++) {
		in->fo_len = g->fo == TCP_OPT_FO_NONE ?
			     0 : tcp_opt_sweep_fo_len[f];
		tcp_opt_sweep_one(test, in);
	}
	return fo_lens;
}

/* SYN and SYN-ACK: the three flags, then MSS and wscale or the MAC. */
static unsigned int tcp_opt_sweep_handshake(struct kunit *test,
					    const struct tcp_opt_sweep_group *g,
					    struct tcp_opt_input *in)
{
	unsigned int mss_values = ARRAY_SIZE(tcp_opt_sweep_mss) *
				  tcp_opt_sweep_scale;
	unsigned int macs = g->ao ? ARRAY_SIZE(tcp_opt_sweep_ao_maclen) : 1;
	unsigned int flags, m, w, count = 0;

	for (flags = 0; flags < 8; flags++) {
		in->ts = flags & 1;
		in->sack = flags & 2;
		in->ws = flags & 4;
		if (g->ao || g->accecn || g->mptcp) {
			in->mss = 1460;
			in->wscale = 7;
			for (m = 0; m < macs; m++) {
				in->ao_maclen = g->ao ?
						tcp_opt_sweep_ao_maclen[m] : 0;
				count += tcp_opt_sweep_fo(test, g, in);
			}
			continue;
		}
		for (m = 0; m < mss_values; m++) {
			in->mss = tcp_opt_sweep_mss[m % ARRAY_SIZE(tcp_opt_sweep_mss)] +
				  m / ARRAY_SIZE(tcp_opt_sweep_mss);
			for (w = 0; w < ARRAY_SIZE(tcp_opt_sweep_wscale); w++) {
				in->wscale = tcp_opt_sweep_wscale[w];
				count += tcp_opt_sweep_fo(test, g, in);
			}
		}
	}
	return count;
}

/* Established: TS, D-SACK and 0..TCP_NUM_SACKS blocks, per MAC length
 * and, with AccECN, per number of fields owed.
 */
static unsigned int tcp_opt_sweep_established(struct kunit *test,
					      const struct tcp_opt_sweep_group *g,
					      struct tcp_opt_input *in)
{
	unsigned int flags, m, macs = g->ao ?
		ARRAY_SIZE(tcp_opt_sweep_ao_maclen) : 1;
	unsigned int owed = g->accecn ? TCP_OPT_ACCECN_FIELDS + 1 : 1;
	unsigned int count = 0, f;

	for (m = 0; m < macs; m++) {
		in->ao_maclen = g->ao ? tcp_opt_sweep_ao_maclen[m] : 0;
		for (flags = 0; flags < 2 * (TCP_NUM_SACKS + 1) * 2; flags++) {
			in->ts = flags & 1;
			in->dsack = flags & 2;
			in->num_sacks = flags >> 2;
			for (f = 0; f < owed; f++) {
				in->accecn_minlen = f;
				tcp_opt_sweep_one(test, in);
				count++;
			}
		}
	}
	return count;
}

static unsigned int tcp_opt_sweep_run_group(struct kunit *test,
					    const struct tcp_opt_sweep_group *g)
{
	struct tcp_opt_input in = { .pkt = g->pkt, .md5 = g->md5,
				    .syncookie = g->syncookie, .fo = g->fo,
				    .accecn = g->accecn,
				    .ecn_option = g->accecn ? ECN_OPTION_FULL :
								 ECN_OPTION_OFF,
				    .mptcp = g->mptcp,
				    .mptcp_ack = g->mptcp_ack };

	if (g->pkt == TCP_OPT_ESTABLISHED)
		return tcp_opt_sweep_established(test, g, &in);
	return tcp_opt_sweep_handshake(test, g, &in);
}

static void tcp_opt_sweep_test(struct kunit *test)
{
	const struct tcp_opt_sweep_group *g = test->param_value;
	u64 start = ktime_get_ns();
	unsigned int count = tcp_opt_sweep_run_group(test, g);

	kunit_info(test, "sweep %s: %u combinations in %llu us", g->name,
		   count, div_u64(ktime_get_ns() - start, NSEC_PER_USEC));
}

static struct kunit_case tcp_opt_sweep_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_sweep_test, tcp_opt_sweep_gen_params),
	{}
};

static struct kunit_case tcp_opt_syn_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_syn_gen_params),
	{}
};

static struct kunit_case tcp_opt_synack_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_synack_gen_params),
	{}
};

static struct kunit_case tcp_opt_md5_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_md5_gen_params),
	{}
};

static struct kunit_case tcp_opt_ao_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_ao_gen_params),
	{}
};

static struct kunit_case tcp_opt_fastopen_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_fastopen_gen_params),
	{}
};

static struct kunit_case tcp_opt_accecn_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_accecn_gen_params),
	KUNIT_CASE_PARAM(tcp_opt_accecn_write_test,
			 tcp_opt_accecn_write_gen_params),
	KUNIT_CASE(tcp_opt_accecn_dsack_record_test),
	{}
};

static struct kunit_case tcp_opt_mptcp_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_mptcp_gen_params),
	KUNIT_CASE_PARAM(tcp_opt_mptcp_write_test,
			 tcp_opt_mptcp_write_gen_params),
	{}
};

static struct kunit_case tcp_opt_established_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_layout_test, tcp_opt_established_gen_params),
	KUNIT_CASE(tcp_opt_dsack_sent_once_test),
	{}
};

/* The MSS from a path MTU: tcp_sync_mss() takes the IP and TCP headers
 * off the MTU (RFC 1122 section 4.2.2.6, RFC 879), caps it at the peer's
 * MSS (mss_clamp), takes off IP options or extension headers
 * (icsk_ext_hdr_len), never goes below net.ipv4.tcp_min_snd_mss (48 by
 * default, ip-sysctl.rst), takes off the options every segment carries
 * (tcp_header_len beyond 20 bytes), never exceeds half the largest window
 * the peer offered, nor 68 bytes less the header (tcp_bound_to_half_wnd()),
 * and with MTU probing never exceeds what search_low allows.
 * tcp_current_mss() then takes off what the next segment's options add
 * beyond tcp_header_len, or gives back what they no longer take.
 */
struct tcp_opt_mss_case {
	const char *name;
	u16 net_header_len;	/* 20: IPv4, 40: IPv6 */
	u32 pmtu;
	u16 mss_clamp;		/* the peer's MSS */
	u16 ext_hdr_len;	/* IP options or extension headers */
	u16 header_len;		/* tcp_header_len */
	u32 max_window;		/* largest window the peer offered, 0: none */
	u32 search_low;		/* MTU probing's lower bound, 0: no probing */
	u32 search_high;	/* MTU probing's upper bound before the call */
	u32 want_search_high;	/* and after it */
	u32 route_mtu;		/* the route's MTU, 0: none */
	bool allfrag;		/* the route wants a fragment header (< 6.7) */
	u32 max_window_after;	/* the peer's window widened after the sync */
	bool ts;		/* the next segment carries TS */
	int want_sync;		/* tcp_sync_mss() and mss_cache */
	int want_current;	/* tcp_current_mss() */
};

static const struct tcp_opt_mss_case tcp_opt_mss_cases[] = {
	{
		.name = "mss_ipv4_mtu_1500",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .want_sync = 1460,
		.want_current = 1460,
	},
	{
		.name = "mss_ipv6_mtu_1500",
		.net_header_len = 40, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .want_sync = 1440,
		.want_current = 1440,
	},
	{
		/* RFC 879: the default 576-byte datagram, the 536 MSS. */
		.name = "mss_ipv4_mtu_576",
		.net_header_len = 20, .pmtu = 576, .mss_clamp = 65535,
		.header_len = 20, .want_sync = 536, .want_current = 536,
	},
	{
		/* RFC 8200 section 5: IPv6's minimum link MTU. */
		.name = "mss_ipv6_mtu_1280",
		.net_header_len = 40, .pmtu = 1280, .mss_clamp = 65535,
		.header_len = 20, .want_sync = 1220,
		.want_current = 1220,
	},
	{
		.name = "mss_ipv4_odd_mtu_1499",
		.net_header_len = 20, .pmtu = 1499, .mss_clamp = 65535,
		.header_len = 20, .want_sync = 1459,
		.want_current = 1459,
	},
	{
		.name = "mss_ipv4_ts",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 32, .ts = 1, .want_sync = 1448,
		.want_current = 1448,
	},
	{
		.name = "mss_ipv6_ts_peer_536",
		.net_header_len = 40, .pmtu = 1500, .mss_clamp = 536,
		.header_len = 32, .ts = 1, .want_sync = 524,
		.want_current = 524,
	},
	{
		.name = "mss_ipv4_ip_options_8",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.ext_hdr_len = 8, .header_len = 20, .want_sync = 1452,
		.want_current = 1452,
	},
	{
		/* RFC 791's minimum MTU leaves 28; the floor gives 48. */
		.name = "mss_ipv4_mtu_68_floor",
		.net_header_len = 20, .pmtu = 68, .mss_clamp = 65535,
		.header_len = 32, .ts = 1, .want_sync = 36,
		.want_current = 36,
	},
	{
		/* The floor comes after the peer's MSS. */
		.name = "mss_peer_20_floor",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 20,
		.header_len = 20, .want_sync = 48, .want_current = 48,
	},
	{
		.name = "mss_half_window",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .max_window = 2000, .want_sync = 1000,
		.want_current = 1000,
	},
	{
		/* A window no larger than 536 bytes is the cutoff itself. */
		.name = "mss_window_100",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .max_window = 100, .want_sync = 100,
		.want_current = 100,
	},
	{
		.name = "mss_window_20_floor_68",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 32, .ts = 1, .max_window = 20,
		.want_sync = 36, .want_current = 36,
	},
	{
		/* RFC 4821 section 7.2: the search never looks above the path
		 * MTU, so a smaller PMTU lowers its upper bound.
		 */
		.name = "mss_mtu_probing_search_low",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .search_low = 1024, .search_high = 9000,
		.want_search_high = 1500, .want_sync = 984,
		.want_current = 984,
	},
	{
		/* A PMTU above the search's upper bound leaves it alone. */
		.name = "mss_mtu_probing_search_high_kept",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .search_low = 1024, .search_high = 1400,
		.want_search_high = 1400, .want_sync = 984,
		.want_current = 984,
	},
	{
		/* The route's MTU dropped since mss_cache was computed (an
		 * ICMP "fragmentation needed", RFC 1191): tcp_current_mss()
		 * sees it differ from icsk_pmtu_cookie and syncs to it.
		 */
		.name = "mss_route_mtu_dropped_1280",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .route_mtu = 1280, .want_sync = 1460,
		.want_current = 1240,
	},
	{
		/* The route's MTU is the one mss_cache was computed for:
		 * tcp_current_mss() keeps mss_cache (tcp_sync_mss()'s NOTE2,
		 * it alone sets it), though the window it was bounded by
		 * has grown since.
		 */
		.name = "mss_route_mtu_unchanged_cache_kept",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .max_window = 2000, .route_mtu = 1500,
		.max_window_after = 65535, .want_sync = 1000,
		.want_current = 1000,
	},
	{
		/* A route that learned a PMTU below 1280 sends a fragment
		 * header in every packet (RFC 2460 5, RTAX_FEATURE_ALLFRAG):
		 * its 8 bytes come off the MSS. Gone in 6.7 (RFC 8021).
		 */
		.name = "mss_ipv6_allfrag",
		.net_header_len = 40, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 20, .route_mtu = 1500, .allfrag = 1,
		.want_sync = 1432, .want_current = 1432,
	},
	{
		/* tcp_header_len still counts a 20-byte MD5 option (an
		 * accepted socket on 6.1) whose key was deleted: the next
		 * segment carries TS only, and the MSS grows by exactly the
		 * 20 bytes that no longer go out.
		 */
		.name = "mss_md5_key_deleted",
		.net_header_len = 20, .pmtu = 1500, .mss_clamp = 65535,
		.header_len = 52, .ts = 1, .want_sync = 1428,
		.want_current = 1448,
	},
};

/* A route with an MTU, as dst_mtu() reads it, and its metrics. */
struct tcp_opt_route {
	struct dst_entry dst;
	unsigned int mtu;
	u32 metrics[RTAX_MAX];
};

static unsigned int tcp_opt_route_mtu(const struct dst_entry *dst)
{
	return container_of(dst, struct tcp_opt_route, dst)->mtu;
}

static const struct dst_ops tcp_opt_route_ops = {
	.mtu	= tcp_opt_route_mtu,
};

static void tcp_opt_route_set(struct kunit *test, struct sock *sk,
			      const struct tcp_opt_mss_case *c)
{
	struct tcp_opt_route *route;

	route = kunit_kzalloc(test, sizeof(*route), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, route);
	route->dst.ops = (struct dst_ops *)&tcp_opt_route_ops;
	route->mtu = c->route_mtu;
	if (c->allfrag)
		route->metrics[RTAX_FEATURES - 1] = RTAX_FEATURE_ALLFRAG;
	dst_init_metrics(&route->dst, route->metrics, true);
	RCU_INIT_POINTER(sk->sk_dst_cache, &route->dst);
}

static void tcp_opt_mss_desc(const struct tcp_opt_mss_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_opt_mss, tcp_opt_mss_cases, tcp_opt_mss_desc);

static void tcp_opt_mss_test(struct kunit *test)
{
	const struct tcp_opt_mss_case *c = test->param_value;
	struct tcp_opt_env *env = test->priv;
	struct inet_connection_sock *icsk = &env->tp->inet_conn;
	struct sock *sk = &icsk->icsk_inet.sk;
	struct inet_connection_sock_af_ops *ops;
	int got;

	ops = kunit_kzalloc(test, sizeof(*ops), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ops);
	ops->net_header_len = c->net_header_len;
	if (c->allfrag) {
#ifdef TCP_OPT_HAVE_ALLFRAG
		ops->net_frag_header_len = sizeof(struct frag_hdr);
#else
		tcp_opt_skip(test, "needs RTAX_FEATURE_ALLFRAG (before 6.7)");
#endif
	}
	icsk->icsk_af_ops = ops;
	icsk->icsk_ext_hdr_len = c->ext_hdr_len;
	icsk->icsk_mtup.enabled = !!c->search_low;
	icsk->icsk_mtup.search_low = c->search_low;
	icsk->icsk_mtup.search_high = c->search_high;
	env->net->ipv4.sysctl_tcp_min_snd_mss = TCP_MIN_SND_MSS;
	env->tp->rx_opt.mss_clamp = c->mss_clamp;
	env->tp->rx_opt.tstamp_ok = c->ts;
	env->tp->tcp_header_len = c->header_len;
	env->tp->max_window = c->max_window;
	if (c->route_mtu)
		tcp_opt_route_set(test, sk, c);

	tcp_opt_lock_sock(sk);
	got = tcp_sync_mss(sk, c->pmtu);
	tcp_opt_unlock_sock(sk);
	KUNIT_EXPECT_EQ_MSG(test, got, c->want_sync,
			    "case %s: tcp_sync_mss(): MTU %u, IP header %u, peer MSS %u, IP options %u, tcp_header_len %u, max_window %u, search_low %u",
			    c->name, c->pmtu, c->net_header_len, c->mss_clamp,
			    c->ext_hdr_len, c->header_len, c->max_window,
			    c->search_low);
	KUNIT_EXPECT_EQ_MSG(test, env->tp->mss_cache, (u32)c->want_sync,
			    "case %s: mss_cache", c->name);
	KUNIT_EXPECT_EQ_MSG(test, icsk->icsk_pmtu_cookie, c->pmtu,
			    "case %s: the MTU mss_cache was computed for",
			    c->name);
	if (c->search_low)
		KUNIT_EXPECT_EQ_MSG(test, (u32)icsk->icsk_mtup.search_high,
				    c->want_search_high,
				    "case %s: MTU probing's upper bound, %u before, PMTU %u",
				    c->name, c->search_high, c->pmtu);
	if (c->max_window_after)
		env->tp->max_window = c->max_window_after;
	tcp_opt_lock_sock(sk);
	got = tcp_current_mss(sk);
	tcp_opt_unlock_sock(sk);
	RCU_INIT_POINTER(sk->sk_dst_cache, NULL);
	KUNIT_EXPECT_EQ_MSG(test, got, c->want_current,
			    "case %s: tcp_current_mss(): tcp_header_len %u, TS %d, route MTU %u, max_window %u",
			    c->name, c->header_len, c->ts, c->route_mtu,
			    env->tp->max_window);
}

static struct kunit_case tcp_opt_mss_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_opt_mss_test, tcp_opt_mss_gen_params),
	{}
};

/* The rows of every table the live suite compares packets with. */
const struct tcp_opt_case *tcp_opt_test_row(const char *name)
{
	static const struct {
		const struct tcp_opt_case *rows;
		size_t n;
	} tables[] = {
		{ tcp_opt_syn_cases, ARRAY_SIZE(tcp_opt_syn_cases) },
		{ tcp_opt_synack_cases, ARRAY_SIZE(tcp_opt_synack_cases) },
		{ tcp_opt_md5_cases, ARRAY_SIZE(tcp_opt_md5_cases) },
		{ tcp_opt_ao_cases, ARRAY_SIZE(tcp_opt_ao_cases) },
		{ tcp_opt_fastopen_cases, ARRAY_SIZE(tcp_opt_fastopen_cases) },
		{ tcp_opt_established_cases,
		  ARRAY_SIZE(tcp_opt_established_cases) },
		{ tcp_opt_accecn_cases, ARRAY_SIZE(tcp_opt_accecn_cases) },
		{ tcp_opt_mptcp_cases, ARRAY_SIZE(tcp_opt_mptcp_cases) },
	};
	size_t t, i;

	for (t = 0; t < ARRAY_SIZE(tables); t++)
		for (i = 0; i < tables[t].n; i++)
			if (!strcmp(tables[t].rows[i].name, name))
				return &tables[t].rows[i];
	return NULL;
}

/* The words of the MPTCP writer row @name and their @size, for the live
 * suite: the MPTCP option goes after every TCP option.
 */
const u32 *tcp_opt_test_mptcp_row(const char *name, unsigned int *size)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tcp_opt_mptcp_write_cases); i++) {
		if (!strcmp(tcp_opt_mptcp_write_cases[i].name, name)) {
			*size = tcp_opt_mptcp_write_cases[i].size;
			return tcp_opt_mptcp_write_cases[i].words;
		}
	}
	return NULL;
}

#if IS_ENABLED(CONFIG_TCP_OPTIONS_KUNIT_BENCH)
/* Slow, and off by default: the hot-path costs of the code above, and
 * the sweep's scaling, which only this file can run.
 */
#define TCP_OPT_BENCH_WITH_SWEEP
#include "tcp_options_bench.c"
#endif

#define TCP_OPT_SUITE(_name)						\
	static struct kunit_suite _name##_suite = {			\
		.name = #_name,						\
		.init = tcp_opt_test_init,				\
		.exit = tcp_opt_test_exit,				\
		.test_cases = _name##_test_cases,			\
	}

TCP_OPT_SUITE(tcp_opt_syn);
TCP_OPT_SUITE(tcp_opt_synack);
TCP_OPT_SUITE(tcp_opt_md5);
TCP_OPT_SUITE(tcp_opt_ao);
TCP_OPT_SUITE(tcp_opt_fastopen);
TCP_OPT_SUITE(tcp_opt_established);
TCP_OPT_SUITE(tcp_opt_accecn);
TCP_OPT_SUITE(tcp_opt_mptcp);
TCP_OPT_SUITE(tcp_opt_sweep);
TCP_OPT_SUITE(tcp_opt_mss);

kunit_test_suites(&tcp_opt_syn_suite, &tcp_opt_synack_suite,
		  &tcp_opt_md5_suite, &tcp_opt_ao_suite, &tcp_opt_fastopen_suite,
		  &tcp_opt_established_suite, &tcp_opt_accecn_suite,
		  &tcp_opt_mptcp_suite, &tcp_opt_sweep_suite,
		  &tcp_opt_mss_suite);
