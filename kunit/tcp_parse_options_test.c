// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for tcp_parse_options(), the receive side's option parser:
 * the option area is where malformed bytes from the network arrive.
 *
 * Each row feeds one hostile option area and states what RFC 9293 section
 * 3.2 and Linux's documented behaviour make of it: parsing stops at EOL,
 * at an option whose length is below 2 and at one that runs past the
 * header; a known option with the wrong length is skipped, not taken;
 * SYN-only options are ignored on an established segment; the last of
 * duplicated options wins. A differential case then mutates every byte of
 * a valid 20-byte SYN layout and compares the parser with an independent
 * reading of the same rules.
 *
 * The segment ends where a vmalloc'd page ends, so that a read past it
 * hits the guard page after the page and faults in every build, KASAN or
 * not; the rows with data after the header show an over-read that stays
 * inside the segment.
 *
 * It needs only the exported tcp_parse_options(), so it builds as a
 * module too.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/vmalloc.h>
#include <net/tcp.h>

#include "tcp_options_test_compat.h"

#define TCP_PARSE_KIND_AO	29	/* RFC 5925 */

#define TCP_PARSE_SYN_LEN	20	/* the valid SYN the mutations start from */

/* What tcp_parse_options() reported, in the terms a row states. */
struct tcp_parse_result {
	u16 mss;		/* mss_clamp taken, 0: none */
	bool ws;		/* wscale_ok */
	u8 wscale;		/* snd_wscale, when ws */
	bool sackperm;		/* SACK_PERM taken (SYN) */
	bool ts;		/* saw_tstamp */
	u32 tsval, tsecr;
	u8 sack_off;		/* SACK option offset from th, 0: none */
	bool fo;		/* the Fast Open cookie was set */
	s8 fo_len;		/* its length, -1: invalid */
	bool fo_exp;		/* from the experimental kind 254 */
	bool unknown;		/* saw_unknown */
	u8 accecn_off;		/* AccECN option offset from th, 0: none */
	u8 num_sacks;		/* SACK blocks still queued to send */
};

/* What the socket held before the segment, where a row needs it. */
struct tcp_parse_state {
	bool ts_off;		/* established without TS negotiated */
	u16 mss_clamp;		/* the MSS assumed until one is taken */
	u8 num_sacks;		/* SACK blocks queued to send */
};

struct tcp_parse_case {
	const char *name;
	bool estab;		/* an established segment, else a SYN */
	u8 len;			/* option area length, a multiple of 4 */
	u8 opts[MAX_TCP_OPTION_SPACE];
	/* The segment's data right after the header, in the same buffer. */
	u8 payload_len;
	u8 payload[8];
	struct tcp_parse_state before;
	struct tcp_parse_result want;
};

static const struct tcp_parse_state tcp_parse_fresh;

