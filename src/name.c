/* name.c - model name validation, parsing and display (spec §1.2, §4.2). */
#include "ollama_audit/name.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const size_t part_max[] = { 350, 80, 80, 80 };

static bool byte_ok(enum oa_name_part kind, unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
		return true;
	switch (kind) {
	case OA_PART_HOST:
		return c == '.' || c == ':' || c == '-';
	case OA_PART_NAMESPACE:
		return c == '-';
	default:
		return c == '.' || c == '-';
	}
}

bool oa_name_part_valid(enum oa_name_part kind, const char *s, size_t len, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (len == 0) {
		*why = "empty";
		return false;
	}
	if (len > part_max[kind]) {
		*why = "too long";
		return false;
	}
	unsigned char first = (unsigned char)s[0];
	if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') ||
	      (first >= '0' && first <= '9') || first == '_')) {
		*why = "must start with a letter, digit or underscore";
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		if (!byte_ok(kind, (unsigned char)s[i])) {
			*why = (unsigned char)s[i] >= 0x80 ? "contains a non-ASCII byte"
			                                   : "contains a character not allowed here";
			return false;
		}
	}
	return true;
}

static bool set_part(char *dst, size_t cap, enum oa_name_part kind, const char *s,
                     const char **why, const char *label)
{
	static char reason[96];
	size_t len = strlen(s);
	const char *w = NULL;
	bool ok = oa_name_part_valid(kind, s, len, &w);
	snprintf(dst, cap, "%.*s", (int)(len < cap ? len : cap - 1), s);
	if (!ok && why) {
		snprintf(reason, sizeof reason, "%s %s", label, w);
		*why = reason;
	}
	return ok;
}

bool oa_name_from_parts(oa_name *out, const char *host, const char *ns, const char *model,
                        const char *tag, const char **why)
{
	memset(out, 0, sizeof *out);
	bool ok = set_part(out->host, sizeof out->host, OA_PART_HOST, host, why, "host");
	ok = set_part(out->ns, sizeof out->ns, OA_PART_NAMESPACE, ns, ok ? why : NULL, "namespace") && ok;
	ok = set_part(out->model, sizeof out->model, OA_PART_MODEL, model, ok ? why : NULL, "model") && ok;
	ok = set_part(out->tag, sizeof out->tag, OA_PART_TAG, tag, ok ? why : NULL, "tag") && ok;
	return ok;
}

/* Split s at the last `sep`: like upstream's cutPromised, an empty side of a
 * present separator becomes an invalid placeholder so validation fails. */
static bool cut_last(char *s, char sep, char **after)
{
	char *p = strrchr(s, sep);
	if (!p)
		return false;
	*p = '\0';
	*after = p + 1;
	return true;
}

bool oa_name_parse(const char *input, oa_name *out)
{
	char s[1024];
	const char *host = "", *ns = "", *model = "", *tag = "";
	if (strlen(input) >= sizeof s)
		return false;
	strcpy(s, input);

	/* "/" is illegal in a tag, so a ':' after the last '/' starts the tag. */
	char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
	char *rest = s;
	if (colon && (!slash || colon > slash)) {
		*colon = '\0';
		tag = colon + 1;
		if (!*tag)
			tag = "!MISSING!";
	}
	char *after;
	if (!cut_last(rest, '/', &after)) {
		model = rest;
	} else {
		model = *after ? after : "!MISSING!";
		if (!*rest)
			rest = "!MISSING!";
		if (!cut_last(rest, '/', &after)) {
			ns = rest;
		} else {
			ns = *after ? after : "!MISSING!";
			char *scheme_end = strstr(rest, "://");
			host = scheme_end ? scheme_end + 3 : rest;
			if (!*host)
				host = "!MISSING!";
		}
	}
	if (!*host)
		host = OA_NAME_DEFAULT_HOST;
	if (!*ns)
		ns = OA_NAME_DEFAULT_NAMESPACE;
	if (!*tag)
		tag = OA_NAME_DEFAULT_TAG;
	return oa_name_from_parts(out, host, ns, model, tag, NULL);
}

void oa_name_display(const oa_name *n, char *buf, size_t len)
{
	if (strcasecmp(n->host, OA_NAME_DEFAULT_HOST) != 0)
		snprintf(buf, len, "%s/%s/%s:%s", n->host, n->ns, n->model, n->tag);
	else if (strcasecmp(n->ns, OA_NAME_DEFAULT_NAMESPACE) != 0)
		snprintf(buf, len, "%s/%s:%s", n->ns, n->model, n->tag);
	else
		snprintf(buf, len, "%s:%s", n->model, n->tag);
}

bool oa_name_equal(const oa_name *a, const oa_name *b)
{
	return strcmp(a->host, b->host) == 0 && strcmp(a->ns, b->ns) == 0 &&
	       strcmp(a->model, b->model) == 0 && strcmp(a->tag, b->tag) == 0;
}

bool oa_name_equal_fold(const oa_name *a, const oa_name *b)
{
	return strcasecmp(a->host, b->host) == 0 && strcasecmp(a->ns, b->ns) == 0 &&
	       strcasecmp(a->model, b->model) == 0 && strcasecmp(a->tag, b->tag) == 0;
}
