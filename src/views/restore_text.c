/* restore_text.c - a quarantine's operations as a table and as csv, and
 * the lines that say what restore and --empty did. */
#include "views/restore_text.h"
#include "views/csv.h"
#include "ollama_audit/humanize.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "rm a:latest b:latest", "prune" */
static char *op_command(const oa_quarantine_op *op)
{
	oa_buf b;
	oa_buf_init(&b);
	oa_buf_adds(&b, op->command);
	for (size_t m = 0; m < op->n_models; m++) {
		oa_buf_addc(&b, ' ');
		oa_buf_adds(&b, op->models[m]);
	}
	if (op->child[0])
		oa_buf_printf(&b, " --child %s", op->child);
	return oa_buf_take(&b);
}

void oa_restore_ops_text(const oa_text_style *st, FILE *out, const char *dir, const oa_quarantine_ops *ops)
{
	char held[48];
	oa_format_size(ops->held_bytes, st->units, held, sizeof held);
	fprintf(out, "quarantine %s (of the store %s): holds %s in %zu entr%s, %zu operation%s\n", oa_text_safe(dir),
	        oa_text_safe(ops->store), held, ops->held_entries, ops->held_entries == 1 ? "y" : "ies", ops->n,
	        ops->n == 1 ? "" : "s");
	if (!ops->n)
		return;
	static const oa_column cols[6] = {
		{ "ID", 0, 0, false },      { "WHEN", 0, 0, false },   { "COMMAND", 0, 16, false },
		{ "ENTRIES", 0, 0, true },  { "SIZE", 0, 0, true },    { "STATE", 0, 0, false },
	};
	oa_table t = { .col = cols, .ncol = 6, .gap = "  " };
	for (size_t k = 0; k < ops->n; k++) {
		const oa_quarantine_op *op = &ops->v[k];
		char size[48];
		oa_format_size(op->disk_bytes, st->units, size, sizeof size);
		char *row[] = { oa_xstrdup(op->id), oa_xstrdup(op->time), op_command(op),
		                oa_xasprintf("%zu", op->entries), oa_xstrdup(size), oa_xstrdup(op->state) };
		oa_table_add(&t, row);
	}
	oa_table_print(st, &t, out);
	/* a model restored alone leaves the rest of its operation: say what */
	for (size_t k = 0; k < ops->n; k++) {
		const oa_quarantine_op *op = &ops->v[k];
		if (strcmp(op->state, "partial") != 0 || !op->n_models_held)
			continue;
		fprintf(out, "%s still holds ", op->id);
		for (size_t m = 0; m < op->n_models_held; m++)
			fprintf(out, "%s%s", m ? ", " : "", oa_text_safe(op->models_held[m]));
		fputc('\n', out);
	}
	fprintf(out, "\nrestore %s --last | --op ID | MODEL | --all puts back; --empty [--older-than D] deletes "
	        "for good (a dry run without --apply)\n", oa_text_safe(dir));
}

void oa_restore_ops_csv(FILE *out, json_t *doc)
{
	fprintf(out, "quarantine,store,id,time,command,models,entries,disk_bytes,held_entries,held_bytes,state\n");
	size_t i;
	json_t *op;
	json_array_foreach(json_object_get(doc, "operations"), i, op) {
		oa_buf models;
		oa_buf_init(&models);
		for (size_t m = 0; m < json_array_size(json_object_get(op, "models")); m++) {
			if (m)
				oa_buf_addc(&models, ' ');
			oa_buf_adds(&models, json_string_value(json_array_get(json_object_get(op, "models"), m)));
		}
		char *mv = oa_buf_take(&models);
		char num[4][32];
		static const char *const keys[4] = { "entries", "disk_bytes", "held_entries", "held_bytes" };
		for (int q = 0; q < 4; q++)
			snprintf(num[q], sizeof num[q], "%lld", (long long)json_integer_value(json_object_get(op, keys[q])));
		oa_csv_field(out, json_string_value(json_object_get(doc, "quarantine")), false);
		oa_csv_field(out, json_string_value(json_object_get(doc, "store")), false);
		oa_csv_field(out, json_string_value(json_object_get(op, "id")), false);
		oa_csv_field(out, json_string_value(json_object_get(op, "time")), false);
		oa_csv_field(out, json_string_value(json_object_get(op, "command")), false);
		oa_csv_field(out, mv, false);
		for (int q = 0; q < 4; q++)
			oa_csv_field(out, num[q], false);
		oa_csv_field(out, json_string_value(json_object_get(op, "state")), true);
		free(mv);
	}
}

