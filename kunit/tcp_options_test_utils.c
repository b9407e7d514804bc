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

/* packetdrill prints a cookie request as a bare FO. */
static void tcp_opt_append_cookie(char *buf, size_t len, const char *kind,
				  const struct tcp_opt_seen *seen)
{
	if (seen->fo_len)
		tcp_opt_append(buf, len, "%s %*phN", kind, seen->fo_len,
			       seen->fo_cookie);
	else
		tcp_opt_append(buf, len, "%s", kind);
}

/* An AccECN option carries 0 to 3 fields of 3 bytes after kind and
 * length, in the order its kind names (RFC 9768 section 3.2.3).
 */
static bool tcp_opt_decode_accecn(const u8 *opt, unsigned int off,
				  struct tcp_opt_seen *seen, char *text,
				  size_t len)
{
	static const char * const order[2][TCP_OPT_ACCECN_FIELDS] = {
		{ "e0b", "ceb", "e1b" },	/* AccECN0 */
		{ "e1b", "ceb", "e0b" },	/* AccECN1 */
	};
	u8 kind = opt[off], olen = opt[off + 1];
	bool order1 = kind == TCP_OPT_KIND_ACCECN1;
	int i;

	if ((olen - 2) % 3 || olen > 2 + 3 * TCP_OPT_ACCECN_FIELDS)
		return false;
	seen->accecn_kind = kind;
	seen->accecn_off = sizeof(struct tcphdr) + off;
	seen->accecn_fields = (olen - 2) / 3;
	tcp_opt_append(text, len, "AccECN%d", order1);
	for (i = 0; i < seen->accecn_fields; i++) {
		const u8 *f = opt + off + 2 + 3 * i;

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
static void tcp_opt_decode_mptcp(const u8 *o, struct tcp_opt_seen *seen,
				 char *text, size_t len)
{
	static const char * const names[] = {
		"mp_capable", "mp_join", "dss", "add_addr", "remove_addr",
		"mp_prio", "mp_fail", "mp_fastclose", "mp_tcprst",
	};
	u8 subtype = o[2] >> 4;

	seen->mptcp_subtype = subtype;
	seen->mptcp_len = o[1];
	if (subtype >= ARRAY_SIZE(names)) {
		tcp_opt_append(text, len, "mptcp subtype %u len %u", subtype,
			       o[1]);
		return;
	}
	tcp_opt_append(text, len, "%s len %u", names[subtype], o[1]);
	if (subtype == 0 && o[1] >= 4)
		scnprintf(text + strlen(text), len - strlen(text),
			  " v%u flags 0x%02x", o[2] & 0xf, o[3]);
	else if (subtype == 1 && o[1] >= 4)
		scnprintf(text + strlen(text), len - strlen(text),
			  "%s id %u", o[2] & 1 ? " backup" : "", o[3]);
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
		u8 kind = opt[off], olen;
		const u8 *p = opt + off + 2;
		int i;

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

		switch (kind) {
		case TCPOPT_MSS:
			if (olen != TCPOLEN_MSS)
				return false;
			seen->mss = get_unaligned_be16(p);
			tcp_opt_append(text, len, "mss %d", seen->mss);
			break;
		case TCPOPT_WINDOW:
			if (olen != TCPOLEN_WINDOW)
				return false;
			seen->wscale = p[0];
			tcp_opt_append(text, len, "wscale %d", seen->wscale);
			break;
		case TCPOPT_SACK_PERM:
			if (olen != TCPOLEN_SACK_PERM)
				return false;
			seen->sackperm = true;
			tcp_opt_append(text, len, "sackOK");
			break;
		case TCPOPT_TIMESTAMP:
			if (olen != TCPOLEN_TIMESTAMP)
				return false;
			seen->ts = true;
			seen->tsval = get_unaligned_be32(p);
			seen->tsecr = get_unaligned_be32(p + 4);
			tcp_opt_append(text, len, "TS val %u ecr %u",
				       seen->tsval, seen->tsecr);
			break;
		case TCPOPT_SACK:
			if ((olen - TCPOLEN_SACK_BASE) % TCPOLEN_SACK_PERBLOCK)
				return false;
			seen->sack_off = sizeof(struct tcphdr) + off;
			seen->sack_blocks = (olen - TCPOLEN_SACK_BASE) /
					    TCPOLEN_SACK_PERBLOCK;
			tcp_opt_append(text, len, "sack");
			for (i = 0; i < seen->sack_blocks; i++)
				scnprintf(text + strlen(text),
					  len - strlen(text), " %u:%u",
					  get_unaligned_be32(p + 8 * i),
					  get_unaligned_be32(p + 8 * i + 4));
			break;
		case TCPOPT_MD5SIG:
			if (olen != TCPOLEN_MD5SIG)
				return false;
			seen->md5 = true;
			seen->md5_off = sizeof(struct tcphdr) + off + 2;
			tcp_opt_append(text, len, "md5");
			break;
		case TCP_OPT_KIND_AO:
			if (olen < 4)
				return false;
			seen->ao_off = sizeof(struct tcphdr) + off;
			seen->ao_maclen = olen - 4;
			tcp_opt_append(text, len, "AO keyid %u rnext %u mac %u",
				       p[0], p[1], olen - 4);
			break;
		case TCPOPT_FASTOPEN:
			seen->fo_len = olen - TCPOLEN_FASTOPEN_BASE;
			memcpy(seen->fo_cookie, p,
			       min_t(int, seen->fo_len,
				     TCP_FASTOPEN_COOKIE_MAX));
			tcp_opt_append_cookie(text, len, "FO", seen);
			break;
		case TCPOPT_EXP:
			if (olen < TCPOLEN_EXP_FASTOPEN_BASE ||
			    get_unaligned_be16(p) != TCPOPT_FASTOPEN_MAGIC)
				return false;
			seen->fo_exp = true;
			seen->fo_len = olen - TCPOLEN_EXP_FASTOPEN_BASE;
			memcpy(seen->fo_cookie, p + 2,
			       min_t(int, seen->fo_len,
				     TCP_FASTOPEN_COOKIE_MAX));
			tcp_opt_append_cookie(text, len, "FOEXP", seen);
			break;
		case TCP_OPT_KIND_ACCECN0:
		case TCP_OPT_KIND_ACCECN1:
			if (!tcp_opt_decode_accecn(opt, off, seen, text, len))
				return false;
			break;
		case TCPOPT_MPTCP:
			/* RFC 8684 section 3: one kind, a subtype in each. */
			if (olen < 3)
				return false;
			if (seen->mptcp_off < 0)
				seen->mptcp_off = sizeof(struct tcphdr) + off;
			tcp_opt_decode_mptcp(opt + off, seen, text, len);
			break;
		default:
			return false;
		}
		off += olen;
	}
	return true;
}
