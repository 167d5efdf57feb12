/*
 * logline.c - read one Ollama server log line (logline.h). Every access is
 * bounded by the line length; values are unquoted into a fixed scratch
 * buffer, so a line of any length or content costs no allocation.
 */
#include "ollama_audit/logline.h"

#include <stdio.h>
#include <string.h>

/* Enough for every line that describes a load (a runner's cmd= is the
 * longest, under 1 KiB); the rest of a longer line is not looked at. */
#define LINE_SCAN_MAX 16384
#define KV_MAX 48

typedef struct kv {
	char key[48];
	const char *v;
	size_t vn;
} kv;

typedef struct slog_line {
	kv kv[KV_MAX];
	size_t n;
	char scratch[LINE_SCAN_MAX + 8];
	size_t used;
} slog_line;

const char *oa_log_runner_name(enum oa_log_runner r)
{
	switch (r) {
	case OA_LR_LLAMACPP: return "llamacpp";
	case OA_LR_OLLAMA: return "ollama";
	case OA_LR_MLX: return "mlx";
	default: return "unknown";
	}
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* `k` decimal digits at p (n available), or -1. */
static int digits(const char *p, size_t n, size_t k)
{
	if (n < k)
		return -1;
	int v = 0;
	for (size_t i = 0; i < k; i++) {
		if (!is_digit(p[i]))
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

/* YYYY-MM-DD?HH:MM:SS with `sep` between date and time; fills the civil
 * seconds. Returns 19 or 0. Years outside what int64 nanoseconds hold
 * (1970..2261) are refused. */
static size_t parse_civil(const char *p, size_t n, char sep, int64_t *secs)
{
	if (n < 19 || p[4] != '-' || p[7] != '-' || p[10] != sep || p[13] != ':' || p[16] != ':')
		return 0;
	int y = digits(p, n, 4), mo = digits(p + 5, n - 5, 2), d = digits(p + 8, n - 8, 2);
	int h = digits(p + 11, n - 11, 2), mi = digits(p + 14, n - 14, 2), s = digits(p + 17, n - 17, 2);
	if (y < 1970 || y > 2261 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 ||
	    mi > 59 || s < 0 || s > 60 || d > days_in_month(y, mo))
		return 0;
	*secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	return 19;
}

size_t oa_log_parse_time(const char *p, size_t n, int64_t *ns, int *tz_min)
{
	int64_t secs;
	size_t i = parse_civil(p, n, 'T', &secs);
	if (!i)
		return 0;
	int64_t frac = 0;
	if (i < n && p[i] == '.') {
		size_t k = 0;
		for (i++; i < n && is_digit(p[i]); i++, k++)
			if (k < 9)
				frac = frac * 10 + (p[i] - '0');
		if (!k)
			return 0;
		for (; k < 9; k++)
			frac *= 10;
	}
	int off = 0;
	if (i < n && p[i] == 'Z') {
		i++;
	} else if (i < n && (p[i] == '+' || p[i] == '-')) {
		int sign = p[i] == '-' ? -1 : 1;
		int hh = digits(p + i + 1, n - i - 1, 2);
		if (hh < 0 || hh > 23)
			return 0;
		size_t j = i + 3;
		if (j < n && p[j] == ':')
			j++;
		int mm = digits(p + j, n - j, 2);
		if (mm < 0 || mm > 59)
			return 0;
		off = sign * (hh * 60 + mm);
		i = j + 2;
	} else {
		return 0; /* no zone: not a time we can place */
	}
	*ns = (secs - (int64_t)off * 60) * 1000000000 + frac;
	*tz_min = off;
	return i;
}

int oa_log_parse_size(const char *s, uint64_t *bytes)
{
	while (*s == '[' || *s == ' ')
		s++;
	if (!is_digit(*s))
		return -1;
	double v = 0, scale = 1;
	for (; is_digit(*s) && v < 1e15; s++)
		v = v * 10 + (*s - '0');
	if (is_digit(*s))
		return -1;
	if (*s == '.') {
		for (s++; is_digit(*s); s++)
			v += (*s - '0') * (scale /= 10);
	}
	while (*s == ' ')
		s++;
	static const struct { const char *u; double m; } units[] = {
		{ "TiB", 1099511627776.0 }, { "GiB", 1073741824.0 }, { "MiB", 1048576.0 },
		{ "KiB", 1024.0 }, { "TB", 1e12 }, { "GB", 1e9 }, { "MB", 1e6 }, { "KB", 1e3 },
		{ "kB", 1e3 }, { "B", 1.0 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		size_t k = strlen(units[i].u);
		if (strncmp(s, units[i].u, k) == 0 && (s[k] == '\0' || s[k] == ']' || s[k] == ' ' ||
		                                       s[k] == ',')) {
			double b = v * units[i].m + 0.5;
			if (b >= 9.2e18)
				return -1;
			*bytes = (uint64_t)b;
			return 0;
		}
	}
	return -1;
}

bool oa_log_blob_digest(const char *path, oa_digest_hex hex)
{
	for (const char *p = strstr(path, "sha256"); p; p = strstr(p + 1, "sha256")) {
		if (p[6] != '-' && p[6] != ':')
			continue;
		const char *h = p + 7;
		size_t k = 0;
		while (k < 65 && is_hex(h[k]))
			k++;
		if (k != 64)
			continue;
		for (size_t i = 0; i < 64; i++)
			hex[i] = (char)(h[i] >= 'A' && h[i] <= 'F' ? h[i] - 'A' + 'a' : h[i]);
		hex[64] = '\0';
		return true;
	}
	hex[0] = '\0';
	return false;
}

static void put_utf8(slog_line *L, unsigned long cp)
{
	char b[4];
	size_t k;
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		cp = 0xFFFD;
	if (cp < 0x80) {
		b[0] = (char)cp; k = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | cp >> 6); b[1] = (char)(0x80 | (cp & 0x3F)); k = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | cp >> 12); b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F)); k = 3;
	} else {
		b[0] = (char)(0xF0 | cp >> 18); b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (char)(0x80 | (cp & 0x3F)); k = 4;
	}
	for (size_t i = 0; i < k && L->used < LINE_SCAN_MAX; i++)
		L->scratch[L->used++] = b[i];
}

