/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the TCP option KUnit suites share: the row types of the writer
 * tables, the independent decoder and the lookup of a row by name. The
 * writer suite (tcp_options_test.c, included by tcp_output.c) owns the
 * tables; the live suite (tcp_live_test.c) compares the packets the stack
 * sends with the same rows.
 */
#ifndef _TCP_OPTIONS_TEST_H
#define _TCP_OPTIONS_TEST_H

#include <kunit/test.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <net/tcp.h>

#include "tcp_options_test_compat.h"

#define TCP_OPT_WORDS		(MAX_TCP_OPTION_SPACE / 4)

/* The option kinds the suites decode that not every tree names; the
 * others are the kernel's TCPOPT_*. tcp_opt_decoders[] (the helpers)
 * lists every kind with its lengths and its decoder.
 */
enum tcp_opt_kind {
	TCP_OPT_KIND_AO		= 29,	/* RFC 5925 */
	/* RFC 9768 section 3.2.3: the same three 24-bit fields in two
	 * orders.
	 */
	TCP_OPT_KIND_ACCECN0	= 172,	/* EE0B, ECEB, EE1B */
	TCP_OPT_KIND_ACCECN1	= 174,	/* EE1B, ECEB, EE0B */
};

#define TCP_OPT_ACCECN_FIELDS	3

enum tcp_opt_pkt {
	TCP_OPT_SYN,
	TCP_OPT_SYNACK,
	TCP_OPT_ESTABLISHED,
};

/* The MPTCP handshake option the subflow or request asks for (RFC 8684). */
enum tcp_opt_mptcp {
	TCP_OPT_MPTCP_NONE,
	TCP_OPT_MPTCP_MPC,	/* MP_CAPABLE, section 3.1; established: DSS */
	TCP_OPT_MPTCP_MPJ,	/* MP_JOIN, section 3.2 */
};

enum tcp_opt_fo {
	TCP_OPT_FO_NONE,
	TCP_OPT_FO_RFC7413,	/* kind 34 */
	TCP_OPT_FO_EXP,		/* kind 254, magic 0xF989 */
};

struct tcp_opt_input {
	enum tcp_opt_pkt pkt;
	/* SYN: the tcp_timestamps, tcp_sack and tcp_window_scaling sysctls.
	 * SYN-ACK: tstamp_ok, sack_ok and wscale_ok of the request.
	 * Established: tstamp_ok of the connection.
	 */
	bool ts, sack, ws;
	bool md5;		/* an MD5 key is configured */
	bool md5_other_peer;	/* MD5 keys, none of them for this peer */
	/* SYN: ts_recent that tcp_twsk_unique() copied from the TIME-WAIT
	 * socket whose port this connection reuses; 0: a fresh socket.
	 */
	u32 tw_ts_recent;
	bool syncookie;		/* SYN-ACK of type TCP_SYNACK_COOKIE */
	u16 mss;		/* advertised MSS (SYN, SYN-ACK) */
	u8 wscale;		/* our receive window scale */
	enum tcp_opt_fo fo;
	u8 fo_len;		/* Fast Open cookie length */
	u8 num_sacks;		/* SACK blocks queued (established) */
	bool dsack;		/* a D-SACK block is queued (established) */
	u8 ao_maclen;		/* TCP-AO key with this MAC length, 0: none */
	bool active_open;	/* established: we sent the SYN (not accepted) */
	/* AccECN (RFC 9768, 6.18+). SYN-ACK: the request negotiated it.
	 * Established: the connection is in AccECN mode and has seen an
	 * AccECN option from its peer.
	 */
	bool accecn;
	u8 ecn_option;		/* the tcp_ecn_option sysctl */
	u8 accecn_minlen;	/* fields the next option must carry */
	bool accecn_demand;	/* an option is owed on the next ACK */
	bool accecn_fail_send;	/* our options seemed not to get through */
	bool synack_retrans;	/* SYN-ACK of type TCP_SYNACK_RETRANS */
	bool bpf_hdr_opt;	/* WRITE_HDR_OPT callback flag, no program */
	/* MPTCP (CONFIG_MPTCP). SYN: what the subflow requests; checksums
	 * and joins to the initial address follow init_net's sysctls.
	 * SYN-ACK: what the request negotiated.
	 */
	enum tcp_opt_mptcp mptcp;
	/* Established, MPTCP: the data ACK the connection sends, 32 or 64
	 * bits; 0 before it can acknowledge data (no DSS Data ACK).
	 */
	u8 mptcp_ack;
	bool mptcp_csum;	/* SYN-ACK: checksums required (flag A) */
	bool mptcp_deny_join_id0;	/* SYN-ACK: flag C */
	bool mptcp_backup;	/* MP_JOIN: the backup flag B */
};

