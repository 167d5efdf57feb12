/*
 * util.h - small helpers shared by every module: checked allocation, a
 * growable string buffer, path joining and printable escaping of bytes that
 * came from a file we do not trust.
 */
#ifndef OLLAMA_AUDIT_UTIL_H
#define OLLAMA_AUDIT_UTIL_H

#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allocation failure is the one error we do not recover from: the oa_x*
 * functions call oa_out_of_memory (oom.c), which runs the handler the
 * program set with oa_set_oom_handler (the CLI's prints a message and exits
 * with the operational-error code) and aborts if it returns. */
void *oa_xmalloc(size_t n);
void *oa_xcalloc(size_t n, size_t size);
void *oa_xrealloc(void *p, size_t n);
void *oa_xreallocarray(void *p, size_t n, size_t size);
/* Make the array v, with room for *cap elements of size bytes, hold at least
 * need: the room doubles (from 16), so n appends copy O(n) elements. Dies on
 * overflow or when memory runs out, like the oa_x* functions. */
void *oa_grow_array(void *v, size_t need, size_t *cap, size_t size);
/* git's ALLOC_GROW: OA_ALLOC_GROW(v, need, cap) with v and cap (a size_t)
 * lvalues, e.g. OA_ALLOC_GROW(l->v, l->n + 1, l->cap); l->v[l->n++] = x; */
#define OA_ALLOC_GROW(v, need, cap) ((v) = oa_grow_array((v), (need), &(cap), sizeof *(v)))
char *oa_xstrdup(const char *s);
char *oa_xstrndup(const char *s, size_t n);
char *oa_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *oa_xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* A growable, always NUL-terminated byte string. */
typedef struct oa_buf {
	char *data;
	size_t len, cap;
} oa_buf;

void oa_buf_init(oa_buf *b);
void oa_buf_free(oa_buf *b);
void oa_buf_add(oa_buf *b, const void *p, size_t n);
void oa_buf_adds(oa_buf *b, const char *s);
void oa_buf_addc(oa_buf *b, char c);
void oa_buf_printf(oa_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as one word a POSIX shell reads back: as it is when every byte is
 * plainly safe, else in single quotes (a ' inside as '\''); what a
 * terminal must not see raw (oa_is_printable) as "$(printf '\ooo')", so
 * that the word prints as it pastes (but trailing newlines, kept raw). */
void oa_buf_add_shell_word(oa_buf *b, const char *s);
char *oa_buf_take(oa_buf *b); /* returns data (never NULL) and resets b */

/* Append `n` bytes from an untrusted file, printable: control bytes and
 * bytes that are not valid UTF-8 become \xNN, C1 controls and bidi
 * overrides/isolates \uNNNN, a backslash becomes \\. */
void oa_buf_add_escaped(oa_buf *b, const void *p, size_t n);
/* The same escapes for text about to be printed that may hold escapes
 * already: a backslash stays, so escaping twice changes nothing. Every
 * table cell, csv field and message goes through it. */
void oa_buf_add_printable(oa_buf *b, const void *p, size_t n);
char *oa_printable(const char *s); /* NULL gives "" */
bool oa_is_printable(const char *s); /* nothing oa_printable would change */
/* Length (1..4) of the well-formed UTF-8 sequence at p (n bytes available),
 * or 0: strict (no overlong forms, no surrogates, nothing above U+10FFFF). */
size_t oa_utf8_seq(const unsigned char *p, size_t n);
/* The code point of the len-byte sequence at p that oa_utf8_seq accepted. */
uint32_t oa_utf8_cp(const unsigned char *p, size_t len);
char *oa_escape(const void *p, size_t n);
/* oa_escape into out (cap bytes, at least 8, else ""), for the parsers of
 * hostile files, whose messages are bounded and allocate nothing: cut where
 * the next escape would not fit, ending in "...", as when `truncated` (the
 * n bytes are the start of something longer). */
void oa_escape_into(char *out, size_t cap, const void *p, size_t n, bool truncated);

char *oa_path_join(const char *a, const char *b);

/* Write a one-line error into a caller's buffer (either may be NULL/0). */
void oa_seterr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An environment value as Ollama's envconfig.Var reads it: blanks trimmed,
 * then surrounding " and ' characters. NULL when nothing is left. */
char *oa_env_trim(const char *v);

bool oa_is_hex(const char *s, size_t n);
/* Whether a "manifests" key may appear in these bytes (a manifest list's;
 * matched as Go does, case-insensitively; \u escapes say yes): the digests
 * they mention may be child manifests to follow (refs.h). */
bool oa_mentions_manifests_key(const uint8_t *p, size_t n);
bool oa_all_digits(const char *s); /* non-empty and only 0-9 */
/* rm --child makes the new tag beside the old one as
 * .manifest-oa<pid>[-<digits>] and renames it over the tag: a name a kill in
 * between leaves, never a model (prune removes it after the grace period). */
#define OA_TAG_REWRITE_TEMP ".manifest-oa"
bool oa_is_tag_rewrite_temp(const char *leaf);

/* The names in the directory open at dirfd (not "." or ".."), sorted by
 * name as Go's Glob returns them. NULL on error, with errno in *err (may be
 * NULL). dirfd itself is not consumed. Free with oa_free_names. */
char **oa_list_dir(int dirfd, size_t *n, int *err);
void oa_free_names(char **v, size_t n);
bool oa_str_has_prefix(const char *s, const char *prefix);
bool oa_str_has_suffix(const char *s, const char *suffix);
bool oa_str_iprefix(const char *s, const char *prefix); /* ASCII case-insensitive */
/* Edits (insert, delete, replace, swap two neighbours) that turn a into b,
 * ASCII case-insensitive; for "did you mean" suggestions. */
size_t oa_edit_distance(const char *a, const char *b);
/* Whether a name `d` edits from what was typed (of length `typed_len`)
 * is close enough to suggest: a typo, not another word. */
bool oa_edit_close(size_t d, size_t typed_len);

/* The state a library must keep for a whole process, kept here so that no
 * folder above base/ holds any (tests/layout/test_statics.py), each safe
 * across threads. */

/* 1, 2, 3, ... for the whole process, whichever thread asks: a temporary
 * file's name made of it and the process id is taken by no other call. */
unsigned long long oa_run_sequence(void);
/* oa_printable(s) for a printf argument, freed by this thread's 8th call
 * after it: a ring of eight, one per thread. */
const char *oa_printable_scratch(const char *s);
/* The user's LC_CTYPE (from the environment), made once per process;
 * (locale_t)0 when it cannot be made. */
locale_t oa_user_ctype(void);
/* qsort with a context for cmp: stable (equal elements keep their order),
 * so the result never depends on the C library's sort. */
void oa_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, const void *), const void *ctx);

#endif