static const struct tcp_parse_case tcp_parse_cases[] = {
	{
		/* <mss 1460,sackOK,TS val 1 ecr 0,nop,wscale 7> */
		.name = "valid_syn_20_bytes",
		.len = 20, .opts = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
				     0, 0, 0, 0, 1, 3, 3, 7 },
		.want = { .mss = 1460, .sackperm = 1, .ts = 1, .tsval = 1,
			  .ws = 1, .wscale = 7 },
	},
	{
		/* <mss len 0,nop,nop,TS val 1 ecr 0,nop,nop>: RFC 9293 3.2,
		 * a length covers kind and length, so below 2 it is garbage.
		 */
		.name = "len_0_stops_parsing",
		.len = 16, .opts = { 2, 0, 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
				     1, 1 },
	},
	{
		/* <wscale len 1,nop,nop,TS val 1 ecr 0,nop,nop> */
		.name = "len_1_stops_parsing",
		.len = 16, .opts = { 3, 1, 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
				     1, 1 },
	},
	{
		/* <TS val 1 ecr 0,nop,nop,mss len 8>: "don't parse partial
		 * options"; the TS before it stands.
		 */
		.name = "len_past_header_stops_parsing",
		.len = 16, .opts = { 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1,
				     2, 8, 0x05, 0xb4 },
		.want = { .ts = 1, .tsval = 1 },
	},
	{
		/* <nop,nop,TS len 10> in a 4-byte option area, then data
		 * that reads as a TS val: the option runs past the header, so
		 * nothing is taken, although the buffer goes on (data follow
		 * every header). An over-read shows without KASAN here.
		 */
		.name = "partial_ts_then_data",
		.estab = 1,
		.len = 4, .opts = { 1, 1, 8, 10 },
		.payload_len = 8, .payload = { 0, 0, 0, 9, 0, 0, 0, 7 },
	},
	{
		/* <nop,nop,mss len 4> ending 2 bytes into the data */
		.name = "partial_mss_then_data",
		.len = 4, .opts = { 1, 1, 2, 4 },
		.payload_len = 4, .payload = { 0x05, 0xb4, 0, 0 },
	},
	{
		/* <nop,nop,SACK len 10>, the block's edges in the data */
		.name = "partial_sack_then_data",
		.estab = 1,
		.len = 4, .opts = { 1, 1, 5, 10 },
		.payload_len = 8, .payload = { 0, 0, 0x10, 0, 0, 0, 0x20, 0 },
	},
	{
		/* <wscale 7,nop,nop,nop,nop,mss kind only>: no length byte
		 * left to read, the "length < 2" check. Without it the parser
		 * reads one byte past the header: a KASAN report in the
		 * sanitizer build, nothing visible in the others.
		 */
		.name = "kind_in_last_byte_truncated",
		.len = 8, .opts = { 3, 3, 7, 1, 1, 1, 1, 2 },
		.want = { .ws = 1, .wscale = 7 },
	},
	{
		/* <nop,nop,nop,TS kind only> on an established segment */
		.name = "ts_kind_in_last_byte_truncated",
		.estab = 1,
		.len = 4, .opts = { 1, 1, 1, 8 },
	},
	{
		.name = "forty_nops",
		.len = 40, .opts = { [0 ... 39] = TCPOPT_NOP },
	},
	{
		/* <wscale 7,eol> then an MSS, TS and SACK_PERM: RFC 9293 3.2,
		 * EOL ends the list, whatever follows.
		 */
		.name = "eol_then_garbage",
		.len = 20, .opts = { 3, 3, 7, 0, 2, 4, 0x05, 0xb4,
				     8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 4, 2 },
		.want = { .ws = 1, .wscale = 7 },
	},
	{
		/* <mss 1460,TS len 8,nop,nop>: RFC 7323 2.2, TS is 10 bytes. */
		.name = "ts_len_8_skipped",
		.len = 16, .opts = { 2, 4, 0x05, 0xb4, 8, 8, 0, 0, 0, 1, 0, 0,
				     1, 1 },
		.want = { .mss = 1460 },
	},
	{
		/* <nop,nop,TS len 12> on an established segment */
		.name = "ts_len_12_skipped",
		.estab = 1,
		.len = 16, .opts = { 1, 1, 8, 12, 0, 0, 0, 3, 0, 0, 0, 2,
				     0, 0, 0, 0 },
	},
	{
		/* <nop,nop,TS val 3 ecr 2,nop,sack len 11>: RFC 2018 3, a
		 * SACK option is 2 + 8n bytes.
		 */
		.name = "sack_len_11_skipped",
		.estab = 1,
		.len = 24, .opts = { 1, 1, 8, 10, 0, 0, 0, 3, 0, 0, 0, 2, 1,
				     5, 11, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0 },
		.want = { .ts = 1, .tsval = 3, .tsecr = 2 },
	},
	{
		/* <nop,nop,sack len 2>: no block at all */
		.name = "sack_len_2_no_block_skipped",
		.estab = 1,
		.len = 4, .opts = { 1, 1, 5, 2 },
	},
	{
		/* <nop,nop,sack 4096:8192>: its offset goes to the skb */
		.name = "sack_one_block",
		.estab = 1,
		.len = 12, .opts = { 1, 1, 5, 10, 0, 0, 0x10, 0, 0, 0, 0x20, 0 },
		.want = { .sack_off = sizeof(struct tcphdr) + 2 },
	},
	{
		/* <mss len 3,nop,TS val 1 ecr 0,nop,nop> */
		.name = "mss_len_3_skipped",
		.len = 16, .opts = { 2, 3, 0x05, 1, 8, 10, 0, 0, 0, 1, 0, 0,
				     0, 0, 1, 1 },
		.want = { .ts = 1, .tsval = 1 },
	},
	{
		/* <wscale len 4,mss 1460> */
		.name = "ws_len_4_skipped",
		.len = 8, .opts = { 3, 4, 7, 0, 2, 4, 0x05, 0xb4 },
		.want = { .mss = 1460 },
	},
	{
		/* <sackOK len 3,mss 1460,nop> */
		.name = "sackperm_len_3_skipped",
		.len = 8, .opts = { 4, 3, 0, 2, 4, 0x05, 0xb4, 1 },
		.want = { .mss = 1460 },
	},
	{
		/* <nop,wscale 15>: RFC 7323 2.3, above 14 is used as 14. */
		.name = "ws_15_clamped_to_14",
		.len = 4, .opts = { 1, 3, 3, 15 },
		.want = { .ws = 1, .wscale = 14 },
	},
	{
		/* <mss 0>: it would stall the connection, so not taken. */
		.name = "mss_0_ignored",
		.len = 4, .opts = { 2, 4, 0, 0 },
	},
	{
		/* <mss 0> on a SYN to a listener, which assumed 536 before
		 * (RFC 9293 3.7.1, tcp_request_sock_ipv4_ops.mss_clamp): an
		 * MSS of 0 is ignored and the default stands.
		 */
		.name = "mss_0_keeps_default_536",
		.len = 4, .opts = { 2, 4, 0, 0 },
		.before = { .mss_clamp = TCP_MSS_DEFAULT },
		.want = { .mss = TCP_MSS_DEFAULT },
	},
	{
		/* <nop,nop,TS val 1 ecr 2> on a connection whose handshake
		 * did not negotiate TS: RFC 7323 3.2, "the TSopt MUST be
		 * ignored and the packet processed normally".
		 */
		.name = "ts_not_negotiated_ignored",
		.estab = 1,
		.len = 12, .opts = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 },
		.before = { .ts_off = 1 },
	},
	{
		/* <nop,nop,sackOK> on a SYN while SACK blocks from before
		 * are queued: a connection that negotiates SACK starts with
		 * none to report (RFC 2018 4: blocks describe data this
		 * connection received; tcp_sack_reset()).
		 */
		.name = "sackperm_clears_queued_sacks",
		.len = 4, .opts = { 1, 1, 4, 2 },
		.before = { .num_sacks = 2 },
		.want = { .sackperm = 1 },
	},
	{
		/* <FO len 7,nop>: RFC 7413 4.1.1, the cookie is an even
		 * number of bytes; an odd one is not read at all.
		 */
		.name = "fastopen_odd_length_ignored",
		.len = 8, .opts = { 34, 7, 1, 2, 3, 4, 5, 1 },
	},
	{
		/* <FO 01020304,nop,nop> */
		.name = "fastopen_cookie_4",
		.len = 8, .opts = { 34, 6, 1, 2, 3, 4, 1, 1 },
		.want = { .fo = 1, .fo_len = 4 },
	},
	{
		/* <FO 0102>: even but shorter than 4 bytes, invalid: -1. */
		.name = "fastopen_cookie_2_invalid",
		.len = 4, .opts = { 34, 4, 1, 2 },
		.want = { .fo = 1, .fo_len = -1 },
	},
	{
		/* <FO,nop,nop>: no cookie is a cookie request. */
		.name = "fastopen_request",
		.len = 4, .opts = { 34, 2, 1, 1 },
		.want = { .fo = 1, .fo_len = 0 },
	},
	{
		/* <FOEXP 0102030405060708>: kind 254, magic 0xf989 */
		.name = "fastopen_exp_cookie_8",
		.len = 12, .opts = { 254, 12, 0xf9, 0x89, 1, 2, 3, 4, 5, 6, 7, 8 },
		.want = { .fo = 1, .fo_len = 8, .fo_exp = 1 },
	},
	{
		/* Fast Open is valid only in SYN or SYN-ACK segments. */
		.name = "fastopen_on_established_ignored",
		.estab = 1,
		.len = 8, .opts = { 34, 6, 1, 2, 3, 4, 1, 1 },
	},
	{
		/* <exp 1234>: kind 254 with another magic is not Fast Open. */
		.name = "exp_unknown_magic",
		.len = 4, .opts = { 254, 4, 0x12, 0x34 },
		.want = { .unknown = 1 },
	},
	{
		/* <TS val 1 ecr 0,nop,nop,TS val 5 ecr 4,nop,nop> */
		.name = "duplicate_ts_last_wins",
		.len = 24, .opts = { 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1,
				     8, 10, 0, 0, 0, 5, 0, 0, 0, 4, 1, 1 },
		.want = { .ts = 1, .tsval = 5, .tsecr = 4 },
	},
	{
		/* <mss 1460,mss 536> */
		.name = "duplicate_mss_last_wins",
		.len = 8, .opts = { 2, 4, 0x05, 0xb4, 2, 4, 0x02, 0x18 },
		.want = { .mss = 536 },
	},
	{
		/* <kind 253 len 4,mss 1460>: skipped by its length. */
		.name = "unknown_kind_skipped",
		.len = 8, .opts = { 253, 4, 0xaa, 0xbb, 2, 4, 0x05, 0xb4 },
		.want = { .mss = 1460, .unknown = 1 },
	},
	{
		/* <mss 1460,nop,wscale 7,nop,nop,sackOK> on an established
		 * segment: these mean nothing after the handshake.
		 */
		.name = "syn_options_on_established_ignored",
		.estab = 1,
		.len = 12, .opts = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 1, 1, 4, 2 },
	},
};

