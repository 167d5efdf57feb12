/*
 * humanize.h - numbers and times the way people (and `ollama list`) read them.
 */
#ifndef OLLAMA_AUDIT_HUMANIZE_H
#define OLLAMA_AUDIT_HUMANIZE_H

#include "ollama_audit/export.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum oa_units {
	OA_UNITS_SI,    /* Ollama's format.HumanBytes: 1000-based, "2.0 GB", "23 GB" */
	OA_UNITS_IEC,   /* 1024-based, always labelled "GiB" */
	OA_UNITS_BYTES, /* the exact integer */
};

/* Ollama's format.HumanBytes, byte for byte (spec §4.2). */
OA_EXPORT void oa_human_bytes(int64_t n, char *buf, size_t len);
/* Sizes in the selected units. */
OA_EXPORT void oa_format_size(uint64_t n, enum oa_units units, char *buf, size_t len);
/* Ollama's format.HumanTime for something age_ns nanoseconds old ("2 weeks
 * ago", "3 minutes from now", "Forever" beyond ~20 years ahead). Pure: the
 * caller reads the clock, so the rules are tested without one. */
OA_EXPORT void oa_human_age(int64_t age_ns, char *buf, size_t len);
/* now_ns - then_ns, saturating at the int64 limits as Go's time.Sub does. */
OA_EXPORT int64_t oa_age_ns(int64_t then_ns, int64_t now_ns);
/* RFC 3339 / ISO-8601 in UTC with nanoseconds when non-zero: 2026-11-29T16:43:47Z */
OA_EXPORT void oa_iso8601(time_t sec, long nsec, char *buf, size_t len);
/* Go's time.Time JSON form in local time, as /api/tags prints modified_at:
 * 2024-12-11T10:02:03.123456789+01:00 (trailing zeros of the fraction dropped). */
OA_EXPORT void oa_go_time(time_t sec, long nsec, char *buf, size_t len);

/* A duration as every option takes it (--min-age, --max-duration): digits,
 * an optional fraction (.digits), an optional unit s, m, h or d; nothing
 * else (no blanks, sign, hex, exponent, nan/inf), at most OA_DURATION_MAX
 * seconds. 0 with *secs set, or -1 with *secs untouched. */
#define OA_DURATION_MAX 1e12
#define OA_DURATION_GRAMMAR "seconds, or with a unit: 30s, 90m, 1h, 2d (digits, optional .fraction)"
OA_EXPORT int oa_parse_duration(const char *s, double *secs);

#endif
