/*
 * digest.h - the one digest type: a sha256 as 64 lowercase hex digits and a
 * NUL, and the only ways text becomes one. A digest is validated here
 * before it is ever turned into a path.
 */
#ifndef OLLAMA_AUDIT_DIGEST_H
#define OLLAMA_AUDIT_DIGEST_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>

#define OA_DIGEST_HEX_LEN 64
typedef char oa_digest_hex[OA_DIGEST_HEX_LEN + 1];

/* "sha256:<64 hex>" (or "sha256-"), the only digests ever turned into paths. */
OA_EXPORT bool oa_digest_parse(const char *digest, oa_digest_hex hex, bool *uppercase);

/* Lowercase hex of sha256(bytes). */
OA_EXPORT void oa_sha256_hex(const void *bytes, size_t len, oa_digest_hex hex);

#endif
