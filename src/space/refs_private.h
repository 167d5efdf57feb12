/* refs_private.h - the scan's reference set for a lookup of a few digests
 * (junk.c's oa_findings_drop_referenced): not a 65-byte copy of every
 * digest the tag files mention (2 MB on a store of 10,000 tags, issue 21). */
#ifndef OA_SPACE_REFS_PRIVATE_H
#define OA_SPACE_REFS_PRIVATE_H
#include "ollama_audit/refs.h"

#include <stdbool.h>

/* oa_refset_scanned's set, but when the scan's tag facts are plain, without
 * the digests the tag files mention (they stay in s->tags.dig); returns
 * whether it left them out (then look up with refset_scanned_has, whose
 * answers are oa_refset_has's on oa_refset_scanned's set). */
bool refset_scanned_apart(const oa_store *s, oa_refset *r);
bool refset_scanned_has(const oa_store *s, const oa_refset *r, bool apart, const char *hex);

#endif