static void tcp_parse_case_desc(const struct tcp_parse_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tcp_parse, tcp_parse_cases, tcp_parse_case_desc);

/* A header whose segment ends where a vmalloc'd page ends, and a zeroed
 * sk_buff pointing at it. An skb from alloc_skb() would put
 * skb_shared_info right after the data and hide an over-read; the parser
 * only needs tcp_hdr() and the control block.
 */
struct tcp_parse_input {
	struct sk_buff *skb;
	struct tcphdr *th;
	unsigned int len;
	const u8 *payload;
	unsigned int payload_len;
};

/* vmalloc() leaves an unmapped guard page after each area: the first
 * byte past the page faults.
 */
static int tcp_parse_page_init(struct kunit_resource *res, void *context)
{
	res->data = vmalloc(PAGE_SIZE);
	return res->data ? 0 : -ENOMEM;
}

static void tcp_parse_page_free(struct kunit_resource *res)
{
	vfree(res->data);
}

static void tcp_parse_input_init(struct kunit *test, struct tcp_parse_input *p,
				 unsigned int len, const u8 *payload,
				 unsigned int payload_len)
{
	unsigned int segment = sizeof(*p->th) + len + payload_len;
	u8 *page;

	p->skb = kunit_kzalloc(test, sizeof(*p->skb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->skb);
	page = kunit_alloc_resource(test, tcp_parse_page_init,
				    tcp_parse_page_free, GFP_KERNEL, NULL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	p->th = (struct tcphdr *)(page + PAGE_SIZE - segment);
	p->len = len;
	p->payload = payload;
	p->payload_len = payload_len;
	p->skb->head = (unsigned char *)p->th;
	p->skb->data = p->skb->head;
	skb_reset_transport_header(p->skb);
}

static void tcp_parse_run(struct tcp_parse_input *p, const u8 *opts,
			  bool estab, const struct tcp_parse_state *before,
			  struct tcp_parse_result *got)
{
	struct tcp_fastopen_cookie foc = { .len = S8_MAX };
	struct tcp_options_received rx = {};

	memset(p->th, 0, sizeof(*p->th));
	p->th->doff = (sizeof(*p->th) + p->len) / 4;
	p->th->syn = !estab;
	p->th->ack = estab;
	memcpy(p->th + 1, opts, p->len);
	memcpy((u8 *)(p->th + 1) + p->len, p->payload, p->payload_len);
	memset(p->skb->cb, 0, sizeof(p->skb->cb));
	if (estab) {
		/* What the handshake agreed: SACK, and TS unless off. */
		rx.tstamp_ok = !before->ts_off;
		rx.sack_ok = TCP_SACK_SEEN;
	}
	rx.mss_clamp = before->mss_clamp;
	rx.num_sacks = before->num_sacks;
	/* What the socket kept from the segment before: tcp_parse_options()
	 * reports this segment alone, so it must clear both itself.
	 */
	rx.saw_tstamp = 1;
	rx.saw_unknown = 1;

	tcp_parse_options(&init_net, p->skb, &rx, estab, &foc);

	*got = (struct tcp_parse_result) {
		.mss = rx.mss_clamp,
		.ws = rx.wscale_ok,
		.wscale = rx.wscale_ok ? rx.snd_wscale : 0,
		.sackperm = !estab && rx.sack_ok,
		.ts = rx.saw_tstamp,
		.tsval = rx.saw_tstamp ? rx.rcv_tsval : 0,
		.tsecr = rx.saw_tstamp ? rx.rcv_tsecr : 0,
		.sack_off = TCP_SKB_CB(p->skb)->sacked,
		.fo = foc.len != S8_MAX,
		.fo_len = foc.len != S8_MAX ? foc.len : 0,
		.fo_exp = foc.len != S8_MAX && foc.exp,
		.unknown = rx.saw_unknown,
#ifdef TCP_OPT_HAVE_ACCECN
		.accecn_off = rx.accecn,
#endif
		.num_sacks = rx.num_sacks,
	};
}

static bool tcp_parse_equal(const struct tcp_parse_result *a,
			    const struct tcp_parse_result *b)
{
	return a->mss == b->mss && a->ws == b->ws && a->wscale == b->wscale &&
	       a->sackperm == b->sackperm && a->ts == b->ts &&
	       a->tsval == b->tsval && a->tsecr == b->tsecr &&
	       a->sack_off == b->sack_off && a->fo == b->fo &&
	       a->fo_len == b->fo_len && a->fo_exp == b->fo_exp &&
	       a->unknown == b->unknown && a->accecn_off == b->accecn_off &&
	       a->num_sacks == b->num_sacks;
}

#define TCP_PARSE_TEXT_LEN	96

/* A reading in packetdrill's words: "mss 1460,wscale 7,TS val 1 ecr 0". */
static void tcp_parse_describe(const struct tcp_parse_result *r, char *buf)
{
	size_t n = 0;

	buf[0] = '\0';
	if (r->mss)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",mss %u",
			       r->mss);
	if (r->ws)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",wscale %u",
			       r->wscale);
	if (r->sackperm)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",sackOK");
	if (r->ts)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n,
			       ",TS val %u ecr %u", r->tsval, r->tsecr);
	if (r->sack_off)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",sack at %u",
			       r->sack_off);
	if (r->fo)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",%s len %d",
			       r->fo_exp ? "FOEXP" : "FO", r->fo_len);
	if (r->accecn_off)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n,
			       ",AccECN at %u", r->accecn_off);
	if (r->unknown)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n, ",unknown");
	if (r->num_sacks)
		n += scnprintf(buf + n, TCP_PARSE_TEXT_LEN - n,
			       ",%u sacks queued", r->num_sacks);
	if (!n)
		strscpy(buf, ",nothing", TCP_PARSE_TEXT_LEN);
}

