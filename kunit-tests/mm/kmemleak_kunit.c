// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for kmemleak: an object nothing points to any more is
 * reported, whichever allocator it came from.
 *
 * Included at the end of mm/kmemleak.c, so that a case can look up the
 * object kmemleak keeps for an address and ask whether a scan reported it.
 * Each case takes six seconds or more: kmemleak reports nothing younger than
 * MSECS_MIN_AGE.
 */
#include <kunit/test.h>
#include <linux/kfence.h>

/* How long KFENCE gets to sample one of our allocations. */
#define KMEMLEAK_KUNIT_KFENCE_WAIT	(20 * HZ)

struct kmemleak_kunit_leak {
	bool kfence;		/* keep only an object KFENCE allocated */
	int err;
	struct completion done;
	/*
	 * The leaked object's address, complemented: no scan of this
	 * structure or of the case's stack finds a pointer to the object.
	 */
	unsigned long hidden;
};

/*
 * The leak happens in a thread of its own: the pointer is on no stack that
 * is still in use when kmemleak scans.
 */
static int kmemleak_kunit_leak_thread(void *data)
{
	struct kmemleak_kunit_leak *leak = data;
	unsigned long end = jiffies + KMEMLEAK_KUNIT_KFENCE_WAIT;
	void *p;

	for (;;) {
		p = kmalloc(64, GFP_KERNEL);
		if (!p) {
			leak->err = -ENOMEM;
			break;
		}
		if (!leak->kfence || is_kfence_address(p)) {
			leak->hidden = ~(unsigned long)p;
			break;
		}
		kfree(p);
		if (time_after(jiffies, end)) {
			leak->err = -ETIMEDOUT;
			break;
		}
		schedule_timeout_uninterruptible(1);
	}
	complete(&leak->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ);
	return 0;
}

static int kmemleak_kunit_idle_thread(void *unused)
{
	return 0;
}

/*
 * kernel/fork.c keeps the stacks of dead threads for the next ones, and
 * kmemleak scans them like any vmalloc area: the dead frames of the leaking
 * thread may still hold the pointer.  A new thread takes a cached stack and
 * clears it, so have enough of them alive at once to take every cached
 * stack, once the leaking thread's stack is back in the cache (an RCU
 * callback puts it there).
 */
static void kmemleak_kunit_clear_cached_stacks(void)
{
	struct task_struct *threads[8];
	int i, n = 0;

	rcu_barrier();
	for (i = 0; i < ARRAY_SIZE(threads); i++) {
		threads[n] = kthread_create(kmemleak_kunit_idle_thread, NULL, "kmemleak_idle");
		if (!IS_ERR(threads[n]))
			n++;
	}
	while (n--)
		kthread_stop(threads[n]);
}

/*
 * Leak one object, let it age, scan twice (the first scan records its
 * checksum) and say whether kmemleak reported it.  The report is not
 * printed: the object is freed afterwards, and the leak is this test's.
 */
static void kmemleak_kunit_expect_reported(struct kunit *test, bool kfence)
{
	struct kmemleak_kunit_leak leak = { .kfence = kfence };
	struct kmemleak_object *object;
	struct task_struct *task;
	bool verbose, reported = false;
	unsigned long flags;
	int err;

	if (!kmemleak_enabled)
		kunit_skip(test, "kmemleak is off");
	init_completion(&leak.done);
	task = kthread_run(kmemleak_kunit_leak_thread, &leak, "kmemleak_leak");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* kthread_stop() before it ran would keep the thread from running at all */
	wait_for_completion(&leak.done);
	kthread_stop(task);
	if (leak.err == -ETIMEDOUT)
		kunit_skip(test, "KFENCE sampled none of our allocations in %d s",
			   KMEMLEAK_KUNIT_KFENCE_WAIT / HZ);
	KUNIT_ASSERT_EQ(test, leak.err, 0);

	schedule_timeout_uninterruptible(msecs_to_jiffies(MSECS_MIN_AGE + 500));
	kmemleak_kunit_clear_cached_stacks();
	verbose = kmemleak_verbose;
	kmemleak_verbose = false;
	err = kmemleak_scan_for_kunit();
	if (!err)
		err = kmemleak_scan_for_kunit();
	kmemleak_verbose = verbose;

	object = find_and_get_object(~leak.hidden, 0);
	if (object) {
		raw_spin_lock_irqsave(&object->lock, flags);
		reported = object->flags & OBJECT_REPORTED;
		raw_spin_unlock_irqrestore(&object->lock, flags);
		put_object(object);
	}
	kfree((void *)~leak.hidden);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_NOT_NULL_MSG(test, object, "kmemleak does not know the object");
	KUNIT_EXPECT_TRUE_MSG(test, reported,
			      "kmemleak did not report a %s object nothing points to",
			      kfence ? "KFENCE" : "slab");
}

static void kmemleak_reports_leaked_slab_object(struct kunit *test)
{
	kmemleak_kunit_expect_reported(test, false);
}

static void kmemleak_reports_leaked_kfence_object(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_KFENCE))
		kunit_skip(test, "CONFIG_KFENCE is off");
	kmemleak_kunit_expect_reported(test, true);
}

static struct kunit_case kmemleak_kunit_cases[] = {
	KUNIT_CASE_SLOW(kmemleak_reports_leaked_slab_object),
	KUNIT_CASE_SLOW(kmemleak_reports_leaked_kfence_object),
	{}
};

static struct kunit_suite kmemleak_kunit_suite = {
	.name = "kmemleak",
	.test_cases = kmemleak_kunit_cases,
};

kunit_test_suite(kmemleak_kunit_suite);
