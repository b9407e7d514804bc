// SPDX-License-Identifier: GPL-2.0
/*
 * Live connections: the options the booted stack really puts on the wire.
 *
 * Each case creates a network namespace, brings its loopback up with a
 * 1500-byte MTU, sets the namespace's TCP sysctls, and connects kernel
 * sockets over IPv4 and then over IPv6. A packet_type tap on that loopback
 * copies every segment as it is transmitted; a netfilter hook on the
 * receive side can drop data segments to make the receiver send SACK
 * blocks. The option area of the SYN, the SYN-ACK, the ACK that completes
 * the handshake, the first data segment and the SACK-carrying ACKs is then
 * compared byte for byte with the unit table row the case names, with the
 * live values put in: MSS, window scale, SACK edges. Timestamp values,
 * MD5 hashes and Fast Open cookies are compared by presence and position.
 *
 * Every captured packet is printed as "# wire:" lines, which
 * `./run.sh capture` turns into a pcap file.
 *
 * The rows and the decoder come from the writer suite and its helpers
 * (tcp_options_test.h).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/rtnetlink.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "tcp_options_test.h"
#ifdef TCP_OPT_HAVE_ACCECN
#include <net/tcp_ecn.h>
#endif
#if IS_ENABLED(CONFIG_MPTCP)
/* The subflows of an MPTCP socket and their keys, and its counters. */
#include "../mptcp/protocol.h"
#include "../mptcp/mib.h"
/* Before commit bd34fa025726 ("mptcp: add-addr: always drop other
 * suboptions") an ADD_ADDR that fits beside a DSS is taken from the path
 * manager and then dropped (docs/bugs.md). The fix took the skb out of
 * this prototype.
 */
#define LIVE_ADD_ADDR_LOST_BESIDE_DSS					\
	__builtin_types_compatible_p(typeof(&mptcp_pm_add_addr_signal),	\
		bool (*)(struct mptcp_sock *, const struct sk_buff *,	\
			 unsigned int, unsigned int,			\
			 struct mptcp_addr_info *, bool *, bool *))
/* Since net.mptcp.add_addr_v6_port_drop_ts (on by default) an IPv6
 * ADD_ADDR with a port that has no room beside TS goes out without TS;
 * the sysctl came with this prototype.
 */
#define LIVE_ADD_ADDR_DROPS_TS						\
	__builtin_types_compatible_p(typeof(&mptcp_pm_add_addr_signal),	\
		bool (*)(struct mptcp_sock *, int *, int,		\
			 struct mptcp_addr_info *, bool *, bool *))
#else
#define LIVE_ADD_ADDR_LOST_BESIDE_DSS	0
#define LIVE_ADD_ADDR_DROPS_TS		0
#endif

#define LIVE_PORT		8080
/* Loopback MTU: MSS 1460 over IPv4, 1440 over IPv6. */
#define LIVE_MTU		1500
/* tcp_rmem[2] of the namespace. RFC 7323 section 2.3: announcing 6 MiB
 * in the 16-bit window field takes a shift of 7 (6 MiB >> 7 = 49152).
 */
#define LIVE_RMEM		(6 << 20)
#define LIVE_WSCALE		7
/* Data segments the holes cases send; every other one is dropped once. */
#define LIVE_SEGS		8
#define LIVE_SACK_ACKS		(LIVE_SEGS / 2)
#define LIVE_TIMEOUT		(5 * HZ)
#define LIVE_MAX_PKTS		128
#define LIVE_MAX_LEN		2048
#define LIVE_HEX_CHUNK		128
#define LIVE_PING_LEN		100
#define LIVE_MD5_KEY		"tcp-live-md5-key"
/* TCP-AO (RFC 5925): HMAC-SHA-1-96 (RFC 5926), one master key. The
 * client sends KeyID 7 and asks for 9; the listener the other way round.
 * The option is 4 bytes and the MAC, padded to 32 bits (section 2.2).
 */
#define LIVE_AO_KEY		"tcp-live-ao-key!"
#define LIVE_AO_ALG		"hmac(sha1)"
#define LIVE_AO_MACLEN		12
#define LIVE_AO_LEN		round_up(4 + LIVE_AO_MACLEN, 4)
#define LIVE_AO_CLIENT_ID	7
#define LIVE_AO_SERVER_ID	9
/* What the client's TS val is set to in repair mode; the low bit asks
 * for microseconds.
 */
#define LIVE_TS_SET		0x7e570000
/* RFC 8684: the MPTCP subtypes compared, and the DSS flags (3.3). */
#define LIVE_MPTCP_MP_CAPABLE	0
#define LIVE_MPTCP_DSS		2
#define LIVE_MPTCP_ADD_ADDR	3
#define LIVE_MPTCP_RM_ADDR	4
#define LIVE_MPTCP_MP_PRIO	5
#define LIVE_MPTCP_MP_FAIL	6
#define LIVE_MPTCP_MP_FASTCLOSE	7
#define LIVE_MPTCP_MP_TCPRST	8
#define LIVE_ADD_ADDR_ECHO	0x01	/* E: an echo, no HMAC (3.4.1) */
#define LIVE_ADD_ADDR_HMAC_LEN	8
/* What the listener's path manager signals: the writer rows' addresses,
 * 192.0.2.1 with ID 1 and 2001:db8::1 with ID 2 (RFC 5737, RFC 3849),
 * then the removal of ID 5.
 */
#define LIVE_SIGNAL_ADDR4	0xc0000201
#define LIVE_SIGNAL_ID4		1
#define LIVE_SIGNAL_ID6		2
#define LIVE_REMOVE_ID		5
#define LIVE_SIGNAL_WAIT_MS	2000
/* SYN retransmissions with MP_CAPABLE before an MPTCP client falls back
 * to TCP: net.mptcp.syn_retrans_before_tcp_fallback's default
 * (Documentation/networking/mptcp-sysctl.rst), fixed on 6.12.
 */
#define LIVE_MPC_SYN_RETRANS	2
/* A close with linger 0 is MPTCP's fast close: the subflow's RST carries
 * MP_FASTCLOSE and MP_TCPRST with reason 0, unspecified (section 3.6).
 */
#define LIVE_FASTCLOSE		"est_ts_0_sacks+mptcp_fastclose_tcprst_unspec"
/* The listener acks MPTCP data with 8 octets: one SACK block fits. */
#define LIVE_MPTCP_SACK_ACKS						\
	.sack_ack = { "mptcp_est_ts_dss_ack64_sack3",			\
		      "mptcp_est_ts_dss_ack64_sack3",			\
		      "mptcp_est_ts_dss_ack64_sack3",			\
		      "mptcp_est_ts_dss_ack64_sack3" }
/* tcp_current_mss() of both MPTCP ends (live_mptcp_sack_holes), and the
 * listener's reset at the end of every MPTCP case.
 */
#define LIVE_MPTCP_EST							\
	.est_bytes = 12 + 24, .est_bytes_accepted = 12 + 28,		\
	.fastclose = LIVE_FASTCLOSE
#define LIVE_DSS_ACK		0x01	/* Data ACK present */
#define LIVE_DSS_ACK64		0x02	/* Data ACK is 8 octets */
#define LIVE_DSS_MAP		0x04	/* a mapping is present */
#define LIVE_DSS_DSN64		0x08	/* its DSN is 8 octets */
#define LIVE_DSS_DATA_FIN	0x10	/* F: the mapping ends in DATA_FIN */
#define LIVE_AO_FROM_CLIENT	.ao_keyid = LIVE_AO_CLIENT_ID, \
				.ao_rnext = LIVE_AO_SERVER_ID
#define LIVE_AO_FROM_SERVER	.ao_keyid = LIVE_AO_SERVER_ID, \
				.ao_rnext = LIVE_AO_CLIENT_ID

struct tcp_live_input {
	bool ts, sack, ws;	/* the namespace's tcp_{timestamps,sack,...} */
	bool md5;		/* TCP_MD5SIG keys on both ends */
	bool ao;		/* TCP_AO_ADD_KEY keys on both ends (6.7+) */
	u8 syncookies;		/* net.ipv4.tcp_syncookies */
	bool fastopen;		/* a second connection sends the cookie */
	/* tcp_fastopen=0x205: the SYN carries data and no cookie option,
	 * and the listener takes it.
	 */
	bool fastopen_no_cookie;
	u16 listen_maxseg;	/* TCP_MAXSEG on the listener, 0: none */
	u16 connect_maxseg;	/* TCP_MAXSEG on the client, 0: none */
	bool holes;		/* drop data segments 0, 2, 4 and 6 once */
	bool ts_no_offset;	/* tcp_timestamps=2: TS val is the clock */
	u32 ts_set;		/* then TCP_TIMESTAMP on the client, 0: no */
	bool accecn;		/* tcp_ecn=3: AccECN both ways (6.18+) */
	/* Drop the first SYNs at the listener, or SYN-ACKs at the client:
	 * the handshake is retransmitted.
	 */
	u8 drop_syns, drop_synacks;
	/* drop_syns: the loopback MTU once the first SYN is out, so that
	 * the retransmission meets a smaller path (0: LIVE_MTU throughout).
	 */
	u16 syn_retrans_mtu;
	/* Drop the listener's first pure ACKs at the client: the ping is
	 * sent again until one arrives.
	 */
	u8 drop_acks;
	/* A middlebox strips the AccECN option off the SYN-ACK on its way
	 * to the client: NOPs in its place.
	 */
	bool strip_synack_accecn;
	/* A peer that, unlike Linux, offers TS with MD5 and SACK: the hook
	 * rewrites the client's SYN options after MD5 (RFC 2385 section
	 * 2.0 leaves options out of the digest), MSS, SACK_PERM and
	 * WSCALE, into SACK_PERM and TS.
	 */
	bool md5_syn_offers_ts;
	bool mptcp;		/* IPPROTO_MPTCP sockets (RFC 8684) */
	bool mptcp_csum;	/* net.mptcp.checksum_enabled=1 */
	/* The listener's path manager announces an address, sets its
	 * subflow to backup and removes an address (RFC 8684 3.4, 3.3.8).
	 */
	bool mptcp_signal;
	/* mptcp_signal: the ADD_ADDR carries the listener's port. */
	bool mptcp_signal_port;
	/* Each end announces an address while data is about to go out:
	 * the client before its first data segment (MP_CAPABLE), the
	 * listener before a reply; both are sent later, on pure ACKs.
	 */
	bool mptcp_pending;
	/* The client's path manager queues an MP_PRIO before its second
	 * data segment, without the pure ACK it would go out on at once.
	 */
	bool mptcp_queued;
	/* mptcp: one end is a TCP socket, and the MPTCP end falls back to
	 * TCP (RFC 8684 section 3.7): the listener's, or the client's.
	 */
	bool tcp_listener, tcp_client;
	/* The client shuts down its sending side before the case closes
	 * the connection: its DATA_FIN (RFC 8684 section 3.3.3).
	 */
	bool mptcp_data_fin;
	/* mptcp_csum: the client's second data segment, its first with a
	 * DSS mapping, has a byte flipped on the way and its TCP checksum
	 * kept right, so that only MPTCP's data checksum fails.
	 */
	bool mptcp_csum_fail;
};

/* Unit table rows (tcp_options_test.c) the packets must look like. A
 * name "row+mptcp_row" is a TCP row followed by an MPTCP writer row: the
 * writer puts the MPTCP option after every TCP option; "row+a+b", two
 * MPTCP suboptions, each padded to 32 bits, in that order.
 */
struct tcp_live_expect {
	const char *syn, *synack, *ack;
	/* The first data segment; NULL: as the ACK. */
	const char *data;
	/* Every data segment of the holes transfer; NULL: not compared. */
	const char *seg;
	/* The k-th ACK with SACK blocks (holes); NULL: not compared. */
	const char *sack_ack[LIVE_SACK_ACKS];
	/* Fast Open: the second connection's SYN and SYN-ACK. */
	const char *fo_syn, *fo_synack;
	/* Option bytes of an established segment without SACK blocks,
	 * and on the accepted end if that differs (0: the same).
	 */
	unsigned int est_bytes, est_bytes_accepted;
	/* mptcp_signal, over IPv4 and IPv6: the listener's ADD_ADDR, the
	 * client's echo of it (NULL: the ADD_ADDR does not fit on a pure
	 * ACK, and neither goes out); then the listener's MP_PRIO and RM_ADDR.
	 */
	const char *add_addr[2], *add_addr_echo[2];
	/* Over IPv6, where LIVE_ADD_ADDR_DROPS_TS: the ADD_ADDR without
	 * TS and its echo, for an add_addr[1] that has no room.
	 */
	const char *add_addr_drop_ts, *add_addr_drop_ts_echo;
	/* mp_prio: the client's, for mptcp_queued. */
	const char *mp_prio, *rm_addr;
	/* mptcp_data_fin: the client's DATA_FIN. */
	const char *data_fin;
	/* mptcp_csum_fail: the listener's MP_FAIL. */
	const char *mp_fail;
	/* mptcp_pending: the client's ADD_ADDR and the listener's echo, and
	 * the listener's reply, sent while its ADD_ADDR was pending.
	 */
	const char *client_add_addr[2], *client_add_addr_echo[2];
	const char *reply;
	/* MPTCP: the listener's reset when the case closes it with linger
	 * 0, MP_FASTCLOSE with the client's key (RFC 8684 section 3.5).
	 */
	const char *fastclose;
	/* drop_synacks: the retransmitted SYN-ACK. */
	const char *synack_retrans;
	/* drop_syns, MPTCP: the SYN after those with MP_CAPABLE. */
	const char *syn_fallback;
	/* drop_acks: the listener's ACKs of the ping's first and second
	 * duplicates, each with a D-SACK of it (RFC 2883).
	 */
	const char *dsack_ack[2];
	/* tcp_current_mss() is not compared: what the ends make of the
	 * handshake is not the case's.
	 */
	bool no_mss_check;
};

struct tcp_live_case {
	const char *name;
	struct tcp_live_input in;
	struct tcp_live_expect out;
};

/* The client defers its SYN to the first send, which it carries. */
static bool tcp_live_fastopen(const struct tcp_live_input *in)
{
	return in->fastopen || in->fastopen_no_cookie;
}