static void put(slog_line *L, char c)
{
	if (L->used < LINE_SCAN_MAX)
		L->scratch[L->used++] = c;
}

/* A Go strconv.Quote string starting at p[0] == '"'; unquoted into the
 * scratch. Returns the bytes consumed, or 0 when it never ends. */
static size_t unquote(slog_line *L, const char *p, size_t n)
{
	size_t i = 1;
	while (i < n) {
		char c = p[i++];
		if (c == '"')
			return i;
		if (c != '\\') {
			put(L, c);
			continue;
		}
		if (i >= n)
			return 0;
		char e = p[i++];
		size_t hexn = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
		if (hexn) {
			unsigned long v = 0;
			for (size_t k = 0; k < hexn; k++, i++) {
				if (i >= n || !is_hex(p[i]))
					return 0;
				v = v * 16 + (unsigned long)(is_digit(p[i]) ? p[i] - '0' : (p[i] | 0x20) - 'a' + 10);
			}
			if (e == 'x')
				put(L, (char)v);
			else
				put_utf8(L, v);
			continue;
		}
		const char *from = "abfnrtv", *to = "\a\b\f\n\r\t\v";
		const char *f = strchr(from, e);
		put(L, f && e ? to[f - from] : e);
	}
	return 0;
}

/* Split `key=value key="quoted value" "quoted key"=value ...`. Returns 0, or
 * -1 on an unterminated quote. */
static int split_kv(slog_line *L, const char *p, size_t n)
{
	size_t i = 0;
	L->n = 0;
	L->used = 0;
	while (i < n && L->n < KV_MAX) {
		while (i < n && p[i] == ' ')
			i++;
		if (i >= n)
			break;
		kv *e = &L->kv[L->n];
		size_t kstart = L->used;
		if (p[i] == '"') {
			size_t used = unquote(L, p + i, n - i);
			if (!used)
				return -1;
			i += used;
		} else {
			while (i < n && p[i] != '=' && p[i] != ' ')
				put(L, p[i++]);
		}
		size_t klen = L->used - kstart;
		if (klen >= sizeof e->key)
			klen = sizeof e->key - 1;
		memcpy(e->key, L->scratch + kstart, klen);
		e->key[klen] = '\0';
		L->used = kstart;
		if (i >= n || p[i] != '=') {
			/* A bare word: not key=value; skip it. */
			while (i < n && p[i] != ' ')
				i++;
			continue;
		}
		i++;
		size_t vstart = L->used;
		int rc = 0;
		if (i < n && p[i] == '"') {
			size_t used = unquote(L, p + i, n - i);
			/* Keep what a truncated value holds: a cut-off cmd= still
			 * names its model. */
			rc = used ? 0 : -1;
			i = used ? i + used : n;
		} else {
			while (i < n && p[i] != ' ')
				put(L, p[i++]);
		}
		/* The terminator always fits: the scratch has room past the cap. */
		L->scratch[L->used] = '\0';
		e->v = L->scratch + vstart;
		e->vn = L->used - vstart;
		if (L->used < LINE_SCAN_MAX)
			L->used++;
		L->n++;
		if (rc < 0)
			return -1;
	}
	return 0;
}

