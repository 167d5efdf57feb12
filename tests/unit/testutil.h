/* testutil.h - a minimal test harness: CHECK records a failure and goes on;
 * TEST_MAIN prints "N passed, N failed" and sets the exit code. */
#ifndef OA_TESTUTIL_H
#define OA_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

static int oa_t_pass, oa_t_fail;

#define CHECK(cond) do { \
	if (cond) oa_t_pass++; \
	else { oa_t_fail++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *oa_a_ = (a), *oa_b_ = (b); \
	if (oa_a_ && oa_b_ && strcmp(oa_a_, oa_b_) == 0) oa_t_pass++; \
	else { oa_t_fail++; fprintf(stderr, "%s:%d: \"%s\" != \"%s\" (%s)\n", __FILE__, __LINE__, \
	       oa_a_ ? oa_a_ : "(null)", oa_b_ ? oa_b_ : "(null)", #a); } \
} while (0)

#define CHECK_U64(a, b) do { \
	uint64_t oa_a_ = (uint64_t)(a), oa_b_ = (uint64_t)(b); \
	if (oa_a_ == oa_b_) oa_t_pass++; \
	else { oa_t_fail++; fprintf(stderr, "%s:%d: %" PRIu64 " != %" PRIu64 " (%s)\n", __FILE__, \
	       __LINE__, oa_a_, oa_b_, #a); } \
} while (0)

#define TEST_MAIN_END() do { \
	printf("%d passed, %d failed\n", oa_t_pass, oa_t_fail); \
	return oa_t_fail ? 1 : 0; \
} while (0)

#endif