static const struct tcp_live_case tcp_live_cases[] = {
	/* The eight sysctl combinations on the SYN, and what follows. */
	{
		.name = "live_none",
		.in = { },
		.out = { .syn = "syn_none_mss1460", .synack = "synack_none",
			 .ack = "est_nots_0_sacks", .est_bytes = 0 },
	},
	{
		.name = "live_ws",
		.in = { .ws = 1 },
		.out = { .syn = "syn_ws_mss1460_ws7", .synack = "synack_ws",
			 .ack = "est_nots_0_sacks", .est_bytes = 0 },
	},
	{
		.name = "live_sack",
		.in = { .sack = 1 },
		.out = { .syn = "syn_sack_mss1460", .synack = "synack_sack",
			 .ack = "est_nots_0_sacks", .est_bytes = 0 },
	},
	{
		.name = "live_sack_ws",
		.in = { .sack = 1, .ws = 1 },
		.out = { .syn = "syn_sack_ws_mss1460_ws7",
			 .synack = "synack_sack_ws", .ack = "est_nots_0_sacks",
			 .est_bytes = 0 },
	},
	{
		.name = "live_ts",
		.in = { .ts = 1 },
		.out = { .syn = "syn_ts_mss1460", .synack = "synack_ts",
			 .ack = "est_ts_0_sacks", .est_bytes = 12 },
	},
	{
		.name = "live_ts_ws",
		.in = { .ts = 1, .ws = 1 },
		.out = { .syn = "syn_ts_ws_mss1460_ws7", .synack = "synack_ts_ws",
			 .ack = "est_ts_0_sacks", .est_bytes = 12 },
	},
	{
		.name = "live_ts_sack",
		.in = { .ts = 1, .sack = 1 },
		.out = { .syn = "syn_ts_sack_mss1460", .synack = "synack_ts_sack",
			 .ack = "est_ts_0_sacks", .est_bytes = 12 },
	},
	{
		/* The default layout, and the one 2.6.27 broke: MSS must come
		 * before SACK_PERM and TS on the SYN the stack really sends.
		 */
		.name = "live_ts_sack_ws",
		.in = { .ts = 1, .sack = 1, .ws = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* Four holes: with TS only three SACK blocks fit (RFC 2018
		 * section 3), without TS all four, newest first.
		 * The listener's TCP_MAXSEG 536 keeps the segments small.
		 */
		.name = "live_sack_holes_ts",
		.in = { .ts = 1, .sack = 1, .ws = 1, .listen_maxseg = 536,
			.holes = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .sack_ack = { "est_ts_1_sack",
						    "est_ts_2_sacks",
						    "est_ts_3_sacks",
						    "est_ts_4_sacks_truncated" },
			 .est_bytes = 12 },
	},
	{
		.name = "live_sack_holes_nots",
		.in = { .sack = 1, .ws = 1, .listen_maxseg = 536, .holes = 1 },
		.out = { .syn = "syn_sack_ws_mss1460_ws7",
			 .synack = "synack_sack_ws", .ack = "est_nots_0_sacks",
			 .sack_ack = { "est_nots_1_sack",
						    "est_nots_2_sacks",
						    "est_nots_3_sacks",
						    "est_nots_4_sacks" },
			 .est_bytes = 0 },
	},
	{
		/* MD5 on both ends: the SYN drops TS, so the connection has
		 * none, and after the 20-byte MD5 option two SACK blocks fit.
		 * A single block has no MD5 row of its own: not compared.
		 */
		.name = "live_md5_sack_holes",
		.in = { .ts = 1, .sack = 1, .ws = 1, .md5 = 1,
			.listen_maxseg = 536, .holes = 1 },
		.out = { .syn = "md5_syn_drops_ts",
			 .synack = "md5_synack_sack_drops_ts",
			 .sack_ack = { NULL, "est_md5_nots_2_sacks",
						    "est_md5_nots_3_sacks_truncated",
						    "est_md5_nots_3_sacks_truncated" },
			 .est_bytes = TCPOLEN_MD5SIG_ALIGNED },
	},
	{
		/* A SYN with MD5, SACK and TS (and no MSS: the accepted end
		 * sends with the default): the SYN-ACK drops TS, and so must
		 * the accepted socket, which takes TS from the request the
		 * SYN-ACK was written for.
		 */
		.name = "live_md5_peer_offers_ts",
		.in = { .ts = 1, .sack = 1, .ws = 1, .md5 = 1,
			.md5_syn_offers_ts = 1 },
		.out = { .syn = "md5_syn_drops_ts",
			 .synack = "md5_synack_sack_drops_ts_no_ws",
			 .est_bytes = TCPOLEN_MD5SIG_ALIGNED },
	},
	{
		/* tcp_syncookies=2: every SYN-ACK is a cookie SYN-ACK. */
		.name = "live_syncookie_ts",
		.in = { .ts = 1, .sack = 1, .ws = 1, .syncookies = 2 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* Without TS a cookie has nowhere to keep SACK_PERM and the
		 * window scale (tcp_conn_request() clears them): MSS alone.
		 */
		.name = "live_syncookie_nots",
		.in = { .sack = 1, .ws = 1, .syncookies = 2 },
		.out = { .syn = "syn_sack_ws_mss1460_ws7",
			 .synack = "synack_none", .ack = "est_nots_0_sacks",
			 .est_bytes = 0 },
	},
	{
		/* TCP-AO on both ends: the SYN keeps TS, the SYN-ACK gives
		 * it up for SACK_PERM, so the connection has none.
		 */
		.name = "live_ao",
		.in = { .ts = 1, .sack = 1, .ws = 1, .ao = 1 },
		.out = { .syn = "ao_syn_mac12",
			 .synack = "ao_synack_sack_drops_ts",
			 .ack = "ao_est_no_ts_mac12", .est_bytes = LIVE_AO_LEN },
	},
	{
		/* TCP-AO and a cookie SYN-ACK: the cookie keeps WS and
		 * SACK_PERM in the TS value, so the SYN-ACK must keep TS
		 * for the ACK to echo it, as with MD5 (docs/bugs.md).
		 */
		.name = "live_ao_syncookie",
		.in = { .ts = 1, .sack = 1, .ws = 1, .ao = 1,
			.syncookies = 2 },
		.out = { .syn = "ao_syn_mac12",
			 .synack = "ao_synack_syncookie_keeps_ts",
			 .ack = "ao_est_ts_mac12_active_open",
			 .est_bytes = LIVE_AO_LEN + TCPOLEN_TSTAMP_ALIGNED },
	},
	{
		/* RFC 7413: the first SYN asks for a cookie, the SYN-ACK
		 * carries one, the next SYN sends it back with data and its
		 * SYN-ACK carries none.
		 */
		.name = "live_fastopen_cookie",
		.in = { .ts = 1, .sack = 1, .ws = 1, .fastopen = 1 },
		.out = { .syn = "fo_syn_len0", .synack = "fo_synack_len8",
			 .ack = "est_ts_0_sacks", .fo_syn = "fo_syn_len8",
			 .fo_synack = "synack_ts_sack_ws", .est_bytes = 12 },
	},
	{
		/* Fast Open without cookies, tcp_fastopen 0x4 and 0x200 in
		 * Documentation/networking/ip-sysctl.rst: the SYN carries
		 * the data and no Fast Open option, not even an empty one.
		 */
		.name = "live_fastopen_no_cookie",
		.in = { .ts = 1, .sack = 1, .ws = 1,
			.fastopen_no_cookie = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* AccECN on both ends (RFC 9768). The SYN asks with header
		 * flags only; the SYN-ACK reports the initial counters; every
		 * later segment reports live ones, compared by position and
		 * length. The data arrives ECT(0), so each ACK owes EE0B, the
		 * third field: next to two or more SACK blocks it does not
		 * fit, a third block is given up in vain, and no option goes
		 * out (tcp_options_fit_accecn()).
		 */
		.name = "live_accecn_sack_holes",
		.in = { .ts = 1, .sack = 1, .ws = 1, .listen_maxseg = 536,
			.holes = 1, .accecn = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "accecn_synack_ts_sack_ws",
			 .ack = "accecn_est_ts_0_sacks",
			 .sack_ack = { "accecn_est_ts_1_sack",
				       "est_ts_2_sacks",
				       "est_ts_3_sacks",
				       "est_ts_4_sacks_truncated" },
			 .est_bytes = 24 },
	},
	{
		/* tcp_timestamps=2: no random offset, so both ends' TS val
		 * is the millisecond clock. Then the client sets its TS val
		 * with TCP_TIMESTAMP (in repair mode), as CRIU does after a
		 * restore, and its next segments count on from there.
		 */
		.name = "live_ts_offsets",
		.in = { .ts = 1, .sack = 1, .ws = 1, .ts_no_offset = 1,
			.ts_set = LIVE_TS_SET },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* The low bit of TCP_TIMESTAMP turns microsecond TS values
		 * on (6.7+), the tcp_usec_ts a route feature sets otherwise.
		 */
		.name = "live_ts_usec",
		.in = { .ts = 1, .sack = 1, .ws = 1, .ts_no_offset = 1,
			.ts_set = LIVE_TS_SET | 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* MPTCP on both ends (RFC 8684 section 3.1): MP_CAPABLE goes
		 * on the SYN, on the SYN-ACK with the listener's key, on the
		 * third ACK with both keys, and on the first data segment
		 * with both keys and the Data-Level Length. Then the client
		 * maps its data with 8-octet DSNs and 4-octet Data ACKs (the
		 * listener sent no 8-octet DSN), and the listener acks with
		 * 8 octets: after TS and that DSS, one SACK block fits, the
		 * newest (MPTCP options take their space before SACK).
		 * tcp_current_mss() keeps room for a DSS with a mapping and
		 * the Data ACK: 4 + 14 + 4 and 4 + 14 + 8, aligned.
		 */
		.name = "live_mptcp_sack_holes",
		.in = { .ts = 1, .sack = 1, .ws = 1, .holes = 1, .mptcp = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 .seg = "est_ts_0_sacks+mptcp_dss_ack32_map",
			 LIVE_MPTCP_SACK_ACKS, LIVE_MPTCP_EST },
	},
	{
		/* net.mptcp.checksum_enabled=1 (RFC 8684 section 3.3.1):
		 * both ends set A in MP_CAPABLE, the first data segment's
		 * MP_CAPABLE carries a checksum (24) and every mapping 2
		 * octets more: 4 + 4 + 8 + 4 + 2 + 2 = 24, the room
		 * tcp_current_mss() kept without checksums too (22 and 26,
		 * aligned), so the MSS is live_mptcp_sack_holes's.
		 */
		.name = "live_mptcp_csum",
		.in = { .ts = 1, .sack = 1, .ws = 1, .holes = 1, .mptcp = 1,
			.mptcp_csum = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7+mptcp_mpc_syn_csum",
			 .synack = "synack_ts_sack_ws+mptcp_mpc_synack_csum",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack_csum",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data_csum",
			 .seg = "est_ts_0_sacks+mptcp_dss_ack32_map_csum",
			 LIVE_MPTCP_SACK_ACKS, LIVE_MPTCP_EST },
	},
	{
		/* Path management (RFC 8684 sections 3.4.1, 3.4.2, 3.3.8),
		 * as the in-kernel path manager sends it: ADD_ADDR with its
		 * HMAC alone on a pure ACK, no DSS (a duplicate ACK to TCP,
		 * mptcp_pm_add_addr_signal()), the echo the same way; MP_PRIO
		 * and RM_ADDR after the DSS with the listener's 8-octet Data
		 * ACK.
		 */
		.name = "live_mptcp_signal",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_signal = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 LIVE_MPTCP_EST,
			 .add_addr = { "est_ts_0_sacks+mptcp_add_addr_v4_hmac",
				       "est_ts_0_sacks+mptcp_add_addr_v6_hmac" },
			 .add_addr_echo = {
				"est_ts_0_sacks+mptcp_add_addr_v4_echo",
				"est_ts_0_sacks+mptcp_add_addr_v6_echo" },
			 .mp_prio = "est_ts_0_sacks+mptcp_dss_ack64+mptcp_mp_prio_backup",
			 .rm_addr = "est_ts_0_sacks+mptcp_dss_ack64+mptcp_remove_addr_1" },
	},
	{
		/* The same with the listener's port (RFC 8684 section 3.4.1):
		 * 2 octets more, padded with two NOPs. Over IPv4 the ADD_ADDR
		 * (20) fits beside TS (12); over IPv6 (32) it does not. The
		 * path manager drops it rather than the timestamp, which goes
		 * on every segment once agreed (RFC 7323 section 3.2), or,
		 * since net.mptcp.add_addr_v6_port_drop_ts (default 1),
		 * sends it without TS; the echo (24) fits beside TS.
		 */
		.name = "live_mptcp_signal_port",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_signal = 1, .mptcp_signal_port = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 LIVE_MPTCP_EST,
			 .add_addr = {
				"est_ts_0_sacks+mptcp_add_addr_v4_port_hmac" },
			 .add_addr_echo = {
				"est_ts_0_sacks+mptcp_add_addr_v4_port_echo" },
			 .add_addr_drop_ts =
				"est_nots_0_sacks+mptcp_add_addr_v6_port_hmac",
			 .add_addr_drop_ts_echo =
				"est_ts_0_sacks+mptcp_add_addr_v6_port_echo",
			 .mp_prio = "est_ts_0_sacks+mptcp_dss_ack64+mptcp_mp_prio_backup",
			 .rm_addr = "est_ts_0_sacks+mptcp_dss_ack64+mptcp_remove_addr_1" },
	},
	{
		/* An ADD_ADDR is kept for a pure ACK when data goes out first
		 * (mptcp_established_options_add_addr()): it strips every
		 * other suboption, so it never rides on the client's data
		 * segment with MP_CAPABLE, nor on a segment with a mapping.
		 * Both ends announce 192.0.2.1 (2001:db8::1 over IPv6).
		 */
		.name = "live_mptcp_signal_pending",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_pending = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 LIVE_MPTCP_EST,
			 .client_add_addr = {
				"est_ts_0_sacks+mptcp_add_addr_v4_hmac",
				"est_ts_0_sacks+mptcp_add_addr_v6_hmac" },
			 .client_add_addr_echo = {
				"est_ts_0_sacks+mptcp_add_addr_v4_echo",
				"est_ts_0_sacks+mptcp_add_addr_v6_echo" },
			 .reply = "est_ts_0_sacks+mptcp_dss_ack64_map",
			 .add_addr = { "est_ts_0_sacks+mptcp_add_addr_v4_hmac",
				       "est_ts_0_sacks+mptcp_add_addr_v6_hmac" },
			 .add_addr_echo = {
				"est_ts_0_sacks+mptcp_add_addr_v4_echo",
				"est_ts_0_sacks+mptcp_add_addr_v6_echo" } },
	},
	{
		/* The same without TS: MP_CAPABLE with data (24 bytes) now
		 * leaves the 16 an IPv4 ADD_ADDR takes, and the reply's
		 * mapping (28) 12; the ADD_ADDRs still wait for pure ACKs.
		 */
		.name = "live_mptcp_signal_pending_nots",
		.in = { .sack = 1, .ws = 1, .mptcp = 1, .mptcp_pending = 1 },
		.out = { .syn = "syn_sack_ws_mss1460_ws7+mptcp_mpc_syn",
			 .synack = "synack_sack_ws+mptcp_mpc_synack",
			 .ack = "est_nots_0_sacks+mptcp_mpc_ack",
			 .data = "est_nots_0_sacks+mptcp_mpc_ack_data",
			 .est_bytes = 24, .est_bytes_accepted = 28,
			 .fastclose = "est_nots_0_sacks+mptcp_fastclose_tcprst_unspec",
			 .client_add_addr = {
				"est_nots_0_sacks+mptcp_add_addr_v4_hmac",
				"est_nots_0_sacks+mptcp_add_addr_v6_hmac" },
			 .client_add_addr_echo = {
				"est_nots_0_sacks+mptcp_add_addr_v4_echo",
				"est_nots_0_sacks+mptcp_add_addr_v6_echo" },
			 .reply = "est_nots_0_sacks+mptcp_dss_ack64_map",
			 .add_addr = {
				"est_nots_0_sacks+mptcp_add_addr_v4_hmac",
				"est_nots_0_sacks+mptcp_add_addr_v6_hmac" },
			 .add_addr_echo = {
				"est_nots_0_sacks+mptcp_add_addr_v4_echo",
				"est_nots_0_sacks+mptcp_add_addr_v6_echo" } },
	},
	{
		/* A change of priority waits for the next data segment when
		 * its ACK does not go out first: the client's second carries
		 * a DSS with a 4-octet Data ACK and a mapping (24), which with
		 * TS (12) leaves exactly the 4 octets MP_PRIO takes (RFC 8684
		 * section 3.3.8), so it goes on that segment.
		 */
		.name = "live_mptcp_queued_prio",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_queued = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 LIVE_MPTCP_EST,
			 .mp_prio = "est_ts_0_sacks+mptcp_dss_ack32_map+mptcp_mp_prio_backup" },
	},
	{
		/* A graceful close (RFC 8684 section 3.3.3): the client's
		 * DATA_FIN goes on a pure ACK, a DSS with its 4-octet Data
		 * ACK and an 8-octet DSN (22, two NOPs), and TS.
		 */
		.name = "live_mptcp_data_fin",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_data_fin = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "mptcp_synack_mpc",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data",
			 LIVE_MPTCP_EST,
			 .data_fin = "est_ts_0_sacks+mptcp_dss_ack32_data_fin" },
	},
	{
		/* A checksum that fails after one that passed (RFC 8684
		 * section 3.7): the listener acks the corrupted segment with
		 * its DSS (an 8-octet Data ACK, 12) and MP_FAIL (12), beside
		 * TS.
		 */
		.name = "live_mptcp_csum_fail",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.mptcp_csum = 1, .mptcp_csum_fail = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7+mptcp_mpc_syn_csum",
			 .synack = "synack_ts_sack_ws+mptcp_mpc_synack_csum",
			 .ack = "est_ts_0_sacks+mptcp_mpc_ack_csum",
			 .data = "est_ts_0_sacks+mptcp_mpc_ack_data_csum",
			 .est_bytes = 12 + 24, .est_bytes_accepted = 12 + 28,
			 .mp_fail = "est_ts_0_sacks+mptcp_dss_ack64+mptcp_mp_fail" },
	},
	{
		/* An MPTCP client whose SYN and two retransmissions are lost
		 * (RFC 8684 section 3.7 leaves the fallback to the host):
		 * the next SYN goes without MP_CAPABLE, and the connection
		 * is TCP.
		 */
		.name = "live_mptcp_syn_drops",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.drop_syns = LIVE_MPC_SYN_RETRANS + 1 },
		.out = { .syn = "mptcp_syn_mpc",
			 .syn_fallback = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* An MPTCP client at a TCP listener (RFC 8684 section 3.7):
		 * a SYN-ACK without MP_CAPABLE, and the client falls back to
		 * TCP, with no MPTCP option from its third ACK on.
		 */
		.name = "live_mptcp_tcp_listener",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.tcp_listener = 1 },
		.out = { .syn = "mptcp_syn_mpc", .synack = "synack_ts_sack_ws",
			 .ack = "est_ts_0_sacks", .est_bytes = 12 },
	},
	{
		/* A TCP client at an MPTCP listener: a SYN without
		 * MP_CAPABLE gets a SYN-ACK without any MPTCP option.
		 */
		.name = "live_mptcp_tcp_client",
		.in = { .ts = 1, .sack = 1, .ws = 1, .mptcp = 1,
			.tcp_client = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* AccECN SYNs lost (RFC 9768 section 3.1.4.1, commit
		 * 3ae62b8b4a48): the first retransmission still asks with
		 * (AE,CWR,ECE) = (1,1,1), the second with (0,0,0), and the
		 * listener, which saw only that one, answers plain TCP.
		 */
		.name = "live_accecn_syn_retrans",
		.in = { .ts = 1, .sack = 1, .ws = 1, .accecn = 1,
			.drop_syns = 2 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* The path MTU drops while the SYN is lost: the retransmission
		 * announces the new MTU less the fixed headers (RFC 9293
		 * section 3.7.1), and the client keeps that as the MSS it
		 * advertises (tcp_advertise_mss()). The SYN-ACK and both ends'
		 * tcp_current_mss() see the new MTU too.
		 */
		.name = "live_syn_retrans_mtu_drop",
		.in = { .ts = 1, .sack = 1, .ws = 1, .drop_syns = 1,
			.syn_retrans_mtu = 1400 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
	{
		/* An AccECN SYN-ACK lost (RFC 9768 section 3.2.3.2.2, commit
		 * f326f1f17f37): it goes again without the AccECN option,
		 * its flags kept. What the client makes of that is not this
		 * case's: no established segment is compared.
		 */
		.name = "live_accecn_synack_retrans",
		.in = { .ts = 1, .sack = 1, .ws = 1, .accecn = 1,
			.drop_synacks = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "accecn_synack_ts_sack_ws",
			 .synack_retrans = "synack_ts_sack_ws",
			 .no_mss_check = 1 },
	},
	{
		/* The listener's ACKs of the ping lost twice (RFC 9768
		 * section 3.2.3.2.2, commit 1247fb19cafe): the second
		 * reports the first duplicate with a D-SACK beside the AccECN
		 * option; when the D-SACKed data comes once more, that ACK
		 * is taken for one a middlebox dropped for its option, and
		 * the listener's next ACK, and tcp_current_mss(), go without.
		 */
		.name = "live_accecn_dsack_fallback",
		.in = { .ts = 1, .sack = 1, .ws = 1, .accecn = 1,
			.drop_acks = 2 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "accecn_synack_ts_sack_ws",
			 .ack = "accecn_est_ts_0_sacks",
			 .dsack_ack = { "accecn_est_ts_1_sack",
					"est_ts_1_sack" },
			 .est_bytes = 24, .est_bytes_accepted = 12 },
	},
	{
		/* The SYN-ACK's AccECN option stripped on the way (commit
		 * b40671b5ee58, "tcp: accecn: AccECN option failure
		 * handling": if no option arrives in the SYN-ACK, the option
		 * is taken as unusable): the client sends none, so the
		 * listener sees none and sends none either; the flags still
		 * carry AccECN.
		 */
		.name = "live_accecn_synack_stripped",
		.in = { .ts = 1, .sack = 1, .ws = 1, .accecn = 1,
			.strip_synack_accecn = 1 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "accecn_synack_ts_sack_ws",
			 .ack = "est_ts_0_sacks", .est_bytes = 12 },
	},
	{
		/* TCP_MAXSEG on the client: its SYN announces 1000. */
		.name = "live_maxseg_client",
		.in = { .ts = 1, .sack = 1, .ws = 1, .connect_maxseg = 1000 },
		.out = { .syn = "syn_ts_sack_ws_mss1460_ws7",
			 .synack = "synack_ts_sack_ws", .ack = "est_ts_0_sacks",
			 .est_bytes = 12 },
	},
};

struct tcp_live_pkt {
	struct list_head list;
	unsigned int len, gso;
	u64 usec;
	u8 data[];
};

/* One connection run: a namespace, its tap, its drop hook, its sockets. */
struct tcp_live {
	struct kunit *test;
	const struct tcp_live_case *c;
	int family;
	struct net *net;
	struct packet_type tap;
	struct nf_hook_ops drop;
	bool tap_on, drop_on;
	spinlock_t lock;	/* pkts, npkts, overflow */
	struct list_head pkts;
	unsigned int npkts;
	bool overflow;
	/* The drop hook: client ISN, segment size, segments dropped. */
	u32 isn, seg;
	unsigned long dropped;
	atomic_t syns_dropped, synacks_dropped, acks_dropped;
	atomic_t corrupted;	/* mptcp_csum_fail: the hook has flipped */
	/* tcp_clock_ns() before the first SYN and before TCP_TIMESTAMP,
	 * and the number of packets captured by then.
	 */
	u64 start_ns, ts_set_ns;
	unsigned int ts_set_pkts;
	struct sockaddr_storage addr;
	int addrlen;
	struct socket *listener, *client, *child;
	struct proto *prot;	/* tcp_prot, tcpv6_prot or MPTCP's */
	struct proto *sub_prot;	/* MPTCP: its subflows' */
	u64 client_key, server_key;	/* MPTCP: what each end sends */
	bool opt_fail_send;	/* drop_acks: the listener's AccECN fallback */
};

/* What a packet is, read from its IP and TCP headers. */
struct tcp_live_view {
	const struct tcphdr *th;
	unsigned int optlen, payload;
	bool to_server;
};

static atomic_t tcp_live_pkt_seq = ATOMIC_INIT(0);
/* Capture times count from the suite's first connection, as in a pcap. */
static ktime_t tcp_live_epoch;

static bool tcp_live_view(const struct tcp_live_pkt *p,
			  struct tcp_live_view *v)
{
	unsigned int thoff, iplen;

	if (p->len < sizeof(struct iphdr))
		return false;
	if ((p->data[0] >> 4) == 4) {
		const struct iphdr *iph = (const struct iphdr *)p->data;

		if (iph->protocol != IPPROTO_TCP)
			return false;
		thoff = iph->ihl * 4;
		iplen = ntohs(iph->tot_len);
	} else {
		const struct ipv6hdr *ip6h = (const struct ipv6hdr *)p->data;

		if (p->len < sizeof(*ip6h) || ip6h->nexthdr != IPPROTO_TCP)
			return false;
		thoff = sizeof(*ip6h);
		iplen = thoff + ntohs(ip6h->payload_len);
	}
	if (iplen > p->len || thoff + sizeof(struct tcphdr) > iplen)
		return false;
	v->th = (const struct tcphdr *)(p->data + thoff);
	if (v->th->doff < 5 || thoff + v->th->doff * 4 > iplen)
		return false;
	v->optlen = v->th->doff * 4 - sizeof(struct tcphdr);
	v->payload = iplen - thoff - v->th->doff * 4;
	v->to_server = v->th->dest == htons(LIVE_PORT);
	return true;
}

static bool tcp_live_seen(const struct tcp_live_pkt *p,
			  struct tcp_opt_seen *seen)
{
	struct tcp_live_view v;
	char text[256];

	return p && tcp_live_view(p, &v) &&
	       tcp_opt_decode((const u8 *)v.th, v.optlen, seen, text,
			      sizeof(text));
}

/* The tap: a copy of every segment the namespace's loopback transmits. */
static int tcp_live_tap(struct sk_buff *skb, struct net_device *dev,
			struct packet_type *pt, struct net_device *orig_dev)
{
	struct tcp_live *live = container_of(pt, struct tcp_live, tap);
	int off = skb_network_offset(skb);
	struct tcp_live_pkt *p = NULL;
	unsigned int len;

	/* Each segment also comes back as PACKET_HOST on receive. */
	if (skb->pkt_type != PACKET_OUTGOING || off < 0)
		goto out;
	len = skb->len - off;
	if (len <= LIVE_MAX_LEN)
		p = kmalloc(struct_size(p, data, len), GFP_ATOMIC);
	if (p && !skb_copy_bits(skb, off, p->data, len)) {
		p->len = len;
		p->gso = skb_shinfo(skb)->gso_size;
		p->usec = ktime_us_delta(ktime_get(), tcp_live_epoch);
	} else {
		kfree(p);
		p = NULL;
	}
	spin_lock_bh(&live->lock);
	if (p && live->npkts < LIVE_MAX_PKTS) {
		list_add_tail(&p->list, &live->pkts);
		live->npkts++;
		p = NULL;
	} else {
		live->overflow = true;
	}
	spin_unlock_bh(&live->lock);
	kfree(p);
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* The receive-side drop: the first transmission of data segments 0, 2, 4
 * and 6 from the client, so the listener sees four holes. Retransmissions
 * pass, so the transfer completes.
 */
/* The first drop_syns SYNs to the listener and drop_synacks SYN-ACKs to
 * the client do not arrive.
 */
static unsigned int tcp_live_drop_handshake(struct tcp_live *live,
					    const struct tcphdr *th)
{
	const struct tcp_live_input *in = &live->c->in;

	if (!th->ack && th->dest == htons(LIVE_PORT))
		return atomic_inc_return(&live->syns_dropped) <= in->drop_syns ?
		       NF_DROP : NF_ACCEPT;
	if (th->ack && th->source == htons(LIVE_PORT))
		return atomic_inc_return(&live->synacks_dropped) <=
		       in->drop_synacks ? NF_DROP : NF_ACCEPT;
	return NF_ACCEPT;
}

/* Byte @pos of the TCP header at @th set to @val, the checksum kept right
 * (RFC 1624; nothing to do for a checksum the device completes).
 */
static void tcp_live_set_byte(struct sk_buff *skb, struct tcphdr *th,
			      unsigned int pos, u8 val)
{
	u8 *word = (u8 *)th + (pos & ~1U);
	__be16 old = get_unaligned((__be16 *)word);

	((u8 *)th)[pos] = val;
	inet_proto_csum_replace2(&th->check, skb, old,
				 get_unaligned((__be16 *)word), false);
}

/* The TCP header of @skb at @thoff, writable through its options; NULL
 * when it cannot be made so.
 */
static struct tcphdr *tcp_live_writable_th(struct sk_buff *skb,
					   unsigned int thoff)
{
	struct tcphdr *th;

	if (skb_ensure_writable(skb, thoff + sizeof(*th)))
		return NULL;
	th = (struct tcphdr *)(skb_network_header(skb) + thoff);
	if (th->doff * 4 < sizeof(*th) ||
	    skb_ensure_writable(skb, thoff + th->doff * 4))
		return NULL;
	return (struct tcphdr *)(skb_network_header(skb) + thoff);
}

/* Linux's SYN with MD5 (md5_syn_drops_ts): <nop,nop,md5,mss,nop,nop,
 * sackOK,nop,wscale>. Its last 12 bytes become <sackOK,TS val 1 ecr 0>.
 */
static unsigned int tcp_live_md5_syn_offer_ts(struct sk_buff *skb,
					      unsigned int thoff)
{
	static const u8 md5[] = { TCPOPT_NOP, TCPOPT_NOP, TCPOPT_MD5SIG,
				  TCPOLEN_MD5SIG };
	static const u8 sack_ts[] = { TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM,
				      TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP,
				      0, 0, 0, 1, 0, 0, 0, 0 };
	unsigned int at = sizeof(struct tcphdr) + TCPOLEN_MD5SIG_ALIGNED, i;
	struct tcphdr *th = tcp_live_writable_th(skb, thoff);
	u8 *o = (u8 *)th;

	if (!th)
		return NF_DROP;
	if (th->doff * 4 != at + sizeof(sack_ts) ||
	    memcmp(o + sizeof(*th), md5, sizeof(md5)) ||
	    o[at] != TCPOPT_MSS)
		return NF_ACCEPT;	/* not the SYN the case expects */
	for (i = 0; i < sizeof(sack_ts); i++)
		tcp_live_set_byte(skb, th, at + i, sack_ts[i]);
	return NF_ACCEPT;
}

#ifdef TCP_OPT_HAVE_ACCECN

/* The AccECN options of a segment overwritten with NOPs, as a middlebox
 * that removes unknown options without moving the others does.
 */
static unsigned int tcp_live_strip_accecn(struct sk_buff *skb,
					  unsigned int thoff)
{
	struct tcphdr *th = tcp_live_writable_th(skb, thoff);
	unsigned int hdrlen, off, i;
	u8 *o = (u8 *)th;

	if (!th)
		return NF_DROP;
	hdrlen = th->doff * 4;
	for (off = sizeof(*th); off < hdrlen && o[off] != TCPOPT_EOL;) {
		if (o[off] == TCPOPT_NOP) {
			off++;
			continue;
		}
		if (off + 1 >= hdrlen || o[off + 1] < 2 ||
		    off + o[off + 1] > hdrlen)
			break;
		if (o[off] == TCPOPT_ACCECN0 || o[off] == TCPOPT_ACCECN1) {
			for (i = o[off + 1]; i-- > 1;)
				tcp_live_set_byte(skb, th, off + i, TCPOPT_NOP);
			tcp_live_set_byte(skb, th, off, TCPOPT_NOP);
			continue;	/* at the first of the NOPs */
		}
		off += o[off + 1];
	}
	return NF_ACCEPT;
}
#else
static unsigned int tcp_live_strip_accecn(struct sk_buff *skb,
					  unsigned int thoff)
{
	return NF_ACCEPT;
}
#endif

static const u8 *tcp_live_mptcp_opt(const struct tcphdr *th,
				    unsigned int optlen, u8 subtype);

/* Whether MPTCP option @dss is a DSS with a mapping. */
static bool tcp_live_dss_maps(const u8 *dss)
{
	return dss && dss[1] >= 4 && dss[3] & LIVE_DSS_MAP;
}

/* The first payload byte of the client's first segment with a DSS
 * mapping flipped, once, and the TCP checksum kept right.
 */
static unsigned int tcp_live_corrupt_mapping(struct tcp_live *live,
					     struct sk_buff *skb,
					     unsigned int thoff)
{
	struct tcphdr *th = tcp_live_writable_th(skb, thoff);
	unsigned int hdrlen;

	if (!th)
		return NF_DROP;
	hdrlen = th->doff * 4;
	if (!tcp_live_dss_maps(tcp_live_mptcp_opt(th, hdrlen - sizeof(*th),
						  LIVE_MPTCP_DSS)) ||
	    atomic_xchg(&live->corrupted, 1))
		return NF_ACCEPT;
	/* tcp_live_set_byte() rewrites the 16-bit word the byte is in. */
	if (skb_ensure_writable(skb, thoff + hdrlen + 2))
		return NF_DROP;
	th = (struct tcphdr *)(skb_network_header(skb) + thoff);
	tcp_live_set_byte(skb, th, hdrlen, ((u8 *)th)[hdrlen] ^ 0xff);
	return NF_ACCEPT;
}

static unsigned int tcp_live_drop(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct tcp_live *live = priv;
	unsigned int thoff, len, seg = READ_ONCE(live->seg);
	struct tcphdr _th;
	const struct tcphdr *th;
	u32 off, idx;

	if (skb->protocol == htons(ETH_P_IP)) {
		if (ip_hdr(skb)->protocol != IPPROTO_TCP)
			return NF_ACCEPT;
		thoff = ip_hdrlen(skb);
		len = ntohs(ip_hdr(skb)->tot_len);
	} else {
		if (ipv6_hdr(skb)->nexthdr != IPPROTO_TCP)
			return NF_ACCEPT;
		thoff = sizeof(struct ipv6hdr);
		len = thoff + ntohs(ipv6_hdr(skb)->payload_len);
	}
	th = skb_header_pointer(skb, thoff, sizeof(_th), &_th);
	if (th && th->syn && th->ack && live->c->in.strip_synack_accecn)
		return tcp_live_strip_accecn(skb, thoff);
	if (th && th->syn && !th->ack && live->c->in.md5_syn_offers_ts)
		return tcp_live_md5_syn_offer_ts(skb, thoff);
	if (th && th->syn)
		return tcp_live_drop_handshake(live, th);
	if (th && live->c->in.mptcp_csum_fail &&
	    th->dest == htons(LIVE_PORT) && len > thoff + th->doff * 4)
		return tcp_live_corrupt_mapping(live, skb, thoff);
	if (th && live->c->in.drop_acks && th->source == htons(LIVE_PORT) &&
	    !th->rst && len == thoff + th->doff * 4)
		return atomic_inc_return(&live->acks_dropped) <=
		       live->c->in.drop_acks ? NF_DROP : NF_ACCEPT;
	if (!th || th->dest != htons(LIVE_PORT) || !seg)
		return NF_ACCEPT;
	if (len <= thoff + th->doff * 4)
		return NF_ACCEPT;
	off = ntohl(th->seq) - READ_ONCE(live->isn) - 1;
	idx = off / seg;
	if (off % seg || idx >= LIVE_SEGS || idx % 2)
		return NF_ACCEPT;
	return test_and_set_bit(idx, &live->dropped) ? NF_ACCEPT : NF_DROP;
}

/* Whether tcp_live_drop() has anything to do for the case: a case that
 * drops or rewrites nothing runs without the hook.
 */
static bool tcp_live_uses_hook(const struct tcp_live_input *in)
{
	return in->holes || in->drop_syns || in->drop_synacks ||
	       in->drop_acks || in->strip_synack_accecn ||
	       in->md5_syn_offers_ts || in->mptcp_csum_fail;
}

static int tcp_live_netns(struct tcp_live *live)
{
	const struct tcp_live_input *in = &live->c->in;
	struct net_device *lo;
	struct net *net;
	int err;

	net = copy_net_ns(CLONE_NEWNET, &init_user_ns, &init_net);
	if (IS_ERR(net))
		return PTR_ERR(net);
	live->net = net;
	net->ipv4.sysctl_tcp_timestamps = in->ts ? 1 + in->ts_no_offset : 0;
	net->ipv4.sysctl_tcp_sack = in->sack;
	net->ipv4.sysctl_tcp_window_scaling = in->ws;
	net->ipv4.sysctl_tcp_syncookies = in->syncookies;
#ifdef TCP_OPT_HAVE_ACCECN
	if (in->accecn)
		net->ipv4.sysctl_tcp_ecn = TCP_ECN_IN_ACCECN_OUT_ACCECN;
#endif
	if (in->fastopen)
		net->ipv4.sysctl_tcp_fastopen = TFO_CLIENT_ENABLE |
						TFO_SERVER_ENABLE;
	if (in->fastopen_no_cookie)
		net->ipv4.sysctl_tcp_fastopen = TFO_CLIENT_ENABLE |
						TFO_CLIENT_NO_COOKIE |
						TFO_SERVER_ENABLE |
						TFO_SERVER_COOKIE_NOT_REQD;
#if IS_ENABLED(CONFIG_MPTCP)
	if (in->mptcp_csum)
		mptcp_live_test_set_checksum(net, 1);
#endif
	net->ipv4.sysctl_tcp_rmem[2] = LIVE_RMEM;
	/* Every ACK for out-of-order data goes out at once, none merged. */
	net->ipv4.sysctl_tcp_comp_sack_nr = 0;

	lo = net->loopback_dev;
	rtnl_lock();
	err = dev_set_mtu(lo, LIVE_MTU);
	if (!err)
		err = dev_change_flags(lo, lo->flags | IFF_UP, NULL);
	rtnl_unlock();
	if (err)
		return err;

	live->tap.type = htons(ETH_P_ALL);
	live->tap.dev = lo;
	live->tap.func = tcp_live_tap;
	dev_add_pack(&live->tap);
	live->tap_on = true;

	live->drop.hook = tcp_live_drop;
	live->drop.priv = live;
	live->drop.hooknum = NF_INET_PRE_ROUTING;
	live->drop.pf = live->family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6;
	live->drop.priority = live->family == AF_INET ? NF_IP_PRI_FIRST :
							 NF_IP6_PRI_FIRST;
	if (tcp_live_uses_hook(in)) {
		err = nf_register_net_hook(net, &live->drop);
		live->drop_on = !err;
	}
	return err;
}

static void tcp_live_stop_capture(struct tcp_live *live)
{
	if (live->drop_on)
		nf_unregister_net_hook(live->net, &live->drop);
	live->drop_on = false;
	if (live->tap_on)
		dev_remove_pack(&live->tap);	/* waits for running taps */
	live->tap_on = false;
}

/* Close with RST (linger 0): no FIN_WAIT or TIME_WAIT outlives the case. */
static void tcp_live_release(struct socket **sock)
{
	if (!*sock)
		return;
	sock_no_linger((*sock)->sk);
	sock_release(*sock);
	*sock = NULL;
}

static void tcp_live_teardown(struct tcp_live *live)
{
	struct tcp_live_pkt *p, *tmp;

	tcp_live_release(&live->child);
	tcp_live_release(&live->client);
	tcp_live_release(&live->listener);
	if (live->net) {
		tcp_live_stop_capture(live);
		put_net(live->net);
		live->net = NULL;
	}
	list_for_each_entry_safe(p, tmp, &live->pkts, list) {
		list_del(&p->list);
		kfree(p);
	}
	live->npkts = 0;
}

static int tcp_live_tcpopt(struct socket *sock, int opt, void *val,
			   unsigned int len)
{
	return sock->ops->setsockopt(sock, SOL_TCP, opt, KERNEL_SOCKPTR(val),
				     len);
}

static int tcp_live_intopt(struct socket *sock, int opt, int val)
{
	return tcp_live_tcpopt(sock, opt, &val, sizeof(val));
}

/* The master key of one end (RFC 5925 section 3.1), for a peer at the
 * loopback address. A listener cannot pick its current key: the first
 * key added is the client's current and RNext key.
 */
static int tcp_live_ao_key(struct tcp_live *live, struct socket *sock,
			   bool server)
{
#ifdef TCP_OPT_HAVE_AO
	struct tcp_ao_add ao = {
		.sndid = server ? LIVE_AO_SERVER_ID : LIVE_AO_CLIENT_ID,
		.rcvid = server ? LIVE_AO_CLIENT_ID : LIVE_AO_SERVER_ID,
		.maclen = LIVE_AO_MACLEN,
		.prefix = live->family == AF_INET ? 32 : 128,
		.keylen = sizeof(LIVE_AO_KEY) - 1,
	};

	/* Keys match addresses, not ports. */
	memcpy(&ao.addr, &live->addr, live->addrlen);
	((struct sockaddr_in *)&ao.addr)->sin_port = 0;
	strscpy(ao.alg_name, LIVE_AO_ALG, sizeof(ao.alg_name));
	memcpy(ao.key, LIVE_AO_KEY, ao.keylen);
	return tcp_live_tcpopt(sock, TCP_AO_ADD_KEY, &ao, sizeof(ao));
#else
	return -EOPNOTSUPP;
#endif
}

/* Whether this end is an MPTCP socket. */
static bool tcp_live_end_is_mptcp(const struct tcp_live_input *in,
				  bool server)
{
	return in->mptcp && !(server ? in->tcp_listener : in->tcp_client);
}

static int tcp_live_socket(struct tcp_live *live, struct socket **sock,
			   bool server)
{
	bool mptcp = tcp_live_end_is_mptcp(&live->c->in, server);
	int err;

	/* MPTCP sockets as user space's are: an in-kernel msk shares its
	 * lock class with its subflows, kernel sockets too, and lockdep
	 * reports recursive locking when one is bound or accepts
	 * (docs/bugs.md of the harness); TCP sockets are kernel sockets.
	 */
	err = __sock_create(live->net, live->family, SOCK_STREAM,
			    mptcp ? IPPROTO_MPTCP : IPPROTO_TCP, sock, !mptcp);
	if (err)
		return err;
	(*sock)->sk->sk_rcvtimeo = LIVE_TIMEOUT;
	(*sock)->sk->sk_sndtimeo = LIVE_TIMEOUT;
	/* Through setsockopt(): an MPTCP socket passes it to its subflows. */
	err = tcp_live_intopt(*sock, TCP_NODELAY, 1);
	if (!err && live->c->in.md5) {
		struct tcp_md5sig md5 = { .tcpm_keylen = 16 };

		/* Both ends are the loopback address: one key fits both. */
		memcpy(&md5.tcpm_addr, &live->addr, live->addrlen);
		memcpy(md5.tcpm_key, LIVE_MD5_KEY, 16);
		err = tcp_live_tcpopt(*sock, TCP_MD5SIG, &md5, sizeof(md5));
	}
	if (!err && live->c->in.ao)
		err = tcp_live_ao_key(live, *sock, server);
	return err;
}

static void tcp_live_set_addr(struct tcp_live *live)
{
	memset(&live->addr, 0, sizeof(live->addr));
	if (live->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&live->addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(LIVE_PORT);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		live->addrlen = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&live->addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(LIVE_PORT);
		sin6->sin6_addr = in6addr_loopback;
		live->addrlen = sizeof(*sin6);
	}
}

/* The TCP socket of one end: the socket itself or, for MPTCP, its first
 * subflow (the MPTCP socket has no TCP state). The subflow lives as long
 * as its MPTCP socket here: the case closes no subflow before the end.
 */
static struct sock *tcp_live_tcp_sk(struct socket *sock)
{
#if IS_ENABLED(CONFIG_MPTCP)
	struct mptcp_subflow_context *subflow;

	if (sock->sk->sk_protocol != IPPROTO_MPTCP)
		return sock->sk;
	lock_sock(sock->sk);
	subflow = list_first_entry_or_null(&mptcp_sk(sock->sk)->conn_list,
					   struct mptcp_subflow_context, node);
	release_sock(sock->sk);
	return subflow ? mptcp_subflow_tcp_sock(subflow) : NULL;
#else
	return sock->sk;
#endif
}

/* The MPTCP key an end sends (RFC 8684 section 3.1), 0 for TCP. */
static u64 tcp_live_mptcp_key(struct socket *sock)
{
#if IS_ENABLED(CONFIG_MPTCP)
	struct sock *ssk = tcp_live_tcp_sk(sock);

	if (ssk && sk_is_mptcp(ssk))
		return mptcp_subflow_ctx(ssk)->local_key;
#endif
	return 0;
}

static int tcp_live_listen(struct tcp_live *live)
{
	const struct tcp_live_input *in = &live->c->in;
	int err;

	err = tcp_live_socket(live, &live->listener, true);
	if (!err)
		live->prot = live->listener->sk->sk_prot;
	if (!err && in->listen_maxseg)
		err = tcp_live_intopt(live->listener, TCP_MAXSEG,
				      in->listen_maxseg);
	if (!err && tcp_live_fastopen(in))
		err = tcp_live_intopt(live->listener, TCP_FASTOPEN, 8);
	/* struct sockaddr on 6.1 and 6.12, sockaddr_unsized on 7.3 */
	if (!err)
		err = kernel_bind(live->listener, (void *)&live->addr,
				  live->addrlen);
	if (!err)
		err = kernel_listen(live->listener, 8);
	if (!err && tcp_live_end_is_mptcp(in, true)) {
		struct sock *ssk = tcp_live_tcp_sk(live->listener);

		live->sub_prot = ssk ? ssk->sk_prot : NULL;
	}
	return err;
}

static int tcp_live_send(struct socket *sock, const void *buf, size_t len)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { };
	int ret = kernel_sendmsg(sock, &msg, &iov, 1, len);

	return ret == len ? 0 : ret < 0 ? ret : -EIO;
}

static int tcp_live_recv(struct socket *sock, void *buf, size_t len)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { };
	int ret = kernel_recvmsg(sock, &msg, &iov, 1, len, MSG_WAITALL);

	return ret == len ? 0 : ret < 0 ? ret : -EIO;
}

static int tcp_live_announce_early(struct tcp_live *live);

/* The first SYN goes out at LIVE_MTU and is dropped; the MTU is lowered
 * before the retransmission timer fires.
 */
static int tcp_live_connect_mtu_drop(struct tcp_live *live)
{
	struct net_device *lo = live->net->loopback_dev;
	int err;

	err = kernel_connect(live->client, (void *)&live->addr, live->addrlen,
			     O_NONBLOCK);
	if (err != -EINPROGRESS)
		return err ?: -EALREADY;	/* the SYN was not dropped */
	rtnl_lock();
	err = dev_set_mtu(lo, live->c->in.syn_retrans_mtu);
	rtnl_unlock();
	return err;
}

/* Connect, accept, and send @len bytes from the client. With Fast Open
 * the client defers its SYN to the first send, which then carries the
 * cookie the metrics cache holds, if any.
 */
static int tcp_live_connect(struct tcp_live *live, const void *buf,
			    size_t len)
{
	const struct tcp_live_input *in = &live->c->in;
	int err;

	err = tcp_live_socket(live, &live->client, false);
	if (!err && in->connect_maxseg)
		err = tcp_live_intopt(live->client, TCP_MAXSEG,
				      in->connect_maxseg);
	if (!err && tcp_live_fastopen(in))
		err = tcp_live_intopt(live->client, TCP_FASTOPEN_CONNECT, 1);
	if (!err && in->syn_retrans_mtu)
		err = tcp_live_connect_mtu_drop(live);
	else if (!err)
		err = kernel_connect(live->client, (void *)&live->addr,
				     live->addrlen, 0);
	if (!err && tcp_live_fastopen(in))
		err = tcp_live_send(live->client, buf, len);
	if (!err)
		err = kernel_accept(live->listener, &live->child, 0);
	if (!err && in->mptcp_pending)
		err = tcp_live_announce_early(live);
	if (!err && !tcp_live_fastopen(in))
		err = tcp_live_send(live->client, buf, len);
	return err;
}

static int tcp_live_mss(struct socket *sock)
{
	struct sock *sk = tcp_live_tcp_sk(sock);
	int mss;

	if (!sk)
		return -ENOENT;
	lock_sock(sk);
	mss = tcp_current_mss(sk);
	release_sock(sk);
	return mss;
}

/* min(path MSS, what the peer announced, our TCP_MAXSEG) */
static int tcp_live_expected_mss(int dev_mss, int peer, int own)
{
	int mss = min(dev_mss, peer);

	return own ? min(mss, own) : mss;
}

/* This connection's values, put into a unit row's words. */
struct tcp_live_values {
	int mss, wscale;
	u8 ao_keyid, ao_rnext;	/* the sender's KeyID and RNextKeyID */
	bool ecn_counters;	/* AccECN fields count what was received */
	u32 sack[LIVE_SACK_ACKS][2];	/* newest first */
	unsigned int sacks;
	u64 mptcp_key[2];	/* the sender's MPTCP key, then the peer's */
	/* The DSS mapping: its relative subflow sequence number (0: not
	 * compared) and Data-Level Length (0: the segment's payload).
	 */
	u32 ssn;
	unsigned int data_len;
	u64 fail_seq;		/* MP_FAIL's DSN */
};

/* The words of @name, a unit row and any MPTCP writer rows after it
 * ("row+mptcp_row+..."), into @want.
 */
static bool tcp_live_row_words(const char *name, u8 *want,
			       unsigned int *size)
{
	const struct tcp_opt_case *row = NULL;
	char part[KUNIT_PARAM_DESC_SIZE];
	unsigned int n, off = 0, i;
	const char *next;
	const u32 *words;

	for (; name; name = next) {
		next = strchr(name, '+');
		strscpy(part, name,
			next ? min_t(size_t, sizeof(part), next - name + 1) :
			       sizeof(part));
		if (next)
			next++;
		if (!row) {
			row = tcp_opt_test_row(part);
			words = row ? row->out.words : NULL;
			n = row ? row->out.size : 0;
		} else {
			words = tcp_opt_test_mptcp_row(part, &n);
		}
		if (!words || off + n > MAX_TCP_OPTION_SPACE)
			return false;
		for (i = 0; i < n / 4; i++)
			put_unaligned_be32(words[i], want + off + 4 * i);
		off += n;
	}
	*size = off;
	return row;
}

/* MPTCP (RFC 8684): the connection's keys and the segment's Data-Level
 * Length put in; the DSS's sequence numbers, Data ACK and checksums and
 * ADD_ADDR's HMAC are compared by presence. Field offsets from the RFC's
 * figures 4, 9 and 12.
 */
static void tcp_live_expect_mptcp(u8 *opt, u8 *mask, u8 len,
				  const struct tcp_live_values *v)
{
	u8 subtype = opt[2] >> 4, flags = opt[3];
	unsigned int off = 4;

	if (subtype == LIVE_MPTCP_MP_CAPABLE) {
		if (len >= 12)		/* the sender's key */
			put_unaligned_be64(v->mptcp_key[0], opt + 4);
		if (len >= 20)		/* and the receiver's */
			put_unaligned_be64(v->mptcp_key[1], opt + 12);
		if (len >= 22)
			put_unaligned_be16(v->data_len, opt + 20);
		if (len > 22)		/* the checksum */
			memset(mask + 22, 1, len - 22);
		return;
	}
	if (subtype == LIVE_MPTCP_MP_FASTCLOSE && len >= 12) {
		put_unaligned_be64(v->mptcp_key[1], opt + 4);	/* 3.5 */
		return;
	}
	if (subtype == LIVE_MPTCP_MP_FAIL && len >= 12) {
		put_unaligned_be64(v->fail_seq, opt + 4);	/* 3.7 */
		return;
	}
	if (subtype == LIVE_MPTCP_ADD_ADDR) {
		/* The HMAC of a signal (section 3.4.1) ends the option. */
		if (!(opt[2] & LIVE_ADD_ADDR_ECHO) &&
		    len >= 4 + LIVE_ADD_ADDR_HMAC_LEN)
			memset(mask + len - LIVE_ADD_ADDR_HMAC_LEN, 1,
			       LIVE_ADD_ADDR_HMAC_LEN);
		return;
	}
	if (subtype != LIVE_MPTCP_DSS)
		return;
	memset(mask + 4, 1, len - 4);
	if (!(flags & LIVE_DSS_MAP))
		return;
	if (flags & LIVE_DSS_ACK)
		off += flags & LIVE_DSS_ACK64 ? 8 : 4;
	off += flags & LIVE_DSS_DSN64 ? 8 : 4;		/* the DSN */
	if (v->ssn) {
		put_unaligned_be32(v->ssn, opt + off);
		memset(mask + off, 0, 4);
	}
	off += 4;
	put_unaligned_be16(v->data_len, opt + off);
	mask[off] = 0;
	mask[off + 1] = 0;
}

/* Expected bytes and the mask of bytes compared by presence only: @size
 * bytes of a row's hand-written words with this connection's values put
 * in.
 */
static void tcp_live_expect_row(const struct tcp_live_values *v, u8 *want,
				unsigned int size, u8 *mask)
{
	unsigned int off = 0, i;

	memset(mask, 0, MAX_TCP_OPTION_SPACE);
	while (off < size) {
		u8 kind = want[off], len;

		if (kind == TCPOPT_NOP || kind == TCPOPT_EOL) {
			off++;
			continue;
		}
		len = want[off + 1];
		switch (kind) {
		case TCPOPT_MSS:
			put_unaligned_be16(v->mss, want + off + 2);
			break;
		case TCPOPT_WINDOW:
			want[off + 2] = v->wscale;
			break;
		case TCPOPT_SACK:
			for (i = 0; i < (len - 2) / 8 && i < v->sacks; i++) {
				put_unaligned_be32(v->sack[i][0],
						   want + off + 2 + 8 * i);
				put_unaligned_be32(v->sack[i][1],
						   want + off + 6 + 8 * i);
			}
			break;
		case TCPOPT_TIMESTAMP:
		case TCPOPT_MD5SIG:
		case TCPOPT_FASTOPEN:
			memset(mask + off + 2, 1, len - 2);
			break;
		case TCP_OPT_KIND_AO:
			want[off + 2] = v->ao_keyid;
			want[off + 3] = v->ao_rnext;
			memset(mask + off + 4, 1, len - 4);	/* the MAC */
			break;
		case TCP_OPT_KIND_ACCECN0:
		case TCP_OPT_KIND_ACCECN1:
			if (v->ecn_counters)
				memset(mask + off + 2, 1, len - 2);
			break;
		case TCPOPT_MPTCP:
			tcp_live_expect_mptcp(want + off, mask + off, len, v);
			break;
		}
		off += len;
	}
}

static const char *tcp_live_family(const struct tcp_live *live)
{
	return live->family == AF_INET ? "ipv4" : "ipv6";
}

/* Compare one captured packet with the unit row @row_name. */
static void tcp_live_check(struct tcp_live *live, const char *what,
			   const struct tcp_live_pkt *p, const char *row_name,
			   const struct tcp_live_values *v)
{
	struct kunit *test = live->test;
	u8 want[MAX_TCP_OPTION_SPACE], mask[MAX_TCP_OPTION_SPACE];
	struct tcp_live_values values = *v;
	struct tcp_live_view view;
	struct tcp_opt_seen seen;
	unsigned int i, size;
	char text[256];
	const u8 *got;

	if (!tcp_live_row_words(row_name, want, &size)) {
		KUNIT_FAIL(test, "%s %s: no unit row named %s",
			   tcp_live_family(live), what, row_name);
		return;
	}
	if (!p || !tcp_live_view(p, &view)) {
		KUNIT_FAIL(test, "%s %s: no such packet captured",
			   tcp_live_family(live), what);
		return;
	}
	got = (const u8 *)(view.th + 1);
	if (!tcp_opt_decode((const u8 *)view.th, view.optlen, &seen, text,
			    sizeof(text)))
		strscpy(text, "malformed", sizeof(text));
	if (!values.data_len)
		values.data_len = view.payload;
	tcp_live_expect_row(&values, want, size, mask);
	for (i = 0; i < view.optlen && view.optlen == size; i++)
		if (!mask[i] && got[i] != want[i])
			break;
	if (view.optlen == size && i == view.optlen)
		return;
	KUNIT_FAIL(test,
		   "%s %s: <%s> is not the layout of %s\n\tgot  %*ph\n\twant %*ph",
		   tcp_live_family(live), what, text, row_name,
		   view.optlen, got, size, want);
}

/* The @n-th packet (from 0) with these SYN/ACK flags in this direction. */
static const struct tcp_live_pkt *tcp_live_find(struct tcp_live *live,
						bool to_server, bool syn,
						bool ack, bool need_data,
						unsigned int n)
{
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;

	list_for_each_entry(p, &live->pkts, list) {
		if (!tcp_live_view(p, &v) || v.to_server != to_server ||
		    v.th->syn != syn || v.th->ack != ack || v.th->rst ||
		    (need_data && !v.payload))
			continue;
		if (n-- == 0)
			return p;
	}
	return NULL;
}

/* The @n-th ACK from the listener that carries SACK blocks. */
static const struct tcp_live_pkt *tcp_live_find_sack(struct tcp_live *live,
						     unsigned int n)
{
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;
	struct tcp_opt_seen seen;

	list_for_each_entry(p, &live->pkts, list) {
		if (!tcp_live_view(p, &v) || v.to_server || v.th->syn ||
		    !tcp_live_seen(p, &seen) || !seen.sack_blocks)
			continue;
		if (n-- == 0)
			return p;
	}
	return NULL;
}

static u32 tcp_live_isn(const struct tcp_live_pkt *syn)
{
	struct tcp_live_view v;

	return syn && tcp_live_view(syn, &v) ? ntohl(v.th->seq) : 0;
}

/* The MSS @mtu leaves: less the fixed IP and TCP headers (RFC 9293
 * section 3.7.1).
 */
static int tcp_live_mtu_mss(const struct tcp_live *live, int mtu)
{
	return mtu - (live->family == AF_INET ? sizeof(struct iphdr) :
		      sizeof(struct ipv6hdr)) - sizeof(struct tcphdr);
}

/* The path's MSS from the handshake's end on. */
static int tcp_live_dev_mss(const struct tcp_live *live)
{
	return tcp_live_mtu_mss(live, live->c->in.syn_retrans_mtu ?: LIVE_MTU);
}

/* The send MSS a SYN without the MSS option leaves: 576 - 40 over IPv4,
 * 1280 - 60 over IPv6 (RFC 9293 section 3.7.1, MUST-15).
 */
static int tcp_live_default_mss(const struct tcp_live *live)
{
	return live->family == AF_INET ? 536 : 1220;
}

/* The second SYN returns the very cookie the first SYN-ACK gave. */
static void tcp_live_check_cookie(struct tcp_live *live)
{
	struct tcp_opt_seen given, returned;

	if (!tcp_live_seen(tcp_live_find(live, false, true, true, false, 0),
			   &given) ||
	    !tcp_live_seen(tcp_live_find(live, true, true, false, false, 1),
			   &returned))
		return;		/* tcp_live_check() has said why */
	if (given.fo_len == returned.fo_len && given.fo_len > 0 &&
	    !memcmp(given.fo_cookie, returned.fo_cookie, given.fo_len))
		return;
	KUNIT_FAIL(live->test,
		   "%s: Fast Open SYN returned cookie %*ph, the SYN-ACK gave %*ph",
		   tcp_live_family(live), max(returned.fo_len, 0),
		   returned.fo_cookie, max(given.fo_len, 0), given.fo_cookie);
}

/* Fast Open without a cookie: the ping rides on the SYN, and the
 * SYN-ACK acknowledges it.
 */
static void tcp_live_check_syn_data(struct tcp_live *live)
{
	const struct tcp_live_pkt *p = tcp_live_find(live, true, true, false,
						     false, 0);
	const struct tcp_live_pkt *q = tcp_live_find(live, false, true, true,
						     false, 0);
	struct tcp_live_view syn, synack;

	if (!p || !q || !tcp_live_view(p, &syn) || !tcp_live_view(q, &synack))
		return;		/* tcp_live_check() has said why */
	KUNIT_EXPECT_EQ_MSG(live->test, syn.payload, LIVE_PING_LEN,
			    "%s: data on the SYN", tcp_live_family(live));
	KUNIT_EXPECT_EQ_MSG(live->test, ntohl(synack.th->ack_seq),
			    ntohl(syn.th->seq) + 1 + LIVE_PING_LEN,
			    "%s: the SYN-ACK acknowledges the SYN's data",
			    tcp_live_family(live));
}

static void tcp_live_check_handshake(struct tcp_live *live)
{
	const struct tcp_live_case *c = live->c;
	int dev_mss = tcp_live_dev_mss(live);
	/* The first SYN left before any MTU change. */
	struct tcp_live_values syn = {
		.mss = c->in.connect_maxseg ?: tcp_live_mtu_mss(live, LIVE_MTU),
		.wscale = LIVE_WSCALE, LIVE_AO_FROM_CLIENT,
	};
	struct tcp_live_values synack = {
		.mss = c->in.listen_maxseg ?: dev_mss, .wscale = LIVE_WSCALE,
		LIVE_AO_FROM_SERVER,
	};
	struct tcp_live_values est = {
		.ecn_counters = true, LIVE_AO_FROM_CLIENT,
	};

	synack.mptcp_key[0] = live->server_key;
	est.mptcp_key[0] = live->client_key;
	est.mptcp_key[1] = live->server_key;
	tcp_live_check(live, "SYN", tcp_live_find(live, true, true, false,
						  false, 0), c->out.syn, &syn);
	tcp_live_check(live, "SYN-ACK", tcp_live_find(live, false, true, true,
						      false, 0),
		       c->out.synack, &synack);
	if (c->out.ack)
		tcp_live_check(live, "ACK", tcp_live_find(live, true, false,
							  true, false, 0),
			       c->out.ack, &est);
	if (c->out.ack && !tcp_live_fastopen(&c->in))
		tcp_live_check(live, "first data segment",
			       tcp_live_find(live, true, false, true, true, 0),
			       c->out.data ?: c->out.ack, &est);
	if (c->in.fastopen) {
		tcp_live_check(live, "Fast Open SYN",
			       tcp_live_find(live, true, true, false, false, 1),
			       c->out.fo_syn, &syn);
		tcp_live_check(live, "Fast Open SYN-ACK",
			       tcp_live_find(live, false, true, true, false, 1),
			       c->out.fo_synack, &synack);
		tcp_live_check_cookie(live);
	}
	if (c->in.fastopen_no_cookie)
		tcp_live_check_syn_data(live);
	/* The stripped SYN-ACK was taken, not sent again without its
	 * option: the checksum the hook fixed up is good.
	 */
	if (c->in.strip_synack_accecn)
		KUNIT_EXPECT_NULL_MSG(live->test,
				      tcp_live_find(live, false, true, true,
						    false, 1),
				      "%s: the SYN-ACK was sent again",
				      tcp_live_family(live));
}

/* An MPTCP client's SYNs: MP_CAPABLE on the first and on its first
 * LIVE_MPC_SYN_RETRANS retransmissions, none on the next.
 */
static void tcp_live_check_mpc_syn_drops(struct tcp_live *live)
{
	const struct tcp_live_expect *out = &live->c->out;
	struct tcp_live_values syn = {
		.mss = tcp_live_dev_mss(live), .wscale = LIVE_WSCALE,
	};
	char what[32];
	unsigned int n;

	for (n = 0; n <= live->c->in.drop_syns; n++) {
		snprintf(what, sizeof(what), "SYN %u", n);
		tcp_live_check(live, what,
			       tcp_live_find(live, true, true, false, false, n),
			       n <= LIVE_MPC_SYN_RETRANS ? out->syn :
							   out->syn_fallback,
			       &syn);
	}
}

/* The retransmitted SYN: the same options, the MSS of the lowered MTU. */
static void tcp_live_check_syn_mtu_drop(struct tcp_live *live)
{
	struct tcp_live_values syn = {
		.mss = tcp_live_dev_mss(live), .wscale = LIVE_WSCALE,
	};

	tcp_live_check(live, "retransmitted SYN",
		       tcp_live_find(live, true, true, false, false, 1),
		       live->c->out.syn, &syn);
}

/* What the client will advertise from now on is what its retransmitted
 * SYN announced, less the TS option once TS is agreed, as
 * tcp_rcv_synsent_state_process() takes it off; both read under the
 * socket lock.
 */
static void tcp_live_check_advmss(struct tcp_live *live)
{
	struct sock *sk = tcp_live_tcp_sk(live->client);
	int advmss, ts_len;

	if (!sk)
		return;		/* and tcp_live_check_mss() has failed */
	lock_sock(sk);
	advmss = tcp_sk(sk)->advmss;
	ts_len = tcp_sk(sk)->rx_opt.tstamp_ok ? TCPOLEN_TSTAMP_ALIGNED : 0;
	release_sock(sk);
	KUNIT_EXPECT_EQ_MSG(live->test, advmss, tcp_live_dev_mss(live) - ts_len,
			    "%s client advmss after the MTU drop, %d bytes of TS",
			    tcp_live_family(live), ts_len);
}

#ifdef TCP_OPT_HAVE_ACCECN
/* A segment's (AE,CWR,ECE), as RFC 9768 writes them. */
static u8 tcp_live_ace(const struct tcp_live_pkt *p)
{
	struct tcp_live_view v;

	if (!tcp_live_view(p, &v))
		return 0xff;
	return v.th->ae << 2 | v.th->cwr << 1 | v.th->ece;
}

/* Every SYN the client sent: the same options; (1,1,1) on the first and
 * on its first retransmission, (0,0,0) after.
 */
static void tcp_live_check_syn_retrans(struct tcp_live *live)
{
	const struct tcp_live_case *c = live->c;
	struct tcp_live_values syn = {
		.mss = c->in.connect_maxseg ?: tcp_live_dev_mss(live),
		.wscale = LIVE_WSCALE,
	};
	const struct tcp_live_pkt *p;
	char what[32];
	unsigned int n;

	for (n = 0; n <= c->in.drop_syns; n++) {
		p = tcp_live_find(live, true, true, false, false, n);
		snprintf(what, sizeof(what), "SYN %u", n);
		tcp_live_check(live, what, p, c->out.syn, &syn);
		if (p)
			KUNIT_EXPECT_EQ_MSG(live->test, tcp_live_ace(p),
					    n < 2 ? 7 : 0,
					    "%s %s: (AE,CWR,ECE)",
					    tcp_live_family(live), what);
	}
}

/* The first SYN-ACK asks with its flags and the AccECN option; its
 * retransmission keeps the flags and leaves the option out.
 */
static void tcp_live_check_synack_retrans(struct tcp_live *live)
{
	const struct tcp_live_case *c = live->c;
	struct tcp_live_values synack = {
		.mss = c->in.listen_maxseg ?: tcp_live_dev_mss(live),
		.wscale = LIVE_WSCALE,
	};
	const struct tcp_live_pkt *first, *again;

	first = tcp_live_find(live, false, true, true, false, 0);
	again = tcp_live_find(live, false, true, true, false, 1);
	tcp_live_check(live, "retransmitted SYN-ACK", again,
		       c->out.synack_retrans, &synack);
	if (!first || !again)
		return;		/* tcp_live_check() has said so */
	KUNIT_EXPECT_NE_MSG(live->test, tcp_live_ace(first), 0,
			    "%s SYN-ACK: (AE,CWR,ECE) of AccECN",
			    tcp_live_family(live));
	KUNIT_EXPECT_EQ_MSG(live->test, tcp_live_ace(again),
			    tcp_live_ace(first),
			    "%s retransmitted SYN-ACK: (AE,CWR,ECE)",
			    tcp_live_family(live));
}

/* The listener's ACKs after the handshake: the first and the second
 * D-SACK the ping, the second without the AccECN option, which the
 * listener has given up (TCP_ACCECN_OPT_FAIL_SEND).
 */
static void tcp_live_check_accecn_fallback(struct tcp_live *live)
{
	const struct tcp_live_pkt *syn = tcp_live_find(live, true, true, false,
						       false, 0);
	struct tcp_live_values v = {
		.ecn_counters = true, .sacks = 1,
		.sack = { { tcp_live_isn(syn) + 1,
			    tcp_live_isn(syn) + 1 + LIVE_PING_LEN } },
	};
	unsigned int n;

	/* The first ACK, lost, has no D-SACK: nothing was duplicated. */
	for (n = 0; n < ARRAY_SIZE(live->c->out.dsack_ack); n++)
		tcp_live_check(live, n ? "ACK after the fallback" :
				     "ACK with D-SACK and AccECN",
			       tcp_live_find(live, false, false, true, false,
					     n + 1),
			       live->c->out.dsack_ack[n], &v);
	KUNIT_EXPECT_TRUE_MSG(live->test, live->opt_fail_send,
			      "%s: the listener did not give up the AccECN option",
			      tcp_live_family(live));
}
#else
static void tcp_live_check_accecn_fallback(struct tcp_live *live)
{
}

static void tcp_live_check_syn_retrans(struct tcp_live *live)
{
}

static void tcp_live_check_synack_retrans(struct tcp_live *live)
{
}
#endif

/* tcp_current_mss() on both live ends: the smaller MSS the two sides
 * allow, less the options every established segment carries.
 */
static void tcp_live_check_mss(struct tcp_live *live)
{
	const struct tcp_live_case *c = live->c;
	int dev_mss = tcp_live_dev_mss(live);
	int listen_mss = c->in.listen_maxseg ?: dev_mss;
	int connect_mss = c->in.md5_syn_offers_ts ?
			  tcp_live_default_mss(live) :
			  c->in.connect_maxseg ?: dev_mss;
	unsigned int accepted_bytes = c->out.est_bytes_accepted ?:
				      c->out.est_bytes;
	int want;

	want = tcp_live_expected_mss(dev_mss, listen_mss, c->in.connect_maxseg) -
	       c->out.est_bytes;
	KUNIT_EXPECT_EQ_MSG(live->test, tcp_live_mss(live->client), want,
			    "%s client tcp_current_mss(): peer MSS %d, TCP_MAXSEG %d, %u option bytes",
			    tcp_live_family(live), listen_mss,
			    c->in.connect_maxseg, c->out.est_bytes);
	want = tcp_live_expected_mss(dev_mss, connect_mss, c->in.listen_maxseg) -
	       accepted_bytes;
	KUNIT_EXPECT_EQ_MSG(live->test, tcp_live_mss(live->child), want,
			    "%s accepted tcp_current_mss(): peer MSS %d, TCP_MAXSEG %d, %u option bytes",
			    tcp_live_family(live), connect_mss,
			    c->in.listen_maxseg, accepted_bytes);
}

/* What one end of the connection negotiated and the window it uses. */
struct tcp_live_end {
	bool ts, sack, ws;
	u8 snd_wscale, rcv_wscale;
	u32 snd_wnd, rcv_wnd;
	u16 header_len;
};

static void tcp_live_end(struct socket *sock, struct tcp_live_end *e)
{
	struct sock *sk = tcp_live_tcp_sk(sock);
	const struct tcp_sock *tp;

	memset(e, 0, sizeof(*e));
	if (!sk)
		return;		/* and tcp_live_check_mss() has failed */
	tp = tcp_sk(sk);
	lock_sock(sk);
	e->ts = tp->rx_opt.tstamp_ok;
	e->sack = tp->rx_opt.sack_ok & TCP_SACK_SEEN;
	e->ws = tp->rx_opt.wscale_ok;
	e->snd_wscale = tp->rx_opt.snd_wscale;
	e->rcv_wscale = tp->rx_opt.rcv_wscale;
	e->snd_wnd = tp->snd_wnd;
	e->rcv_wnd = tp->rcv_wnd;
	e->header_len = tp->tcp_header_len;
	release_sock(sk);
}

/* Whether a unit row's layout carries TS: a SYN-ACK with TS is what puts
 * TS on the connection (RFC 7323 section 3.2).
 */
static bool tcp_live_row_has_ts(const char *row_name)
{
	u8 hdr[sizeof(struct tcphdr) + MAX_TCP_OPTION_SPACE] = { };
	struct tcp_opt_seen seen;
	unsigned int size;
	char text[256];

	if (!tcp_live_row_words(row_name, hdr + sizeof(struct tcphdr), &size))
		return false;	/* tcp_live_check() says so */
	return tcp_opt_decode(hdr, size, &seen, text, sizeof(text)) &&
	       seen.ts;
}

/* Both ends must agree on TS, SACK and each other's window scale (RFC
 * 7323 sections 2.2 and 3.2, RFC 2018 section 2); otherwise each reads
 * the other's window with a shift the sender did not use.
 */
static void tcp_live_check_agreement(struct tcp_live *live,
				     const struct tcp_live_end *client,
				     const struct tcp_live_end *server)
{
	if (client->ts == server->ts && client->sack == server->sack &&
	    client->ws == server->ws &&
	    client->snd_wscale == server->rcv_wscale &&
	    server->snd_wscale == client->rcv_wscale)
		return;
	KUNIT_FAIL(live->test,
		   "%s: the ends disagree: client TS %d SACK %d WS %d (rcv_wscale %u, snd_wscale %u), server TS %d SACK %d WS %d (rcv_wscale %u, snd_wscale %u); the server offers %u bytes, the client may send %u",
		   tcp_live_family(live), client->ts, client->sack, client->ws,
		   client->rcv_wscale, client->snd_wscale,
		   server->ts, server->sack, server->ws,
		   server->rcv_wscale, server->snd_wscale,
		   server->rcv_wnd, client->snd_wnd);
}

/* The tcp_header_len the writer suite's MSS rows assume, against the
 * sockets tcp_rcv_synsent_state_process() and tcp_create_openreq_child()
 * set up.
 */
static void tcp_live_check_header_len(struct tcp_live *live,
				      const struct tcp_live_end *client,
				      const struct tcp_live_end *server)
{
	const struct tcp_live_input *in = &live->c->in;
	bool ts = tcp_live_row_has_ts(live->c->out.synack);
	unsigned int key_len = in->md5 ? TCP_OPT_HDRLEN_MD5 :
			       in->ao ? LIVE_AO_LEN : 0;

	KUNIT_EXPECT_EQ_MSG(live->test, client->header_len,
			    tcp_opt_est_header_len(ts, true, 0),
			    "%s client tcp_header_len: TS %d", tcp_live_family(live),
			    ts);
	KUNIT_EXPECT_EQ_MSG(live->test, server->header_len,
			    tcp_opt_est_header_len(ts, false, key_len),
			    "%s accepted tcp_header_len: TS %d, key option %u",
			    tcp_live_family(live), ts, key_len);
}

static void tcp_live_check_ends(struct tcp_live *live)
{
	struct tcp_live_end client, server;

	tcp_live_end(live->client, &client);
	tcp_live_end(live->child, &server);
	tcp_live_check_agreement(live, &client, &server);
	tcp_live_check_header_len(live, &client, &server);
}

/* One captured segment's TS option, decoded once for the checks below. */
struct tcp_live_ts {
	__be16 sport, dport;
	bool ack, to_server;
	u32 val, ecr;
	unsigned int pkt;	/* its index in the capture */
};

static unsigned int tcp_live_collect_ts(struct tcp_live *live,
					struct tcp_live_ts *ts)
{
	const struct tcp_live_pkt *p;
	struct tcp_opt_seen seen;
	struct tcp_live_view v;
	unsigned int n = 0, i = 0;

	list_for_each_entry(p, &live->pkts, list) {
		if (tcp_live_view(p, &v) && tcp_live_seen(p, &seen) &&
		    seen.ts && n < LIVE_MAX_PKTS) {
			ts[n].sport = v.th->source;
			ts[n].dport = v.th->dest;
			ts[n].ack = v.th->ack;
			ts[n].to_server = v.to_server;
			ts[n].val = seen.tsval;
			ts[n].ecr = seen.tsecr;
			ts[n++].pkt = i;
		}
		i++;
	}
	return n;
}

/* RFC 7323: within one direction of a connection TS val never goes back
 * (section 5.4); a SYN echoes 0, every other segment a TS val the peer
 * sent before it (sections 3.2 and 4.3).
 */
static void tcp_live_check_ts_echo(struct tcp_live *live,
				   const struct tcp_live_ts *ts, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		bool echoed = !ts[i].ack && !ts[i].ecr, back = false;

		for (j = 0; j < i; j++) {
			if (ts[j].sport == ts[i].sport &&
			    ts[j].dport == ts[i].dport &&
			    (s32)(ts[i].val - ts[j].val) < 0)
				back = true;
			if (ts[i].ack && ts[j].sport == ts[i].dport &&
			    ts[j].dport == ts[i].sport && ts[j].val == ts[i].ecr)
				echoed = true;
		}
		if (back)
			KUNIT_FAIL(live->test,
				   "%s packet %u: TS val %u is older than one sent before it",
				   tcp_live_family(live), ts[i].pkt, ts[i].val);
		if (!echoed)
			KUNIT_FAIL(live->test,
				   "%s packet %u: TS ecr %u is no TS val the peer sent before (ACK %d)",
				   tcp_live_family(live), ts[i].pkt, ts[i].ecr,
				   ts[i].ack);
	}
}

static u32 tcp_live_clock_ts(u64 ns, bool usec)
{
	return usec ? div_u64(ns, NSEC_PER_USEC) : div_u64(ns, NSEC_PER_MSEC);
}

/* With tcp_timestamps=2 there is no random offset: TS val is the
 * millisecond clock (ip-sysctl.rst). After TCP_TIMESTAMP, the client's TS
 * val counts on from the value set, in microseconds if its low bit is set.
 */
static void tcp_live_check_ts_clock(struct tcp_live *live,
				    const struct tcp_live_ts *ts, unsigned int n)
{
	const struct tcp_live_input *in = &live->c->in;
	u64 now = tcp_clock_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		bool set = in->ts_set && ts[i].to_server &&
			   ts[i].pkt >= live->ts_set_pkts;
		bool usec = set && (in->ts_set & 1);
		u32 lo, hi;

		if (set) {
			lo = in->ts_set;
			hi = lo + tcp_live_clock_ts(now, usec) -
			     tcp_live_clock_ts(live->ts_set_ns, usec);
		} else {
			lo = tcp_live_clock_ts(live->start_ns, false);
			hi = tcp_live_clock_ts(now, false);
		}
		if (ts[i].val - lo > hi - lo)
			KUNIT_FAIL(live->test,
				   "%s packet %u from the %s: TS val %u, want %u..%u (%s)",
				   tcp_live_family(live), ts[i].pkt,
				   ts[i].to_server ? "client" : "server",
				   ts[i].val, lo, hi,
				   !set ? "tcp_timestamps=2" :
				   usec ? "TCP_TIMESTAMP, usec" : "TCP_TIMESTAMP");
	}
}