/* Returns false, with both readings and the input in the log, on a mismatch. */
static bool tcp_parse_expect(struct kunit *test, const char *name,
			     const u8 *opts, unsigned int len,
			     const struct tcp_parse_result *got,
			     const struct tcp_parse_result *want)
{
	char got_text[TCP_PARSE_TEXT_LEN], want_text[TCP_PARSE_TEXT_LEN];

	if (tcp_parse_equal(got, want))
		return true;
	tcp_parse_describe(got, got_text);
	tcp_parse_describe(want, want_text);
	/* Skip the leading comma of each reading. */
	KUNIT_FAIL(test, "%s: options %*ph\n\tgot:  <%s>\n\twant: <%s>",
		   name, len, opts, got_text + 1, want_text + 1);
	return false;
}

static void tcp_parse_test(struct kunit *test)
{
	const struct tcp_parse_case *c = test->param_value;
	char text[TCP_PARSE_TEXT_LEN];
	struct tcp_parse_result got;
	struct tcp_parse_input p;

	KUNIT_ASSERT_EQ_MSG(test, c->len % 4, 0,
			    "case %s: option area is not 32-bit aligned",
			    c->name);
	tcp_parse_input_init(test, &p, c->len, c->payload, c->payload_len);
	tcp_parse_run(&p, c->opts, c->estab, &c->before, &got);
	tcp_parse_describe(&got, text);
	kunit_log(KERN_INFO, test, KUNIT_SUBTEST_INDENT KUNIT_SUBTEST_INDENT
		  "# parsed: %*phN as <%s>", c->len, c->opts, text + 1);
	tcp_parse_expect(test, c->name, c->opts, c->len, &got, &c->want);
}

