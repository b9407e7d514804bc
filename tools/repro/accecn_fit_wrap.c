// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_options_fit_accecn() of Linux 7.3.4 (net/ipv4/tcp_output.c), its
 * loop copied as is into user space, with num_accecn_fields a 7-bit
 * field as in struct tcp_out_options. With no SACK block and fewer than
 * 4 bytes left, required == 0 walks the field below 0: it wraps to 127,
 * and the option is flagged as sent with 127 fields (docs/bugs.md).
 *
 *   gcc -o /tmp/fit tools/repro/accecn_fit_wrap.c && /tmp/fit
 */
#include <stdio.h>
#define ALIGN(x,a) (((x)+(a)-1)&~((a)-1))
#define ALIGN_DOWN(x,a) ((x)&~((a)-1))
struct o { unsigned num_accecn_fields:7, use_synack:1; unsigned char num_sack_blocks; int options; };
int fit(struct o *opts, int required, int remaining) {
	int size = 11, sack_blocks_reduce = 0, max_combine_saving, rem = remaining, align_size;
	max_combine_saving = opts->num_sack_blocks > 0 ? 2 : 0;
	opts->num_accecn_fields = 3;
	while (opts->num_accecn_fields >= required) {
		if ((size & 0x3) > max_combine_saving) align_size = ALIGN(size, 4);
		else align_size = ALIGN_DOWN(size, 4);
		if (rem >= align_size) { size = align_size; break; }
		else if (opts->num_accecn_fields == required && opts->num_sack_blocks > 2 && required > 0) {
			opts->num_sack_blocks--; sack_blocks_reduce++; rem += 8; opts->num_accecn_fields = 3; size = 11; continue; }
		opts->num_accecn_fields--; size -= 3;
	}
	if (sack_blocks_reduce > 0) { if (opts->num_accecn_fields >= required) size -= sack_blocks_reduce * 8; else opts->num_sack_blocks += sack_blocks_reduce; }
	if (opts->num_accecn_fields < required) return 0;
	opts->options |= 1; return size;
}
int main(void) { for (int rem = 0; rem < 4; rem++) { struct o o = {0}; int s = fit(&o, 0, rem); printf("rem %d: size %d fields %u option %d\n", rem, s, o.num_accecn_fields, o.options); } }
