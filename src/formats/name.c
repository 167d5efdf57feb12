/* name.c - model name validation, parsing and display (spec §1.2, §4.2). */
#include "ollama_audit/name.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

static const size_t part_max[] = { 350, 80, 80, 80 };

/* What is wrong with a part, said alone (row 0) or after the part's name
 * (row kind + 1): whole sentences, so a reason needs no buffer. */
enum part_flaw { FLAW_EMPTY, FLAW_LONG, FLAW_FIRST, FLAW_NON_ASCII, FLAW_BYTE, FLAW_COUNT };
#define PART_FLAWS(label)                                                                               \
	{ label "empty", label "too long", label "must start with a letter, digit or underscore",        \
	  label "contains a non-ASCII byte", label "contains a character not allowed here" }
static const char *const flaw_text[][FLAW_COUNT] = {
	PART_FLAWS(""), PART_FLAWS("host "), PART_FLAWS("namespace "), PART_FLAWS("model "), PART_FLAWS("tag "),
};

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

/* The part's flaw, or FLAW_COUNT when it is valid. */
static enum part_flaw part_flaw(enum oa_name_part kind, const char *s, size_t len)
{
	if (len == 0)
		return FLAW_EMPTY;
	if (len > part_max[kind])
		return FLAW_LONG;
	unsigned char first = (unsigned char)s[0];
	if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') ||
	      (first >= '0' && first <= '9') || first == '_'))
		return FLAW_FIRST;
	for (size_t i = 0; i < len; i++)
		if (!byte_ok(kind, (unsigned char)s[i]))
			return (unsigned char)s[i] >= 0x80 ? FLAW_NON_ASCII : FLAW_BYTE;
	return FLAW_COUNT;
}

bool oa_name_part_valid(enum oa_name_part kind, const char *s, size_t len, const char **why)
{
	enum part_flaw f = part_flaw(kind, s, len);
	if (f != FLAW_COUNT && why)
		*why = flaw_text[0][f];
	return f == FLAW_COUNT;
}

static bool set_part(char *dst, size_t cap, enum oa_name_part kind, const char *s, const char **why)
{
	size_t len = strlen(s);
	enum part_flaw f = part_flaw(kind, s, len);
	snprintf(dst, cap, "%.*s", (int)(len < cap ? len : cap - 1), s);
	if (f != FLAW_COUNT && why)
		*why = flaw_text[kind + 1][f];
	return f == FLAW_COUNT;
}