static const char *get(const slog_line *L, const char *key, size_t nth)
{
	for (size_t i = 0; i < L->n; i++)
		if (strcmp(L->kv[i].key, key) == 0 && nth-- == 0)
			return L->kv[i].v;
	return NULL;
}

/* Copy at most cap-1 bytes, control characters made visible as '?'. */
static void copy_text(char *dst, size_t cap, const char *src, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < cap; i++)
		dst[k++] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? '?' : src[i];
	dst[k] = '\0';
}

static bool has_prefix(const char *s, const char *pre)
{
	return strncmp(s, pre, strlen(pre)) == 0;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcmp(s + a - b, suf) == 0;
}

static void set_model(oa_log_line *out, const char *v, size_t n)
{
	copy_text(out->model, sizeof out->model, v, n);
	oa_log_blob_digest(out->model, out->digest);
}

/* The value after `--model ` in a runner's command line: up to the next
 * " --" (a path may hold blanks: exec.Cmd.String does not quote). */
static bool cmd_model(const char *cmd, oa_log_line *out)
{
	const char *m = strstr(cmd, " --model ");
	if (!m)
		return false;
	m += 9;
	const char *end = strstr(m, " --");
	set_model(out, m, end ? (size_t)(end - m) : strlen(m));
	return out->model[0] != '\0';
}

static bool is_failure_text(const char *s)
{
	return s && (strstr(s, "no suitable llama servers") ||
	             (strstr(s, "model requires ") && strstr(s, " but only ")));
}

static void set_reason(oa_log_line *out, const char *pre, const char *s)
{
	char buf[OA_LOG_TEXT_MAX];
	snprintf(buf, sizeof buf, "%s%s", pre, s && *s ? s : "(no reason logged)");
	copy_text(out->reason, sizeof out->reason, buf, strlen(buf));
}

static void memory_figures(const slog_line *L, const char *msg, oa_log_line *out)
{
	const char *v;
	if (strcmp(msg, "system memory") == 0) {
		if ((v = get(L, "total", 0)))
			oa_log_parse_size(v, &out->mem_sys_total);
		if ((v = get(L, "free", 0)))
			oa_log_parse_size(v, &out->mem_sys_free);
	} else if (strcmp(msg, "offload") == 0) {
		if ((v = get(L, "memory.required.full", 0)))
			oa_log_parse_size(v, &out->mem_required);
		if ((v = get(L, "memory.available", 0)))
			oa_log_parse_size(v, &out->mem_gpu_free);
	} else if (strcmp(msg, "gpu memory") == 0) {
		if ((v = get(L, "available", 0)))
			oa_log_parse_size(v, &out->mem_gpu_free);
	}
	if ((v = get(L, "memory peak", 0)) || (v = get(L, "peak", 0)))
		oa_log_parse_size(v, &out->mem_peak);
	if (out->kind == OA_LOG_NONE && (out->mem_required || out->mem_sys_total || out->mem_sys_free ||
	                                 out->mem_gpu_free || out->mem_peak))
		out->kind = OA_LOG_MEMORY;
}

static int classify(const slog_line *L, oa_log_line *out, char *why, size_t whylen, int depth);

/* 0.19-era MLX builds relay the runner's own slog lines as
 * msg=mlx-runner msg="<inner line>": read the inner line too. */
static int relayed(const char *inner, oa_log_line *out, char *why, size_t whylen, int depth)
{
	slog_line L2; /* on the stack: a relay is read one level deep, so a line takes two at most */
	size_t n = strlen(inner);
	const char *m = strstr(inner, "msg=");
	if (!m || depth > 0)
		return 0;
	if (split_kv(&L2, m, n - (size_t)(m - inner)) < 0)
		return 0; /* the runner's own text: not ours to judge */
	return classify(&L2, out, why, whylen, depth + 1);
}

