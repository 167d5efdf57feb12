/* test_base.c - the mechanisms of src/base/ that the rest of the library
 * shares: the read and write loops (fed interruptions and short counts
 * through their test seam). */
#include "testutil.h"

#include "base/platform.h"

#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

/* ---- the read and write loops ----------------------------------------------- */

/* A file of its own to the fake calls: `data`, handed out at most `step`
 * bytes a call, every other call interrupted first (EINTR). */
static struct fake_io {
	const char *data;
	size_t len, pos, step;
	unsigned calls, interrupts;
	int fail_at;          /* the call that fails with EACCES (0: none) */
	bool zero_writes;     /* write() takes nothing */
	char written[64];
	size_t n_written;
} F;

static void fake_reset(const char *data, size_t step)
{
	memset(&F, 0, sizeof F);
	F.data = data;
	F.len = data ? strlen(data) : 0;
	F.step = step;
}

/* The call's fate before any bytes move: -1 with errno, or 0 to go on. */
static int fake_fate(void)
{
	F.calls++;
	if (F.fail_at && (int)F.calls == F.fail_at) {
		errno = EACCES;
		return -1;
	}
	if (F.calls % 2 == 1) {
		F.interrupts++;
		errno = EINTR;
		return -1;
	}
	return 0;
}

static ssize_t fake_pread(int fd, void *buf, size_t len, off_t off)
{
	(void)fd;
	if (fake_fate() < 0)
		return -1;
	size_t at = (size_t)off, n = at < F.len ? F.len - at : 0;
	n = n < len ? n : len;
	n = n < F.step ? n : F.step;
	memcpy(buf, F.data + at, n);
	return (ssize_t)n;
}

static ssize_t fake_read(int fd, void *buf, size_t len)
{
	ssize_t n = fake_pread(fd, buf, len, (off_t)F.pos);
	if (n > 0)
		F.pos += (size_t)n;
	return n;
}

static ssize_t fake_write(int fd, const void *buf, size_t len)
{
	(void)fd;
	if (fake_fate() < 0)
		return -1;
	if (F.zero_writes)
		return 0;
	size_t n = len < F.step ? len : F.step;
	if (n > sizeof F.written - F.n_written)
		n = sizeof F.written - F.n_written;
	memcpy(F.written + F.n_written, buf, n);
	F.n_written += n;
	return (ssize_t)n;
}

static const oa_io_calls fake_calls = { fake_read, fake_write, fake_pread };

static void test_read_some(void)
{
	fake_reset("abcdef", 4);
	char buf[16] = "";
	CHECK(oa_read_some(3, buf, sizeof buf) == 4); /* one read: what it gave, after the interruption */
	CHECK(memcmp(buf, "abcd", 4) == 0);
	CHECK(F.interrupts == 1 && F.calls == 2);
	CHECK(oa_read_some(3, buf, sizeof buf) == 2);
	CHECK(oa_read_some(3, buf, sizeof buf) == 0); /* the end */
	fake_reset("abc", 4);
	F.fail_at = 2;
	errno = 0;
	CHECK(oa_read_some(3, buf, sizeof buf) == -1 && errno == EACCES);
}

static void test_read_full(void)
{
	/* one byte a call, every other call interrupted: still the whole of it */
	fake_reset("the quick brown fox", 1);
	char buf[32] = "";
	CHECK(oa_read_full(3, buf, 9) == 9);
	CHECK(memcmp(buf, "the quick", 9) == 0);
	CHECK(F.interrupts == 9);
	/* asked for more than there is: what there is, the end said by a short count */
	memset(buf, 0, sizeof buf);
	CHECK(oa_read_full(3, buf, sizeof buf) == 10);
	CHECK_STR(buf, " brown fox");
	CHECK(oa_read_full(3, buf, sizeof buf) == 0);
	CHECK(oa_read_full(3, buf, 0) == 0);
	/* an error half-way is an error, not a short count */
	fake_reset("0123456789", 2);
	F.fail_at = 6;
	errno = 0;
	CHECK(oa_read_full(3, buf, 10) == -1 && errno == EACCES);
}

static void test_pread_full(void)
{
	fake_reset("0123456789", 3);
	char buf[16] = "";
	CHECK(oa_pread_full(3, buf, 5, 4) == 5); /* 3 + 2 bytes, each call at its own offset */
	CHECK(memcmp(buf, "45678", 5) == 0);
	CHECK(F.pos == 0); /* the file offset is not moved */
	CHECK(oa_pread_full(3, buf, 8, 6) == 4);
	CHECK(memcmp(buf, "6789", 4) == 0);
	CHECK(oa_pread_full(3, buf, 4, 10) == 0);
}

static void test_write_all(void)
{
	fake_reset(NULL, 3);
	const char *text = "write all of this";
	CHECK(oa_write_all(3, text, strlen(text)) == 0);
	CHECK(F.n_written == strlen(text) && memcmp(F.written, text, strlen(text)) == 0);
	CHECK(F.interrupts == (strlen(text) + 2) / 3);
	CHECK(oa_write_all(3, text, 0) == 0);
	/* a write that takes nothing ends the loop: EIO, never a spin */
	fake_reset(NULL, 3);
	F.zero_writes = true;
	errno = 0;
	CHECK(oa_write_all(3, text, 4) == -1 && errno == EIO);
	CHECK(F.calls == 2);
	fake_reset(NULL, 3);
	F.fail_at = 4;
	errno = 0;
	CHECK(oa_write_all(3, text, strlen(text)) == -1 && errno == EACCES);
	CHECK(F.n_written == 3);
}

/* The system's calls again, on a pipe: what is written is read back. */
static void test_real_pipe(void)
{
	int p[2];
	CHECK(pipe(p) == 0);
	CHECK(oa_write_all(p[1], "over a pipe", 11) == 0);
	close(p[1]);
	char buf[32] = "";
	CHECK(oa_read_full(p[0], buf, sizeof buf) == 11);
	CHECK_STR(buf, "over a pipe");
	close(p[0]);
}

int main(void)
{
	oa_io_set_calls(&fake_calls);
	test_read_some();
	test_read_full();
	test_pread_full();
	test_write_all();
	oa_io_set_calls(NULL);
	test_real_pipe();
	TEST_MAIN_END();
}
