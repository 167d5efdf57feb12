/* repair_source.h - good copies of damaged blobs: from a bundle, a
 * directory holding blobs/ (an unpacked bundle, a store), or every other
 * store discovery finds; each hashed before it is used. Private to
 * src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_REPAIR_SOURCE_H
#define OLLAMA_AUDIT_CARRY_REPAIR_SOURCE_H

#include "ollama_audit/repair.h"
#include "carry/land.h"

#include <stdbool.h>

/* Look for a good copy of each damaged blob of r: in `from` (NULL: the
 * other stores of the machine). With keep, each becomes a temporary in
 * s's blobs/ (its tmp, its how); without, it is only read and hashed. A
 * `from` that cannot be read is said in r->source_error. */
void repair_find_sources(const oa_store *s, const char *from, land *l, bool keep, oa_repair_result *r);

#endif
