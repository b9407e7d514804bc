// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers the TCP option KUnit suites share: an option area decoded from
 * the RFC encodings alone, into packetdrill notation. It never calls the
 * kernel's own parser, so a writer bug cannot hide behind a matching
 * parser bug.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include "tcp_options_test.h"

__printf(3, 4)
void tcp_opt_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list args;

	if (used && used < len - 1)
		buf[used++] = ',';
	va_start(args, fmt);
	vscnprintf(buf + used, len - used, fmt, args);
	va_end(args);
}

/* The decoders of tcp_opt_decoders[], one per kind: struct
 * tcp_opt_decoder (tcp_options_test.h) says what each gets.
 */
static bool tcp_opt_decode_mss(const u8 *o, unsigned int th_off,
			       struct tcp_opt_seen *seen, char *text, size_t len)
{
	seen->mss = get_unaligned_be16(o + 2);
	tcp_opt_append(text, len, "mss %d", seen->mss);
	return true;
}

static bool tcp_opt_decode_wscale(const u8 *o, unsigned int th_off,
				  struct tcp_opt_seen *seen, char *text,
				  size_t len)
{
	seen->wscale = o[2];
	tcp_opt_append(text, len, "wscale %d", seen->wscale);
	return true;
}

static bool tcp_opt_decode_sackperm(const u8 *o, unsigned int th_off,
				    struct tcp_opt_seen *seen, char *text,
				    size_t len)
{
	seen->sackperm = true;
	tcp_opt_append(text, len, "sackOK");
	return true;
}

static bool tcp_opt_decode_ts(const u8 *o, unsigned int th_off,
			      struct tcp_opt_seen *seen, char *text, size_t len)
{
	seen->ts = true;
	seen->tsval = get_unaligned_be32(o + 2);
	seen->tsecr = get_unaligned_be32(o + 6);
	tcp_opt_append(text, len, "TS val %u ecr %u", seen->tsval,
		       seen->tsecr);
	return true;
}

static bool tcp_opt_decode_sack(const u8 *o, unsigned int th_off,
				struct tcp_opt_seen *seen, char *text,
				size_t len)
{
	int i;

	if ((o[1] - TCPOLEN_SACK_BASE) % TCPOLEN_SACK_PERBLOCK)
		return false;
	seen->sack_off = th_off;
	seen->sack_blocks = (o[1] - TCPOLEN_SACK_BASE) / TCPOLEN_SACK_PERBLOCK;
	tcp_opt_append(text, len, "sack");
	for (i = 0; i < seen->sack_blocks; i++)
		scnprintf(text + strlen(text), len - strlen(text), " %u:%u",
			  get_unaligned_be32(o + 2 + 8 * i),
			  get_unaligned_be32(o + 6 + 8 * i));
	return true;
}

static bool tcp_opt_decode_md5(const u8 *o, unsigned int th_off,
			       struct tcp_opt_seen *seen, char *text, size_t len)
{
	seen->md5 = true;
	seen->md5_off = th_off + 2;
	tcp_opt_append(text, len, "md5");
	return true;
}

/* RFC 5925 section 2.2: KeyID, RNextKeyID, then the MAC. */
static bool tcp_opt_decode_ao(const u8 *o, unsigned int th_off,
			      struct tcp_opt_seen *seen, char *text, size_t len)
{
	seen->ao_off = th_off;
	seen->ao_maclen = o[1] - 4;
	tcp_opt_append(text, len, "AO keyid %u rnext %u mac %u", o[2], o[3],
		       o[1] - 4);
	return true;
}

/* Fast Open's cookie, of kind 34 or of 254 with the magic (@kind names
 * which); packetdrill prints a cookie request as a bare FO.
 */
static bool tcp_opt_take_cookie(const u8 *cookie, int cookie_len,
				const char *kind, struct tcp_opt_seen *seen,
				char *text, size_t len)
{
	seen->fo_len = cookie_len;
	memcpy(seen->fo_cookie, cookie,
	       min_t(int, cookie_len, TCP_FASTOPEN_COOKIE_MAX));
	if (cookie_len)
		tcp_opt_append(text, len, "%s %*phN", kind, cookie_len,
			       cookie);
	else
		tcp_opt_append(text, len, "%s", kind);
	return true;
}

