/* KUnit in 6.1 has none of KUNIT_EXPECT_MEMEQ() (6.2),
 * kunit_add_action_or_reset() (6.5), KUNIT_ARRAY_PARAM_DESC() (6.6) and
 * KUNIT_DEFINE_ACTION_WRAPPER() (6.8). Stand-ins built on what it has.
 */
#define KUNIT_EXPECT_MEMEQ(test, left, right, size)			\
	KUNIT_EXPECT_EQ(test, memcmp(left, right, size), 0)

/* Every table here names its rows with .name, the desc_member passed. */
#define KUNIT_ARRAY_PARAM_DESC(param, array, desc_member)		\
	static const void *param##_gen_params(const void *prev, char *desc) \
	{								\
		__auto_type rows = &(array);				\
		typeof(&(*rows)[0]) next = prev;				\
									\
		next = next ? next + 1 : *rows;				\
		if (next - *rows >= ARRAY_SIZE(*rows))			\
			return NULL;					\
		strscpy(desc, next->name, KUNIT_PARAM_DESC_SIZE);	\
		return next;						\
	}

#define KUNIT_DEFINE_ACTION_WRAPPER(wrapper, orig, arg_type)		\
	static void wrapper(void *in)					\
	{								\
		orig((arg_type)in);					\
	}

struct kunit_action_backport {
	void (*action)(void *arg);
	void *arg;
};

static int kunit_action_backport_init(struct kunit_resource *res, void *ctx)
{
	res->data = ctx;
	return 0;
}

static void kunit_action_backport_free(struct kunit_resource *res)
{
	struct kunit_action_backport *backport = res->data;

	backport->action(backport->arg);
	kfree(backport);
}

static int kunit_add_action_or_reset(struct kunit *test,
				     void (*action)(void *arg), void *arg)
{
	struct kunit_action_backport *backport;

	backport = kmalloc(sizeof(*backport), GFP_KERNEL);
	if (backport) {
		backport->action = action;
		backport->arg = arg;
		if (kunit_alloc_resource(test, kunit_action_backport_init,
					 kunit_action_backport_free, GFP_KERNEL,
					 backport))
			return 0;
		kfree(backport);
	}
	action(arg);
	return -ENOMEM;
}
