/* import_read.h - a bundle's members into an import: each judged by the
 * grammar, new blobs copied (applying), hashed (--verify) or passed over,
 * tags read, the promise of its index and SHA256SUMS kept. Private to
 * src/carry/. */
#ifndef OLLAMA_AUDIT_CARRY_IMPORT_READ_H
#define OLLAMA_AUDIT_CARRY_IMPORT_READ_H

#include "carry/import_private.h"

/* Read the bundle src (fd for "-") into m->r. A bundle that cannot be read
 * on, or breaks the grammar, refuses the source (imp_refuse). */
void import_read(imp *m, const char *src, int fd);
/* Whether every member the index and SHA256SUMS promised came, as promised. */
void import_check_promise(imp *m);

#endif
