/*
 * scan.h - one pass over a store, in the order of docs/architecture.md:
 * read it (store.c: walk, manifests, configs, blob references), then
 * classify every model (model.c: formats, runners, headers). Above both, so
 * neither calls the other's caller.
 */
#ifndef OLLAMA_AUDIT_SCAN_H
#define OLLAMA_AUDIT_SCAN_H

#include "ollama_audit/export.h"

#include "ollama_audit/store.h"

/* Walk manifests/ and blobs/, read manifests and configs, resolve every
 * reference to a blob, classify every model. */
OA_EXPORT void oa_store_scan(oa_store *s);

/* Free everything oa_store_open and oa_store_scan made and close the store. */
OA_EXPORT void oa_store_close(oa_store *s);

#endif