struct tcp_opt_expect {
	unsigned int size;	/* bytes the calculator must reserve */
	u32 words[TCP_OPT_WORDS];
	int mss_delta;		/* established: mss_cache - tcp_current_mss() */
};

struct tcp_opt_case {
	const char *name;
	struct tcp_opt_input in;
	struct tcp_opt_expect out;
};

/* What a layout holds, decoded independently of the writer. */
struct tcp_opt_seen {
	u8 first_kind, second_kind;	/* first two options other than NOP */
	int mss, wscale;		/* -1 when absent */
	bool sackperm, ts, md5;
	u32 tsval, tsecr;
	int sack_off;			/* offset of SACK kind from th, or -1 */
	int md5_off;			/* offset of MD5 hash from th, or -1 */
	int ao_off;			/* offset of TCP-AO kind from th, or -1 */
	int ao_maclen;
	int sack_blocks;
	int fo_len;			/* -1 when absent */
	bool fo_exp;
	u8 fo_cookie[TCP_FASTOPEN_COOKIE_MAX];
	int accecn_fields;		/* -1 when absent */
	int accecn_off;			/* offset of AccECN kind from th, or -1 */
	u8 accecn_kind;
	u32 accecn[TCP_OPT_ACCECN_FIELDS];	/* in the option's order */
	int mptcp_off;			/* offset of the first MPTCP option, or -1 */
	u8 mptcp_subtype;		/* of the last MPTCP option */
	u8 mptcp_len;
};

/* One row of tcp_opt_decoders[]: an option of @kind is well formed when
 * its length byte lies in [@min_len, @max_len] and @decode accepts it.
 * @decode gets the option at @o (o[1] its length) and the kind's offset
 * from the start of the TCP header, fills @seen and appends packetdrill
 * notation to @text.
 */
struct tcp_opt_decoder {
	u8 kind;
	u8 min_len, max_len;
	bool (*decode)(const u8 *o, unsigned int th_off,
		       struct tcp_opt_seen *seen, char *text, size_t len);
};

/* Before 6.4 a skipped parameterized case printed a plain "ok" with no
 * "# SKIP" directive; say it in a diagnostic line the host reads too.
 */
static inline void tcp_opt_skip(struct kunit *test, const char *reason)
{
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# skip: %s", reason);
	kunit_skip(test, "%s", reason);
}

/* tcp_header_len as the stack leaves it on an established socket: the
 * aligned TS option if negotiated and, on an accepted socket only, what
 * tcp_create_openreq_child() counts for its key (@child_key_len); the
 * active opener's count is reset at the SYN-ACK. The writer suite's
 * MSS rows assume it; the live suite checks it against real sockets.
 */
static inline unsigned int tcp_opt_est_header_len(bool ts, bool active_open,
						  unsigned int child_key_len)
{
	return sizeof(struct tcphdr) + (ts ? TCPOLEN_TSTAMP_ALIGNED : 0) +
	       (active_open ? 0 : child_key_len);
}

const struct tcp_opt_case *tcp_opt_test_row(const char *name);
const u32 *tcp_opt_test_mptcp_row(const char *name, unsigned int *size);

__printf(3, 4)
void tcp_opt_append(char *buf, size_t len, const char *fmt, ...);
bool tcp_opt_decode(const u8 *th, unsigned int size,
		    struct tcp_opt_seen *seen, char *text, size_t len);

#endif /* _TCP_OPTIONS_TEST_H */
