// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests that a page under writeback to a device that needs stable
 * pages is not modified: a writer waits until the writeback has ended.
 *
 * Commit a3ad0a9da863 ("block: Remove forced page bouncing under IO")
 * removed the copy the block layer made of such pages, because every
 * writer was by then expected to wait for writeback instead.  In 6.12 the
 * chain is: the queue has BLK_FEAT_STABLE_WRITES; a filesystem mounted on
 * it gets SB_I_STABLE_WRITES (setup_bdev_super()); its inodes' mappings
 * get AS_STABLE_WRITES (inode_init_always()); write_begin waits in
 * folio_wait_stable().  Break any link and a page is changed while the
 * device reads it, with nothing left to copy it.
 *
 * The writeback is started by hand, so the test decides when it ends.
 */
#include <kunit/fs.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/mount.h>
#include <linux/pagemap.h>

#include "stable_writes_kunit_image.h"

struct stable_writes_kunit {
	struct file *file;
	struct folio *folio;		/* under writeback while set */
	struct task_struct *writer;
	struct completion written;	/* complete_all(): stays done */
	ssize_t ret;
};

static const char stable_writes_kunit_data[] = "original";

/* A writer that would change the page the device is reading. */
static int stable_writes_kunit_writer(void *data)
{
	struct stable_writes_kunit *sw = data;
	loff_t pos = 0;

	sw->ret = kernel_write(sw->file, "changed", 7, &pos);
	complete_all(&sw->written);
	return 0;
}

static void stable_writes_kunit_end_writeback(struct stable_writes_kunit *sw)
{
	if (sw->folio) {
		folio_end_writeback(sw->folio);
		folio_put(sw->folio);
		sw->folio = NULL;
	}
}

/* Whatever a case left: the writeback ends, the writer is done with the file. */
static void stable_writes_kunit_cleanup(void *data)
{
	struct stable_writes_kunit *sw = data;

	stable_writes_kunit_end_writeback(sw);
	if (sw->writer)
		wait_for_completion(&sw->written);
}

KUNIT_DEFINE_ACTION_WRAPPER(stable_writes_kunit_fput, __fput_sync, struct file *);

/*
 * Mount an ext2 image on the RAM disk, with or without stable writes, write
 * the first page of /data to disk, and start its writeback again by hand.
 */
static struct stable_writes_kunit *stable_writes_kunit_setup(struct kunit *test, bool stable)
{
	struct stable_writes_kunit *sw = kunit_kzalloc(test, sizeof(*sw), GFP_KERNEL);
	struct vfsmount *mnt;
	loff_t pos = 0;

	KUNIT_ASSERT_NOT_NULL(test, sw);
	init_completion(&sw->written);
	fs_kunit_set_stable_writes(test, stable);
	mnt = fs_kunit_mount(test, "ext2", &stable_writes_kunit_image, 0, "");
	sw->file = file_open_root_mnt(mnt, "data", O_RDWR | O_CREAT, 0644);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw->file);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stable_writes_kunit_fput,
							sw->file), 0);
	KUNIT_ASSERT_EQ(test, kernel_write(sw->file, stable_writes_kunit_data,
					   sizeof(stable_writes_kunit_data), &pos),
			(ssize_t)sizeof(stable_writes_kunit_data));
	KUNIT_ASSERT_EQ(test, filemap_write_and_wait(sw->file->f_mapping), 0);

	sw->folio = filemap_lock_folio(sw->file->f_mapping, 0);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, sw->folio);
	folio_start_writeback(sw->folio);
	folio_unlock(sw->folio);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, stable_writes_kunit_cleanup, sw),
			0);
	return sw;
}

/*
 * Whether the writer went to sleep on the folio under writeback (true) or
 * finished its write (false), whichever it does first.  A task that waits
 * for a folio's writeback sets PG_waiters before it sleeps, and nothing else
 * waits on this folio, so the answer does not depend on how fast the machine
 * is: there is no time-out to miss.
 */
static bool stable_writes_kunit_writer_waits(struct stable_writes_kunit *sw)
{
	for (;;) {
		if (completion_done(&sw->written))
			return false;
		if (folio_test_waiters(sw->folio))
			return true;
		usleep_range(500, 1000);
	}
}

static void stable_writes_kunit_start_writer(struct kunit *test, struct stable_writes_kunit *sw)
{
	struct task_struct *writer;

	writer = kthread_run(stable_writes_kunit_writer, sw, "stable_writes_kunit");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, writer);
	sw->writer = writer;
}

/* The mapping write_begin consults knows that the device needs stable pages. */
static void stable_device_marks_mapping_stable(struct kunit *test)
{
	struct stable_writes_kunit *sw = stable_writes_kunit_setup(test, true);

	KUNIT_EXPECT_TRUE(test, mapping_stable_writes(sw->file->f_mapping));
}

/*
 * The writer sleeps until the writeback has ended, the page keeps its
 * contents for as long as the device reads it, and the write goes through
 * once the writeback has ended.
 */
static void write_waits_for_writeback_on_stable_device(struct kunit *test)
{
	struct stable_writes_kunit *sw = stable_writes_kunit_setup(test, true);
	char *page;

	stable_writes_kunit_start_writer(test, sw);
	KUNIT_EXPECT_TRUE_MSG(test, stable_writes_kunit_writer_waits(sw),
			      "the write did not wait for writeback");
	page = kmap_local_folio(sw->folio, 0);
	KUNIT_EXPECT_MEMEQ_MSG(test, page, stable_writes_kunit_data,
			       sizeof(stable_writes_kunit_data),
			       "the page changed under writeback");
	kunmap_local(page);
	stable_writes_kunit_end_writeback(sw);
	wait_for_completion(&sw->written);
	KUNIT_EXPECT_EQ(test, sw->ret, 7);
}

/* Where the device does not need stable pages, nothing waits for writeback. */
static void write_does_not_wait_without_stable_writes(struct kunit *test)
{
	struct stable_writes_kunit *sw = stable_writes_kunit_setup(test, false);

	KUNIT_EXPECT_FALSE(test, mapping_stable_writes(sw->file->f_mapping));
	stable_writes_kunit_start_writer(test, sw);
	KUNIT_EXPECT_FALSE_MSG(test, stable_writes_kunit_writer_waits(sw),
			       "the write waited for writeback");
	/* A writer that waited is let go: the cleanup waits for it. */
	stable_writes_kunit_end_writeback(sw);
	wait_for_completion(&sw->written);
	KUNIT_EXPECT_EQ(test, sw->ret, 7);
}

static struct kunit_case stable_writes_kunit_cases[] = {
	KUNIT_CASE(stable_device_marks_mapping_stable),
	KUNIT_CASE(write_waits_for_writeback_on_stable_device),
	KUNIT_CASE(write_does_not_wait_without_stable_writes),
	{}
};

static struct kunit_suite stable_writes_kunit_suite = {
	.name = "block_stable_writes",
	.suite_exit = kmemleak_kunit_suite_exit,
	.test_cases = stable_writes_kunit_cases,
};

kunit_test_suite(stable_writes_kunit_suite);

MODULE_DESCRIPTION("KUnit tests that pages under writeback to a stable-writes device stay stable");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
