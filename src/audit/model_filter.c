/* model_filter.c - --filter EXPR: parsed once, then asked of each model
 * (model_filter.h). */
#include "audit/model_filter.h"
#include "ollama_audit/humanize.h"
#include "ollama_audit/model.h"
#include "base/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	enum oa_filter_key key;
} keys[] = {
	{ "size", OA_FILTER_SIZE },     { "modified", OA_FILTER_MODIFIED }, { "used", OA_FILTER_USED },
	{ "format", OA_FILTER_FORMAT }, { "runner", OA_FILTER_RUNNER },
};

/* Longest first: ">=" before ">". */
static const struct {
	const char *text;
	enum oa_filter_op op;
} ops[] = {
	{ ">=", OA_FILTER_GE }, { "<=", OA_FILTER_LE }, { "!=", OA_FILTER_NE },
	{ ">", OA_FILTER_GT },  { "<", OA_FILTER_LT },  { "=", OA_FILTER_EQ },
};

/* A size as the tables print it: digits, an optional .fraction, an
 * optional blank and unit: B, kB/KB, MB, GB, TB, PB (1000-based, --units
 * si) or KiB, MiB, GiB, TiB, PiB (1024-based, --units iec); none: bytes. */
static int parse_size(const char *s, int64_t *bytes)
{
	static const struct {
		const char *unit;
		double mul;
	} units[] = {
		{ "", 1 },           { "B", 1 },          { "KB", 1e3 },       { "MB", 1e6 },
		{ "GB", 1e9 },       { "TB", 1e12 },      { "PB", 1e15 },      { "KiB", 1024.0 },
		{ "MiB", 1048576.0 }, { "GiB", 1073741824.0 }, { "TiB", 1099511627776.0 },
		{ "PiB", 1125899906842624.0 },
	};
	double v = 0, scale = 1;
	size_t digits = 0;
	for (; isdigit((unsigned char)*s); s++, digits++)
		if (digits < 16)
			v = v * 10 + (*s - '0');
	if (!digits || digits >= 16)
		return -1;
	if (*s == '.') {
		size_t f = 0;
		for (s++; isdigit((unsigned char)*s); s++, f++)
			v += (*s - '0') * (scale /= 10);
		if (!f)
			return -1;
	}
	if (*s == ' ')
		s++;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcasecmp(s, units[i].unit) == 0 && v * units[i].mul < 9e18) {
			*bytes = (int64_t)(v * units[i].mul + 0.5);
			return 0;
		}
	return -1;
}

static bool word_in(const char *word, const char *list)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* The value of f from text (blanks trimmed): a size, a duration or a word. */
static int parse_value(oa_model_filter *f, const char *key, const char *v, char *err, size_t errlen)
{
	double secs;
	switch (f->key) {
	case OA_FILTER_SIZE:
		if (parse_size(v, &f->num) == 0)
			return 0;
		snprintf(err, errlen, "'%s' is not a size (1GB, 500MB, 1.5GiB, or bytes)", v);
		return -1;
	case OA_FILTER_MODIFIED:
	case OA_FILTER_USED:
		if (oa_parse_duration(v, &secs) == 0) {
			f->num = (int64_t)(secs * 1e9);
			return 0;
		}
		snprintf(err, errlen, "'%s' is not a duration (%s, 2w)", v, OA_DURATION_GRAMMAR);
		return -1;
	case OA_FILTER_FORMAT:
	case OA_FILTER_RUNNER: {
		const char *known = f->key == OA_FILTER_FORMAT ? OA_FILTER_FORMATS : OA_FILTER_RUNNERS;
		size_t n = strlen(v);
		for (size_t i = 0; i < n && i + 1 < sizeof f->word; i++)
			f->word[i] = (char)tolower((unsigned char)v[i]);
		if (n < sizeof f->word && word_in(f->word, known)) {
			if (f->op == OA_FILTER_EQ || f->op == OA_FILTER_NE)
				return 0;
			snprintf(err, errlen, "%s takes = or !=, not an order", key);
			return -1;
		}
		snprintf(err, errlen, "'%s' is not a %s (%s)", v, key, known);
		return -1;
	}
	}
	return -1;
}

