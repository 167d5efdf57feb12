/*
 * resolve.h - from what a user types to a model, and from a list's row to
 * its tag (part of store.h, which includes it).
 */
#ifndef OLLAMA_AUDIT_RESOLVE_H
#define OLLAMA_AUDIT_RESOLVE_H

#include "ollama_audit/export.h"
#include "ollama_audit/store_core.h"

#include <stdbool.h>
#include <stddef.h>

/* Resolve MODEL as the user typed it: a reference as the server's handlers
 * read it (oa_name_parse_ref: trimmed, source suffix handled, defaults
 * filled), or an ID prefix of >= 6 hex digits. A name matching one model
 * exactly (case included) is that model; otherwise a single
 * case-insensitive match is. A legacy anchor is never chosen (its
 * manifests-v2 tag is). Returns the model index, -1 if none matches,
 * OA_RESOLVE_AMBIGUOUS_ID if an ID prefix names several models,
 * OA_RESOLVE_AMBIGUOUS_NAME if several models match the name only
 * case-insensitively (tiny vs TINY and Tiny: the server would pick one at
 * random, so we refuse to guess). */
enum { OA_RESOLVE_AMBIGUOUS_ID = -2, OA_RESOLVE_AMBIGUOUS_NAME = -3 };
OA_EXPORT long oa_store_resolve(const oa_store *s, const char *query);
/* The same by name alone (no ID prefix): a model index, -1 or
 * OA_RESOLVE_AMBIGUOUS_NAME. */
OA_EXPORT long oa_store_resolve_name(const oa_store *s, const char *query);

/* MODEL as a digest reference, as Ollama's rm reads one
 * (manifest.ResolveDigestReference): sha256-<hex>, sha256:<hex> or a bare
 * hex prefix, 12 to 64 digits, any case. When it names the child of a
 * manifest list here (and no tag's ID other than that digest), its 64 hex
 * go to hex and the result is 1; 0 when it is no digest reference or
 * names no list child (a tag's own ID keeps its meaning); -1 when the
 * prefix names several digests among list children and tag IDs, which err
 * lists. */
OA_EXPORT int oa_store_child_digest(const oa_store *s, const char *query, oa_digest_hex hex, char *err,
                                    size_t errlen);

/* Whether two models name the same config and layers in order, links to
 * manifest blobs (a downgrade anchor's) left out: an anchor is a legacy
 * copy of the child it equals so. */
OA_EXPORT bool oa_model_same_manifest(const oa_model *a, const oa_model *b);

/* The index of the tag's model a row belongs to: itself, or for a list's
 * other row (sibling) the tag's. */
OA_EXPORT size_t oa_store_row_tag(const oa_store *s, size_t idx);

/* The models `ollama list` shows: all but legacy anchors. */
OA_EXPORT size_t oa_store_listed_models(const oa_store *s);

#endif