/* One option as RFC 9293 3.2 and the option's own RFC define it. */
static void tcp_parse_ref_option(u8 kind, u8 olen, const u8 *val,
				 unsigned int off, bool estab,
				 struct tcp_parse_result *r)
{
	bool syn = !estab;
	u16 mss;

	if (kind == TCPOPT_MSS && olen == TCPOLEN_MSS) {
		mss = get_unaligned_be16(val);
		if (syn && mss)
			r->mss = mss;
	} else if (kind == TCPOPT_WINDOW && olen == TCPOLEN_WINDOW) {
		if (syn) {
			r->ws = true;
			r->wscale = min_t(u8, val[0], TCP_MAX_WSCALE);
		}
	} else if (kind == TCPOPT_SACK_PERM && olen == TCPOLEN_SACK_PERM) {
		r->sackperm |= syn;
	} else if (kind == TCPOPT_TIMESTAMP && olen == TCPOLEN_TIMESTAMP) {
		r->ts = true;
		r->tsval = get_unaligned_be32(val);
		r->tsecr = get_unaligned_be32(val + 4);
	} else if (kind == TCPOPT_SACK) {
		/* Permitted by the handshake, or earlier in this SYN. */
		if ((estab || r->sackperm) && olen >= 10 && (olen - 2) % 8 == 0)
			r->sack_off = sizeof(struct tcphdr) + off;
	} else if (kind == TCPOPT_FASTOPEN ||
		   (kind == TCPOPT_EXP && olen >= 4 &&
		    get_unaligned_be16(val) == TCPOPT_FASTOPEN_MAGIC)) {
		int cookie = olen - (kind == TCPOPT_EXP ? 4 : 2);

		if (syn && cookie % 2 == 0) {
			r->fo = true;
			r->fo_exp = kind == TCPOPT_EXP;
			r->fo_len = cookie == 0 || (cookie >= 4 && cookie <= 16) ?
				    cookie : -1;
		}
#ifdef TCP_OPT_HAVE_ACCECN
	} else if (kind == TCPOPT_ACCECN0 || kind == TCPOPT_ACCECN1) {
		/* RFC 9768 3.2.3: kinds 172 and 174, on any segment; the
		 * receiver reads the fields later, from this offset.
		 */
		r->accecn_off = sizeof(struct tcphdr) + off;
#endif
	} else if (kind == TCPOPT_MSS || kind == TCPOPT_WINDOW ||
		   kind == TCPOPT_SACK_PERM || kind == TCPOPT_TIMESTAMP ||
		   (kind == TCPOPT_MD5SIG && IS_ENABLED(CONFIG_TCP_MD5SIG)) ||
		   (kind == TCP_PARSE_KIND_AO && IS_ENABLED(CONFIG_TCP_AO))) {
		/* Known, and skipped: a wrong length, or checked elsewhere. */
	} else {
		r->unknown = true;
	}
}