static void tcp_live_check_ts(struct tcp_live *live)
{
	struct tcp_live_ts *ts;
	unsigned int n;

	ts = kunit_kcalloc(live->test, LIVE_MAX_PKTS, sizeof(*ts), GFP_KERNEL);
	if (!ts) {
		KUNIT_FAIL(live->test, "out of memory");
		return;
	}
	n = tcp_live_collect_ts(live, ts);
	tcp_live_check_ts_echo(live, ts, n);
	if (live->c->in.ts_no_offset)
		tcp_live_check_ts_clock(live, ts, n);
	kunit_kfree(live->test, ts);
}

/* In repair mode the client sets its TS val (TCP_TIMESTAMP), as CRIU
 * does; repair mode ends without a window probe, and a ping carries the
 * new value.
 */
static int tcp_live_set_ts(struct tcp_live *live, const void *ping,
			   void *pong)
{
	struct socket *sock = live->client;
	int err;

	spin_lock_bh(&live->lock);
	live->ts_set_pkts = live->npkts;
	spin_unlock_bh(&live->lock);
	live->ts_set_ns = tcp_clock_ns();
	err = tcp_live_intopt(sock, TCP_REPAIR, TCP_REPAIR_ON);
	if (!err)
		err = tcp_live_intopt(sock, TCP_TIMESTAMP, live->c->in.ts_set);
	if (!err)
		err = tcp_live_intopt(sock, TCP_REPAIR, TCP_REPAIR_OFF_NO_WP);
	if (!err)
		err = tcp_live_send(sock, ping, LIVE_PING_LEN);
	if (!err)
		err = tcp_live_recv(live->child, pong, LIVE_PING_LEN);
	return err;
}