static int classify(const slog_line *L, oa_log_line *out, char *why, size_t whylen, int depth)
{
	const char *msg = get(L, "msg", 0);
	if (!msg)
		return 0;
	const char *err = get(L, "error", 0);
	const char *v;
	if (strcmp(msg, "mlx-runner") == 0 && (v = get(L, "msg", 1)))
		return relayed(v, out, why, whylen, depth);
	if (has_prefix(msg, "Listening on ") && (v = strstr(msg, "(version "))) {
		v += 9;
		const char *end = strchr(v, ')');
		copy_text(out->version, sizeof out->version, v, end ? (size_t)(end - v) : strlen(v));
		out->kind = OA_LOG_VERSION;
		return 0;
	}
	if (strcmp(msg, "starting llama server") == 0 || strcmp(msg, "starting runner") == 0 ||
	    strcmp(msg, "starting llama-server") == 0) {
		const char *cmd = get(L, "cmd", 0);
		out->kind = OA_LOG_LOAD;
		out->runner = OA_LR_LLAMACPP;
		if (!cmd) {
			snprintf(why, whylen, "a runner start without cmd=");
			return -1;
		}
		if (strstr(cmd, " --ollama-engine"))
			out->runner = OA_LR_OLLAMA;
		cmd_model(cmd, out);
		return 0;
	}
	if (strcmp(msg, "using llama-server for model") == 0 ||
	    strcmp(msg, "loading model via llama-server") == 0) {
		out->kind = OA_LOG_HINT;
		out->runner = OA_LR_LLAMACPP;
		out->after_start = strcmp(msg, "loading model via llama-server") == 0;
		if ((v = get(L, "model", 0)))
			set_model(out, v, strlen(v));
		return 0;
	}
	if (strcmp(msg, "starting mlx runner subprocess") == 0 || strcmp(msg, "starting mlx runner") == 0) {
		out->kind = OA_LOG_LOAD;
		out->runner = OA_LR_MLX;
		if (!(v = get(L, "model", 0)) || !*v) {
			snprintf(why, whylen, "an MLX runner start without model=");
			return -1;
		}
		set_model(out, v, strlen(v));
		return 0;
	}
	if (strcmp(msg, "MLX engine initialized") == 0) {
		out->kind = OA_LOG_ENGINE;
		out->runner = OA_LR_MLX;
		return 0;
	}
	if (strcmp(msg, "mlx runner is ready") == 0 ||
	    (strstr(msg, "started in ") && has_suffix(msg, " seconds") &&
	     (has_prefix(msg, "llama runner") || has_prefix(msg, "llama-server") ||
	      has_prefix(msg, "runner")))) {
		out->kind = OA_LOG_LOADED;
		return 0;
	}
	if (strcmp(msg, "error loading llama server") == 0 || strcmp(msg, "Load failed") == 0) {
		out->kind = OA_LOG_FAILED;
		set_reason(out, "", err ? err : msg);
		if ((v = get(L, "model", 0)))
			set_model(out, v, strlen(v));
		return 0;
	}
	if (strcmp(msg, "model is too large for system memory") == 0) {
		out->kind = OA_LOG_FAILED;
		set_reason(out, "", msg);
		return 0;
	}
	if (strcmp(msg, "llama runner terminated") == 0 || strcmp(msg, "llama-server terminated") == 0) {
		out->kind = OA_LOG_FAILED;
		set_reason(out, "runner terminated: ", err ? err : "?");
		return 0;
	}
	if (is_failure_text(msg) || is_failure_text(err)) {
		out->kind = OA_LOG_FAILED;
		set_reason(out, "", is_failure_text(err) ? err : msg);
		return 0;
	}
	memory_figures(L, msg, out);
	return 0;
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* journalctl's short format: "Nov 20 07:15:02 host ident[pid]: ". */
static size_t journal_prefix(const char *p, size_t n)
{
	if (n < 16 || p[3] != ' ' || p[6] != ' ' || p[9] != ':' || p[12] != ':' || p[15] != ' ')
		return 0;
	bool month = false;
	for (size_t i = 0; i < 12 && !month; i++)
		month = memcmp(p, months[i], 3) == 0;
	if (!month || !(p[4] == ' ' || is_digit(p[4])) || !is_digit(p[5]))
		return 0;
	size_t i = 16;
	while (i < n && p[i] != ' ')  /* host */
		i++;
	i++;
	size_t ident = i;
	while (i < n && p[i] != ' ' && p[i] != ':')
		i++;
	if (i == ident || i + 1 >= n || p[i] != ':' || p[i + 1] != ' ')
		return 0;
	return i + 2;
}

static bool is_name_char(char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_' || c == '-' || c == '.';
}

/* docker compose: "service-1  | ". */
static size_t compose_prefix(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && is_name_char(p[i]))
		i++;
	if (i == 0 || i >= n || p[i] != ' ')
		return 0;
	while (i < n && p[i] == ' ')
		i++;
	if (i + 1 < n && p[i] == '|' && p[i + 1] == ' ')
		return i + 2;
	return 0;
}

