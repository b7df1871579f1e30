// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for kmemleak: a scan finds no reference to an object nothing
 * points to any more, whichever allocator it came from, so that kmemleak
 * reports it once it is old enough.
 *
 * Included at the end of mm/kmemleak.c, so that a case can look at the
 * object kmemleak keeps for an address.  The cases scan as kmemleak's own
 * thread does and leave kmemleak's settings alone: a leak that their scans
 * find elsewhere is reported and printed as any scan would.  Their own
 * object is kept too young to be reported (it is the test's, and freed
 * afterwards); whether a scan found a reference to it is its colour.
 */
#include <kunit/test.h>
#include <linux/kfence.h>

/* How long KFENCE gets to sample one of our allocations (about 200 samples). */
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
			/* Not zeroes: the first scan must see contents that changed. */
			memset(p, 0x5a, 64);
			leak->hidden = ~(unsigned long)p;
			break;
		}
		kfree(p);
		if (time_after(jiffies, end)) {
			leak->err = -ETIMEDOUT;
			break;
		}
		schedule_timeout_idle(1);
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

static bool kmemleak_kunit_white(struct kmemleak_object *object)
{
	unsigned long flags;
	bool white;

	raw_spin_lock_irqsave(&object->lock, flags);
	white = color_white(object);
	raw_spin_unlock_irqrestore(&object->lock, flags);
	return white;
}

/*
 * Leak one object and scan twice.  The first scan finds its contents
 * changed (as for any new object) and keeps it grey; the second finds them
 * unchanged, so the object stays white unless a reference to it was found.
 * White at that point is what kmemleak reports once the object is old
 * enough; ours never is.  scan_mutex is held across both scans, so no scan
 * of kmemleak's own thread comes between them.
 */
static void kmemleak_kunit_expect_unreferenced(struct kunit *test, bool kfence)
{
	struct kmemleak_kunit_leak leak = { .kfence = kfence };
	struct kmemleak_object *object;
	bool locked, seen = false, white = false;
	struct task_struct *task;
	unsigned long flags;
	int err;

	if (!kmemleak_enabled)
		kunit_skip(test, "kmemleak is off");
	/* A leak of the case's own is blamed on the case. */
	kunit_info(test, KMEMLEAK_KUNIT_CASE, current->pid, jiffies);
	init_completion(&leak.done);
	task = kthread_run(kmemleak_kunit_leak_thread, &leak, "kmemleak_leak");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	/* kthread_stop() before it ran would keep the thread from running at all */
	wait_for_completion_state(&leak.done, TASK_IDLE);
	kthread_stop(task);
	if (leak.err == -ETIMEDOUT)
		kunit_skip(test, "KFENCE sampled none of our allocations in %d s",
			   KMEMLEAK_KUNIT_KFENCE_WAIT / HZ);
	KUNIT_ASSERT_EQ(test, leak.err, 0);
	kmemleak_kunit_clear_cached_stacks();

	locked = !mutex_lock_killable(&scan_mutex);
	err = locked ? 0 : -EINTR;
	object = locked ? find_and_get_object(~leak.hidden, 0) : NULL;
	if (object) {
		raw_spin_lock_irqsave(&object->lock, flags);
		/* Never old enough to be reported: the leak is the test's own. */
		object->jiffies = jiffies + MAX_JIFFY_OFFSET / 2;
		raw_spin_unlock_irqrestore(&object->lock, flags);
		err = kmemleak_kunit_scan();
		seen = !kmemleak_kunit_white(object);
		if (!err)
			err = kmemleak_kunit_scan();
		white = kmemleak_kunit_white(object);
		put_object(object);
	}
	if (locked)
		mutex_unlock(&scan_mutex);
	kfree((void *)~leak.hidden);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_NOT_NULL_MSG(test, object, "kmemleak does not know the object");
	KUNIT_EXPECT_TRUE_MSG(test, seen, "the first scan did not look at the object");
	KUNIT_EXPECT_TRUE_MSG(test, white,
			      "kmemleak found a reference to a %s object nothing points to",
			      kfence ? "KFENCE" : "slab");
}

static void kmemleak_reports_leaked_slab_object(struct kunit *test)
{
	kmemleak_kunit_expect_unreferenced(test, false);
}

static void kmemleak_reports_leaked_kfence_object(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_KFENCE))
		kunit_skip(test, "CONFIG_KFENCE is off");
	kmemleak_kunit_expect_unreferenced(test, true);
}

static struct kunit_case kmemleak_kunit_cases[] = {
	KUNIT_CASE_SLOW(kmemleak_reports_leaked_slab_object),
	KUNIT_CASE_SLOW(kmemleak_reports_leaked_kfence_object),
	{}
};

static struct kunit_suite kmemleak_kunit_suite = {
	.name = "kmemleak",
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = kmemleak_kunit_cases,
};

kunit_test_suite(kmemleak_kunit_suite);
