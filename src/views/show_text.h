/* show_text.h - `show`'s text and csv renderers (library-internal: the CLI
 * links the static library). */
#ifndef OA_VIEWS_SHOW_TEXT_H
#define OA_VIEWS_SHOW_TEXT_H

#include "views/table.h"
#include "ollama_audit/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One model in full: identity, sizes, config, layers (with every tensor
 * when tensors), the "what can run here" paragraph (runhere, NULL: none)
 * and the model's findings. */
void oa_show_text(const oa_text_style *st, FILE *out, const oa_store *s, const oa_model *m, bool tensors,
                  const char *runhere);
/* csv: the layers of doc (oa_show_view's), one row each, config first;
 * header: the heading line before them. */
void oa_show_csv(FILE *out, const oa_store *s, const oa_model *m, json_t *doc, bool header);
/* ndjson: the records of doc (oa_show_view_records). */
void oa_show_ndjson(FILE *out, const oa_store *s, json_t *doc, const char *host);
/* The models an ID prefix (query, "sha256:" allowed) matches, a line each. */
void oa_show_ambiguous(FILE *out, const oa_store *s, const char *query);

#endif