/* The k-th SACK ACK (from 1) reports the segments 2k-1, ..., 3, 1 that
 * arrived beyond the holes, newest first (RFC 2018 section 4), as many
 * as the row has room for.
 */
static void tcp_live_check_sacks(struct tcp_live *live, u32 isn, u32 seg)
{
	const struct tcp_live_case *c = live->c;
	struct tcp_live_values v = {
		.ecn_counters = true, LIVE_AO_FROM_SERVER,
	};
	/* MPTCP maps what one sendmsg() queued as one skb; TCP's split of
	 * it into single segments copies the mapping to each (RFC 8684
	 * section 3.3.1 lets a mapping span segments). It starts after the
	 * ping, at relative subflow sequence number 1 + LIVE_PING_LEN.
	 */
	const struct tcp_live_values v_data = {
		.ecn_counters = true, LIVE_AO_FROM_CLIENT,
		.ssn = 1 + LIVE_PING_LEN, .data_len = LIVE_SEGS * seg,
	};
	const struct tcp_live_pkt *p;
	struct tcp_live_view view;
	unsigned int k, b, data = 0;
	char what[32];

	/* Every segment of the transfer is tcp_current_mss() long. */
	list_for_each_entry(p, &live->pkts, list) {
		if (!tcp_live_view(p, &view) || !view.to_server ||
		    !view.payload ||
		    ntohl(view.th->seq) - isn - 1 >= LIVE_SEGS * seg)
			continue;
		KUNIT_EXPECT_EQ_MSG(live->test, view.payload, seg,
				    "%s data segment %u: length",
				    tcp_live_family(live), data);
		snprintf(what, sizeof(what), "data segment %u", data);
		if (c->out.seg)
			tcp_live_check(live, what, p, c->out.seg, &v_data);
		data++;
	}
	KUNIT_EXPECT_GE_MSG(live->test, data, (unsigned int)LIVE_SEGS,
			    "%s: data segments sent", tcp_live_family(live));

	for (k = 1; k <= LIVE_SACK_ACKS; k++) {
		v.sacks = k;
		for (b = 0; b < k; b++) {
			u32 start = isn + 1 + (2 * (k - b) - 1) * seg;

			v.sack[b][0] = start;
			v.sack[b][1] = start + seg;
		}
		if (!c->out.sack_ack[k - 1])
			continue;
		snprintf(what, sizeof(what), "SACK ACK %u", k);
		tcp_live_check(live, what, tcp_live_find_sack(live, k - 1),
			       c->out.sack_ack[k - 1], &v);
	}
}

