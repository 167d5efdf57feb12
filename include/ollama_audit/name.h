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
bool oa_name_part_valid(enum oa_name_part kind, const char *s, size_t len, const char **why);

/* Build a name from the four path components of a manifest file. Returns
 * false (with a reason) if any part is invalid; `out` then holds what fitted. */
bool oa_name_from_parts(oa_name *out, const char *host, const char *ns, const char *model,
                        const char *tag, const char **why);

/* Parse what a user types ("llama3.2", "user/m:tag", "hf.co/org/repo:Q4_K_M",
 * "http://host:5000/ns/m:t") and fill defaults, as ParseName does. Returns
 * false when the result is not a valid, fully qualified name. */
bool oa_name_parse(const char *s, oa_name *out);

/* DisplayShortest: "model:tag", "ns/model:tag" or "host/ns/model:tag". */
void oa_name_display(const oa_name *n, char *buf, size_t len);
#define OA_NAME_DISPLAY_MAX (351 + 81 + 81 + 81 + 4)

/* Case-sensitive comparison of all four parts (the same file on a
 * case-sensitive filesystem). */
bool oa_name_equal(const oa_name *a, const oa_name *b);

/* Case-insensitive comparison of all four parts (Name.EqualFold). */
bool oa_name_equal_fold(const oa_name *a, const oa_name *b);

#endif