/* What a storage layer put before the server's own text. */
static size_t strip_prefixes(const char *p, size_t n, oa_log_line *out)
{
	size_t off = 0;
	for (int round = 0; round < 3; round++) {
		const char *q = p + off;
		size_t m = n - off, k;
		int64_t ns;
		int tz;
		if (m >= 5 && memcmp(q, "time=", 5) == 0)
			break;
		if ((k = oa_log_parse_time(q, m, &ns, &tz)) && k < m && q[k] == ' ') {
			out->has_time = true; /* docker logs -t, journalctl -o short-iso */
			out->time_ns = ns;
			out->tz_min = tz;
			off += k + 1;
		} else if (parse_civil(q, m, ' ', &ns) && m > 19 && q[19] == ' ') {
			off += 20; /* Docker Desktop's copy: local time without a zone */
		} else if ((k = journal_prefix(q, m)) || (k = compose_prefix(q, m))) {
			off += k;
		} else {
			break;
		}
	}
	/* journalctl -o short-iso: after its time comes "host ident[pid]: ". */
	if (off < n && !(n - off >= 5 && memcmp(p + off, "time=", 5) == 0)) {
		const char *q = p + off;
		const char *colon = memchr(q, ':', n - off);
		const char *sp = memchr(q, ' ', n - off);
		if (out->has_time && sp && colon && colon > sp && colon[-1] == ']' &&
		    (size_t)(colon - p) + 1 < n && colon[1] == ' ')
			off = (size_t)(colon - p) + 2;
	}
	return off;
}

int oa_log_parse_line(const char *p, size_t n, oa_log_line *out, char *why, size_t whylen)
{
	slog_line L;
	memset(out, 0, sizeof *out);
	if (whylen)
		why[0] = '\0';
	if (n > LINE_SCAN_MAX)
		n = LINE_SCAN_MAX;
	size_t off = strip_prefixes(p, n, out);
	p += off;
	n -= off;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)p[i];
		/* Text logs hold tabs and colour escapes, never other control bytes:
		 * these are a damaged file (zeros after a crash, a binary). */
		if (ch < 0x20 && ch != '\t' && ch != 0x1b) {
			snprintf(why, whylen, "binary data (byte 0x%02x), not a log line", ch);
			return -1;
		}
	}
	if (n < 5 || memcmp(p, "time=", 5) != 0) {
		/* Before slog (2023): "2023/12/15 15:33:10 routes.go:871: Listening on
		 * 127.0.0.1:11434 (version 0.1.17)". Only the version is used. */
		char buf[512];
		copy_text(buf, sizeof buf, p, n < sizeof buf ? n : sizeof buf - 1);
		const char *v = strstr(buf, "Listening on ");
		if (v && (v = strstr(v, "(version "))) {
			v += 9;
			const char *end = strchr(v, ')');
			if (end) {
				copy_text(out->version, sizeof out->version, v, (size_t)(end - v));
				out->kind = OA_LOG_VERSION;
			}
		}
		return 0;
	}
	out->slog = true;
	int64_t ns;
	int tz;
	size_t k = oa_log_parse_time(p + 5, n - 5, &ns, &tz);
	if (!k || (5 + k < n && p[5 + k] != ' ')) {
		snprintf(why, whylen, "a slog line whose time= is not an RFC 3339 time");
		return -1;
	}
	out->has_time = true;
	out->time_ns = ns;
	out->tz_min = tz;
	if (split_kv(&L, p, n) < 0) {
		/* Classify what came before the broken quote: a truncated load
		 * line still names its runner. */
		classify(&L, out, why, whylen, 0);
		snprintf(why, whylen, "an unterminated quoted value (a truncated line?)");
		return -1;
	}
	return classify(&L, out, why, whylen, 0);
}