/* Walk the TLVs; stop at EOL, a length < 2, or one past the end. */
static void tcp_parse_ref(const u8 *opts, unsigned int len, bool estab,
			  struct tcp_parse_result *r)
{
	unsigned int off = 0;

	memset(r, 0, sizeof(*r));
	while (off < len && opts[off] != TCPOPT_EOL) {
		if (opts[off] == TCPOPT_NOP) {
			off++;
			continue;
		}
		if (len - off < 2 || opts[off + 1] < 2 ||
		    opts[off + 1] > len - off)
			return;
		tcp_parse_ref_option(opts[off], opts[off + 1], opts + off + 2,
				     off, estab, r);
		off += opts[off + 1];
	}
}

/* Parse one mutation both ways; false if they disagree. */
static bool tcp_parse_mutant(struct kunit *test, struct tcp_parse_input *p,
			     bool estab, unsigned int pos, u8 value, bool report)
{
	struct tcp_parse_result got, want;
	u8 opts[TCP_PARSE_SYN_LEN];
	char name[48];

	/* The first row, valid_syn_20_bytes, is the layout to mutate. */
	memcpy(opts, tcp_parse_cases[0].opts, sizeof(opts));
	opts[pos] = value;
	tcp_parse_run(p, opts, estab, &tcp_parse_fresh, &got);
	tcp_parse_ref(opts, sizeof(opts), estab, &want);
	if (!report)
		return tcp_parse_equal(&got, &want);
	snprintf(name, sizeof(name), "%s byte %u = 0x%02x",
		 estab ? "established" : "syn", pos, value);
	return tcp_parse_expect(test, name, opts, sizeof(opts), &got, &want);
}

