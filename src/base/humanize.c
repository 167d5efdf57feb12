/* humanize.c - see humanize.h. The rules mirror Ollama's format package. */
#include "ollama_audit/humanize.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void oa_human_bytes(int64_t b, char *buf, size_t len)
{
	double value;
	const char *unit;
	if (b >= 1000LL * 1000 * 1000 * 1000)
		value = (double)b / 1e12, unit = "TB";
	else if (b >= 1000LL * 1000 * 1000)
		value = (double)b / 1e9, unit = "GB";
	else if (b >= 1000LL * 1000)
		value = (double)b / 1e6, unit = "MB";
	else if (b >= 1000)
		value = (double)b / 1e3, unit = "KB";
	else {
		snprintf(buf, len, "%lld B", (long long)b);
		return;
	}
	/* Go: >= 10 prints int(value) (truncated); a fraction prints %.1f. */
	if (value >= 10 || value == trunc(value))
		snprintf(buf, len, "%lld %s", (long long)value, unit);
	else
		snprintf(buf, len, "%.1f %s", value, unit);
}

void oa_format_size(uint64_t n, enum oa_units units, char *buf, size_t len)
{
	static const char *iec[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	switch (units) {
	case OA_UNITS_BYTES:
		snprintf(buf, len, "%llu", (unsigned long long)n);
		return;
	case OA_UNITS_IEC: {
		double v = (double)n;
		int i = 0;
		while (v >= 1024 && i < 6)
			v /= 1024, i++;
		if (i == 0)
			snprintf(buf, len, "%llu B", (unsigned long long)n);
		else
			snprintf(buf, len, "%.1f %s", v, iec[i]);
		return;
	}
	case OA_UNITS_SI:
	default:
		oa_human_bytes(n > INT64_MAX ? INT64_MAX : (int64_t)n, buf, len);
		return;
	}
}

/* Go's Duration.Hours(): whole hours plus the remainder as a fraction, so
 * the rounding below sees the same float64 the server does. */
static double go_hours(int64_t d)
{
	const int64_t hour = 3600LL * 1000000000;
	return (double)(d / hour) + (double)(d % hour) / 3.6e12;
}

/* format.humanDuration; d >= 0 nanoseconds. Seconds and minutes truncate,
 * hours round half away from zero, years truncate again. */
static void human_duration(int64_t d, char *buf, size_t len)
{
	int64_t seconds = d / 1000000000;
	if (seconds < 1) {
		snprintf(buf, len, "Less than a second");
		return;
	}
	if (seconds == 1) {
		snprintf(buf, len, "1 second");
		return;
	}
	if (seconds < 60) {
		snprintf(buf, len, "%lld seconds", (long long)seconds);
		return;
	}
	int64_t minutes = seconds / 60;
	if (minutes == 1) {
		snprintf(buf, len, "About a minute");
		return;
	}
	if (minutes < 60) {
		snprintf(buf, len, "%lld minutes", (long long)minutes);
		return;
	}
	long long hours = (long long)round(go_hours(d));
	if (hours == 1)
		snprintf(buf, len, "About an hour");
	else if (hours < 48)
		snprintf(buf, len, "%lld hours", hours);
	else if (hours < 24 * 7 * 2)
		snprintf(buf, len, "%lld days", hours / 24);
	else if (hours < 24 * 30 * 2)
		snprintf(buf, len, "%lld weeks", hours / 24 / 7);
	else if (hours < 24 * 365 * 2)
		snprintf(buf, len, "%lld months", hours / 24 / 30);
	else
		snprintf(buf, len, "%lld years", (long long)go_hours(d) / 24 / 365);
}

void oa_human_age(int64_t age_ns, char *buf, size_t len)
{
	char d[64];
	/* Go compares whole hours (truncated toward zero) in whole years. */
	if ((long long)go_hours(age_ns) / 24 / 365 < -20) {
		snprintf(buf, len, "Forever");
	} else if (age_ns < 0) {
		human_duration(-age_ns, d, sizeof d);
		snprintf(buf, len, "%s from now", d);
	} else {
		human_duration(age_ns, d, sizeof d);
		snprintf(buf, len, "%s ago", d);
	}
}

int64_t oa_age_ns(int64_t then_ns, int64_t now_ns)
{
	/* time.Sub saturates rather than wrapping. */
	if (then_ns < 0 && now_ns > INT64_MAX + then_ns)
		return INT64_MAX;
	if (then_ns > 0 && now_ns < INT64_MIN + then_ns)
		return INT64_MIN;
	return now_ns - then_ns;
}

void oa_iso8601(time_t sec, long nsec, char *buf, size_t len)
{
	struct tm tm;
	gmtime_r(&sec, &tm);
	char base[32];
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	if (nsec)
		snprintf(buf, len, "%s.%09ldZ", base, nsec);
	else
		snprintf(buf, len, "%sZ", base);
}

void oa_go_time(time_t sec, long nsec, char *buf, size_t len)
{
	struct tm tm;
	localtime_r(&sec, &tm);
	char base[32], frac[16] = "";
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	if (nsec) {
		snprintf(frac, sizeof frac, ".%09ld", nsec);
		size_t n = strlen(frac);
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = '\0';
	}
	long off = tm.tm_gmtoff;
	if (off == 0) {
		snprintf(buf, len, "%s%sZ", base, frac);
		return;
	}
	char sign = off < 0 ? '-' : '+';
	if (off < 0)
		off = -off;
	snprintf(buf, len, "%s%s%c%02ld:%02ld", base, frac, sign, off / 3600, (off % 3600) / 60);
}

/* Each part is counted in digits before any arithmetic, so no input can
 * overflow: 13 integer digits already exceed OA_DURATION_MAX. */
int oa_parse_duration(const char *s, double *secs)
{
	const char *p = s;
	double v = 0;
	size_t n = 0;
	for (; *p >= '0' && *p <= '9'; p++, n++)
		if (n < 14)
			v = v * 10 + (*p - '0');
	if (n == 0 || n >= 14)
		return -1;
	if (*p == '.') {
		/* digits / 10^f: one correctly rounded division (0.000001 exactly) */
		double digits = 0, scale = 1;
		size_t f = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, f++)
			if (f < 15)
				digits = digits * 10 + (*p - '0'), scale *= 10;
		if (f == 0)
			return -1;
		v += digits / scale;
	}
	static const char units[] = "smhdw";
	static const double mul[] = { 1, 60, 3600, 86400, 7 * 86400 };
	const char *u = *p ? strchr(units, *p) : NULL;
	if (u)
		v *= mul[u - units], p++;
	if (*p || v > OA_DURATION_MAX)
		return -1;
	*secs = v;
	return 0;
}
