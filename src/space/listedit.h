/* listedit.h - rewriting a manifest list tag without one child (rm --child,
 * prune.h: oa_plan_rewrite). Private to src/space/. */
#ifndef OLLAMA_AUDIT_SPACE_LISTEDIT_H
#define OLLAMA_AUDIT_SPACE_LISTEDIT_H

#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* The list's bytes without the entries whose digest is child, as 0.40
 * writes a list (json.Marshal: compact, no newline); every other member
 * and entry kept, in order. NULL with err when the bytes are not a list
 * or no entry names child. *left: how many entries remain; *removed: how
 * many named child (a list may name it more than once). */
char *list_without_child(const uint8_t *bytes, size_t len, const char *child, size_t *out_len, size_t *left,
                         size_t *removed, char *err, size_t errlen);

/* What the tag becomes (prune.h: oa_plan_rewrite says it in full). */
typedef struct list_new {
	char kind;               /* 'l' symlink, 'h' hard link of the list blob, 'c' copy, 'f' a file (no blob) */
	const char *old_hex;     /* the list it holds now */
	const char *hex;         /* the list it gets: sha256 of bytes */
	const char *bytes;
	size_t len;
	const char *link_target; /* 'l': the new symlink's text */
} list_new;

/* The bytes of the tag at pfd/leaf: for kind 'l' the blob
 * sha256-<n->old_hex> it must link to, else the tag's own (a regular
 * file). NULL with why. */
uint8_t *list_tag_read(const oa_store *s, int pfd, const char *leaf, const list_new *n, size_t *len, char *why,
                       size_t whylen);

/* The tag's current bytes (through its symlink into blobs/, else its own),
 * checked against what the plan read: 0, or -1 with why. */
int list_tag_check(const oa_store *s, int pfd, const char *leaf, const list_new *n, char *why, size_t whylen);

/* Store n's bytes as blobs/sha256-<n->hex> (kinds 'l', 'h', 'c'; kept
 * when it is there with those bytes), then make the new tag under a
 * temporary name beside the old one (pfd), of the old one's kind, mode and
 * owner: tmp gets its name. 0, or -1 with why (nothing left behind). */
int list_tag_prepare(const oa_store *s, int pfd, const list_new *n, const struct stat *old, char tmp[64], char *why,
                     size_t whylen);

#endif