bool oa_name_from_parts(oa_name *out, const char *host, const char *ns, const char *model,
                        const char *tag, const char **why)
{
	memset(out, 0, sizeof *out);
	bool ok = set_part(out->host, sizeof out->host, OA_PART_HOST, host, why);
	ok = set_part(out->ns, sizeof out->ns, OA_PART_NAMESPACE, ns, ok ? why : NULL) && ok;
	ok = set_part(out->model, sizeof out->model, OA_PART_MODEL, model, ok ? why : NULL) && ok;
	ok = set_part(out->tag, sizeof out->tag, OA_PART_TAG, tag, ok ? why : NULL) && ok;
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
			/* Only a host with no scheme before it is "promised": after
			 * "https://" an empty host is merged with the default. */
			char *scheme_end = strstr(rest, "://");
			host = scheme_end ? scheme_end + 3 : rest;
			if (!*host && !scheme_end)
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

/* Bytes of the UTF-8 White_Space character at s (what Go's unicode.IsSpace
 * accepts), 0 if none. */
static size_t space_len(const unsigned char *s, size_t n)
{
	static const unsigned char *const multi[] = {
		(const unsigned char *)"\xc2\x85", (const unsigned char *)"\xc2\xa0",
		(const unsigned char *)"\xe1\x9a\x80", (const unsigned char *)"\xe2\x80\xa8",
		(const unsigned char *)"\xe2\x80\xa9", (const unsigned char *)"\xe2\x80\xaf",
		(const unsigned char *)"\xe2\x81\x9f", (const unsigned char *)"\xe3\x80\x80",
	};
	if (n && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r')))
		return 1;
	if (n >= 3 && s[0] == 0xe2 && s[1] == 0x80 && s[2] >= 0x80 && s[2] <= 0x8a)
		return 3; /* U+2000..U+200A */
	for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
		size_t l = strlen((const char *)multi[i]);
		if (n >= l && memcmp(s, multi[i], l) == 0)
			return l;
	}
	return 0;
}

/* strings.TrimSpace in place; returns the trimmed start. */
static char *trim_space(char *s)
{
	size_t n = strlen(s), k;
	while (n && (k = space_len((unsigned char *)s, n)) > 0)
		s += k, n -= k;
	for (bool cut = true; cut && n;) {
		cut = false;
		for (k = 1; k <= 3 && k <= n; k++) {
			if (space_len((unsigned char *)s + n - k, k) == k) {
				n -= k;
				cut = true;
				break;
			}
		}
	}
	s[n] = '\0';
	return s;
}

enum source { SOURCE_NONE, SOURCE_LOCAL, SOURCE_CLOUD };

/* modelref's parseSourceSuffix: cuts the source off s in place. */
static enum source cut_source(char *s)
{
	char *colon = strrchr(s, ':');
	if (!colon)
		return SOURCE_NONE;
	char suffix[1024];
	snprintf(suffix, sizeof suffix, "%s", colon + 1);
	char *sx = trim_space(suffix);
	size_t n = strlen(sx);
	if (strcasecmp(sx, "cloud") == 0 || strcasecmp(sx, "local") == 0) {
		*colon = '\0';
		return tolower((unsigned char)sx[0]) == 'c' ? SOURCE_CLOUD : SOURCE_LOCAL;
	}
	if (!strchr(sx, '/') && n >= 6 && strcasecmp(sx + n - 6, "-cloud") == 0) {
		/* ":<tag>-cloud" is the tag from the cloud; the trimmed tag stays */
		memmove(colon + 1, sx, n - 6);
		colon[1 + n - 6] = '\0';
		return SOURCE_CLOUD;
	}
	return SOURCE_NONE;
}

bool oa_name_parse_ref(const char *input, oa_name *out, const char **why)
{
	char buf[1024];
	const char *dummy;
	if (!why)
		why = &dummy;
	memset(out, 0, sizeof *out);
	if (strlen(input) >= sizeof buf - 8) {
		*why = "too long";
		return false;
	}
	strcpy(buf, input);
	char *s = trim_space(buf);
	if (!*s) {
		*why = "model is required";
		return false;
	}
	enum source src = cut_source(s);
	if (src != SOURCE_NONE) {
		char nested[1024];
		strcpy(nested, s);
		if (cut_source(nested) != SOURCE_NONE) {
			*why = "use either :local or :cloud, not both";
			return false;
		}
	}
	if (src == SOURCE_CLOUD) {
		/* The stub a cloud pull writes: "-cloud" on an explicit tag (one
		 * after the last '/'), else the tag "cloud". */
		char *colon = strrchr(s, ':'), *slash = strrchr(s, '/');
		strcat(s, colon && (!slash || colon > slash) ? "-cloud" : ":cloud");
	}
	if (!oa_name_parse(s, out)) {
		*why = "not a valid model name";
		return false;
	}
	return true;
}

/* Go's unicode.ToLower for one character of s (n bytes left); *len gets its
 * byte length. Only ASCII and the two letters that lower to ASCII fold; any
 * other byte is returned as is, which no ASCII name byte equals. */
static int fold_char(const unsigned char *s, size_t n, size_t *len)
{
	*len = 1;
	if (n >= 3 && s[0] == 0xe2 && s[1] == 0x84 && s[2] == 0xaa) {
		*len = 3;
		return 'k';
	}
	if (n >= 2 && s[0] == 0xc4 && s[1] == 0xb0) {
		*len = 2;
		return 'i';
	}
	return s[0] >= 'A' && s[0] <= 'Z' ? s[0] + ('a' - 'A') : s[0];
}

bool oa_name_has_prefix_fold(const char *name, const char *prefix)
{
	const unsigned char *a = (const unsigned char *)name, *b = (const unsigned char *)prefix;
	size_t na = strlen(name), nb = strlen(prefix);
	while (nb) {
		size_t la, lb;
		if (!na)
			return false;
		int ca = fold_char(a, na, &la), cb = fold_char(b, nb, &lb);
		if (ca != cb)
			return false;
		a += la, na -= la, b += lb, nb -= lb;
	}
	return true;
}

bool oa_name_v2_host(const char *dir, char host[OA_NAME_V2_HOST_MAX], const char **why)
{
	size_t n = 0;
	for (const char *p = dir; *p; p++) {
		if (n + 1 >= OA_NAME_V2_HOST_MAX) {
			*why = "host too long";
			return false;
		}
		if (p[0] == '%' && p[1] == '3' && (p[2] == 'A' || p[2] == 'a')) {
			host[n++] = ':';
			p += 2;
		} else {
			host[n++] = *p;
		}
	}
	host[n] = '\0';
	if (strcasecmp(host, "ollama.com") == 0)
		snprintf(host, OA_NAME_V2_HOST_MAX, "%s", OA_NAME_DEFAULT_HOST);
	return true;
}