void oa_empty_result_text(const oa_text_style *st, FILE *out, const char *dir, const oa_empty_result *r,
                          bool applied)
{
	char b[48], h[48];
	oa_format_size(r->bytes, st->units, b, sizeof b);
	oa_format_size(r->held_bytes, st->units, h, sizeof h);
	if (applied)
		fprintf(out, "deleted %zu entr%s of %zu operation%s, failed %zu: %s freed on disk; %s holds %s in %zu "
		        "entr%s\n", r->entries, r->entries == 1 ? "y" : "ies", r->operations, r->operations == 1 ? "" : "s",
		        r->failed, b, oa_text_safe(dir), h, r->held_entries, r->held_entries == 1 ? "y" : "ies");
	else
		fprintf(out, "would delete %zu entr%s of %zu operation%s, freeing %s on disk (then %s holds %s in %zu "
		        "entr%s); dry run, nothing deleted: --apply deletes\n", r->entries, r->entries == 1 ? "y" : "ies",
		        r->operations, r->operations == 1 ? "" : "s", b, oa_text_safe(dir), h, r->held_entries,
		        r->held_entries == 1 ? "y" : "ies");
}

void oa_restore_result_text(const oa_text_style *st, FILE *out, const char *dir, const oa_restore_result *r,
                            bool with_op)
{
	fprintf(out, "restored %zu, already in place %zu, conflicts %zu, missing %zu, failed %zu%s\n",
	        r->restored, r->already, r->conflicts, r->missing, r->failed,
	        r->interrupted ? " (interrupted: run restore again to finish)" : "");
	if (!with_op)
		return;
	const char *from = r->operations == 1 ? "operation" : "operations, the newest";
	if (!r->model[0]) {
		fprintf(out, "from %s %s\n", from, r->first_op);
		return;
	}
	fprintf(out, "%s from %s %s", oa_text_safe(r->model), from, r->first_op);
	if (!r->rest_entries) {
		fprintf(out, "; %s holds nothing more of %s\n", oa_text_safe(dir), r->operations == 1 ? "it" : "them");
		return;
	}
	char size[48];
	oa_format_size(r->rest_bytes, st->units, size, sizeof size);
	fprintf(out, "; %s still hold%s %zu entr%s (%s)", r->operations == 1 ? "it" : "they",
	        r->operations == 1 ? "s" : "", r->rest_entries, r->rest_entries == 1 ? "y" : "ies", size);
	if (r->rest_models)
		fprintf(out, " of %zu other model%s (%s)", r->rest_models, r->rest_models == 1 ? "" : "s",
		        oa_text_safe(r->rest_names));
	fprintf(out, ": `restore %s --op %s` puts %s back\n", oa_text_safe(dir), r->first_op,
	        r->operations == 1 ? "them" : "the newest");
}

char *oa_empty_question(const oa_text_style *st, const char *dir, const oa_empty_result *dry)
{
	char b[48];
	oa_format_size(dry->bytes, st->units, b, sizeof b);
	return oa_xasprintf("Delete %zu entr%s (%s) from %s for good? `restore` cannot bring them back.",
	                    dry->entries, dry->entries == 1 ? "y" : "ies", b, dir);
}