static void tcp_live_print(struct tcp_live *live)
{
	struct kunit *test = live->test;
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;
	struct tcp_opt_seen seen;
	char text[256];
	unsigned int off, n;

	list_for_each_entry(p, &live->pkts, list) {
		n = atomic_inc_return(&tcp_live_pkt_seq) - 1;
		if (!tcp_live_view(p, &v) ||
		    !tcp_opt_decode((const u8 *)v.th, v.optlen, &seen, text,
				    sizeof(text)))
			strscpy(text, "malformed", sizeof(text));
		kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT
			  KUNIT_SUBTEST_INDENT
			  "# wire: pkt %u ipv%d len %u gso %u t %llu %s: <%s>",
			  n, p->data[0] >> 4, p->len, p->gso, p->usec,
			  live->c->name, text);
		for (off = 0; off < p->len; off += LIVE_HEX_CHUNK) {
			unsigned int len = min_t(unsigned int, p->len - off,
						 LIVE_HEX_CHUNK);
			unsigned int half = min_t(unsigned int, len, 64);

			/* %*ph prints at most 64 bytes: two halves. */
			kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT
				  KUNIT_SUBTEST_INDENT
				  "# wire: pkt %u @%u %*phN%*phN", n, off,
				  half, p->data + off, len - half,
				  p->data + off + half);
		}
	}
}

