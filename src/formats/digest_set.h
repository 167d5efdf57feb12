/* digest_set.h - the layer digests of a store's manifests, each held once
 * (library-internal): a store makes one (oa_store.digests) and parses its
 * manifests into it, so that 10,000 tags naming the same template hold its
 * digest once. The set is the store's, never the process's: two stores
 * audited on two threads share nothing. */
#ifndef OA_FORMATS_DIGEST_SET_H
#define OA_FORMATS_DIGEST_SET_H

#include "ollama_audit/manifest.h"

#include <stddef.h>
#include <stdint.h>

typedef struct oa_digest_set oa_digest_set;

oa_digest_set *oa_digest_set_new(void);
/* After every manifest parsed into it is freed. */
void oa_digest_set_free(oa_digest_set *d);
/* oa_manifest_parse, with the digests shared through set (NULL: copies of
 * their own); the manifest remembers set for oa_manifest_free. */
int oa_manifest_parse_in(oa_digest_set *set, const uint8_t *bytes, size_t len, oa_manifest *out, char *err,
                         size_t errlen);

#endif
