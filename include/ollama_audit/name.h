/*
 * name.h - model names as Ollama spells them: host/namespace/model:tag.
 *
 * A manifest lives at manifests/<host>/<namespace>/<model>/<tag>; the server
 * only lists it when all four parts pass upstream's validation rules
 * (types/model/name.go, spec §1.2). Names keep their case on disk but are
 * compared case-insensitively.
 */
#ifndef OLLAMA_AUDIT_NAME_H
#define OLLAMA_AUDIT_NAME_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>

#define OA_NAME_DEFAULT_HOST "registry.ollama.ai"
#define OA_NAME_DEFAULT_NAMESPACE "library"
#define OA_NAME_DEFAULT_TAG "latest"

enum oa_name_part { OA_PART_HOST, OA_PART_NAMESPACE, OA_PART_MODEL, OA_PART_TAG };

typedef struct oa_name {
	char host[351];
	char ns[81];
	char model[81];
	char tag[81];
} oa_name;

/* Upstream's isValidPart: first byte [A-Za-z0-9_], the rest from the part's
 * alphabet, length within the part's limit. `why` (may be NULL) gets a short
 * reason when the part is invalid. */
OA_EXPORT bool oa_name_part_valid(enum oa_name_part kind, const char *s, size_t len, const char **why);

/* Build a name from the four path components of a manifest file. Returns
 * false (with a reason: constant text, valid for ever) if any part is
 * invalid; `out` then holds what fitted. */
OA_EXPORT bool oa_name_from_parts(oa_name *out, const char *host, const char *ns, const char *model,
                        const char *tag, const char **why);

/* The host a manifests-v2 tag's directory names: ':' is written %3A there,
 * and ollama.com stands for the default registry (spec §2.5). false (why
 * set) when it is longer than a host may be. */
#define OA_NAME_V2_HOST_MAX 352
OA_EXPORT bool oa_name_v2_host(const char *dir, char host[OA_NAME_V2_HOST_MAX], const char **why);
/* Parse what a user types ("llama3.2", "user/m:tag", "hf.co/org/repo:Q4_K_M",
 * "http://host:5000/ns/m:t") and fill defaults, as ParseName does. Returns
 * false when the result is not a valid, fully qualified name. */
OA_EXPORT bool oa_name_parse(const char *s, oa_name *out);

/* Parse a model reference as the server's handlers do before ParseName:
 * surrounding whitespace trimmed, then a ":local" or ":cloud" source suffix
 * taken off (a ":<tag>-cloud" tag counts as ":<tag>" from the cloud), and a
 * cloud reference renamed to the local stub a pull writes ("m:tag:cloud" ->
 * "m:tag-cloud", "m:cloud" stays). false with `why` set when the reference
 * is empty, names both sources, or is not a valid name. */
OA_EXPORT bool oa_name_parse_ref(const char *s, oa_name *out, const char **why);

/* strings.HasPrefix(strings.ToLower(name), strings.ToLower(prefix)) for the
 * `ollama list PREFIX` filter. Go lowers with simple case mapping, so the two
 * non-ASCII letters that lower to ASCII match too: U+212A KELVIN SIGN ('k')
 * and U+0130 (dotted capital I, 'i'). */
OA_EXPORT bool oa_name_has_prefix_fold(const char *name, const char *prefix);

/* DisplayShortest: "model:tag", "ns/model:tag" or "host/ns/model:tag". */
OA_EXPORT void oa_name_display(const oa_name *n, char *buf, size_t len);
#define OA_NAME_DISPLAY_MAX (351 + 81 + 81 + 81 + 4)

/* Case-sensitive comparison of all four parts (the same file on a
 * case-sensitive filesystem). */
OA_EXPORT bool oa_name_equal(const oa_name *a, const oa_name *b);

/* Case-insensitive comparison of all four parts (Name.EqualFold). */
OA_EXPORT bool oa_name_equal_fold(const oa_name *a, const oa_name *b);

#endif