static bool tcp_opt_decode_fastopen(const u8 *o, unsigned int th_off,
				    struct tcp_opt_seen *seen, char *text,
				    size_t len)
{
	return tcp_opt_take_cookie(o + 2, o[1] - TCPOLEN_FASTOPEN_BASE, "FO",
				   seen, text, len);
}

/* RFC 6994: kind 254 is shared; Fast Open's magic 0xF989 claims it. */
static bool tcp_opt_decode_exp(const u8 *o, unsigned int th_off,
			       struct tcp_opt_seen *seen, char *text, size_t len)
{
	if (get_unaligned_be16(o + 2) != TCPOPT_FASTOPEN_MAGIC)
		return false;
	seen->fo_exp = true;
	return tcp_opt_take_cookie(o + 4, o[1] - TCPOLEN_EXP_FASTOPEN_BASE,
				   "FOEXP", seen, text, len);
}

/* An AccECN option carries 0 to 3 fields of 3 bytes after kind and
 * length, in the order its kind names (RFC 9768 section 3.2.3).
 */
static bool tcp_opt_decode_accecn(const u8 *o, unsigned int th_off,
				  struct tcp_opt_seen *seen, char *text,
				  size_t len)
{
	static const char * const order[2][TCP_OPT_ACCECN_FIELDS] = {
		{ "e0b", "ceb", "e1b" },	/* AccECN0 */
		{ "e1b", "ceb", "e0b" },	/* AccECN1 */
	};
	bool order1 = o[0] == TCP_OPT_KIND_ACCECN1;
	int i;

	if ((o[1] - 2) % 3)
		return false;
	seen->accecn_kind = o[0];
	seen->accecn_off = th_off;
	seen->accecn_fields = (o[1] - 2) / 3;
	tcp_opt_append(text, len, "AccECN%d", order1);
	for (i = 0; i < seen->accecn_fields; i++) {
		const u8 *f = o + 2 + 3 * i;

		seen->accecn[i] = (f[0] << 16) | (f[1] << 8) | f[2];
		scnprintf(text + strlen(text), len - strlen(text), " %s %u",
			  order[order1][i], seen->accecn[i]);
	}
	return true;
}

/* RFC 8684 section 3: kind 30, length, then a 4-bit subtype. The text
 * names the subtype and, for MP_CAPABLE and MP_JOIN, the fields a
 * reviewer checks against the handshake: version and flags, address ID.
 */
static bool tcp_opt_decode_mptcp(const u8 *o, unsigned int th_off,
				 struct tcp_opt_seen *seen, char *text,
				 size_t len)
{
	static const char * const names[] = {
		"mp_capable", "mp_join", "dss", "add_addr", "remove_addr",
		"mp_prio", "mp_fail", "mp_fastclose", "mp_tcprst",
	};
	u8 subtype = o[2] >> 4;

	if (seen->mptcp_off < 0)
		seen->mptcp_off = th_off;
	seen->mptcp_subtype = subtype;
	seen->mptcp_len = o[1];
	if (subtype >= ARRAY_SIZE(names)) {
		tcp_opt_append(text, len, "mptcp subtype %u len %u", subtype,
			       o[1]);
		return true;
	}
	tcp_opt_append(text, len, "%s len %u", names[subtype], o[1]);
	if (subtype == 0 && o[1] >= 4)
		scnprintf(text + strlen(text), len - strlen(text),
			  " v%u flags 0x%02x", o[2] & 0xf, o[3]);
	else if (subtype == 1 && o[1] >= 4)
		scnprintf(text + strlen(text), len - strlen(text),
			  "%s id %u", o[2] & 1 ? " backup" : "", o[3]);
	return true;
}

