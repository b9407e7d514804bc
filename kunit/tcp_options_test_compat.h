/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernel trees the TCP option tests run on.
 *
 * The test source is shared between trees; everything that differs in the
 * KUnit API or in the TCP internals the tests poke at is hidden here.
 */
#ifndef _TCP_OPTIONS_TEST_COMPAT_H
#define _TCP_OPTIONS_TEST_COMPAT_H

#include <kunit/test.h>
#include <linux/string.h>

/*
 * Compare @len option bytes. KUNIT_EXPECT_MEMEQ() appeared in 6.2; older
 * trees get a memcmp() that prints both buffers the same way.
 */
#ifdef KUNIT_EXPECT_MEMEQ_MSG
#define tcp_opt_expect_bytes(test, got, want, len, name)		\
	KUNIT_EXPECT_MEMEQ_MSG(test, got, want, len, "case %s", name)
#else
static void tcp_opt_expect_bytes(struct kunit *test, const u8 *got,
				 const u8 *want, unsigned int len,
				 const char *name)
{
	if (memcmp(got, want, len))
		KUNIT_FAIL(test,
			   "case %s: option bytes differ\n\tgot:  %*ph\n\twant: %*ph",
			   name, len, got, len, want);
}
#endif

#endif /* _TCP_OPTIONS_TEST_COMPAT_H */