static char *trimmed(const char *s, size_t n)
{
	while (n && *s == ' ')
		s++, n--;
	while (n && s[n - 1] == ' ')
		n--;
	return oa_xstrndup(s, n);
}

int oa_model_filter_parse(const char *text, oa_model_filter *f, char *err, size_t errlen)
{
	memset(f, 0, sizeof *f);
	size_t at = strcspn(text, "<>=!");
	if (!text[at]) {
		snprintf(err, errlen, "'%s' has no operator (>, <, >=, <=, =, !=): KEY OP VALUE, e.g. 'size>1GB'",
		         text);
		return -1;
	}
	char *key = trimmed(text, at);
	bool known = false;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !known; i++)
		if (strcasecmp(key, keys[i].name) == 0)
			f->key = keys[i].key, known = true;
	size_t oplen = 0;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0] && !oplen; i++)
		if (strncmp(text + at, ops[i].text, strlen(ops[i].text)) == 0)
			f->op = ops[i].op, oplen = strlen(ops[i].text);
	const char *rest = text + at + oplen;
	char *value = trimmed(rest, strlen(rest));
	int rc = -1;
	if (!known)
		snprintf(err, errlen, "unknown key '%s' (%s)", key, OA_FILTER_KEYS);
	else if (!oplen || (*rest && strchr("<>=!", *rest)))
		snprintf(err, errlen, "'%.*s' is not an operator (>, <, >=, <=, =, !=)", (int)strspn(text + at, "<>=!"),
		         text + at);
	else if (!*value)
		snprintf(err, errlen, "'%s' has no value after its operator", text);
	else
		rc = parse_value(f, key, value, err, errlen);
	free(key);
	free(value);
	return rc;
}

bool oa_model_filters_need_logs(const oa_model_filter *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].key == OA_FILTER_USED)
			return true;
	return false;
}

static bool compare(int64_t a, enum oa_filter_op op, int64_t b)
{
	switch (op) {
	case OA_FILTER_GT: return a > b;
	case OA_FILTER_GE: return a >= b;
	case OA_FILTER_LT: return a < b;
	case OA_FILTER_LE: return a <= b;
	case OA_FILTER_EQ: return a == b;
	case OA_FILTER_NE: return a != b;
	}
	return false;
}

/* The value a filter compares, false when the model has none (a cloud
 * stub's size, the last use without logs). */
static bool model_value(const oa_model_filter *f, const oa_store *s, size_t idx, const oa_log_usage *u,
                        int64_t now_ns, int64_t *num, const char **word)
{
	const oa_model *m = &s->models[idx];
	int64_t last;
	switch (f->key) {
	case OA_FILTER_SIZE:
		*num = m->m.size;
		return !m->remote && !(m->config_state == OA_CONFIG_OK && *m->cfg.remote_model);
	case OA_FILTER_MODIFIED:
		*num = oa_age_ns(m->st.mtime_ns, now_ns);
		return true;
	case OA_FILTER_USED:
		if (!oa_log_usage_last_use(u, s, idx, &last))
			return false;
		*num = oa_age_ns(last, now_ns);
		return true;
	case OA_FILTER_FORMAT:
		*word = m->manifest_ok ? oa_format_name(m->format) : "invalid";
		return true;
	case OA_FILTER_RUNNER:
		*word = oa_model_list_runner(m);
		return true;
	}
	return false;
}

bool oa_model_filters_pass(const oa_model_filter *v, size_t n, const oa_store *s, size_t idx,
                           const oa_log_usage *u, int64_t now_ns)
{
	for (size_t i = 0; i < n; i++) {
		int64_t num = 0;
		const char *word = NULL;
		if (!model_value(&v[i], s, idx, u, now_ns, &num, &word))
			return false;
		bool hit = word ? (strcasecmp(word, v[i].word) == 0) == (v[i].op == OA_FILTER_EQ)
		                : compare(num, v[i].op, v[i].num);
		if (!hit)
			return false;
	}
	return true;
}