/* Every single-byte mutation of a valid SYN layout, parsed as a SYN and
 * as an established segment: 2 x 20 x 256 option areas, each compared with
 * the reference reading above. Only the first mismatches are printed.
 */
static void tcp_parse_mutation_test(struct kunit *test)
{
	unsigned int i, failed = 0, runs = 0;
	struct tcp_parse_input p;

	tcp_parse_input_init(test, &p, TCP_PARSE_SYN_LEN, NULL, 0);
	for (i = 0; i < 2 * TCP_PARSE_SYN_LEN * 256; i++, runs++) {
		bool estab = i / (TCP_PARSE_SYN_LEN * 256);
		unsigned int pos = i / 256 % TCP_PARSE_SYN_LEN;

		if (!tcp_parse_mutant(test, &p, estab, pos, i % 256,
				      failed < 8))
			failed++;
	}
	KUNIT_EXPECT_EQ_MSG(test, failed, 0,
			    "%u of %u mutated option areas parsed unlike the reference",
			    failed, runs);
	kunit_info(test, "%u mutated option areas parsed", runs);
}

static struct kunit_case tcp_parse_test_cases[] = {
	KUNIT_CASE_PARAM(tcp_parse_test, tcp_parse_gen_params),
	KUNIT_CASE(tcp_parse_mutation_test),
	{}
};

static struct kunit_suite tcp_parse_suite = {
	.name = "tcp_opt_parse",
	.test_cases = tcp_parse_test_cases,
};

kunit_test_suite(tcp_parse_suite);

MODULE_DESCRIPTION("KUnit tests for the TCP option parser");
MODULE_LICENSE("GPL");