/* The one list of the kinds the suites decode, with the lengths each
 * admits: RFC 9293 (MSS), 7323 (WS, TS), 2018 (SACK), 2385 (MD5),
 * 5925 (TCP-AO), 7413 and 6994 (Fast Open), 9768 (AccECN), 8684 (MPTCP).
 * A kind not listed here makes the area malformed.
 */
static const struct tcp_opt_decoder tcp_opt_decoders[] = {
	{ TCPOPT_MSS, TCPOLEN_MSS, TCPOLEN_MSS, tcp_opt_decode_mss },
	{ TCPOPT_WINDOW, TCPOLEN_WINDOW, TCPOLEN_WINDOW,
	  tcp_opt_decode_wscale },
	{ TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM, TCPOLEN_SACK_PERM,
	  tcp_opt_decode_sackperm },
	{ TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP, TCPOLEN_TIMESTAMP,
	  tcp_opt_decode_ts },
	{ TCPOPT_SACK, TCPOLEN_SACK_BASE, MAX_TCP_OPTION_SPACE,
	  tcp_opt_decode_sack },
	{ TCPOPT_MD5SIG, TCPOLEN_MD5SIG, TCPOLEN_MD5SIG, tcp_opt_decode_md5 },
	{ TCP_OPT_KIND_AO, 4, MAX_TCP_OPTION_SPACE, tcp_opt_decode_ao },
	{ TCPOPT_FASTOPEN, TCPOLEN_FASTOPEN_BASE, MAX_TCP_OPTION_SPACE,
	  tcp_opt_decode_fastopen },
	{ TCPOPT_EXP, TCPOLEN_EXP_FASTOPEN_BASE, MAX_TCP_OPTION_SPACE,
	  tcp_opt_decode_exp },
	{ TCP_OPT_KIND_ACCECN0, 2, 2 + 3 * TCP_OPT_ACCECN_FIELDS,
	  tcp_opt_decode_accecn },
	{ TCP_OPT_KIND_ACCECN1, 2, 2 + 3 * TCP_OPT_ACCECN_FIELDS,
	  tcp_opt_decode_accecn },
	{ TCPOPT_MPTCP, 3, MAX_TCP_OPTION_SPACE, tcp_opt_decode_mptcp },
};

static const struct tcp_opt_decoder *tcp_opt_decoder(u8 kind)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(tcp_opt_decoders); i++)
		if (tcp_opt_decoders[i].kind == kind)
			return &tcp_opt_decoders[i];
	return NULL;
}

/* Decode an option area into @seen and packetdrill notation, from the
 * RFC encodings alone. Returns false if the area is malformed.
 */
bool tcp_opt_decode(const u8 *th, unsigned int size,
		    struct tcp_opt_seen *seen, char *text, size_t len)
{
	const u8 *opt = th + sizeof(struct tcphdr);
	unsigned int off = 0, kinds = 0;

	memset(seen, 0, sizeof(*seen));
	seen->mss = -1;
	seen->wscale = -1;
	seen->sack_off = -1;
	seen->md5_off = -1;
	seen->ao_off = -1;
	seen->fo_len = -1;
	seen->accecn_fields = -1;
	seen->accecn_off = -1;
	seen->mptcp_off = -1;
	text[0] = '\0';

	while (off < size) {
		const struct tcp_opt_decoder *d;
		u8 kind = opt[off], olen;

		if (kind == TCPOPT_EOL)
			return false;
		if (kind == TCPOPT_NOP) {
			tcp_opt_append(text, len, "nop");
			off++;
			continue;
		}
		if (off + 2 > size)
			return false;
		olen = opt[off + 1];
		if (olen < 2 || off + olen > size)
			return false;
		if (kinds == 0)
			seen->first_kind = kind;
		else if (kinds == 1)
			seen->second_kind = kind;
		kinds++;

		d = tcp_opt_decoder(kind);
		if (!d || olen < d->min_len || olen > d->max_len ||
		    !d->decode(opt + off, sizeof(struct tcphdr) + off, seen,
			       text, len))
			return false;
		off += olen;
	}
	return true;
}