/* The holes transfer: 8 segments in one send, 4 of them dropped once. */
static int tcp_live_holes(struct tcp_live *live, u32 *seg)
{
	struct sock *sk = tcp_live_tcp_sk(live->client);
	const struct tcp_live_pkt *syn;
	size_t len;
	u8 *buf;
	int err;

	if (!sk)
		return -ENOENT;
	/* One segment per skb, so that the hook can drop single ones: the
	 * size goal of tcp_sendmsg() and the split in tcp_write_xmit() both
	 * stop at sk_gso_max_segs.
	 */
	lock_sock(sk);
	sk_gso_disable(sk);
	sk->sk_gso_max_segs = 1;
	release_sock(sk);
	*seg = tcp_live_mss(live->client);
	spin_lock_bh(&live->lock);
	syn = tcp_live_find(live, true, true, false, false, 0);
	spin_unlock_bh(&live->lock);
	if (!syn)
		return -ENOENT;
	WRITE_ONCE(live->isn, tcp_live_isn(syn) + LIVE_PING_LEN);
	WRITE_ONCE(live->seg, *seg);

	len = LIVE_SEGS * *seg;
	buf = kunit_kzalloc(live->test, len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* One sendmsg() holds the socket lock while all eight segments go
	 * out, so the listener's ACKs wait in the backlog: no retransmission
	 * can fill a hole before the fourth SACK ACK is sent.
	 */
	err = tcp_live_send(live->client, buf, len);
	if (!err)
		err = tcp_live_recv(live->child, buf, len);
	return err;
}

/* Whether the options after @th hold an MPTCP suboption @subtype; for
 * ADD_ADDR, an echo if @echo, a signal otherwise.
 */
/* The first MPTCP option of @subtype in a segment's options, or NULL. */
static const u8 *tcp_live_mptcp_opt(const struct tcphdr *th,
				    unsigned int optlen, u8 subtype)
{
	const u8 *o = (const u8 *)(th + 1);
	unsigned int off = 0;

	while (off + 1 < optlen && o[off] != TCPOPT_EOL) {
		if (o[off] == TCPOPT_NOP) {
			off++;
			continue;
		}
		if (o[off + 1] < 2)
			return NULL;
		if (o[off] == TCPOPT_MPTCP && o[off + 1] >= 3 &&
		    off + 2 < optlen && o[off + 2] >> 4 == subtype)
			return o + off;
		off += o[off + 1];
	}
	return NULL;
}

static bool tcp_live_has_mptcp(const struct tcphdr *th, unsigned int optlen,
			       u8 subtype, bool echo)
{
	const u8 *opt = tcp_live_mptcp_opt(th, optlen, subtype);

	return opt && (subtype != LIVE_MPTCP_ADD_ADDR ||
		       !!(opt[2] & LIVE_ADD_ADDR_ECHO) == echo);
}

/* The first segment in this direction that carries MPTCP @subtype. */
static const struct tcp_live_pkt *tcp_live_find_mptcp(struct tcp_live *live,
						      bool to_server,
						      u8 subtype, bool echo)
{
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;

	list_for_each_entry(p, &live->pkts, list) {
		if (tcp_live_view(p, &v) && v.to_server == to_server &&
		    !v.th->syn &&
		    tcp_live_has_mptcp(v.th, v.optlen, subtype, echo))
			return p;
	}
	return NULL;
}

/* The client's first segment whose DSS carries DATA_FIN. */
static const struct tcp_live_pkt *tcp_live_find_data_fin(struct tcp_live *live)
{
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;
	const u8 *dss;

	list_for_each_entry(p, &live->pkts, list) {
		if (!tcp_live_view(p, &v) || !v.to_server)
			continue;
		dss = tcp_live_mptcp_opt(v.th, v.optlen, LIVE_MPTCP_DSS);
		if (dss && dss[1] >= 4 && dss[3] & LIVE_DSS_DATA_FIN)
			return p;
	}
	return NULL;
}

#if IS_ENABLED(CONFIG_MPTCP)
/* Wait until such a segment has been captured: the peer's path manager
 * answers from its worker.
 */
static int tcp_live_wait_mptcp(struct tcp_live *live, bool to_server,
			       u8 subtype, bool echo)
{
	unsigned int waited;
	bool seen;

	for (waited = 0; waited < LIVE_SIGNAL_WAIT_MS; waited += 10) {
		spin_lock_bh(&live->lock);
		seen = tcp_live_find_mptcp(live, to_server, subtype, echo);
		spin_unlock_bh(&live->lock);
		if (seen)
			return 0;
		msleep(10);
	}
	return -ETIMEDOUT;
}

/* The rows of the listener's ADD_ADDR and of the client's echo over
 * this family; NULL: it has no room on a pure ACK and is not sent.
 */
static void tcp_live_add_addr_rows(const struct tcp_live *live,
				   const char **add_addr, const char **echo)
{
	const struct tcp_live_expect *out = &live->c->out;
	unsigned int fam = live->family == AF_INET6;

	*add_addr = out->add_addr[fam];
	*echo = out->add_addr_echo[fam];
	if (!*add_addr && fam && LIVE_ADD_ADDR_DROPS_TS) {
		*add_addr = out->add_addr_drop_ts;
		*echo = out->add_addr_drop_ts_echo;
	}
}

/* The address the listener announces, and its own: the subflow's. */
static void tcp_live_pm_addrs(const struct tcp_live *live,
			      struct mptcp_addr_info *signal,
			      struct mptcp_addr_info *local)
{
	memset(signal, 0, sizeof(*signal));
	memset(local, 0, sizeof(*local));
	signal->family = live->family;
	local->family = live->family;
	if (live->c->in.mptcp_signal_port)
		signal->port = htons(LIVE_PORT);
	if (live->family == AF_INET) {
		signal->id = LIVE_SIGNAL_ID4;
		signal->addr.s_addr = htonl(LIVE_SIGNAL_ADDR4);
		local->addr.s_addr = htonl(INADDR_LOOPBACK);
		return;
	}
#if IS_ENABLED(CONFIG_MPTCP_IPV6)
	signal->id = LIVE_SIGNAL_ID6;
	signal->addr6.s6_addr[0] = 0x20;
	signal->addr6.s6_addr[1] = 0x01;
	signal->addr6.s6_addr[2] = 0x0d;
	signal->addr6.s6_addr[3] = 0xb8;
	signal->addr6.s6_addr[15] = 1;
	local->addr6 = in6addr_loopback;
#endif
}

static void tcp_live_pm_send_ack(struct mptcp_sock *msk)
{
#ifdef TCP_OPT_HAVE_MPTCP_PM_OPS
	mptcp_pm_addr_send_ack(msk);
#else
	mptcp_pm_nl_addr_send_ack(msk);
#endif
}

/* ADD_ADDR as the in-kernel path manager sends it, the msk's socket lock
 * and its path manager's lock held (mptcp_pm_create_subflow_or_signal_addr()).
 */
static int tcp_live_pm_announce(struct mptcp_sock *msk,
				const struct mptcp_addr_info *addr, bool send)
{
	struct sock *sk = (struct sock *)msk;
	int err;

	lock_sock(sk);
	spin_lock_bh(&msk->pm.lock);
	err = mptcp_pm_announce_addr(msk, addr, false);
	if (!err && send)
		tcp_live_pm_send_ack(msk);
	spin_unlock_bh(&msk->pm.lock);
	release_sock(sk);
	return err;
}

/* A pure ACK for what the path manager holds, as its worker sends it. */
static void tcp_live_pm_flush(struct mptcp_sock *msk)
{
	struct sock *sk = (struct sock *)msk;

	lock_sock(sk);
	spin_lock_bh(&msk->pm.lock);
	tcp_live_pm_send_ack(msk);
	spin_unlock_bh(&msk->pm.lock);
	release_sock(sk);
}

/* MP_PRIO as a netlink "set flags backup" sends it: the msk locked. */
static int tcp_live_pm_backup(struct mptcp_sock *msk,
			      struct mptcp_addr_info *local)
{
	struct sock *sk = (struct sock *)msk;
	int err;

	lock_sock(sk);
#ifdef TCP_OPT_HAVE_MPTCP_PM_OPS
	err = mptcp_pm_mp_prio_send_ack(msk, local, NULL, 1);
#else
	err = mptcp_pm_nl_mp_prio_send_ack(msk, local, NULL, 1);
#endif
	release_sock(sk);
	return err;
}

/* RM_ADDR as an endpoint's removal sends it: both locks held. */
static int tcp_live_pm_remove(struct mptcp_sock *msk, u8 id)
{
	struct mptcp_rm_list list = { .ids = { id }, .nr = 1 };
	struct sock *sk = (struct sock *)msk;
	int err;

	lock_sock(sk);
	spin_lock_bh(&msk->pm.lock);
	err = mptcp_pm_remove_addr(msk, &list);
	spin_unlock_bh(&msk->pm.lock);
	release_sock(sk);
	return err;
}

/* The listener's path manager signals, one at a time, each after the
 * last was on the wire (the client's echo, for ADD_ADDR).
 */
static int tcp_live_signal(struct tcp_live *live)
{
	struct mptcp_sock *msk = mptcp_sk(live->child->sk);
	struct mptcp_addr_info signal, local;
	const char *add_addr, *echo;
	int err;

	tcp_live_add_addr_rows(live, &add_addr, &echo);
	tcp_live_pm_addrs(live, &signal, &local);
	err = tcp_live_pm_announce(msk, &signal, true);
	if (!err && add_addr)
		err = tcp_live_wait_mptcp(live, true, LIVE_MPTCP_ADD_ADDR,
					  true);
	if (!err)
		err = tcp_live_pm_backup(msk, &local);
	if (!err)
		err = tcp_live_wait_mptcp(live, false, LIVE_MPTCP_MP_PRIO,
					  false);
	if (!err)
		err = tcp_live_pm_remove(msk, LIVE_REMOVE_ID);
	if (!err)
		err = tcp_live_wait_mptcp(live, false, LIVE_MPTCP_RM_ADDR,
					  false);
	return err;
}

/* Before the client's first data segment: its ADD_ADDR waits. */
static int tcp_live_announce_early(struct tcp_live *live)
{
	struct mptcp_addr_info signal, local;

	tcp_live_pm_addrs(live, &signal, &local);
	return tcp_live_pm_announce(mptcp_sk(live->client->sk), &signal,
				    false);
}

/* The client's ADD_ADDR goes out on a pure ACK; then the listener's
 * waits while it replies, and goes out on a pure ACK too.
 */
static int tcp_live_pending(struct tcp_live *live)
{
	struct mptcp_sock *server = mptcp_sk(live->child->sk);
	struct mptcp_addr_info signal, local;
	static const char reply[LIVE_PING_LEN];
	u8 got[LIVE_PING_LEN];
	int err;

	tcp_live_pm_flush(mptcp_sk(live->client->sk));
	err = tcp_live_wait_mptcp(live, false, LIVE_MPTCP_ADD_ADDR, true);
	tcp_live_pm_addrs(live, &signal, &local);
	if (!err)
		err = tcp_live_pm_announce(server, &signal, false);
	if (!err)
		err = tcp_live_send(live->child, reply, sizeof(reply));
	if (!err)
		err = tcp_live_recv(live->client, got, sizeof(got));
	if (!err)
		tcp_live_pm_flush(server);
	if (!err)
		err = tcp_live_wait_mptcp(live, true, LIVE_MPTCP_ADD_ADDR,
					  true);
	return err;
}

/* MP_PRIO as the path manager queues it on a subflow, the subflow's
 * lock held, without the ACK it sends next; then the client's second
 * data segment.
 */
static int tcp_live_prio_early(struct tcp_live *live)
{
	struct sock *ssk = tcp_live_tcp_sk(live->client);
	static const char ping[LIVE_PING_LEN];
	struct mptcp_subflow_context *subflow;
	u8 got[LIVE_PING_LEN];
	bool slow;
	int err;

	if (!ssk)
		return -ENOENT;
	subflow = mptcp_subflow_ctx(ssk);
	slow = lock_sock_fast(ssk);
	subflow->send_mp_prio = 1;
	subflow->request_bkup = 1;
	unlock_sock_fast(ssk, slow);
	err = tcp_live_send(live->client, ping, sizeof(ping));
	if (!err)
		err = tcp_live_recv(live->child, got, sizeof(got));
	return err;
}

/* The client's second ping, whose mapping the hook corrupts; the
 * listener's MP_FAIL answers it (RFC 8684 section 3.7).
 */
static int tcp_live_csum_fail(struct tcp_live *live)
{
	static const char ping[LIVE_PING_LEN];
	int err = tcp_live_send(live->client, ping, sizeof(ping));

	if (!err)
		err = tcp_live_wait_mptcp(live, false, LIVE_MPTCP_MP_FAIL,
					  false);
	return err;
}
#else
static int tcp_live_signal(struct tcp_live *live)
{
	return -EOPNOTSUPP;
}

static int tcp_live_csum_fail(struct tcp_live *live)
{
	return -EOPNOTSUPP;
}

static int tcp_live_announce_early(struct tcp_live *live)
{
	return -EOPNOTSUPP;
}

static int tcp_live_pending(struct tcp_live *live)
{
	return -EOPNOTSUPP;
}

static int tcp_live_prio_early(struct tcp_live *live)
{
	return -EOPNOTSUPP;
}
#endif

#if IS_ENABLED(CONFIG_MPTCP)
/* How many segments, either way, carry MPTCP @subtype (an ADD_ADDR: an
 * echo or not, as @echo says).
 */
static unsigned int tcp_live_count_mptcp(struct tcp_live *live, u8 subtype,
					 bool echo)
{
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;
	unsigned int n = 0;

	list_for_each_entry(p, &live->pkts, list)
		if (tcp_live_view(p, &v) &&
		    tcp_live_has_mptcp(v.th, v.optlen, subtype, echo))
			n++;
	return n;
}

/* The namespace's counters of the MPTCP options sent: each counts what
 * went on the wire, from either end (/proc/net/netstat).
 */
static void tcp_live_check_mptcp_mib(struct tcp_live *live)
{
	static const struct {
		const char *name;
		int field;
		u8 subtype;
		bool echo;
	} sent[] = {
		{ "MPFastcloseTx", MPTCP_MIB_MPFASTCLOSETX,
		  LIVE_MPTCP_MP_FASTCLOSE },
		{ "MPRstTx", MPTCP_MIB_MPRSTTX, LIVE_MPTCP_MP_TCPRST },
		{ "MPPrioTx", MPTCP_MIB_MPPRIOTX, LIVE_MPTCP_MP_PRIO },
		{ "MPFailTx", MPTCP_MIB_MPFAILTX, LIVE_MPTCP_MP_FAIL },
#ifdef TCP_OPT_HAVE_TCP_KEY	/* 6.7+: ADD_ADDR's and RM_ADDR's own */
		{ "AddAddrTx", MPTCP_MIB_ADDADDRTX, LIVE_MPTCP_ADD_ADDR },
		{ "EchoAddTx", MPTCP_MIB_ECHOADDTX, LIVE_MPTCP_ADD_ADDR,
		  true },
		{ "RmAddrTx", MPTCP_MIB_RMADDRTX, LIVE_MPTCP_RM_ADDR },
#endif
	};
	void __percpu *mib = live->net->mib.mptcp_statistics;
	int i;

	for (i = 0; i < ARRAY_SIZE(sent); i++)
		KUNIT_EXPECT_EQ_MSG(live->test,
				    mib ? snmp_fold_field(mib, sent[i].field) : 0,
				    tcp_live_count_mptcp(live, sent[i].subtype,
							 sent[i].echo),
				    "%s: %s against the segments that carry it",
				    tcp_live_family(live), sent[i].name);
}

/* An ADD_ADDR with no room on a pure ACK is dropped, neither sent nor
 * kept for later (mptcp_pm_add_addr_signal()), so nothing is echoed;
 * 6.7+ counts it.
 */
static void tcp_live_check_add_addr_dropped(struct tcp_live *live)
{
	KUNIT_EXPECT_NULL_MSG(live->test,
			      tcp_live_find_mptcp(live, false,
						  LIVE_MPTCP_ADD_ADDR, false),
			      "%s: an ADD_ADDR went out that has no room",
			      tcp_live_family(live));
	KUNIT_EXPECT_NULL_MSG(live->test,
			      tcp_live_find_mptcp(live, true,
						  LIVE_MPTCP_ADD_ADDR, true),
			      "%s: an echo of an ADD_ADDR never sent",
			      tcp_live_family(live));
#ifdef TCP_OPT_HAVE_TCP_KEY
	KUNIT_EXPECT_EQ_MSG(live->test,
			    snmp_fold_field(live->net->mib.mptcp_statistics,
					    MPTCP_MIB_ADDADDRTXDROP), 1,
			    "%s: AddAddrTxDrop", tcp_live_family(live));
#endif
}

/* RFC 8684 section 3.3.4: the receive window is relative to the Data
 * ACK. Linux keeps the right edge it announced (msk->rcv_wnd_sent, set
 * as the writer puts a Data ACK on the wire) so that it never shrinks.
 * Once the listener has sent a DSS (each carries a Data ACK), the edge
 * is after what it acknowledged, by at most the largest window RFC 7323
 * section 2.3 allows.
 */
static void tcp_live_check_mptcp_rwin(struct tcp_live *live)
{
	struct sock *sk = live->child->sk;
	const struct tcp_live_pkt *dss;
	u64 edge, acked;

	spin_lock_bh(&live->lock);
	dss = tcp_live_find_mptcp(live, false, LIVE_MPTCP_DSS, false);
	spin_unlock_bh(&live->lock);
	if (!dss)
		return;
	lock_sock(sk);
	edge = atomic64_read(&mptcp_sk(sk)->rcv_wnd_sent);
	acked = READ_ONCE(mptcp_sk(sk)->ack_seq);
	release_sock(sk);
	KUNIT_EXPECT_GT_MSG(live->test, edge - acked, 0ULL,
			    "%s: the listener's right edge is not after its Data ACK",
			    tcp_live_family(live));
	KUNIT_EXPECT_LE_MSG(live->test, edge - acked,
			    (u64)U16_MAX << TCP_MAX_WSCALE,
			    "%s: the listener's right edge is past any window",
			    tcp_live_family(live));
}

/* A client fallen back to TCP still records the window its subflow last
 * advertised, which mptcp_cleanup_rbuf() compares with before it sends a
 * window update; both read under the subflow's lock.
 */
static void tcp_live_check_fallback_rwin(struct tcp_live *live)
{
	struct mptcp_sock *msk = mptcp_sk(live->client->sk);
	struct sock *ssk = tcp_live_tcp_sk(live->client);
	bool fallback;
	int recorded;
	u32 rcv_wnd;

	if (!ssk)
		return;		/* and tcp_live_check_mss() has failed */
	lock_sock(ssk);
	fallback = __mptcp_check_fallback(msk);
	recorded = READ_ONCE(msk->old_wspace);
	rcv_wnd = tcp_sk(ssk)->rcv_wnd;
	release_sock(ssk);
	KUNIT_EXPECT_TRUE_MSG(live->test, fallback,
			      "%s: the client did not fall back to TCP",
			      tcp_live_family(live));
	KUNIT_EXPECT_EQ_MSG(live->test, recorded, (int)rcv_wnd,
			    "%s: the client records a window of %d, its subflow advertised %u",
			    tcp_live_family(live), recorded, rcv_wnd);
}
#else
static void tcp_live_check_mptcp_mib(struct tcp_live *live)
{
}

static void tcp_live_check_mptcp_rwin(struct tcp_live *live)
{
}

static void tcp_live_check_fallback_rwin(struct tcp_live *live)
{
}

static void tcp_live_check_add_addr_dropped(struct tcp_live *live)
{
}
#endif

/* The listener's reset: the receiver's key is the client's. */
static void tcp_live_check_fastclose(struct tcp_live *live)
{
	struct tcp_live_values server = {
		.ecn_counters = true, LIVE_AO_FROM_SERVER,
		.mptcp_key = { live->server_key, live->client_key },
	};

	tcp_live_check(live, "MP_FASTCLOSE",
		       tcp_live_find_mptcp(live, false, LIVE_MPTCP_MP_FASTCLOSE,
					   false),
		       live->c->out.fastclose, &server);
	tcp_live_check_mptcp_mib(live);
}

/* Each signal's segment against its row: the ADD_ADDR, HMAC by presence,
 * and its echo over the family of the connection.
 */
static void tcp_live_check_signals(struct tcp_live *live)
{
	const struct tcp_live_expect *out = &live->c->out;
	unsigned int fam = live->family == AF_INET6;
	struct tcp_live_values server = {
		.ecn_counters = true, LIVE_AO_FROM_SERVER,
	};
	struct tcp_live_values client = {
		.ecn_counters = true, LIVE_AO_FROM_CLIENT,
	};
	const struct tcp_live_values reply = {
		.ecn_counters = true, LIVE_AO_FROM_SERVER,
		.ssn = 1, .data_len = LIVE_PING_LEN,
	};
	const char *add_addr, *echo;

	tcp_live_add_addr_rows(live, &add_addr, &echo);
	if (add_addr) {
		tcp_live_check(live, "ADD_ADDR",
			       tcp_live_find_mptcp(live, false,
						   LIVE_MPTCP_ADD_ADDR, false),
			       add_addr, &server);
		tcp_live_check(live, "ADD_ADDR echo",
			       tcp_live_find_mptcp(live, true,
						   LIVE_MPTCP_ADD_ADDR, true),
			       echo, &client);
	} else {
		tcp_live_check_add_addr_dropped(live);
	}
	if (out->mp_prio)
		tcp_live_check(live, "MP_PRIO",
			       tcp_live_find_mptcp(live, false,
						   LIVE_MPTCP_MP_PRIO, false),
			       out->mp_prio, &server);
	if (out->rm_addr)
		tcp_live_check(live, "RM_ADDR",
			       tcp_live_find_mptcp(live, false,
						   LIVE_MPTCP_RM_ADDR, false),
			       out->rm_addr, &server);
	if (out->client_add_addr[fam])
		tcp_live_check(live, "client ADD_ADDR",
			       tcp_live_find_mptcp(live, true,
						   LIVE_MPTCP_ADD_ADDR, false),
			       out->client_add_addr[fam], &client);
	if (out->client_add_addr_echo[fam])
		tcp_live_check(live, "client ADD_ADDR echo",
			       tcp_live_find_mptcp(live, false,
						   LIVE_MPTCP_ADD_ADDR, true),
			       out->client_add_addr_echo[fam], &server);
	if (out->reply)
		tcp_live_check(live, "reply",
			       tcp_live_find(live, false, false, true, true, 0),
			       out->reply, &reply);
}

/* The client's queued MP_PRIO on its second data segment, whose mapping
 * starts one ping in.
 */
static void tcp_live_check_queued(struct tcp_live *live)
{
	const struct tcp_live_values second = {
		.ecn_counters = true, LIVE_AO_FROM_CLIENT,
		.ssn = 1 + LIVE_PING_LEN,
	};

	tcp_live_check(live, "MP_PRIO",
		       tcp_live_find_mptcp(live, true, LIVE_MPTCP_MP_PRIO,
					   false),
		       live->c->out.mp_prio, &second);
}

/* The DSN a DSS maps from, 4 or 8 octets as its flags say; 0 when the
 * option is too short to hold it.
 */
static u64 tcp_live_dss_dsn(const u8 *dss)
{
	unsigned int off = 4;
	u8 flags = dss[3];

	if (flags & LIVE_DSS_ACK)
		off += flags & LIVE_DSS_ACK64 ? 8 : 4;
	if (dss[1] < off + (flags & LIVE_DSS_DSN64 ? 8 : 4))
		return 0;
	return flags & LIVE_DSS_DSN64 ? get_unaligned_be64(dss + off) :
					get_unaligned_be32(dss + off);
}

/* The listener's MP_FAIL, beside the DSS of its ACK, must name the data
 * that failed: the DSN of the corrupted mapping (RFC 8684 section 3.7).
 */
static void tcp_live_check_mp_fail(struct tcp_live *live)
{
	struct tcp_live_values server = {
		.ecn_counters = true, LIVE_AO_FROM_SERVER,
	};
	const struct tcp_live_pkt *p;
	struct tcp_live_view v;
	const u8 *dss;

	list_for_each_entry(p, &live->pkts, list) {
		if (!tcp_live_view(p, &v) || !v.to_server || !v.payload)
			continue;
		dss = tcp_live_mptcp_opt(v.th, v.optlen, LIVE_MPTCP_DSS);
		if (tcp_live_dss_maps(dss)) {
			server.fail_seq = tcp_live_dss_dsn(dss);
			break;
		}
	}
	tcp_live_check(live, "MP_FAIL",
		       tcp_live_find_mptcp(live, false, LIVE_MPTCP_MP_FAIL,
					   false),
		       live->c->out.mp_fail, &server);
	tcp_live_check_mptcp_mib(live);
}

/* The client's DATA_FIN on a segment without data: subflow sequence
 * number 0 and a Data-Level Length of 1 (RFC 8684 section 3.3.3).
 */
static void tcp_live_check_data_fin(struct tcp_live *live)
{
	const struct tcp_live_values fin = {
		.ecn_counters = true, LIVE_AO_FROM_CLIENT, .data_len = 1,
	};

	tcp_live_check(live, "DATA_FIN", tcp_live_find_data_fin(live),
		       live->c->out.data_fin, &fin);
}

/* The client shuts down its sending side; the listener reads the end
 * of the stream once the DATA_FIN is in.
 */
static int tcp_live_shutdown(struct tcp_live *live)
{
	u8 byte;
	struct kvec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { };
	int ret;

	ret = kernel_sock_shutdown(live->client, SHUT_WR);
	if (!ret)
		ret = kernel_recvmsg(live->child, &msg, &iov, 1, 1, 0);
	return ret > 0 ? -EIO : ret;
}

#define LIVE_ACKED_WAIT_MS	3000

/* Until the ping is acknowledged: its retransmissions bring an ACK past
 * the drop_acks lost ones. Then the listener's AccECN fallback, read
 * under its socket lock.
 */
static int tcp_live_wait_acked(struct tcp_live *live)
{
	struct sock *sk = tcp_live_tcp_sk(live->client);
	struct sock *child = tcp_live_tcp_sk(live->child);
	unsigned int waited;

	if (!sk || !child)
		return -ENOENT;
	for (waited = 0; READ_ONCE(tcp_sk(sk)->snd_una) !=
			 READ_ONCE(tcp_sk(sk)->snd_nxt); waited += 10) {
		if (waited >= LIVE_ACKED_WAIT_MS)
			return -ETIMEDOUT;
		msleep(10);
	}
#ifdef TCP_OPT_HAVE_ACCECN
	lock_sock(child);
	live->opt_fail_send = tcp_accecn_opt_fail_send(tcp_sk(child));
	release_sock(child);
#endif
	return 0;
}

/* Closed with RST: nothing may linger in the hash tables. MPTCP closes
 * its subflows from a worker: give it a second.
 */
static void tcp_live_check_closed(struct tcp_live *live)
{
#ifdef CONFIG_PROC_FS
	struct proto *prots[] = { live->prot, live->sub_prot };
	unsigned int i, tries;
	int left;

	for (i = 0; i < ARRAY_SIZE(prots); i++) {
		if (!prots[i])
			continue;
		for (tries = 0; tries < 50; tries++) {
			left = sock_prot_inuse_get(live->net, prots[i]);
			if (!left || !live->c->in.mptcp)
				break;
			msleep(20);
		}
		KUNIT_EXPECT_EQ_MSG(live->test, left, 0,
				    "%s: %s sockets left after release",
				    tcp_live_family(live), prots[i]->name);
	}
#endif
}

static void tcp_live_run(struct kunit *test, const struct tcp_live_case *c,
			 int family)
{
	struct tcp_live *live = kunit_kzalloc(test, sizeof(*live), GFP_KERNEL);
	static const char ping[LIVE_PING_LEN];
	u8 pong[LIVE_PING_LEN];
	bool no_alg = false;
	u32 seg = 0;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, live);
	live->test = test;
	live->c = c;
	live->family = family;
	if (!tcp_live_epoch)
		tcp_live_epoch = ktime_get();
	spin_lock_init(&live->lock);
	INIT_LIST_HEAD(&live->pkts);
	tcp_live_set_addr(live);
	live->start_ns = tcp_clock_ns();

	err = tcp_live_netns(live);
	if (!err)
		err = tcp_live_listen(live);
	if (!err)
		err = tcp_live_connect(live, ping, sizeof(ping));
	if (!err)
		err = tcp_live_recv(live->child, pong, sizeof(pong));
	if (!err && c->in.fastopen) {
		/* Again, now that the client holds the cookie. */
		tcp_live_release(&live->child);
		tcp_live_release(&live->client);
		err = tcp_live_connect(live, ping, sizeof(ping));
		if (!err)
			err = tcp_live_recv(live->child, pong, sizeof(pong));
	}
	if (!err && c->in.drop_acks)
		err = tcp_live_wait_acked(live);
	if (!err) {
		if (!c->out.no_mss_check)
			tcp_live_check_mss(live);
		tcp_live_check_ends(live);
		if (c->in.tcp_listener || c->out.syn_fallback)
			tcp_live_check_fallback_rwin(live);
		else if (c->in.mptcp && !c->in.tcp_client)
			tcp_live_check_mptcp_rwin(live);
		if (c->in.syn_retrans_mtu)
			tcp_live_check_advmss(live);
		live->client_key = tcp_live_mptcp_key(live->client);
		live->server_key = tcp_live_mptcp_key(live->child);
	}
	if (!err && c->in.ts_set)
		err = tcp_live_set_ts(live, ping, pong);
	if (!err && c->in.mptcp_signal)
		err = tcp_live_signal(live);
	if (!err && c->in.mptcp_pending)
		err = tcp_live_pending(live);
	if (!err && c->in.mptcp_queued)
		err = tcp_live_prio_early(live);
	if (!err && c->in.mptcp_data_fin)
		err = tcp_live_shutdown(live);
	if (!err && c->in.mptcp_csum_fail)
		err = tcp_live_csum_fail(live);
	if (!err && c->in.holes)
		err = tcp_live_holes(live, &seg);
	/* TCP_AO_ADD_KEY: no such MAC algorithm in this kernel. */
	if (err == -ENOENT && c->in.ao)
		no_alg = true;
	else if (err)
		KUNIT_FAIL(test, "%s: connection failed: %d",
			   tcp_live_family(live), err);
	tcp_live_release(&live->child);
	tcp_live_release(&live->client);
	tcp_live_release(&live->listener);
	if (live->net)
		tcp_live_stop_capture(live);
	tcp_live_check_closed(live);

	KUNIT_EXPECT_FALSE_MSG(test, live->overflow,
			       "%s: more than %d packets or one over %d bytes",
			       tcp_live_family(live), LIVE_MAX_PKTS,
			       LIVE_MAX_LEN);
	if (!err) {
		const struct tcp_live_pkt *syn;

		tcp_live_check_handshake(live);
		if (c->in.syn_retrans_mtu)
			tcp_live_check_syn_mtu_drop(live);
		else if (c->out.syn_fallback)
			tcp_live_check_mpc_syn_drops(live);
		else if (c->in.drop_syns)
			tcp_live_check_syn_retrans(live);
		if (c->in.drop_synacks)
			tcp_live_check_synack_retrans(live);
		if (c->in.drop_acks)
			tcp_live_check_accecn_fallback(live);
		tcp_live_check_ts(live);
		syn = tcp_live_find(live, true, true, false, false, 0);
		if (c->in.holes)
			tcp_live_check_sacks(live,
					     tcp_live_isn(syn) + LIVE_PING_LEN,
					     seg);
		if (c->in.mptcp_signal || c->in.mptcp_pending)
			tcp_live_check_signals(live);
		if (c->in.mptcp_queued)
			tcp_live_check_queued(live);
		if (c->in.mptcp_data_fin)
			tcp_live_check_data_fin(live);
		if (c->in.mptcp_csum_fail)
			tcp_live_check_mp_fail(live);
		if (c->out.fastclose)
			tcp_live_check_fastclose(live);
	}
	tcp_live_print(live);
	tcp_live_teardown(live);
	if (no_alg)
		tcp_opt_skip(test, "needs " LIVE_AO_ALG " for TCP-AO");
}

