/* carry_text.h - the text of export, import and repair for a person.
 * Library-internal (the CLI links the static library). */
#ifndef OA_VIEWS_CARRY_TEXT_H
#define OA_VIEWS_CARRY_TEXT_H

#include "ollama_audit/bundle_write.h"
#include "ollama_audit/carry.h"
#include "ollama_audit/import.h"
#include "ollama_audit/repair.h"
#include "views/table.h"

#include <stdio.h>

/* What an export wrote: the models, blobs, bytes, how each blob was checked. */
void oa_export_text(const oa_text_style *st, FILE *out, const oa_carry *c, const oa_export_result *r,
                    const oa_export_opts *o);

/* What an import would do or did: a line per model, the bytes against the
 * free space, what was checked. */
void oa_import_text(const oa_text_style *st, FILE *out, const oa_import_result *r);
/* One csv row per blob and tag: kind, path, digest, size, state, model, note. */
void oa_import_csv(FILE *out, const oa_import_result *r);
/* What repair found and would do or did: a line per damaged blob with the
 * models naming it and its good copy, then what to fetch. */
void oa_repair_text(const oa_text_style *st, FILE *out, const oa_repair_result *r);
/* One csv row per damaged blob: digest, size, size_here, damage, known_by,
 * state, source, models (joined by ;), note. */
void oa_repair_csv(FILE *out, const oa_repair_result *r);

#endif
