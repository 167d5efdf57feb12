/*
 * store.h - one Ollama model store: find its root, walk manifests/ exactly as
 * the server does (spec §2.4), read every manifest and config blob, and list
 * blobs/ with the class of every entry (spec §1.3). Nothing is ever written.
 *
 * Data flows one way: oa_store_open() → oa_store_scan() → classify (model.h)
 * → checks and reports, which only read the result.
 */
#ifndef OLLAMA_AUDIT_STORE_H
#define OLLAMA_AUDIT_STORE_H

#include "ollama_audit/export.h"

#include "ollama_audit/store_core.h"
#include "ollama_audit/blobs.h"
#include "ollama_audit/reach.h"
#include "ollama_audit/resolve.h"

/* The reading half of oa_store_scan (scan.h): walk manifests/ and blobs/,
 * read manifests and configs, resolve every reference to a blob. */
OA_EXPORT void oa_store_read(oa_store *s);

#endif