static void tcp_live_test(struct kunit *test)
{
	const struct tcp_live_case *c = test->param_value;
	ktime_t start = ktime_get();

	if (c->in.md5 && !IS_ENABLED(CONFIG_TCP_MD5SIG))
		tcp_opt_skip(test, "needs CONFIG_TCP_MD5SIG");
	if (c->in.syncookies && !IS_ENABLED(CONFIG_SYN_COOKIES))
		tcp_opt_skip(test, "needs CONFIG_SYN_COOKIES");
#ifndef TCP_OPT_HAVE_AO
	if (c->in.ao)
		tcp_opt_skip(test, "needs TCP-AO: CONFIG_TCP_AO (6.7+)");
#endif
#ifndef TCP_OPT_HAVE_USEC_TS
	if (c->in.ts_set & 1)
		tcp_opt_skip(test, "needs microsecond TCP timestamps (6.7+)");
#endif
#ifndef TCP_OPT_HAVE_ACCECN
	if (c->in.accecn)
		tcp_opt_skip(test, "needs AccECN (RFC 9768), 6.18+");
#endif
	if (c->in.mptcp && !IS_ENABLED(CONFIG_MPTCP))
		tcp_opt_skip(test, "needs CONFIG_MPTCP");
#ifndef TCP_OPT_HAVE_MPTCP_MPC_DROP
	if (c->out.syn_fallback)
		tcp_opt_skip(test, "needs MPTCP's fallback after lost SYNs (6.12+)");
#endif
	/* Without TS the room is there, and the ADD_ADDR would be lost. */
	if (c->in.mptcp_pending && !c->in.ts && LIVE_ADD_ADDR_LOST_BESIDE_DSS)
		tcp_opt_skip(test, "needs commit bd34fa025726 (mptcp: add-addr: always drop other suboptions)");
	tcp_live_run(test, c, AF_INET);
	if (IS_ENABLED(CONFIG_IPV6) &&
	    (!c->in.mptcp || IS_ENABLED(CONFIG_MPTCP_IPV6)))
		tcp_live_run(test, c, AF_INET6);
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# live: %s over ipv4 and ipv6 in %lld us", c->name,
		  ktime_us_delta(ktime_get(), start));
}

static void tcp_live_case_desc(const struct tcp_live_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_live, tcp_live_cases, tcp_live_case_desc);

static struct kunit_case tcp_opt_live_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_live_test, tcp_live_gen_params),
	{}
};

static struct kunit_suite tcp_opt_live_suite = {
	.name = "tcp_opt_live",
	.test_cases = tcp_opt_live_test_cases,
};

kunit_test_suite(tcp_opt_live_suite);
