/* cli_machine.c - what machine-readable output carries besides its data:
 * the errors of the run (docs/schema.md, "Errors and status").
 *
 * A program reading --format json must not take "nothing could be read" for
 * "an empty store", so every json document ends with "status" and "errors",
 * whatever command wrote it; ndjson gets an {"type":"error"} record where the
 * error happens; csv has no place for an error, so when nothing could be read
 * it stays empty and the error is only on stderr. A json command hands its
 * document to cli_emit_document() and the end of the run prints it once;
 * csv and tags are written into memory (cli_text_out) and the end of the
 * run decides. */
#include "cli_machine.h"
#include "host.h"
#include "usage.h"
#include "base/jsonutil.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	json_t *errors; /* [{code, message, path}] */
	json_t *docs;   /* json: the documents the command emitted, in order */
	bool written;   /* json: the command wrote its document, still open */
	FILE *text;     /* csv, tags: what the command wrote, in text_buf */
	char *text_buf;
	size_t text_len;
} E;

/* Keep an error for the json document; with ndjson, its record now. */
static void add_error(const cli *c, const char *code, const char *msg, const char *path)
{
	json_t *e = oa_error_json(code, msg, path);
	if (c->format == OUT_NDJSON) {
		json_t *rec = oa_error_record(cli_host(), e);
		oa_json_dump_line(rec, stdout);
		json_decref(rec);
	}
	if (!E.errors)
		E.errors = json_array();
	json_array_append_new(E.errors, e);
}

void cli_fail(cli *c, const char *code, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = oa_xvasprintf(fmt, ap);
	va_end(ap);
	cli_err("%s", msg);
	add_error(c, code, msg, path);
	free(msg);
}

void cli_note_error(cli *c, const char *code, const char *path, const char *msg)
{
	add_error(c, code, msg, path);
}

void cli_emit_document(cli *c, json_t *doc)
{
	(void)c;
	if (!E.docs)
		E.docs = json_array();
	json_array_append_new(E.docs, doc);
}

void cli_emit_written(cli *c)
{
	(void)c;
	E.written = true;
}

void cli_emit_store(cli *c, const char *schema, json_t *store)
{
	size_t n = E.docs ? json_array_size(E.docs) : 0;
	json_t *doc = n ? json_array_get(E.docs, n - 1) : NULL;
	json_t *stores = json_object_get(doc, "stores");
	if (!json_is_array(stores)) {
		doc = json_object();
		json_object_set_new(doc, "schema", json_string(schema));
		json_object_set_new(doc, "stores", stores = json_array());
		cli_emit_document(c, doc);
	}
	if (store)
		json_array_append_new(stores, store);
}

void cli_machine_begin(cli *c)
{
	if (c->format != OUT_CSV && c->format != OUT_TAGS)
		return;
	E.text = open_memstream(&E.text_buf, &E.text_len);
	if (!E.text) /* it still works on stdout; only the empty csv on error is lost */
		cli_err("cannot hold back the output (%s): it is written as it comes", strerror(errno));
}

FILE *cli_text_out(void)
{
	return E.text ? E.text : stdout;
}

/* The json document with "status" and "errors" last; a run that emitted no
 * document (nothing could be read) still gets one, named by its schema.
 * Several documents (show finding its MODEL in several stores) are printed
 * as they are, one a line: there is no one document to add a status to. */
static void finish_json(const cli *c)
{
	size_t n = E.docs ? json_array_size(E.docs) : 0;
	if (E.written) { /* the same bytes as the document's with oa_view_with_status */
		json_t *st = oa_view_with_status(json_object(), NULL, E.errors);
		fputc(',', stdout);
		oa_json_dump_members(st, stdout);
		fputs("}\n", stdout);
		json_decref(st);
		return;
	}
	if (n > 1) {
		oa_json_dump_lines(E.docs, stdout);
		return;
	}
	json_t *doc = oa_view_with_status(json_incref(json_array_get(E.docs, 0)), oa_report_schema(c->cmd), E.errors);
	oa_json_dump_line(doc, stdout);
	json_decref(doc);
}

/* The error of a failed run that no cli_fail() described. */
static void fail_from_status(cli *c, int rc)
{
	bool failed = rc & (OA_EXIT_OPERATIONAL | OA_EXIT_USAGE | OA_EXIT_INTERRUPTED);
	if (!failed || (E.errors && json_array_size(E.errors)))
		return;
	const char *code = rc & OA_EXIT_USAGE ? "usage" : rc & OA_EXIT_INTERRUPTED ? "interrupted" : "failed";
	add_error(c, code, *cli_last_error() ? cli_last_error() : "see standard error", NULL);
}

void cli_machine_end(cli *c, int rc)
{
	fail_from_status(c, rc);
	if (c->format == OUT_JSON)
		finish_json(c);
	json_decref(E.docs);
	E.docs = NULL;
	E.written = false;
	if (E.text) {
		bool ok = fclose(E.text) == 0;
		E.text = NULL;
		if (!ok)
			cli_err("cannot hold back the output: %s", strerror(errno));
		else if (!E.errors || c->stores_read)
			fwrite(E.text_buf, 1, E.text_len, stdout);
		free(E.text_buf);
		E.text_buf = NULL;
	}
	json_decref(E.errors);
	E.errors = NULL;
}
